/* Scalable models of reuse-distance histograms (Marin & Mellor-Crummey,
 * section 4.1) and their evaluation (section 5).
 *
 * Assumptions (docs/prediction.md, "Modelling"):
 * - A group's histogram at a block size is modelled as: cold accesses; the
 *   leading bins whose distance is the same at every size (constant-distance
 *   reuse inside the innermost loop), each with its own count; and the rest,
 *   split into bins that hold a fixed fraction of the rest at every size,
 *   each with a distance that is a function of P. Counts (accesses, cold,
 *   constant bins, rest) and distances are each fitted as functions of P
 *   (prediction-fit.c), the counts rather than fractions because they are the
 *   quantities that scale as plain polynomials in regular codes.
 * - Splitting: a bin [u0, u1] of the rest's quantiles is split where, in
 *   each run, the midpoint of its distance range falls; the median of those
 *   fractions over the runs is the split for all runs. Splitting stops when
 *   the two halves' fitted distances agree within the tolerance at every
 *   fitted size and on a grid up to the constraint range, at a depth limit,
 *   or when the bin is already that narrow in every run. Adjacent bins whose
 *   models agree are then coalesced.
 * - A bin's accesses are all at its fitted (mean) distance: fully
 *   associative LRU misses are cold accesses plus the bins at distances >=
 *   the cache's blocks (section 5.1); set-associative ones weight each bin
 *   by the binomial miss probability (section 5.2, lp_binomial_miss()).
 * - Stack distances are per block size: a level is predicted only from
 *   histograms collected at its line (or page) size.
 */
#include "prediction/prediction-internal.h"

#include "common/error.h"
#include "common/io.h"

#include <locprof/model.h>

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

struct xbm {
	int valid;
	struct lp_pred_fit acc, cold, rest;
	size_t nconst;
	double *cd;
	struct lp_pred_fit *ck;
	size_t nbins;
	struct lp_pred_fit *cnt; /* accesses of each bin of the rest */
	struct lp_pred_fit *dist;
};

struct xgroup {
	char *function, *where, *strides;
	int loop;
	size_t npcs;
	struct lp_pred_fit refs;
	struct xbm *bm;    /* per block */
	struct lp_pred_placement *cal; /* per block (set-distance keys only) */
	double *mrefs;     /* per run */
	struct lp_pred_hist *mh;  /* per run x block */
	/* strided walk (docs/prediction.md, "Strided placement"): measured in
	 * every run; its combined stride (bytes) and accesses per walk, as
	 * functions of P, and as measured */
	int walk, walk1;
	struct lp_pred_fit wstride, wlen, wstride1;
	double *mwstride, *mwlen, *mwstride1; /* per run (stride1 < 0: none) */
};

struct xmloop {
	char *function, *where;
	int parent, depth;
};

struct lp_pred_model {
	struct lp_pred_basis basis;
	char *command;
	size_t nsizes;
	double *sizes;
	size_t nblocks;
	uint64_t *blocks;
	double range, tolerance;
	unsigned max_depth;
	struct lp_pred_fit footprint;  /* distinct blocks of the program at the smallest block size */
	uint64_t fblock;           /* that block size; 0 if no footprint */
	double *total;     /* per run */
	struct lp_pred_fit refs;
	size_t ngroups;
	struct xgroup *g;
	size_t nloops;
	struct xmloop *loops;
};

static long block_index(const struct lp_pred_model *m, uint64_t block);
static double ev(const struct lp_pred_model *m, const struct lp_pred_fit *f, double P);

static void bm_release(struct xbm *b)
{
	free(b->cd);
	free(b->ck);
	free(b->cnt);
	free(b->dist);
	memset(b, 0, sizeof(*b));
}

void lp_pred_model_free(struct lp_pred_model *m)
{
	if (!m)
		return;
	lp_pred_basis_release(&m->basis);
	free(m->command);
	free(m->sizes);
	free(m->blocks);
	free(m->total);
	for (size_t i = 0; i < m->ngroups; i++) {
		struct xgroup *g = &m->g[i];
		free(g->function);
		free(g->where);
		free(g->strides);
		for (size_t b = 0; g->bm && b < m->nblocks; b++)
			bm_release(&g->bm[b]);
		free(g->bm);
		free(g->cal);
		free(g->mrefs);
		free(g->mwstride);
		free(g->mwlen);
		free(g->mwstride1);
		for (size_t k = 0; g->mh && k < m->nsizes * m->nblocks; k++)
			lp_pred_hist_release(&g->mh[k]);
		free(g->mh);
	}
	free(m->g);
	for (size_t i = 0; i < m->nloops; i++) {
		free(m->loops[i].function);
		free(m->loops[i].where);
	}
	free(m->loops);
	free(m);
}

/* ---- fitting one group at one block size ---------------------------------- */

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
	if (x->nleaf == x->capleaf) {
		size_t cap = x->capleaf ? x->capleaf * 2 : 16;
		struct leaf *nl = realloc(x->leaf, cap * sizeof(*nl));
		if (!nl) {
			x->err = lp_seterr(LP_ENOMEM, "out of memory");
			return;
		}
		x->leaf = nl;
		x->capleaf = cap;
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

static int model_block(struct lp_pred_model *m, struct xgroup *g, size_t b)
{
	size_t n = m->nsizes, nf = 0;
	double y[64], hi = m->range * m->sizes[n - 1], *cd = NULL;
	struct xbm *bm = &g->bm[b];
	struct lp_pred_hist *h[64];
	struct bctx x = { 0 };
	struct lp_pred_hent *rest[64] = { 0 };
	size_t nrest[64] = { 0 }, nconst = 0;
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
	/* constant distances (section 4.1: reuse inside the innermost loop,
	 * the same at every size): an exact small distance present in the
	 * largest run and at least one other, holding a share of the accesses
	 * that stays within a factor of 8 over the runs that have it. (A
	 * distance can appear only from some size on: a row that starts to
	 * straddle a page.) A scaling distance that passes through a small
	 * value at some size fails the share test. */
	if (nf >= 2) {
		size_t last = n - 1;
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
			double *ncd = realloc(cd, (nconst + 1) * sizeof(*ncd));
			if (!ncd) {
				free(cd);
				return lp_seterr(LP_ENOMEM, "out of memory");
			}
			cd = ncd;
			cd[nconst++] = d;
		}
	}
	bm->nconst = nconst;
	bm->cd = cd;
	if (nconst && !(bm->ck = calloc(nconst, sizeof(*bm->ck))))
		return lp_seterr(LP_ENOMEM, "out of memory");
	/* a constant bin holds no more accesses than the group (its count may
	 * still need a faster term: P^3 - P^4/2048 is what stays in a page
	 * when a column walk crosses pages ever more often) */
	uint32_t acc_allowed = 0;
	for (size_t j = 0; j < nconst; j++) {
		for (size_t r = 0; r < n; r++)
			y[r] = count_at(h[r], cd[j]);
		struct accbound ab = { m, &bm->acc };
		if (lp_pred_fit_select_below(&m->basis, m->sizes, y, n, cf, hi, acc_allowed, below_acc_fn, &ab,
					 &bm->ck[j]) < 0 &&
		    (rc = lp_pred_fit_select(&m->basis, m->sizes, y, n, cf, hi, &bm->ck[j])) < 0)
			return rc;
	}
	/* the rest */
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

/* ---- grouping across runs ---------------------------------------------------- */

static size_t uf_find(size_t *p, size_t x)
{
	while (p[x] != x)
		x = p[x] = p[p[x]];
	return x;
}

static void uf_union(size_t *p, size_t a, size_t b)
{
	a = uf_find(p, a);
	b = uf_find(p, b);
	if (a != b)
		p[a > b ? a : b] = a < b ? a : b;
}

struct gkey {
	const char *module;
	uint64_t addr;
};

/* Index of key in keys[0..*n), appended when new. */
static size_t key_index(struct gkey **keys, size_t *n, size_t *cap, const char *module, uint64_t addr)
{
	for (size_t i = 0; i < *n; i++)
		if ((*keys)[i].addr == addr && !strcmp((*keys)[i].module, module))
			return i;
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 64;
		struct gkey *nk = realloc(*keys, c * sizeof(*nk));
		if (!nk)
			return SIZE_MAX;
		*keys = nk;
		*cap = c;
	}
	(*keys)[*n] = (struct gkey){ module, addr };
	return (*n)++;
}

static int cmp_run(const void *a, const void *b)
{
	const struct lp_pred_run *x = *(const struct lp_pred_run *const *)a, *y = *(const struct lp_pred_run *const *)b;
	return x->size < y->size ? -1 : x->size > y->size;
}

