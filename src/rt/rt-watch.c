/* The runtime's watches: the shadow shared by the threads, the coarse
 * maps of lp_rt_range_watched() and the exact table of each thread. */
#include "rt-thread.h"

/* ---- watches ----------------------------------------------------------------
 * Exact table, per thread: the watch-table core (common/watch-core.h).
 * Shadow (rt.h), shared by the threads: a count
 * per 64-byte granule, incremented for every granule a watch's line covers
 * and decremented when it ends, so it never needs cleaning; a count that
 * reaches 255 stays there (a false positive costs only a table lookup).
 * Another thread's watch sends an access to rt-share.c. Relaxed atomics:
 * the thread that set a watch sees it in program order; for the others
 * it is shared time, which tolerates a late view. */

/* The granules a watch covers: [*first, *first + n). */
static uint64_t rt_granules(const struct lp_watch *w, uint64_t *first)
{
	uint32_t shift = lp_rt_line_shift(w->idx);

	if (shift <= LP_RT_GRANULE_SHIFT) {
		*first = (w->line << shift) >> LP_RT_GRANULE_SHIFT;
		return 1;
	}
	*first = w->line << (shift - LP_RT_GRANULE_SHIFT);
	return 1ull << (shift - LP_RT_GRANULE_SHIFT);
}

void lp_rt_shadow_add(const struct lp_watch *w, int delta)
{
	uint64_t first, n = rt_granules(w, &first);

	for (uint64_t k = 0; k < n; k++) {
		uint8_t *e = (uint8_t *)(uintptr_t)(LP_RT_SHADOW + first + k), v;
		if (first + k >= LP_RT_SHADOW_BYTES)
			continue; /* no user address maps there */
		v = __atomic_load_n(e, __ATOMIC_RELAXED);
		do {
			if (v == 255 || (v == 0 && delta < 0)) /* saturated; never below 0 */
				break;
		} while (!__atomic_compare_exchange_n(e, &v, (uint8_t)(v + delta), 1, __ATOMIC_RELAXED,
						      __ATOMIC_RELAXED));
	}
}

/* Take every live watch of a thread off the shadow and out of its table:
 * the thread is ending (its watches were just sent as dangling samples),
 * or it is a parent's thread in a forked child. Emptying the table makes
 * this idempotent: a thread that ended in the parent before the fork is
 * dropped again in the child, and must not take its watches off twice
 * (the counts would wrap to 255, a false positive for good). */
void lp_rt_shadow_drop(struct lp_rt_thread *t)
{
	struct lp_watch *w;
	uint64_t pos = 0;

	if (!t->watches.slot)
		return;
	while ((w = lp_watch_table_next(&t->watches, &pos)))
		lp_rt_shadow_add(w, -1);
	lp_watch_table_clear(&t->watches);
}

/* The coarse maps count every granule of every live watch, exactly (no
 * saturation), so a zero entry means no live watch there. */
void lp_rt_coarse_add(struct lp_rt_thread *t, const struct lp_watch *w, int32_t delta)
{
	uint64_t first, n = rt_granules(w, &first);
	const uint32_t gp = PAGE_SHIFT_RT - LP_RT_GRANULE_SHIFT;

	for (uint64_t p = first >> gp; p <= (first + n - 1) >> gp; p++) {
		uint64_t lo = p << gp > first ? p << gp : first;
		uint64_t hi = (p + 1) << gp < first + n ? (p + 1) << gp : first + n;
		uint32_t k = (uint32_t)(hi - lo) * (uint32_t)delta;
		t->pages[p & (PAGE_ENTRIES - 1)] += k;
		t->regions[(p >> (REGION_SHIFT_RT - PAGE_SHIFT_RT)) & (REGION_ENTRIES - 1)] += k;
	}
}

/* Called by the pass's versioned loops once before the loop: may a live
 * watch of this thread cover a byte of [lo, hi)? 0 only if certainly not.
 * Conservative: aliasing in the coarse maps, a range too wide to scan or a
 * runtime busy in a slow path (a signal handler) answer 1. */
int lp_rt_range_watched(uint64_t lo, uint64_t hi)
{
	struct lp_rt_fast *f = &lp_rt_fast;
	struct lp_rt_thread *t = f->t;
	uint64_t r0, r1, p0, p1;

	/* No state (the countdown is 0 or inert) or a finished thread (the
	 * map is the zero map): the per-access checks could not hit either. */
	if (!t || t->dead || !t->watches.live)
		return 0;
	if (f->in_rt)
		return 1;
	if (hi <= lo)
		return hi != lo;
	r0 = lo >> REGION_SHIFT_RT;
	r1 = (hi - 1) >> REGION_SHIFT_RT;
	if (r1 - r0 >= REGION_ENTRIES)
		return 1;
	for (uint64_t r = r0; r <= r1; r++) {
		if (!t->regions[r & (REGION_ENTRIES - 1)])
			continue;
		p0 = r == r0 ? lo >> PAGE_SHIFT_RT : r << (REGION_SHIFT_RT - PAGE_SHIFT_RT);
		p1 = r == r1 ? (hi - 1) >> PAGE_SHIFT_RT : ((r + 1) << (REGION_SHIFT_RT - PAGE_SHIFT_RT)) - 1;
		for (uint64_t p = p0; p <= p1; p++)
			if (t->pages[p & (PAGE_ENTRIES - 1)])
				return 1;
	}
	return 0;
}

void lp_rt_watch_remove(struct lp_rt_thread *t, struct lp_watch *w)
{
	lp_rt_shadow_add(w, -1);
	lp_rt_coarse_add(t, w, -1);
	lp_watch_remove(&t->watches, w);
}

int lp_rt_table_grow(struct lp_rt_thread *t)
{
	struct lp_watch *old = t->watches.slot;
	uint32_t log2 = t->watches.log2;
	struct lp_watch *mem = lp_rt_alloc(lp_watch_table_bytes(log2 + 1));

	if (!mem)
		return -1;
	lp_watch_table_move(&t->watches, mem, log2 + 1);
	lp_rt_free(old, lp_watch_table_bytes(log2));
	return 0;
}
