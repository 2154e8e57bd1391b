/* The step counter's main loop: every thread single-stepped one
 * instruction at a time, round robin; system calls that may block run in
 * the background; signals the target handles are delivered by a step. */
#include <stdio.h>
#include <sys/ptrace.h>

#include "engine.h"

/* Does the thread's process catch sig with a handler? (SigCgt in status) */
static int signal_caught(struct lp_pmu_thread *t, int sig)
{
	char path[64], line[256];
	unsigned long long mask = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)t->tid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "SigCgt: %llx", &mask) == 1)
			break;
	fclose(f);
	return (int)((mask >> (sig - 1)) & 1);
}

/* Step t over its system call synchronously, following the events it
 * causes (clone, fork, exec). Returns 1 done, 0 thread gone, or LP_E*. */
static int syscall_sync(struct pmu_engine *e, struct lp_pmu_thread *t, int sig)
{
	struct lp_pmu_ev ev;
	int r, err;

	if ((err = lp_pmu_sup_resume(t, LP_PMU_STEP, sig)) < 0)
		return err;
	e->st->steps++;
	for (;;) {
		if ((r = lp_pmu_sup_wait(&e->sup, t->tid, &ev, 0)) < 0)
			return r;
		if (ev.kind == LP_PMU_EV_EXIT) {
			lp_pmu_thread_exit(e, &ev);
			return 0;
		}
		if (ev.kind == LP_PMU_EV_TRAP)
			return 1;
		if (ev.kind == LP_PMU_EV_SIGNAL)
			lp_pmu_note_signal(e, t, &ev);
		if ((err = lp_pmu_process_event(e, &ev)) < 0)
			return err;
		if ((err = lp_pmu_sup_resume(t, LP_PMU_STEP, 0)) < 0)
			return err;
	}
}

/* Deliver a signal the target handles. The step stops at the handler's
 * first instruction: nothing of the interrupted code ran, but the kernel
 * wrote the signal frame below the stack pointer. Watched pages there are
 * opened for the delivery (a frame write to a PROT_NONE page kills the
 * target), and watched lines the frame covers are reused by the kernel,
 * like a system call's buffer. Assumes no sigaltstack. */
static int deliver_caught(struct pmu_engine *e, struct lp_pmu_thread *t, int sig, uint64_t rsp)
{
	struct pmu_aspace *as = t->proc->watch;
	uint64_t lo = (rsp - 128 - 32768) & ~(PAGE - 1), opened[9];
	struct user_regs_struct r;
	int n_opened = 0, res, err;
	struct lp_watch *w;
	uint64_t pos = 0;
	siginfo_t si;

	while (as && (w = lp_watch_table_next(&as->watches.t, &pos))) {
		const struct lp_pmu_watch *p = lp_pmu_watch_of(&as->watches, w);
		uint64_t pg = p->line & ~(PAGE - 1);
		int dup = 0;

		if (p->mech != LP_PMU_WATCH_PAGE || pg < lo || pg >= rsp || n_opened == 9)
			continue;
		for (int i = 0; i < n_opened; i++)
			dup |= opened[i] == pg;
		if (dup)
			continue;
		if ((err = lp_pmu_page_unprotect(e, t, pg)) < 0)
			return err;
		opened[n_opened++] = pg;
	}
	res = lp_pmu_step_sync(e, t, sig, &si);
	if (res <= 0)
		return res;
	if (res == 2)
		lp_pmu_thread_state(t)->pending_sig = SIGSEGV;
	else if (sig == SIGSEGV)
		lp_pmu_thread_state(t)->in_segv = 1;
	if (res == 1 && sig == SIGTRAP) {
		/* In its SIGTRAP handler, SIGTRAP is blocked; the SIGTRAP every
		 * single-step forces would then reset the handler to SIG_DFL
		 * (force_sig on a blocked signal), and the program's next int3
		 * would kill it. Unblocked, the step's SIGTRAP is only a
		 * ptrace stop, which we discard. The frame keeps the mask
		 * that sigreturn restores. */
		uint64_t mask;

		if (ptrace(PTRACE_GETSIGMASK, t->tid, (void *)8, &mask) == 0 && (mask & (1ULL << (SIGTRAP - 1)))) {
			mask &= ~(1ULL << (SIGTRAP - 1));
			ptrace(PTRACE_SETSIGMASK, t->tid, (void *)8, &mask);
		}
	}
	if (lp_pmu_sup_getregs(t, &r) == 0 && as) {
		uint64_t t0 = engine_now(e);
		struct lp_watch_walk k;

		lp_watch_walk_init(&as->watches.t, &k);
		while ((w = lp_watch_walk_next(&as->watches.t, &k))) {
			const struct lp_pmu_watch *p = lp_pmu_watch_of(&as->watches, w);

			if (ranges_overlap(r.rsp, rsp - 128 - r.rsp, p->line, p->size)) {
				e->st->syscall_hits++;
				if ((err = lp_pmu_watch_end(e, t, as, w, t0 + 1, 0, LP_PMU_END_SYSCALL)) < 0)
					return err;
			}
		}
	}
	for (int i = 0; i < n_opened; i++)
		if (page_watched(as, opened[i]) && (err = lp_pmu_page_protect(e, t, opened[i])) < 0)
			return err;
	return 0;
}

