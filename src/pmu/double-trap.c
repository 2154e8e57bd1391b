/* The double trap (thesis §3.3.2.2): the counter's precise pc gets an
 * int3; its next execution is sampled (see the top of pmu-sampler.c). */
#include "engine.h"

/* Take the breakpoint out (the original byte back), remembering it so that
 * a trap another thread took on it meanwhile is recognised (lp_pmu_double_trap_stale). */
static int breakpoint_remove(struct pmu_engine *e)
{
	int err;

	if (!e->bp.active)
		return 0;
	e->bp.active = 0;
	e->old_bp[e->n_old_bp++ % DT_OLD] = e->bp;
	if ((err = lp_pmu_sup_write(e->bp.proc, e->bp.pc, &e->bp.orig, 1)) < 0)
		return err;
	return 0;
}

/* The counter reached the point (its notification, after skid, with t
 * stopped): an int3 at the record's pc, then the next point is armed. A
 * breakpoint of the previous notification still in place was not hit:
 * removed (its pc never ran again), that sample is lost. */
int lp_pmu_double_trap_overflow(struct pmu_engine *e, struct lp_pmu_thread *t)
{
	struct lp_pmu_precise rec;
	struct lp_pmu_thread *rt;
	struct lp_pmu_proc *p;
	struct lp_pmu_insn insn;
	uint8_t code[LP_PMU_MAX_INSN], b, cc = 0xcc;
	long got;
	int err;

	if (e->bp.active) {
		e->st->dt_replaced++;
		if ((err = breakpoint_remove(e)) < 0)
			return err;
	}
	if (!e->c->ops->precise || e->c->ops->precise(e->c, t->tid, &rec) != 1) {
		e->st->dt_norecord++;
		return lp_pmu_arm_next(e);
	}
	rt = lp_pmu_sup_find(&e->sup, rec.tid);
	p = rt && rt->proc ? rt->proc : t->proc;
	/* A pc holding an int3 already is the program's own breakpoint
	 * (not a memory instruction): no sample. */
	if ((got = lp_pmu_sup_read(p, rec.pc, code, sizeof(code))) < 1 || code[0] == 0xcc) {
		e->st->dt_norecord++;
		return lp_pmu_arm_next(e);
	}
	b = code[0];
	/* An instruction without a memory operand gives no sample (pmu-sw's
	 * records are at any instruction): no breakpoint. Not on a system
	 * call instruction in any case: the supervisor runs it again itself
	 * to re-enter a call after a call injected at its entry stop, and
	 * our "syscall; int3" gadget is made of nothing else. */
	if (lp_pmu_decode(e->dec, code, (size_t)got, rec.pc, &insn) < 0 || insn.n_mem == 0 ||
	    (insn.flags & LP_PMU_INSN_SYSCALL)) {
		e->st->dt_nomem++;
		return lp_pmu_arm_next(e);
	}
	if ((err = lp_pmu_sup_write(p, rec.pc, &cc, 1)) < 0)
		return err;
	e->bp = (struct pmu_breakpoint){ .proc = p, .pc = rec.pc, .orig = b, .kind = rec.kind, .active = 1,
			       .trigger = rec.time, .armed = engine_now(e) };
	e->st->dt_inserted++;
	return lp_pmu_arm_next(e);
}

/* Is t, stopped by an int3 trap with rip, at our breakpoint? */
int lp_pmu_double_trap_is_ours(struct pmu_engine *e, struct lp_pmu_thread *t, uint64_t rip)
{
	return e->bp.active && t->proc == e->bp.proc && rip == e->bp.pc + 1;
}

/* A trap of a breakpoint removed since another thread hit it (or the next
 * notification replaced it): put rip back on the instruction, no signal. */
int lp_pmu_double_trap_stale(struct pmu_engine *e, struct lp_pmu_thread *t, struct user_regs_struct *r)
{
	uint8_t b;

	for (unsigned i = 0; i < DT_OLD && i < e->n_old_bp; i++) {
		struct pmu_breakpoint *o = &e->old_bp[i];

		if (o->proc != t->proc || r->rip != o->pc + 1 || lp_pmu_sup_read(t->proc, o->pc, &b, 1) != 1 || b == 0xcc)
			continue;
		r->rip = o->pc;
		if (lp_pmu_sup_setregs(t, r) < 0)
			return 0;
		e->st->dt_stale++;
		return 1;
	}
	return 0;
}

/* t trapped on our int3 (rip = pc + 1; or, trapped = 0, is about to be
 * stepped at pc: lp_pmu_run_insn): restore the byte, rip back to pc, and run the
 * instruction with its reference of the event's kind sampled (the first
 * of that kind; the first reference when none is). */
int lp_pmu_double_trap_take(struct pmu_engine *e, struct lp_pmu_thread *t, int trapped)
{
	struct user_regs_struct r;
	struct pmu_breakpoint b = e->bp;
	struct pmu_thread_state *x = lp_pmu_thread_state(t);
	int err, k = -1;

	if (!x)
		return LP_ENOMEM;
	if ((err = breakpoint_remove(e)) < 0 || (err = lp_pmu_sup_getregs(t, &r)) < 0)
		return err;
	r.rip = b.pc;
	if ((err = lp_pmu_sup_setregs(t, &r)) < 0)
		return err;
	e->st->dt_hits++;
	if (trapped)
		e->c->ops->note(e->c, t->tid, LP_PMU_NOTE_TRAP);
	if ((err = lp_pmu_prepare_insn(e, t, &r)) < 0)
		return err;
	for (int j = 0; j < x->n && k < 0; j++)
		if (x->acc[j].kind == b.kind)
			k = j;
	if (k < 0 && x->n > 0)
		k = 0;
	if (k < 0) {
		e->st->dt_nomem++;
		return 0; /* nothing to sample: it runs on as usual */
	}
	x->sample_k = k;
	x->dt = 1;
	x->dt_trigger = b.trigger;
	x->dt_armed = b.armed;
	return lp_pmu_run_insn(e, t, 0);
}

/* Step counter: t is about to execute our int3 (lp_pmu_prepare_insn read the
 * original byte). Let it trap, as the hardware path does, and take it. */
int lp_pmu_double_trap_step_hit(struct pmu_engine *e, struct lp_pmu_thread *t, int sig)
{
	struct user_regs_struct r;
	siginfo_t si;
	int res, err;

	res = lp_pmu_step_sync(e, t, sig, &si);
	if (res <= 0)
		return res;
	if (res == 2) {
		lp_pmu_thread_state(t)->pending_sig = SIGSEGV;
		return 0;
	}
	if ((err = lp_pmu_sup_getregs(t, &r)) < 0)
		return err;
	if (si.si_code != SI_KERNEL || !lp_pmu_double_trap_is_ours(e, t, r.rip))
		return 0; /* a signal's handler ran first: the breakpoint stays */
	return lp_pmu_double_trap_take(e, t, 1);
}
