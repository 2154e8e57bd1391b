/* Replacement policy: least recently used.
 *
 * Rules: each set keeps its ways in a doubly-linked recency list (way
 * numbers, so the state is 8 bytes a way whatever the set size); a hit or a
 * fill moves the way to the head; the victim is the tail. Invalid ways
 * start at the tail and are never touched until filled, so a set that is
 * not full always evicts an invalid way. */
#include "sim/sim-internal.h"

#include <stdlib.h>

static int lru_init(struct lp_cache *c)
{
	uint64_t n = c->sets * c->ways;

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
	return c->tail[set];
}

LP_SIM_DEFINE_BATCH(lru_batch, lru_touch, lru_victim, lru_touch)

const struct lp_policy lp_policy_lru = {
	.name = "lru",
	.init = lru_init,
	.batch = lru_batch,
};
