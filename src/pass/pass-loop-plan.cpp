// Loop versioning, the plan: which innermost loops get an uninstrumented
// copy, and the address ranges each one's strips query.
#include "locprof-pass.h"

namespace locprof_pass {

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
// The accesses of loop L, counted per block; false if L has a program
// call, inline asm or a terminator other than a branch or switch.
bool Instrumenter::loopAccesses(Loop *L, std::vector<Access> &acc, std::map<BasicBlock *, uint64_t> &count) const
{
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
	return ok;
}

// A run of accesses with one step, as SCEVs: becomes a VRef.
struct AccessRun {
	const SCEV *start;
	int64_t step, lo, hi;
};

// The runs of the loop's accesses: accesses within `join` bytes of a run's
// first join it. An access that is not affine in L goes to `checked` if it
// is `checkable` (at most kLoopMaxChecked of them); false if one is neither.
static bool makeRuns(ScalarEvolution &SE, Loop *L, Instruction *at, const std::vector<Access> &acc,
		     const SmallPtrSet<Instruction *, 16> &checkable, uint64_t join, std::vector<AccessRun> &runs,
		     std::vector<Instruction *> &checked, std::vector<VStraddle> &straddlers)
{
	Type *i64 = Type::getInt64Ty(at->getContext());
	runs.clear();
	checked.clear();
	straddlers.clear();
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
			// a checked access is tested for watches only: one that
			// may straddle would not have its extra lines counted
			if (!checkable.count(a.inst) || checked.size() == kLoopMaxChecked || mayStraddle(a))
				return false;
			checked.push_back(a.inst);
			continue;
		}
		bool joined = false;
		for (AccessRun &r : runs) {
			if (r.step != step)
				continue;
			auto *d = dyn_cast<SCEVConstant>(SE.getMinusSCEV(start, r.start));
			if (!d || d->getAPInt().abs().ugt(join))
				continue;
			int64_t off = d->getAPInt().getSExtValue();
			r.lo = std::min(r.lo, off);
			r.hi = std::max(r.hi, off + (int64_t)a.size);
			if (mayStraddle(a))
				straddlers.push_back({ (unsigned)(&r - &runs[0]), off, a.size, a.inst });
			joined = true;
			break;
		}
		if (!joined) {
			if (mayStraddle(a))
				straddlers.push_back({ (unsigned)runs.size(), 0, a.size, a.inst });
			runs.push_back({ start, step, 0, (int64_t)a.size });
		}
	}
	return true;
}

// An induction variable the fast copy can test the strip's end on, instead
// of a counter of its own: 64-bit, constant step, and no wrap, so it
// reaches its value at the strip's end first there.
static void findStripInductionVariable(ScalarEvolution &SE, Loop *L, VLoop &v)
{
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
}

// Plans the innermost loop L into v (expanding its ranges' starts and trip
// count in the preheader); false if it is not versioned.
bool Instrumenter::planLoop(Loop *L, DominatorTree &DT, LoopInfo &LI, ScalarEvolution &SE, AssumptionCache &AC, VLoop &v)
{
	std::vector<Access> acc;
	std::map<BasicBlock *, uint64_t> count;
	bool ok = loopAccesses(L, acc, count);
	if (!ok || acc.empty() || acc.size() > kLoopMaxAccesses)
		return false;
	if (!L->isLoopSimplifyForm())
		simplifyLoop(L, &DT, &LI, &SE, &AC, nullptr, false);
	if (!L->isLoopSimplifyForm() || !L->getLoopPreheader() || !L->getLoopLatch())
		return false;
	const SCEV *btc = SE.getBackedgeTakenCount(L);
	if (isa<SCEVCouldNotCompute>(btc) || !btc->getType()->isIntegerTy() ||
	    btc->getType()->getIntegerBitWidth() > 64)
		return false;
	const SCEV *n = SE.getZeroExtendExpr(btc, i64);
	// A short inner loop (a blocked loop nest's, at most 32 trips)
	// is one strip, whose ranges may fit a narrower shadow read; one
	// too short for a query is never worth a copy.
	uint64_t maxTrips = 0;
	if (auto *mc = dyn_cast<SCEVConstant>(SE.getConstantMaxBackedgeTakenCount(L)))
		if (mc->getAPInt().ult(1 << 20))
			maxTrips = mc->getAPInt().getZExtValue() + 1;
	if (maxTrips && maxTrips < kLoopMinTrips)
		return false;
	Instruction *at = L->getLoopPreheader()->getTerminator();
	// Runs join accesses within `join` bytes of the run's first: near
	// ones first (a[i], a[i+1]: each run's range stays short, so its
	// query can read the shadow, and precise), far ones (rows of a
	// stencil) only if there would be too many runs otherwise.
	std::vector<AccessRun> runs;
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
	ok = makeRuns(SE, L, at, acc, checkable, kLoopJoinNear, runs, checked, v.straddlers);
	if (ok && runs.size() > kLoopMaxRanges)
		ok = makeRuns(SE, L, at, acc, checkable, 1 << 20, runs, checked, v.straddlers);
	if (!ok || runs.empty() || runs.size() > kLoopMaxRanges || !isSafeToExpandAt(n, at, SE))
		return false;
	formLCSSA(*L, DT, &LI, &SE);
	SCEVExpander ex(SE, M.getDataLayout(), "lp.range");
	v.btc = ex.expandCodeFor(n, i64, at);
	for (AccessRun &r : runs)
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
	findStripInductionVariable(SE, L, v);
	return true;
}

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

	std::vector<Loop *> loops;
	for (Loop *L : LI.getLoopsInPreorder())
		if (L->isInnermost())
			loops.push_back(L);
	for (Loop *L : loops) {
		VLoop v;
		if (planLoop(L, DT, LI, SE, AC, v))
			plan.push_back(std::move(v));
	}
	return plan;
}

} // namespace locprof_pass
