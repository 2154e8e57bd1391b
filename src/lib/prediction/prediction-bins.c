/* Fitting one group's histogram at one block size (section 4.1): cold
 * accesses, constant-distance bins, and the rest split recursively into
 * bins of fixed shares whose distances are functions of P (the assumptions
 * are at the top of prediction-model.c). */
#include "prediction/prediction-model.h"

#include "common/array.h"
#include "common/error.h"

#include <locprof/model.h>

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>


#define MAXRUNS 64

/* A bin of the rest: in each run, the accesses between two fractions of
 * that run's rest (sorted by distance). */
struct leaf {
	double u0[MAXRUNS], u1[MAXRUNS];
	struct lp_pred_fit dist, cnt;
};

struct bctx {
	const struct lp_pred_model *m;
	const struct lp_pred_fit *footprint;
	double fscale;    /* footprint blocks -> blocks of this model */
	uint32_t allowed; /* basis functions growing no faster than the footprint */
	double hi;
	size_t nr;        /* runs with a rest; the others count 0 */
	size_t *ridx;     /* their index among the model's sizes */
	double *P, *R;    /* their size and rest count */
	struct lp_pred_quant *q;
	size_t nleaf, capleaf;
	struct leaf *leaf;
	int err;
};

/* The basis functions that grow no faster than f between the largest
 * fitted size and the end of the range (all, when f is not positive).
 * f's growth there is that of its dominant term at the end of the range:
 * P^4/2048 + P^2 grows as P^4 (comparing with f's own ratio f(hi)/f(pm)
 * instead would exclude P^4 itself, since the lower term lowers the
 * ratio: the count of a column walk's page crossings then could not have
 * the P^4 term it has). */
static uint32_t no_faster(const struct lp_pred_model *m, const struct lp_pred_fit *f, double scale)
{
	double pm = m->sizes[m->nsizes - 1], hi = m->range * pm;
	double f0 = lp_pred_fit_eval(&m->basis, f, pm) * scale, f1 = lp_pred_fit_eval(&m->basis, f, hi) * scale;
	double top = 0, growth = 0;
	uint32_t allowed = 0;

	if (!(f0 > 0 && f1 > 0))
		return 0;
	for (size_t j = 0; j < m->basis.n; j++) {
		double a = fabs(lp_pred_expr_eval(m->basis.f[j], pm)), c = fabs(lp_pred_expr_eval(m->basis.f[j], hi));
		double t = fabs(f->coef[j]) * c;
		if ((f->used >> j & 1) && a > 0 && t > top) {
			top = t;
			growth = c / a;
		}
	}
	if (!(growth > 0))
		growth = f1 / f0;
	for (size_t j = 0; j < m->basis.n; j++) {
		double a = fabs(lp_pred_expr_eval(m->basis.f[j], pm)), c = fabs(lp_pred_expr_eval(m->basis.f[j], hi));
		if (a > 0 && c / a <= 1.01 * growth)
			allowed |= 1u << j;
	}
	return allowed;
}

/* A stack distance is below the number of distinct blocks the program
 * touches: the fitted footprint, with a margin for its own fitting error. */
static double below_footprint(void *arg, double P)
{
	const struct bctx *x = arg;
	double f = lp_pred_fit_eval(&x->m->basis, x->footprint, P) * x->fscale;

	return f > 0 ? 1.05 * f + 16 : INFINITY;
}

/* Fit the mean distance of a bin over the runs where it holds accesses. */
static int fit_dist(struct bctx *x, const double *u0, const double *u1, struct lp_pred_fit *out)
{
	double y[MAXRUNS], P[MAXRUNS];
	size_t k = 0;
	const unsigned cf = LP_PRED_FIT_NONNEG | LP_PRED_FIT_MONOTONE;

	for (size_t r = 0; r < x->nr; r++)
		if ((u1[r] - u0[r]) * x->R[r] > 1e-9) {
			P[k] = x->P[r];
			y[k++] = lp_pred_quant_mean(&x->q[r], u0[r], u1[r]);
		}
	if (!k)
		return lp_seterr(LP_EINVAL, "empty bin");
	if (x->footprint && lp_pred_fit_select_below(&x->m->basis, P, y, k, cf, x->hi, x->allowed,
						 below_footprint, x, out) == 0)
		return 0;
	return lp_pred_fit_select(&x->m->basis, P, y, k, cf, x->hi, out);
}

