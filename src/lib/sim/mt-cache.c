/* The private cache of the multi-threaded simulator: lookups, fills with
 * the victim reported, and invalidation (rules in mt-internal.h). Sets of
 * up to LP_SCAN_WAYS ways are scanned; larger ones (fully-associative
 * private caches) find a line through a hash index, and their victim at
 * the tail of a list kept in the policy's order (a scan of the stamps
 * made `simulate --private 1M:full:64` of 45.8 M references take 69 s,
 * four fifths of it here). */
#include "sim/mt-internal.h"

#include "common/error.h"

#include <stdlib.h>
#include <string.h>

/* The order lists and free heaps of a cache of large sets: every way
 * free, in order (a sorted array is a min-heap). */
static int order_init(struct lp_pcache *c)
{
	uint64_t n = c->sets * c->ways;

	c->prev = malloc(n * sizeof(*c->prev));
	c->next = malloc(n * sizeof(*c->next));
	c->free_ways = malloc(n * sizeof(*c->free_ways));
	c->head = malloc(c->sets * sizeof(*c->head));
	c->tail = malloc(c->sets * sizeof(*c->tail));
	c->nfree = malloc(c->sets * sizeof(*c->nfree));
	if (!c->prev || !c->next || !c->free_ways || !c->head || !c->tail || !c->nfree)
		return -1;
	for (uint64_t s = 0; s < c->sets; s++) {
		c->head[s] = c->tail[s] = LP_NONE32;
		c->nfree[s] = (uint32_t)c->ways;
		for (uint64_t w = 0; w < c->ways; w++)
			c->free_ways[s * c->ways + w] = (uint32_t)w;
	}
	return 0;
}

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
	    (c->ways > LP_SCAN_WAYS && (lp_htab_init(&c->index, 64) < 0 || order_init(c) < 0))) {
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
	free(c->prev);
	free(c->next);
	free(c->head);
	free(c->tail);
	free(c->free_ways);
	free(c->nfree);
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

/* Set `set`'s order list: way w out of it, or in at its head. */
static void order_unlink(struct lp_pcache *c, uint64_t set, uint32_t w)
{
	uint32_t *pv = c->prev + set * c->ways, *nx = c->next + set * c->ways;

	if (pv[w] != LP_NONE32)
		nx[pv[w]] = nx[w];
	else
		c->head[set] = nx[w];
	if (nx[w] != LP_NONE32)
		pv[nx[w]] = pv[w];
	else
		c->tail[set] = pv[w];
}

static void order_push(struct lp_pcache *c, uint64_t set, uint32_t w)
{
	uint32_t *pv = c->prev + set * c->ways, *nx = c->next + set * c->ways;

	pv[w] = LP_NONE32;
	nx[w] = c->head[set];
	if (c->head[set] != LP_NONE32)
		pv[c->head[set]] = w;
	else
		c->tail[set] = w;
	c->head[set] = w;
}

/* Set `set`'s free ways: the lowest out, or w in (a binary min-heap). */
static uint32_t free_pop(struct lp_pcache *c, uint64_t set)
{
	uint32_t *h = c->free_ways + set * c->ways, n = --c->nfree[set], top = h[0], x = h[n], i = 0;

	for (uint32_t k; (k = 2 * i + 1) < n; i = k) {
		if (k + 1 < n && h[k + 1] < h[k])
			k++;
		if (h[k] >= x)
			break;
		h[i] = h[k];
	}
	h[i] = x;
	return top;
}

static void free_push(struct lp_pcache *c, uint64_t set, uint32_t w)
{
	uint32_t *h = c->free_ways + set * c->ways, i = c->nfree[set]++;

	for (; i && h[(i - 1) / 2] > w; i = (i - 1) / 2)
		h[i] = h[(i - 1) / 2];
	h[i] = w;
}

/* The way a miss in a large set fills (the lowest invalid one, else the
 * policy's), taken out of the order list or the free heap. */
static uint64_t victim_way_large(struct lp_pcache *c, uint64_t set)
{
	uint32_t w;

	if (c->nfree[set])
		return free_pop(c, set);
	w = c->policy == LP_PCACHE_RANDOM ? (uint32_t)lp_rng_below(&c->rng, c->ways) : c->tail[set];
	order_unlink(c, set, w);
	return w;
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
		if (c->policy == LP_PCACHE_LRU) {
			c->stamp[slot] = c->clock;
			if (c->head) {
				uint64_t st = (uint64_t)slot / c->ways;
				order_unlink(c, st, (uint32_t)((uint64_t)slot % c->ways));
				order_push(c, st, (uint32_t)((uint64_t)slot % c->ways));
			}
		}
		return 1;
	}
	if (c->ways > LP_SCAN_WAYS && lp_htab_reserve(&c->index, 1) < 0)
		return lp_seterr(LP_ENOMEM, "out of memory");
	set = set_of(c, line);
	if (c->head) {
		way = victim_way_large(c, set);
		order_push(c, set, (uint32_t)way);
	} else {
		way = victim_way(c, set);
	}
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
	if (c->head) {
		order_unlink(c, (uint64_t)slot / c->ways, (uint32_t)((uint64_t)slot % c->ways));
		free_push(c, (uint64_t)slot / c->ways, (uint32_t)((uint64_t)slot % c->ways));
	}
	set_index(c, line, 0);
	return 1;
}
