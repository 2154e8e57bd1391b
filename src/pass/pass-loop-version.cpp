// Loop versioning, the transformation: an uninstrumented copy of a
// planned loop (pass-loop-plan.cpp), entered strip by strip after a query
// of the watches in the strip's address ranges.
#include "locprof-pass.h"

namespace locprof_pass {

Value *umin(IRBuilder<> &B, Value *a, Value *b)
{
	return B.CreateSelect(B.CreateICmpULT(a, b), a, b);
}

// The watched granules around [lo, hi), for a range of at most
// (granules - 2) * 64 bytes (so at most `granules` granules, however
// aligned): the shadow bytes of a window of `granules` granules that holds
// the range, as one vector compared with zero into a bit mask (movdqu,
// pcmpeqb, pmovmskb). Bit k set: granule g0 + k may hold a watch. The
// window starts at lo's granule, or ends at hi's for a run that walks
// down, so that the granules past the range lie after it in the run's
// direction: a watch there is met only after the strip (the iteration
// firstWatchedIteration gives for it is past the strip's end), and the
// bits need no mask. The loads stay within 2 KiB of an address the loop
// accesses.
struct ShadowRange {
	Value *g0, *bits; // i64 each
};
static ShadowRange shadowRange(IRBuilder<> &B, Value *lo, Value *hi, uint64_t granules, bool down)
{
	LLVMContext &C = B.getContext();
	Type *i64 = Type::getInt64Ty(C);
	auto *vt = FixedVectorType::get(Type::getInt8Ty(C), granules);
	Value *g0 = down ? B.CreateSub(B.CreateLShr(B.CreateSub(hi, ConstantInt::get(i64, 1)), 6),
				       ConstantInt::get(i64, granules - 1))
			 : B.CreateLShr(lo, 6);
	Value *at = B.CreateIntToPtr(B.CreateAdd(g0, ConstantInt::get(i64, kShadow)), PointerType::getUnqual(vt));
	Value *bytes = B.CreateAlignedLoad(vt, at, Align(1), "lp.sq");
	Value *set = B.CreateBitCast(B.CreateICmpNE(bytes, Constant::getNullValue(vt)), Type::getIntNTy(C, granules));
	return { g0, B.CreateZExt(set, i64, "lp.sbits") };
}

// The first iteration of a strip, counted from its start, whose bytes of
// run r may reach the watched granule nearest the run's start: [lo, hi)
// is the run's range over the strip and sr its watched granules (some).
// A lower bound: the iterations before it touch none of the run's watched
// granules (a positive step meets them in increasing order, a negative
// one in decreasing order), so the fast copy may run them.
static Value *firstWatchedIteration(IRBuilder<> &B, const VRef &r, Value *lo, Value *hi, const ShadowRange &sr)
{
	Type *i64 = B.getInt64Ty();
	if (!r.step)
		return ConstantInt::get(i64, 0); // the same bytes every iteration
	Value *w = ConstantInt::get(i64, r.hi - r.lo), *num;
	if (r.step > 0) {
		// Iteration t holds [lo + s t, lo + s t + w): the first with
		// lo + s t + w > G, the lowest watched granule's first byte.
		Value *k = B.CreateIntrinsic(Intrinsic::cttz, { i64 }, { sr.bits, B.getTrue() });
		Value *G = B.CreateShl(B.CreateAdd(sr.g0, k), 6);
		num = B.CreateSub(G, B.CreateAdd(lo, w));
	} else {
		// Iteration t holds [hi - w - s t, hi - s t): the first with
		// hi - w - s t < G + 64, G the highest watched granule's.
		Value *k = B.CreateSub(ConstantInt::get(i64, 63),
				       B.CreateIntrinsic(Intrinsic::ctlz, { i64 }, { sr.bits, B.getTrue() }));
		Value *G = B.CreateShl(B.CreateAdd(sr.g0, k), 6);
		num = B.CreateSub(B.CreateSub(hi, w), B.CreateAdd(G, ConstantInt::get(i64, 64)));
	}
	// s t > num: none before t = num / s + 1 (all of them when num < 0).
	Value *t = B.CreateAdd(B.CreateUDiv(num, ConstantInt::get(i64, (uint64_t)std::abs(r.step))), ConstantInt::get(i64, 1));
	return B.CreateSelect(B.CreateICmpSLT(num, ConstantInt::get(i64, 0)), ConstantInt::get(i64, 0), t);
}


// Versioning one planned loop (docs/runtime.md, "Loop versioning"; the
// scheme is at the top of pass-loop-plan.cpp): the blocks and values each
// step creates for the next ones. The steps run in run()'s order, which is
// also the order the IR is created in.
class LoopVersioner {
public:
	LoopVersioner(Instrumenter &ins, Function &F, VLoop &v);
	void run();

private:
	Instrumenter &ins;
	Function &F;
	VLoop &v;
	LLVMContext &C;
	Type *i8, *i32, *i64;
	MDNode *cold;
	AllocaInst *cdSlot, *slowSlot;
	SmallPtrSet<BasicBlock *, 32> &fastBlocks;

