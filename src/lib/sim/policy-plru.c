/* Replacement policy: tree pseudo-LRU.
 *
 * Rules: a set of W ways (W a power of two) has W-1 bits forming a binary
 * tree, node 1 the root, children of node n are 2n and 2n+1, leaf W+w is
 * way w. A bit says which child the victim search follows (0 left, 1
 * right). A hit or a fill of way w sets every bit on the path from the root
 * to w to point away from w. A set that is not full fills its lowest
 * invalid way first (without consulting the tree). */
#include "sim/sim-internal.h"

#include <stdlib.h>

static int plru_init(struct lp_cache *c)
{
	c->head = calloc(c->sets, sizeof(*c->head)); /* ways filled so far */
	c->bits = calloc(c->sets, c->ways);          /* byte per node; node 0 unused */
	return c->head && c->bits ? 0 : LP_ENOMEM;
}

static inline void plru_touch(struct lp_cache *c, uint64_t set, uint64_t way)
{
	uint8_t *b = c->bits + set * c->ways;

	for (uint64_t node = way + c->ways; node > 1; node >>= 1)
		b[node >> 1] = !(node & 1);
}

static inline uint64_t plru_victim(struct lp_cache *c, uint64_t set)
{
	const uint8_t *b = c->bits + set * c->ways;
	uint64_t node = 1;

	if (c->head[set] < c->ways)
		return c->head[set]++;
	while (node < c->ways)
		node = 2 * node + b[node];
	return node - c->ways;
}

LP_SIM_DEFINE_BATCH(plru_batch, plru_touch, plru_victim, plru_touch)

const struct lp_policy lp_policy_plru = {
	.name = "plru",
	.needs_pow2_ways = 1,
	.init = plru_init,
	.batch = plru_batch,
};
