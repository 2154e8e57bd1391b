/* fast: the default stack distance algorithm.
 *
 * The paper's formulation (Almasi et al. 4.3): P maps a line to the time of
 * its last access, B(t) = 1 iff t is the last access of its line, and the
 * stack distance of an access whose line was last touched at p is the
 * number of ones of B after p. Two changes make it fast on modern machines:
 *
 * 1. Compacted time. B only needs a slot per *live* line, so when time
 *    reaches the capacity (2x the live lines, at least 2^20) the live slots
 *    are renumbered 0..live-1 by rank and B is rebuilt. Each compaction
 *    costs O(M + capacity) and happens after at least `live` accesses, so
 *    it is amortised O(1) per access, and memory is O(M), not O(N) as in
 *    Bennett-Kruskal or the preallocated tree. Times fit in 32 bits.
 * 2. A shallow, wide counting hierarchy: B is a bitmap of 512-bit leaf
 *    blocks (one cache line each); level 0 holds one u32 count per leaf,
 *    and each further level one u32 per 16 entries below (16 u32 = one
 *    cache line). "Ones after p" and "clear p" are one leaf-to-root walk
 *    touching one cache line per level: 3 levels at 2^21 slots, 5 at 2^29.
 *    Setting the bit of the current time walks the same path every time,
 *    which stays in L1.
 *
 * The dominant cost at M = 10^6..10^7 is the cache miss of the hash table
 * slot, prefetched 16 accesses ahead. A second prefetch, of the bitmap word
 * of access i+8 read from its (by then arrived) slot, made no difference
 * at M = 10^5 or 10^7 in A/B runs (20.9/20.4 vs 21.2/24.0 M/s and 8.8/7.0
 * vs 9.4/7.4 M/s), so it is not done. Numbers: docs/algorithms.md. */
#include "exact/exact-internal.h"

#define LEAF_BITS 512
#define FANOUT 16
#define MAX_LEVELS 8
#define MIN_CAP (UINT64_C(1) << 20)

struct fast {
	struct lp_xhtab ht;
	uint64_t *bits;              /* cap / 64 words */
	uint32_t *lv[MAX_LEVELS];    /* counts; each padded to a multiple of 16 */
	size_t nlv[MAX_LEVELS];
	int nlevels;
	uint64_t cap, now;
	uint32_t *rank;              /* scratch for compaction */
	uint64_t compactions;
	uint64_t min_cap;
	int has_popcnt;
};

static void fast_free_tree(struct fast *s)
{
	free(s->bits);
	s->bits = NULL;
	for (int j = 0; j < s->nlevels; j++) {
		free(s->lv[j]);
		s->lv[j] = NULL;
	}
	s->nlevels = 0;
}

/* Allocate an empty bitmap and hierarchy for cap slots (a power of two
 * >= 2^20, so a multiple of LEAF_BITS). */
static int fast_alloc_tree(struct fast *s, uint64_t cap)
{
	size_t n = (size_t)(cap / LEAF_BITS);

	fast_free_tree(s);
	s->cap = cap;
	if (!(s->bits = calloc((size_t)(cap / 64), sizeof(uint64_t))))
		goto out_nomem;
	for (;;) {
		size_t padded = (n + FANOUT - 1) / FANOUT * FANOUT;

		if (!(s->lv[s->nlevels] = calloc(padded, sizeof(uint32_t))))
			goto out_nomem;
		s->nlv[s->nlevels++] = n;
		if (n <= FANOUT)
			break;
		n = (n + FANOUT - 1) / FANOUT;
	}
	return 0;
out_nomem:
	fast_free_tree(s);
	return lp_seterr(LP_ENOMEM, "out of memory for the stack distance tree (%llu slots)",
			 (unsigned long long)cap);
}

static int fast_create(void **st, const struct lp_exact_opts *o)
{
	struct fast *s = calloc(1, sizeof(*s));
	int err;

	if (!s)
		return lp_seterr(LP_ENOMEM, "out of memory");
	s->min_cap = MIN_CAP;
	if (o->fast_min_slots) {
		if (o->fast_min_slots < LEAF_BITS || (o->fast_min_slots & (o->fast_min_slots - 1))) {
			free(s);
			return lp_seterr(LP_EINVAL, "fast: minimum capacity %llu is not a power of two >= 512",
					 (unsigned long long)o->fast_min_slots);
		}
		s->min_cap = o->fast_min_slots;
	}
	if ((err = lp_xhtab_init(&s->ht, 1 << 12)) < 0)
		goto out_free;
	if ((err = fast_alloc_tree(s, s->min_cap)) < 0)
		goto out_ht;
	s->has_popcnt = __builtin_cpu_supports("popcnt");
	*st = s;
	return 0;
out_ht:
	lp_xhtab_release(&s->ht);
out_free:
	free(s);
	return err;
}

