/* The strided walks' set-associative placement for `model predict`: its
 * reference groups' walks go to the one placement model of the library
 * (src/lib/model/model-setassoc-walk.c, docs/models.md "Set-associative
 * placement"), which `report` uses too. */
#include "prediction/prediction-internal.h"

#include <locprof/model.h>

uint64_t lp_pred_place_gcd(uint64_t a, uint64_t b)
{
	return lp_sa_gcd(a, b);
}

int lp_pred_place_miss(const struct lp_pred_place_walk *w, uint64_t sets, uint64_t ways, uint64_t line, const double *D,
		size_t nd, double *miss)
{
	struct lp_sa_walk sw;

	if (!w)
		return lp_sa_walk_miss(NULL, sets, ways, line, D, NULL, NULL, nd, miss);
	sw = (struct lp_sa_walk){ .stride = w->stride, .lines = w->lines, .stride1 = w->stride1 };
	return lp_sa_walk_miss(&sw, sets, ways, line, D, NULL, NULL, nd, miss);
}
