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
//  * Loop versioning: an innermost loop with no calls, affine accesses
//    (constant steps of at most 256 bytes; in a loop of one block, others
//    checked one by one) and a computable trip count
//    runs an uninstrumented copy, strip by strip of up to 256 iterations,
//    up to the first iteration that may reach a live watch in the strip's
//    address ranges (the watch shadow, read as one vector per range) or
//    make a due sample; otherwise the instrumented loop, until its next
//    slow path (planLoops, versionLoop; docs/runtime.md, "Loop
//    versioning"). LOCPROF_PASS_LOOP_VERSION=0 turns it off.
//  * Check merging: accesses near one pointer share one test of the
//    shadow, and those it still covers (no call, no slow path since) test
//    a flag only (planChecks; docs/runtime.md, "Check merging").
//    LOCPROF_PASS_CHECK_MERGE=0 turns it off.
// Semantics that differ: references made by a signal handler while an
// instrumented function holds the countdown in a register are lost from
// the thread's clock when that function writes it back (the inlined
// callbacks had the same window, smaller); another thread reading this
// thread's reference count at exit sees it as of this thread's last call.
#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/PostOrderIterator.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/Triple.h"
#include "llvm/Analysis/AssumptionCache.h"
#include "llvm/Analysis/LoopInfo.h"
#include "llvm/Analysis/ScalarEvolution.h"
#include "llvm/Analysis/ScalarEvolutionExpressions.h"
#include "llvm/Analysis/ValueTracking.h"
#include "llvm/Analysis/TargetLibraryInfo.h"
#include "llvm/IR/Verifier.h"
#include "llvm/IR/Dominators.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InlineAsm.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/MDBuilder.h"
#include "llvm/IR/Module.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Passes/PassPlugin.h"
#include "llvm/Transforms/Utils/BasicBlockUtils.h"
#include "llvm/Transforms/Utils/Cloning.h"
#include "llvm/Transforms/Utils/LoopSimplify.h"
#include "llvm/Transforms/Utils/LoopUtils.h"
#include "llvm/Transforms/Utils/ScalarEvolutionExpander.h"
#include "llvm/Transforms/Utils/PromoteMemToReg.h"
#include "llvm/Transforms/Utils/ValueMapper.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <tuple>

using namespace llvm;

