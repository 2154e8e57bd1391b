/* Internal: the cache structure shared by the policy files.
 *
 * Storage is one array of tags, set-major (slot = set * ways + way), with
 * LP_NO_LINE in invalid ways. Looking a line up scans its set when the set
 * is small (<= LP_SCAN_WAYS ways: a scan of 8 contiguous tags is cheaper
 * than any hashing) and otherwise goes through a hash index line -> slot,
 * so that a fully-associative 64 MiB cache costs O(1) per access.
 *
 * Each policy file defines three static inline operations (hit, victim,
 * fill) and instantiates LP_SIM_DEFINE_BATCH with them: the per-line loop
 * then contains no indirect call; only the batch function is reached
 * through the policy table (rule 7 of DESIGN.md). */
#ifndef LP_SIM_INTERNAL_H
#define LP_SIM_INTERNAL_H

#include <locprof/sim.h>

#include "common/hash.h"
#include "common/rng.h"

#define LP_NO_LINE UINT64_MAX
#define LP_SCAN_WAYS 32
#define LP_NONE32 UINT32_MAX

struct lp_cache;

struct lp_policy {
	const char *name;
	int needs_pow2_ways;
	/* allocate and initialise the policy's state (c->u) */
	int (*init)(struct lp_cache *c);
	size_t (*batch)(struct lp_cache *c, const uint64_t *lines, size_t n, uint8_t *hit,
			uint64_t *miss_out);
};

extern const struct lp_policy lp_policy_lru, lp_policy_fifo, lp_policy_random, lp_policy_plru;

struct lp_cache {
	struct lp_cache_spec spec;
	const struct lp_policy *pol;
	uint64_t sets, ways, set_mask;
	int set_modulo;        /* sets is not a power of two: the set is line % sets */
	uint64_t *tags;
	/* hash index (ways > LP_SCAN_WAYS): slot + 1, 0 = empty */
	uint32_t *index;
	uint64_t index_mask;
	/* policy state: lists for LRU, a counter per set for FIFO, random, PLRU */
	uint32_t *prev, *next; /* per slot, way numbers */
	uint32_t *head, *tail; /* per set */
	uint8_t *bits;         /* PLRU tree, per set ways bytes (node 1..ways-1) */
	uint64_t *stamp, clock; /* LRU of 17..32 ways: time of last use per slot */
	uint8_t *ages;          /* LRU of <= 16 ways: 16 age bytes per set */
	struct lp_rng rng;
	uint64_t accesses, misses;
};

/* The set of a line: its low bits where the set count is a power of two,
 * else line % sets (docs/simulator.md, "Sets"). The branch goes the same
 * way for a whole run, so it is predicted. */
static inline uint64_t lp_cache_set_of(const struct lp_cache *c, uint64_t line)
{
	return __builtin_expect(c->set_modulo, 0) ? line % c->sets : line & c->set_mask;
}

/* The way holding line in set, or -1. */
static inline int64_t lp_cache_find(const struct lp_cache *c, uint64_t set, uint64_t line)
{
	if (c->ways <= LP_SCAN_WAYS) {
		const uint64_t *t = c->tags + set * c->ways;
		for (uint64_t w = 0; w < c->ways; w++)
			if (t[w] == line)
				return (int64_t)w;
		return -1;
	}
	for (uint64_t h = lp_hash64(line) & c->index_mask;; h = (h + 1) & c->index_mask) {
		uint32_t v = c->index[h];
		if (!v)
			return -1;
		if (c->tags[v - 1] == line)
			return (int64_t)(v - 1 - set * c->ways);
	}
}

/* Put line into slot set*ways+way, replacing what was there (hash index
 * kept in step when there is one). */
void lp_cache_index_replace(struct lp_cache *c, uint64_t slot, uint64_t line);

static inline void lp_cache_install(struct lp_cache *c, uint64_t set, uint64_t way, uint64_t line)
{
	uint64_t slot = set * c->ways + way;

	if (c->ways > LP_SCAN_WAYS)
		lp_cache_index_replace(c, slot, line);
	else
		c->tags[slot] = line;
}

#define LP_SIM_DEFINE_BATCH(fn, HIT, VICTIM, FILL)                                              \
	static size_t fn(struct lp_cache *c, const uint64_t *lines, size_t n, uint8_t *hit,     \
			 uint64_t *miss_out)                                                    \
	{                                                                                       \
		size_t nm = 0;                                                                  \
		for (size_t i = 0; i < n; i++) {                                                \
			uint64_t line = lines[i], set = lp_cache_set_of(c, line);               \
			int64_t w = lp_cache_find(c, set, line);                                \
			if (w >= 0) {                                                           \
				HIT(c, set, (uint64_t)w);                                       \
				if (hit)                                                        \
					hit[i] = 1;                                             \
				continue;                                                       \
			}                                                                       \
			uint64_t v = VICTIM(c, set);                                            \
			lp_cache_install(c, set, v, line);                                      \
			FILL(c, set, v);                                                        \
			if (hit)                                                                \
				hit[i] = 0;                                                     \
			if (miss_out)                                                           \
				miss_out[nm] = line;                                            \
			nm++;                                                                   \
		}                                                                               \
		c->accesses += n;                                                               \
		c->misses += nm;                                                                \
		return nm;                                                                      \
	}

/* First and last line a reference touches (size 0 counts as 1 byte; a
 * reference running past the top of the address space stops there). */
static inline void lp_ref_lines(const struct lp_ref *r, unsigned shift, uint64_t *first, uint64_t *last)
{
	uint64_t end = r->addr + (r->size ? r->size - 1 : 0);

	if (end < r->addr)
		end = UINT64_MAX;
	*first = r->addr >> shift;
	*last = end >> shift;
}

/* Internal helpers shared by the simulators. */
int lp_parse_size_bytes(const char *s, uint64_t *out);
static inline unsigned lp_log2_u64(uint64_t x)
{
	return 63u - (unsigned)__builtin_clzll(x);
}

/* The single-size LRU / cold detector used for the 3C split: returns 0 for
 * the first touch of a line ever, 1 for a hit, 2 for a miss. Built on
 * lp_graph with one size. */
int lp_graph_access_one(struct lp_graph *g, uint64_t line);

#endif
