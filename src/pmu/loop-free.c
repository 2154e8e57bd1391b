/* The hardware counter's main loop: the target runs freely, stopping at
 * system calls and at the counter's notifications; skid compensation
 * (thesis §3.3.2.1) steps from a notification to the sample point. */
#include <sys/mman.h>

#include "engine.h"

/* Give up reaching the armed point with t (it exited, or it must run
 * freely through a system call): let the counter notify again from the
 * next reference on. If the point is then passed, lp_pmu_check_sample_point counts the
 * sample as missed and arms the next one. */
static int seek_abandon(struct pmu_engine *e)
{
	uint64_t early = 2 + (uint64_t)LP_PMU_REFS_PER_INSN * e->o->max_skid;
	uint64_t at = e->sp > early ? e->sp - early : 0, t = engine_now(e);

	e->seeking = 0;
	return e->c->ops->arm(e->c, at > t ? at : t + 1);
}

static int restarts(const struct user_regs_struct *r)
{
	int64_t ax = (int64_t)r->rax;

	/* ERESTARTSYS, ERESTARTNOINTR, ERESTARTNOHAND, ERESTART_RESTARTBLOCK */
	return (int64_t)r->orig_rax >= 0 && (ax == -512 || ax == -513 || ax == -514 || ax == -516);
}

/* A SIGSEGV on a page that is not ours (any more): was it ours when the
 * access was made? With a free-running counter another thread can fault on
 * a watched page while the engine handles a first one, whose hit ends the
 * last watch there and opens the page before the second fault is read.
 * Such a fault (SEGV_ACCERR, an access the target's own permissions allow)
 * is retried, not delivered; the same fault again with no protection of
 * ours changed in between is the target's. */
static int stale_fault(struct pmu_engine *e, struct lp_pmu_thread *t, const siginfo_t *si)
{
	struct pmu_thread_state *x = lp_pmu_thread_state(t);
	struct user_regs_struct r;
	uint64_t addr = (uint64_t)si->si_addr, pg = page_of(addr);
	int prot, need = 0;

	if (!x || si->si_code != SEGV_ACCERR || (prot = lp_pmu_maps_prot(&t->proc->maps, pg)) < 0 ||
	    lp_pmu_prepare_insn(e, t, &r) < 0)
		return 0;
	for (int j = 0; j < x->n; j++)
		if (ranges_overlap(x->acc[j].addr, x->acc[j].size, pg, PAGE))
			need |= x->acc[j].kind == LP_REF_WRITE ? PROT_WRITE : PROT_READ;
	if (!need || (prot & need) != need)
		return 0;
	if (x->stale_pc == r.rip && x->stale_addr == addr && x->stale_gen == e->prot_gen) {
		x->stale_pc = x->stale_addr = 0;
		return 0;
	}
	x->stale_pc = r.rip;
	x->stale_addr = addr;
	x->stale_gen = e->prot_gen;
	return 1;
}

/* Skid compensation (§3.3.2.1): the notification came at or before the
 * early point; step t, decoding each instruction, to the sample point.
 * A system call on the way is run freely (PTRACE_SYSCALL): the seek goes
 * on at its exit stop (e->seek_tid). */
static int seek(struct pmu_engine *e, struct lp_pmu_thread *t)
{
	struct user_regs_struct r;
	pid_t tid = t->tid;
	int err;

	e->seeking = 1;
	e->seek_tid = 0;
	while (e->seeking) {
		struct pmu_thread_state *x;

		if ((err = lp_pmu_prepare_insn(e, t, &r)) < 0)
			return err;
		x = t->eng;
		/* A system call next, or one interrupted by the signal of this
		 * stop that the kernel will restart (its test: orig_rax >= 0
		 * and a restart code in rax) as soon as t resumes. */
		if ((x->insn.flags & LP_PMU_INSN_SYSCALL) || restarts(&r)) {
			e->seek_tid = tid;
			return 0;
		}
		if (x->pending_sig)
			break; /* the target's signal first (a handler runs freely) */
		if ((err = lp_pmu_run_insn(e, t, 0)) < 0)
			return err;
		if (lp_pmu_sup_find(&e->sup, tid) != t)
			break; /* it exited */
		e->c->ops->note(e->c, tid, LP_PMU_NOTE_STEP);
	}
	return e->seeking ? seek_abandon(e) : 0;
}

/* A SIGTRAP stop of t while it runs freely: a debug-register hit, our
 * double trap's breakpoint (or a stale trap of one removed), or the
 * target's own (*sig = SIGTRAP: delivered). */
static int free_trap(struct pmu_engine *e, struct lp_pmu_thread *t, const siginfo_t *si, int *sig)
{
	struct user_regs_struct r = { 0 };
	uint64_t dr6 = 0;
	int err;

	if (t->dr_used > 0 && lp_pmu_sup_dr_get(t, 6, &dr6) == 0 && (dr6 & 0xf)) {
		/* The trap follows the access: the clock already includes the
		 * whole instruction. */
		struct pmu_aspace *as = t->proc->watch;
		struct lp_watch_walk k;
		struct lp_watch *w;

		lp_pmu_sup_dr_set(t, 6, 0);
		e->c->ops->note(e->c, t->tid, LP_PMU_NOTE_TRAP);
		if (as)
			lp_watch_walk_init(&as->watches.t, &k);
		while (as && (w = lp_watch_walk_next(&as->watches.t, &k))) {
			struct lp_pmu_watch *p = lp_pmu_watch_of(&as->watches, w);

			if (p->mech == LP_PMU_WATCH_DR && (p->slots & (int)dr6)) {
				e->st->dr_hits++;
				if ((err = lp_pmu_watch_end(e, t, as, w, engine_now(e), 0, LP_PMU_END_DR)) < 0)
					return err;
			}
		}
	} else if (si->si_code == SI_KERNEL && lp_pmu_sup_getregs(t, &r) == 0 &&
		   lp_pmu_double_trap_is_ours(e, t, r.rip)) {
		return lp_pmu_double_trap_take(e, t, 1);
	} else if (si->si_code == SI_KERNEL && lp_pmu_double_trap_stale(e, t, &r)) {
		/* retried: it runs the restored instruction */
	} else {
		*sig = SIGTRAP; /* the target's own int3 or trap */
	}
	return 0;
}

