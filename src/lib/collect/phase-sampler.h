/* Phase-guided sampling (record --phases; docs/runtime.md, "Phase
 * detection"; Vestberg §2.5 and §5.3), shared by the instrumentation
 * runtime (src/rt/rt-phase.c) and the valgrind tool (src/vg/vg-phase.c),
 * so that both backends cut, classify and sample alike.
 *
 * Each thread cuts its references into intervals of `interval`
 * references. The sampler's countdown runs at the tick rate, which gives
 * about LP_PHASE_TICKS ticks per interval (or the sampling rate, if
 * higher): each tick adds its pc to the interval's signature
 * (common/phase-core.h) and is a sampled reference with the interval's
 * keep chance, so that the samples remain a Bernoulli process of the
 * interval's rate (thinning a Bernoulli process is one). An interval runs
 * at the full rate while the phase predicted for it has fewer sampled
 * references than `target`, else at the low rate (0: none). The
 * prediction is the phase that followed the thread's last phase the last
 * time it ended (a first-order Markov predictor), else the last phase
 * itself. With the last phase alone (ScarPhase's last-value predictor) a
 * phase that always follows another one is sampled at the rate its
 * predecessor's count decides: on the solver of examples/phases.c the
 * second sweep always followed a transition interval whose phase,
 * sampled at the low rate, never reached its count, so the sweep ran at
 * the full rate all along (1.1 times fewer samples than a constant rate,
 * 3.4 with this predictor). At its end the signature gives its phase,
 * which takes the interval's sampled references; the interval, its phase
 * and its rate become a record for the collector (protocol.h, PHASES),
 * and the models weigh each phase by its line accesses.
 *
 * pcs are hashed at their link-time address in the main executable (pc
 * minus its load bias, `bias`): address-space randomisation then moves no
 * code between buckets, so the same program gets the same phases and
 * samples at the same seed.
 *
 * The policy (phase table, counts, predictor) is the process's, so that
 * all threads name phases alike; a caller whose threads run at once
 * holds a lock around lp_phase_end (once per interval, never on the
 * per-access path).
 *
 * Freestanding like common/phase-core.h: header-only, static inline, no
 * libc call, no allocation (the valgrind tool links no libc). */
#ifndef LP_COLLECT_PHASE_SAMPLER_H
#define LP_COLLECT_PHASE_SAMPLER_H

#include "collect/protocol.h"
#include "common/phase-core.h"
#include "common/rng.h"

#include <stdint.h>

#define LP_PHASE_OUT 64 /* interval records buffered per thread */
/* Fewer pcs than this (a thread's short last interval) are too few to
 * classify: the interval takes the phase predicted for it. */
#define LP_PHASE_MIN_TICKS (LP_PHASE_TICKS / 8)

struct lp_phase_policy {
	uint32_t nlines;
	uint64_t interval, target;
	double full_rate, low_rate, tick_rate, threshold;
	uint64_t bias; /* the main executable's load bias */
	struct lp_phase_table table;
	uint64_t sampled[LP_PHASE_TABLE_MAX]; /* sampled references per phase */
	/* the phase that followed each phase last (+1; 0: none yet): the
	 * predictor */
	uint32_t next[LP_PHASE_TABLE_MAX];
};

/* Per thread (zeroed memory is the state of a thread before its first
 * interval). */
struct lp_phase_thread {
	struct lp_phase_sig sig;   /* this interval's pcs */
	uint64_t begin_refs;       /* references before this interval */
	uint64_t begin[LP_MAX_LINE_SIZES]; /* line-access clocks at its start */
	uint32_t predicted;        /* the previous interval's phase */
	int started;               /* an interval was classified already */
	double keep;               /* chance that a tick is a sample in this interval */
	uint64_t sampled;          /* sampled references in this interval */
	struct lp_msg_phase out[LP_PHASE_OUT];
	uint32_t nout;
};

/* A new process image (fork): forget the phases. */
static inline void lp_phase_policy_reset(struct lp_phase_policy *p)
{
	p->table.n = 0;
	for (uint32_t k = 0; k < LP_PHASE_TABLE_MAX; k++) {
		p->table.intervals[k] = 0;
		p->sampled[k] = 0;
		p->next[k] = 0;
	}
}

/* The settings: sampling rate `rate`, `low_rate` in a phase that has
 * `target` sampled references (out of [0, rate]: rate / 32), `interval`
 * references per interval (>= LP_PHASE_TICKS), `nlines` line sizes. */
