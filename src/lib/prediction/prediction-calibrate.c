/* Placement calibration of set associativity (docs/prediction.md,
 * "Placement calibration"): per group and collected geometry, the weights
 * of random, even and cut placement fitted to the measured set distances. */
#include "prediction/prediction-model.h"

#include "common/error.h"
#include "common/lgamma.h"

#include <locprof/model.h>

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>


#define CAL_K 32        /* set distances compared: P(d >= k), k = 1..CAL_K */
#define CAL_STEP 100    /* grid of the weights: steps of 1/CAL_STEP */
#define CAL_SEP 0.01    /* transforms closer than this (W1, lines per access)
			 * do not determine the weights */
#define CAL_AGREE 0.5   /* default: the runs' own random weights must agree
			 * within this */

/* P(d >= k), k = 1..K, for d ~ Binomial(D, 1/s) (the sum of
 * lp_binomial_miss()'s terms, accumulated once for all k). */
static void tail_random(double D, double s, double *t)
{
	double lp, lq, lgD, cum = 0;

	D = floor(D);
	if (s <= 1) {
		for (int k = 1; k <= CAL_K; k++)
			t[k - 1] = D >= k;
		return;
	}
	lp = -log(s);
	lq = log1p(-1 / s);
	lgD = lp_lgamma(D + 1);
	for (int k = 1; k <= CAL_K; k++) {
		double i = k - 1;
		if (i > D) {
			t[k - 1] = 0;
			continue;
		}
		cum += exp(lgD - lp_lgamma(i + 1) - lp_lgamma(D - i + 1) + i * lp + (D - i) * lq);
		t[k - 1] = cum >= 1 ? 0 : 1 - cum;
	}
}

/* P(d >= k) when the reused line and the D others are spread evenly over
 * the s sets: n = D + 1 lines, r sets hold q + 1 = floor(n/s) + 1 of them,
 * the others q; the reused line is one of the n, so it is in a fuller set
 * with chance r(q+1)/n, and d is its set's count minus itself. */
static double tail_even(double D, double s, double k)
{
	double n = floor(D + 1e-6) + 1, q = floor(n / s), r = n - q * s; /* (a fitted 286.99999 is 287) */

	if (q >= k + 1)
		return 1;
	return q == k ? r * (q + 1) / n : 0;
}

/* Miss chance in k ways of a reuse at stack distance D under a placement. */
double lp_pred_miss_place(int place, double D, uint64_t sets, uint64_t ways)
{
	/* (as the unweighted models: the cut of lp_pred_miss_fa(), the binomial of
	 * lp_pred_miss_sa()) */
	switch (place) {
	case LP_PRED_PLACE_EVEN:
		return tail_even(D, (double)sets, (double)ways);
	case LP_PRED_PLACE_CUT:
		return lp_pred_miss_fa(D, sets * ways);
	default:
		return lp_pred_miss_sa(D, sets, ways);
	}
}

/* Fraction of the distances lo..hi (whole numbers) at or above t. */
static double frac_ge(double lo, double hi, double t)
{
	t = ceil(t);
	if (lo >= t)
		return 1;
	if (hi < t)
		return 0;
	return (hi - t + 1) / (hi - lo + 1);
}

/* The weights on a grid of steps of 1/CAL_STEP minimising the squared
 * differences of P(d >= k) over the runs r0..r1-1 (rows of CAL_K). */
static double cal_grid(const double *obs, const double *tr, size_t r0, size_t r1, unsigned mask,
		       double *w)
{
	double best = INFINITY;

	for (int a = 0; a <= CAL_STEP; a++) {
		if (a && !(mask >> LP_PRED_PLACE_EVEN & 1))
			break;
		for (int c = 0; a + c <= CAL_STEP; c++) {
			double we = (double)a / CAL_STEP, wc = (double)c / CAL_STEP, wr = 1 - we - wc, e = 0;
			if (c && !(mask >> LP_PRED_PLACE_CUT & 1))
				break;
			for (size_t r = r0; r < r1; r++)
				for (int k = 0; k < CAL_K; k++) {
					const double *x = &tr[(r * LP_PRED_PLACE_N) * CAL_K + k];
					double d = obs[r * CAL_K + k] - wr * x[0] - we * x[CAL_K] - wc * x[2 * CAL_K];
					e += d * d;
				}
			/* ties (to the grid's rounding): the least departure from random */
			if (e < best * (1 - 1e-12) - 1e-18) {
				best = e;
				w[LP_PRED_PLACE_RANDOM] = wr;
				w[LP_PRED_PLACE_EVEN] = we;
				w[LP_PRED_PLACE_CUT] = wc;
			}
		}
	}
	return best;
}

