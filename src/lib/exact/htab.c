/* The line -> value hash table shared by the exact algorithms. */
#include "exact/exact-internal.h"

int lp_xhtab_init(struct lp_xhtab *t, size_t cap_pow2)
{
	memset(t, 0, sizeof(*t));
	t->s = malloc(cap_pow2 * sizeof(*t->s));
	if (!t->s)
		return lp_seterr(LP_ENOMEM, "out of memory for a hash table of %zu lines", cap_pow2);
	/* 0xff bytes make every key LP_XHTAB_EMPTY. */
	memset(t->s, 0xff, cap_pow2 * sizeof(*t->s));
	t->mask = cap_pow2 - 1;
	return 0;
}

void lp_xhtab_release(struct lp_xhtab *t)
{
	free(t->s);
	memset(t, 0, sizeof(*t));
}

int lp_xhtab_reserve(struct lp_xhtab *t, size_t extra)
{
	size_t cap = t->mask + 1, ncap = cap;
	struct lp_xhtab nt;

	while ((t->n + extra) * 4 > ncap * 3)
		ncap *= 2;
	if (ncap == cap)
		return 0;
	if (lp_xhtab_init(&nt, ncap) < 0)
		return LP_ENOMEM;
	for (size_t i = 0; i < cap; i++) {
		int isnew;
		if (t->s[i].key != LP_XHTAB_EMPTY)
			*lp_xhtab_get(&nt, t->s[i].key, &isnew) = t->s[i].val;
	}
	nt.has_top = t->has_top;
	nt.top_val = t->top_val;
	free(t->s);
	*t = nt;
	return 0;
}
