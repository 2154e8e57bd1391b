/* Online phase detection and phase-guided sampling in the runtime
 * (record --phases; docs/runtime.md, "Phase detection"; Vestberg §2.5
 * and §5.3). The policy is collect/phase-sampler.h, shared with the
 * valgrind tool: here are its settings, read from the environment the
 * recorder gives the program, the main executable's load bias, and the
 * lock around the process's phase table.
 *
 * The phase table is the process's, so that all threads name phases
 * alike; it is taken with a spin lock once per interval (a million
 * references by default), never on the per-access path.
 */
#include "rt-phase.h"

#include <link.h>
#include <stdatomic.h>
#include <stdlib.h>

static struct {
	int on;
	atomic_flag lock;
	struct lp_phase_policy pol;
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
	uint64_t interval;
	uintptr_t bias = 0;

	g_ph.on = 0;
	if (!s || !*s)
		return 0;
	interval = strtoull(s, NULL, 10);
	if (interval < LP_PHASE_TICKS)
		return 0;
	/* a pc is hashed as its link-time address (phase-sampler.h) */
	dl_iterate_phdr(main_bias, &bias);
	lp_phase_policy_init(&g_ph.pol, rate, env_double(LP_ENV_PHASE_RATE, rate / 32),
			     (uint64_t)env_double(LP_ENV_PHASE_SAMPLES, 4000),
			     env_double(LP_ENV_PHASE_THRESHOLD, LP_PHASE_THRESHOLD), interval, nlines, bias);
	lp_rt_phase_reset();
	g_ph.on = 1;
	return 1;
}

double lp_rt_phase_tick_rate(void)
{
	return g_ph.pol.tick_rate;
}

uint64_t lp_rt_phase_interval(void)
{
	return g_ph.pol.interval;
}

void lp_rt_phase_reset(void)
{
	atomic_flag_clear(&g_ph.lock);
	lp_phase_policy_reset(&g_ph.pol);
}

static void rt_phase_end(struct lp_phase_thread *ph, uint32_t thread, uint64_t end_refs,
			 const uint64_t *end_extra)
{
	while (atomic_flag_test_and_set_explicit(&g_ph.lock, memory_order_acquire))
		;
	lp_phase_end(&g_ph.pol, ph, thread, end_refs, end_extra);
	atomic_flag_clear_explicit(&g_ph.lock, memory_order_release);
}

int lp_rt_phase_tick(struct lp_phase_thread *ph, struct lp_rng *rng, uint32_t thread, uint64_t pc,
		     uint64_t now, const uint64_t *ex)
{
	if (lp_phase_due(&g_ph.pol, ph, now))
		rt_phase_end(ph, thread, now, ex);
	return lp_phase_take(&g_ph.pol, ph, rng, pc);
}

void lp_rt_phase_close(struct lp_phase_thread *ph, uint32_t thread, uint64_t refs,
		       const uint64_t *extra)
{
	if (g_ph.on && lp_phase_closing(&g_ph.pol, ph, refs))
		rt_phase_end(ph, thread, refs, extra);
}
