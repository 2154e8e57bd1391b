/* One instruction of a thread under watch: single-stepped with the pages
 * it needs opened, our page faults told from the target's, the samples its
 * accesses end once it has retired. With a free-running counter the other
 * threads of the address space are stopped while a page is open. */
#include <cpuid.h>
#include <string.h>
#include <sys/ptrace.h>

#include "engine.h"

/* A signal stop met while t is stepped: the target's waits for the next
 * resume, the counter's is noted (t->notified) for lp_pmu_loop_free. */
void lp_pmu_note_signal(struct pmu_engine *e, struct lp_pmu_thread *t, const struct lp_pmu_ev *ev)
{
	if (e->c->ops->owns(e->c, &ev->si)) {
		t->notified = 1;
		t->notified_si = ev->si;
	} else {
		lp_pmu_thread_state(t)->pending_sig = ev->sig;
	}
}

/* CPUID, which a hypervisor runs for its guest: some (a KVM guest on an
 * AMD EPYC host) then skip the single step's trap, and the instruction
 * after it runs unseen, its accesses undecoded (a page fault at an address
 * the decoding of CPUID cannot have, 26 of them in a run of a small static
 * program). So the tracer runs it on the thread's registers and moves the
 * thread past it: the same machine gives the same answers, but for the
 * APIC ids of leaves 1, 0xb and 0x1f, which name the tracer's CPU. Returns
 * 1 (done, as a step) when t's next instruction is the decoded CPUID, 0
 * when it is not, LP_E*. */
static int run_cpuid(struct pmu_engine *e, struct lp_pmu_thread *t, const struct pmu_thread_state *x,
		     siginfo_t *si)
{
	struct user_regs_struct r;
	unsigned a, b, c, d;
	int err;

	if (!x || !(x->insn.flags & LP_PMU_INSN_CPUID))
		return 0;
	if ((err = lp_pmu_sup_getregs(t, &r)) < 0)
		return err;
	if (r.rip != x->insn.pc)
		return 0;
	__cpuid_count((unsigned)r.rax, (unsigned)r.rcx, a, b, c, d);
	r.rax = a;
	r.rbx = b;
	r.rcx = c;
	r.rdx = d;
	r.rip += x->insn.len;
	if ((err = lp_pmu_sup_setregs(t, &r)) < 0)
		return err;
	e->st->steps++;
	memset(si, 0, sizeof(*si));
	si->si_signo = SIGTRAP;
	si->si_code = TRAP_TRACE;
	return 1;
}

/* Step t once and wait for that step. Returns 1 done (SIGTRAP), 2 a
 * SIGSEGV stopped it instead, 0 the thread is gone, or LP_E*. Other
 * signals that arrive meanwhile are kept for the target. */
int lp_pmu_step_sync(struct pmu_engine *e, struct lp_pmu_thread *t, int sig, siginfo_t *si)
{
	struct lp_pmu_ev ev;
	struct pmu_thread_state *x = t->eng;
	int r, err;

	if (x && x->have_psi) {
		if (sig == x->psi.si_signo)
			ptrace(PTRACE_SETSIGINFO, t->tid, 0, &x->psi);
		x->have_psi = 0;
	}
	/* a signal to deliver goes with a real step */
	if (!sig && (r = run_cpuid(e, t, x, si)) != 0)
		return r;
	if ((err = lp_pmu_sup_resume(t, LP_PMU_STEP, sig)) < 0)
		return err;
	e->st->steps++;
	for (;;) {
		r = lp_pmu_sup_wait(&e->sup, t->tid, &ev, 0);
		if (r < 0)
			return r;
		if (ev.kind == LP_PMU_EV_EXIT) {
			lp_pmu_thread_exit(e, &ev);
			return 0;
		}
		if (ev.kind == LP_PMU_EV_TRAP) {
			*si = ev.si;
			return 1;
		}
		if (ev.kind == LP_PMU_EV_SIGNAL && ev.sig == SIGSEGV) {
			*si = ev.si;
			return 2;
		}
		/* A signal for the target waits for the next resume; an
		 * overflow notification is noted for the free-running loop. */
		if (ev.kind == LP_PMU_EV_SIGNAL)
			lp_pmu_note_signal(e, t, &ev);
		/* The step has not happened yet: ask again. */
		if ((err = lp_pmu_sup_resume(t, LP_PMU_STEP, 0)) < 0)
			return err;
	}
}

/* A watched page given the target's permissions is open for every thread
 * of the address space, not only for the one whose access is being
 * single-stepped: another thread touching a watched line on it meanwhile
 * would not fault, and its sample would end at a later reuse. With the
 * step counter nothing else runs (every thread is stepped by us, one
 * instruction at a time). With a free-running counter the other threads
 * of the address space (threads, vfork and CLONE_VM children: all that
 * share t->proc) are stopped first with PTRACE_INTERRUPT and resumed once
 * the page is closed (world_release). Only threads that can execute
 * instructions are stopped: one between its syscall-entry and -exit stops
 * (sys_async) stops by itself at the exit stop, which is not handled
 * before the page is closed. A thread that stops for a reason of its own
 * before our interrupt (a signal, a system call, an event, its exit) keeps
 * that stop: the supervisor stashes it and the main loop handles it later
 * as if it had come then. Forked children have their own memory: nothing
 * to stop. Single-threaded address spaces pay nothing. */
