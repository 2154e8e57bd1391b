/* The bucket table of `fast` (exact-internal.h): allocation and growth. */
#include "exact/exact-internal.h"

int lp_xbtab_init(struct lp_xbtab *t, size_t nbuckets)
{
	memset(t, 0, sizeof(*t));
	if (nbuckets > SIZE_MAX / sizeof(*t->b) ||
	    !(t->b = aligned_alloc(64, nbuckets * sizeof(*t->b))))
		return lp_seterr(LP_ENOMEM, "out of memory for a hash table of %zu lines",
				 nbuckets * LP_XB_SLOTS);
	/* 0xff bytes make every key LP_HTAB_EMPTY. */
	memset(t->b, 0xff, nbuckets * sizeof(*t->b));
	t->nb = nbuckets;
	return 0;
}

void lp_xbtab_release(struct lp_xbtab *t)
{
	free(t->b);
	memset(t, 0, sizeof(*t));
}

int lp_xbtab_reserve(struct lp_xbtab *t, size_t extra)
{
	size_t nb = t->nb;
	struct lp_xbtab nt;

	/* load <= 4/5; grow by 1.5x (rehashing costs 3x the final size in
	 * all, against 2x for doubling, for a third less memory on average) */
	while ((t->n + extra) * 5 > nb * LP_XB_SLOTS * 4)
		nb += nb / 2 + 1;
	if (nb == t->nb)
		return 0;
	if (lp_xbtab_init(&nt, nb) < 0)
		return LP_ENOMEM;
	for (size_t i = 0; i < t->nb; i++)
		for (unsigned k = 0; k < LP_XB_SLOTS; k++) {
			uint64_t key = t->b[i].key[k];
			int isnew;

			if (key != LP_HTAB_EMPTY)
				*lp_xbtab_get(&nt, lp_xbtab_bucket(&nt, key), key, &isnew) =
					t->b[i].val[k];
		}
	nt.has_top = t->has_top;
	nt.top_val = t->top_val;
	free(t->b);
	*t = nt;
	return 0;
}
