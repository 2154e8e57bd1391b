/* Sample points: the next one drawn and armed, an instruction decoded
 * before it runs (does it hold the point?), samples started at the exact
 * reference, and what a retired instruction ends (debug-register hits) and
 * tells the counter. */
#include <string.h>

#include "common/error.h"
#include "engine.h"

int lp_pmu_arm_next(struct pmu_engine *e)
{
	/* The double trap arms at Sp itself: the pc comes from the record. */
	uint64_t early = e->o->sample_start == LP_PMU_START_DOUBLE_TRAP ? 0 :
			 2 + (uint64_t)LP_PMU_REFS_PER_INSN * e->o->max_skid;

	e->sp += lp_rng_geometric(&e->rng, e->p);
	e->seeking = 0;
	return e->c->ops->arm(e->c, e->sp > early ? e->sp - early : 0);
}

/* Before an instruction runs: registers, decoding, accesses, and whether
 * it holds the sample point. */
int lp_pmu_prepare_insn(struct pmu_engine *e, struct lp_pmu_thread *t, struct user_regs_struct *r)
{
	struct pmu_thread_state *x = lp_pmu_thread_state(t);
	uint8_t code[LP_PMU_MAX_INSN];
	long got;
	int err;

	if (!x)
		return lp_seterr(LP_ENOMEM, "out of memory");
	if ((err = lp_pmu_sup_getregs(t, r)) < 0)
		return err;
	got = lp_pmu_sup_read(t->proc, r->rip, code, sizeof(code));
	/* Our int3 is not the program's: decode the byte it replaced. */
	if (e->bp.active && e->bp.proc == t->proc && got > 0 && e->bp.pc >= r->rip && e->bp.pc < r->rip + (uint64_t)got)
		code[e->bp.pc - r->rip] = e->bp.orig;
	x->op0 = got > 0 ? code[0] : 0;
	x->n = 0;
	x->sample_k = -1;
	if (got <= 0 || lp_pmu_decode(e->dec, code, (size_t)got, r->rip, &x->insn) < 0) {
		/* Undecodable: the CPU will fault on it and the target gets
		 * its signal; it makes no reference. */
		memset(&x->insn, 0, sizeof(x->insn));
		x->insn.pc = r->rip;
		e->st->undecoded++;
		return 0;
	}
	if (x->insn.flags & LP_PMU_INSN_VSIB) {
		/* A gather or scatter: its element addresses are in the
		 * vector registers. */
		long len = lp_pmu_sup_getxstate(t, e->xsave, sizeof(e->xsave));

		if (len < 0 || lp_pmu_vregs_parse(e->xsave, (size_t)len, &e->xlayout, &e->vregs) < 0)
			return len < 0 ? (int)len : lp_seterr(LP_EIO, "cannot read the vector registers of thread %d",
								 (int)t->tid);
		x->n = lp_pmu_insn_accesses(&x->insn, r, &e->vregs, x->acc);
		return 0;
	}
	x->n = lp_pmu_insn_accesses(&x->insn, r, NULL, x->acc);
	return 0;
}

/* Start the sample of reference k of t's instruction (t0 references
 * before it): one watch per line size, unless the same instruction
 * touches that line again (add [m],1: read then write). */