static int world_stop(struct pmu_engine *e, struct lp_pmu_thread *t)
{
	if (e->c->ops->stepping || e->world)
		return 0;
	e->world = t->proc;
	for (int i = 0; i < e->sup.n; i++) {
		struct lp_pmu_thread *o = e->sup.t[i];
		struct pmu_thread_state *x = lp_pmu_thread_state(o);
		int r;

		if (o == t || o->proc != t->proc || o->state != LP_PMU_T_RUNNING || !x || x->sys_async)
			continue;
		if ((r = lp_pmu_sup_interrupt(&e->sup, o)) < 0)
			return r;
		x->paused = r == 1;
		e->st->world_stops++;
	}
	return 0;
}

/* Resume the threads world_stop stopped, as they were: running freely
 * with system-call stops, no signal (a signal pending for one of them is
 * delivered at its next stop). One that died meanwhile (a kill, or an
 * exec by another thread) is reported by waitpid later. */
static void world_release(struct pmu_engine *e)
{
	if (!e->world)
		return;
	for (int i = 0; i < e->sup.n; i++) {
		struct lp_pmu_thread *o = e->sup.t[i];
		struct pmu_thread_state *x = o->eng;

		if (!x || !x->paused)
			continue;
		x->paused = 0;
		if (ptrace(PTRACE_SYSCALL, o->tid, 0, 0) == 0)
			o->state = LP_PMU_T_RUNNING;
	}
	e->world = NULL;
}

int lp_pmu_is_watched_page(struct lp_pmu_thread *t, uint64_t addr)
{
	struct pmu_aspace *as = t->proc->watch;

	return as && page_watched(as, addr & ~(PAGE - 1));
}

static int addr_in(const struct lp_pmu_access *acc, int n, uint64_t addr)
{
	for (int j = 0; j < n; j++)
		if (addr >= acc[j].addr && addr < acc[j].addr + (acc[j].size ? acc[j].size : 1))
			return 1;
	return 0;
}

static int page_in(const uint64_t *pages, int n, uint64_t addr)
{
	for (int i = 0; i < n; i++)
		if (pages[i] == (addr & ~(PAGE - 1)))
			return 1;
	return 0;
}

/* Give the watched pages that acc[0..n) touch the target's permissions,
 * adding them to opened[]. */
static int open_pages(struct pmu_engine *e, struct lp_pmu_thread *t, const struct lp_pmu_access *acc, int n,
		      uint64_t *opened, int *n_opened)
{
	struct pmu_aspace *as = t->proc->watch;
	int err;

	for (int j = 0; as && j < n; j++) {
		for (uint64_t pg = acc[j].addr & ~(PAGE - 1); pg < acc[j].addr + acc[j].size; pg += PAGE) {
			if (!page_watched(as, pg) || page_in(opened, *n_opened, pg) || *n_opened == 2 * LP_PMU_MAX_ACC)
				continue;
			if ((err = world_stop(e, t)) < 0 || (err = lp_pmu_page_unprotect(e, t, pg)) < 0)
				return err;
			opened[(*n_opened)++] = pg;
		}
	}
	return 0;
}

/* Does acc[0..n) touch a watched page held open for a system call in
 * flight (another thread's, blocked in the kernel)? Such an access does
 * not fault: the decoding finds the reuse. */
static int touches_held(struct pmu_aspace *as, const struct lp_pmu_access *acc, int n)
{
	if (!as || !as->held.n)
		return 0;
	for (int j = 0; j < n; j++)
		for (uint64_t pg = page_of(acc[j].addr); pg < acc[j].addr + (acc[j].size ? acc[j].size : 1); pg += PAGE)
			if (lp_pmu_pagecount_get(&as->held, pg) > 0 && page_watched(as, pg))
				return 1;
	return 0;
}

/* Run t's prepared instruction, handling our page faults; count it.
 *
 * A watched line is reused when the instruction touching it *retires*.
 * An instruction that faults on one of our pages may also fault with the
 * target's own permissions (a program that mprotects its pages and
 * catches SIGSEGV): then it did not execute, the target's handler runs
 * first, and the reuse is the instruction's later, successful execution.
 * So samples are ended only after the step with the pages open has
 * completed. */
