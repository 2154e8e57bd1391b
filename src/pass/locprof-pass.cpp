// locprof's instrumentation pass: the StatCache snippet (seed 000, section 4)
// inlined before every load and store, as LLVM IR, instead of
// SanitizerCoverage's callbacks. Loaded by `locprof cc` with
// `clang -fpass-plugin=locprof-pass.so` (docs/runtime.md, "The pass").
//
// It runs at the optimiser's last extension point, after vectorisation
// (where SanitizerCoverage runs too, so both see the same loads and stores)
// and keeps the runtime's semantics exactly: the reference that finds the
// thread's countdown at 0 is sampled, every reference is checked against
// the watch shadow, and both go to the runtime's one slow path, lp_rt_slow(),
// with the countdown in lp_rt_fast already decremented (src/rt/rt.h).
//
// What it does differently from the inlined callbacks:
//  * The countdown lives in an SSA value inside a function (an alloca
//    promoted by mem2reg): loaded from TLS at entry and after every call,
//    stored back before calls and returns. The hot path stores nothing.
//  * One countdown test per basic block, not per access: a block with n
//    accesses (and no call among them: blocks are split after calls) tests
//    countdown >= n once, subtracts n and runs its accesses with the watch
//    check only (shift, byte load from the fixed shadow, branch). Otherwise (a sample falls
//    in this block, or the runtime wants every reference: trace mode, a new
//    thread) it runs a clone of the block whose accesses each do the full
//    snippet (decrement, test, watch check), so the exact reference is
//    sampled.
//  * Only where that pays and compiles in reasonable time: a block with one
//    access, and every block of a function larger than the clone limit
//    (LOCPROF_PASS_CLONE_MAX IR instructions, default kCloneMax), runs the
//    full snippet in place, as the clone would, without a clone. Cloning
//    doubles the code, and LLVM's code generator is superlinear in a
//    function's size: Lua's lvm.c took 37 s instead of 0.9 s to compile
//    with every block cloned (docs/runtime.md, "Compile time").
// Semantics that differ: references made by a signal handler while an
// instrumented function holds the countdown in a register are lost from
// the thread's clock when that function writes it back (the inlined
// callbacks had the same window, smaller); another thread reading this
// thread's reference count at exit sees it as of this thread's last call.
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/IR/Dominators.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/MDBuilder.h"
#include "llvm/IR/Module.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Passes/PassPlugin.h"
#include "llvm/Transforms/Utils/BasicBlockUtils.h"
#include "llvm/Transforms/Utils/Cloning.h"
#include "llvm/Transforms/Utils/PromoteMemToReg.h"
#include "llvm/Transforms/Utils/ValueMapper.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

using namespace llvm;

namespace {

// LP_REF_READ / LP_REF_WRITE of include/locprof/common.h.
enum { kRead = 0, kWrite = 1 };

// Functions of more IR instructions than this (counted before
// instrumentation) are not cloned; chosen by measurement (docs/runtime.md,
// "Compile time").
enum : uint64_t { kCloneMax = 2000 };

struct Access {
	Instruction *inst;
	Value *ptr;
	uint64_t size;
	unsigned kind;
};

class Instrumenter {
public:
	explicit Instrumenter(Module &M);
	bool run(Function &F);

private:
	Module &M;
	LLVMContext &C;
	Type *i8, *i32, *i64;
	PointerType *i8p;
	StructType *fastTy;   // the first field of struct lp_rt_fast
	Constant *fast;       // the thread's lp_rt_fast (initial-exec TLS)
	FunctionCallee slow;  // lp_rt_slow(addr, size, kind, pc)
	MDNode *cold;         // branch weights: the slow side is cold
	uint64_t cloneMax = kCloneMax;
	bool stats = false;   // LOCPROF_PASS_STATS: one line per function on stderr
	AllocaInst *cdSlot = nullptr;
	AllocaInst *dirtySlot = nullptr; // a slow path ran in this fast block

