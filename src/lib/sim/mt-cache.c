/* The private cache of the multi-threaded simulator: lookups, fills with
 * the victim reported, and invalidation (rules in mt-internal.h). Sets of
 * up to LP_SCAN_WAYS ways are scanned; larger ones (fully-associative
 * private caches) find a line through a hash index. */
#include "sim/mt-internal.h"

#include "common/error.h"

#include <stdlib.h>
#include <string.h>

int lp_pcache_init(struct lp_pcache *c, const struct lp_cache_spec *spec, uint64_t seed)
{
	uint64_t n;

	memset(c, 0, sizeof(*c));
	if (!strcmp(spec->policy, "lru"))
		c->policy = LP_PCACHE_LRU;
	else if (!strcmp(spec->policy, "fifo"))
		c->policy = LP_PCACHE_FIFO;
	else if (!strcmp(spec->policy, "random"))
		c->policy = LP_PCACHE_RANDOM;
	else
		return lp_seterr(LP_EINVAL, "a private cache takes policy lru, fifo or random, not %s",
				 spec->policy);
	c->ways = lp_cache_spec_ways(spec);
	c->sets = lp_cache_spec_sets(spec);
	c->set_mask = c->sets - 1;
	c->set_modulo = (c->sets & (c->sets - 1)) != 0;
	lp_rng_seed(&c->rng, seed);
	n = c->sets * c->ways;
	c->tags = malloc(n * sizeof(*c->tags));
	c->stamp = calloc(n, sizeof(*c->stamp));
	c->nvalid = calloc(c->sets, sizeof(*c->nvalid));
	if (!c->tags || !c->stamp || !c->nvalid ||
	    (c->ways > LP_SCAN_WAYS && lp_htab_init(&c->index, 64) < 0)) {
		lp_pcache_release(c);
		return lp_seterr(LP_ENOMEM, "out of memory");
	}
	for (uint64_t i = 0; i < n; i++)
		c->tags[i] = LP_NO_LINE;
	return 0;
}

void lp_pcache_release(struct lp_pcache *c)
{
	free(c->tags);
	free(c->stamp);
	free(c->nvalid);
	if (c->index.s)
		lp_htab_release(&c->index);
	memset(c, 0, sizeof(*c));
}

static inline uint64_t set_of(const struct lp_pcache *c, uint64_t line)
{
	return c->set_modulo ? line % c->sets : line & c->set_mask;
}

/* The slot holding line, or -1. */
static int64_t find_slot(struct lp_pcache *c, uint64_t line)
{
	uint64_t set = set_of(c, line);

	if (c->ways > LP_SCAN_WAYS) {
		uint64_t *v = lp_htab_find(&c->index, line);
		return v && *v ? (int64_t)(*v - 1) : -1;
	}
	for (uint64_t w = 0, *t = c->tags + set * c->ways; w < c->ways; w++)
		if (t[w] == line)
			return (int64_t)(set * c->ways + w);
	return -1;
}

/* Point the index at slot + 1 (0: gone). The caller reserved room for a
 * new key; a line already indexed needs none. */
static void set_index(struct lp_pcache *c, uint64_t line, uint64_t val)
{
	int isnew;

	if (c->ways > LP_SCAN_WAYS)
		*lp_htab_get(&c->index, line, &isnew) = val;
}

/* The way a miss in set fills: the lowest invalid one, else the policy's. */
static uint64_t victim_way(struct lp_pcache *c, uint64_t set)
{
	const uint64_t *t = c->tags + set * c->ways, *st = c->stamp + set * c->ways;
	uint64_t v = 0;

	if (c->nvalid[set] < c->ways) {
		while (t[v] != LP_NO_LINE)
			v++;
		return v;
	}
	if (c->policy == LP_PCACHE_RANDOM)
		return lp_rng_below(&c->rng, c->ways);
	for (uint64_t w = 1; w < c->ways; w++)
		if (st[w] < st[v])
			v = w;
	return v;
}

int lp_pcache_access(struct lp_pcache *c, uint64_t line, uint64_t *victim)
{
	int64_t slot = find_slot(c, line);
	uint64_t set, way, s;

	c->clock++;
	if (slot >= 0) {
		if (c->policy == LP_PCACHE_LRU)
			c->stamp[slot] = c->clock;
		return 1;
	}
	if (c->ways > LP_SCAN_WAYS && lp_htab_reserve(&c->index, 1) < 0)
		return lp_seterr(LP_ENOMEM, "out of memory");
	set = set_of(c, line);
	way = victim_way(c, set);
	s = set * c->ways + way;
	*victim = c->tags[s];
	if (*victim == LP_NO_LINE)
		c->nvalid[set]++;
	else
		set_index(c, *victim, 0);
	c->tags[s] = line;
	c->stamp[s] = c->clock;
	set_index(c, line, s + 1);
	return 0;
}

int lp_pcache_holds(struct lp_pcache *c, uint64_t line)
{
	return find_slot(c, line) >= 0;
}

int lp_pcache_invalidate(struct lp_pcache *c, uint64_t line)
{
	int64_t slot = find_slot(c, line);

	if (slot < 0)
		return 0;
	c->tags[slot] = LP_NO_LINE;
	c->stamp[slot] = 0;
	c->nvalid[(uint64_t)slot / c->ways]--;
	set_index(c, line, 0);
	return 1;
}
