/* locprof/roi.h - regions of interest: profile only part of a run.
 *
 *     #include <locprof/roi.h>
 *     set_up();            // not profiled
 *     locprof_start();
 *     solve();             // profiled
 *     locprof_stop();
 *     write_results();     // not profiled
 *
 * A program that calls locprof_start() anywhere is recorded only between
 * locprof_start() and locprof_stop() (a start with no stop runs to the
 * end; several start/stop pairs make one region, their references
 * concatenated); a program that does not is recorded whole. Outside the
 * region references are neither sampled nor counted, and the reference
 * clock stops, so the region's profile is that of a program running the
 * region alone (docs/commands/record.md, "Regions of interest").
 *
 * Design: no library to link and no flag to give. Both functions are
 * static inline and cost a few instructions when nothing records:
 *  - `locprof_start()` leaves an ELF note (.note.locprof.roi) in the
 *    binary, from which `locprof record` learns before the run that the
 *    region is marked, so the recording begins outside it;
 *  - each marker is a valgrind client request (valgrind's "special
 *    instruction" preamble, which changes no register on a real CPU), seen
 *    by locprof's valgrind tool under `record --backend valgrind`;
 *  - each marker calls the runtime that `locprof cc` links in,
 *    lp_rt_roi_mark(), through a weak reference: a program built by a plain
 *    compiler has no runtime, the address is null, and nothing is called.
 * The pmu backend does not see the markers: it records the whole run.
 * x86-64 only, like locprof; on other targets the markers are empty.
 */
#ifndef LOCPROF_ROI_H
#define LOCPROF_ROI_H

#ifdef __cplusplus
extern "C" {
#endif

/* The runtime's entry (src/rt/rt-roi.c): what = 1 start, 0 stop. */
void lp_rt_roi_mark(int what) __attribute__((weak));

/* VG_USERREQ_TOOL_BASE('L','P') + 1: arg1 = 1 start, 0 stop. */
#define LOCPROF_ROI_REQUEST ((((unsigned long)'L' & 0xff) << 24 | ((unsigned long)'P' & 0xff) << 16) + 1)

static inline __attribute__((always_inline)) void locprof_roi_mark_(int what)
{
#if defined(__x86_64__)
	/* valgrind.h's VALGRIND_DO_CLIENT_REQUEST_EXPR for amd64 */
	volatile unsigned long args[6] = { LOCPROF_ROI_REQUEST, (unsigned long)what, 0, 0, 0, 0 };
	unsigned long result = 0;

	__asm__ volatile("rolq $3,  %%rdi ; rolq $13, %%rdi\n\t"
			 "rolq $61, %%rdi ; rolq $51, %%rdi\n\t"
			 "xchgq %%rbx,%%rbx"
			 : "=d"(result)
			 : "a"(&args[0]), "0"(result)
			 : "cc", "memory");
	(void)result;
	if (lp_rt_roi_mark)
		lp_rt_roi_mark(what);
#else
	(void)what;
#endif
}

/* Enter the region of interest: from here on references are recorded. */
static inline __attribute__((always_inline)) void locprof_start(void)
{
#if defined(__x86_64__)
	/* The note that tells `locprof record` the program marks its region. */
	__asm__ volatile(".pushsection .note.locprof.roi,\"a\",@note\n\t"
			 ".balign 4\n\t"
			 ".long 8, 0, 1\n\t" /* namesz, descsz, type */
			 ".asciz \"locprof\"\n\t"
			 ".balign 4\n\t"
			 ".popsection");
#endif
	locprof_roi_mark_(1);
}

/* Leave the region of interest: references are no longer recorded. */
static inline __attribute__((always_inline)) void locprof_stop(void)
{
	locprof_roi_mark_(0);
}

#ifdef __cplusplus
}
#endif
#endif
