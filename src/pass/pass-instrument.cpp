// The instrumentation of one function: the countdown in an SSA value, one
// countdown test per block with the block cloned, the snippet per access.
#include "locprof-pass.h"

namespace locprof_pass {

Instrumenter::Instrumenter(Module &Mod) : M(Mod), C(Mod.getContext())
{
	i8 = Type::getInt8Ty(C);
	i32 = Type::getInt32Ty(C);
	i64 = Type::getInt64Ty(C);
	i8p = PointerType::getUnqual(i8);
	fastTy = StructType::get(C, { i64, PointerType::getUnqual(i32) }); // countdown, pages
	fast = M.getOrInsertGlobal("lp_rt_fast", fastTy, [&] {
		return new GlobalVariable(M, fastTy, false, GlobalValue::ExternalLinkage, nullptr,
					  "lp_rt_fast", nullptr, GlobalValue::InitialExecTLSModel);
	});
	straddleMask = M.getOrInsertGlobal("lp_rt_straddle_mask", i64);
	straddleSlow = M.getOrInsertGlobal("lp_rt_straddle_slow", i64);
	stripExtra = M.getOrInsertFunction("lp_rt_strip_extra",
					   FunctionType::get(Type::getVoidTy(C), { i64, i64, i64, i64 }, false));
	lineShift0 = M.getOrInsertGlobal("lp_rt_line_shift0", i32);
	extra0 = M.getOrInsertGlobal("lp_rt_extra0", i64, [&] {
		return new GlobalVariable(M, i64, false, GlobalValue::ExternalLinkage, nullptr, "lp_rt_extra0",
					  nullptr, GlobalValue::InitialExecTLSModel);
	});
	slow = M.getOrInsertFunction("lp_rt_slow", FunctionType::get(Type::getVoidTy(C), { i64, i32, i32, i64 }, false));
	if (Function *f = dyn_cast<Function>(slow.getCallee()->stripPointerCasts()))
		f->addFnAttr(Attribute::Cold);
	cold = MDBuilder(C).createBranchWeights(1, 1 << 20);
	// Set by `locprof cc --clone-max=N` (or by hand): 0 clones nothing,
	// which the tests use to compare that path with SanitizerCoverage.
	if (const char *e = getenv("LOCPROF_PASS_CLONE_MAX")) {
		char *end;
		unsigned long long v = strtoull(e, &end, 10);
		if (*e && !*end)
			cloneMax = v;
		else
			report_fatal_error("locprof-pass: LOCPROF_PASS_CLONE_MAX is not a number", false);
	}
	const char *st = getenv("LOCPROF_PASS_STATS");
	stats = st && *st && strcmp(st, "0");
	const char *lv = getenv("LOCPROF_PASS_LOOP_VERSION");
	loopVersion = !(lv && !strcmp(lv, "0"));
	if (const char *e = getenv("LOCPROF_PASS_LOOP_STRIP")) {
		char *end;
		unsigned long long v = strtoull(e, &end, 10);
		if (*e && !*end && v > 0)
			strip = v;
		else
			report_fatal_error("locprof-pass: LOCPROF_PASS_LOOP_STRIP is not a positive number", false);
	}
	const char *cm = getenv("LOCPROF_PASS_CHECK_MERGE");
	mergeChecks = !(cm && !strcmp(cm, "0"));
	const char *vf = getenv("LOCPROF_PASS_VERIFY");
	verify = vf && *vf && strcmp(vf, "0");
	rangeQuery = M.getOrInsertFunction("lp_rt_range_watched", FunctionType::get(i32, { i64, i64 }, false));
}

// The references the runtime counts: ordinary loads and stores of any
// width (SanitizerCoverage's trace-loads/stores see only 1-16 bytes), and
// masked vector loads/stores, counted as one reference of the whole vector
// at its base (atomic and volatile loads and stores too, as with
// SanitizerCoverage). Not seen: atomicrmw, cmpxchg, gathers/scatters,
// memcpy/memset/memmove (calls to the uninstrumented libc, as before),
// accesses outside address space 0.
bool Instrumenter::accessOf(Instruction &I, Access &a) const
{
	const DataLayout &DL = M.getDataLayout();

	if (auto *L = dyn_cast<LoadInst>(&I)) {
		a = { &I, L->getPointerOperand(), DL.getTypeStoreSize(L->getType()).getKnownMinSize(), kRead,
		      L->getAlign().value() };
	} else if (auto *S = dyn_cast<StoreInst>(&I)) {
		a = { &I, S->getPointerOperand(),
		      DL.getTypeStoreSize(S->getValueOperand()->getType()).getKnownMinSize(), kWrite,
		      S->getAlign().value() };
	} else if (auto *II = dyn_cast<IntrinsicInst>(&I)) {
		if (II->getIntrinsicID() == Intrinsic::masked_load)
			a = { &I, II->getArgOperand(0), DL.getTypeStoreSize(II->getType()).getKnownMinSize(), kRead,
			      1 };
		else if (II->getIntrinsicID() == Intrinsic::masked_store)
			a = { &I, II->getArgOperand(1),
			      DL.getTypeStoreSize(II->getArgOperand(0)->getType()).getKnownMinSize(), kWrite, 1 };
		else
			return false;
	} else {
		return false;
	}
	if (a.ptr->getType()->getPointerAddressSpace() != 0 || a.size == 0)
		return false;
	// Our own reads of lp_rt_fast (none yet when accesses are collected,
	// but the program may name it) and allocas' spills are references too;
	// only the runtime's state is left out.
	if (a.ptr->stripPointerCasts() == fast || a.ptr->stripPointerCasts() == extra0)
		return false;
	if (a.ptr == cdSlot || a.ptr == dirtySlot || a.ptr == exSlot || (slowSlot && a.ptr == slowSlot))
		return false;
	return true;
}

// The SSA copy of the countdown from the runtime's TLS: at entry and after
// anything that may have run the slow path.
void Instrumenter::reload(IRBuilder<> &B)
{
	B.CreateStore(B.CreateLoad(i64, field(B, 0), "lp.cd"), cdSlot);
}

void Instrumenter::writeBack(IRBuilder<> &B, Value *cd)
{
	B.CreateStore(cd, field(B, 0));
}

// if (cond) { countdown = tlsCd; lp_rt_slow(addr, size, kind, 0);
//             reload; countdown copy -= rest }
// rest: references of this block already subtracted from the SSA copy but
// not yet made. The slow path never lowers the countdown on a watch hit
// (it keeps it, or sets it inert), so the subtraction cannot wrap.
void Instrumenter::slowCall(Instruction *before, Value *cond, const Access &a, Value *tlsCd, uint64_t rest)
{
	Instruction *then = SplitBlockAndInsertIfThen(cond, before, false, cold);
	IRBuilder<> B(then);
	// A sample starts a watch: no earlier "no" covers what follows.
	B.CreateStore(ConstantInt::getTrue(C), dirtySlot);
	if (slowSlot)
		B.CreateStore(ConstantInt::getTrue(C), slowSlot);
	writeBack(B, tlsCd);
	Value *addr = B.CreatePtrToInt(a.ptr, i64);
	CallInst *call = B.CreateCall(slow, { addr, ConstantInt::get(i32, a.size > 0xffffffffu ? 0xffffffffu : a.size),
					      ConstantInt::get(i32, a.kind), ConstantInt::get(i64, 0) });
	if (DISubprogram *sp = before->getFunction()->getSubprogram()) {
		// An inlinable call needs a location when the function has
		// debug info; the access's own if it has one.
		DebugLoc dl = a.inst->getDebugLoc();
		call->setDebugLoc(dl ? dl : DebugLoc(DILocation::get(C, 0, 0, sp)));
	}
	reload(B);
	if (rest)
		B.CreateStore(B.CreateSub(B.CreateLoad(i64, cdSlot), ConstantInt::get(i64, rest)), cdSlot);
}

// The shadow test of the snippet (kShadow).
Value *watched(IRBuilder<> &B, Value *ptr, Type *i64, Type *i8)
{
	Value *g = B.CreateLShr(B.CreatePtrToInt(ptr, i64), 6);
	Value *at = B.CreateIntToPtr(B.CreateAdd(g, ConstantInt::get(i64, kShadow)), PointerType::getUnqual(i8));
	return B.CreateICmpNE(B.CreateLoad(i8, at, "lp.w"), ConstantInt::get(i8, 0));
}

// The watch test of an access (see planChecks): a plain access tests its
// granule, a checker its cluster's window, a covered access the dirty
// flag. Any yes goes to the slow path, which looks the access up in the
// thread's exact table (a window's yes may be a neighbour's watch) and
// sets the dirty flag (slowCall).
Value *Instrumenter::precheck(IRBuilder<> &B, const Access &a, const Check &k)
{
	switch (k.role) {
	case kChecker:
		return windowWatched(B, k, i64);
	case kCovered:
		return B.CreateLoad(Type::getInt1Ty(C), dirtySlot, "lp.dirty");
	default:
		return watched(B, a.ptr, i64, i8);
	}
}

// For an access that may straddle, as rt.h's snippet: its extra lines of
// the smallest line size added to lp_rt_extra0, and cond or'ed with the
// shadow test of its last byte's granule and with the slow path's share
// of the count ((addr ^ last) > lp_rt_straddle_slow: larger line sizes).
Value *Instrumenter::countExtra(IRBuilder<> &B, const Access &a, AllocaInst *into)
{
	Value *addr = B.CreatePtrToInt(a.ptr, i64);
	Value *last = B.CreateAdd(addr, ConstantInt::get(i64, a.size - 1));
	Value *sh = B.CreateZExt(B.CreateLoad(i32, lineShift0, "lp.sh0"), i64);
	Value *e = B.CreateSub(B.CreateLShr(last, sh), B.CreateLShr(addr, sh));
	Value *to = into ? (Value *)into : extra0;
	B.CreateStore(B.CreateAdd(B.CreateLoad(i64, to, "lp.ex0"), e), to);
	return last;
}

void Instrumenter::flushExtra(IRBuilder<> &B)
{
	Value *n = B.CreateLoad(i64, exSlot, "lp.ex");
	B.CreateStore(B.CreateAdd(B.CreateLoad(i64, extra0, "lp.ex0"), n), extra0);
	B.CreateStore(ConstantInt::get(i64, 0), exSlot);
}

Value *Instrumenter::straddles(IRBuilder<> &B, const Access &a, Value *cond)
{
	if (!mayStraddle(a))
		return cond;
	Value *addr = B.CreatePtrToInt(a.ptr, i64);
	Value *last = countExtra(B, a);
	Value *lastWatched = watched(B, B.CreateIntToPtr(last, i8p), i64, i8);
	Value *slowShare = B.CreateICmpUGT(B.CreateXor(addr, last), B.CreateLoad(i64, straddleSlow, "lp.slow"));
	return B.CreateOr(cond, B.CreateOr(lastWatched, slowShare));
}

// The block's countdown was tested and decremented by acc.size() at its
// head: each access only checks the shadow,
// merged as planChecks decided.
void Instrumenter::instrumentFast(const std::vector<Access> &acc)
{
	uint64_t n = acc.size();

	for (uint64_t i = 0; i < n; i++) {
		Instruction *at = acc[i].inst;
		IRBuilder<> B(at);
		Value *cond = straddles(B, acc[i], precheck(B, acc[i], checks[at]));
		// The runtime expects the countdown as it would be after this
		// reference: the SSA copy (after all n) plus the n-1-i to come.
		Value *tlsCd = B.CreateAdd(B.CreateLoad(i64, cdSlot), ConstantInt::get(i64, n - 1 - i));
		slowCall(at, cond, acc[i], tlsCd, n - 1 - i);
	}
}

// The exact snippet per access: cd = countdown--; if (cd == 0 || watched)
// slow path (watched: the merged test of precheck).
void Instrumenter::instrumentSlow(const std::vector<Access> &acc)
{
	for (const Access &a : acc) {
		IRBuilder<> B(a.inst);
		Value *cd = B.CreateLoad(i64, cdSlot);
		Value *dec = B.CreateSub(cd, ConstantInt::get(i64, 1));
		B.CreateStore(dec, cdSlot);
		Value *cond = straddles(B, a, B.CreateOr(B.CreateICmpEQ(cd, ConstantInt::get(i64, 0)),
							 precheck(B, a, checks[a.inst])));
		slowCall(a.inst, cond, a, dec, 0);
	}
}

// Functions the pass leaves alone: declarations, naked functions, those
// marked not to instrument, the runtime's own, and those with asm goto or
// funclet EH (not handled).
bool Instrumenter::mayInstrument(Function &F) const
{
	if (F.isDeclaration() || F.hasFnAttribute(Attribute::Naked) ||
	    F.hasFnAttribute(Attribute::NoSanitizeCoverage) ||
	    F.hasFnAttribute(Attribute::DisableSanitizerInstrumentation) ||
	    F.getName().startswith("lp_rt_") || F.getName().startswith("__sanitizer_cov"))
		return false;
	for (BasicBlock &BB : F)
		for (Instruction &I : BB)
			if (isa<CallBrInst>(I) || (I.isEHPad() && !isa<LandingPadInst>(I)))
				return false; // asm goto, funclet EH: not handled
	return true;
}

// Blocks end at calls, so that the references a block subtracts at
// its head all come before any call.
static void splitBlocksAfterCalls(Function &F)
{
	std::vector<Instruction *> calls;
	for (BasicBlock &BB : F)
		for (Instruction &I : BB)
			if (isProgramCall(I) && !I.isTerminator() && !cast<CallInst>(I).isMustTailCall())
				calls.push_back(&I);
	for (Instruction *I : calls)
		if (!I->getNextNode()->isTerminator())
			I->getParent()->splitBasicBlock(I->getNextNode());
}

// A new entry block holds the static allocas, the two slots and
// their first load; the old entry becomes an ordinary block. Returns the
// new entry's branch to the old one.
BranchInst *Instrumenter::createEntry(Function &F)
{
	BasicBlock *oldEntry = &F.getEntryBlock();
	BasicBlock *entry = BasicBlock::Create(C, "lp.entry", &F, oldEntry);
	IRBuilder<> EB(entry);
	cdSlot = EB.CreateAlloca(i64, nullptr, "lp.cd.slot");
	exSlot = EB.CreateAlloca(i64, nullptr, "lp.ex.slot");
	dirtySlot = EB.CreateAlloca(Type::getInt1Ty(C), nullptr, "lp.dirty.slot");
	BranchInst *br = EB.CreateBr(oldEntry);
	std::vector<AllocaInst *> statics;
	for (Instruction &I : *oldEntry)
		if (auto *AI = dyn_cast<AllocaInst>(&I))
			if (isa<Constant>(AI->getArraySize()))
				statics.push_back(AI);
	for (AllocaInst *AI : statics)
		AI->moveBefore(cdSlot);
	return br;
}

// Loop versioning first, on the uninstrumented code; the instrumented
// copies are then instrumented as any block, the fast copies not.
// Only where blocks are cloned: it doubles the loops' code too.
void Instrumenter::versionLoops(Function &F, bool mayClone, uint64_t &versioned, uint64_t &versionedOne)
{
	fastBlocks.clear();
	versioned = versionedOne = 0;
	rangesAll = rangesShadow = checkedAll = 0;
	if (!loopVersion || !mayClone)
		return;
	std::vector<VLoop> plan = planLoops(F);
	if (!plan.empty())
		slowSlot = new AllocaInst(Type::getInt1Ty(C), 0, "lp.slow.slot", dirtySlot->getNextNode());
	for (VLoop &v : plan)
		versionLoop(F, v);
	versioned = plan.size();
	for (VLoop &v : plan)
		versionedOne += v.blocks.size() == 1;
}

// Block BB with the accesses acc becomes
//   head: PHIs, test -> body (fast) or body.slow (clone) -> tail: terminator
// w gets the body's accesses (fast) and the clone's (slow).
void Instrumenter::cloneBlock(Function &F, BasicBlock *BB, const std::vector<Access> &acc, BlockWork &w)
{
	Instruction *first = &*BB->getFirstInsertionPt();
	BasicBlock *body = BB->splitBasicBlock(first, BB->getName() + ".lp");
	BasicBlock *tail = body->splitBasicBlock(body->getTerminator(), BB->getName() + ".lp.tail");
	ValueToValueMapTy vmap;
	BasicBlock *slowBody = CloneBasicBlock(body, vmap, ".lps", &F);
	for (Instruction &I : *slowBody)
		RemapInstruction(&I, vmap, RF_IgnoreMissingLocals | RF_NoModuleLevelChanges);
	// Values of body used after it merge in tail.
	IRBuilder<> TB(&tail->front());
	for (Instruction &I : *body) {
		if (I.isTerminator() || I.getType()->isVoidTy())
			continue;
		bool outside = false;
		for (User *U : I.users())
			if (cast<Instruction>(U)->getParent() != body)
				outside = true;
		if (!outside)
			continue;
		PHINode *phi = TB.CreatePHI(I.getType(), 2, I.getName() + ".lp");
		I.replaceUsesOutsideBlock(phi, body); // before the PHI uses I
		phi->addIncoming(&I, body);
		phi->addIncoming(vmap[&I], slowBody);
	}
	// The head: if (cd >= n) { cd -= n; body } else slowBody.
	BB->getTerminator()->eraseFromParent();
	IRBuilder<> HB(BB);
	Value *cd = HB.CreateLoad(i64, cdSlot, "lp.cd");
	Value *n = ConstantInt::get(i64, acc.size());
	HB.CreateCondBr(HB.CreateICmpUGE(cd, n), body, slowBody, MDBuilder(C).createBranchWeights(1 << 20, 1));
	IRBuilder<> BBd(&*body->getFirstInsertionPt());
	BBd.CreateStore(BBd.CreateSub(cd, n), cdSlot);
	w.fast = acc;
	for (const Access &x : acc) {
		Access y = x;
		y.inst = cast<Instruction>(vmap[x.inst]);
		y.ptr = vmap.count(x.ptr) ? (Value *)vmap[x.ptr] : x.ptr;
		w.slow.push_back(y);
	}
}

// Cloning a block replaced the uses of its values after it with PHIs
// (tail), and an access of a block collected earlier may be such a
// use: a loop whose later block computes the pointer an earlier one
// loads through (SQLite's regexp matcher). Take every access's pointer
// again from its instruction, or the check would use the body's value,
// which the clone's path does not define (tests/pass/stale-ptr.ll).
void Instrumenter::takePointersAgain(std::vector<BlockWork> &work) const
{
	for (BlockWork &w : work)
		for (std::vector<Access> *v : { &w.fast, &w.slow })
			for (Access &x : *v) {
				Access now;
				if (accessOf(*x.inst, now))
					x.ptr = now.ptr;
			}
}

// Plans the merged checks of all accesses (planChecks) and resets the
// dirty flag where a block starts with no window.
void Instrumenter::mergeChecksOf(Function &F, std::vector<BlockWork> &work)
{
	std::vector<const Access *> all;
	for (BlockWork &w : work)
		for (std::vector<Access> *v : { &w.fast, &w.slow })
			for (Access &x : *v)
				all.push_back(&x);
	std::vector<BasicBlock *> resets;
	planChecks(F, all, resets);
	if (stats) {
		uint64_t covered = 0, checkers = 0;
		for (auto &c : checks) {
			covered += c.second.role == kCovered;
			checkers += c.second.role == kChecker;
		}
		fprintf(stderr, "locprof-pass: %s: %llu of %zu checks covered by %llu windows\n", F.getName().str().c_str(),
			(unsigned long long)covered, all.size(), (unsigned long long)checkers);
	}
	for (BasicBlock *R : resets) {
		IRBuilder<> RB(&*R->getFirstInsertionPt());
		resetDirty(RB);
	}
}

// The countdown goes back to TLS before returns and program calls, and
// comes back (with the dirty flag reset) after calls.
void Instrumenter::writeBackAroundCalls(const std::vector<Instruction *> &exits, const std::vector<Instruction *> &progCalls)
{
	for (Instruction *I : exits) {
		IRBuilder<> B(I);
		writeBack(B, B.CreateLoad(i64, cdSlot));
	}
	SmallPtrSet<BasicBlock *, 8> pads;
	for (Instruction *I : progCalls) {
		IRBuilder<> B(I);
		writeBack(B, B.CreateLoad(i64, cdSlot));
		if (auto *inv = dyn_cast<InvokeInst>(I)) {
			BasicBlock *pad = inv->getUnwindDest();
			BasicBlock *normal = SplitEdge(inv->getParent(), inv->getNormalDest());
			IRBuilder<> NB(&*normal->getFirstInsertionPt());
			reload(NB);
			resetDirty(NB);
			// Every predecessor of a landing pad is an invoke, which
			// wrote the countdown back.
			if (pads.insert(pad).second) {
				IRBuilder<> LB(&*pad->getFirstInsertionPt());
				reload(LB);
				resetDirty(LB);
			}
			continue;
		}
		Instruction *next = I->getNextNode();
		if (!cast<CallInst>(I)->isMustTailCall() && !isa<ReturnInst>(next) && !isa<UnreachableInst>(next)) {
			IRBuilder<> A(next);
			reload(A);
			resetDirty(A);
		}
	}
}

// Loops that hold a slow path are not for the vectorizer: the call to
// lp_rt_slow makes them unvectorizable, but under LTO, where the whole
// pipeline runs again on the instrumented program, the vectorizer first
// asks of every load in their predicated blocks (the clones: all of them)
// whether it may run unconditionally, and each answer scans every use of
// the load's base pointer (llvm::getKnowledgeForValue): quadratic in the
// uses that cloning multiplied. zstd's link took 12 minutes, 57 % of
// them there. Marked llvm.loop.vectorize.enable false, the vectorizer
// leaves them at once.
void Instrumenter::noVectorizeSlowLoops(Function &F, DominatorTree &DT)
{
	LoopInfo LI(DT);
	Value *callee = slow.getCallee()->stripPointerCasts();

	for (Loop *L : LI.getLoopsInPreorder()) {
		bool hasSlow = false;
		for (BasicBlock *BB : L->blocks())
			for (Instruction &I : *BB)
				if (auto *CI = dyn_cast<CallInst>(&I))
					hasSlow |= CI->getCalledOperand()->stripPointerCasts() == callee;
		if (hasSlow && L->getLoopLatch())
			addStringMetadataToLoop(L, "llvm.loop.vectorize.enable", 0);
	}
}

// The first load of the countdown at entry, then the slots become SSA
// values (mem2reg).
void Instrumenter::finish(Function &F, BranchInst *entryBr)
{
	IRBuilder<> IB(entryBr);
	reload(IB);
	resetDirty(IB);
	IB.CreateStore(ConstantInt::get(i64, 0), exSlot);
	std::vector<AllocaInst *> slots = { cdSlot, dirtySlot, exSlot };
	if (slowSlot) {
		IB.CreateStore(ConstantInt::getFalse(C), slowSlot);
		slots.push_back(slowSlot);
	}
	slowSlot = nullptr;

	DominatorTree DT(F);
	PromoteMemToReg(slots, DT);
	noVectorizeSlowLoops(F, DT);
	if (verify && verifyFunction(F, &errs()))
		report_fatal_error("locprof-pass: broken function " + F.getName(), false);
}

bool Instrumenter::run(Function &F)
{
	if (!mayInstrument(F))
		return false;
	splitBlocksAfterCalls(F);
	uint64_t size = 0, nacc = 0, cloned = 0;
	for (BasicBlock &BB : F)
		size += BB.size();
	bool mayClone = size <= cloneMax;
	BranchInst *br = createEntry(F);
	BasicBlock *entry = br->getParent();
	uint64_t versioned, versionedOne;
	versionLoops(F, mayClone, versioned, versionedOne);
	std::vector<BasicBlock *> blocks;
	for (BasicBlock &BB : F)
		if (&BB != entry && !fastBlocks.count(&BB))
			blocks.push_back(&BB);

	std::vector<BlockWork> work;
	bool any = false;
	for (BasicBlock *BB : blocks) {
		std::vector<Access> acc;
		Access a;
		for (Instruction &I : *BB)
			if (accessOf(I, a))
				acc.push_back(a);
		if (acc.empty())
			continue;
		any = true;
		nacc += acc.size();
		BlockWork w;
		if (!mayClone || acc.size() == 1) {
			// The clone's code in place: the same per-access snippet,
			// so the same references are sampled. For one access it
			// is also as fast: one test of the countdown either way.
			w.slow = acc;
		} else {
			cloned++;
			cloneBlock(F, BB, acc, w);
		}
		work.push_back(std::move(w));
	}
	if (stats)
		fprintf(stderr, "locprof-pass: %s: %llu instructions, %llu accesses, %llu of %zu blocks cloned, %llu loops versioned (%llu of one block)\n",
			F.getName().str().c_str(), (unsigned long long)size, (unsigned long long)nacc,
			(unsigned long long)cloned, blocks.size(), (unsigned long long)versioned,
			(unsigned long long)versionedOne);
	if (stats && rangesAll)
		fprintf(stderr, "locprof-pass: %s: %llu of %llu loop ranges read from the shadow\n", F.getName().str().c_str(),
			(unsigned long long)rangesShadow, (unsigned long long)rangesAll);
	if (stats && checkedAll)
		fprintf(stderr, "locprof-pass: %s: %llu loop accesses checked one by one\n", F.getName().str().c_str(),
			(unsigned long long)checkedAll);
	if (!any) {
		// Nothing to count here: the calls' callees keep their own.
		cdSlot->eraseFromParent();
		dirtySlot->eraseFromParent();
		if (slowSlot)
			slowSlot->eraseFromParent();
		slowSlot = nullptr;
		return true;
	}
	// Program calls and returns, collected before the slow-path calls exist.
	std::vector<Instruction *> exits, progCalls;
	for (BasicBlock &BB : F)
		for (Instruction &I : BB) {
			if (isa<ReturnInst>(I) || isa<ResumeInst>(I))
				exits.push_back(&I);
			else if (isProgramCall(I))
				progCalls.push_back(&I);
		}
	takePointersAgain(work);
	mergeChecksOf(F, work);
	for (BlockWork &w : work) {
		if (!w.fast.empty())
			instrumentFast(w.fast);
		instrumentSlow(w.slow);
	}
	writeBackAroundCalls(exits, progCalls);
	finish(F, br);
	return true;
}

} // namespace locprof_pass