static int start_sample(struct pmu_engine *e, struct lp_pmu_thread *t, uint64_t t0, int k)
{
	struct pmu_thread_state *x = t->eng;
	struct lp_pmu_access *a = &x->acc[k];
	uint64_t lag = engine_now(e) - lp_pmu_image_now(e, t->proc);
	int err;

	e->st->samples++;
	for (unsigned li = 0; li < e->nlines; li++) {
		struct lp_pmu_sample s = { .begin = t0 + (uint64_t)k + 1, .pc = x->insn.pc, .addr = a->addr,
					   .size = a->size, .kind = a->kind, .line_idx = (uint8_t)li,
					   .tid = t->num, .dangling = 1, .image = lp_pmu_aspace_get(t->proc)->image,
					   .itid = x->itid };
		uint64_t line = a->addr & ~(uint64_t)(e->line[li] - 1);
		int same = -1;

		s.ibegin = s.begin - lag;
		if (x->dt) {
			s.trigger = x->dt_trigger;
			s.armed = x->dt_armed;
		}
		for (int j = k + 1; j < x->n && same < 0; j++)
			if (ranges_overlap(x->acc[j].addr, x->acc[j].size, line, e->line[li]))
				same = j;
		if (same >= 0) {
			s.dangling = 0;
			s.end = t0 + (uint64_t)same + 1;
			s.iend = s.end - lag;
			s.end_pc = x->insn.pc;
			s.ended_by = LP_PMU_END_SAME;
			e->st->same_hits++;
			lp_pmu_emit_sample(e, &s);
		} else if ((err = lp_pmu_watch_start(e, t, &s)) < 0) {
			return err;
		}
	}
	return 0;
}

#define DR6_BS (1ull << 14) /* the trap was a single step */

/* An instruction of t retired with t0 references before it. */
int lp_pmu_insn_retired(struct pmu_engine *e, struct lp_pmu_thread *t, uint64_t t0)
{
	struct pmu_thread_state *x = t->eng;
	int err;

	if (e->h->on_ref) {
		uint32_t image = lp_pmu_aspace_get(t->proc)->image;

		for (int j = 0; j < x->n; j++) {
			struct lp_ref r = { x->acc[j].addr, x->insn.pc, x->acc[j].size, t->num, x->acc[j].kind };

			e->h->on_ref(e->h->ctx, t0 + (uint64_t)j + 1, image, x->itid, &r);
		}
	}
	/* Debug-register hits of this instruction (for xsave/xrstor, whose
	 * decoded area may be larger than what the CPU touched, the decoding
	 * decides, as for page watches). */
	if (t->dr_used > 0) {
		uint64_t dr6 = 0;
		int wide = (x->insn.flags & LP_PMU_INSN_WIDE) != 0, decoded;

		if ((err = lp_pmu_sup_dr_get(t, 6, &dr6)) < 0)
			return err;
		/* A data breakpoint hit by a single-stepped instruction is
		 * reported with the step (DR6's B0..B3 and BS together) on
		 * most machines; some virtual machines report BS alone (an
		 * AMD EPYC guest: DR6 0xffff4ff0 after a read of a watched
		 * line, 36 of a stepped run's hits lost), so there the
		 * instruction's decoded accesses decide, as for xsave. */
		decoded = wide || ((dr6 & DR6_BS) && !(dr6 & 0xf) && x->n > 0);
		if ((dr6 & 0xf) || decoded) {
			struct pmu_aspace *as = t->proc->watch;

			if (dr6 & 0xf) {
				lp_pmu_sup_dr_set(t, 6, 0);
				e->c->ops->note(e->c, t->tid, LP_PMU_NOTE_TRAP);
			}
			struct lp_watch_walk k;
			struct lp_watch *cw;

			/* A walk, not a lookup per access: a trap whose access the
			 * decoding missed still ends its watch. */
			if (as)
				lp_watch_walk_init(&as->watches.t, &k);
			while (as && (cw = lp_watch_walk_next(&as->watches.t, &k))) {
				const struct lp_pmu_watch *w = lp_pmu_watch_of(&as->watches, cw);
				int hit = -1;

				if (w->mech != LP_PMU_WATCH_DR)
					continue;
				for (int j = 0; j < x->n && hit < 0; j++)
					if (ranges_overlap(x->acc[j].addr, x->acc[j].size, w->line, w->size))
						hit = j;
				if (!(w->slots & (int)dr6) && !(decoded && hit >= 0))
					continue;
				if (hit < 0) {
					e->st->decode_misses++;
					hit = x->n > 0 ? x->n - 1 : 0;
				}
				e->st->dr_hits++;
				if ((err = lp_pmu_watch_end(e, t, as, cw, t0 + (uint64_t)hit + 1, x->insn.pc, LP_PMU_END_DR)) < 0)
					return err;
			}
		}
	}
	/* Usually one sample point per instruction; a short gap can put the
	 * next one in the same instruction (read and write of add [m],1). */
	while (x->sample_k >= 0) {
		if ((err = start_sample(e, t, t0, x->sample_k)) < 0)
			return err;
		if (x->dt) {
			/* A double trap's: the next point is armed already. */
			x->dt = 0;
			x->sample_k = -1;
			break;
		}
		if ((err = lp_pmu_arm_next(e)) < 0)
			return err;
		x->sample_k = e->sp <= t0 + (uint64_t)x->n ? (int)(e->sp - t0 - 1) : -1;
	}
	x->refs += (unsigned)x->n;
	{
		uint64_t writes = 0, addrs[LP_PMU_MAX_ACC];

		for (int j = 0; j < x->n; j++) {
			writes |= (uint64_t)(x->acc[j].kind == LP_REF_WRITE) << j;
			addrs[j] = x->acc[j].addr;
		}
		e->c->ops->retired(e->c, t->tid, (unsigned)x->n, x->insn.pc, writes, addrs);
	}
	if (!e->seeking && e->c->ops->pending(e->c, t->tid, NULL) == 1) {
		if (e->o->sample_start == LP_PMU_START_DOUBLE_TRAP)
			return lp_pmu_double_trap_overflow(e, t);
		e->seeking = 1;
	}
	return 0;
}