/* "file:a-b" or "file:a" -> file (in buf), a, b; 0 if it does not parse. */
static int parse_where(const char *w, char *file, size_t len, int *a, int *b)
{
	const char *colon = strrchr(w, ':');
	char *end;

	if (!colon || (size_t)(colon - w) >= len)
		return 0;
	memcpy(file, w, (size_t)(colon - w));
	file[colon - w] = 0;
	*a = (int)strtol(colon + 1, &end, 10);
	*b = *a;
	if (*end == '-')
		*b = (int)strtol(end + 1, &end, 10);
	return !*end && *a > 0;
}

static char *join_where(const char *file, int a, int b)
{
	char *s = NULL;
	int rc = a == b ? asprintf(&s, "%s:%d", file, a) : asprintf(&s, "%s:%d-%d", file, a, b);

	return rc < 0 ? NULL : s;
}

/* The innermost stride of a pc ("16,0,?" -> 16); 0 if not a value. */
static int64_t inner_stride(const char *st)
{
	char *end;
	long long v;

	if (!st || !(*st == '-' || (*st >= '0' && *st <= '9')))
		return 0;
	v = strtoll(st, &end, 10);
	return *end == ',' || !*end ? (int64_t)v : 0;
}

/* The stride at the next level out ("16,8,?" -> 8); -1 if not a value. */
static double outer_stride(const char *st)
{
	const char *c = st ? strchr(st, ',') : NULL;
	char *end;
	long long v;

	if (!c || !(c[1] == '-' || (c[1] >= '0' && c[1] <= '9')))
		return -1;
	v = strtoll(c + 1, &end, 10);
	return *end == ',' || !*end ? (double)(v < 0 ? -v : v) : -1;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

/* The walk of model group gi in run R (pcs mapped to groups by grp[]):
 * the busiest pc with a nonzero innermost stride s and measured runs; the
 * group's pcs with the same |s| at distinct first addresses, u of them,
 * interleave when their offsets modulo |s| are multiples of |s| / u (an
 * unrolled loop: A[i][k], A[i][k+1]); then the group walks with stride
 * |s| / u, u (steps per run + 1) accesses per walk. 0 if not. */
static int run_walk(const struct lp_pred_run *R, const size_t *grp, size_t gi, double *stride, double *len,
		    double *stride1)
{
	const struct lp_pred_run_pc *best = NULL;
	int64_t s, off[64];
	size_t u = 0;

	for (size_t i = 0; i < R->npcs; i++) {
		const struct lp_pred_run_pc *p = &R->pcs[i];
		if (grp[i] != gi || !p->has_walk || !p->wruns || !inner_stride(p->strides))
			continue;
		if (!best || p->refs > best->refs)
			best = p;
	}
	if (!best)
		return 0;
	s = inner_stride(best->strides);
	s = s < 0 ? -s : s;
	for (size_t i = 0; i < R->npcs; i++) {
		const struct lp_pred_run_pc *p = &R->pcs[i];
		int64_t v = inner_stride(p->strides), o;
		int dup = 0;
		if (grp[i] != gi || !p->has_walk || (v != s && v != -s))
			continue;
		o = (int64_t)(p->first - best->first) % s;
		if (o < 0)
			o += s;
		for (size_t k = 0; k < u; k++)
			dup |= off[k] == o;
		if (dup)
			continue;
		if (u == 64)
			return 0;
		off[u++] = o;
	}
	qsort(off, u, sizeof(*off), cmp_i64);
	if (s % (int64_t)u)
		return 0;
	for (size_t k = 0; k < u; k++)
		if (off[k] != (int64_t)k * (s / (int64_t)u))
			return 0;
	*stride = (double)(s / (int64_t)u);
	*len = (double)u * ((double)best->wsteps / (double)best->wruns + 1);
	/* the next loop out moves every pc of the walk by the same step */
	*stride1 = outer_stride(best->strides);
	return 1;
}

/* Fit the group's walk when every run has one; the stride must be fitted
 * exactly (within half a byte at every run), or there is no walk. */
static int fit_walk(struct lp_pred_model *m, struct xgroup *g)
{
	double hi = m->range * m->sizes[m->nsizes - 1];
	int rc;

	g->walk = 0;
	for (size_t r = 0; r < m->nsizes; r++)
		if (!(g->mwstride[r] > 0) || !(g->mwlen[r] >= 1))
			return 0;
	if ((rc = lp_pred_fit_select(&m->basis, m->sizes, g->mwstride, m->nsizes, LP_PRED_FIT_NONNEG,
				 hi, &g->wstride)) < 0)
		return rc;
	for (size_t r = 0; r < m->nsizes; r++)
		if (fabs(ev(m, &g->wstride, m->sizes[r]) - g->mwstride[r]) > 0.5)
			return 0;
	if ((rc = lp_pred_fit_select(&m->basis, m->sizes, g->mwlen, m->nsizes, LP_PRED_FIT_NONNEG | LP_PRED_FIT_MONOTONE,
				 hi, &g->wlen)) < 0)
		return rc;
	g->walk = 1;
	/* the outer stride, when every run has one (and fitted exactly) */
	g->walk1 = 0;
	for (size_t r = 0; r < m->nsizes; r++)
		if (!(g->mwstride1[r] > 0))
			return 0;
	if ((rc = lp_pred_fit_select(&m->basis, m->sizes, g->mwstride1, m->nsizes, LP_PRED_FIT_NONNEG, hi,
				 &g->wstride1)) < 0)
		return rc;
	for (size_t r = 0; r < m->nsizes; r++)
		if (fabs(ev(m, &g->wstride1, m->sizes[r]) - g->mwstride1[r]) > 0.5)
			return 0;
	g->walk1 = 1;
	return 0;
}

int lp_pred_model_fit(struct lp_pred_model **out, struct lp_pred_run *const *runs_in, size_t n,
		  const struct lp_pred_fit_options *o)
{
	struct lp_pred_model *m;
	struct lp_pred_run **runs = NULL;
	struct gkey *pk = NULL, *lk = NULL;
	size_t npk = 0, cappk = 0, nlk = 0, caplk = 0;
	size_t **pcmap = NULL, **loopmap = NULL, *gp = NULL, *lsrc = NULL, *gof = NULL, *lof = NULL;
	int rc = 0;

	*out = NULL;
	if (n < 3)
		return lp_seterr(LP_EINVAL, "a model needs runs at 3 or more sizes (have %zu)", n);
	if (n > 64)
		return lp_seterr(LP_ELIMIT, "at most 64 runs");
	if (!(m = calloc(1, sizeof(*m))))
		return lp_seterr(LP_ENOMEM, "out of memory");
	if ((rc = lp_pred_basis_parse(&m->basis, o && o->basis ? o->basis : NULL)) < 0)
		goto fail;
	m->range = o && o->range > 0 ? o->range : 16;
	m->tolerance = o && o->tolerance > 0 ? o->tolerance : 0.05;
	m->max_depth = o && o->max_depth ? o->max_depth : 10;
	if (!(runs = malloc(n * sizeof(*runs))))
		goto nomem;
	memcpy(runs, runs_in, n * sizeof(*runs));
	qsort(runs, n, sizeof(*runs), cmp_run);
	for (size_t r = 1; r < n; r++)
		if (runs[r]->size == runs[r - 1]->size) {
			rc = lp_seterr(LP_EINVAL, "two runs at size %g", runs[r]->size);
			goto fail;
		}
	m->nsizes = n;
	if (!(m->sizes = malloc(n * sizeof(*m->sizes))) || !(m->total = malloc(n * sizeof(*m->total))))
		goto nomem;
	for (size_t r = 0; r < n; r++) {
		m->sizes[r] = runs[r]->size;
		m->total[r] = (double)runs[r]->references;
	}
	if (!(m->command = strdup(runs[n - 1]->command ? runs[n - 1]->command : "")))
		goto nomem;
	/* block sizes common to every run */
	if (!(m->blocks = malloc(runs[0]->nblocks * sizeof(*m->blocks))))
		goto nomem;
	for (size_t b = 0; b < runs[0]->nblocks; b++) {
		int all = 1;
		for (size_t r = 1; r < n && all; r++) {
			int have = 0;
			for (size_t k = 0; k < runs[r]->nblocks; k++)
				have |= runs[r]->blocks[k] == runs[0]->blocks[b];
			all = have;
		}
		if (all)
			m->blocks[m->nblocks++] = runs[0]->blocks[b];
	}
	if (!m->nblocks) {
		rc = lp_seterr(LP_EINVAL, "the runs have no block size in common");
		goto fail;
	}
	/* global pcs and loops */
	pcmap = calloc(n, sizeof(*pcmap));
	loopmap = calloc(n, sizeof(*loopmap));
	if (!pcmap || !loopmap)
		goto nomem;
	for (size_t r = 0; r < n; r++) {
		struct lp_pred_run *R = runs[r];
		pcmap[r] = malloc((R->npcs + 1) * sizeof(**pcmap));
		loopmap[r] = malloc((R->nloops + 1) * sizeof(**loopmap));
		if (!pcmap[r] || !loopmap[r])
			goto nomem;
		for (size_t l = 0; l < R->nloops; l++)
			if ((loopmap[r][l] = key_index(&lk, &nlk, &caplk, R->modules[R->loops[l].module],
						       R->loops[l].header)) == SIZE_MAX)
				goto nomem;
		for (size_t i = 0; i < R->npcs; i++) {
			const struct lp_pred_run_pc *p = &R->pcs[i];
			/* code in no binary has no address stable across runs */
			const char *mod = p->module >= 0 ? R->modules[p->module] : "";
			if ((pcmap[r][i] = key_index(&pk, &npk, &cappk, mod, p->module >= 0 ? p->vaddr : 0)) ==
			    SIZE_MAX)
				goto nomem;
		}
	}
	gp = malloc((npk + 1) * sizeof(*gp));
	lsrc = malloc((nlk + 1) * sizeof(*lsrc));
	gof = malloc((npk + 1) * sizeof(*gof));
	lof = malloc((nlk + 1) * sizeof(*lof));
	if (!gp || !lsrc || !gof || !lof)
		goto nomem;
	for (size_t i = 0; i < npk; i++)
		gp[i] = i;
	for (size_t i = 0; i < nlk; i++)
		lsrc[i] = i;
	for (size_t r = 0; r < n; r++) {
		struct lp_pred_run *R = runs[r];
		for (size_t l = 0; l < R->nloops; l++)
			if (R->loops[l].src >= 0)
				uf_union(lsrc, loopmap[r][l], loopmap[r][R->loops[l].src]);
		/* first pc of each run group */
		for (size_t i = 0; i < R->npcs; i++)
			for (size_t j = 0; j < i; j++)
				if (R->pcs[j].group == R->pcs[i].group) {
					uf_union(gp, pcmap[r][i], pcmap[r][j]);
					break;
				}
	}
	/* model loops: source loops, numbered in order of first appearance */
	for (size_t i = 0; i < nlk; i++)
		lof[i] = SIZE_MAX;
	for (size_t r = n; r-- > 0;) {
		struct lp_pred_run *R = runs[r];
		for (size_t l = 0; l < R->nloops; l++) {
			size_t root = uf_find(lsrc, loopmap[r][l]);
			if (lof[root] == SIZE_MAX) {
				struct xmloop *nl2 = realloc(m->loops, (m->nloops + 1) * sizeof(*nl2));
				if (!nl2)
					goto nomem;
				m->loops = nl2;
				memset(&m->loops[m->nloops], 0, sizeof(*m->loops));
				m->loops[m->nloops].parent = -1;
				m->loops[m->nloops].depth = R->loops[l].depth;
				if (!(m->loops[m->nloops].function = strdup(R->loops[l].function)) ||
				    !(m->loops[m->nloops].where = strdup(R->loops[l].where)))
					goto nomem;
				lof[root] = m->nloops++;
			} else {
				/* widen the line range over the source loop's object loops */
				struct xmloop *L = &m->loops[lof[root]];
				char f1[256], f2[256];
				int a1, b1, a2, b2;
				if (parse_where(L->where, f1, sizeof(f1), &a1, &b1) &&
				    parse_where(R->loops[l].where, f2, sizeof(f2), &a2, &b2) && !strcmp(f1, f2) &&
				    (a2 < a1 || b2 > b1)) {
					char *w = join_where(f1, a2 < a1 ? a2 : a1, b2 > b1 ? b2 : b1);
					if (!w)
						goto nomem;
					free(L->where);
					L->where = w;
				}
			}
		}
	}
	for (size_t r = n; r-- > 0;) {
		struct lp_pred_run *R = runs[r];
		for (size_t l = 0; l < R->nloops; l++) {
			size_t me = lof[uf_find(lsrc, loopmap[r][l])];
			if (R->loops[l].parent >= 0 && m->loops[me].parent < 0) {
				size_t p = lof[uf_find(lsrc, loopmap[r][R->loops[l].parent])];
				if (p != me)
					m->loops[me].parent = (int)p;
			}
		}
	}
	/* model groups */
	for (size_t i = 0; i < npk; i++)
		gof[i] = SIZE_MAX;
	for (size_t i = 0; i < npk; i++) {
		size_t root = uf_find(gp, i);
		if (gof[root] == SIZE_MAX)
			gof[root] = m->ngroups++;
		gof[i] = gof[root];
	}
	if (!(m->g = calloc(m->ngroups + 1, sizeof(*m->g))))
		goto nomem;
	for (size_t k = 0; k < m->ngroups; k++) {
		struct xgroup *g = &m->g[k];
		g->loop = -1;
		g->bm = calloc(m->nblocks, sizeof(*g->bm));
		g->mrefs = calloc(n, sizeof(*g->mrefs));
		g->mh = calloc(n * m->nblocks, sizeof(*g->mh));
		g->mwstride = calloc(n, sizeof(*g->mwstride));
		g->mwlen = calloc(n, sizeof(*g->mwlen));
		g->mwstride1 = calloc(n, sizeof(*g->mwstride1));
		if (!g->bm || !g->mrefs || !g->mh || !g->mwstride || !g->mwlen || !g->mwstride1)
			goto nomem;
	}
	/* walks, per run */
	for (size_t r = 0; r < n; r++) {
		size_t *grp = malloc((runs[r]->npcs + 1) * sizeof(*grp));
		if (!grp)
			goto nomem;
		for (size_t i = 0; i < runs[r]->npcs; i++)
			grp[i] = gof[pcmap[r][i]];
		for (size_t k = 0; k < m->ngroups; k++)
			if (!run_walk(runs[r], grp, k, &m->g[k].mwstride[r], &m->g[k].mwlen[r], &m->g[k].mwstride1[r]))
				m->g[k].mwstride[r] = m->g[k].mwlen[r] = 0, m->g[k].mwstride1[r] = -1;
		free(grp);
	}
	{
		/* per group: the pcs counted once, names from its busiest pc */
		unsigned char *counted = calloc(npk + 1, 1);
		uint64_t *best = calloc(m->ngroups + 1, sizeof(*best));
		int *lmin = calloc(m->ngroups + 1, sizeof(*lmin)), *lmax = calloc(m->ngroups + 1, sizeof(*lmax));
		char (*file)[256] = calloc(m->ngroups + 1, sizeof(*file));
		if (!counted || !best || !lmin || !lmax || !file) {
			free(counted);
			free(best);
			free(lmin);
			free(lmax);
			free(file);
			goto nomem;
		}
		for (size_t r = n; r-- > 0 && !rc;) {
			struct lp_pred_run *R = runs[r];
			for (size_t i = 0; i < R->npcs && !rc; i++) {
				const struct lp_pred_run_pc *p = &R->pcs[i];
				size_t gi = gof[pcmap[r][i]];
				struct xgroup *g = &m->g[gi];
				char f[256];
				int a, b;
				g->mrefs[r] += (double)p->refs;
				for (size_t bb = 0; bb < m->nblocks && !rc; bb++) {
					size_t k;
					for (k = 0; k < R->nblocks && R->blocks[k] != m->blocks[bb]; k++)
						;
					rc = lp_pred_hist_merge(&g->mh[r * m->nblocks + bb], &p->h[k]);
				}
				if (!counted[pcmap[r][i]]) {
					counted[pcmap[r][i]] = 1;
					g->npcs++;
				}
				if (parse_where(p->where, f, sizeof(f), &a, &b) &&
				    (!file[gi][0] || !strcmp(file[gi], f))) {
					snprintf(file[gi], sizeof(file[gi]), "%s", f);
					if (!lmin[gi] || a < lmin[gi])
						lmin[gi] = a;
					if (b > lmax[gi])
						lmax[gi] = b;
				}
				if (!g->function || p->refs > best[gi]) {
					best[gi] = p->refs;
					free(g->function);
					free(g->strides);
					g->function = strdup(p->function);
					g->strides = strdup(p->strides);
					g->loop = p->loop >= 0 ? (int)lof[uf_find(lsrc, loopmap[r][p->loop])] : -1;
					if (!g->function || !g->strides)
						rc = lp_seterr(LP_ENOMEM, "out of memory");
				}
			}
		}
		for (size_t k = 0; k < m->ngroups && !rc; k++) {
			struct xgroup *g = &m->g[k];
			if (file[k][0])
				g->where = join_where(file[k], lmin[k], lmax[k]);
			else
				g->where = strdup("");
			if (!g->where)
				rc = lp_seterr(LP_ENOMEM, "out of memory");
		}
		free(counted);
		free(best);
		free(lmin);
		free(lmax);
		free(file);
		if (rc < 0)
			goto fail;
	}
	/* the models: references, footprints, then each group */
	if ((rc = lp_pred_fit_select(&m->basis, m->sizes, m->total, n, LP_PRED_FIT_NONNEG | LP_PRED_FIT_MONOTONE,
				 m->range * m->sizes[n - 1], &m->refs)) < 0)
		goto fail;
	{
		size_t fb = 0;
		double y[64] = { 0 };
		/* (keys of set distances are above every block size) */
		for (size_t b = 1; b < m->nblocks; b++)
			if (m->blocks[b] < m->blocks[fb])
				fb = b;
		for (size_t k = 0; k < m->ngroups; k++)
			for (size_t r = 0; r < n; r++)
				y[r] += m->g[k].mh[r * m->nblocks + fb].cold;
		if (lp_pred_fit_select(&m->basis, m->sizes, y, n, LP_PRED_FIT_NONNEG | LP_PRED_FIT_MONOTONE,
				   m->range * m->sizes[n - 1], &m->footprint) == 0)
			m->fblock = m->blocks[fb];
	}
	for (size_t k = 0; k < m->ngroups; k++) {
		struct xgroup *g = &m->g[k];
		if ((rc = lp_pred_fit_select(&m->basis, m->sizes, g->mrefs, n, LP_PRED_FIT_NONNEG | LP_PRED_FIT_MONOTONE,
					 m->range * m->sizes[n - 1], &g->refs)) < 0)
			goto fail;
		for (size_t b = 0; b < m->nblocks; b++)
			if ((rc = model_block(m, g, b)) < 0)
				goto fail;
		if ((rc = fit_walk(m, g)) < 0)
			goto fail;
	}
	if ((rc = lp_pred_model_calibrate(m, LP_PRED_PLACE_DEFAULT, 0)) < 0)
		goto fail;
	goto done;
nomem:
	rc = lp_seterr(LP_ENOMEM, "out of memory");
fail:
	lp_pred_model_free(m);
	m = NULL;
done:
	for (size_t r = 0; r < n; r++) {
		if (pcmap)
			free(pcmap[r]);
		if (loopmap)
			free(loopmap[r]);
	}
	free(pcmap);
	free(loopmap);
	free(runs);
	free(pk);
	free(lk);
	free(gp);
	free(lsrc);
	free(gof);
	free(lof);
	if (rc < 0)
		return rc;
	*out = m;
	return 0;
}

/* ---- accessors ------------------------------------------------------------------ */

size_t lp_pred_model_nsizes(const struct lp_pred_model *m) { return m->nsizes; }
double lp_pred_model_fit_size(const struct lp_pred_model *m, size_t i) { return m->sizes[i]; }
size_t lp_pred_model_nblocks(const struct lp_pred_model *m) { return m->nblocks; }
uint64_t lp_pred_model_block(const struct lp_pred_model *m, size_t i) { return m->blocks[i]; }
const char *lp_pred_model_command(const struct lp_pred_model *m) { return m->command; }
size_t lp_pred_model_ngroups(const struct lp_pred_model *m) { return m->ngroups; }
size_t lp_pred_model_nloops(const struct lp_pred_model *m) { return m->nloops; }

void lp_pred_model_group(const struct lp_pred_model *m, size_t g, struct lp_pred_group_info *out)
{
	const struct xgroup *x = &m->g[g];

	out->function = x->function && *x->function ? x->function : "?";
	out->where = x->where ? x->where : "";
	out->strides = x->strides ? x->strides : "-";
	out->loop = x->loop;
	out->npcs = x->npcs;
}

void lp_pred_model_loop(const struct lp_pred_model *m, size_t l, struct lp_pred_loop_info *out)
{
	out->function = m->loops[l].function;
	out->where = m->loops[l].where;
	out->parent = m->loops[l].parent;
	out->depth = m->loops[l].depth;
}

int lp_pred_model_group_in_loop(const struct lp_pred_model *m, size_t g, size_t l)
{
	for (int x = m->g[g].loop, guard = 0; x >= 0 && guard < 64; x = m->loops[x].parent, guard++)
		if ((size_t)x == l)
			return 1;
	return 0;
}

int lp_pred_model_bins(const struct lp_pred_model *m, size_t g, uint64_t block, size_t *nconst,
		   size_t *nbins)
{
	long b = block_index(m, block);

	*nconst = *nbins = 0;
	if (b < 0 || g >= m->ngroups)
		return lp_seterr(LP_EINVAL, "no group %zu or block size %" PRIu64, g, block);
	*nconst = m->g[g].bm[b].nconst;
	*nbins = m->g[g].bm[b].nbins;
	return 0;
}

const char *lp_pred_model_refs_formula(const struct lp_pred_model *m, size_t g, char *buf, size_t len)
{
	return lp_pred_fit_format(&m->basis, g == SIZE_MAX ? &m->refs : &m->g[g].refs, buf, len);
}

double lp_pred_model_references(const struct lp_pred_model *m, double P)
{
	return ev(m, &m->refs, P);
}

double lp_pred_model_measured_references(const struct lp_pred_model *m, size_t i)
{
	return i < m->nsizes ? m->total[i] : 0;
}

char *lp_pred_model_describe(const struct lp_pred_model *m, size_t g, uint64_t block)
{
	long b = block_index(m, block);
	const struct xbm *bm;
	char f[512], *s = NULL;
	size_t len = 0;
	FILE *o;

	if (b < 0 || g >= m->ngroups) {
		lp_seterr(LP_EINVAL, "no group %zu or block size %" PRIu64, g, block);
		return NULL;
	}
	bm = &m->g[g].bm[b];
	if (!(o = open_memstream(&s, &len))) {
		lp_seterr(LP_ENOMEM, "out of memory");
		return NULL;
	}
	fprintf(o, "  accesses   %s\n", lp_pred_fit_format(&m->basis, &bm->acc, f, sizeof(f)));
	fprintf(o, "  cold       %s\n", lp_pred_fit_format(&m->basis, &bm->cold, f, sizeof(f)));
	for (size_t i = 0; i < bm->nconst; i++)
		fprintf(o, "  d = %-6g count %s\n", bm->cd[i], lp_pred_fit_format(&m->basis, &bm->ck[i], f, sizeof(f)));
	fprintf(o, "  rest       %s\n", lp_pred_fit_format(&m->basis, &bm->rest, f, sizeof(f)));
	for (size_t i = 0; i < bm->nbins; i++) {
		char c[512];
		fprintf(o, "  bin %2zu  count %s  at d = %s\n", i, lp_pred_fit_format(&m->basis, &bm->cnt[i], c, sizeof(c)),
			lp_pred_fit_format(&m->basis, &bm->dist[i], f, sizeof(f)));
	}
	if (m->g[g].walk) {
		char c[512], d[512];
		fprintf(o, "  walk       stride %s bytes, %s accesses", lp_pred_fit_format(&m->basis, &m->g[g].wstride, f, sizeof(f)),
			lp_pred_fit_format(&m->basis, &m->g[g].wlen, c, sizeof(c)));
		if (m->g[g].walk1)
			fprintf(o, ", moved by %s bytes", lp_pred_fit_format(&m->basis, &m->g[g].wstride1, d, sizeof(d)));
		fputc('\n', o);
	}
	if (fclose(o)) {
		free(s);
		lp_seterr(LP_ENOMEM, "out of memory");
		return NULL;
	}
	return s;
}

/* ---- prediction --------------------------------------------------------------------- */

static long block_index(const struct lp_pred_model *m, uint64_t block)
{
	for (size_t b = 0; b < m->nblocks; b++)
		if (m->blocks[b] == block)
			return (long)b;
	return -1;
}

static double ev(const struct lp_pred_model *m, const struct lp_pred_fit *f, double P)
{
	double v = lp_pred_fit_eval(&m->basis, f, P);
	return v > 0 && isfinite(v) ? v : 0;
}

static int cmp_bin(const void *a, const void *b)
{
	const struct lp_pred_bin *x = a, *y = b;
	return x->distance < y->distance ? -1 : x->distance > y->distance;
}

int lp_pred_model_hist(const struct lp_pred_model *m, size_t g, uint64_t block, double P,
		   struct lp_pred_bin **bins, size_t *nbins, double *cold)
{
	long b = block_index(m, block);
	const struct xbm *bm;
	struct lp_pred_bin *v;

	*bins = NULL;
	*nbins = 0;
	*cold = 0;
	if (g >= m->ngroups)
		return lp_seterr(LP_EINVAL, "no group %zu", g);
	if (b < 0)
		return lp_seterr(LP_EINVAL, "no histograms of %" PRIu64 "-byte blocks in the model", block);
	bm = &m->g[g].bm[b];
	if (!bm->valid)
		return 0;
	*cold = ev(m, &bm->cold, P);
	if (!(v = malloc((bm->nconst + bm->nbins + 1) * sizeof(*v))))
		return lp_seterr(LP_ENOMEM, "out of memory");
	for (size_t i = 0; i < bm->nconst; i++)
		v[i] = (struct lp_pred_bin){ bm->cd[i], ev(m, &bm->ck[i], P) };
	/* the bins of the rest share it out (their counts are shares of it:
	 * normalised here only against rounding) */
	double sum = 0, rest = ev(m, &bm->rest, P), acc = ev(m, &bm->acc, P), cst = 0;
	for (size_t i = 0; i < bm->nbins; i++)
		sum += ev(m, &bm->cnt[i], P);
	for (size_t i = 0; i < bm->nbins; i++)
		v[bm->nconst + i] = (struct lp_pred_bin){ ev(m, &bm->dist[i], P),
						      sum > 0 ? ev(m, &bm->cnt[i], P) * rest / sum : 0 };
	/* and all the parts share out the accesses (section 4.1: the
	 * normalised frequencies of a histogram add up to one). The paper
	 * models the leading constant-distance bins and leaves the rest what
	 * remains; here the rest's count is fitted on its own data (it holds
	 * the long reuses, the misses) and the constant-distance bins take
	 * what remains, in the proportions of their fits: their counts are
	 * differences such as a column walk's P^3 - P^4/2048 reuses within a
	 * page, which the constraints over the whole range need not let a fit
	 * reproduce. Only when cold and rest alone exceed the accesses is the
	 * rest scaled down. */
	for (size_t i = 0; i < bm->nconst; i++)
		cst += v[i].count;
	if (cst > 0) {
		double room = acc - *cold - rest, k = room > 0 ? room / cst : 0;
		for (size_t i = 0; i < bm->nconst; i++)
			v[i].count *= k;
		cst *= k;
	}
	if (*cold + rest > acc && rest > 0) {
		double k = acc > *cold ? (acc - *cold) / rest : 0;
		for (size_t i = 0; i < bm->nbins; i++)
			v[bm->nconst + i].count *= k;
	}
	*nbins = bm->nconst + bm->nbins;
	qsort(v, *nbins, sizeof(*v), cmp_bin);
	*bins = v;
	return 0;
}

static double miss_fa(double d, uint64_t blocks)
{
	return d >= (double)blocks ? 1 : 0;
}

static double miss_sa(double d, uint64_t sets, uint64_t ways)
{
	if (sets <= 1)
		return miss_fa(d, ways);
	return lp_binomial_miss(d, sets, ways);
}

/* The key of the level's set-distance histograms, 0 if the model has none
 * (or the level is fully associative, assoc 0: its stack distances are
 * exact; a level of one set given by its ways uses the set distances of
 * 1xLINE when they were collected, which are its stack distances). */
static uint64_t setd_key(const struct lp_pred_model *m, const struct lp_pred_level *l)
{
	uint64_t sets = lp_pred_level_sets(l);

	if (l->assoc == 0 || l->block >= (1ull << 32) || sets >= (1ull << 31))
		return 0;
	return block_index(m, LP_PRED_KEY(sets, l->block)) >= 0 ? LP_PRED_KEY(sets, l->block) : 0;
}

/* The key of the set-distance histograms predict uses for level l: those
 * of its geometry, if the largest fitted run has set distances of at least
 * the level's ways (in some group). If none has, the fitted runs never
 * exercised the level's ways: every reuse then sat at a few lines per set,
 * where set distances are small integers that hide how the reuses grow
 * (a capacity reuse of 7500 lines in 2048 sets is at 3 or 4 like its
 * neighbours), and the binomial model of the stack distances, which keep
 * that growth, is used instead. */
static uint64_t setd_use(const struct lp_pred_model *m, const struct lp_pred_level *l)
{
	uint64_t key = setd_key(m, l);
	double W = (double)lp_pred_level_ways(l);
	long b;

	if (!key)
		return 0;
	b = block_index(m, key);
	for (size_t g = 0; g < m->ngroups; g++) {
		const struct lp_pred_hist *h = &m->g[g].mh[(m->nsizes - 1) * m->nblocks + (size_t)b];
		for (size_t i = 0; i < h->n; i++)
			if (h->e[i].hi >= W && h->e[i].count > 0)
				return key;
	}
	return 0;
}

int lp_pred_model_has_setd(const struct lp_pred_model *m, const struct lp_pred_level *l)
{
	return setd_key(m, l) != 0;
}

int lp_pred_model_uses_setd(const struct lp_pred_model *m, const struct lp_pred_level *l)
{
	return setd_use(m, l) != 0;
}

/* ---- placement calibration -------------------------------------------------------- */

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
	lgD = lgamma(D + 1);
	for (int k = 1; k <= CAL_K; k++) {
		double i = k - 1;
		if (i > D) {
			t[k - 1] = 0;
			continue;
		}
		cum += exp(lgD - lgamma(i + 1) - lgamma(D - i + 1) + i * lp + (D - i) * lq);
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
static double miss_place(int place, double D, uint64_t sets, uint64_t ways)
{
	/* (as the unweighted models: the cut of miss_fa(), the binomial of
	 * miss_sa()) */
	switch (place) {
	case LP_PRED_PLACE_EVEN:
		return tail_even(D, (double)sets, (double)ways);
	case LP_PRED_PLACE_CUT:
		return miss_fa(D, sets * ways);
	default:
		return miss_sa(D, sets, ways);
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
	long bs = block_index(m, lp_pred_key_block(key));
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
	uint64_t key = setd_key(m, l);

	memset(out, 0, sizeof(*out));
	out->w[LP_PRED_PLACE_RANDOM] = 1;
	if (key && g < m->ngroups && m->g[g].cal)
		*out = m->g[g].cal[block_index(m, key)];
}

int lp_pred_model_walk(const struct lp_pred_model *m, size_t g, const struct lp_pred_level *l, double P,
		   struct lp_pred_place_walk *w)
{
	const struct xgroup *G;
	double st, acc;

	memset(w, 0, sizeof(*w));
	if (g >= m->ngroups || !(G = &m->g[g])->walk)
		return 0;
	/* strides are whole bytes */
	st = fabs(round(ev(m, &G->wstride, P)));
	acc = ev(m, &G->wlen, P);
	if (!(st > 0) || !(acc >= 2))
		return 0;
	w->stride = st;
	if (G->walk1)
		w->stride1 = fabs(round(ev(m, &G->wstride1, P)));
	/* a stride below the line walks consecutive lines */
	w->lines = st >= (double)l->block ? acc : ceil(acc * st / (double)l->block);
	return w->lines >= 2;
}

int lp_pred_model_predict(const struct lp_pred_model *m, size_t g, const struct lp_pred_level *l, double P,
		      struct lp_pred_count *out)
{
	return lp_pred_model_predict_sa(m, g, l, P, LP_PRED_SA_AUTO, out);
}

enum lp_pred_sa_model lp_pred_model_sa_model(const struct lp_pred_model *m, const struct lp_pred_level *l,
					     int how)
{
	uint64_t sets = lp_pred_level_sets(l);

	if (how == LP_PRED_SA_CALIBRATED && lp_pred_model_has_setd(m, l) && sets > 1)
		return LP_PRED_SA_MODEL_CALIBRATED;
	if (how == LP_PRED_SA_STRIDED && l->assoc && sets > 1)
		return LP_PRED_SA_MODEL_STRIDED;
	if (how == LP_PRED_SA_AUTO && lp_pred_model_uses_setd(m, l))
		return LP_PRED_SA_MODEL_SETD;
	if (how == LP_PRED_SA_AUTO && lp_pred_model_has_setd(m, l))
		return LP_PRED_SA_MODEL_BINOMIAL_UNEXERCISED;
	return !l->assoc || sets <= 1 ? LP_PRED_SA_MODEL_FULL : LP_PRED_SA_MODEL_BINOMIAL;
}

const char *lp_pred_sa_model_name(enum lp_pred_sa_model model)
{
	static const char *const names[] = {
		[LP_PRED_SA_MODEL_FULL] = "full",
		[LP_PRED_SA_MODEL_BINOMIAL] = "binomial",
		[LP_PRED_SA_MODEL_BINOMIAL_UNEXERCISED] = "binomial-unexercised",
		[LP_PRED_SA_MODEL_SETD] = "setd",
		[LP_PRED_SA_MODEL_CALIBRATED] = "calibrated",
		[LP_PRED_SA_MODEL_STRIDED] = "strided",
	};

	return (unsigned)model < sizeof(names) / sizeof(names[0]) ? names[model] : "?";
}

int lp_pred_model_predict_sa(const struct lp_pred_model *m, size_t g, const struct lp_pred_level *l, double P,
			 int how, struct lp_pred_count *out)
{
	struct lp_pred_bin *bins;
	size_t nb;
	double cold;
	uint64_t sets = lp_pred_level_sets(l), ways = lp_pred_level_ways(l);
	uint64_t key = how == LP_PRED_SA_AUTO ? setd_use(m, l) : 0;
	long b = block_index(m, l->block);
	struct lp_pred_placement pl;
	int rc;

	memset(out, 0, sizeof(*out));
	if (b < 0)
		return lp_seterr(LP_EINVAL, "level %s needs histograms of %" PRIu64 "-byte blocks, "
				 "which were not collected (collect with --line or --page)", l->name, l->block);
	if ((rc = lp_pred_model_hist(m, g, l->block, P, &bins, &nb, &cold)) < 0)
		return rc;
	out->references = ev(m, &m->g[g].refs, P);
	out->accesses = m->g[g].bm[b].valid ? ev(m, &m->g[g].bm[b].acc, P) : 0;
	out->fa_misses = out->sa_misses = cold;
	lp_pred_model_placement(m, g, l, &pl);
	if (how == LP_PRED_SA_CALIBRATED && pl.det && sets > 1)
		out->sa_cal = 1;
	if (how == LP_PRED_SA_STRIDED && sets > 1) {
		/* placement of the group's walk at P (prediction-place.c) */
		struct lp_pred_place_walk w;
		double *D = malloc((nb + 1) * sizeof(*D)), *pm = malloc((nb + 1) * sizeof(*pm));
		int have = lp_pred_model_walk(m, g, l, P, &w);
		if (!D || !pm) {
			free(D);
			free(pm);
			free(bins);
			return lp_seterr(LP_ENOMEM, "out of memory");
		}
		for (size_t i = 0; i < nb; i++)
			D[i] = bins[i].distance;
		rc = lp_pred_place_miss(have ? &w : NULL, sets, ways, l->block, D, nb, pm);
		for (size_t i = 0; i < nb && rc == 0; i++) {
			out->fa_misses += bins[i].count * miss_fa(bins[i].distance, l->blocks);
			out->sa_misses += bins[i].count * pm[i];
		}
		out->sa_strided = have;
		free(D);
		free(pm);
		free(bins);
		return rc;
	}
	for (size_t i = 0; i < nb; i++) {
		out->fa_misses += bins[i].count * miss_fa(bins[i].distance, l->blocks);
		if (key)
			continue;
		if (!out->sa_cal) {
			out->sa_misses += bins[i].count * miss_sa(bins[i].distance, sets, ways);
			continue;
		}
		for (int p = 0; p < LP_PRED_PLACE_N; p++)
			if (pl.w[p] > 0)
				out->sa_misses += bins[i].count * pl.w[p] * miss_place(p, bins[i].distance, sets, ways);
	}
	free(bins);
	if (key) {
		/* set distances: an LRU set of k ways misses when d >= k */
		if ((rc = lp_pred_model_hist(m, g, key, P, &bins, &nb, &cold)) < 0)
			return rc;
		out->sa_misses = cold;
		for (size_t i = 0; i < nb; i++)
			out->sa_misses += bins[i].count * miss_fa(bins[i].distance, ways);
		out->sa_setd = 1;
		free(bins);
	}
	return 0;
}

int lp_pred_model_measured(const struct lp_pred_model *m, size_t g, const struct lp_pred_level *l, size_t run,
		       struct lp_pred_count *out)
{
	long b = block_index(m, l->block);
	const struct lp_pred_hist *h;
	uint64_t sets = lp_pred_level_sets(l), ways = lp_pred_level_ways(l);
	double S = (double)l->blocks;

	memset(out, 0, sizeof(*out));
	if (b < 0)
		return lp_seterr(LP_EINVAL, "level %s needs histograms of %" PRIu64 "-byte blocks, "
				 "which were not collected", l->name, l->block);
	if (run >= m->nsizes || g >= m->ngroups)
		return lp_seterr(LP_EINVAL, "no run %zu or group %zu", run, g);
	if (setd_key(m, l)) {
		/* exact: an LRU set of k ways misses when the set distance is >= k */
		const struct lp_pred_hist *sh = &m->g[g].mh[run * m->nblocks + (size_t)block_index(m, setd_key(m, l))];
		double W = (double)ways, sa = sh->cold;
		for (size_t i = 0; i < sh->n; i++) {
			const struct lp_pred_hent *e = &sh->e[i];
			if (e->lo >= W)
				sa += e->count;
			else if (e->hi >= W)
				sa += e->count * (e->hi - W + 1) / (e->hi - e->lo + 1);
		}
		out->sa_setd = 1;
		h = &m->g[g].mh[run * m->nblocks + (size_t)b];
		out->references = m->g[g].mrefs[run];
		out->accesses = lp_pred_hist_finite(h) + h->cold;
		out->fa_misses = h->cold;
		for (size_t i = 0; i < h->n; i++) {
			const struct lp_pred_hent *e = &h->e[i];
			if (e->lo >= S)
				out->fa_misses += e->count;
			else if (e->hi >= S)
				out->fa_misses += e->count * (e->hi - S + 1) / (e->hi - e->lo + 1);
		}
		out->sa_misses = sa;
		return 0;
	}
	h = &m->g[g].mh[run * m->nblocks + (size_t)b];
	out->references = m->g[g].mrefs[run];
	out->accesses = lp_pred_hist_finite(h) + h->cold;
	out->fa_misses = out->sa_misses = h->cold;
	for (size_t i = 0; i < h->n; i++) {
		const struct lp_pred_hent *e = &h->e[i];
		double fa;
		if (e->lo >= S)
			fa = e->count;
		else if (e->hi < S)
			fa = 0;
		else
			fa = e->count * (e->hi - S + 1) / (e->hi - e->lo + 1);
		out->fa_misses += fa;
		out->sa_misses += sets <= 1 ? fa : e->count * lp_binomial_miss((e->lo + e->hi) / 2, sets, ways);
	}
	return 0;
}

/* ---- model files ---------------------------------------------------------------------- */

static void put_fit(struct lp_out *f, const struct lp_pred_model *m, const struct lp_pred_fit *x)
{
	lp_out_printf(f, " %x", x->used);
	for (size_t j = 0; j < m->basis.n; j++)
		lp_out_printf(f, "%s%.17g", j ? "," : ":", x->coef[j]);
}

int lp_pred_model_write(const struct lp_pred_model *m, const char *path)
{
	char buf[512];
	struct lp_out *f;
	int rc;

	if ((rc = lp_out_open(&f, path)) < 0)
		return rc;
	lp_out_printf(f, "# locprof xpred model v1\ncommand ");
	lp_pred_word_put(f, m->command);
	lp_out_printf(f, "\nbasis ");
	lp_pred_word_put(f, lp_pred_basis_text(&m->basis, buf, sizeof(buf)));
	lp_out_printf(f, "\nrange %.17g\ntolerance %.17g\ndepth %u\nsizes", m->range, m->tolerance, m->max_depth);
	for (size_t r = 0; r < m->nsizes; r++)
		lp_out_printf(f, " %.17g", m->sizes[r]);
	lp_out_printf(f, "\nblocks");
	for (size_t b = 0; b < m->nblocks; b++)
		lp_out_printf(f, " %" PRIu64, m->blocks[b]);
	lp_out_printf(f, "\ntotal");
	for (size_t r = 0; r < m->nsizes; r++)
		lp_out_printf(f, " %.17g", m->total[r]);
	lp_out_printf(f, "\nrefs");
	put_fit(f, m, &m->refs);
	lp_out_write(f, "\n", 1);
	for (size_t l = 0; l < m->nloops; l++) {
		lp_out_printf(f, "loop %zu %d %d ", l, m->loops[l].parent, m->loops[l].depth);
		lp_pred_word_put(f, m->loops[l].function);
		lp_out_write(f, " ", 1);
		lp_pred_word_put(f, m->loops[l].where);
		lp_out_write(f, "\n", 1);
	}
	for (size_t k = 0; k < m->ngroups; k++) {
		const struct xgroup *g = &m->g[k];
		lp_out_printf(f, "group %zu %d %zu ", k, g->loop, g->npcs);
		lp_pred_word_put(f, g->function);
		lp_out_write(f, " ", 1);
		lp_pred_word_put(f, g->where);
		lp_out_write(f, " ", 1);
		lp_pred_word_put(f, g->strides);
		lp_out_printf(f, "\ngrefs %zu", k);
		put_fit(f, m, &g->refs);
		lp_out_write(f, "\n", 1);
		for (size_t r = 0; r < m->nsizes && g->mwstride; r++)
			if (g->mwstride[r] > 0)
				lp_out_printf(f, "mwalk %zu %zu %.17g %.17g %.17g\n", k, r, g->mwstride[r], g->mwlen[r],
					g->mwstride1[r]);
		if (g->walk) {
			lp_out_printf(f, "walk %zu", k);
			put_fit(f, m, &g->wstride);
			put_fit(f, m, &g->wlen);
			if (g->walk1)
				put_fit(f, m, &g->wstride1);
			lp_out_write(f, "\n", 1);
		}
		for (size_t r = 0; r < m->nsizes; r++) {
			lp_out_printf(f, "mrefs %zu %zu %.17g\n", k, r, g->mrefs[r]);
			for (size_t b = 0; b < m->nblocks; b++) {
				const struct lp_pred_hist *h = &g->mh[r * m->nblocks + b];
				lp_out_printf(f, "mhist %zu %zu %" PRIu64 " %.17g", k, r, m->blocks[b], h->cold);
				for (size_t i = 0; i < h->n; i++) {
					if (h->e[i].lo == h->e[i].hi)
						lp_out_printf(f, " %.17g:%.17g", h->e[i].lo, h->e[i].count);
					else
						lp_out_printf(f, " %.17g-%.17g:%.17g", h->e[i].lo, h->e[i].hi, h->e[i].count);
				}
				lp_out_write(f, "\n", 1);
			}
		}
		for (size_t b = 0; b < m->nblocks; b++) {
			const struct xbm *bm = &g->bm[b];
			if (!bm->valid)
				continue;
			lp_out_printf(f, "bm %zu %" PRIu64 " acc", k, m->blocks[b]);
			put_fit(f, m, &bm->acc);
			lp_out_printf(f, " cold");
			put_fit(f, m, &bm->cold);
			lp_out_printf(f, " rest");
			put_fit(f, m, &bm->rest);
			lp_out_write(f, "\n", 1);
			for (size_t i = 0; i < bm->nconst; i++) {
				lp_out_printf(f, "bconst %zu %" PRIu64 " %.17g", k, m->blocks[b], bm->cd[i]);
				put_fit(f, m, &bm->ck[i]);
				lp_out_write(f, "\n", 1);
			}
			for (size_t i = 0; i < bm->nbins; i++) {
				lp_out_printf(f, "bbin %zu %" PRIu64, k, m->blocks[b]);
				put_fit(f, m, &bm->cnt[i]);
				put_fit(f, m, &bm->dist[i]);
				lp_out_write(f, "\n", 1);
			}
		}
	}
	lp_out_printf(f, "end\n");
	return lp_out_close(f);
}

static int get_fit(const struct lp_pred_model *m, const char *s, struct lp_pred_fit *x)
{
	char *end;
	unsigned long used = strtoul(s, &end, 16);

	memset(x, 0, sizeof(*x));
	if (*end != ':' || used >= (1ul << m->basis.n))
		return -1;
	x->used = (uint32_t)used;
	for (size_t j = 0; j < m->basis.n; j++) {
		s = end + 1;
		x->coef[j] = strtod(s, &end);
		if (end == s || !isfinite(x->coef[j]) || *end != (j + 1 < m->basis.n ? ',' : 0))
			return -1;
	}
	return 0;
}

static int parse_hist(char **w, int n, struct lp_pred_hist *h)
{
	for (int i = 0; i < n; i++) {
		struct lp_pred_hent e;
		char *colon = strchr(w[i], ':'), *dash, *end;
		if (!colon)
			return -1;
		*colon = 0;
		dash = strchr(w[i] + 1, '-');
		if (dash)
			*dash = 0;
		e.lo = strtod(w[i], &end);
		if (*end)
			return -1;
		e.hi = dash ? strtod(dash + 1, &end) : e.lo;
		if (*end)
			return -1;
		e.count = strtod(colon + 1, &end);
		if (*end || !(e.count >= 0) || !(e.hi >= e.lo) || (h->n && e.lo <= h->e[h->n - 1].hi))
			return -1;
		struct lp_pred_hent *ne = realloc(h->e, (h->n + 1) * sizeof(*ne));
		if (!ne)
			return -2;
		h->e = ne;
		h->e[h->n++] = e;
	}
	return 0;
}

#define MW 8192

char *lp_pred_model_path(const char *path)
{
	struct stat st;
	char *p = NULL;

	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		if (asprintf(&p, "%s/model.xmodel", path) < 0)
			return NULL;
		return p;
	}
	return strdup(path);
}

int lp_pred_model_read(struct lp_pred_model **out, const char *path)
{
	struct lp_in *in = NULL;
	struct lp_pred_model *m;
	char *line, **w = malloc(MW * sizeof(*w));
	size_t lineno = 0;
	int rc, ended = 0;

	*out = NULL;
	if (!w || !(m = calloc(1, sizeof(*m)))) {
		free(w);
		return lp_seterr(LP_ENOMEM, "out of memory");
	}
	if ((rc = lp_in_open(&in, path)) < 0)
		goto fail;
	while ((rc = (int)lp_in_getline(in, &line)) > 0) {
		int n;
		size_t k;
		lineno++;
		if (lineno == 1) {
			if (strcmp(line, "# locprof xpred model v1")) {
				rc = lp_seterr(!strncmp(line, "# locprof xpred model v", 23) ? LP_EVERSION : LP_EFORMAT,
					       "'%s' is not a locprof prediction model (v1)", path);
				goto fail;
			}
			continue;
		}
		n = lp_pred_word_split(line, w, MW);
		if (!n || w[0][0] == '#')
			continue;
		if (n == MW)
			goto bad;
		if (!strcmp(w[0], "command") && n == 2) {
			free(m->command);
			if (!(m->command = strdup(w[1])))
				goto nomem;
		} else if (!strcmp(w[0], "basis") && n == 2 && !m->basis.n) {
			if ((rc = lp_pred_basis_parse(&m->basis, w[1])) < 0)
				goto fail;
		} else if (!strcmp(w[0], "range") && n == 2) {
			m->range = strtod(w[1], NULL);
		} else if (!strcmp(w[0], "tolerance") && n == 2) {
			m->tolerance = strtod(w[1], NULL);
		} else if (!strcmp(w[0], "depth") && n == 2) {
			m->max_depth = (unsigned)strtoul(w[1], NULL, 10);
		} else if (!strcmp(w[0], "sizes") && n >= 2 && !m->sizes) {
			m->nsizes = (size_t)n - 1;
			if (!(m->sizes = malloc(m->nsizes * sizeof(*m->sizes))))
				goto nomem;
			for (size_t r = 0; r < m->nsizes; r++)
				if (!((m->sizes[r] = strtod(w[r + 1], NULL)) > 0))
					goto bad;
		} else if (!strcmp(w[0], "blocks") && n >= 2 && !m->blocks) {
			m->nblocks = (size_t)n - 1;
			if (!(m->blocks = malloc(m->nblocks * sizeof(*m->blocks))))
				goto nomem;
			for (size_t b = 0; b < m->nblocks; b++)
				if (!(m->blocks[b] = strtoull(w[b + 1], NULL, 10)))
					goto bad;
		} else if (!strcmp(w[0], "total") && m->sizes && (size_t)n == m->nsizes + 1 && !m->total) {
			if (!(m->total = malloc(m->nsizes * sizeof(*m->total))))
				goto nomem;
			for (size_t r = 0; r < m->nsizes; r++)
				m->total[r] = strtod(w[r + 1], NULL);
		} else if (!strcmp(w[0], "refs") && n == 2 && m->basis.n) {
			if (get_fit(m, w[1], &m->refs) < 0)
				goto bad;
		} else if (!strcmp(w[0], "loop") && n == 6) {
			struct xmloop *nl = realloc(m->loops, (m->nloops + 1) * sizeof(*nl)), *L;
			if (!nl)
				goto nomem;
			m->loops = nl;
			L = &m->loops[m->nloops];
			memset(L, 0, sizeof(*L));
			if (strtoul(w[1], NULL, 10) != m->nloops)
				goto bad;
			L->parent = atoi(w[2]);
			L->depth = atoi(w[3]);
			if (L->parent < -1)
				goto bad;
			m->nloops++;
			if (!(L->function = strdup(w[4])) || !(L->where = strdup(w[5])))
				goto nomem;
		} else if (!strcmp(w[0], "group") && n == 7 && m->sizes && m->blocks && m->basis.n) {
			struct xgroup *ng = realloc(m->g, (m->ngroups + 1) * sizeof(*ng)), *g;
			if (!ng)
				goto nomem;
			m->g = ng;
			g = &m->g[m->ngroups];
			memset(g, 0, sizeof(*g));
			if (strtoul(w[1], NULL, 10) != m->ngroups)
				goto bad;
			m->ngroups++;
			g->loop = atoi(w[2]);
			g->npcs = strtoul(w[3], NULL, 10);
			g->bm = calloc(m->nblocks, sizeof(*g->bm));
			g->mrefs = calloc(m->nsizes, sizeof(*g->mrefs));
			g->mh = calloc(m->nsizes * m->nblocks, sizeof(*g->mh));
			g->mwstride = calloc(m->nsizes, sizeof(*g->mwstride));
			g->mwlen = calloc(m->nsizes, sizeof(*g->mwlen));
			g->mwstride1 = calloc(m->nsizes, sizeof(*g->mwstride1));
			if (!g->bm || !g->mrefs || !g->mh || !g->mwstride || !g->mwlen || !g->mwstride1 ||
			    !(g->function = strdup(w[4])) ||
			    !(g->where = strdup(w[5])) || !(g->strides = strdup(w[6])))
				goto nomem;
		} else if (!strcmp(w[0], "grefs") && n == 3 && m->ngroups &&
			   strtoul(w[1], NULL, 10) == m->ngroups - 1) {
			if (get_fit(m, w[2], &m->g[m->ngroups - 1].refs) < 0)
				goto bad;
		} else if (!strcmp(w[0], "mwalk") && (n == 5 || n == 6) && m->ngroups &&
			   strtoul(w[1], NULL, 10) == m->ngroups - 1) {
			struct xgroup *g = &m->g[m->ngroups - 1];
			k = strtoul(w[2], NULL, 10);
			if (k >= m->nsizes)
				goto bad;
			g->mwstride[k] = strtod(w[3], NULL);
			g->mwlen[k] = strtod(w[4], NULL);
			g->mwstride1[k] = n == 6 ? strtod(w[5], NULL) : -1;
			if (!(g->mwstride[k] > 0) || !(g->mwlen[k] >= 0))
				goto bad;
		} else if (!strcmp(w[0], "walk") && (n == 4 || n == 5) && m->ngroups &&
			   strtoul(w[1], NULL, 10) == m->ngroups - 1) {
			struct xgroup *g = &m->g[m->ngroups - 1];
			if (get_fit(m, w[2], &g->wstride) < 0 || get_fit(m, w[3], &g->wlen) < 0 ||
			    (n == 5 && get_fit(m, w[4], &g->wstride1) < 0))
				goto bad;
			g->walk = 1;
			g->walk1 = n == 5;
		} else if (!strcmp(w[0], "mrefs") && n == 4 && m->ngroups &&
			   strtoul(w[1], NULL, 10) == m->ngroups - 1) {
			k = strtoul(w[2], NULL, 10);
			if (k >= m->nsizes)
				goto bad;
			m->g[m->ngroups - 1].mrefs[k] = strtod(w[3], NULL);
		} else if (!strcmp(w[0], "mhist") && n >= 5 && m->ngroups &&
			   strtoul(w[1], NULL, 10) == m->ngroups - 1) {
			size_t r = strtoul(w[2], NULL, 10);
			long b = block_index(m, strtoull(w[3], NULL, 10));
			struct lp_pred_hist *h;
			if (r >= m->nsizes || b < 0)
				goto bad;
			h = &m->g[m->ngroups - 1].mh[r * m->nblocks + (size_t)b];
			lp_pred_hist_release(h);
			h->cold = strtod(w[4], NULL);
			if ((rc = parse_hist(w + 5, n - 5, h)) < 0) {
				if (rc == -2)
					goto nomem;
				goto bad;
			}
		} else if (!strcmp(w[0], "bm") && n == 9 && m->ngroups &&
			   strtoul(w[1], NULL, 10) == m->ngroups - 1) {
			long b = block_index(m, strtoull(w[2], NULL, 10));
			struct xbm *bm;
			if (b < 0 || strcmp(w[3], "acc") || strcmp(w[5], "cold") || strcmp(w[7], "rest"))
				goto bad;
			bm = &m->g[m->ngroups - 1].bm[b];
			if (get_fit(m, w[4], &bm->acc) < 0 || get_fit(m, w[6], &bm->cold) < 0 ||
			    get_fit(m, w[8], &bm->rest) < 0)
				goto bad;
			bm->valid = 1;
		} else if (!strcmp(w[0], "bconst") && n == 5 && m->ngroups &&
			   strtoul(w[1], NULL, 10) == m->ngroups - 1) {
			long b = block_index(m, strtoull(w[2], NULL, 10));
			struct xbm *bm;
			struct lp_pred_fit fit;
			double v = strtod(w[3], NULL);
			if (b < 0 || get_fit(m, w[4], &fit) < 0 || !(v >= 0))
				goto bad;
			bm = &m->g[m->ngroups - 1].bm[b];
			if (!bm->valid)
				goto bad;
			double *a = realloc(bm->cd, (bm->nconst + 1) * sizeof(*a));
			if (a)
				bm->cd = a;
			struct lp_pred_fit *c = a ? realloc(bm->ck, (bm->nconst + 1) * sizeof(*c)) : NULL;
			if (!c)
				goto nomem;
			bm->ck = c;
			bm->cd[bm->nconst] = v;
			bm->ck[bm->nconst++] = fit;
		} else if (!strcmp(w[0], "bbin") && n == 5 && m->ngroups &&
			   strtoul(w[1], NULL, 10) == m->ngroups - 1) {
			long b = block_index(m, strtoull(w[2], NULL, 10));
			struct xbm *bm;
			struct lp_pred_fit cf, df;
			if (b < 0 || get_fit(m, w[3], &cf) < 0 || get_fit(m, w[4], &df) < 0)
				goto bad;
			bm = &m->g[m->ngroups - 1].bm[b];
			if (!bm->valid)
				goto bad;
			struct lp_pred_fit *a = realloc(bm->cnt, (bm->nbins + 1) * sizeof(*a));
			if (a)
				bm->cnt = a;
			struct lp_pred_fit *c = a ? realloc(bm->dist, (bm->nbins + 1) * sizeof(*c)) : NULL;
			if (!c)
				goto nomem;
			bm->dist = c;
			bm->cnt[bm->nbins] = cf;
			bm->dist[bm->nbins++] = df;
		} else if (!strcmp(w[0], "end") && n == 1) {
			ended = 1;
			break;
		} else {
			goto bad;
		}
	}
	if (rc < 0)
		goto fail;
	if (!ended || !m->sizes || !m->blocks || !m->basis.n || !m->total) {
		rc = lp_seterr(LP_ETRUNCATED, "'%s': the model file ends early (line %zu)", path, lineno);
		goto fail;
	}
	for (size_t l = 0; l < m->nloops; l++)
		if (m->loops[l].parent >= (int)m->nloops)
			goto bad;
	for (size_t k = 0; k < m->ngroups; k++)
		if (m->g[k].loop >= (int)m->nloops)
			goto bad;
	if ((rc = lp_pred_model_calibrate(m, LP_PRED_PLACE_DEFAULT, 0)) < 0)
		goto fail;
	lp_in_free(in);
	free(w);
	*out = m;
	return 0;
nomem:
	rc = lp_seterr(LP_ENOMEM, "out of memory");
	goto fail;
bad:
	rc = lp_seterr(LP_ECORRUPT, "'%s' line %zu: malformed", path, lineno);
fail:
	lp_in_free(in);
	free(w);
	lp_pred_model_free(m);
	return rc;
}