/* Two bins' distance models agree at every fitted size within the
 * tolerance, plus one: distances are whole numbers, so at small sizes a
 * difference of one is quantisation, not structure. Beyond the fitted
 * sizes the models are not compared: there only the data can tell bins
 * apart, and noise in small bins would fan their extrapolations out. */
static int close_fits(const struct bctx *x, const struct lp_pred_fit *a, const struct lp_pred_fit *b)
{
	double tol = x->m->tolerance;

	for (size_t r = 0; r < x->nr; r++) {
		double da = lp_pred_fit_eval(&x->m->basis, a, x->P[r]), db = lp_pred_fit_eval(&x->m->basis, b, x->P[r]);
		if (fabs(da - db) > tol * (fabs(da) + fabs(db)) / 2 + 1)
			return 0;
	}
	return 1;
}

static void add_leaf(struct bctx *x, const double *u0, const double *u1, const struct lp_pred_fit *f)
{
	if (x->err)
		return;
	if (LP_ARRAY_RESERVE(x->leaf, x->capleaf, x->nleaf + 1, 16, "fit leaves") < 0) {
		x->err = lp_seterr(LP_ENOMEM, "out of memory");
		return;
	}
	struct leaf *L = &x->leaf[x->nleaf++];
	memcpy(L->u0, u0, x->nr * sizeof(*u0));
	memcpy(L->u1, u1, x->nr * sizeof(*u1));
	L->dist = *f;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Split a bin in two where the midpoint of its distance range falls
 * (section 4.1): in each run, the share of the bin's accesses below the
 * midpoint of the bin's distances; the median share over the runs splits
 * every run, so the halves keep fixed shares of the bin. (Splitting each
 * run at its own midpoint instead was tried: it follows shares that change
 * with the size, but pairs up different reuse patterns at different sizes
 * and extrapolates far worse on real programs.) */
static void split(struct bctx *x, const double *u0, const double *u1, const struct lp_pred_fit *f,
		  unsigned depth)
{
	double srt[MAXRUNS], us[MAXRUNS], med;
	struct lp_pred_fit fl, fr;
	int narrow = 1;
	size_t nm = 0;

	if (x->err)
		return;
	for (size_t r = 0; r < x->nr; r++) {
		double w = u1[r] - u0[r], a, b, mean, rho;
		if (!(w * x->R[r] > 1e-9))
			continue;
		a = lp_pred_quant_quantile(&x->q[r], u0[r]);
		b = lp_pred_quant_quantile(&x->q[r], u1[r]);
		mean = lp_pred_quant_mean(&x->q[r], u0[r], u1[r]);
		if (b - a > x->m->tolerance * mean + 1)
			narrow = 0;
		rho = (lp_pred_quant_cdf(&x->q[r], (a + b) / 2) - u0[r]) / w;
		srt[nm++] = rho >= 0 ? (rho > 1 ? 1 : rho) : 0;
	}
	if (narrow || depth >= x->m->max_depth || !nm) {
		add_leaf(x, u0, u1, f);
		return;
	}
	qsort(srt, nm, sizeof(*srt), cmp_double);
	med = nm % 2 ? srt[nm / 2] : (srt[nm / 2 - 1] + srt[nm / 2]) / 2;
	if (med < 1e-6 || med > 1 - 1e-6)
		med = 0.5; /* a degenerate midpoint: halve the bin */
	for (size_t r = 0; r < x->nr; r++)
		us[r] = u0[r] + med * (u1[r] - u0[r]);
	if (fit_dist(x, u0, us, &fl) < 0 || fit_dist(x, us, u1, &fr) < 0 || close_fits(x, &fl, &fr)) {
		add_leaf(x, u0, u1, f);
		return;
	}
	split(x, u0, us, &fl, depth + 1);
	split(x, us, u1, &fr, depth + 1);
}

/* Merge neighbouring bins whose distance models agree. */
static int coalesce(struct bctx *x)
{
	for (int changed = 1; changed;) {
		changed = 0;
		for (size_t i = 0; i + 1 < x->nleaf; i++) {
			struct leaf *a = &x->leaf[i], *b = &x->leaf[i + 1];
			struct lp_pred_fit f;
			if (!close_fits(x, &a->dist, &b->dist) || fit_dist(x, a->u0, b->u1, &f) < 0)
				continue;
			memcpy(a->u1, b->u1, x->nr * sizeof(*a->u1));
			a->dist = f;
			memmove(b, b + 1, (x->nleaf - i - 2) * sizeof(*b));
			x->nleaf--;
			changed = 1;
		}
	}
	return 0;
}

/* Count of an exact distance d in h (0 if absent). */
static double count_at(const struct lp_pred_hist *h, double d)
{
	for (size_t i = 0; i < h->n && h->e[i].lo <= d; i++)
		if (h->e[i].lo == d && h->e[i].hi == d)
			return h->e[i].count;
	return 0;
}

struct accbound {
	const struct lp_pred_model *m;
	const struct lp_pred_fit *acc;
};

/* A bin holds no more accesses than its group. */
static double below_acc_fn(void *arg, double P)
{
	const struct accbound *a = arg;
	double f = lp_pred_fit_eval(&a->m->basis, a->acc, P);

	return f > 0 ? 1.05 * f + 1 : INFINITY;
}

/* The constant distances of the histograms h[] of the n runs (fin[r]: run r
 * has finite distances, nf of them), into *cd (malloc'ed) and *nconst.
 * Constant distances (section 4.1: reuse inside the innermost loop,
 * the same at every size): an exact small distance present in the
 * largest run and at least one other, holding a share of the accesses
 * that stays within a factor of 8 over the runs that have it. (A
 * distance can appear only from some size on: a row that starts to
 * straddle a page.) A scaling distance that passes through a small
 * value at some size fails the share test. */
static int const_distances(const struct lp_pred_model *m, size_t b, struct lp_pred_hist *const *h,
			   const int *fin, size_t nf, double **cd, size_t *nconst)
{
	size_t n = m->nsizes, last = n - 1, cap = 0;
	int rc;

	if (nf < 2)
		return 0;
	while (!fin[last])
		last--;
	const struct lp_pred_hist *hl = h[last];
	for (size_t i = 0; i < hl->n; i++) {
		double d = hl->e[i].lo, fmin_ = INFINITY, fmax_ = 0;
		int ok = hl->e[i].hi == d && d < 256, present = 0;
		for (size_t r = 0; r < n && ok; r++) {
			double c;
			if (!fin[r] || !((c = count_at(h[r], d)) > 0))
				continue;
			present++;
			fmin_ = fmin(fmin_, c / lp_pred_hist_finite(h[r]));
			fmax_ = fmax(fmax_, c / lp_pred_hist_finite(h[r]));
		}
		/* a bin of 1e-4 of the accesses or less is noise, better
		 * left to the bins of the rest */
		/* a distance seen only from some size on must be small (reuse
		 * inside an iteration: a few blocks); larger ones appearing
		 * late are modes of the rest moving with the size */
		/* distance 0 (the block just used, nothing between) is
		 * no scaling distance passing by: its share may change
		 * (two arrays sharing a page at their boundary, a share
		 * that shrinks as the arrays grow) */
		if (!ok || present < 2 || (d > 0 && fmax_ > 8 * fmin_) || fmin_ < 1e-4 ||
		    ((size_t)present < nf && d > 8))
			continue;
		/* set distances: the reuses of a growing footprint spread
		 * over the sets sit at 1, 2, 3 lines per set at small
		 * sizes before they grow (as D/s): only 0, the reuse of
		 * the line just used, is taken as constant */
		if (lp_pred_key_sets(m->blocks[b]) && d > 0)
			continue;
		if ((rc = LP_ARRAY_RESERVE(*cd, cap, *nconst + 1, 8, "constant bins")) < 0)
			return rc;
		(*cd)[(*nconst)++] = d;
	}
	return 0;
}

/* The counts of the constant bins. */
static int fit_const_bins(const struct lp_pred_model *m, struct xbm *bm, struct lp_pred_hist *const *h)
{
	size_t n = m->nsizes;
	double y[64], hi = m->range * m->sizes[n - 1];
	const unsigned cf = LP_PRED_FIT_NONNEG | LP_PRED_FIT_MONOTONE;
	int rc;

	/* a constant bin holds no more accesses than the group (its count may
	 * still need a faster term: P^3 - P^4/2048 is what stays in a page
	 * when a column walk crosses pages ever more often) */
	uint32_t acc_allowed = 0;
	for (size_t j = 0; j < bm->nconst; j++) {
		for (size_t r = 0; r < n; r++)
			y[r] = count_at(h[r], bm->cd[j]);
		struct accbound ab = { m, &bm->acc };
		if (lp_pred_fit_select_below(&m->basis, m->sizes, y, n, cf, hi, acc_allowed, below_acc_fn, &ab,
					 &bm->ck[j]) < 0 &&
		    (rc = lp_pred_fit_select(&m->basis, m->sizes, y, n, cf, hi, &bm->ck[j])) < 0)
			return rc;
	}
	return 0;
}

/* The rest (the accesses at no constant distance): its count, and its
 * bins, split recursively (split(), coalesce()). */
static int fit_rest(const struct lp_pred_model *m, struct xbm *bm, size_t b, struct lp_pred_hist *const *h)
{
	size_t n = m->nsizes, nconst = bm->nconst;
	const double *cd = bm->cd;
	double y[64], hi = m->range * m->sizes[n - 1];
	const unsigned cf = LP_PRED_FIT_NONNEG | LP_PRED_FIT_MONOTONE;
	struct bctx x = { 0 };
	struct lp_pred_hent *rest[64] = { 0 };
	size_t nrest[64] = { 0 };
	int rc = 0;

	x.m = m;
	/* the footprint is measured most finely at the smallest block size;
	 * at a larger one it is that many bytes, in blocks, plus a few blocks
	 * split between data structures */
	x.footprint = m->fblock ? &m->footprint : NULL;
	/* (a set distance is at most the stack distance at its line size) */
	x.fscale = m->fblock ? (double)m->fblock / (double)lp_pred_key_block(m->blocks[b]) : 1;
	x.hi = hi;
	/* a stack distance never exceeds the footprint, so it cannot grow
	 * faster: terms that outgrow the footprint's fit are left out */
	if (x.footprint)
		x.allowed = no_faster(m, x.footprint, x.fscale);
	x.P = malloc(n * sizeof(*x.P));
	x.R = malloc(n * sizeof(*x.R));
	x.ridx = malloc(n * sizeof(*x.ridx));
	x.q = calloc(n, sizeof(*x.q));
	if (!x.P || !x.R || !x.ridx || !x.q) {
		rc = lp_seterr(LP_ENOMEM, "out of memory");
		goto out;
	}
	for (size_t r = 0; r < n; r++) {
		double s = 0;
		if (!(rest[r] = malloc((h[r]->n + 1) * sizeof(*rest[r])))) {
			rc = lp_seterr(LP_ENOMEM, "out of memory");
			goto out;
		}
		for (size_t i = 0; i < h[r]->n; i++) {
			int isconst = 0;
			for (size_t j = 0; j < nconst; j++)
				isconst |= h[r]->e[i].lo == cd[j] && h[r]->e[i].hi == cd[j];
			if (!isconst) {
				rest[r][nrest[r]++] = h[r]->e[i];
				s += h[r]->e[i].count;
			}
		}
		y[r] = s;
		if (s > 0) {
			if ((rc = lp_pred_quant_init(&x.q[x.nr], rest[r], nrest[r])) < 0)
				goto out;
			x.P[x.nr] = m->sizes[r];
			x.R[x.nr] = s;
			x.ridx[x.nr++] = r;
		}
	}
	if ((rc = lp_pred_fit_select(&m->basis, m->sizes, y, n, cf, hi, &bm->rest)) < 0)
		goto out;
	if (x.nr) {
		struct lp_pred_fit f;
		double u0[MAXRUNS], u1[MAXRUNS];
		for (size_t r = 0; r < x.nr; r++) {
			u0[r] = 0;
			u1[r] = 1;
		}
		if ((rc = fit_dist(&x, u0, u1, &f)) < 0)
			goto out;
		split(&x, u0, u1, &f, 0);
		if ((rc = x.err) < 0 || (rc = coalesce(&x)) < 0)
			goto out;
		bm->nbins = x.nleaf;
		bm->cnt = malloc((x.nleaf + 1) * sizeof(*bm->cnt));
		bm->dist = malloc((x.nleaf + 1) * sizeof(*bm->dist));
		if (!bm->cnt || !bm->dist) {
			rc = lp_seterr(LP_ENOMEM, "out of memory");
			goto out;
		}
		for (size_t i = 0; i < x.nleaf; i++) {
			/* section 4.1: a split keeps the same share of its parent's
			 * accesses in every run, so a bin's count is its share of
			 * the rest (the same in every run; the parent's frequency
			 * "divided proportionally with the splitting ratio"), not a
			 * fit of its own */
			double share = x.leaf[i].u1[0] - x.leaf[i].u0[0];
			bm->dist[i] = x.leaf[i].dist;
			bm->cnt[i] = bm->rest;
			for (size_t j = 0; j < LP_PRED_BASIS_MAX; j++)
				bm->cnt[i].coef[j] *= share;
		}
	}
out:
	for (size_t r = 0; r < x.nr; r++)
		lp_pred_quant_release(&x.q[r]);
	for (size_t r = 0; r < n; r++)
		free(rest[r]);
	free(x.q);
	free(x.P);
	free(x.R);
	free(x.ridx);
	free(x.leaf);
	return rc;
}

int lp_pred_model_fit_block(struct lp_pred_model *m, struct xgroup *g, size_t b)
{
	size_t n = m->nsizes, nf = 0, nconst = 0;
	double y[64], hi = m->range * m->sizes[n - 1], *cd = NULL;
	struct xbm *bm = &g->bm[b];
	struct lp_pred_hist *h[64];
	int rc = 0, fin[64];
	const unsigned cf = LP_PRED_FIT_NONNEG | LP_PRED_FIT_MONOTONE;

	memset(bm, 0, sizeof(*bm));
	for (size_t r = 0; r < n; r++) {
		h[r] = &g->mh[r * m->nblocks + b];
		fin[r] = lp_pred_hist_finite(h[r]) > 0;
		nf += fin[r];
		y[r] = lp_pred_hist_finite(h[r]) + h[r]->cold;
	}
	if ((rc = lp_pred_fit_select(&m->basis, m->sizes, y, n, cf, hi, &bm->acc)) < 0)
		return rc;
	for (size_t r = 0; r < n; r++)
		y[r] = h[r]->cold;
	if ((rc = lp_pred_fit_select(&m->basis, m->sizes, y, n, cf, hi, &bm->cold)) < 0)
		return rc;
	bm->valid = 1;
	if ((rc = const_distances(m, b, h, fin, nf, &cd, &nconst)) < 0) {
		free(cd);
		return rc;
	}
	bm->nconst = nconst;
	bm->cd = cd;
	if (nconst && !(bm->ck = calloc(nconst, sizeof(*bm->ck))))
		return lp_seterr(LP_ENOMEM, "out of memory");
	if ((rc = fit_const_bins(m, bm, h)) < 0)
		return rc;
	return fit_rest(m, bm, b, h);
}