/* Calibrate group g at the set-distance key of block index b. */
static int calibrate_one(struct lp_pred_model *m, struct xgroup *g, size_t b, unsigned mask, double agree)
{
	struct lp_pred_placement *c = &g->cal[b];
	uint64_t key = m->blocks[b], s = lp_pred_key_sets(key);
	long bs = lp_pred_model_block_index(m, lp_pred_key_block(key));
	size_t n = m->nsizes, nr = 0;
	double *obs, *tr, sep = 0;

	memset(c, 0, sizeof(*c));
	c->w[LP_PRED_PLACE_RANDOM] = 1;
	if (!s || bs < 0)
		return 0;
	if (!(obs = calloc(n * CAL_K, sizeof(*obs))) || !(tr = calloc(n * LP_PRED_PLACE_N * CAL_K, sizeof(*tr)))) {
		free(obs);
		return lp_seterr(LP_ENOMEM, "out of memory");
	}
	for (size_t r = 0; r < n; r++) {
		const struct lp_pred_hist *h = &g->mh[r * m->nblocks + (size_t)bs], *sh = &g->mh[r * m->nblocks + b];
		double A = lp_pred_hist_finite(h), t[CAL_K];
		double *o = &obs[nr * CAL_K], *x = &tr[nr * LP_PRED_PLACE_N * CAL_K];
		if (!(A > 0) || !(lp_pred_hist_finite(sh) > 0))
			continue;
		for (size_t i = 0; i < sh->n; i++)
			for (int k = 1; k <= CAL_K; k++)
				o[k - 1] += sh->e[i].count * frac_ge(sh->e[i].lo, sh->e[i].hi, k) / A;
		for (size_t i = 0; i < h->n; i++) {
			const struct lp_pred_hent *e = &h->e[i];
			double w = e->count / A;
			if (e->lo < 1 && e->hi < 1)
				continue; /* distance 0: set distance 0 under every placement */
			tail_random((e->lo + e->hi) / 2, (double)s, t);
			for (int k = 1; k <= CAL_K; k++) {
				double sk = (double)s * k;
				x[k - 1] += w * t[k - 1];
				x[CAL_K + k - 1] += w * tail_even((e->lo + e->hi) / 2, (double)s, k);
				x[2 * CAL_K + k - 1] += w * frac_ge(e->lo, e->hi, sk);
			}
		}
		/* how far random is from the other placements allowed */
		for (int p = 1; p < LP_PRED_PLACE_N; p++)
			for (int k = 0; k < CAL_K && (mask >> p & 1); k++)
				sep += fabs(x[k] - x[p * CAL_K + k]);
		nr++;
	}
	c->have = nr > 0;
	if (nr) {
		double w[LP_PRED_PLACE_N];
		int np = 0;
		for (int p = 1; p < LP_PRED_PLACE_N; p++)
			np += mask >> p & 1;
		sep = np ? sep / (np * (double)nr) : 0;
		c->sep = sep;
		cal_grid(obs, tr, 0, nr, mask, c->w);
		for (int p = 0; p < LP_PRED_PLACE_N; p++)
			c->lo[p] = c->hi[p] = c->w[p];
		for (size_t r = 0; r < nr; r++) {
			cal_grid(obs, tr, r, r + 1, mask, w);
			for (int p = 0; p < LP_PRED_PLACE_N; p++) {
				c->lo[p] = fmin(c->lo[p], w[p]);
				c->hi[p] = fmax(c->hi[p], w[p]);
			}
		}
		for (size_t r = 0; r < nr; r++)
			for (int k = 0; k < CAL_K; k++) {
				const double *x = &tr[(r * LP_PRED_PLACE_N) * CAL_K + k];
				c->resid += fabs(obs[r * CAL_K + k] - c->w[0] * x[0] - c->w[1] * x[CAL_K] -
						 c->w[2] * x[2 * CAL_K]) / (double)nr;
			}
		/* even and cut trade places with the size's arithmetic against
		 * the sets (a column walk's lines fall into distinct sets or
		 * not): what must hold across the runs is how much of the
		 * placement is random */
		c->det = sep >= CAL_SEP && c->hi[LP_PRED_PLACE_RANDOM] - c->lo[LP_PRED_PLACE_RANDOM] <= agree;
	}
	free(obs);
	free(tr);
	return 0;
}

int lp_pred_model_calibrate(struct lp_pred_model *m, unsigned mask, double agree)
{
	if (!(agree > 0))
		agree = CAL_AGREE;
	for (size_t k = 0; k < m->ngroups; k++) {
		struct xgroup *g = &m->g[k];
		int rc;
		if (!g->cal && !(g->cal = calloc(m->nblocks, sizeof(*g->cal))))
			return lp_seterr(LP_ENOMEM, "out of memory");
		for (size_t b = 0; b < m->nblocks; b++)
			if ((rc = calibrate_one(m, g, b, mask, agree)) < 0)
				return rc;
	}
	return 0;
}

void lp_pred_model_placement(const struct lp_pred_model *m, size_t g, const struct lp_pred_level *l,
			 struct lp_pred_placement *out)
{
	uint64_t key = lp_pred_model_setd_key(m, l);

	memset(out, 0, sizeof(*out));
	out->w[LP_PRED_PLACE_RANDOM] = 1;
	if (key && g < m->ngroups && m->g[g].cal)
		*out = m->g[g].cal[lp_pred_model_block_index(m, key)];
}
