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
//
// The files: locprof-pass.h says which does what.
#include "locprof-pass.h"

namespace locprof_pass {

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

} // namespace locprof_pass

extern "C" LLVM_ATTRIBUTE_WEAK PassPluginLibraryInfo llvmGetPassPluginInfo()
{
	return { LLVM_PLUGIN_API_VERSION, "locprof", "1", [](PassBuilder &PB) {
			PB.registerOptimizerLastEPCallback(
				[](ModulePassManager &MPM, OptimizationLevel) { MPM.addPass(locprof_pass::LocprofPass()); });
			// `opt -load-pass-plugin=locprof-pass.so -passes=locprof`: the
			// pass alone on hand-written IR (tests/pass/).
			PB.registerPipelineParsingCallback(
				[](StringRef name, ModulePassManager &MPM, ArrayRef<PassBuilder::PipelineElement>) {
					if (name != "locprof")
						return false;
					MPM.addPass(locprof_pass::LocprofPass());
					return true;
				});
		} };
}
