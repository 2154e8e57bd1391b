// locprof's instrumentation pass: what its files share (the overview is
// at the top of locprof-pass.cpp). One job per file:
//   locprof-pass.cpp      the plugin: registration, the module pass
//   pass-instrument.cpp   per function: the countdown, block cloning, the snippet
//   pass-checks.cpp       check merging (planChecks)
//   pass-loop-plan.cpp    which loops are versioned (planLoops)
//   pass-loop-version.cpp how a planned loop is versioned (versionLoop)
#ifndef LOCPROF_PASS_H
#define LOCPROF_PASS_H

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

namespace locprof_pass {


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
inline uint64_t shadowQueryGranules(uint64_t bytes)
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
// An access of a versioned loop that may straddle: run `run`'s start +
// off at iteration 0, `size` bytes.
struct VStraddle {
	unsigned run;
	int64_t off;
	uint64_t size;
	Instruction *inst;
};
struct VLoop {
	BasicBlock *preheader, *header, *latch;
	std::vector<BasicBlock *> blocks;
	SmallVector<BasicBlock *, 4> exits;
	std::vector<VRef> refs;
	std::vector<VStraddle> straddlers;
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
	uint64_t align; // bytes the address is known to be a multiple of
};

// An access that may touch two lines of the smallest recorded size (of at
// least 8 bytes): one not known to be aligned to its size, or wider than
// 8 bytes. Its snippet sends a straddling reference to the slow path,
// which counts its extra line accesses; in a versioned loop's fast copy
// it counts its extra lines of the smallest line size inline, and a strip
// runs there when only that size is recorded or when every such access is
// aligned to its size over the strip (VStraddle), so that none straddles.
inline bool mayStraddle(const Access &a)
{
	return a.size > 1 && (a.align < a.size || a.size > 8);
}

// A block's accesses to instrument (Instrumenter::run): in the fast body
// (the countdown tested once at the block's head) and in the clone or in
// place (the whole snippet per access).
struct BlockWork {
	std::vector<Access> fast, slow;
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
	Constant *straddleMask; // lp_rt_straddle_mask (src/rt/rt.h)
	Constant *straddleSlow; // lp_rt_straddle_slow
	Constant *lineShift0;   // lp_rt_line_shift0
	Constant *extra0;       // the thread's lp_rt_extra0 (initial-exec TLS)
	FunctionCallee stripExtra; // lp_rt_strip_extra(a0, step, size, n)
	MDNode *cold;         // branch weights: the slow side is cold
	uint64_t cloneMax = kCloneMax;
	bool stats = false;   // LOCPROF_PASS_STATS: one line per function on stderr
	bool loopVersion = true; // LOCPROF_PASS_LOOP_VERSION=0 turns it off
	uint64_t strip = kLoopStrip; // LOCPROF_PASS_LOOP_STRIP: iterations per range query
	bool verify = false;  // LOCPROF_PASS_VERIFY: run the IR verifier after each function
	FunctionCallee rangeQuery; // lp_rt_range_watched(lo, hi)
	SmallPtrSet<BasicBlock *, 32> fastBlocks; // the uninstrumented loop copies and range queries
	AllocaInst *cdSlot = nullptr;
	// Extra lines counted by versioned loops' fast copies, added to
	// lp_rt_extra0 where they leave them (flushExtra): a register inside
	// the loop rather than a read-modify-write of TLS per access.
	AllocaInst *exSlot = nullptr;
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
	Value *straddles(IRBuilder<> &B, const Access &a, Value *cond);
	// An access's extra lines of the smallest line size added to
	// lp_rt_extra0; returns its last byte's address.
	Value *countExtra(IRBuilder<> &B, const Access &a, AllocaInst *into = nullptr);
	void flushExtra(IRBuilder<> &B);
	void instrumentFast(const std::vector<Access> &acc);
	void instrumentSlow(const std::vector<Access> &acc);
	std::vector<VLoop> planLoops(Function &F);
	bool loopAccesses(Loop *L, std::vector<Access> &acc, std::map<BasicBlock *, uint64_t> &count) const;
	bool planLoop(Loop *L, DominatorTree &DT, LoopInfo &LI, ScalarEvolution &SE, AssumptionCache &AC, VLoop &v);
	void versionLoop(Function &F, VLoop &v);

	// The steps of run().
	bool mayInstrument(Function &F) const;
	BranchInst *createEntry(Function &F);
	void versionLoops(Function &F, bool mayClone, uint64_t &versioned, uint64_t &versionedOne);
	void cloneBlock(Function &F, BasicBlock *BB, const std::vector<Access> &acc, BlockWork &w);
	void takePointersAgain(std::vector<BlockWork> &work) const;
	void mergeChecksOf(Function &F, std::vector<BlockWork> &work);
	void writeBackAroundCalls(const std::vector<Instruction *> &exits, const std::vector<Instruction *> &progCalls);
	void finish(Function &F, BranchInst *entryBr);
	void noVectorizeSlowLoops(Function &F, DominatorTree &DT);

	friend class LoopVersioner;
};

// The shadow test of the snippet: shadow[addr >> 6] != 0, the shadow at a
// fixed address that fits a 32-bit displacement (LP_RT_SHADOW and
// LP_RT_GRANULE_SHIFT of src/rt/rt.h), so no register holds its base.
static constexpr uint64_t kShadow = 0x7fff8000ull;
Value *watched(IRBuilder<> &B, Value *ptr, Type *i64, Type *i8);

// The window test of a checker (pass-checks.cpp).
Value *windowWatched(IRBuilder<> &B, const Check &k, Type *i64);

// A call that may run instrumented code (pass-checks.cpp).
bool isProgramCall(Instruction &I);

// min(a, b), unsigned.
Value *umin(IRBuilder<> &B, Value *a, Value *b);

} // namespace locprof_pass

#endif