	BasicBlock *H, *check;                       // the loop's header; the test of the trip count
	SmallPtrSet<BasicBlock *, 16> inLoop;
	ValueToValueMapTy vm;                        // the instrumented loop's values to the fast copy's
	std::vector<BasicBlock *> copies;
	BasicBlock *fh = nullptr, *fhBody = nullptr; // the fast header (tests only) and its body
	BasicBlock *hBody = nullptr;                 // the instrumented header's body
	BasicBlock *latch = nullptr, *fLatch = nullptr;
	BasicBlock *query = nullptr, *fh2 = nullptr; // the range query; the fast copy's countdown test
	Value *trips = nullptr;
	PHINode *qi = nullptr, *iv = nullptr, *next = nullptr, *fiv = nullptr, *fend = nullptr;
	Value *ivn = nullptr, *fivn = nullptr;
	uint64_t stripLen = 0;
	Value *n = nullptr, *end = nullptr;          // the strip's iterations and its end
	std::vector<Value *> lo, hi;                 // each run's range over the strip
	std::vector<ShadowRange> sr;
	bool allShadow = true;
	Value *aligned = nullptr; // i1: no access that may straddle does in this strip
	std::vector<Value *> straddleAt; // each straddler's address at the strip's start
	// A loop of one block without checked accesses runs exactly `lim`
	// iterations in its fast copy: its straddlers' extra lines are counted
	// once per strip in closed form (lp_rt_strip_extra); other fast copies
	// count them at each access.
	bool closedForm() const { return v.blocks.size() == 1 && v.checked.empty(); }
	BasicBlock *wdone = nullptr, *done = nullptr;
	PHINode *watch = nullptr;
	bool single = false;                         // a loop of one block
	Value *cdq = nullptr, *lim0 = nullptr, *lim = nullptr, *fend0 = nullptr;
	Value *cdEnd = nullptr, *cdExit = nullptr, *room = nullptr;
	BasicBlock *fexit = nullptr, *fromFast = nullptr; // where the fast copy enters H
	BasicBlock *stripLatch = nullptr;            // the fast latch's strip-end block, if it tests the strip
	BasicBlock *toQuery = nullptr;               // the fast copy's way to query
	std::vector<std::pair<PHINode *, PHINode *>> phis; // the header's PHIs, their query copies
	PHINode *ivAtQuery = nullptr;                // v.iv's value at the strip's start
	IRBuilder<> QB, WB, DB;                      // at the ends of query, wdone, done