namespace {

// LP_REF_READ / LP_REF_WRITE of include/locprof/common.h.
enum { kRead = 0, kWrite = 1 };

// Functions of more IR instructions than this (counted before
// instrumentation) are not cloned; chosen by measurement (docs/runtime.md,
// "Compile time").
enum : uint64_t { kCloneMax = 2000 };

// Loop versioning limits: accesses per loop body, address ranges (distinct
// runs of accesses) per loop, and the fewest iterations worth a range query.
// A strip's range grows with the step: ranges have constant steps of at
// most kLoopMaxStep bytes; in a loop of one block up to kLoopMaxChecked
// other accesses (a column walk, e.g. matmul naive's b[k][j]) are checked
// one by one in the fast copy.
enum : uint64_t { kLoopMaxAccesses = 64, kLoopMaxRanges = 8, kLoopMinTrips = 8, kLoopStrip = 256, kLoopMaxChecked = 8 };
enum : int64_t { kLoopMaxStep = 256 };
// The most shadow bytes a versioned loop's query reads at once for a range
// (one vector compare), and so the longest range it checks that way: two
// granules fewer, so that any alignment spans at most that many. Ranges
// that fit read half as many.
enum : uint64_t { kShadowQueryGranules = 32, kShadowQueryBytes = (kShadowQueryGranules - 2) * 64 };
static uint64_t shadowQueryGranules(uint64_t bytes)
{
	return bytes <= (kShadowQueryGranules / 2 - 2) * 64 ? kShadowQueryGranules / 2 : kShadowQueryGranules;
}
// Accesses of one step within this many bytes of each other form one run
// (one range per strip); farther ones only when the runs would be too many.
enum : uint64_t { kLoopJoinNear = 256 };

// An innermost loop planned for versioning (Instrumenter::planLoops): the
// accesses' start addresses and steps and the backedge-taken count are
// already expanded at the end of its preheader.
// A run of accesses at constant offsets from one address with one step
// (e.g. a[i], a[i+1], a[i+2] of an unrolled loop): one range per strip.
struct VRef {
	Value *start;   // i64 address of the run's first access at iteration 0
	int64_t step;   // bytes per iteration (0: loop-invariant)
	int64_t lo, hi; // the run's bytes at iteration 0: [start + lo, start + hi)
};
struct VLoop {
	BasicBlock *preheader, *header, *latch;
	std::vector<BasicBlock *> blocks;
	SmallVector<BasicBlock *, 4> exits;
	std::vector<VRef> refs;
	Value *btc;                             // i64
	std::map<BasicBlock *, uint64_t> count; // accesses per block
	uint64_t total;                         // accesses of all blocks
	PHINode *iv = nullptr;                  // a header PHI {start, +, ivStep} that never wraps, if any
	int64_t ivStep = 0;
	uint64_t maxTrips = 0;                  // a bound on the trip count known at compile time (0: none)
	// Accesses outside every range (a column walk's b[k*n+j], a[idx[i]]),
	// in a loop of one block: the fast copy tests each one's shadow byte
	// and hands the iteration to the instrumented copy on a yes; all the
	// block's instructions before one have no side effect, so the
	// iteration can start again there.
	std::vector<Instruction *> checked;
};

struct Access {
	Instruction *inst;
	Value *ptr;
	uint64_t size;
	unsigned kind;
};

// Check merging (Instrumenter::planChecks): what an access's watch check
// becomes. A cluster is a set of accesses at constant offsets from one
// base pointer whose start granules all lie in `width` consecutive
// granules from the granule of base + lo; its checker loads those shadow
// bytes at once, and an access of the cluster the checker's answer still
// covers (no call and no slow path since) is checked only if it said yes.
enum CheckRole { kPlain, kChecker, kCovered };
struct Check {
	CheckRole role = kPlain;
	Value *base = nullptr;
	Value *index = nullptr; // if set, the window starts at base + ext(index) * scale + lo
	unsigned ext = 0;       // index extension to i64: 0 none, 1 sign, 2 zero
	uint64_t scale = 0;
	int64_t lo = 0;     // the window's first byte: base + lo
	unsigned width = 1; // shadow bytes (granules) in the window: 1, 2, 4, 8
};

// An access's address as base + ext(index) * scale + off, with a constant
// off: constant offsets as LLVM strips them, and then one variable array
// index of a GEP taken apart as index + constant (a[i] and a[i + 1] of an
// unrolled loop, p[i].x and p[i].y). index is null when there is none.
struct AddrKey {
	Value *base, *index;
	unsigned ext;
	uint64_t scale;
	bool operator<(const AddrKey &o) const
	{
		return std::tie(base, index, ext, scale) < std::tie(o.base, o.index, o.ext, o.scale);
	}
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
	StructType *fastTy;   // the first two fields of struct lp_rt_fast
	Constant *fast;       // the thread's lp_rt_fast (initial-exec TLS)
	FunctionCallee slow;  // lp_rt_slow(addr, size, kind, pc)
	MDNode *cold;         // branch weights: the slow side is cold
	uint64_t cloneMax = kCloneMax;
	bool stats = false;   // LOCPROF_PASS_STATS: one line per function on stderr
	bool loopVersion = true; // LOCPROF_PASS_LOOP_VERSION=0 turns it off
	uint64_t strip = kLoopStrip; // LOCPROF_PASS_LOOP_STRIP: iterations per range query
	bool verify = false;  // LOCPROF_PASS_VERIFY: run the IR verifier after each function
	FunctionCallee rangeQuery; // lp_rt_range_watched(lo, hi)
	SmallPtrSet<BasicBlock *, 32> fastBlocks; // the uninstrumented loop copies and range queries
	AllocaInst *cdSlot = nullptr;
	AllocaInst *dirtySlot = nullptr; // a slow path or a positive window ran since the last reset
	// A slow path ran since the last range query (versioned loops only):
	// the instrumented copy then asks again at its next iteration.
	AllocaInst *slowSlot = nullptr;
	uint64_t rangesAll = 0, rangesShadow = 0; // versioned loops' ranges, those read from the shadow
	uint64_t checkedAll = 0; // versioned loops' accesses out of the ranges (VLoop::checked)
	bool mergeChecks = true; // LOCPROF_PASS_CHECK_MERGE=0 turns check merging off
	std::map<Instruction *, Check> checks; // per instrumented access (planChecks)

