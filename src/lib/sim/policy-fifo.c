/* Replacement policy: first in, first out.
 *
 * Rules: hits change nothing; each set has a pointer to its next victim,
 * advancing round-robin over the ways. Because a set fills its ways in
 * order 0, 1, 2, ... the pointer always names the oldest insertion (or the
 * lowest invalid way while the set is not full). */
#include "sim/sim-internal.h"

#include <stdlib.h>

static int fifo_init(struct lp_cache *c)
{
	c->head = calloc(c->sets, sizeof(*c->head));
	return c->head ? 0 : LP_ENOMEM;
}

static inline void fifo_hit(struct lp_cache *c, uint64_t set, uint64_t way)
{
}

static inline uint64_t fifo_victim(struct lp_cache *c, uint64_t set)
{
	uint32_t v = c->head[set];

	c->head[set] = v + 1 == c->ways ? 0 : v + 1;
	return v;
}

LP_SIM_DEFINE_BATCH(fifo_batch, fifo_hit, fifo_victim, fifo_hit)

const struct lp_policy lp_policy_fifo = {
	.name = "fifo",
	.init = fifo_init,
	.batch = fifo_batch,
};
