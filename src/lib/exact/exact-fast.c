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
 * P is a bucket table (lp_xbtab: 5 keys and 5 u32 times per cache line).
 * The bucket of access i+16 is prefetched while access i is processed: at
 * M = 10^6..10^7 the bucket is a cache miss on almost every access. A
 * second prefetch, of the bitmap word of access i+8 read from its (by then
 * arrived) slot, made no difference at M = 10^5 or 10^7 in A/B runs, so it
 * is not done.
 *
 * The per-access loop (exact-fast-body.h) is compiled four times, for
 * baseline x86-64, popcnt, AVX2 and AVX-512 (F + VPOPCNTDQ), and the CPU
 * picks one at creation. Numbers: docs/algorithms.md. */
#include "exact/exact-internal.h"

#include <immintrin.h>

#define LEAF_BITS 512
#define FANOUT 16
#define MAX_LEVELS 8
#define MIN_CAP (UINT64_C(1) << 20)
#define PF_DIST 16

struct fast;
typedef int fast_batch_fn(struct fast *s, const uint64_t *lines, size_t n, uint64_t *dist,
			  size_t *done);

struct fast {
	struct lp_xbtab ht;
	uint64_t *bits;              /* cap / 64 words */
	uint32_t *lv[MAX_LEVELS];    /* counts; each padded to a multiple of 16 */
	size_t nlv[MAX_LEVELS];
	int nlevels;
	uint64_t cap, now;
	uint32_t *rank;              /* scratch for compaction */
	uint64_t compactions;
	uint64_t min_cap;
	fast_batch_fn *batch;
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

static void fast_destroy(void *st)
{
	struct fast *s = st;

	if (!s)
		return;
	fast_free_tree(s);
	lp_xbtab_release(&s->ht);
	free(s->rank);
	free(s);
}

static size_t fast_memory(const void *st)
{
	const struct fast *s = st;
	size_t m = sizeof(*s) + lp_xbtab_memory(&s->ht) + (size_t)(s->cap / 8);

	for (int j = 0; j < s->nlevels; j++)
		m += (s->nlv[j] + FANOUT - 1) / FANOUT * FANOUT * sizeof(uint32_t);
	return m;
}

typedef int32_t lp_v4i __attribute__((vector_size(16)));

static inline __attribute__((always_inline)) void fast_set(struct fast *s, uint64_t t)
{
	size_t i = (size_t)(t / LEAF_BITS);

	s->bits[t >> 6] |= UINT64_C(1) << (t & 63);
	for (int j = 0; j < s->nlevels; j++) {
		s->lv[j][i]++;
		i /= FANOUT;
	}
}

/* Ones of B before time t, given s->rank (ones before each leaf). */
static uint32_t fast_rank(const struct fast *s, uint64_t t)
{
	uint32_t nr = s->rank[t / LEAF_BITS];

	for (uint64_t wd = (t / LEAF_BITS) * (LEAF_BITS / 64); wd < t >> 6; wd++)
		nr += (uint32_t)__builtin_popcountll(s->bits[wd]);
	return nr + (uint32_t)__builtin_popcountll(s->bits[t >> 6] & ((UINT64_C(1) << (t & 63)) - 1));
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
	for (size_t bi = 0; bi < s->ht.nb; bi++) {
		struct lp_xbucket *bk = &s->ht.b[bi];

		for (unsigned k = 0; k < LP_XB_SLOTS; k++)
			if (bk->key[k] != LP_HTAB_EMPTY)
				bk->val[k] = fast_rank(s, bk->val[k]);
	}
	if (s->ht.has_top)
		s->ht.top_val = fast_rank(s, s->ht.top_val);
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

/* The per-access loop, once per instruction set. The baseline x86-64
 * target has no popcnt instruction (gcc calls __popcountdi2: 6.8 -> 8.9 M
 * accesses/s at M = 10^5 with popcnt, before the node sums were
 * vectorised); AVX2 and AVX-512 count node entries, bucket keys and (with
 * VPOPCNTDQ) leaf bits in one or two vectors. */
#define FB_GENERIC 0
#define FB_POPCNT 1
#define FB_AVX2 2
#define FB_AVX512 3

#define FB_SUFFIX generic
#define FB_ISA FB_GENERIC
#define FB_ATTR
#include "exact/exact-fast-body.h"
#undef FB_SUFFIX
#undef FB_ISA
#undef FB_ATTR

#define FB_SUFFIX popcnt
#define FB_ISA FB_POPCNT
#define FB_ATTR __attribute__((target("popcnt")))
#include "exact/exact-fast-body.h"
#undef FB_SUFFIX
#undef FB_ISA
#undef FB_ATTR

#define FB_SUFFIX avx2
#define FB_ISA FB_AVX2
#define FB_ATTR __attribute__((target("avx2,popcnt")))
#include "exact/exact-fast-body.h"
#undef FB_SUFFIX
#undef FB_ISA
#undef FB_ATTR

#define FB_SUFFIX avx512
#define FB_ISA FB_AVX512
#define FB_ATTR __attribute__((target("avx512f,avx512vpopcntdq,popcnt")))
#include "exact/exact-fast-body.h"
#undef FB_SUFFIX
#undef FB_ISA
#undef FB_ATTR

static int cpu_avx512(void)
{
	return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vpopcntdq") &&
	       __builtin_cpu_supports("popcnt");
}

static int cpu_avx2(void)
{
	return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("popcnt");
}

static int cpu_popcnt(void)
{
	return __builtin_cpu_supports("popcnt");
}

static int cpu_any(void)
{
	return 1;
}

/* Best first. */
static const struct fast_isa {
	const char *name;
	int (*supported)(void);
	fast_batch_fn *batch;
} fast_isas[] = {
	{ "avx512", cpu_avx512, fast_batch_avx512 },
	{ "avx2", cpu_avx2, fast_batch_avx2 },
	{ "popcnt", cpu_popcnt, fast_batch_popcnt },
	{ "generic", cpu_any, fast_batch_generic },
};

const char *lp_exact_fast_isa(const char *name)
{
	for (size_t i = 0; i < sizeof(fast_isas) / sizeof(fast_isas[0]); i++)
		if ((!name || !strcmp(name, fast_isas[i].name)) && fast_isas[i].supported())
			return fast_isas[i].name;
	return NULL;
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
	for (size_t i = 0; i < sizeof(fast_isas) / sizeof(fast_isas[0]) && !s->batch; i++)
		if ((!o->fast_isa || !strcmp(o->fast_isa, fast_isas[i].name)) &&
		    fast_isas[i].supported())
			s->batch = fast_isas[i].batch;
	if (!s->batch) {
		free(s);
		return lp_seterr(LP_EINVAL, "fast: instruction set '%s' unknown or not supported "
				 "by this CPU (known: avx512, avx2, popcnt, generic)", o->fast_isa);
	}
	if ((err = lp_xbtab_init(&s->ht, 1024)) < 0)
		goto out_free;
	if ((err = fast_alloc_tree(s, s->min_cap)) < 0)
		goto out_ht;
	*st = s;
	return 0;
out_ht:
	lp_xbtab_release(&s->ht);
out_free:
	free(s);
	return err;
}

static int fast_batch(void *st, const uint64_t *lines, size_t n, uint64_t *dist, size_t *done)
{
	struct fast *s = st;

	return s->batch(s, lines, n, dist, done);
}

const struct lp_exact_algo lp_exact_algo_fast = {
	.name = "fast",
	.kind = LP_DIST_STACK,
	.create = fast_create,
	.batch = fast_batch,
	.memory = fast_memory,
	.destroy = fast_destroy,
};
