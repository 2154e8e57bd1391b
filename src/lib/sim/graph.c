/* Working-set graph: fully-associative caches of many sizes, in one pass.
 *
 * Rules: each point is a functional simulation of a fully-associative
 * cache of that size, exactly equal to a separate lp_cache run of
 * "SIZE:full:LINE:POLICY" (tests/unit/sim/test-graph.c checks it).
 *
 * One table of every line ever seen (open addressing, entries never
 * removed) is shared by all sizes and policies, so each access costs one
 * hash lookup whatever the number of sizes. Then:
 *  - LRU: one recency list with a marker at each size boundary (Mattson's
 *    stack with markers). Sizes nest (LRU is a stack algorithm), so the
 *    line's bucket b says it hits in every size >= bucket b and misses in
 *    the smaller ones; moving it to the front pushes one line across each
 *    of the markers in front of b. O(1) lookup + O(b) marker moves, and the
 *    list never holds more than the largest size, where a list + hash per
 *    size would pay 17 lookups and 17 list updates.
 *  - FIFO (not a stack algorithm: Belady's anomaly) keeps, per size, the
 *    number of insertions so far and, per line, the insertion number at
 *    which it last entered: a line is present iff fewer than SIZE
 *    insertions happened since, so no eviction work is ever needed.
 *  - random keeps, per size, the array of slots (entry numbers) and, per
 *    line, its slot in each size; victims are drawn exactly as
 *    policy-random.c does, from one generator per size seeded alike.
 * The tables grow geometrically with the footprint (the number of
 * distinct lines); that is the only allocation after lp_graph_new(). */
#include "sim/sim-internal.h"

#include "common/error.h"

#include <stdlib.h>
#include <string.h>

struct lp_graph {
	size_t k;
	uint64_t line_shift;
	unsigned policies;
	uint64_t size_bytes[LP_GRAPH_MAX_SIZES];
	uint64_t size_lines[LP_GRAPH_MAX_SIZES];

	/* line table: one struct per line so that a lookup and the list
	 * update touch one cache line, not five arrays (measured: 1.6x on the
	 * 17-size LRU graph of bench-sim-throughput) */
	struct gent {
		uint64_t key;
		uint32_t prev, next;
		uint32_t bucket; /* k = not resident */
	} *ent;
	uint32_t *hidx;     /* hash -> entry + 1 */
	uint64_t hmask;
	uint64_t n, cap;    /* entries */

	/* LRU */
	uint32_t head;
	uint32_t tailb[LP_GRAPH_MAX_SIZES];
	uint64_t cnt[LP_GRAPH_MAX_SIZES], bcap[LP_GRAPH_MAX_SIZES];
	uint64_t bucket_hits[LP_GRAPH_MAX_SIZES];

	/* FIFO */
	uint64_t *stamp;    /* per entry x size: insertion number, 0 = never */
	uint64_t ins[LP_GRAPH_MAX_SIZES];
	uint64_t fifo_miss[LP_GRAPH_MAX_SIZES];

	/* random */
	uint32_t *slot_of;  /* per entry x size */
	uint32_t *slots[LP_GRAPH_MAX_SIZES];
	uint64_t fill[LP_GRAPH_MAX_SIZES];
	struct lp_rng rng[LP_GRAPH_MAX_SIZES];
	uint64_t rand_miss[LP_GRAPH_MAX_SIZES];

	uint64_t accesses, cold;

	/* per reference (lp_graph_refs only): the accesses, and per policy and
	 * size the line misses of a reference after its first one there (a
	 * reference's misses are its line misses less these) */
	uint64_t ref_accesses;
	uint64_t overlap[3][LP_GRAPH_MAX_SIZES]; /* LRU, FIFO, random */
	struct lp_ref last;                      /* kind 0xff: none yet */
};

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