	void addsForDisjointOrs();
	void cloneFastCopy();
	void createQueryAndCheck();
	void createStripCounters();
	void chooseStripLength();
	void emitStripRanges();
	void emitWatchQuery();
	void emitFastLimit();
	void countdownAtSingleBlockExits();
	void mergeHeaderValues();
	void emitHeaderTests();
	void countStripOnInductionVariable();
	void emitCheckedAccesses();
	void emitFastCountdown();
	void flushExtraAtExits();
};

LoopVersioner::LoopVersioner(Instrumenter &ins_, Function &F_, VLoop &v_)
	: ins(ins_), F(F_), v(v_), C(ins_.C), i8(ins_.i8), i32(ins_.i32), i64(ins_.i64), cold(ins_.cold),
	  cdSlot(ins_.cdSlot), slowSlot(ins_.slowSlot), fastBlocks(ins_.fastBlocks), QB(ins_.C), WB(ins_.C), DB(ins_.C)
{
}

void LoopVersioner::run()
{
	H = v.header;
	check = v.preheader->splitBasicBlock(v.preheader->getTerminator(), "lp.lv.check");
	inLoop.insert(v.blocks.begin(), v.blocks.end());
	addsForDisjointOrs();
	cloneFastCopy();
	createQueryAndCheck();
	createStripCounters();
	chooseStripLength();
	emitStripRanges();
	emitWatchQuery();
	emitFastLimit();
	if (single)
		countdownAtSingleBlockExits();
	toQuery = single ? fexit : fh;
	mergeHeaderValues();
	emitHeaderTests();
	if (single) {
		for (auto &pp : phis)
			if (pp.first == v.iv)
				ivAtQuery = pp.second;
		if (stripLatch && v.iv)
			countStripOnInductionVariable();
		emitCheckedAccesses();
		flushExtraAtExits();
		return;
	}
	emitFastCountdown();
	flushExtraAtExits();
}

// An unrolled loop indexes with `or i, 1` where i is known even
// ({0, +, 2}); in the copies i starts at the query's value, whose
// low bit nothing proves, so ScalarEvolution no longer sees i + 1
// and loop strength reduction multiplies again at every iteration.
// Disjoint ors become the adds they are, while that is still known.
void LoopVersioner::addsForDisjointOrs()
{
	const DataLayout &DL = F.getParent()->getDataLayout();
	for (BasicBlock *B : v.blocks)
		for (Instruction &I : make_early_inc_range(*B))
			if (I.getOpcode() == Instruction::Or && I.getType()->isIntegerTy() &&
			    haveNoCommonBitsSet(I.getOperand(0), I.getOperand(1), DL, nullptr, &I)) {
				auto *add = BinaryOperator::CreateNUWAdd(I.getOperand(0), I.getOperand(1), I.getName(), &I);
				add->setHasNoSignedWrap(true);
				add->setDebugLoc(I.getDebugLoc());
				I.replaceAllUsesWith(add);
				I.eraseFromParent();
			}
}

// The fast copy, then both headers split after their PHIs: the
// header blocks only test, their bodies hold the original code.
void LoopVersioner::cloneFastCopy()
{
	for (BasicBlock *B : v.blocks) {
		BasicBlock *nb = CloneBasicBlock(B, vm, ".lpf", &F);
		vm[B] = nb;
		copies.push_back(nb);
	}
	for (BasicBlock *nb : copies)
		for (Instruction &I : *nb)
			RemapInstruction(&I, vm, RF_IgnoreMissingLocals | RF_NoModuleLevelChanges);
	// The fast copy counts the extra lines of accesses that may straddle
	// (the smallest line size; the strip test below covers the others).
	for (const VStraddle &s : v.straddlers) {
		if (closedForm())
			break;
		Access a;
		Instruction *fi = cast<Instruction>(vm[s.inst]);
		if (ins.accessOf(*fi, a)) {
			IRBuilder<> B(fi);
			ins.countExtra(B, a, ins.exSlot);
		}
	}
	fh = cast<BasicBlock>(vm[H]);
	fhBody = fh->splitBasicBlock(fh->getFirstNonPHI(), H->getName() + ".lpf.body");
	hBody = H->splitBasicBlock(H->getFirstNonPHI(), H->getName() + ".lp.body");
	inLoop.insert(hBody);
	auto fastOf = [&](BasicBlock *B) { return B == hBody ? fhBody : cast<BasicBlock>(vm[B]); };
	latch = v.latch == H ? hBody : v.latch;
	fLatch = fastOf(latch);
	for (BasicBlock *nb : copies)
		fastBlocks.insert(nb);
	fastBlocks.insert(fhBody);

	// The exits: values of the fast copy merge in the (LCSSA) PHIs.
	for (BasicBlock *E : v.exits)
		for (PHINode &phi : E->phis()) {
			unsigned n = phi.getNumIncomingValues();
			for (unsigned i = 0; i < n; i++) {
				BasicBlock *X = phi.getIncomingBlock(i);
				if (!inLoop.count(X))
					continue;
				Value *val = phi.getIncomingValue(i);
				Value *fv = vm.count(val) ? (Value *)vm[val] : val;
				phi.addIncoming(fv, fastOf(X));
			}
		}
}

// check: a loop of fewer than kLoopMinTrips iterations runs instrumented,
// others start with a query.
void LoopVersioner::createQueryAndCheck()
{
	query = BasicBlock::Create(C, "lp.lv.query", &F, H);
	fh2 = BasicBlock::Create(C, "lp.lv.fast.cd", &F, fhBody);
	fastBlocks.insert(fh2);
	{
		IRBuilder<> CB(check->getTerminator());
		trips = CB.CreateAdd(v.btc, ConstantInt::get(i64, 1), "lp.trips");
	}
	check->getTerminator()->eraseFromParent();
	IRBuilder<> CB(check);
	CB.CreateCondBr(CB.CreateICmpUGE(trips, ConstantInt::get(i64, kLoopMinTrips)), query, H);
}

// The iteration number and the end of the strip, in both copies.
void LoopVersioner::createStripCounters()
{
	QB.SetInsertPoint(query);
	IRBuilder<> HB(H, H->getFirstInsertionPt()), FB(fh, fh->getFirstInsertionPt());
	qi = QB.CreatePHI(i64, 3, "lp.i");
	iv = HB.CreatePHI(i64, 5, "lp.i");
	next = HB.CreatePHI(i64, 5, "lp.end");
	fiv = FB.CreatePHI(i64, 2, "lp.i");
	fend = FB.CreatePHI(i64, 2, "lp.end");
	ivn = IRBuilder<>(&*hBody->getFirstInsertionPt()).CreateAdd(iv, ConstantInt::get(i64, 1));
	fivn = IRBuilder<>(&*fhBody->getFirstInsertionPt()).CreateAdd(fiv, ConstantInt::get(i64, 1));
}

// The strip: `strip` iterations (at most the loop's trip bound), fewer
// where a run's range would not fit the shadow window the query reads
// (below) while that leaves at least kLoopMinTrips iterations per query.
void LoopVersioner::chooseStripLength()
{
	stripLen = v.maxTrips ? std::min(ins.strip, v.maxTrips) : ins.strip;
	for (const VRef &r : v.refs) {
		uint64_t step = (uint64_t)std::abs(r.step), width = (uint64_t)(r.hi - r.lo);
		if (step && width <= kShadowQueryBytes) {
			uint64_t fit = (kShadowQueryBytes - width) / step + 1;
			if (fit >= kLoopMinTrips)
				stripLen = std::min(stripLen, fit);
		}
	}
}

// query: the ranges of the strip [i, i + n).
void LoopVersioner::emitStripRanges()
{
	n = umin(QB, ConstantInt::get(i64, stripLen), QB.CreateSub(trips, qi));
	end = QB.CreateAdd(qi, n, "lp.end");
	Value *last = QB.CreateSub(n, ConstantInt::get(i64, 1));
	// An access that may straddle is aligned to its size (a power of
	// two, at most the smallest line: lp_rt_straddle_mask + 1) at the
	// strip's first iteration and steps by a multiple of it: then none of
	// the strip's touches two lines, and the fast copy may run it.
	aligned = ConstantInt::getTrue(C);
	Value *mask = v.straddlers.empty() ? nullptr : QB.CreateLoad(i64, ins.straddleMask, "lp.mask");
	for (const VStraddle &s : v.straddlers) {
		const VRef &r = v.refs[s.run];
		Value *a = QB.CreateAdd(r.start, ConstantInt::get(i64, (uint64_t)s.off));
		if (r.step)
			a = QB.CreateAdd(a, QB.CreateMul(qi, ConstantInt::get(i64, r.step)));
		straddleAt.push_back(a);
		if (s.size & (s.size - 1)) {
			aligned = ConstantInt::getFalse(C);
			continue;
		}
		a = QB.CreateOr(a, ConstantInt::get(i64, (uint64_t)std::abs(r.step)));
		Value *ok = QB.CreateAnd(QB.CreateICmpEQ(QB.CreateAnd(a, ConstantInt::get(i64, s.size - 1)),
							 ConstantInt::get(i64, 0)),
					 QB.CreateICmpULE(ConstantInt::get(i64, s.size - 1), mask));
		aligned = QB.CreateAnd(aligned, ok);
	}
	if (mask) // one line size (or not recording): the fast copy counts them all
		aligned = QB.CreateOr(aligned, QB.CreateICmpEQ(QB.CreateLoad(i64, ins.straddleSlow, "lp.slow"),
							       ConstantInt::get(i64, ~0ull)));
	for (const VRef &r : v.refs) {
		// The run's bytes over the strip: [a + r.lo, a + r.hi) at each
		// iteration, a = start + step * iteration.
		Value *a = r.start, *span = ConstantInt::get(i64, 0);
		if (r.step) {
			a = QB.CreateAdd(a, QB.CreateMul(qi, ConstantInt::get(i64, r.step)));
			span = QB.CreateMul(last, ConstantInt::get(i64, r.step));
		}
		if (r.step >= 0) {
			lo.push_back(QB.CreateAdd(a, ConstantInt::get(i64, r.lo)));
			hi.push_back(QB.CreateAdd(QB.CreateAdd(a, span), ConstantInt::get(i64, r.hi)));
		} else {
			lo.push_back(QB.CreateAdd(QB.CreateAdd(a, span), ConstantInt::get(i64, r.lo)));
			hi.push_back(QB.CreateAdd(a, ConstantInt::get(i64, r.hi)));
		}
	}
}

// A range of at most kShadowQueryBytes (the usual case: a strip of a
// small step) reads the watch shadow itself, a byte per 64-byte
// granule: one vector of a window holding the range, compared with
// zero into a bit mask (shadowRange). So a strip runs
// instrumented only if a watched line is within its own bytes, not
// somewhere in its 4 KiB page. (The shadow counts every thread's
// watches: another thread's costs iterations instrumented, never a
// missed watch. The loads stay within 2 KiB of an address the loop
// accesses, inside the shadow.)
// Other ranges of one or two pages read the runtime's per-thread page
// counts inline; longer ones call it.
void LoopVersioner::emitWatchQuery()
{
	Value *pages = QB.CreateLoad(PointerType::getUnqual(i32), ins.field(QB, 1), "lp.pages");
	Value *pmask = ConstantInt::get(i64, 0xffff); // LP_RT_PAGE_ENTRIES - 1
	Value *small = nullptr, *inl = nullptr;
	sr.assign(v.refs.size(), ShadowRange{ nullptr, nullptr });
	for (unsigned k = 0; k < v.refs.size(); k++) {
		const VRef &r = v.refs[k];
		uint64_t most = (stripLen - 1) * (uint64_t)std::abs(r.step) + (uint64_t)(r.hi - r.lo);
		ins.rangesAll++;
		if (most <= kShadowQueryBytes) {
			ins.rangesShadow++;
			sr[k] = shadowRange(QB, lo[k], hi[k], shadowQueryGranules(most), r.step < 0);
			inl = inl ? QB.CreateOr(inl, sr[k].bits) : sr[k].bits;
			continue;
		}
		allShadow = false;
		Value *p0 = QB.CreateLShr(lo[k], 12), *p1 = QB.CreateLShr(QB.CreateSub(hi[k], ConstantInt::get(i64, 1)), 12);
		Value *sm = QB.CreateICmpULE(QB.CreateSub(p1, p0), ConstantInt::get(i64, 1));
		Value *w = QB.CreateOr(QB.CreateLoad(i32, QB.CreateGEP(i32, pages, QB.CreateAnd(p0, pmask))),
				       QB.CreateLoad(i32, QB.CreateGEP(i32, pages, QB.CreateAnd(p1, pmask))));
		small = small ? QB.CreateAnd(small, sm) : sm;
		w = QB.CreateZExt(w, i64);
		inl = inl ? QB.CreateOr(inl, w) : w;
	}
	QB.CreateStore(ConstantInt::getFalse(C), slowSlot);
	BasicBlock *call = BasicBlock::Create(C, "lp.lv.call", &F, H);
	wdone = BasicBlock::Create(C, "lp.lv.watched", &F, H);
	done = BasicBlock::Create(C, "lp.lv.done", &F, H);
	if (!small)
		small = ConstantInt::getTrue(C);
	QB.CreateCondBr(small, wdone, call, MDBuilder(C).createBranchWeights(1 << 10, 1));
	IRBuilder<> KB(call);
	Value *any = nullptr;
	for (unsigned k = 0; k < v.refs.size(); k++) {
		Value *w = KB.CreateCall(ins.rangeQuery, { lo[k], hi[k] });
		any = any ? KB.CreateOr(any, w) : w;
	}
	any = KB.CreateZExt(any, i64);
	KB.CreateBr(wdone);
	// The runtime's state read here is not the program's: not instrumented.
	fastBlocks.insert(query);
	fastBlocks.insert(call);
	fastBlocks.insert(wdone);
	fastBlocks.insert(done);
	WB.SetInsertPoint(wdone);
	watch = WB.CreatePHI(i64, 2, "lp.watched");
	watch->addIncoming(inl, query);
	watch->addIncoming(any, call);
}

// How many iterations the fast copy runs from the query (lim; 0: none).
// A loop of one block (most vectorised loops) makes exactly `total`
// references per iteration: the fast copy runs as many iterations as
// the countdown allows (at most the strip) with no countdown in the
// loop, and the countdown is written back where it leaves the copy.
// Other loops test the countdown at each fast iteration and subtract
// each block's references.
void LoopVersioner::emitFastLimit()
{
	single = v.blocks.size() == 1;
	lim0 = n;
	if (single) {
		cdq = WB.CreateLoad(i64, cdSlot, "lp.cd");
		lim0 = umin(WB, n, WB.CreateUDiv(cdq, ConstantInt::get(i64, v.total)));
	}
	// With a watch in range the fast copy still runs the iterations
	// before the first that may reach it (ranges read from the shadow
	// only; a page count or the runtime's answer does not say where): a
	// watch costs the instrumented copy from there to the slow path that
	// finds it, not a whole strip.
	Value *clear = WB.CreateICmpEQ(watch, ConstantInt::get(i64, 0));
	Value *limW = WB.CreateSelect(WB.CreateAnd(clear, aligned), lim0, ConstantInt::get(i64, 0));
	DB.SetInsertPoint(done);
	lim = limW;
	if (allShadow) {
		BasicBlock *firstB = BasicBlock::Create(C, "lp.lv.first", &F, H);
		fastBlocks.insert(firstB);
		WB.CreateCondBr(clear, done, firstB, MDBuilder(C).createBranchWeights(1 << 10, 1));
		IRBuilder<> FB1(firstB);
		Value *first = lim0;
		for (unsigned k = 0; k < v.refs.size(); k++) {
			Value *t = firstWatchedIteration(FB1, v.refs[k], lo[k], hi[k], sr[k]);
			t = FB1.CreateSelect(FB1.CreateICmpEQ(sr[k].bits, ConstantInt::get(i64, 0)), lim0, t);
			first = umin(FB1, first, t);
		}
		first = FB1.CreateSelect(aligned, first, ConstantInt::get(i64, 0));
		FB1.CreateBr(done);
		PHINode *lp = DB.CreatePHI(i64, 2, "lp.lim");
		lp->addIncoming(limW, wdone);
		lp->addIncoming(first, firstB);
		lim = lp;
	} else
		WB.CreateBr(done);
	fend0 = DB.CreateAdd(qi, lim, "lp.fend");
	if (closedForm())
		for (unsigned k = 0; k < v.straddlers.size(); k++)
			DB.CreateCall(ins.stripExtra, { straddleAt[k], ConstantInt::get(i64, (uint64_t)v.refs[v.straddlers[k].run].step),
						       ConstantInt::get(i64, v.straddlers[k].size), lim });
	fromFast = fh2;
	Value *go = DB.CreateICmpNE(lim, ConstantInt::get(i64, 0));
	DB.CreateCondBr(go, fh, H, MDBuilder(C).createBranchWeights(1 << 10, 1));
	DB.SetInsertPoint(done->getTerminator());
}

// A loop of one block: the countdown where the fast copy ends, written
// back on its ways out, and the strip's end tested at the latch.
void LoopVersioner::countdownAtSingleBlockExits()
{
	room = lim;
	// The countdown where the fast copy ends: after `room`
	// iterations at the end of its run; on the way out of the loop
	// after all `trips` (the backedge-taken count is exact, and the
	// exiting iteration made all its references: one block). Neither
	// depends on the iteration number, so the fast loop keeps no
	// countdown at all (with `base - total * i` at the exits, LSR
	// made it a countdown in the loop again).
	cdEnd = DB.CreateSub(cdq, DB.CreateMul(room, ConstantInt::get(i64, v.total)), "lp.cd.end");
	cdExit = DB.CreateSub(cdq, DB.CreateMul(DB.CreateSub(trips, qi), ConstantInt::get(i64, v.total)),
			      "lp.cd.exit");
	fh2->eraseFromParent();
	fastBlocks.erase(fh2);
	fromFast = nullptr;
	fexit = BasicBlock::Create(C, "lp.lv.fast.exit", &F, fhBody);
	fastBlocks.insert(fexit);
	IRBuilder<> XB(fexit);
	XB.CreateStore(cdEnd, cdSlot);
	XB.CreateBr(query);
	// Leaving the loop from the fast copy: the iteration that exits
	// made all its references (one block).
	std::vector<BasicBlock *> succ(succ_begin(fhBody), succ_end(fhBody));
	BasicBlock *xexit = nullptr;
	for (BasicBlock *S : succ) {
		if (S == fh)
			continue;
		BasicBlock *x = SplitEdge(fhBody, S);
		fastBlocks.insert(x);
		IRBuilder<> EB(&*x->getFirstInsertionPt());
		EB.CreateStore(cdExit, cdSlot);
		xexit = x;
	}
	// One test per fast iteration, not two: the strip never runs
	// past the loop's last iteration (room <= trips - i), so the
	// loop's own exit test is replaced by the strip's, and where the
	// strip ends the loop ends iff it was its last (the
	// backedge-taken count is exact). The loop's compare is then
	// dead, and LSR keeps one induction variable instead of two.
	auto *lt = dyn_cast<BranchInst>(fhBody->getTerminator());
	if (xexit && lt && lt->isConditional() && succ.size() == 2 &&
	    (lt->getSuccessor(0) == fh) != (lt->getSuccessor(1) == fh)) {
		BasicBlock *fdone = BasicBlock::Create(C, "lp.lv.fast.done", &F, fexit);
		fastBlocks.insert(fdone);
		lt->eraseFromParent();
		IRBuilder<> LB(fhBody);
		LB.CreateCondBr(LB.CreateICmpEQ(fivn, fend), fdone, fh, MDBuilder(C).createBranchWeights(1, 64));
		IRBuilder<> XD(fdone);
		XD.CreateCondBr(XD.CreateICmpEQ(fend, trips), xexit, fexit); // here fivn == fend
		stripLatch = fdone;
	}
}

// The header values: query merges them from check and both headers.
void LoopVersioner::mergeHeaderValues()
{
	for (PHINode &phi : H->phis())
		if (&phi != iv && &phi != next)
			phis.push_back({ &phi, nullptr });
	IRBuilder<> QP(query, query->getFirstInsertionPt());
	for (auto &pp : phis) {
		PHINode *phi = pp.first, *fphi = cast<PHINode>(vm[phi]);
		PHINode *q = QP.CreatePHI(phi->getType(), 3, phi->getName() + ".lpq");
		q->addIncoming(phi->getIncomingValueForBlock(check), check);
		// From the latch's strip test the header values are those the
		// back edge would have taken.
		q->addIncoming(stripLatch ? fphi->getIncomingValueForBlock(fLatch) : (Value *)fphi, toQuery);
		q->addIncoming(phi, H);
		phi->addIncoming(q, done);
		if (fromFast)
			phi->addIncoming(fphi, fromFast);
		int k = fphi->getBasicBlockIndex(check);
		fphi->setIncomingBlock(k, done);
		fphi->setIncomingValue(k, q);
		pp.second = q;
	}
	qi->addIncoming(ConstantInt::get(i64, 0), check);
	qi->addIncoming(stripLatch ? (Value *)fend : fiv, toQuery);
	qi->addIncoming(iv, H);
	iv->addIncoming(ConstantInt::get(i64, 0), check);
	iv->addIncoming(qi, done);
	if (fromFast)
		iv->addIncoming(fiv, fromFast);
	iv->addIncoming(ivn, latch);
	next->addIncoming(ConstantInt::getAllOnesValue(i64), check); // short loop: no strips
	next->addIncoming(end, done);
	if (fromFast)
		next->addIncoming(fend, fromFast);
	next->addIncoming(next, latch);
	fiv->addIncoming(qi, done);
	fiv->addIncoming(fivn, fLatch);
	fend->addIncoming(fend0, done);
	fend->addIncoming(fend, fLatch);
}

// The instrumented header: at the end of a strip ask again, and as
// soon as a slow path has run (a sample or a watch hit: what made the
// strip instrumented is usually over, and the rest of it may be fast).
// The fast header: at the end of the strip ask again; leave for the
// instrumented loop when a sample may fall in the next iteration.
void LoopVersioner::emitHeaderTests()
{
	H->getTerminator()->eraseFromParent();
	IRBuilder<> HT(H);
	Value *ran = HT.CreateLoad(Type::getInt1Ty(C), slowSlot, "lp.slow");
	HT.CreateCondBr(HT.CreateOr(HT.CreateICmpEQ(iv, next), ran), query, hBody,
			MDBuilder(C).createBranchWeights(1, 64));
	fh->getTerminator()->eraseFromParent();
	IRBuilder<> FT(fh);
	if (!single)
		FT.CreateCondBr(FT.CreateICmpEQ(fiv, fend), query, fh2, MDBuilder(C).createBranchWeights(1, 64));
	else if (stripLatch) // the query gives at least one iteration; the latch tests the strip
		FT.CreateBr(fhBody);
	else
		FT.CreateCondBr(FT.CreateICmpEQ(fiv, fend), fexit, fhBody, MDBuilder(C).createBranchWeights(1, 64));
}

// The strip ends where the loop's own induction
// variable reaches start + step * room: the counter
// goes, and LSR keeps one variable, as natively.
void LoopVersioner::countStripOnInductionVariable()
{
	PHINode *q = ivAtQuery;
	auto *fphi = cast<PHINode>(vm[v.iv]);
	IRBuilder<> EB(done->getTerminator());
	Value *ivEnd = EB.CreateAdd(q, EB.CreateMul(room, ConstantInt::get(i64, v.ivStep)), "lp.iv.end");
	auto *br = cast<BranchInst>(fhBody->getTerminator());
	auto *old = cast<Instruction>(br->getCondition());
	br->setCondition(IRBuilder<>(br).CreateICmpEQ(fphi->getIncomingValueForBlock(fLatch), ivEnd));
	old->eraseFromParent();
	fiv->removeIncomingValue(fLatch, false);
	cast<Instruction>(fivn)->eraseFromParent();
	fiv->replaceAllUsesWith(UndefValue::get(i64));
	fiv->eraseFromParent();
	fiv = nullptr;
}

// The accesses outside the ranges: each tests its shadow byte
// where it stands in the fast copy, and on a yes the iteration
// starts again in the instrumented copy (nothing before it in
// the block had a side effect), with the countdown of the
// iterations the fast copy completed; that copy runs to its next
// slow path (the access finds its watch) and asks again.
void LoopVersioner::emitCheckedAccesses()
{
	for (Instruction *X : v.checked) {
		ins.checkedAll++;
		auto *xf = cast<Instruction>(vm[X]);
		Access a;
		ins.accessOf(*xf, a);
		BasicBlock *P = xf->getParent();
		BasicBlock *rest = P->splitBasicBlock(xf, P->getName() + ".chk");
		BasicBlock *bail = BasicBlock::Create(C, "lp.lv.bail", &F, rest);
		fastBlocks.insert(rest);
		fastBlocks.insert(bail);
		P->getTerminator()->eraseFromParent();
		IRBuilder<> PB(P);
		PB.CreateCondBr(watched(PB, a.ptr, i64, i8), bail, rest, cold);
		IRBuilder<> BB(bail);
		// The iteration number, through an empty asm: seen as an
		// affine expression, loop strength reduction kept the
		// countdown below up to date in the fast loop, a register
		// and an instruction per iteration for a cold exit.
		InlineAsm *opaque = InlineAsm::get(FunctionType::get(i64, { i64 }, false), "", "=r,0", false);
		Value *it = fiv;
		if (!it) { // the strip is counted on the loop's induction variable
			Value *d = BB.CreateSub(BB.CreateCall(opaque->getFunctionType(), opaque, { cast<PHINode>(vm[v.iv]) }),
						ivAtQuery);
			it = BB.CreateAdd(qi, BB.CreateExactSDiv(d, ConstantInt::get(i64, v.ivStep)));
		} else
			it = BB.CreateCall(opaque->getFunctionType(), opaque, { it });
		BB.CreateStore(BB.CreateSub(cdq, BB.CreateMul(BB.CreateSub(it, qi), ConstantInt::get(i64, v.total))),
			       cdSlot);
		BB.CreateBr(H);
		for (auto &pp : phis)
			pp.first->addIncoming(vm[pp.first], bail);
		iv->addIncoming(it, bail);
		next->addIncoming(fend, bail);
	}
}

// Loops of several blocks: the fast copy tests the countdown at each
// iteration (fh2) and each block subtracts its references.
void LoopVersioner::emitFastCountdown()
{
	IRBuilder<> F2(fh2);
	Value *cd = F2.CreateLoad(i64, cdSlot, "lp.cd");
	F2.CreateCondBr(F2.CreateICmpUGE(cd, ConstantInt::get(i64, v.total)), fhBody, H,
			MDBuilder(C).createBranchWeights(1 << 20, 1));
	for (BasicBlock *B : v.blocks) {
		uint64_t k = v.count.count(B) ? v.count[B] : 0;
		if (!k)
			continue;
		BasicBlock *nb = B == H ? fhBody : cast<BasicBlock>(vm[B]);
		IRBuilder<> SB(&*nb->getFirstInsertionPt());
		SB.CreateStore(SB.CreateSub(SB.CreateLoad(i64, cdSlot), ConstantInt::get(i64, k)), cdSlot);
	}
}

void Instrumenter::versionLoop(Function &F, VLoop &v)
{
	LoopVersioner(*this, F, v).run();
}

// The fast copy's extra lines go to lp_rt_extra0 where it is left: at the
// next strip's query, in the instrumented header, at the loop's exits.
void LoopVersioner::flushExtraAtExits()
{
	if (v.straddlers.empty() || closedForm())
		return;
	std::vector<BasicBlock *> at = { query, H };
	at.insert(at.end(), v.exits.begin(), v.exits.end());
	for (BasicBlock *B : at) {
		IRBuilder<> FB(&*B->getFirstInsertionPt());
		ins.flushExtra(FB);
	}
}

} // namespace locprof_pass
