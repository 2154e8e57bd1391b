/* Threads and processes of the target: clone, fork, vfork and exec (new
 * images, watches moved or cleared), threads that leave or exit. */
#include "common/error.h"
#include "engine.h"

/* A thread leaves its address space (supervisor hook): keep its
 * references in its image; a thread that is dropped is no longer counted.
 * An exec by the last thread of an image ends that image by exec. */
void lp_pmu_on_thread_leave(void *ctx, struct lp_pmu_thread *t, int gone)
{
	struct pmu_engine *e = ctx;
	struct pmu_aspace *as = t->proc->watch;

	lp_pmu_image_leave(e, t);
	lp_pmu_release_holds(e, t, 0); /* its call will never return: nothing to protect with */
	if (!gone && as && t->proc->refs == 1)
		as->exec = 1;
	if (gone)
		e->c->ops->detach(e->c, t->tid);
}

/* An EXIT event: the image records its process's status (the leader's
 * exit is reported last), then the thread is dropped. */
void lp_pmu_thread_exit(struct pmu_engine *e, struct lp_pmu_ev *ev)
{
	struct lp_pmu_thread *t = ev->child;
	struct pmu_aspace *as = t->proc ? t->proc->watch : NULL;

	if (as && t->tid == t->proc->pid) {
		as->exited = 1;
		as->status = ev->status;
	}
	lp_pmu_sup_forget(&e->sup, t);
}

int lp_pmu_process_event(struct pmu_engine *e, struct lp_pmu_ev *ev)
{
	struct lp_pmu_thread *t = ev->t, *c = ev->child;
	struct pmu_aspace *as = lp_pmu_aspace_get(t->proc);
	struct lp_watch *cw;
	uint32_t parent;
	int err;

	if (!as)
		return lp_seterr(LP_ENOMEM, "out of memory");
	switch (ev->kind) {
	case LP_PMU_EV_CLONE:
		if ((err = e->c->ops->attach(e->c, c->tid)) < 0)
			return err;
		lp_pmu_image_join(e, c, as);
		/* Debug registers watch one thread; with two, move their
		 * watches to page protection (the new thread, stopped at its
		 * first stop, makes the calls). */
		for (uint64_t pos = 0; (cw = lp_watch_table_next(&as->watches.t, &pos));) {
			struct lp_pmu_watch *w = lp_pmu_watch_of(&as->watches, cw);
			uint64_t pg = page_of(w->line);
			int had = page_watched(as, pg);

			if (w->mech != LP_PMU_WATCH_DR)
				continue;
			w->dr_thread->dr_used &= ~w->slots;
			if ((err = lp_pmu_dr_apply(w->dr_thread)) < 0)
				return err;
			if (lp_pmu_watches_to_page(&as->watches, cw) < 0)
				return LP_ENOMEM;
			if (!had && (err = lp_pmu_page_protect(e, c, pg)) < 0)
				return err;
		}
		return 0;
	case LP_PMU_EV_FORK:
		if ((err = e->c->ops->attach(e->c, c->tid)) < 0)
			return err;
		/* The child keeps its parent's rseq registration. */
		if (lp_pmu_thread_state(c) && lp_pmu_thread_state(t))
			lp_pmu_thread_state(c)->rseq = lp_pmu_thread_state(t)->rseq;
		if (ev->vfork) {
			/* It shares the parent's image until it execs. */
			lp_pmu_image_join(e, c, as);
			return 0;
		}
		if ((err = lp_pmu_image_start(e, c->proc, c, as->image, t->tgid, 0)) < 0)
			return err;
		/* Its copy of the text has our int3: the original byte back
		 * there (the breakpoint stays in the parent's). */
		if (e->bp.active && e->bp.proc == t->proc && c->proc != t->proc) {
			if ((err = lp_pmu_sup_write(c->proc, e->bp.pc, &e->bp.orig, 1)) < 0)
				return err;
			e->st->dt_forks++;
		}
		/* The child inherited our protections but none of our watches:
		 * give it the permissions its program set. */
		for (uint64_t pos = 0; (cw = lp_watch_table_next(&as->watches.t, &pos));) {
			const struct lp_pmu_watch *w = lp_pmu_watch_of(&as->watches, cw);
			uint64_t pg = page_of(w->line);

			if (w->mech == LP_PMU_WATCH_PAGE && (err = lp_pmu_page_unprotect(e, c, pg)) < 0)
				return err;
		}
		return 0;
	case LP_PMU_EV_EXEC:
		t->dr_used = 0; /* exec clears the debug registers */
		if (!lp_pmu_thread_state(t))
			return lp_seterr(LP_ENOMEM, "out of memory");
		lp_pmu_thread_state(t)->rseq = 0; /* and unregisters rseq */
		parent = lp_pmu_thread_state(t)->image;
		return lp_pmu_image_start(e, t->proc, t, parent, t->tgid, 1);
	default:
		return 0;
	}
}