int lp_graph_new(struct lp_graph **out, const uint64_t *sizes, size_t n, uint64_t line,
		 unsigned policies, uint64_t seed)
{
	struct lp_graph *g;

	*out = NULL;
	if (!n || n > LP_GRAPH_MAX_SIZES)
		return lp_seterr(LP_EINVAL, "between 1 and %d cache sizes, not %zu", LP_GRAPH_MAX_SIZES, n);
	if (!line || (line & (line - 1)))
		return lp_seterr(LP_EINVAL, "line size %llu is not a power of two", (unsigned long long)line);
	if (!policies || (policies & ~7u))
		return lp_seterr(LP_EINVAL, "no replacement policy chosen");
	if (!(g = calloc(1, sizeof(*g))))
		return lp_seterr(LP_ENOMEM, "out of memory");
	g->last.kind = 0xff;
	g->k = n;
	g->policies = policies;
	g->line_shift = lp_log2_u64(line);
	memcpy(g->size_bytes, sizes, n * sizeof(*sizes));
	qsort(g->size_bytes, n, sizeof(*sizes), cmp_u64);
	for (size_t j = 0; j < n; j++) {
		int err = 0;
		uint64_t sz = g->size_bytes[j];

		if (!sz || sz % line)
			err = lp_seterr(LP_EINVAL, "cache size %llu is not a positive multiple of the line size %llu",
					(unsigned long long)sz, (unsigned long long)line);
		else if (j && sz == g->size_bytes[j - 1])
			err = lp_seterr(LP_EINVAL, "cache size %llu given twice", (unsigned long long)sz);
		else if (sz / line >= LP_NONE32)
			err = lp_seterr(LP_ELIMIT, "cache size %llu has too many lines", (unsigned long long)sz);
		if (err) {
			lp_graph_free(g);
			return err;
		}
		g->size_lines[j] = sz / line;
		g->bcap[j] = g->size_lines[j] - (j ? g->size_lines[j - 1] : 0);
		g->tailb[j] = LP_NONE32;
		lp_rng_seed(&g->rng[j], seed);
		if ((policies & LP_GRAPH_RANDOM) &&
		    !(g->slots[j] = malloc(g->size_lines[j] * sizeof(uint32_t)))) {
			lp_graph_free(g);
			return lp_seterr(LP_ENOMEM, "out of memory");
		}
	}
	g->head = LP_NONE32;
	*out = g;
	return 0;
}

void lp_graph_free(struct lp_graph *g)
{
	if (!g)
		return;
	free(g->ent);
	free(g->hidx);
	free(g->stamp);
	free(g->slot_of);
	for (size_t j = 0; j < g->k; j++)
		free(g->slots[j]);
	free(g);
}

static int grow(struct lp_graph *g)
{
	uint64_t cap = g->cap ? 2 * g->cap : 4096, hcap = 2 * cap;
	size_t k = g->k;
	void *p;

	if (cap >= LP_NONE32)
		return lp_seterr(LP_ELIMIT, "more than %u distinct lines", LP_NONE32 - 1);
#define GROW(field, count)                                                         \
	do {                                                                       \
		if (!(p = realloc(g->field, (count) * sizeof(*g->field))))         \
			return lp_seterr(LP_ENOMEM, "out of memory");              \
		g->field = p;                                                      \
	} while (0)
	GROW(ent, cap);
	if (g->policies & LP_GRAPH_FIFO)
		GROW(stamp, cap * k);
	if (g->policies & LP_GRAPH_RANDOM)
		GROW(slot_of, cap * k);
#undef GROW
	free(g->hidx);
	if (!(g->hidx = calloc(hcap, sizeof(*g->hidx))))
		return lp_seterr(LP_ENOMEM, "out of memory");
	g->hmask = hcap - 1;
	for (uint64_t e = 0; e < g->n; e++) {
		uint64_t h = lp_hash64(g->ent[e].key) & g->hmask;
		while (g->hidx[h])
			h = (h + 1) & g->hmask;
		g->hidx[h] = (uint32_t)(e + 1);
	}
	g->cap = cap;
	return 0;
}

/* Entry of line, creating it (cold) if new: *cold set to 1 then. */
static inline int64_t entry_of(struct lp_graph *g, uint64_t line, int *cold)
{
	uint64_t h, e;
	int err;

	*cold = 0;
	if (g->hidx) {
		for (h = lp_hash64(line) & g->hmask; g->hidx[h]; h = (h + 1) & g->hmask)
			if (g->ent[g->hidx[h] - 1].key == line)
				return g->hidx[h] - 1;
	}
	if (g->n == g->cap) {
		if ((err = grow(g)) < 0)
			return err;
	}
	for (h = lp_hash64(line) & g->hmask; g->hidx[h]; h = (h + 1) & g->hmask)
		;
	e = g->n++;
	g->hidx[h] = (uint32_t)(e + 1);
	g->ent[e].key = line;
	g->ent[e].bucket = (uint32_t)g->k;
	for (size_t j = 0; j < g->k; j++) {
		if (g->policies & LP_GRAPH_FIFO)
			g->stamp[e * g->k + j] = 0;
		if (g->policies & LP_GRAPH_RANDOM)
			g->slot_of[e * g->k + j] = LP_NONE32;
	}
	*cold = 1;
	return (int64_t)e;
}