int lp_pmu_run_insn(struct pmu_engine *e, struct lp_pmu_thread *t, int sig)
{
	struct pmu_thread_state *x = t->eng;
	uint64_t t0 = engine_now(e);
	uint64_t opened[2 * LP_PMU_MAX_ACC];
	int n_opened = 0, ours = 0, hit = 0, r, err;
	siginfo_t si;

	/* Our int3 is in memory at this instruction (lp_pmu_prepare_insn decoded the
	 * byte it replaced): a step would run the int3, not the instruction,
	 * and the thread would go on one byte into it. With a free-running
	 * counter this happens when a breakpoint goes in (another thread's
	 * notification) at the instruction of a fault not handled yet: the
	 * instruction's next execution since the breakpoint went in is this
	 * one, so it is the breakpoint's hit, taken without the trap. (With a
	 * signal to deliver the step enters the handler first: the step
	 * counter's lp_pmu_double_trap_step_hit lets it trap later.) */
	if (!sig && e->bp.active && e->bp.proc == t->proc && x->insn.pc == e->bp.pc) {
		e->st->dt_stepped++;
		return lp_pmu_double_trap_take(e, t, 0);
	}
	lp_pmu_check_sample_point(e, t, t0);
	/* Inside the target's SIGSEGV handler, and for xsave/xrstor (whose
	 * decoded access is the largest area: the hardware may not touch the
	 * watched line, or even its page), the reuse is taken from the
	 * decoding: the pages are opened before the access. */
	if ((x->in_segv || (x->insn.flags & LP_PMU_INSN_WIDE)) && t->proc->watch) {
		/* (In the handler a fault of ours would make the kernel reset
		 * it to the default: a forced SIGSEGV while SIGSEGV is
		 * blocked.) */
		if ((err = open_pages(e, t, x->acc, x->n, opened, &n_opened)) < 0)
			return err;
		ours = n_opened > 0;
	}
	/* A page held open for another thread's system call does not fault:
	 * the reuse is taken from the decoding, as above. */
	if (touches_held(t->proc->watch, x->acc, x->n)) {
		ours = 1;
		e->st->held_checks++;
	}
	r = lp_pmu_step_sync(e, t, sig, &si);
	if (r <= 0) {
		world_release(e);
		return r; /* t may be gone: touch nothing of it */
	}
	if (r == 2 && lp_pmu_is_watched_page(t, (uint64_t)si.si_addr)) {
		/* Ours: run the access with the target's permissions. */
		ours = 1;
		e->c->ops->note(e->c, t->tid, LP_PMU_NOTE_FAULT);
		if (x->n == 0 && !x->insn.len) {
			/* Undecoded instruction: the fault address is all we know. */
			x->acc[0] = (struct lp_pmu_access){ (uint64_t)si.si_addr, 1, LP_REF_READ };
			x->n = 1;
			x->fake = 1;
		}
		if (!addr_in(x->acc, x->n, (uint64_t)si.si_addr))
			e->st->decode_misses++;
		hit = lp_pmu_touches_page_watch(e, t->proc->watch, x->acc, x->n);
		if (!hit)
			e->st->false_faults++;
		if ((err = open_pages(e, t, x->acc, x->n, opened, &n_opened)) < 0)
			return err;
		/* An access the decoder did not report (or one more page):
		 * open the faulting page too, as often as it takes. */
		while ((r = lp_pmu_step_sync(e, t, 0, &si)) == 2 && lp_pmu_is_watched_page(t, (uint64_t)si.si_addr) &&
		       n_opened < 2 * LP_PMU_MAX_ACC && !page_in(opened, n_opened, (uint64_t)si.si_addr)) {
			e->st->decode_misses++;
			opened[n_opened] = (uint64_t)si.si_addr & ~(PAGE - 1);
			if ((err = world_stop(e, t)) < 0 || (err = lp_pmu_page_unprotect(e, t, opened[n_opened++])) < 0)
				return err;
		}
		if (r <= 0) {
			world_release(e);
			return r;
		}
		e->c->ops->note(e->c, t->tid, LP_PMU_NOTE_STEP);
	}
	if (r == 1 && (x->insn.flags & LP_PMU_INSN_VSIB) && (err = lp_pmu_gather_partial(e, t, t0)) < 0)
		return err;
	/* The target's own int3 (ours never get here): its SIGTRAP is
	 * delivered at the next resume, from this signal-delivery-stop. */
	if (r == 1 && x->op0 == 0xcc && x->insn.len == 1 && si.si_code == SI_KERNEL) {
		x->pending_sig = SIGTRAP;
		/* Injected calls (pages opened for its delivery) pass through
		 * other stops, whose siginfo the kernel would deliver: keep
		 * this one (SI_KERNEL) for the resume that delivers it. */
		x->psi = si;
		x->have_psi = 1;
	}
	if (ours && r == 1) {
		/* Retired: its accesses to watched lines are the reuses. */
		if ((err = lp_pmu_end_touched(e, t, x->acc, x->n, t0, x->insn.pc, opened, n_opened)) < 0)
			return err;
	} else if (hit) {
		/* Faulted with the target's permissions: no reuse yet, and
		 * the fault was only a cost, like a false positive. */
		e->st->false_faults++;
	}
	for (int k = 0; k < n_opened; k++)
		if (page_watched(t->proc->watch, opened[k]) && (err = lp_pmu_page_protect(e, t, opened[k])) < 0)
			return err;
	world_release(e);
	if (x->fake) {
		x->n = 0;
		x->fake = 0;
	}
	if (r == 2) {
		/* The target's own fault: it gets its SIGSEGV. */
		x->pending_sig = SIGSEGV;
		x->sample_k = -1;
		return 0;
	}
	return lp_pmu_insn_retired(e, t, t0);
}
