/* OpenMP under valgrind. Valgrind runs the program's threads one at a
 * time, so a thread that spins at an OpenMP barrier or in an idle worker
 * loop (libgomp's and libomp's default, OMP_WAIT_POLICY unset or active)
 * spins for a whole time slice while the thread it waits for cannot run:
 * the spinning loads are references of the run, counted and sampled, and
 * they can outnumber the program's own (bench/openmp-overhead.sh).
 * Passive waiting blocks in the kernel instead.
 * The first code seen from libgomp or libomp (libiomp5) makes the tool say
 * so once, with the remedy, unless OMP_WAIT_POLICY is passive. */
#include "vg-tool.h"

#include "pub_tool_debuginfo.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_libcproc.h"

static Bool omp_seen;

static Bool is_openmp_runtime(const HChar *path)
{
	const HChar *base = VG_(strrchr)(path, '/');

	base = base ? base + 1 : path;
	return !VG_(strncmp)(base, "libgomp.so", 10) || !VG_(strncmp)(base, "libomp.so", 9) ||
	       !VG_(strncmp)(base, "libiomp5.so", 11);
}

void lpvg_omp_check(Addr a)
{
	DebugInfo *di;
	const HChar *path, *policy;

	if (omp_seen)
		return;
	di = VG_(find_DebugInfo)(VG_(current_DiEpoch)(), a);
	if (!di || !(path = VG_(DebugInfo_get_filename)(di)) || !is_openmp_runtime(path))
		return;
	omp_seen = True;
	policy = VG_(getenv)("OMP_WAIT_POLICY");
	if (policy && !VG_(strcasecmp)(policy, "passive"))
		return;
	VG_(umsg)("locprof: warning: the program runs OpenMP (%s) with OMP_WAIT_POLICY %s%s%s: under valgrind "
		  "its threads take turns, so threads spinning while they wait add references that a native run "
		  "hardly makes; run it with OMP_WAIT_POLICY=passive\n",
		  path, policy ? "'" : "", policy ? policy : "unset", policy ? "'" : "");
}
