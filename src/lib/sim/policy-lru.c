/* Replacement policy: least recently used.
 *
 * Rules: the victim is the way used least recently; invalid ways go
 * first. Two representations of the same order:
 *  - small sets (<= LP_SCAN_WAYS ways): a time stamp per way, set on
 *    every hit or fill; the victim is the smallest stamp (invalid ways
 *    have stamp 0). A hit is one store; the scan happens only on a miss.
 *    (32K:8:64 on bench-sim-throughput: 58-64 M lines/s against 52-63
 *    with the list, on a noisy 2-CPU VM.)
 *  - large sets: a doubly-linked recency list per set (way numbers); a
 *    hit or a fill moves the way to the head; the victim is the tail.
 *    Invalid ways start at the tail and are never touched until filled. */
#include "sim/sim-internal.h"

#include <stdlib.h>

static int lru_init(struct lp_cache *c)
{
	uint64_t n = c->sets * c->ways;

	if (c->ways <= LP_SCAN_WAYS) {
		c->stamp = calloc(n, sizeof(*c->stamp));
		return c->stamp ? 0 : LP_ENOMEM;
	}

	c->prev = malloc(n * sizeof(*c->prev));
	c->next = malloc(n * sizeof(*c->next));
	c->head = malloc(c->sets * sizeof(*c->head));
	c->tail = malloc(c->sets * sizeof(*c->tail));
	if (!c->prev || !c->next || !c->head || !c->tail)
		return LP_ENOMEM;
	for (uint64_t s = 0; s < c->sets; s++) {
		uint32_t *p = c->prev + s * c->ways, *nx = c->next + s * c->ways;
		for (uint64_t w = 0; w < c->ways; w++) {
			p[w] = w ? (uint32_t)(w - 1) : LP_NONE32;
			nx[w] = w + 1 < c->ways ? (uint32_t)(w + 1) : LP_NONE32;
		}
		c->head[s] = 0;
		c->tail[s] = (uint32_t)(c->ways - 1);
	}
	return 0;
}

static inline void lru_touch(struct lp_cache *c, uint64_t set, uint64_t way)
{
	uint32_t w = (uint32_t)way;
	uint32_t *p, *nx;

	if (c->ways <= LP_SCAN_WAYS) {
		c->stamp[set * c->ways + way] = ++c->clock;
		return;
	}
	if (c->head[set] == w)
		return;
	p = c->prev + set * c->ways;
	nx = c->next + set * c->ways;
	/* unlink (w is not the head, so it has a predecessor) */
	nx[p[w]] = nx[w];
	if (nx[w] != LP_NONE32)
		p[nx[w]] = p[w];
	else
		c->tail[set] = p[w];
	/* push at the head */
	p[w] = LP_NONE32;
	nx[w] = c->head[set];
	p[c->head[set]] = w;
	c->head[set] = w;
}

static inline uint64_t lru_victim(struct lp_cache *c, uint64_t set)
{
	if (c->ways <= LP_SCAN_WAYS) {
		const uint64_t *st = c->stamp + set * c->ways;
		uint64_t v = 0;
		for (uint64_t w = 1; w < c->ways; w++)
			if (st[w] < st[v])
				v = w;
		return v;
	}
	return c->tail[set];
}

LP_SIM_DEFINE_BATCH(lru_batch, lru_touch, lru_victim, lru_touch)

const struct lp_policy lp_policy_lru = {
	.name = "lru",
	.init = lru_init,
	.batch = lru_batch,
};