/* One instruction (or system call) of a stopped thread, step counter. */
static int step_thread(struct pmu_engine *e, struct lp_pmu_thread *t)
{
	struct user_regs_struct r;
	struct pmu_thread_state *x;
	int sig, err, res;

	if ((err = lp_pmu_prepare_insn(e, t, &r)) < 0)
		return err;
	x = t->eng;
	sig = x->pending_sig;
	x->pending_sig = 0;
	if (sig) {
		e->st->target_signals++;
		if (signal_caught(t, sig))
			return deliver_caught(e, t, sig, r.rsp);
	}
	if (e->bp.active && e->bp.proc == t->proc && r.rip == e->bp.pc)
		return lp_pmu_double_trap_step_hit(e, t, sig);
	if (!(x->insn.flags & LP_PMU_INSN_SYSCALL))
		return lp_pmu_run_insn(e, t, sig);
	if ((err = lp_pmu_syscall_enter(e, t, r.rax, &r)) < 0)
		return err;
	if (lp_pmu_syscall_may_block(r.rax, x->sys_args)) {
		x->sys_async = 1;
		if ((err = lp_pmu_sup_resume(t, LP_PMU_STEP, sig)) < 0)
			return err;
		e->st->steps++;
		t->state = LP_PMU_T_SYSCALL;
		return 0;
	}
	res = syscall_sync(e, t, sig);
	if (res <= 0)
		return res;
	if ((err = lp_pmu_syscall_exit(e, t)) < 0)
		return err;
	return lp_pmu_insn_retired(e, t, engine_now(e));
}

/* An event of a thread that is not being stepped synchronously. */
static int background_event(struct pmu_engine *e, struct lp_pmu_ev *ev)
{
	struct lp_pmu_thread *t = ev->t;
	struct pmu_thread_state *x;
	int err;

	if (ev->kind == LP_PMU_EV_EXIT) {
		lp_pmu_thread_exit(e, ev);
		return 0;
	}
	x = lp_pmu_thread_state(t);
	if (!x)
		return LP_ENOMEM;
	if (x->sys_async) {
		if (ev->kind == LP_PMU_EV_TRAP) {
			x->sys_async = 0;
			if ((err = lp_pmu_syscall_exit(e, t)) < 0)
				return err;
			return lp_pmu_insn_retired(e, t, engine_now(e));
		}
		if (ev->kind == LP_PMU_EV_SIGNAL) {
			/* A signal while blocked in the call: deliver it now, as
			 * the kernel would. Without a handler the call restarts
			 * or continues and the step ends when it returns; with
			 * one, the step ends at the handler's first instruction
			 * and the call is restarted after it, as a new call. */
			e->st->target_signals++;
			if ((err = lp_pmu_sup_resume(t, LP_PMU_STEP, ev->sig)) < 0)
				return err;
			t->state = LP_PMU_T_SYSCALL;
			return 0;
		}
		if ((err = lp_pmu_process_event(e, ev)) < 0)
			return err;
		if ((err = lp_pmu_sup_resume(t, LP_PMU_STEP, 0)) < 0)
			return err;
		t->state = LP_PMU_T_SYSCALL;
		return 0;
	}
	if (ev->kind == LP_PMU_EV_SIGNAL)
		x->pending_sig = ev->sig;
	return lp_pmu_process_event(e, ev);
}

int lp_pmu_loop_step(struct pmu_engine *e)
{
	struct lp_pmu_ev ev;
	int r, err;

	while (e->sup.n > 0) {
		struct lp_pmu_thread *t = NULL;

		while ((r = lp_pmu_sup_wait(&e->sup, -1, &ev, 1)) > 0)
			if ((err = background_event(e, &ev)) < 0)
				return err;
		if (r < 0 && e->sup.n > 0)
			return r;
		for (int k = 0; k < e->sup.n && !t; k++) {
			struct lp_pmu_thread *c = e->sup.t[(e->rr + k) % e->sup.n];

			if (c->state == LP_PMU_T_STOPPED && c->proc)
				t = c;
		}
		if (!t) {
			if (e->sup.n == 0)
				break;
			if ((r = lp_pmu_sup_wait(&e->sup, -1, &ev, 0)) < 0)
				return r;
			if ((err = background_event(e, &ev)) < 0)
				return err;
			continue;
		}
		e->rr = (e->rr + 1) % (e->sup.n ? e->sup.n : 1);
		if ((err = step_thread(e, t)) < 0)
			return err;
	}
	return 0;
}
