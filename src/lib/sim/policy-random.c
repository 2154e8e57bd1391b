/* Replacement policy: random.
 *
 * Rules (reproducible, so a test can replay them): a set that is not full
 * fills its lowest invalid way; a miss in a full set evicts way
 * lp_rng_below(rng, ways), one draw of the cache's xoshiro256** generator
 * (seeded with the cache's seed) per such miss and no draw otherwise. The
 * generator is shared by all sets, in access order. */
#include "sim/sim-internal.h"

#include <stdlib.h>

static int random_init(struct lp_cache *c)
{
	c->head = calloc(c->sets, sizeof(*c->head)); /* ways filled so far */
	return c->head ? 0 : LP_ENOMEM;
}

static inline void random_hit(struct lp_cache *c, uint64_t set, uint64_t way)
{
}

static inline uint64_t random_victim(struct lp_cache *c, uint64_t set)
{
	if (c->head[set] < c->ways)
		return c->head[set]++;
	return lp_rng_below(&c->rng, c->ways);
}

LP_SIM_DEFINE_BATCH(random_batch, random_hit, random_victim, random_hit)

const struct lp_policy lp_policy_random = {
	.name = "random",
	.init = random_init,
	.batch = random_batch,
};