	bool accessOf(Instruction &I, Access &a) const;
	Value *field(IRBuilder<> &B, unsigned i) { return B.CreateStructGEP(fastTy, fast, i); }
	void reload(IRBuilder<> &B);
	void writeBack(IRBuilder<> &B, Value *cd);
	void resetDirty(IRBuilder<> &B) { B.CreateStore(ConstantInt::getFalse(C), dirtySlot); }
	void slowCall(Instruction *before, Value *cond, const Access &a, Value *tlsCd, uint64_t rest);
	void planChecks(Function &F, const std::vector<const Access *> &acc, std::vector<BasicBlock *> &resets);
	Value *precheck(IRBuilder<> &B, const Access &a, const Check &k);
	void instrumentFast(const std::vector<Access> &acc);
	void instrumentSlow(const std::vector<Access> &acc);
	std::vector<VLoop> planLoops(Function &F);
	void versionLoop(Function &F, VLoop &v);
};

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
	if (a.ptr == cdSlot || a.ptr == dirtySlot || (slowSlot && a.ptr == slowSlot))
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

static bool isProgramCall(Instruction &I);

// The window test of a checker: the shadow bytes of `width` granules from
// that of base + lo, in one load (x86 loads need no alignment; the window
// ends within 448 bytes of an address the access makes, and the kernel
// never maps the last page of the user address space, so the load stays
// inside the shadow).
static AddrKey addrKey(Value *ptr, int64_t &off, const DataLayout &DL)
{
	off = 0;
	Value *base = GetPointerBaseWithConstantOffset(ptr, off, DL);
	AddrKey key{ base, nullptr, 0, 0 };
	auto *gep = dyn_cast<GetElementPtrInst>(base);
	if (!gep || gep->getNumIndices() < 1 || isa<Constant>(gep->getOperand(1)))
		return key;
	// The first index variable, every other one constant.
	SmallVector<Value *, 4> rest;
	for (unsigned i = 2; i < gep->getNumOperands(); i++) {
		if (!isa<ConstantInt>(gep->getOperand(i)))
			return key;
		rest.push_back(gep->getOperand(i));
	}
	Type *elem = gep->getSourceElementType();
	if (!elem->isSized() || DL.getTypeAllocSize(elem).isScalable())
		return key;
	uint64_t scale = DL.getTypeAllocSize(elem).getFixedValue();
	int64_t restOff = 0;
	if (!rest.empty()) {
		SmallVector<Value *, 4> idx{ ConstantInt::get(Type::getInt64Ty(ptr->getContext()), 0) };
		idx.append(rest.begin(), rest.end());
		restOff = DL.getIndexedOffsetInType(elem, idx);
	}
	Value *x = gep->getOperand(1);
	unsigned ext = 0;
	if (auto *se = dyn_cast<SExtInst>(x)) {
		ext = 1;
		x = se->getOperand(0);
	} else if (auto *ze = dyn_cast<ZExtInst>(x)) {
		ext = 2;
		x = ze->getOperand(0);
	} else if (x->getType()->getIntegerBitWidth() < 64) {
		ext = 1; // a GEP sign-extends a narrower index
	}
	int64_t c = 0;
	if (auto *bo = dyn_cast<BinaryOperator>(x)) {
		auto *ci = dyn_cast<ConstantInt>(bo->getOperand(1));
		// x + c, and x | c where no bit is shared: an extension of it
		// is that of x plus c only if the addition cannot wrap.
		bool isAdd = bo->getOpcode() == Instruction::Add &&
			     (ext == 0 || (ext == 1 && bo->hasNoSignedWrap()) || (ext == 2 && bo->hasNoUnsignedWrap()));
		bool isOr = bo->getOpcode() == Instruction::Or && ci && haveNoCommonBitsSet(bo->getOperand(0), ci, DL) &&
			    (ext != 1 || ci->getValue().isNonNegative());
		if (ci && ci->getBitWidth() <= 64 && (isAdd || isOr) && std::abs(ci->getSExtValue()) < (1 << 20)) {
			c = ci->getSExtValue();
			x = bo->getOperand(0);
		}
	}
	if (!x->getType()->isIntegerTy() || x->getType()->getIntegerBitWidth() > 64)
		return key;
	off += c * (int64_t)scale + restOff;
	return AddrKey{ gep->getPointerOperand(), x, ext, scale };
}

static Value *windowWatched(IRBuilder<> &B, const Check &k, Type *i64)
{
	LLVMContext &C = B.getContext();
	Value *p = B.CreateConstGEP1_64(Type::getInt8Ty(C), B.CreatePointerCast(k.base, Type::getInt8PtrTy(C)), k.lo);
	if (k.index) {
		Value *x = k.ext == 1 ? B.CreateSExtOrTrunc(k.index, i64) : B.CreateZExtOrTrunc(k.index, i64);
		p = B.CreateGEP(Type::getInt8Ty(C), p, B.CreateMul(x, ConstantInt::get(i64, k.scale)));
	}
	Value *g = B.CreateLShr(B.CreatePtrToInt(p, i64), 6);
	Type *w = Type::getIntNTy(C, 8 * k.width);
	Value *at = B.CreateIntToPtr(B.CreateAdd(g, ConstantInt::get(i64, kShadow)), PointerType::getUnqual(w));
	LoadInst *l = B.CreateAlignedLoad(w, at, Align(1), "lp.ww");
	return B.CreateICmpNE(l, ConstantInt::get(w, 0));
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

// The block's countdown was tested and decremented by acc.size() at its
// head: each access only checks the shadow,
// merged as planChecks decided.
void Instrumenter::instrumentFast(const std::vector<Access> &acc)
{
	uint64_t n = acc.size();

	for (uint64_t i = 0; i < n; i++) {
		Instruction *at = acc[i].inst;
		IRBuilder<> B(at);
		Value *cond = precheck(B, acc[i], checks[at]);
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
		Value *cond = B.CreateOr(B.CreateICmpEQ(cd, ConstantInt::get(i64, 0)), precheck(B, a, checks[a.inst]));
		slowCall(a.inst, cond, a, dec, 0);
	}
}

// Check merging. The watch check of an access can be left to an earlier
// one when nothing can have started a watch of this thread in between:
// a watch starts only in a slow path (a sample), of this function or of a
// callee. So, per function:
//  * clusters: accesses at constant offsets from one base pointer
//    (GetPointerBaseWithConstantOffset) whose start addresses lie within
//    448 bytes of the lowest, base + lo. Their start granules then lie in
//    the `width` granules (2, 4 or 8; 1 when all offsets are equal) from
//    that of base + lo, whatever base's alignment: a window of shadow bytes
//    one load reads.
//  * available windows: a forward must-dataflow over the blocks in reverse
//    post-order: an access whose cluster's window is available is covered;
//    otherwise it is the checker and makes its window available. A program
//    call kills every window; a block reached by a back edge (its
//    predecessor not yet visited) starts with none.
//  * the dirty flag (one per function, in a register after mem2reg): set
//    by every slow path, which every checker whose window is not all zero
//    takes; reset at the entry, after every program call and at the blocks
//    that start with no window (resets, returned in `resets`). A covered
//    access goes to the slow path (the exact table) only when it is set.
// If the flag is clear at a covered access X, then since the last reset
// before X no slow path ran and every checker said no; every path from a
// reset to X passes a checker of X's cluster (the window is available at
// X and none is at a reset), and no call. So that checker's window held no
// watch, no watch started since, and X's own check would have said no
// (other threads' watches only make the shadow say yes where this
// thread's exact table says no). A yes the plain test would not have
// given costs a slow path that finds nothing in the exact table. The
// sampled references are the countdown's, which is untouched; the reuses
// found are the same.
void Instrumenter::planChecks(Function &F, const std::vector<const Access *> &acc, std::vector<BasicBlock *> &resets)
{
	const DataLayout &DL = M.getDataLayout();
	checks.clear();
	resets.clear();
	if (!mergeChecks)
		return;
	struct Ref {
		int64_t off;
		Instruction *inst;
	};
	std::map<AddrKey, std::vector<Ref>> byBase;
	for (const Access *a : acc) {
		int64_t off = 0;
		AddrKey key = addrKey(a->ptr, off, DL);
		byBase[key].push_back({ off, a->inst });
	}
	std::map<Instruction *, int> clusterOf;
	std::vector<Check> windows;
	for (auto &entry : byBase) {
		const AddrKey &key = entry.first;
		std::vector<Ref> &refs = entry.second;
		if (refs.size() < 2)
			continue;
		std::stable_sort(refs.begin(), refs.end(), [](const Ref &x, const Ref &y) { return x.off < y.off; });
		for (size_t i = 0; i < refs.size();) {
			size_t j = i;
			while (j < refs.size() && refs[j].off - refs[i].off <= 448)
				j++;
			if (j - i >= 2) {
				int64_t span = refs[j - 1].off - refs[i].off;
				Check w;
				w.role = kChecker;
				w.base = key.base;
				w.index = key.index;
				w.ext = key.ext;
				w.scale = key.scale;
				w.lo = refs[i].off;
				w.width = span == 0 ? 1 : span <= 64 ? 2 : span <= 192 ? 4 : 8;
				for (size_t m = i; m < j; m++)
					clusterOf[refs[m].inst] = windows.size();
				windows.push_back(w);
			}
			i = j;
		}
	}
	if (windows.empty())
		return;
	std::map<BasicBlock *, BitVector> out;
	ReversePostOrderTraversal<Function *> rpo(&F);
	for (BasicBlock *BB : rpo) {
		BitVector avail(windows.size());
		bool first = true, back = BB == &F.getEntryBlock();
		for (BasicBlock *P : predecessors(BB)) {
			auto it = out.find(P);
			if (it == out.end()) {
				back = true;
				break;
			}
			if (first)
				avail = it->second;
			else
				avail &= it->second;
			first = false;
		}
		if (back) {
			avail.reset();
			if (BB != &F.getEntryBlock())
				resets.push_back(BB);
		}
		for (Instruction &I : *BB) {
			if (isProgramCall(I)) {
				avail.reset();
				continue;
			}
			auto it = clusterOf.find(&I);
			if (it == clusterOf.end())
				continue;
			Check k = windows[it->second];
			if (avail.test(it->second))
				k.role = kCovered;
			avail.set(it->second);
			checks[&I] = k;
		}
		out[BB] = std::move(avail);
	}
}

static bool isProgramCall(Instruction &I)
{
	auto *CB = dyn_cast<CallBase>(&I);
	// Intrinsics (memcpy and friends included) and inline asm never run
	// instrumented code; every other call may, except our own range query.
	if (!CB || isa<IntrinsicInst>(CB) || CB->isInlineAsm())
		return false;
	Function *f = CB->getCalledFunction();
	return !(f && f->getName() == "lp_rt_range_watched");
}

// ---- loop versioning ---------------------------------------------------
//
// An innermost loop without program calls whose accesses are all affine in
// it (ScalarEvolution AddRecs of the loop, or loop-invariant) and whose
// backedge-taken count is computable before it gets an uninstrumented copy,
// entered by strips of `strip` iterations:
//
//   check:     if (trips < kLoopMinTrips) goto header (never back to query)
//   query(i):  n = min(strip, trips - i); the address range [lo, hi) of
//              each run of accesses over iterations [i, i + n);
//              watched = the page counts of lo and hi (inline) if the
//              ranges span at most two pages, else lp_rt_range_watched()
//              if (!watched) goto fast.head (to i + n) else goto header
//              (instrumented, to i + n)
//   fast.head: if (i == end of strip) goto query(i);
//              if (countdown < total) goto header (instrumented, same strip)
//              the loop's blocks, each only subtracting its accesses from
//              the countdown; the latch goes back to fast.head
//   header:    if (i == end of strip) goto query(i); the instrumented loop
//
// A loop of one block makes exactly `total` references per iteration: its
// strip ends after min(n, countdown / total) iterations instead (none:
// instrumented), with no countdown in the fast loop, and the countdown is
// written back on the ways out of the copy.
//
// No live watch of the thread lies in the strip's ranges, and the map only
// changes in a slow path, which the fast copy never takes, so every watch
// check the fast copy leaves out would have said no. The countdown test at
// each iteration boundary leaves the fast copy for the instrumented loop,
// with the same header values, before an iteration that could contain the
// sampled reference (total bounds one iteration's references: each block of
// an innermost loop runs at most once per iteration). So the same
// references are sampled and the same reuses seen.
std::vector<VLoop> Instrumenter::planLoops(Function &F)
{
	std::vector<VLoop> plan;
	DominatorTree DT(F);
	LoopInfo LI(DT);
	if (LI.empty())
		return plan;
	TargetLibraryInfoImpl TLII(Triple(M.getTargetTriple()));
	TargetLibraryInfo TLI(TLII);
	AssumptionCache AC(F);
	ScalarEvolution SE(F, TLI, AC, DT, LI);
	const DataLayout &DL = M.getDataLayout();

	std::vector<Loop *> loops;
	for (Loop *L : LI.getLoopsInPreorder())
		if (L->isInnermost())
			loops.push_back(L);
	for (Loop *L : loops) {
		std::vector<Access> acc;
		std::map<BasicBlock *, uint64_t> count;
		bool ok = true;
		for (BasicBlock *BB : L->blocks()) {
			Instruction *term = BB->getTerminator();
			if (!isa<BranchInst>(term) && !isa<SwitchInst>(term))
				ok = false;
			for (Instruction &I : *BB) {
				Access a;
				if (isProgramCall(I) || (isa<CallBase>(I) && cast<CallBase>(I).isInlineAsm()))
					ok = false;
				else if (accessOf(I, a)) {
					acc.push_back(a);
					count[BB]++;
				}
			}
		}
		if (!ok || acc.empty() || acc.size() > kLoopMaxAccesses)
			continue;
		if (!L->isLoopSimplifyForm())
			simplifyLoop(L, &DT, &LI, &SE, &AC, nullptr, false);
		if (!L->isLoopSimplifyForm() || !L->getLoopPreheader() || !L->getLoopLatch())
			continue;
		const SCEV *btc = SE.getBackedgeTakenCount(L);
		if (isa<SCEVCouldNotCompute>(btc) || !btc->getType()->isIntegerTy() ||
		    btc->getType()->getIntegerBitWidth() > 64)
			continue;
		const SCEV *n = SE.getZeroExtendExpr(btc, i64);
		// A short inner loop (a blocked loop nest's, at most 32 trips)
		// is one strip, whose ranges may fit a narrower shadow read; one
		// too short for a query is never worth a copy.
		uint64_t maxTrips = 0;
		if (auto *mc = dyn_cast<SCEVConstant>(SE.getConstantMaxBackedgeTakenCount(L)))
			if (mc->getAPInt().ult(1 << 20))
				maxTrips = mc->getAPInt().getZExtValue() + 1;
		if (maxTrips && maxTrips < kLoopMinTrips)
			continue;
		Instruction *at = L->getLoopPreheader()->getTerminator();
		struct Run {
			const SCEV *start;
			int64_t step, lo, hi;
		};
		// Runs join accesses within `join` bytes of the run's first: near
		// ones first (a[i], a[i+1]: each run's range stays short, so its
		// query can read the shadow, and precise), far ones (rows of a
		// stencil) only if there would be too many runs otherwise.
		std::vector<Run> runs;
		// In a loop of one block, an access may stay out of the ranges
		// (checked one by one in the fast copy) if nothing before it in
		// the block has a side effect: the iteration can then be handed
		// to the instrumented copy from its start.
		SmallPtrSet<Instruction *, 16> checkable;
		if (L->getNumBlocks() == 1)
			for (Instruction &I : *L->getHeader()) {
				Access a;
				if (accessOf(I, a))
					checkable.insert(&I);
				if (I.mayHaveSideEffects())
					break;
			}
		std::vector<Instruction *> checked;
		auto makeRuns = [&](uint64_t join) {
			runs.clear();
			checked.clear();
			for (const Access &a : acc) {
				const SCEV *p = SE.getSCEV(a.ptr);
				const SCEV *pi = SE.getPtrToIntExpr(p, i64), *start = nullptr;
				int64_t step = 0;
				if (isa<SCEVCouldNotCompute>(pi) || pi->getType() != i64) {
				} else if (SE.isLoopInvariant(pi, L)) {
					start = pi;
				} else if (auto *ar = dyn_cast<SCEVAddRecExpr>(pi)) {
					auto *c = dyn_cast<SCEVConstant>(ar->getStepRecurrence(SE));
					if (ar->getLoop() == L && ar->isAffine() && SE.isLoopInvariant(ar->getStart(), L) && c &&
					    c->getAPInt().abs().ule(kLoopMaxStep)) {
						start = ar->getStart();
						step = c->getAPInt().getSExtValue();
					}
				}
				if (start && (!isSafeToExpandAt(start, at, SE) || a.size > (1u << 20)))
					start = nullptr;
				if (!start) {
					if (!checkable.count(a.inst) || checked.size() == kLoopMaxChecked) {
						ok = false;
						break;
					}
					checked.push_back(a.inst);
					continue;
				}
				bool joined = false;
				for (Run &r : runs) {
					if (r.step != step)
						continue;
					auto *d = dyn_cast<SCEVConstant>(SE.getMinusSCEV(start, r.start));
					if (!d || d->getAPInt().abs().ugt(join))
						continue;
					int64_t off = d->getAPInt().getSExtValue();
					r.lo = std::min(r.lo, off);
					r.hi = std::max(r.hi, off + (int64_t)a.size);
					joined = true;
					break;
				}
				if (!joined)
					runs.push_back({ start, step, 0, (int64_t)a.size });
			}
		};
		makeRuns(kLoopJoinNear);
		if (ok && runs.size() > kLoopMaxRanges)
			makeRuns(1 << 20);
		if (!ok || runs.empty() || runs.size() > kLoopMaxRanges || !isSafeToExpandAt(n, at, SE))
			continue;
		formLCSSA(*L, DT, &LI, &SE);
		VLoop v;
		SCEVExpander ex(SE, DL, "lp.range");
		v.btc = ex.expandCodeFor(n, i64, at);
		for (Run &r : runs)
			v.refs.push_back({ ex.expandCodeFor(r.start, i64, at), r.step, r.lo, r.hi });
		v.preheader = L->getLoopPreheader();
		v.header = L->getHeader();
		v.latch = L->getLoopLatch();
		v.blocks.assign(L->block_begin(), L->block_end());
		L->getUniqueExitBlocks(v.exits);
		v.count = count;
		v.total = acc.size();
		v.maxTrips = maxTrips;
		v.checked = checked;
		// An induction variable the fast copy can test the strip's end
		// on, instead of a counter of its own: 64-bit, constant step,
		// and no wrap, so it reaches its value at the strip's end first
		// there.
		for (PHINode &phi : v.header->phis()) {
			auto *ar = dyn_cast<SCEVAddRecExpr>(SE.getSCEV(&phi));
			if (!ar || ar->getLoop() != L || !ar->isAffine() || !phi.getType()->isIntegerTy(64) ||
			    !ar->getNoWrapFlags(SCEV::FlagNW))
				continue;
			auto *c = dyn_cast<SCEVConstant>(ar->getStepRecurrence(SE));
			if (!c || c->getAPInt().isZero() || c->getAPInt().abs().ugt(1 << 20))
				continue;
			v.iv = &phi;
			v.ivStep = c->getAPInt().getSExtValue();
			break;
		}
		plan.push_back(std::move(v));
	}
	return plan;
}

static Value *umin(IRBuilder<> &B, Value *a, Value *b)
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

void Instrumenter::versionLoop(Function &F, VLoop &v)
{
	BasicBlock *H = v.header;
	BasicBlock *check = v.preheader->splitBasicBlock(v.preheader->getTerminator(), "lp.lv.check");
	SmallPtrSet<BasicBlock *, 16> inLoop(v.blocks.begin(), v.blocks.end());

	// An unrolled loop indexes with `or i, 1` where i is known even
	// ({0, +, 2}); in the copies i starts at the query's value, whose
	// low bit nothing proves, so ScalarEvolution no longer sees i + 1
	// and loop strength reduction multiplies again at every iteration.
	// Disjoint ors become the adds they are, while that is still known.
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

	// The fast copy, then both headers split after their PHIs: the
	// header blocks only test, their bodies hold the original code.
	ValueToValueMapTy vm;
	std::vector<BasicBlock *> copies;
	for (BasicBlock *B : v.blocks) {
		BasicBlock *nb = CloneBasicBlock(B, vm, ".lpf", &F);
		vm[B] = nb;
		copies.push_back(nb);
	}
	for (BasicBlock *nb : copies)
		for (Instruction &I : *nb)
			RemapInstruction(&I, vm, RF_IgnoreMissingLocals | RF_NoModuleLevelChanges);
	BasicBlock *fh = cast<BasicBlock>(vm[H]);
	BasicBlock *fhBody = fh->splitBasicBlock(fh->getFirstNonPHI(), H->getName() + ".lpf.body");
	BasicBlock *hBody = H->splitBasicBlock(H->getFirstNonPHI(), H->getName() + ".lp.body");
	inLoop.insert(hBody);
	auto fastOf = [&](BasicBlock *B) { return B == hBody ? fhBody : cast<BasicBlock>(vm[B]); };
	BasicBlock *latch = v.latch == H ? hBody : v.latch, *fLatch = fastOf(latch);
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

	BasicBlock *query = BasicBlock::Create(C, "lp.lv.query", &F, H);
	BasicBlock *fh2 = BasicBlock::Create(C, "lp.lv.fast.cd", &F, fhBody);
	fastBlocks.insert(fh2);
	Value *trips = nullptr;
	{
		IRBuilder<> CB(check->getTerminator());
		trips = CB.CreateAdd(v.btc, ConstantInt::get(i64, 1), "lp.trips");
	}
	check->getTerminator()->eraseFromParent();
	IRBuilder<> CB(check);
	CB.CreateCondBr(CB.CreateICmpUGE(trips, ConstantInt::get(i64, kLoopMinTrips)), query, H);

	// The iteration number and the end of the strip, in both copies.
	IRBuilder<> QB(query), HB(H, H->getFirstInsertionPt()), FB(fh, fh->getFirstInsertionPt());
	PHINode *qi = QB.CreatePHI(i64, 3, "lp.i");
	PHINode *iv = HB.CreatePHI(i64, 5, "lp.i"), *next = HB.CreatePHI(i64, 5, "lp.end");
	PHINode *fiv = FB.CreatePHI(i64, 2, "lp.i"), *fend = FB.CreatePHI(i64, 2, "lp.end");
	Value *ivn = IRBuilder<>(&*hBody->getFirstInsertionPt()).CreateAdd(iv, ConstantInt::get(i64, 1));
	Value *fivn = IRBuilder<>(&*fhBody->getFirstInsertionPt()).CreateAdd(fiv, ConstantInt::get(i64, 1));

	// The strip: `strip` iterations (at most the loop's trip bound), fewer
	// where a run's range would not fit the shadow window the query reads
	// (below) while that leaves at least kLoopMinTrips iterations per query.
	uint64_t stripLen = v.maxTrips ? std::min(strip, v.maxTrips) : strip;
	for (const VRef &r : v.refs) {
		uint64_t step = (uint64_t)std::abs(r.step), width = (uint64_t)(r.hi - r.lo);
		if (step && width <= kShadowQueryBytes) {
			uint64_t fit = (kShadowQueryBytes - width) / step + 1;
			if (fit >= kLoopMinTrips)
				stripLen = std::min(stripLen, fit);
		}
	}
	// query: the ranges of the strip [i, i + n).
	Value *n = umin(QB, ConstantInt::get(i64, stripLen), QB.CreateSub(trips, qi));
	Value *end = QB.CreateAdd(qi, n, "lp.end");
	Value *last = QB.CreateSub(n, ConstantInt::get(i64, 1));
	std::vector<Value *> lo, hi;
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
	Value *pages = QB.CreateLoad(PointerType::getUnqual(i32), field(QB, 1), "lp.pages");
	Value *pmask = ConstantInt::get(i64, 0xffff); // LP_RT_PAGE_ENTRIES - 1
	Value *small = nullptr, *inl = nullptr;
	std::vector<ShadowRange> sr(v.refs.size(), ShadowRange{ nullptr, nullptr });
	bool allShadow = true;
	for (unsigned k = 0; k < v.refs.size(); k++) {
		const VRef &r = v.refs[k];
		uint64_t most = (stripLen - 1) * (uint64_t)std::abs(r.step) + (uint64_t)(r.hi - r.lo);
		rangesAll++;
		if (most <= kShadowQueryBytes) {
			rangesShadow++;
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
	BasicBlock *wdone = BasicBlock::Create(C, "lp.lv.watched", &F, H);
	BasicBlock *done = BasicBlock::Create(C, "lp.lv.done", &F, H);
	if (!small)
		small = ConstantInt::getTrue(C);
	QB.CreateCondBr(small, wdone, call, MDBuilder(C).createBranchWeights(1 << 10, 1));
	IRBuilder<> KB(call);
	Value *any = nullptr;
	for (unsigned k = 0; k < v.refs.size(); k++) {
		Value *w = KB.CreateCall(rangeQuery, { lo[k], hi[k] });
		any = any ? KB.CreateOr(any, w) : w;
	}
	any = KB.CreateZExt(any, i64);
	KB.CreateBr(wdone);
	// The runtime's state read here is not the program's: not instrumented.
	fastBlocks.insert(query);
	fastBlocks.insert(call);
	fastBlocks.insert(wdone);
	fastBlocks.insert(done);
	IRBuilder<> WB(wdone);
	PHINode *watch = WB.CreatePHI(i64, 2, "lp.watched");
	watch->addIncoming(inl, query);
	watch->addIncoming(any, call);
	// A loop of one block (most vectorised loops) makes exactly `total`
	// references per iteration: the fast copy runs as many iterations as
	// the countdown allows (at most the strip) with no countdown in the
	// loop, and the countdown is written back where it leaves the copy.
	// Other loops test the countdown at each fast iteration and subtract
	// each block's references.
	bool single = v.blocks.size() == 1;
	Value *cdq = nullptr, *lim0 = n;
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
	Value *limW = WB.CreateSelect(clear, lim0, ConstantInt::get(i64, 0));
	IRBuilder<> DB(done);
	Value *lim = limW;
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
		FB1.CreateBr(done);
		PHINode *lp = DB.CreatePHI(i64, 2, "lp.lim");
		lp->addIncoming(limW, wdone);
		lp->addIncoming(first, firstB);
		lim = lp;
	} else
		WB.CreateBr(done);
	Value *fend0 = DB.CreateAdd(qi, lim, "lp.fend"), *cdEnd = nullptr, *cdExit = nullptr, *room = nullptr;
	BasicBlock *fexit = nullptr, *fromFast = fh2; // where the fast copy enters H
	BasicBlock *stripLatch = nullptr; // the fast latch's strip-end block, if it tests the strip
	Value *go = DB.CreateICmpNE(lim, ConstantInt::get(i64, 0));
	DB.CreateCondBr(go, fh, H, MDBuilder(C).createBranchWeights(1 << 10, 1));
	DB.SetInsertPoint(done->getTerminator());
	if (single) {
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
	BasicBlock *toQuery = single ? fexit : fh; // the fast copy's way to query

	// The header values: query merges them from check and both headers.
	std::vector<std::pair<PHINode *, PHINode *>> phis; // original, its query copy
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

	// The instrumented header: at the end of a strip ask again, and as
	// soon as a slow path has run (a sample or a watch hit: what made the
	// strip instrumented is usually over, and the rest of it may be fast).
	H->getTerminator()->eraseFromParent();
	IRBuilder<> HT(H);
	Value *ran = HT.CreateLoad(Type::getInt1Ty(C), slowSlot, "lp.slow");
	HT.CreateCondBr(HT.CreateOr(HT.CreateICmpEQ(iv, next), ran), query, hBody,
			MDBuilder(C).createBranchWeights(1, 64));
	// The fast header: at the end of the strip ask again; leave for the
	// instrumented loop when a sample may fall in the next iteration.
	fh->getTerminator()->eraseFromParent();
	IRBuilder<> FT(fh);
	if (single) {
		PHINode *ivAtQuery = nullptr; // v.iv's value at the strip's start
		for (auto &pp : phis)
			if (pp.first == v.iv)
				ivAtQuery = pp.second;
		if (stripLatch) { // the query gives at least one iteration; the latch tests the strip
			FT.CreateBr(fhBody);
			if (v.iv) {
				// The strip ends where the loop's own induction
				// variable reaches start + step * room: the counter
				// goes, and LSR keeps one variable, as natively.
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
		} else
			FT.CreateCondBr(FT.CreateICmpEQ(fiv, fend), fexit, fhBody,
					MDBuilder(C).createBranchWeights(1, 64));
		// The accesses outside the ranges: each tests its shadow byte
		// where it stands in the fast copy, and on a yes the iteration
		// starts again in the instrumented copy (nothing before it in
		// the block had a side effect), with the countdown of the
		// iterations the fast copy completed; that copy runs to its next
		// slow path (the access finds its watch) and asks again.
		for (Instruction *X : v.checked) {
			checkedAll++;
			auto *xf = cast<Instruction>(vm[X]);
			Access a;
			accessOf(*xf, a);
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
		return;
	}
	FT.CreateCondBr(FT.CreateICmpEQ(fiv, fend), query, fh2, MDBuilder(C).createBranchWeights(1, 64));
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
	};
	uint64_t size = 0, nacc = 0, cloned = 0;
	for (BasicBlock &BB : F)
		size += BB.size();
	bool mayClone = size <= cloneMax;

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

	// Loop versioning first, on the uninstrumented code; the instrumented
	// copies are then instrumented as any block, the fast copies not.
	// Only where blocks are cloned: it doubles the loops' code too.
	fastBlocks.clear();
	uint64_t versioned = 0, versionedOne = 0;
	rangesAll = rangesShadow = checkedAll = 0;
	if (loopVersion && mayClone) {
		std::vector<VLoop> plan = planLoops(F);
		if (!plan.empty())
			slowSlot = new AllocaInst(Type::getInt1Ty(C), 0, "lp.slow.slot", dirtySlot->getNextNode());
		for (VLoop &v : plan)
			versionLoop(F, v);
		versioned = plan.size();
		for (VLoop &v : plan)
			versionedOne += v.blocks.size() == 1;
	}
	std::vector<BasicBlock *> blocks;
	for (BasicBlock &BB : F)
		if (&BB != entry && !fastBlocks.count(&BB))
			blocks.push_back(&BB);

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
	std::vector<const Access *> all;
	for (Block &w : work)
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
	for (Block &w : work) {
		if (!w.fast.empty())
			instrumentFast(w.fast);
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
	IRBuilder<> IB(br);
	reload(IB);
	resetDirty(IB);
	std::vector<AllocaInst *> slots = { cdSlot, dirtySlot };
	if (slowSlot) {
		IB.CreateStore(ConstantInt::getFalse(C), slowSlot);
		slots.push_back(slowSlot);
	}
	slowSlot = nullptr;

	DominatorTree DT(F);
	PromoteMemToReg(slots, DT);
	if (verify && verifyFunction(F, &errs()))
		report_fatal_error("locprof-pass: broken function " + F.getName(), false);
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
