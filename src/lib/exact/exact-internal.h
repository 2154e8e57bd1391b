/* Internal: what the files of the exact module share.
 *
 * Each stack distance algorithm is one file exporting a struct lp_exact_algo
 * (DESIGN rule 5); exact.c registers them by name. The per-access work
 * happens inside ->batch, so a trace costs one indirect call per batch of
 * line accesses, not one per access. */
#ifndef LP_EXACT_INTERNAL_H
#define LP_EXACT_INTERNAL_H

#include <locprof/exact.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/hash.h"
#include "common/array.h"
#include "common/debug.h"
#include "common/htab.h"

/* Line accesses handed to ->batch at a time: large enough that the indirect
 * call and the per-batch bookkeeping vanish, small enough that lines and
 * distances stay in L1/L2. */
#define LP_EXACT_BATCH 4096

struct lp_exact_algo {
	const char *name;
	enum lp_distance kind;
	int (*create)(void **st, const struct lp_exact_opts *o);
	/* n <= LP_EXACT_BATCH. Returns 0 or a negative LP_E*; *done = number
	 * of distances written in either case. */
	int (*batch)(void *st, const uint64_t *lines, size_t n, uint64_t *dist, size_t *done);
	size_t (*memory)(const void *st);
	void (*destroy)(void *st);
};

extern const struct lp_exact_algo lp_exact_algo_fast;
extern const struct lp_exact_algo lp_exact_algo_naive;
extern const struct lp_exact_algo lp_exact_algo_markers;
extern const struct lp_exact_algo lp_exact_algo_bk;
extern const struct lp_exact_algo lp_exact_algo_avl;
extern const struct lp_exact_algo lp_exact_algo_prealloc;
extern const struct lp_exact_algo lp_exact_algo_reuse;

/* ---- histogram (the struct is shared so the engine can add inline) ---- */
struct lp_hist {
	uint64_t *c;  /* c[bin], cap entries allocated */
	size_t cap;
	size_t used;  /* largest bin with a count + 1 */
	uint64_t cold, finite, max;
};

static inline size_t lp_hist_bin_inline(uint64_t d)
{
	int k;

	if (d < 256)
		return (size_t)d;
	k = 63 - __builtin_clzll(d);
	return 256 + (size_t)(k - 8) * 128 + (size_t)((d >> (k - 7)) & 127);
}

int lp_hist_grow(struct lp_hist *h, size_t bin);

static inline int lp_hist_add_one(struct lp_hist *h, uint64_t d)
{
	size_t b;

	if (d == LP_DIST_COLD) {
		h->cold++;
		return 0;
	}
	b = lp_hist_bin_inline(d);
	/* Growth happens at most ~log times per histogram (it doubles), so
	 * the hot path only pays a predictable branch. */
	if (b >= h->cap && lp_hist_grow(h, b) < 0)
		return LP_ENOMEM;
	h->c[b]++;
	if (b >= h->used)
		h->used = b + 1;
	h->finite++;
	if (d > h->max)
		h->max = d;
	return 0;
}

int lp_hist_init(struct lp_hist *h, size_t initial_bins);
void lp_hist_release(struct lp_hist *h);

/* ---- hash table: line -> 64-bit value ---------------------------------
 * The library's table (common/htab.h). The prediction module still names
 * it lp_xhtab (src/lib/xpred/xpred-sets.c); these aliases go when it
 * includes common/htab.h itself. */
#define LP_XHTAB_EMPTY LP_HTAB_EMPTY
#define lp_xhtab lp_htab
#define lp_xhtab_init lp_htab_init
#define lp_xhtab_release lp_htab_release
#define lp_xhtab_reserve lp_htab_reserve
#define lp_xhtab_get lp_htab_get

/* The last time of line lines[i] (*isnew: first seen, the slot is new),
 * fetching the slot of lines[i + 16]: the lookup is a cache miss once the
 * lines outgrow the caches, and fetching it 16 accesses ahead hides most
 * of it. */
static inline uint64_t *lp_exact_lookup(struct lp_htab *ht, const uint64_t *lines, size_t i, size_t n,
					int *isnew)
{
	if (i + 16 < n)
		lp_htab_prefetch(ht, lines[i + 16]);
	return lp_htab_get(ht, lines[i], isnew);
}

/* ---- bit-count hierarchy ----------------------------------------------
 * A bitmap over times (64-bit words as leaves) with a binary hierarchy of
 * its counts above it: lv[j][i] = ones in [i*64*2^j, (i+1)*64*2^j), lv[top]
 * one entry. Bennett-Kruskal (bk) keeps a one at each line's last access,
 * the preallocated hole tree (prealloc) at each hole. */
#define LP_BITSUM_MAX_LEVELS 58

struct lp_bitsum {
	uint64_t *bits;
	uint32_t *lv[LP_BITSUM_MAX_LEVELS];
	int top;
};