int lp_pmu_loop_free(struct pmu_engine *e)
{
	struct lp_pmu_ev ev;
	struct user_regs_struct r;
	int err, res;

	for (int i = 0; i < e->sup.n; i++)
		if ((err = lp_pmu_sup_resume(e->sup.t[i], LP_PMU_SYSCALLS, 0)) < 0)
			return err;
	while (e->sup.n > 0) {
		struct lp_pmu_thread *t;
		struct pmu_thread_state *x;
		int sig = 0;
		pid_t tid;

		if ((res = lp_pmu_sup_wait(&e->sup, -1, &ev, 0)) < 0)
			return res;
		if (ev.kind == LP_PMU_EV_EXIT) {
			int was = e->seek_tid == ev.child->tid;

			lp_pmu_thread_exit(e, &ev);
			if (was && (err = seek_abandon(e)) < 0)
				return err;
			continue;
		}
		t = ev.t;
		tid = t->tid;
		if (!(x = lp_pmu_thread_state(t)))
			return LP_ENOMEM;
		switch (ev.kind) {
		case LP_PMU_EV_SYSCALL:
			if ((err = lp_pmu_sup_getregs(t, &r)) < 0)
				return err;
			if (!x->sys_async) {
				x->sys_async = 1; /* here: "between entry and exit" */
				if ((err = lp_pmu_syscall_enter(e, t, r.orig_rax, &r)) < 0)
					return err;
			} else {
				x->sys_async = 0;
				if ((err = lp_pmu_syscall_exit(e, t)) < 0)
					return err;
				if (e->seek_tid == tid && (err = seek(e, t)) < 0)
					return err;
			}
			break;
		case LP_PMU_EV_SIGNAL:
			res = e->c->ops->pending(e->c, t->tid, &ev.si);
			if (res == 1 && e->o->sample_start == LP_PMU_START_DOUBLE_TRAP) {
				if ((err = lp_pmu_double_trap_overflow(e, t)) < 0)
					return err;
			} else if (res == 1) {
				if ((err = seek(e, t)) < 0)
					return err;
			} else if (res < 0 && ev.sig == SIGSEGV && lp_pmu_is_watched_page(t, (uint64_t)ev.si.si_addr)) {
				if ((err = lp_pmu_prepare_insn(e, t, &r)) < 0 || (err = lp_pmu_run_insn(e, t, 0)) < 0)
					return err;
				/* That instruction may have brought the clock to the
				 * armed point (lp_pmu_insn_retired() asked the counter). */
				if (e->seeking && lp_pmu_sup_find(&e->sup, tid) == t && (err = seek(e, t)) < 0)
					return err;
			} else if (res < 0 && ev.sig == SIGSEGV && stale_fault(e, t, &ev.si)) {
				e->st->stale_faults++; /* resumed without it: the access is made again */
			} else if (res < 0) {
				sig = ev.sig;
			}
			break;
		case LP_PMU_EV_TRAP:
			if ((err = free_trap(e, t, &ev.si, &sig)) < 0)
				return err;
			break;
		default:
			if ((err = lp_pmu_process_event(e, &ev)) < 0)
				return err;
			if (ev.child && (err = lp_pmu_sup_resume(ev.child, LP_PMU_SYSCALLS, 0)) < 0)
				return err;
			break;
		}
		if ((err = e->c->ops->status(e->c)) < 0)
			return err;
		t = lp_pmu_sup_find(&e->sup, tid);
		if (!t || t->state != LP_PMU_T_STOPPED)
			continue;
		/* An overflow notification that a stop inside our own handling
		 * of t took (a step, an injected call) counts as if it had
		 * come now: re-armed if early, sought if the point is reached
		 * (at the system call's exit if t is inside one). */
		if (t->notified) {
			siginfo_t nsi = t->notified_si;

			t->notified = 0;
			if (e->c->ops->pending(e->c, tid, &nsi) == 1) {
				if (e->o->sample_start == LP_PMU_START_DOUBLE_TRAP) {
					if ((err = lp_pmu_double_trap_overflow(e, t)) < 0)
						return err;
				} else if (lp_pmu_thread_state(t)->sys_async)
					e->seek_tid = tid;
				else if ((err = seek(e, t)) < 0)
					return err;
				t = lp_pmu_sup_find(&e->sup, tid);
				if (!t || t->state != LP_PMU_T_STOPPED)
					continue;
			}
		}
		/* A signal of the target's found while stepping it is its own. */
		if (!sig && (x = t->eng) && x->pending_sig) {
			sig = x->pending_sig;
			x->pending_sig = 0;
		}
		if (sig)
			e->st->target_signals++;
		if ((err = lp_pmu_sup_resume(t, LP_PMU_SYSCALLS, sig)) < 0)
			return err;
	}
	return 0;
}