static void fast_destroy(void *st)
{
	struct fast *s = st;

	if (!s)
		return;
	fast_free_tree(s);
	lp_xhtab_release(&s->ht);
	free(s->rank);
	free(s);
}

static size_t fast_memory(const void *st)
{
	const struct fast *s = st;
	size_t m = sizeof(*s) + lp_xhtab_memory(&s->ht) + (size_t)(s->cap / 8);

	for (int j = 0; j < s->nlevels; j++)
		m += (s->nlv[j] + FANOUT - 1) / FANOUT * FANOUT * sizeof(uint32_t);
	return m;
}

/* Sum of the entries of a 16-entry node after position `off`, with SSE2
 * vectors (baseline x86-64) and no branch on off: the scalar loop with a
 * data-dependent bound mispredicted on every level and was half of the
 * time at M = 10^5 (perf annotate). */
typedef int32_t lp_v4i __attribute__((vector_size(16)));

static inline __attribute__((always_inline)) uint32_t node_tail(const uint32_t *node, unsigned off)
{
	static const lp_v4i idx[4] = { { 0, 1, 2, 3 }, { 4, 5, 6, 7 }, { 8, 9, 10, 11 }, { 12, 13, 14, 15 } };
	lp_v4i o = { (int32_t)off, (int32_t)off, (int32_t)off, (int32_t)off }, acc = { 0, 0, 0, 0 };

	for (int q = 0; q < 4; q++) {
		lp_v4i v;

		memcpy(&v, node + 4 * q, sizeof(v));
		acc += v & (idx[q] > o);
	}
	return (uint32_t)(acc[0] + acc[1] + acc[2] + acc[3]);
}

/* A reuse: the ones of B strictly after p (the stack distance), then clear
 * B(p) and set B(now), as one walk. The leaf's 8 words are all counted under
 * masks rather than looping from p's word, so no branch depends on p.
 * Above the leaf, the walk stops at the first level where p's and now's
 * ancestors are the same entry: there the -1 of p and the +1 of now cancel,
 * and no entry after it can hold a one (nothing lies after now). Short
 * distances, the common case, thus touch one or two levels instead of all.
 * (On the shared, loaded VM an A/B run at M = 10^5 showed no difference
 * beyond the noise; it is kept because it does strictly less work.) */
static inline __attribute__((always_inline)) uint64_t fast_reuse(struct fast *s, uint64_t p)
{
	const uint64_t *leaf = s->bits + (p / LEAF_BITS) * (LEAF_BITS / 64);
	unsigned wi = (unsigned)((p / 64) % (LEAF_BITS / 64));
	uint64_t above = ~UINT64_C(1) << (p & 63), d = 0, now = s->now;
	size_t ip = (size_t)(p / LEAF_BITS), in = (size_t)(now / LEAF_BITS);

	d = (uint64_t)__builtin_popcountll(leaf[wi] & above);
	for (unsigned k = 0; k < LEAF_BITS / 64; k++) {
		uint64_t m = (uint64_t)(((int64_t)wi - (int64_t)k) >> 63);

		d += (uint64_t)__builtin_popcountll(leaf[k] & m);
	}
	s->bits[p >> 6] &= ~(UINT64_C(1) << (p & 63));
	s->bits[now >> 6] |= UINT64_C(1) << (now & 63);
	for (int j = 0; j < s->nlevels && ip != in; j++) {
		uint32_t *node = s->lv[j] + (ip & ~(size_t)(FANOUT - 1));

		d += node_tail(node, (unsigned)(ip & (FANOUT - 1)));
		node[ip & (FANOUT - 1)]--;
		s->lv[j][in]++;
		ip /= FANOUT;
		in /= FANOUT;
	}
	return d;
}

static inline __attribute__((always_inline)) void fast_set(struct fast *s, uint64_t t)
{
	size_t i = (size_t)(t / LEAF_BITS);

	s->bits[t >> 6] |= UINT64_C(1) << (t & 63);
	for (int j = 0; j < s->nlevels; j++) {
		s->lv[j][i]++;
		i /= FANOUT;
	}
}

