/* Online phase detection and phase-guided sampling (record --phases;
 * docs/runtime.md, "Phase detection"; Vestberg §2.5 and §5.3).
 *
 * Each thread cuts its references into intervals of LOCPROF_PHASES
 * references. The countdown of the hot path runs at the tick rate, which
 * gives about LP_PHASE_TICKS ticks per interval (or the sampling rate, if
 * higher): each tick adds its pc to the interval's signature
 * (common/phase-core.h) and is a sampled reference with the interval's
 * keep chance, so that the samples remain a Bernoulli process of the
 * interval's rate (thinning a Bernoulli process is one). An interval runs
 * at the full rate while the phase predicted for it has fewer sampled
 * references than LOCPROF_PHASE_SAMPLES, else at LOCPROF_PHASE_RATE (0:
 * none). The prediction is the phase that followed the thread's last
 * phase the last time it ended (a first-order Markov predictor), else
 * the last phase itself. With the last phase alone (ScarPhase's
 * last-value predictor) a phase that always follows another one is
 * sampled at the rate its predecessor's count decides: on the solver of
 * examples/phases.c the second sweep always followed a transition
 * interval whose phase, sampled at the low rate, never reached its
 * count, so the sweep ran at the full rate all along (1.1 times fewer
 * samples than a constant rate, 3.4 with this predictor). At its end
 * the signature gives its phase, which takes the interval's sampled
 * references; the interval, its phase and its rate go to the collector,
 * and the models weigh each phase by its line accesses.
 *
 * The phase table is the process's, so that all threads name phases
 * alike; it is taken with a spin lock once per interval (a million
 * references by default), never on the per-access path.
 */
#include "rt-phase.h"