/* 2^top counts at the bottom level over `words` words of bits (at most
 * 2^top), all zero. Returns 0 or LP_ENOMEM; release it either way. */
int lp_bitsum_init(struct lp_bitsum *b, int top, uint64_t words);
void lp_bitsum_release(struct lp_bitsum *b);

/* The ones after time p; then bit p becomes `set` (it must be the other
 * value before), with the counts on its path. One walk from the root. */
static inline uint64_t lp_bitsum_after_flip(struct lp_bitsum *b, uint64_t p, int set)
{
	uint64_t ones = 0, w = p >> 6, bit = UINT64_C(1) << (p & 63);

	for (int j = b->top; j >= 0; j--) {
		uint64_t k = w >> j;

		if (j < b->top && !(k & 1))
			ones += b->lv[j][k + 1];
		b->lv[j][k] += set ? 1 : (uint32_t)-1;
	}
	ones += (uint64_t)__builtin_popcountll(b->bits[w] & (~UINT64_C(1) << (p & 63)));
	if (set)
		b->bits[w] |= bit;
	else
		b->bits[w] &= ~bit;
	return ones;
}

/* ---- bucket table: line -> 32-bit value -------------------------------
 * What `fast` looks lines up in (its values are compacted times, < 2^32).
 * A bucket is one 64-byte cache line holding 5 keys and their 5 values, so
 * a lookup reads one line and compares 5 keys at once (no branch on which
 * slot holds the key); a full bucket overflows into the next one (linear
 * probing by buckets; lines are never removed, so a bucket with a free
 * slot ends the search). The bucket is chosen by the high half of
 * hash * nbuckets, so the bucket count need not be a power of two: the
 * table grows by 1.5x at a load of 4/5 and holds 16-24 bytes per line,
 * against 21-43 for lp_htab (16-byte slots, powers of two, load <= 3/4).
 * Measured on `fast` at 2 x 10^7 uniform accesses: 1.05x at M = 10^5,
 * 1.09x at 10^6, 1.23x at 10^7 (0.95x at 10^3, where everything is in L1).
 * The empty key is UINT64_MAX; the one real line UINT64_MAX is kept apart. */
#define LP_XB_SLOTS 5

struct lp_xbucket {
	uint64_t key[LP_XB_SLOTS];
	uint32_t val[LP_XB_SLOTS];
	uint32_t pad;
} __attribute__((aligned(64)));

struct lp_xbtab {
	struct lp_xbucket *b;
	size_t nb;   /* buckets */
	size_t n;    /* keys in b[] */
	int has_top; /* key UINT64_MAX present */
	uint32_t top_val;
};

int lp_xbtab_init(struct lp_xbtab *t, size_t nbuckets);
void lp_xbtab_release(struct lp_xbtab *t);
/* Make room for `extra` more keys at a load of at most 4/5. */
int lp_xbtab_reserve(struct lp_xbtab *t, size_t extra);

static inline size_t lp_xbtab_bucket(const struct lp_xbtab *t, uint64_t key)
{
	return (size_t)(((unsigned __int128)lp_hash64(key) * t->nb) >> 64);
}

/* Slots of bucket b holding key, as a bit mask (portable version; `fast`
 * has vector versions). */
static inline unsigned lp_xbtab_match(const struct lp_xbucket *b, uint64_t key)
{
	unsigned m = 0;

#pragma GCC unroll 8
	for (unsigned k = 0; k < LP_XB_SLOTS; k++)
		m |= (unsigned)(b->key[k] == key) << k;
	return m;
}

/* Pointer to the value of key in bucket bi = lp_xbtab_bucket(t, key) or
 * after, inserting it (value untouched, *isnew = 1) if absent. Requires a
 * prior lp_xbtab_reserve() covering the insert. `fast` has a copy of this
 * loop with a vector match (exact-fast-body.h). */
static inline uint32_t *lp_xbtab_get(struct lp_xbtab *t, size_t bi, uint64_t key, int *isnew)
{
	if (__builtin_expect(key == LP_HTAB_EMPTY, 0)) {
		*isnew = !t->has_top;
		t->has_top = 1;
		return &t->top_val;
	}
	for (;;) {
		struct lp_xbucket *b = &t->b[bi];
		unsigned m = lp_xbtab_match(b, key);

		if (__builtin_expect(m != 0, 1)) {
			*isnew = 0;
			return &b->val[__builtin_ctz(m)];
		}
		if ((m = lp_xbtab_match(b, LP_HTAB_EMPTY)) != 0) {
			unsigned k = (unsigned)__builtin_ctz(m);

			b->key[k] = key;
			t->n++;
			*isnew = 1;
			return &b->val[k];
		}
		bi = bi + 1 == t->nb ? 0 : bi + 1;
	}
}

static inline size_t lp_xbtab_memory(const struct lp_xbtab *t)
{
	return t->nb * sizeof(struct lp_xbucket);
}

#endif
