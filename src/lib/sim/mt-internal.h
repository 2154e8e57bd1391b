/* Internal: the private cache of the multi-threaded simulator.
 *
 * A set-associative cache whose lines can also be removed from outside
 * (an invalidation), and which tells which line a fill evicted, so that
 * the directory of mt-sim.c knows exactly which cores hold a line. The
 * fast lp_cache has neither (its policies assume a set fills its ways in
 * order and never gets a hole back). Policies lru, fifo and random follow
 * the rules of lp_cache: a set with an invalid way fills its lowest one;
 * a full set evicts the least recently used way (lru), the way filled
 * longest ago (fifo), or way lp_rng_below(rng, ways) (random, one draw per
 * such miss). Without invalidations it makes the same choices as
 * lp_cache with the same spec and seed (tests/unit/sim/test-mtsim.c). */
#ifndef LP_SIM_MT_INTERNAL_H
#define LP_SIM_MT_INTERNAL_H

#include "sim/sim-internal.h"

#include "common/htab.h"

struct lp_pcache {
	uint64_t sets, ways, set_mask;
	int set_modulo;
	int policy;        /* LP_PCACHE_LRU, ... */
	uint64_t *tags;    /* set-major; LP_NO_LINE = invalid */
	uint64_t *stamp;   /* lru: last use; fifo: fill time */
	uint32_t *nvalid;  /* valid ways per set */
	uint64_t clock;
	struct lp_rng rng;
	struct lp_htab index; /* ways > LP_SCAN_WAYS: line -> slot + 1 (0 = gone) */
	/* ways > LP_SCAN_WAYS: each set's valid ways in a list by the
	 * policy's order (lru: last use, fifo: fill; the head the newest,
	 * the tail the victim), and its invalid ways in a min-heap (the
	 * lowest is filled first, as a scan would), so that a miss costs no
	 * scan of 16 384 ways (1M:full:64) */
	uint32_t *prev, *next, *head, *tail;
	uint32_t *free_ways, *nfree;
};

enum { LP_PCACHE_LRU, LP_PCACHE_FIFO, LP_PCACHE_RANDOM };

/* The spec must have passed lp_cache_spec_check(); LP_EINVAL for a policy
 * other than lru, fifo, random. */
int lp_pcache_init(struct lp_pcache *c, const struct lp_cache_spec *spec, uint64_t seed);
void lp_pcache_release(struct lp_pcache *c);
/* Access one line: 1 on a hit, 0 on a miss (the line is filled, and
 * *victim is the line it evicted or LP_NO_LINE), LP_ENOMEM. */
int lp_pcache_access(struct lp_pcache *c, uint64_t line, uint64_t *victim);
/* 1 when the line is present. */
int lp_pcache_holds(struct lp_pcache *c, uint64_t line);
/* Remove the line; 1 when it was present. */
int lp_pcache_invalidate(struct lp_pcache *c, uint64_t line);

#endif