/* Returns the bucket of e before the access (k = miss in every size). */
static inline size_t lru_access(struct lp_graph *g, uint32_t e)
{
	const size_t k = g->k;
	size_t b = g->ent[e].bucket, j;

	if (b == 0 && g->head == e)
		return 0;
	if (b < k) {
		/* unlink e from the list and from bucket b */
		uint32_t p = g->ent[e].prev, n = g->ent[e].next;
		if (g->tailb[b] == e)
			g->tailb[b] = (p != LP_NONE32 && g->ent[p].bucket == b) ? p : LP_NONE32;
		if (p != LP_NONE32)
			g->ent[p].next = n;
		else
			g->head = n;
		if (n != LP_NONE32)
			g->ent[n].prev = p;
		g->cnt[b]--;
	}
	g->ent[e].prev = LP_NONE32;
	g->ent[e].next = g->head;
	if (g->head != LP_NONE32)
		g->ent[g->head].prev = e;
	g->head = e;
	g->ent[e].bucket = 0;
	if (g->tailb[0] == LP_NONE32)
		g->tailb[0] = e;
	g->cnt[0]++;
	/* The tails about to cross their markers are scattered in memory: ask
	 * for all of them at once rather than one dependent miss at a time. */
	for (j = 0; j < b && j < k; j++)
		if (g->tailb[j] != LP_NONE32)
			__builtin_prefetch(&g->ent[g->tailb[j]]);
	/* push one line across each full marker in front of the old position */
	for (j = 0; j < k && g->cnt[j] > g->bcap[j]; j++) {
		uint32_t t = g->tailb[j], p = g->ent[t].prev;
		g->tailb[j] = p; /* cnt[j] >= 2 here, so p is in bucket j */
		g->cnt[j]--;
		if (j + 1 == k) {
			g->ent[p].next = LP_NONE32;
			g->ent[t].prev = LP_NONE32;
			g->ent[t].bucket = (uint32_t)k;
		} else {
			g->ent[t].bucket = (uint32_t)(j + 1);
			g->cnt[j + 1]++;
			if (g->tailb[j + 1] == LP_NONE32)
				g->tailb[j + 1] = t;
		}
	}
	return b;
}

/* A miss at size j of a line of a reference whose misses so far are in
 * missed[] (NULL: a reference of one line, nothing to record). */
static inline void ref_miss(struct lp_graph *g, uint8_t *missed, int pol, size_t j)
{
	if (!missed)
		return;
	if (missed[j])
		g->overlap[pol][j]++;
	missed[j] = 1;
}

static inline void fifo_access(struct lp_graph *g, uint64_t e, uint8_t *missed)
{
	uint64_t *st = g->stamp + e * g->k;

	for (size_t j = 0; j < g->k; j++) {
		if (st[j] && g->ins[j] - st[j] < g->size_lines[j])
			continue;
		st[j] = ++g->ins[j];
		g->fifo_miss[j]++;
		ref_miss(g, missed, 1, j);
	}
}

static inline void random_access(struct lp_graph *g, uint64_t e, uint8_t *missed)
{
	uint32_t *so = g->slot_of + e * g->k;

	for (size_t j = 0; j < g->k; j++) {
		uint64_t v;
		uint32_t old;

		if (so[j] != LP_NONE32)
			continue;
		if (g->fill[j] < g->size_lines[j]) {
			v = g->fill[j]++;
		} else {
			v = lp_rng_below(&g->rng[j], g->size_lines[j]);
			old = g->slots[j][v];
			g->slot_of[(uint64_t)old * g->k + j] = LP_NONE32;
		}
		g->slots[j][v] = (uint32_t)e;
		so[j] = (uint32_t)v;
		g->rand_miss[j]++;
		ref_miss(g, missed, 2, j);
	}
}

/* missed: the sizes (3 x k flags: LRU, FIFO, random) where the lines of
 * the current reference before this one missed; NULL for a reference of
 * one line. */
static inline int graph_line(struct lp_graph *g, uint64_t line, uint8_t *missed)
{
	int cold;
	int64_t e = entry_of(g, line, &cold);

	if (e < 0)
		return (int)e;
	g->accesses++;
	g->cold += (uint64_t)cold;
	if (g->policies & LP_GRAPH_LRU) {
		size_t b = lru_access(g, (uint32_t)e);
		if (b < g->k)
			g->bucket_hits[b]++;
		for (size_t j = 0; missed && j < b && j < g->k; j++) /* misses in sizes below b */
			ref_miss(g, missed, 0, j);
	}
	if (g->policies & LP_GRAPH_FIFO)
		fifo_access(g, (uint64_t)e, missed ? missed + LP_GRAPH_MAX_SIZES : NULL);
	if (g->policies & LP_GRAPH_RANDOM)
		random_access(g, (uint64_t)e, missed ? missed + 2 * LP_GRAPH_MAX_SIZES : NULL);
	return 0;
}

