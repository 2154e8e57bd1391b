/* The hash table (htab.h): allocation, growth and the invariant check. */
#include "common/htab.h"
#include "common/error.h"

#include <stdlib.h>
#include <string.h>

int lp_htab_init(struct lp_htab *t, size_t cap_pow2)
{
	assert(cap_pow2 >= 2 && (cap_pow2 & (cap_pow2 - 1)) == 0);
	memset(t, 0, sizeof(*t));
	if (cap_pow2 > SIZE_MAX / sizeof(*t->s) || !(t->s = malloc(cap_pow2 * sizeof(*t->s))))
		return lp_seterr(LP_ENOMEM, "out of memory for a hash table of %zu keys", cap_pow2);
	/* 0xff bytes make every key LP_HTAB_EMPTY. */
	memset(t->s, 0xff, cap_pow2 * sizeof(*t->s));
	t->mask = cap_pow2 - 1;
	return 0;
}

void lp_htab_release(struct lp_htab *t)
{
	free(t->s);
	memset(t, 0, sizeof(*t));
}

int lp_htab_reserve(struct lp_htab *t, size_t extra)
{
	size_t cap = t->mask + 1, ncap = cap;
	struct lp_htab nt;

	while ((t->n + extra) * 4 > ncap * 3)
		ncap *= 2;
	if (ncap == cap)
		return 0;
	if (lp_htab_init(&nt, ncap) < 0)
		return LP_ENOMEM;
	for (size_t i = 0; i < cap; i++) {
		int isnew;
		if (t->s[i].key != LP_HTAB_EMPTY)
			*lp_htab_get(&nt, t->s[i].key, &isnew) = t->s[i].val;
	}
	assert(nt.n == t->n);
	nt.has_top = t->has_top;
	nt.top_val = t->top_val;
	free(t->s);
	*t = nt;
	if (LP_DEBUG_CHECKS)
		assert(lp_htab_check(t) == 0);
	return 0;
}

int lp_htab_check(const struct lp_htab *t)
{
	size_t cap = t->mask + 1, n = 0;

	if (cap & t->mask)
		return lp_seterr(LP_EINVAL, "hash table: capacity %zu is not a power of two", cap);
	for (size_t i = 0; i < cap; i++) {
		uint64_t key = t->s[i].key;

		if (key == LP_HTAB_EMPTY)
			continue;
		n++;
		/* every slot from the key's home to its own holds a key, and
		 * none of them this one */
		for (size_t j = lp_htab_pos(t, key); j != i; j = (j + 1) & t->mask) {
			if (t->s[j].key == LP_HTAB_EMPTY)
				return lp_seterr(LP_EINVAL, "hash table: key %llu at slot %zu is cut off from its home %zu",
						 (unsigned long long)key, i, lp_htab_pos(t, key));
			if (t->s[j].key == key)
				return lp_seterr(LP_EINVAL, "hash table: key %llu twice", (unsigned long long)key);
		}
	}
	if (n != t->n)
		return lp_seterr(LP_EINVAL, "hash table: %zu keys counted as %zu", n, t->n);
	if (n >= cap)
		return lp_seterr(LP_EINVAL, "hash table: full (%zu keys)", n);
	return 0;
}