	bool accessOf(Instruction &I, Access &a) const;
	Value *field(IRBuilder<> &B, unsigned i) { return B.CreateStructGEP(fastTy, fast, i); }
	void reload(IRBuilder<> &B);
	void writeBack(IRBuilder<> &B, Value *cd);
	void slowCall(Instruction *before, Value *cond, const Access &a, Value *tlsCd, uint64_t rest, bool dirty);
	void instrumentFast(const std::vector<Access> &acc, Value *cdHead);
	void instrumentSlow(const std::vector<Access> &acc);
};

Instrumenter::Instrumenter(Module &Mod) : M(Mod), C(Mod.getContext())
{
	i8 = Type::getInt8Ty(C);
	i32 = Type::getInt32Ty(C);
	i64 = Type::getInt64Ty(C);
	i8p = PointerType::getUnqual(i8);
	fastTy = StructType::get(C, ArrayRef<Type *>(i64));
	fast = M.getOrInsertGlobal("lp_rt_fast", fastTy, [&] {
		return new GlobalVariable(M, fastTy, false, GlobalValue::ExternalLinkage, nullptr,
					  "lp_rt_fast", nullptr, GlobalValue::InitialExecTLSModel);
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
		a = { &I, L->getPointerOperand(), DL.getTypeStoreSize(L->getType()).getKnownMinSize(), kRead };
	} else if (auto *S = dyn_cast<StoreInst>(&I)) {
		a = { &I, S->getPointerOperand(),
		      DL.getTypeStoreSize(S->getValueOperand()->getType()).getKnownMinSize(), kWrite };
	} else if (auto *II = dyn_cast<IntrinsicInst>(&I)) {
		if (II->getIntrinsicID() == Intrinsic::masked_load)
			a = { &I, II->getArgOperand(0), DL.getTypeStoreSize(II->getType()).getKnownMinSize(), kRead };
		else if (II->getIntrinsicID() == Intrinsic::masked_store)
			a = { &I, II->getArgOperand(1),
			      DL.getTypeStoreSize(II->getArgOperand(0)->getType()).getKnownMinSize(), kWrite };
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
	if (a.ptr->stripPointerCasts() == fast)
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
void Instrumenter::slowCall(Instruction *before, Value *cond, const Access &a, Value *tlsCd, uint64_t rest, bool dirty)
{
	Instruction *then = SplitBlockAndInsertIfThen(cond, before, false, cold);
	IRBuilder<> B(then);
	if (dirty)
		B.CreateStore(ConstantInt::getTrue(C), dirtySlot);
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

// The shadow test of the snippet: shadow[addr >> 6] != 0, the shadow at a
// fixed address that fits a 32-bit displacement (LP_RT_SHADOW and
// LP_RT_GRANULE_SHIFT of src/rt/rt.h), so no register holds its base.
static constexpr uint64_t kShadow = 0x7fff8000ull;
static Value *watched(IRBuilder<> &B, Value *ptr, Type *i64, Type *i8)
{
	Value *g = B.CreateLShr(B.CreatePtrToInt(ptr, i64), 6);
	Value *at = B.CreateIntToPtr(B.CreateAdd(g, ConstantInt::get(i64, kShadow)), PointerType::getUnqual(i8));
	return B.CreateICmpNE(B.CreateLoad(i8, at, "lp.w"), ConstantInt::get(i8, 0));
}

// The block's countdown was tested and decremented by acc.size() at its
// head (cdHead is the value before): each access only checks the shadow.
// An access to the same address as an earlier one of the block skips the
// check unless a slow path ran in between: this thread's watches only
// change in its slow path (a watch hit ends watches, it never starts
// one), and other threads' watches are not its business, so the answer is
// the earlier one's, which was no. `c[j] += ...` is then two checks, not
// three. (A watch started by a signal handler in between is missed; so it
// was by the inlined callbacks.)
void Instrumenter::instrumentFast(const std::vector<Access> &acc, Value *cdHead)
{
	uint64_t n = acc.size();
	SmallPtrSet<Value *, 8> seen;

	{
		IRBuilder<> B(acc[0].inst);
		B.CreateStore(ConstantInt::getFalse(C), dirtySlot);
	}
	for (uint64_t i = 0; i < n; i++) {
		Instruction *at = acc[i].inst;
		if (!seen.insert(acc[i].ptr->stripPointerCasts()).second) {
			IRBuilder<> D(at);
			at = SplitBlockAndInsertIfThen(D.CreateLoad(Type::getInt1Ty(C), dirtySlot), at, false, cold);
		}
		IRBuilder<> B(at);
		Value *cond = watched(B, acc[i].ptr, i64, i8);
		// The runtime expects the countdown as it would be after this
		// reference: the SSA copy (after all n) plus the n-1-i to come.
		Value *tlsCd = B.CreateAdd(B.CreateLoad(i64, cdSlot), ConstantInt::get(i64, n - 1 - i));
		slowCall(at, cond, acc[i], tlsCd, n - 1 - i, true);
	}
	(void)cdHead;
}

// The exact snippet per access: cd = countdown--; if (cd == 0 || watched)
// slow path.
void Instrumenter::instrumentSlow(const std::vector<Access> &acc)
{
	for (const Access &a : acc) {
		IRBuilder<> B(a.inst);
		Value *cd = B.CreateLoad(i64, cdSlot);
		Value *dec = B.CreateSub(cd, ConstantInt::get(i64, 1));
		B.CreateStore(dec, cdSlot);
		Value *cond = B.CreateOr(B.CreateICmpEQ(cd, ConstantInt::get(i64, 0)),
					 watched(B, a.ptr, i64, i8));
		slowCall(a.inst, cond, a, dec, 0, false);
	}
}

static bool isProgramCall(Instruction &I)
{
	auto *CB = dyn_cast<CallBase>(&I);
	// Intrinsics (memcpy and friends included) and inline asm never run
	// instrumented code; every other call may.
	return CB && !isa<IntrinsicInst>(CB) && !CB->isInlineAsm();
}

bool Instrumenter::run(Function &F)
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

	// Blocks end at calls, so that the references a block subtracts at
	// its head all come before any call.
	std::vector<Instruction *> calls;
	for (BasicBlock &BB : F)
		for (Instruction &I : BB)
			if (isProgramCall(I) && !I.isTerminator() && !cast<CallInst>(I).isMustTailCall())
				calls.push_back(&I);
	for (Instruction *I : calls)
		if (!I->getNextNode()->isTerminator())
			I->getParent()->splitBasicBlock(I->getNextNode());

	struct Block {
		std::vector<Access> fast, slow;
		Value *cdHead;
	};
	std::vector<BasicBlock *> blocks;
	for (BasicBlock &BB : F)
		blocks.push_back(&BB);

	// A new entry block holds the static allocas, the two slots and
	// their first load; the old entry becomes an ordinary block.
	BasicBlock *oldEntry = &F.getEntryBlock();
	BasicBlock *entry = BasicBlock::Create(C, "lp.entry", &F, oldEntry);
	IRBuilder<> EB(entry);
	cdSlot = EB.CreateAlloca(i64, nullptr, "lp.cd.slot");
	dirtySlot = EB.CreateAlloca(Type::getInt1Ty(C), nullptr, "lp.dirty.slot");
	Instruction *br = EB.CreateBr(oldEntry);
	std::vector<AllocaInst *> statics;
	for (Instruction &I : *oldEntry)
		if (auto *AI = dyn_cast<AllocaInst>(&I))
			if (isa<Constant>(AI->getArraySize()))
				statics.push_back(AI);
	for (AllocaInst *AI : statics)
		AI->moveBefore(cdSlot);

	uint64_t size = 0, nacc = 0, cloned = 0;
	for (BasicBlock *BB : blocks)
		size += BB->size();
	bool mayClone = size <= cloneMax;

	std::vector<Block> work;
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
		if (!mayClone || acc.size() == 1) {
			// The clone's code in place: the same per-access snippet,
			// so the same references are sampled. For one access it
			// is also as fast: one test of the countdown either way.
			Block w;
			w.slow = acc;
			w.cdHead = nullptr;
			work.push_back(std::move(w));
			continue;
		}
		cloned++;
		// head: PHIs, test -> body (fast) or body.slow (clone) -> tail: terminator
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
		Block w;
		w.fast = acc;
		for (Access &x : acc) {
			Access y = x;
			y.inst = cast<Instruction>(vmap[x.inst]);
			y.ptr = vmap.count(x.ptr) ? (Value *)vmap[x.ptr] : x.ptr;
			w.slow.push_back(y);
		}
		w.cdHead = cd;
		work.push_back(std::move(w));
	}
	if (stats)
		fprintf(stderr, "locprof-pass: %s: %llu instructions, %llu accesses, %llu of %zu blocks cloned\n",
			F.getName().str().c_str(), (unsigned long long)size, (unsigned long long)nacc,
			(unsigned long long)cloned, blocks.size());
	if (!any) {
		// Nothing to count here: the calls' callees keep their own.
		cdSlot->eraseFromParent();
		dirtySlot->eraseFromParent();
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
	// Cloning a block replaced the uses of its values after it with PHIs
	// (tail), and an access of a block collected earlier may be such a
	// use: a loop whose later block computes the pointer an earlier one
	// loads through (SQLite's regexp matcher). Take every access's pointer
	// again from its instruction, or the check would use the body's value,
	// which the clone's path does not define (tests/pass/stale-ptr.ll).
	for (Block &w : work)
		for (std::vector<Access> *v : { &w.fast, &w.slow })
			for (Access &x : *v) {
				Access now;
				if (accessOf(*x.inst, now))
					x.ptr = now.ptr;
			}
	for (Block &w : work) {
		if (!w.fast.empty())
			instrumentFast(w.fast, w.cdHead);
		instrumentSlow(w.slow);
	}
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
			// Every predecessor of a landing pad is an invoke, which
			// wrote the countdown back.
			if (pads.insert(pad).second) {
				IRBuilder<> LB(&*pad->getFirstInsertionPt());
				reload(LB);
			}
			continue;
		}
		Instruction *next = I->getNextNode();
		if (!cast<CallInst>(I)->isMustTailCall() && !isa<ReturnInst>(next) && !isa<UnreachableInst>(next)) {
			IRBuilder<> A(next);
			reload(A);
		}
	}
	IRBuilder<> IB(br);
	reload(IB);

	DominatorTree DT(F);
	PromoteMemToReg({ cdSlot, dirtySlot }, DT);
	return true;
}

// Every function may now write lp_rt_fast: an instrumented one directly,
// any other through its callees. Attributes inferred before the pass ran
// (readonly, argmemonly...) would let later passes, e.g. LTO's, forward
// the countdown stored before a call to the reload after it: measured, a
// recursive function lost all its callees' references that way.
static const Attribute::AttrKind memoryAttrs[] = { Attribute::ReadNone, Attribute::ReadOnly, Attribute::WriteOnly,
						   Attribute::ArgMemOnly, Attribute::InaccessibleMemOnly,
						   Attribute::InaccessibleMemOrArgMemOnly };

static void dropMemoryAttrs(Module &M)
{
	for (Function &F : M) {
		if (F.isIntrinsic())
			continue;
		for (Attribute::AttrKind k : memoryAttrs)
			F.removeFnAttr(k);
		for (BasicBlock &BB : F)
			for (Instruction &I : BB)
				if (isProgramCall(I))
					for (Attribute::AttrKind k : memoryAttrs)
						cast<CallBase>(I).removeFnAttr(k);
	}
}

struct LocprofPass : PassInfoMixin<LocprofPass> {
	PreservedAnalyses run(Module &M, ModuleAnalysisManager &)
	{
		Instrumenter ins(M);
		bool changed = false;
		std::vector<Function *> fns;
		dropMemoryAttrs(M);
		for (Function &F : M)
			fns.push_back(&F);
		for (Function *F : fns)
			changed |= ins.run(*F);
		return changed ? PreservedAnalyses::none() : PreservedAnalyses::all();
	}
	static bool isRequired() { return true; } // also at -O0
};

} // namespace

extern "C" LLVM_ATTRIBUTE_WEAK PassPluginLibraryInfo llvmGetPassPluginInfo()
{
	return { LLVM_PLUGIN_API_VERSION, "locprof", "1", [](PassBuilder &PB) {
			PB.registerOptimizerLastEPCallback(
				[](ModulePassManager &MPM, OptimizationLevel) { MPM.addPass(LocprofPass()); });
			// `opt -load-pass-plugin=locprof-pass.so -passes=locprof`: the
			// pass alone on hand-written IR (tests/pass/).
			PB.registerPipelineParsingCallback(
				[](StringRef name, ModulePassManager &MPM, ArrayRef<PassBuilder::PipelineElement>) {
					if (name != "locprof")
						return false;
					MPM.addPass(LocprofPass());
					return true;
				});
		} };
}
