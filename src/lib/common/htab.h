/* Internal: the hash table of the library: 64-bit key -> 64-bit value.
 *
 * Open addressing with linear probing; keys are lines, pcs or addresses,
 * mixed by lp_hash64(). The empty key is UINT64_MAX; the one key that
 * really is UINT64_MAX (an address near 2^64 with 1-byte lines) lives
 * outside the array. Keys are never removed. Growth happens only in
 * lp_htab_reserve(), which callers run once per batch, so that lookups
 * never allocate (the exact algorithms' per-reference path).
 * tests/unit/common/test-htab.c checks it against a slow reference. */
#ifndef LP_COMMON_HTAB_H
#define LP_COMMON_HTAB_H

#include "common/debug.h"
#include "common/hash.h"

#include <stddef.h>
#include <stdint.h>

#define LP_HTAB_EMPTY UINT64_MAX

struct lp_htab_slot {
	uint64_t key, val;
};

struct lp_htab {
	struct lp_htab_slot *s;
	size_t mask; /* capacity - 1; the capacity is a power of two */
	size_t n;    /* keys in s[] */
	int has_top; /* key UINT64_MAX present */
	uint64_t top_val;
};

/* An empty table of cap_pow2 slots (a power of two). */
int lp_htab_init(struct lp_htab *t, size_t cap_pow2);
void lp_htab_release(struct lp_htab *t);
/* Make room for `extra` more keys at a load factor of at most 3/4. */
int lp_htab_reserve(struct lp_htab *t, size_t extra);
/* The whole-table invariants: n counts the keys, each key is found from
 * its home slot without crossing an empty one, no key twice. Returns 0,
 * or LP_EINVAL with the broken invariant in lp_errmsg(). O(capacity). */
int lp_htab_check(const struct lp_htab *t);

static inline size_t lp_htab_pos(const struct lp_htab *t, uint64_t key)
{
	return (size_t)lp_hash64(key) & t->mask;
}

static inline void lp_htab_prefetch(const struct lp_htab *t, uint64_t key)
{
	__builtin_prefetch(&t->s[lp_htab_pos(t, key)], 1, 3);
}

/* Pointer to the value of key, inserting it (value untouched, *isnew = 1)
 * if absent. Requires a prior lp_htab_reserve() covering the insert. */
static inline uint64_t *lp_htab_get(struct lp_htab *t, uint64_t key, int *isnew)
{
	size_t i;

	if (__builtin_expect(key == LP_HTAB_EMPTY, 0)) {
		*isnew = !t->has_top;
		t->has_top = 1;
		return &t->top_val;
	}
	for (i = lp_htab_pos(t, key);; i = (i + 1) & t->mask) {
		if (t->s[i].key == key) {
			*isnew = 0;
			return &t->s[i].val;
		}
		if (t->s[i].key == LP_HTAB_EMPTY) {
			/* a reserve covered this insert: the table never fills */
			assert(t->n < t->mask);
			t->s[i].key = key;
			t->n++;
			*isnew = 1;
			return &t->s[i].val;
		}
	}
}

/* Pointer to the value of key, or NULL if absent. */
static inline uint64_t *lp_htab_find(struct lp_htab *t, uint64_t key)
{
	if (__builtin_expect(key == LP_HTAB_EMPTY, 0))
		return t->has_top ? &t->top_val : NULL;
	for (size_t i = lp_htab_pos(t, key);; i = (i + 1) & t->mask) {
		if (t->s[i].key == key)
			return &t->s[i].val;
		if (t->s[i].key == LP_HTAB_EMPTY)
			return NULL;
	}
}

static inline size_t lp_htab_memory(const struct lp_htab *t)
{
	return (t->mask + 1) * sizeof(struct lp_htab_slot);
}

#endif
