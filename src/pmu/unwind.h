/* The call stack of a stopped thread of the target, unwound from the
 * supervisor (unwind.c): libdwfl reads each module's call frame
 * information (.eh_frame) from its file, and the thread's stack is read
 * from outside, through /proc/PID/mem. One unwinder per address space. */
#ifndef LP_PMU_UNWIND_H
#define LP_PMU_UNWIND_H

#include <stdint.h>
#include <sys/user.h>

struct lp_pmu_proc;
struct lp_pmu_unwinder;

/* An unwinder for address space p (NULL when out of memory or p's
 * modules cannot be read). */
struct lp_pmu_unwinder *lp_pmu_unwinder_new(struct lp_pmu_proc *p);
void lp_pmu_unwinder_free(struct lp_pmu_unwinder *u);

/* The pcs of thread tid's frames, innermost first, from its registers r
 * (frames[0] = r->rip, then return addresses): at most max, how many
 * were found. Modules mapped since the last call are found when a pc
 * falls outside the known ones. */
unsigned lp_pmu_unwind(struct lp_pmu_unwinder *u, int tid, const struct user_regs_struct *r, uint64_t *frames,
		       unsigned max);

#endif