/* Renumber the live slots 0..live-1 in time order and rebuild B. */
static int fast_compact(struct fast *s)
{
	uint64_t live = s->ht.n + (uint64_t)s->ht.has_top, cap = s->min_cap;
	size_t nleaf = (size_t)(s->cap / LEAF_BITS), r = 0;
	uint64_t *oldbits;
	int err;

	while (cap < 2 * live)
		cap *= 2;
	if (cap > (UINT64_C(1) << 32))
		return lp_seterr(LP_ELIMIT, "fast: more than 2^31 distinct lines");
	/* rank[b] = ones before leaf b */
	free(s->rank);
	if (!(s->rank = malloc(nleaf * sizeof(*s->rank))))
		return lp_seterr(LP_ENOMEM, "out of memory compacting the stack distance tree");
	for (size_t b = 0; b < nleaf; b++) {
		s->rank[b] = (uint32_t)r;
		r += s->lv[0][b];
	}
	for (size_t k = 0; k <= s->ht.mask; k++) {
		uint64_t t, *v;
		uint32_t nr;

		if (s->ht.s[k].key == LP_XHTAB_EMPTY)
			continue;
		v = &s->ht.s[k].val;
		t = *v;
		nr = s->rank[t / LEAF_BITS];
		for (uint64_t wd = (t / LEAF_BITS) * (LEAF_BITS / 64); wd < t >> 6; wd++)
			nr += (uint32_t)__builtin_popcountll(s->bits[wd]);
		nr += (uint32_t)__builtin_popcountll(s->bits[t >> 6] & ((UINT64_C(1) << (t & 63)) - 1));
		*v = nr;
	}
	if (s->ht.has_top) {
		uint64_t t = s->ht.top_val;
		uint32_t nr = s->rank[t / LEAF_BITS];

		for (uint64_t wd = (t / LEAF_BITS) * (LEAF_BITS / 64); wd < t >> 6; wd++)
			nr += (uint32_t)__builtin_popcountll(s->bits[wd]);
		nr += (uint32_t)__builtin_popcountll(s->bits[t >> 6] & ((UINT64_C(1) << (t & 63)) - 1));
		s->ht.top_val = nr;
	}
	oldbits = s->bits;
	s->bits = NULL; /* keep the old bitmap until the new tree exists */
	if ((err = fast_alloc_tree(s, cap)) < 0) {
		free(oldbits);
		return err;
	}
	free(oldbits);
	for (uint64_t t = 0; t < live; t++)
		fast_set(s, t);
	s->now = live;
	s->compactions++;
	return 0;
}

/* The per-access loop, instantiated twice below: the baseline x86-64
 * target has no popcnt instruction, and gcc's __popcountdi2 library call
 * showed up in every profile; with popcnt M = 10^5 went from 6.8 to 8.9
 * M accesses/s (before node_tail was vectorised). */
static inline __attribute__((always_inline)) int
fast_batch_body(struct fast *s, const uint64_t *lines, size_t n, uint64_t *dist, size_t *done)
{
	int err;

	*done = 0;
	if (lp_xhtab_reserve(&s->ht, n) < 0)
		return LP_ENOMEM;
	for (size_t i = 0; i < n; i++) {
		int isnew;
		uint64_t *v;

		if (i + 16 < n)
			lp_xhtab_prefetch(&s->ht, lines[i + 16]);
		if (s->now == s->cap && (err = fast_compact(s)) < 0) {
			*done = i;
			return err;
		}
		v = lp_xhtab_get(&s->ht, lines[i], &isnew);
		if (isnew) {
			dist[i] = LP_DIST_COLD;
			fast_set(s, s->now);
		} else {
			dist[i] = fast_reuse(s, *v);
		}
		*v = s->now++;
	}
	*done = n;
	return 0;
}

__attribute__((target("popcnt"))) static int
fast_batch_popcnt(struct fast *s, const uint64_t *lines, size_t n, uint64_t *dist, size_t *done)
{
	return fast_batch_body(s, lines, n, dist, done);
}

static int fast_batch_generic(struct fast *s, const uint64_t *lines, size_t n, uint64_t *dist,
			      size_t *done)
{
	return fast_batch_body(s, lines, n, dist, done);
}

static int fast_batch(void *st, const uint64_t *lines, size_t n, uint64_t *dist, size_t *done)
{
	struct fast *s = st;

	if (s->has_popcnt)
		return fast_batch_popcnt(s, lines, n, dist, done);
	return fast_batch_generic(s, lines, n, dist, done);
}

const struct lp_exact_algo lp_exact_algo_fast = {
	.name = "fast",
	.kind = LP_DIST_STACK,
	.create = fast_create,
	.batch = fast_batch,
	.memory = fast_memory,
	.destroy = fast_destroy,
};
