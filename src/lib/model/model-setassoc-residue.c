/* Span lines that crowd the reused line's set where the walk model sees
 * none: for the set-associative placement model (model-setassoc.c),
 * docs/models.md, "Blocks of rows".
 *
 * The walk model places a span's lines on one lattice through the reused
 * line (a column, rows a multiple of the sets apart) or, where no lattice
 * holds most of the offsets, at random or evenly over a region of
 * consecutive lines. A block of a matrix, a few lines of each of many
 * rows, is neither: a tiled matrix multiply of order 128 (rows of 16
 * lines) reads a 32 x 32 tile of B between two reuses of a line of it,
 * 32 rows of 5 lines: only a fifth of the offsets are on the rows'
 * lattice of 16 lines, so it took the tile as a region of consecutive
 * lines spread over the 64 sets of 32K:8:64, 2.7 per set; it puts 8 in
 * each of 20 sets, and the row of C read beside it a ninth in half of
 * the spans. Simulation 6.1 % LRU misses, the model 0.8 % at every rate
 * (1e-1 included, with an interval of +-0.25 points).
 *
 * What is measured: the share q of a group's offsets that are a multiple
 * of the cache's sets s (a power of two), the share of its span lines in
 * the reused line's set, against the 1 / s of lines spread evenly or at
 * random.
 *
 * Assumptions:
 * - Only groups placed at random or on a walk of step 1: a lattice walk
 *   (step > 1) puts its own lines in the reused line's sets already.
 * - The excess is real when it explains the offsets SA_RESIDUE_NATS
 *   better than 1 / s (the log-likelihood ratio over the group's
 *   samples, each weighing 1), from SA_RESIDUE_MIN_PAIRS offsets or more.
 * - The excess e = (q - 1/s) / (1 - 1/s) of a span's D other lines is a
 *   count fixed by the layout, as the walk model's lattice lines are
 *   (e D in the set, its fraction a line in that share of the spans); the
 *   other lines are placed at random. A block whose fixed count fits the
 *   ways then does not miss, where a binomial count of the same mean
 *   would (a five-point stencil over rows of one page puts 4 lines in
 *   each span's set: no misses in 8 ways).
 * - Random replacement: those lines are in the set for the crowding
 *   factor rho of model-setassoc.c (lp_sa_crowd_rho()), theta 1 (they
 *   miss as the others do).
 * Cost: LP_SA_RESIDUE_BITS additions an offset at most, once; a group's
 * test per cache. */
#include "model/model-internal.h"

#include <math.h>

#define SA_RESIDUE_NATS 8.0     /* log-likelihood gain of the excess */
#define SA_RESIDUE_MIN_PAIRS 32 /* offsets to read a share from */

void lp_sa_residue_add(struct lp_sa_group_info *G, int64_t delta, double weight)
{
	uint64_t u = (uint64_t)delta;

	for (unsigned k = 0; k < LP_SA_RESIDUE_BITS && !(u & ((1ull << k) - 1)); k++)
		G->residue[k] += weight;
}

/* The excess share e of group G's span lines in the reused line's set of
 * `sets` sets; 0 where there is none beyond chance, or G is a lattice
 * walk. */
static double residue_excess(const struct lp_sa_group_info *G, uint64_t sets)
{
	unsigned k = 0;
	double N = G->residue[0], n0, q, p0 = 1 / (double)sets, llr;

	if (G->step != 1 || G->other > 0 || G->pairs < SA_RESIDUE_MIN_PAIRS || sets < 2 || (sets & (sets - 1)) ||
	    !(N > 0))
		return 0;
	while ((1ull << k) < sets)
		k++;
	if (k >= LP_SA_RESIDUE_BITS)
		return 0;
	n0 = G->residue[k];
	q = n0 / N;
	if (!(q > p0))
		return 0;
	llr = n0 * log(q / p0) + (q < 1 ? (N - n0) * log((1 - q) / (1 - p0)) : 0);
	return llr >= SA_RESIDUE_NATS ? (q - p0) / (1 - p0) : 0;
}

/* P(at least `ways` lines in X's set) for r lines at random over `sets`
 * sets beside c fixed ones. */
static double fixed_plus_random(double c, double r, uint64_t sets, uint64_t ways)
{
	double c0 = floor(c), f = c - c0, p[2];

	for (int i = 0; i < 2; i++) {
		double need = (double)ways - c0 - i;
		p[i] = need <= 0 ? 1 : lp_binomial_miss(r, sets, (uint64_t)need);
	}
	return (1 - f) * p[0] + f * p[1];
}

/* Group G's samples idx[0, k): their LRU miss chances (rho = 0) or their
 * crowding factors for random replacement (rho = 1) into out[idx[j]];
 * 0 (nothing set) where G shows no excess in `sets` sets. */
static int residue_apply(const struct lp_sa_group_info *G, const double *sd, uint64_t sets, double ways, int fits,
			 const size_t *idx, size_t k, double *out, int rho)
{
	double e = residue_excess(G, sets);

	if (!(e > 0))
		return 0;
	for (size_t j = 0; j < k; j++) {
		double D = floor(sd[idx[j]] + 0.5);
		if (!(D >= 1) || !isfinite(D)) {
			if (!rho)
				out[idx[j]] = 0; /* no other line: a hit; rho stays */
		} else if (rho)
			out[idx[j]] = lp_sa_crowd_rho(e * D, e * D, D, 1, sets, ways, fits);
		else
			out[idx[j]] = fixed_plus_random(e * D, D - e * D, sets, (uint64_t)ways);
	}
	return 1;
}

int lp_sa_residue_miss(const struct lp_sa_group_info *G, const double *sd, uint64_t sets, uint64_t ways,
		       const size_t *idx, size_t k, double *prob)
{
	return residue_apply(G, sd, sets, (double)ways, 0, idx, k, prob, 0);
}

int lp_sa_residue_rho(const struct lp_sa_group_info *G, const double *sd, uint64_t sets, double ways, int fits,
		      const size_t *idx, size_t k, double *rho)
{
	return residue_apply(G, sd, sets, ways, fits, idx, k, rho, 1);
}
