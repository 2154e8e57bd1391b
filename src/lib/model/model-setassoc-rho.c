/* The crowding factor rho of random replacement in a set-associative
 * cache (docs/models.md, "Random replacement in a set-associative cache"):
 * the share of a span's misses in the reused line's set, times the sets,
 * from the lines a walk or a rule places in that set and the others'.
 * Used by model-setassoc.c, model-setassoc-hot.c and
 * model-setassoc-residue.c. */
#include "model/model-internal.h"

#include <math.h>

/* rho = q s for c of the w walk lines in X's set (the equation is
 * derived above lp_sa_place_crowding(), model-setassoc.c). Where the
 * run's footprint fits the cache (`fits`: the fill model's cache never
 * fills) and the walk's lines in X's set, X and the random lines that land
 * there fit its ways (to the nearest line: they are expected counts), the
 * walk's lines do not evict each other: the span's
 * misses in X's set are the random lines' alone (theta = 0 in the
 * numerator). Without it the scaled solve gives each span its share of
 * the run's misses, whatever they are: sixteen arrays that put exactly 8
 * lines in each set of 8 ways were 45 points above a simulated 0 %. */
double lp_sa_crowd_rho(double c, double w, double D, double theta, uint64_t sets, double ways, int fits)
{
	double r = fmax(0, D - w), den = w * theta + r, s = (double)sets, k = fmax(ways, 2);
	/* the walk's misses in X's set are a count fixed by the lattice, not
	 * a binomial one: X survives them with (1 - 1/k)^n, not exp(-n/k)
	 * (model-setassoc.c, above lp_sa_place_crowding()); g carries the
	 * difference into the equation's (1 - 1/L)^(rho n) */
	double g = log1p(-1 / k) / (s * log1p(-1 / (s * k)));

	if (!(den > 0))
		return 1;
	/* expected counts, read from offsets: to the nearest line */
	if (fits && c + 1 + r / s < ways + 0.5)
		return r / den;
	return s * (c * theta * g + r / s) / den;
}