/* Mark the sampled access if this instruction holds the sample point. */
void lp_pmu_check_sample_point(struct pmu_engine *e, struct lp_pmu_thread *t, uint64_t t0)
{
	struct pmu_thread_state *x = t->eng;

	if (!e->seeking)
		return;
	if (e->sp <= t0) {
		/* The notification came after the point: more skid than
		 * MaxSkid. Skip this sample rather than bias the next. */
		e->st->missed++;
		lp_pmu_arm_next(e);
		return;
	}
	if (e->sp <= t0 + (uint64_t)x->n)
		x->sample_k = (int)(e->sp - t0 - 1);
	else
		e->st->skid_steps++;
}

/* A gather or scatter can trap (single-step) before it is complete,
 * when the hardware suspended it (on a page fault the kernel handled, for
 * one): its rip stays on it and the mask has the elements done cleared.
 * Then only those elements retired; the rest are decoded again from the
 * new mask at the next step, as a new execution. */
int lp_pmu_gather_partial(struct pmu_engine *e, struct lp_pmu_thread *t, uint64_t t0)
{
	struct pmu_thread_state *x = t->eng;
	struct lp_pmu_access after[LP_PMU_MAX_ACC];
	struct user_regs_struct r;
	char used[LP_PMU_MAX_ACC] = { 0 };
	long len;
	int n_after, n = 0, err;

	if ((err = lp_pmu_sup_getregs(t, &r)) < 0)
		return err;
	if (r.rip != x->insn.pc)
		return 0;
	if ((len = lp_pmu_sup_getxstate(t, e->xsave, sizeof(e->xsave))) < 0)
		return (int)len;
	if (lp_pmu_vregs_parse(e->xsave, (size_t)len, &e->xlayout, &e->vregs) < 0)
		return lp_seterr(LP_EIO, "cannot read the vector registers of thread %d", (int)t->tid);
	n_after = lp_pmu_insn_accesses(&x->insn, &r, &e->vregs, after);
	/* Done = planned before and no longer planned (a multiset). */
	for (int j = 0; j < x->n; j++) {
		int left = 0;

		for (int k = 0; k < n_after && !left; k++)
			if (!used[k] && after[k].addr == x->acc[j].addr && after[k].kind == x->acc[j].kind)
				used[k] = left = 1;
		if (!left)
			x->acc[n++] = x->acc[j];
	}
	x->n = n;
	e->st->partial++;
	/* The sample point may lie in what is left: look again. */
	x->sample_k = e->seeking && e->sp > t0 && e->sp <= t0 + (uint64_t)n ? (int)(e->sp - t0 - 1) : -1;
	return 0;
}