static inline void lp_phase_policy_init(struct lp_phase_policy *p, double rate, double low_rate,
					uint64_t target, double threshold, uint64_t interval,
					uint32_t nlines, uint64_t bias)
{
	double tick = (double)LP_PHASE_TICKS / (double)interval;

	p->nlines = nlines < LP_MAX_LINE_SIZES ? nlines : LP_MAX_LINE_SIZES;
	p->interval = interval;
	p->target = target;
	p->full_rate = rate;
	p->low_rate = low_rate >= 0 && low_rate <= rate ? low_rate : rate / 32;
	p->threshold = threshold;
	p->tick_rate = rate > tick ? rate : tick;
	p->bias = bias;
	lp_phase_policy_reset(p);
}

/* The thread's first interval runs at the full rate. */
static inline void lp_phase_first(const struct lp_phase_policy *p, struct lp_phase_thread *ph)
{
	if (!ph->started && !ph->sig.total)
		ph->keep = p->full_rate / p->tick_rate;
}

/* At a tick at reference number `now` (0-based) of the thread: 1 when
 * its interval has ended before it (call lp_phase_end first). */
static inline int lp_phase_due(const struct lp_phase_policy *p, struct lp_phase_thread *ph,
			       uint64_t now)
{
	lp_phase_first(p, ph);
	return now - ph->begin_refs >= p->interval;
}

/* The thread ends after refs references: 1 when its last interval,
 * however short, is to be ended (lp_phase_end). */
static inline int lp_phase_closing(const struct lp_phase_policy *p, struct lp_phase_thread *ph,
				   uint64_t refs)
{
	if (refs <= ph->begin_refs)
		return 0;
	lp_phase_first(p, ph);
	return 1;
}

/* End the interval at reference end_refs with end_extra[i] extra line
 * accesses before it: classify it, record it in ph->out (the caller
 * sends before it fills), choose the next one's rate. */
static inline void lp_phase_end(struct lp_phase_policy *p, struct lp_phase_thread *ph,
				uint32_t thread, uint64_t end_refs, const uint64_t *end_extra)
{
	struct lp_msg_phase *r;
	uint32_t phase, predict;
	double rate = ph->keep * p->tick_rate; /* this interval's, before the next one's is chosen */

	if (ph->sig.total >= LP_PHASE_MIN_TICKS || (!ph->started && ph->sig.total))
		phase = lp_phase_classify(&p->table, &ph->sig, p->threshold);
	else
		phase = ph->predicted;
	p->sampled[phase] += ph->sampled;
	if (ph->started)
		p->next[ph->predicted] = phase + 1;
	predict = p->next[phase] ? p->next[phase] - 1 : phase;
	ph->keep = (p->sampled[predict] >= p->target ? p->low_rate : p->full_rate) / p->tick_rate;

	if (ph->nout < LP_PHASE_OUT) {
		r = &ph->out[ph->nout++];
		for (uint32_t i = 0; i < LP_MAX_LINE_SIZES; i++)
			r->begin[i] = r->accesses[i] = 0;
		for (uint32_t i = 0; i < p->nlines; i++) {
			r->begin[i] = ph->begin[i];
			r->accesses[i] = end_refs + end_extra[i] - ph->begin[i];
			ph->begin[i] = end_refs + end_extra[i];
		}
		r->references = end_refs - ph->begin_refs;
		r->rate = rate;
		r->thread = thread;
		r->phase = phase;
	}
	ph->begin_refs = end_refs;
	ph->predicted = phase;
	ph->started = 1;
	for (int b = 0; b < LP_PHASE_BUCKETS; b++)
		ph->sig.count[b] = 0;
	ph->sig.total = 0;
	ph->sampled = 0;
}

/* The tick's pc into the signature; 1 when the reference is sampled
 * (with the interval's keep chance), 0 when it is only counted. */
static inline int lp_phase_take(const struct lp_phase_policy *p, struct lp_phase_thread *ph,
				struct lp_rng *rng, uint64_t pc)
{
	int sampled;

	lp_phase_sig_add(&ph->sig, pc - p->bias);
	sampled = ph->keep >= 1.0 || lp_rng_double(rng) < ph->keep;
	ph->sampled += (uint64_t)sampled;
	return sampled;
}

#endif