int lp_graph_access_one(struct lp_graph *g, uint64_t line)
{
	int cold;
	int64_t e = entry_of(g, line, &cold);
	size_t b;

	if (e < 0)
		return (int)e;
	g->accesses++;
	g->cold += (uint64_t)cold;
	b = lru_access(g, (uint32_t)e);
	if (cold)
		return 0;
	return b == 0 ? 1 : 2;
}

/* Lines are simulated in batches so that the hash slot of a line PF_HASH
 * ahead and the entry of a line PF_ENT ahead are already being fetched. */
enum { GBATCH = 512, PF_HASH = 16, PF_ENT = 8 };

static int graph_batch(struct lp_graph *g, const uint64_t *lines, size_t n)
{
	int err;

	for (size_t i = 0; i < n; i++) {
		if (g->hidx) {
			if (i + PF_HASH < n)
				__builtin_prefetch(&g->hidx[lp_hash64(lines[i + PF_HASH]) & g->hmask]);
			if (i + PF_ENT < n) {
				uint32_t v = g->hidx[lp_hash64(lines[i + PF_ENT]) & g->hmask];
				if (v)
					__builtin_prefetch(&g->ent[v - 1]);
			}
		}
		if ((err = graph_line(g, lines[i], NULL)) < 0)
			return err;
	}
	return 0;
}

int lp_graph_lines(struct lp_graph *g, const uint64_t *lines, size_t n)
{
	return graph_batch(g, lines, n);
}

/* A reference of several lines, after the lines before it: each line's
 * misses are recorded per size, so that the reference misses once. */
static int graph_multi(struct lp_graph *g, uint64_t first, uint64_t last)
{
	uint8_t missed[3 * LP_GRAPH_MAX_SIZES] = { 0 };
	int err;

	for (uint64_t l = first;; l++) {
		if ((err = graph_line(g, l, missed)) < 0)
			return err;
		if (l == last)
			return 0;
	}
}

int lp_graph_refs(struct lp_graph *g, const struct lp_ref *refs, size_t n)
{
	const unsigned sh = (unsigned)g->line_shift;
	uint64_t buf[GBATCH];
	size_t k = 0;
	int err;

	for (size_t i = 0; i < n; i++) {
		const struct lp_ref *r = &refs[i];
		if (!lp_ref_is_access(r))
			continue;
		/* a read-modify-write is one access (lp_sim_ref_accesses()) */
		if (!lp_ref_is_modify(&g->last, r))
			g->ref_accesses++;
		g->last = *r;
		uint64_t first, last;
		lp_ref_lines(r, sh, &first, &last);
		if (first != last) {
			if ((k && (err = graph_batch(g, buf, k)) < 0) || (err = graph_multi(g, first, last)) < 0)
				return err;
			k = 0;
			continue;
		}
		for (uint64_t l = first;; l++) {
			buf[k++] = l;
			if (k == GBATCH) {
				if ((err = graph_batch(g, buf, k)) < 0)
					return err;
				k = 0;
			}
			if (l == last)
				break;
		}
	}
	return k ? graph_batch(g, buf, k) : 0;
}

size_t lp_graph_sizes(const struct lp_graph *g)
{
	return g->k;
}

void lp_graph_point(const struct lp_graph *g, size_t i, struct lp_graph_point *out)
{
	uint64_t hits = 0;

	for (size_t b = 0; b <= i; b++)
		hits += g->bucket_hits[b];
	out->size = g->size_bytes[i];
	out->accesses = g->accesses;
	out->cold = g->cold;
	out->lru_misses = (g->policies & LP_GRAPH_LRU) ? g->accesses - hits : 0;
	out->fifo_misses = g->fifo_miss[i];
	out->random_misses = g->rand_miss[i];
	out->ref_accesses = g->ref_accesses;
	out->lru_ref_misses = out->lru_misses - g->overlap[0][i];
	out->fifo_ref_misses = out->fifo_misses - g->overlap[1][i];
	out->random_ref_misses = out->random_misses - g->overlap[2][i];
}