#include <link.h>
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* Fewer pcs than this (a thread's short last interval) are too few to
 * classify: the interval takes the phase predicted for it. */
#define MIN_TICKS (LP_PHASE_TICKS / 8)

static struct {
	int on;
	uint32_t nlines;
	uint64_t interval, target;
	double full_rate, low_rate, tick_rate, threshold;
	atomic_flag lock;
	struct lp_phase_table table;
	uint64_t sampled[LP_PHASE_TABLE_MAX]; /* sampled references per phase */
	/* the phase that followed each phase last (+1; 0: none yet): the
	 * predictor */
	uint32_t next[LP_PHASE_TABLE_MAX];
	/* The main executable's load bias: a pc is hashed as its link-time
	 * address, so that address-space randomisation does not move code
	 * between buckets from one run to the next (the same program then
	 * gets the same phases and the same samples at the same seed). */
	uintptr_t bias;
} g_ph = { .lock = ATOMIC_FLAG_INIT };

static int main_bias(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	*(uintptr_t *)data = (uintptr_t)info->dlpi_addr;
	return 1; /* the first object is the main executable */
}

static double env_double(const char *name, double dflt)
{
	const char *s = getenv(name);
	char *end;
	double v;

	if (!s || !*s)
		return dflt;
	v = strtod(s, &end);
	return *end ? dflt : v;
}

int lp_rt_phase_setup(double rate, uint32_t nlines)
{
	const char *s = getenv(LP_ENV_PHASES);

	g_ph.on = 0;
	if (!s || !*s)
		return 0;
	g_ph.interval = strtoull(s, NULL, 10);
	if (g_ph.interval < LP_PHASE_TICKS)
		return 0;
	g_ph.nlines = nlines;
	g_ph.full_rate = rate;
	g_ph.low_rate = env_double(LP_ENV_PHASE_RATE, rate / 32);
	if (!(g_ph.low_rate >= 0 && g_ph.low_rate <= rate))
		g_ph.low_rate = rate / 32;
	g_ph.target = (uint64_t)env_double(LP_ENV_PHASE_SAMPLES, 4000);
	g_ph.threshold = env_double(LP_ENV_PHASE_THRESHOLD, LP_PHASE_THRESHOLD);
	g_ph.tick_rate = fmax(rate, (double)LP_PHASE_TICKS / (double)g_ph.interval);
	g_ph.bias = 0;
	dl_iterate_phdr(main_bias, &g_ph.bias);
	lp_rt_phase_reset();
	g_ph.on = 1;
	return 1;
}

double lp_rt_phase_tick_rate(void)
{
	return g_ph.tick_rate;
}

uint64_t lp_rt_phase_interval(void)
{
	return g_ph.interval;
}

void lp_rt_phase_reset(void)
{
	atomic_flag_clear(&g_ph.lock);
	memset(&g_ph.table, 0, sizeof(g_ph.table));
	memset(g_ph.sampled, 0, sizeof(g_ph.sampled));
	memset(g_ph.next, 0, sizeof(g_ph.next));
}

/* End the interval at reference end_refs with end_extra[i] extra line
 * accesses before it: classify it, record it, choose the next one's rate. */
static void rt_phase_end(struct lp_rt_phase_thread *ph, uint32_t thread, uint64_t end_refs,
			 const uint64_t *end_extra)
{
	struct lp_msg_phase *r;
	uint32_t phase, predict;

	while (atomic_flag_test_and_set_explicit(&g_ph.lock, memory_order_acquire))
		;
	if (ph->sig.total >= MIN_TICKS || (!ph->started && ph->sig.total))
		phase = lp_phase_classify(&g_ph.table, &ph->sig, g_ph.threshold);
	else
		phase = ph->predicted;
	g_ph.sampled[phase] += ph->sampled;
	if (ph->started)
		g_ph.next[ph->predicted] = phase + 1;
	predict = g_ph.next[phase] ? g_ph.next[phase] - 1 : phase;
	ph->keep = (g_ph.sampled[predict] >= g_ph.target ? g_ph.low_rate : g_ph.full_rate) / g_ph.tick_rate;
	atomic_flag_clear_explicit(&g_ph.lock, memory_order_release);

	if (ph->nout < LP_RT_PHASE_OUT) { /* the caller sends before it fills */
		r = &ph->out[ph->nout++];
		memset(r, 0, sizeof(*r));
		for (uint32_t i = 0; i < g_ph.nlines && i < LP_MAX_LINE_SIZES; i++) {
			r->begin[i] = ph->begin[i];
			r->accesses[i] = end_refs + end_extra[i] - ph->begin[i];
			ph->begin[i] = end_refs + end_extra[i];
		}
		r->references = end_refs - ph->begin_refs;
		r->rate = ph->keep * g_ph.tick_rate;
		r->thread = thread;
		r->phase = phase;
	}
	ph->begin_refs = end_refs;
	ph->predicted = phase;
	ph->started = 1;
	memset(&ph->sig, 0, sizeof(ph->sig));
	ph->sampled = 0;
}

int lp_rt_phase_tick(struct lp_rt_phase_thread *ph, struct lp_rng *rng, uint32_t thread, uint64_t pc,
		     uint64_t now, const uint64_t *ex)
{
	int sampled;

	if (!ph->started && !ph->sig.total)
		ph->keep = g_ph.full_rate / g_ph.tick_rate; /* the thread's first interval */
	if (now - ph->begin_refs >= g_ph.interval)
		rt_phase_end(ph, thread, now, ex);
	lp_phase_sig_add(&ph->sig, pc - g_ph.bias);
	sampled = ph->keep >= 1.0 || lp_rng_double(rng) < ph->keep;
	ph->sampled += (uint64_t)sampled;
	return sampled;
}

void lp_rt_phase_close(struct lp_rt_phase_thread *ph, uint32_t thread, uint64_t refs,
		       const uint64_t *extra)
{
	if (!g_ph.on || refs <= ph->begin_refs)
		return;
	if (!ph->started && !ph->sig.total)
		ph->keep = g_ph.full_rate / g_ph.tick_rate;
	rt_phase_end(ph, thread, refs, extra);
}
