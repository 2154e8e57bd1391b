/* Allocation events of the pmu backend (docs/pmu.md, "Allocations"):
 * the interposer preloaded into the program (pmu-alloc-preload.c) makes
 * a system call of number LP_PMU_ALLOC_SYSCALL after each allocation and
 * before each free, with the event in its registers (pmu-alloc-abi.h).
 * Its entry stop brings the thread here, in both counters' loops, at the
 * point of the thread's references where the event happened: the call
 * stack is unwound from outside (unwind.c) and the event, with the
 * frames above its call site, goes to the on_alloc hook. */
#include "engine.h"
#include "pmu-alloc-abi.h"
#include "unwind.h"

#include <locprof/profile.h>

/* Frames of the interposer (and of its caller when that is operator new
 * calling malloc) before the call site: the call site is looked for among
 * these. */
#define OWN_FRAMES 4
/* Callers kept above the call site, as the inst runtime keeps
 * (LP_RT_STACK_UP): enough to get out of operator new, std::allocator
 * and a container's members into the program's own function. */
#define FRAMES_UP 12

int lp_pmu_alloc_event(struct pmu_engine *e, struct lp_pmu_thread *t, const struct user_regs_struct *r)
{
	struct pmu_aspace *as = lp_pmu_aspace_get(t->proc);
	struct pmu_thread_state *x = lp_pmu_thread_state(t);
	uint64_t kind = r->rdi, site = r->r10, frames[OWN_FRAMES + 1 + FRAMES_UP];
	struct lp_ref ev[1 + FRAMES_UP];
	unsigned n = 1, nf, i;

	if (!as || !x)
		return LP_ENOMEM;
	if (!e->h->on_alloc || (kind != LP_PMU_ALLOC_EV_ALLOC && kind != LP_PMU_ALLOC_EV_FREE))
		return 0;
	e->st->allocs++;
	ev[0] = (struct lp_ref){ .addr = r->rsi, .pc = site, .size = kind == LP_PMU_ALLOC_EV_FREE ? 0 : r->rdx,
				 .tid = x->itid, .kind = (uint8_t)kind };
	if (kind == LP_PMU_ALLOC_EV_ALLOC && !as->unw && !as->unw_failed)
		as->unw_failed = !(as->unw = lp_pmu_unwinder_new(t->proc));
	if (kind == LP_PMU_ALLOC_EV_ALLOC && as->unw) {
		nf = lp_pmu_unwind(as->unw, t->tid, r, frames, OWN_FRAMES + 1 + FRAMES_UP);
		for (i = 0; i < nf && i < OWN_FRAMES && frames[i] != site; i++)
			;
		/* the call site not among the first frames: no stack, the
		 * event is named by its call site alone */
		if (i < nf && i < OWN_FRAMES)
			for (i++; i < nf && n < 1 + FRAMES_UP; i++)
				ev[n++] = (struct lp_ref){ .pc = frames[i], .tid = x->itid, .kind = LP_EV_FRAME };
	}
	e->st->alloc_frames += n - 1;
	e->h->on_alloc(e->h->ctx, as->image, ev, n);
	return 0;
}
