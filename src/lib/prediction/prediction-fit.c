/* Fitting a quantity measured at a few problem sizes as a linear
 * combination of basis functions, under inequality constraints.
 *
 * Assumptions and choices (docs/prediction.md, "Fitting"):
 * - Least squares are absolute (residuals scaled by the largest value): the
 *   noise of a measured distance (whole numbers, small offsets) does not
 *   grow with it, and the largest sizes are the best guide to larger ones.
 * - Constraints are enforced on a geometric grid of 48 sizes from the
 *   smallest fitted size to `hi` (16 times the largest by default): the
 *   function stays >= 0 there (NONNEG) and, when the data are monotone,
 *   moves in the same direction everywhere (MONOTONE); optionally it stays
 *   below a bound (a distance below the footprint). That is what keeps a
 *   cubic from turning down or oscillating when extrapolated 10x.
 * - The constrained problems are solved by Lawson & Hanson's LSI -> LDP ->
 *   NNLS reduction. GSL provides the linear algebra (QR decomposition,
 *   triangular solves, SVD least squares for NNLS's subproblems); it has no
 *   NNLS or quadratic-programming solver, so those ~100 lines are here.
 * - The terms are chosen among all subsets of the basis with at most n-2
 *   terms (n sizes) by the corrected Akaike criterion (AICc): a term must
 *   cut the residual many times over to be kept, so noisy data get few
 *   terms and exact polynomial data exactly their own.
 */
#include <locprof/prediction.h>

#include "common/error.h"

#include <gsl/gsl_blas.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_multifit.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GRID_POINTS 48

static void gsl_quiet(void)
{
	/* GSL's default handler aborts the process; the library reports errors */
	static int done;

	if (!done) {
		gsl_set_error_handler_off();
		done = 1;
	}
}

/* ---- NNLS ---------------------------------------------------------------- */

/* Least squares on the columns of E selected by `on`, into z (others 0). */
static int ls_subset(const double *E, const double *f, size_t m, size_t n, const unsigned char *on,
		     double *z)
{
	size_t p = 0, k = 0;
	int rc = 0;

	for (size_t j = 0; j < n; j++)
		p += on[j];
	memset(z, 0, n * sizeof(*z));
	if (!p)
		return 0;
	if (p > m)
		return -1;
	gsl_matrix *X = gsl_matrix_alloc(m, p), *cov = gsl_matrix_alloc(p, p);
	gsl_vector *y = gsl_vector_alloc(m), *c = gsl_vector_alloc(p);
	gsl_multifit_linear_workspace *w = gsl_multifit_linear_alloc(m, p);
	double chisq;

	if (!X || !cov || !y || !c || !w) {
		rc = -1;
		goto out;
	}
	for (size_t i = 0; i < m; i++) {
		k = 0;
		for (size_t j = 0; j < n; j++)
			if (on[j])
				gsl_matrix_set(X, i, k++, E[i * n + j]);
		gsl_vector_set(y, i, f[i]);
	}
	if (gsl_multifit_linear(X, y, c, cov, &chisq, w)) {
		rc = -1;
		goto out;
	}
	k = 0;
	for (size_t j = 0; j < n; j++)
		if (on[j])
			z[j] = gsl_vector_get(c, k++);
out:
	gsl_multifit_linear_free(w);
	gsl_vector_free(c);
	gsl_vector_free(y);
	gsl_matrix_free(cov);
	gsl_matrix_free(X);
	return rc;
}

int lp_nnls(const double *E, const double *f, size_t m, size_t n, double *x)
{
	unsigned char *on = calloc(n ? n : 1, 1);
	double *w = malloc((n + 1) * sizeof(*w)), *z = malloc((n + 1) * sizeof(*z));
	double *r = malloc((m + 1) * sizeof(*r)), norm = 0, tol;
	int rc = 0;
	size_t outer = 0;

	gsl_quiet();
	if (!on || !w || !z || !r) {
		rc = lp_seterr(LP_ENOMEM, "out of memory");
		goto out;
	}
	memset(x, 0, n * sizeof(*x));
	for (size_t i = 0; i < m * n; i++)
		norm = fmax(norm, fabs(E[i]));
	tol = 1e-12 * (norm ? norm : 1) * (double)(m > n ? m : n);
	for (;;) {
		size_t t = n;
		double best = 0;

		/* gradient w = E^T (f - E x) */
		for (size_t i = 0; i < m; i++) {
			double s = f[i];
			for (size_t j = 0; j < n; j++)
				s -= E[i * n + j] * x[j];
			r[i] = s;
		}
		for (size_t j = 0; j < n; j++) {
			double s = 0;
			for (size_t i = 0; i < m; i++)
				s += E[i * n + j] * r[i];
			w[j] = s;
			if (!on[j] && s > tol && s > best) {
				best = s;
				t = j;
			}
		}
		if (t == n || ++outer > 3 * n + 30)
			break;
		on[t] = 1;
		for (size_t inner = 0; inner < 3 * n + 30; inner++) {
			double alpha = 2;
			if (ls_subset(E, f, m, n, on, z) < 0) {
				on[t] = 0; /* column t is dependent on the others: stop */
				goto done;
			}
			/* feasibility is about the sign of z; the tolerance above
			 * is for the gradient, whose scale differs */
			for (size_t j = 0; j < n; j++)
				if (on[j] && z[j] <= 0) {
					double a = x[j] / (x[j] - z[j]);
					if (a < alpha)
						alpha = a;
				}
			if (alpha > 1) {
				memcpy(x, z, n * sizeof(*x));
				break;
			}
			double xmax = 0;
			for (size_t j = 0; j < n; j++) {
				x[j] += alpha * (z[j] - x[j]);
				xmax = fmax(xmax, fabs(x[j]));
			}
			for (size_t j = 0; j < n; j++)
				if (on[j] && x[j] <= 1e-14 * xmax) {
					on[j] = 0;
					x[j] = 0;
				}
		}
	}
done:
	for (size_t j = 0; j < n; j++)
		if (x[j] < 0)
			x[j] = 0;
out:
	free(on);
	free(w);
	free(z);
	free(r);
	return rc;
}

/* ---- LSI ------------------------------------------------------------------ */

int lp_lsi(const double *A, const double *b, size_t m, size_t n, const double *G,
	   const double *h, size_t k, double *x)
{
	gsl_matrix *QR = NULL;
	gsl_vector *tau = NULL, *qtb = NULL, *v = NULL;
	double *E = NULL, *f = NULL, *u = NULL, *Gt = NULL, *hp = NULL, rmax = 0;
	int rc = 0;

	gsl_quiet();
	if (!n || m < n)
		return lp_seterr(LP_EINVAL, "least squares: %zu equations for %zu unknowns", m, n);
	QR = gsl_matrix_alloc(m, n);
	tau = gsl_vector_alloc(n);
	qtb = gsl_vector_alloc(m);
	v = gsl_vector_alloc(n);
	if (!QR || !tau || !qtb || !v) {
		rc = lp_seterr(LP_ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < m; i++) {
		for (size_t j = 0; j < n; j++)
			gsl_matrix_set(QR, i, j, A[i * n + j]);
		gsl_vector_set(qtb, i, b[i]);
	}
	if (gsl_linalg_QR_decomp(QR, tau) || gsl_linalg_QR_QTvec(QR, tau, qtb)) {
		rc = lp_seterr(LP_EINVAL, "least squares: QR decomposition failed");
		goto out;
	}
	for (size_t j = 0; j < n; j++)
		rmax = fmax(rmax, fabs(gsl_matrix_get(QR, j, j)));
	for (size_t j = 0; j < n; j++)
		if (!(fabs(gsl_matrix_get(QR, j, j)) > 1e-10 * rmax)) {
			rc = lp_seterr(LP_EINVAL, "least squares: the basis functions are dependent");
			goto out;
		}
	gsl_matrix_view R = gsl_matrix_submatrix(QR, 0, 0, n, n);
	if (k) {
		/* the unconstrained solution, when it meets every constraint, is
		 * the answer (the usual case: one triangular solve, no NNLS) */
		int ok = 1;
		for (size_t j = 0; j < n; j++)
			gsl_vector_set(v, j, gsl_vector_get(qtb, j));
		gsl_blas_dtrsv(CblasUpper, CblasNoTrans, CblasNonUnit, &R.matrix, v);
		for (size_t i = 0; i < k && ok; i++) {
			double s = 0, mag = fabs(h[i]);
			for (size_t j = 0; j < n; j++) {
				s += G[i * n + j] * gsl_vector_get(v, j);
				mag += fabs(G[i * n + j] * gsl_vector_get(v, j));
			}
			ok = s >= h[i] - 1e-12 * mag && isfinite(s);
		}
		if (ok) {
			for (size_t j = 0; j < n; j++)
				x[j] = gsl_vector_get(v, j);
			goto out;
		}
	}
	/* x = R^-1 (z + c1) where c1 = (Q^T b)[0..n) and z solves the LDP
	 * min ||z|| s.t. (G R^-1) z >= h - G R^-1 c1 */
	if (k) {
		Gt = malloc(k * n * sizeof(*Gt));
		hp = malloc(k * sizeof(*hp));
		E = malloc((n + 1) * k * sizeof(*E));
		f = calloc(n + 1, sizeof(*f));
		u = malloc(k * sizeof(*u));
		if (!Gt || !hp || !E || !f || !u) {
			rc = lp_seterr(LP_ENOMEM, "out of memory");
			goto out;
		}
		for (size_t i = 0; i < k; i++) {
			double s = 0;
			for (size_t j = 0; j < n; j++)
				gsl_vector_set(v, j, G[i * n + j]);
			/* row i of G R^-1 is (R^-T g_i)^T */
			gsl_blas_dtrsv(CblasUpper, CblasTrans, CblasNonUnit, &R.matrix, v);
			for (size_t j = 0; j < n; j++) {
				Gt[i * n + j] = gsl_vector_get(v, j);
				s += Gt[i * n + j] * gsl_vector_get(qtb, j);
			}
			hp[i] = h[i] - s;
		}
		/* LDP by NNLS: E = [Gt^T; hp^T], f = e_{n+1} */
		for (size_t j = 0; j < n; j++)
			for (size_t i = 0; i < k; i++)
				E[j * k + i] = Gt[i * n + j];
		for (size_t i = 0; i < k; i++)
			E[n * k + i] = hp[i];
		f[n] = 1;
		if ((rc = lp_nnls(E, f, n + 1, k, u)) < 0)
			goto out;
		double rn = -1, rr = 0;
		for (size_t j = 0; j <= n; j++) {
			double s = -f[j];
			for (size_t i = 0; i < k; i++)
				s += E[j * k + i] * u[i];
			if (j == n)
				rn = s;
			else
				gsl_vector_set(v, j, s);
			rr += s * s;
		}
		if (!(sqrt(rr) > 1e-12) || !(fabs(rn) > 1e-14)) {
			rc = lp_seterr(LP_EINVAL, "least squares: the constraints cannot be met");
			goto out;
		}
		for (size_t j = 0; j < n; j++)
			gsl_vector_set(v, j, -gsl_vector_get(v, j) / rn + gsl_vector_get(qtb, j));
	} else {
		for (size_t j = 0; j < n; j++)
			gsl_vector_set(v, j, gsl_vector_get(qtb, j));
	}
	gsl_blas_dtrsv(CblasUpper, CblasNoTrans, CblasNonUnit, &R.matrix, v);
	for (size_t j = 0; j < n; j++) {
		x[j] = gsl_vector_get(v, j);
		if (!isfinite(x[j])) {
			rc = lp_seterr(LP_EINVAL, "least squares: no finite solution");
			goto out;
		}
	}
out:
	gsl_matrix_free(QR);
	gsl_vector_free(tau);
	gsl_vector_free(qtb);
	gsl_vector_free(v);
	free(E);
	free(f);
	free(u);
	free(Gt);
	free(hp);
	return rc;
}

/* ---- basis ------------------------------------------------------------------ */

int lp_pred_basis_parse(struct lp_pred_basis *b, const char *list)
{
	char *copy, *save = NULL;
	int rc = 0;

	memset(b, 0, sizeof(*b));
	if (!list)
		list = "1,P,P^2,P^3,P^4";
	if (!(copy = strdup(list)))
		return lp_seterr(LP_ENOMEM, "out of memory");
	for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (b->n == LP_PRED_BASIS_MAX) {
			rc = lp_seterr(LP_EINVAL, "at most %d basis functions", LP_PRED_BASIS_MAX);
			break;
		}
		if ((rc = lp_pred_expr_parse(&b->f[b->n], t)) < 0)
			break;
		b->n++;
	}
	free(copy);
	if (!rc && !b->n)
		rc = lp_seterr(LP_EINVAL, "empty basis");
	for (size_t i = 0; !rc && i < b->n; i++)
		for (size_t j = 0; j < i; j++)
			if (!strcmp(lp_pred_expr_text(b->f[i]), lp_pred_expr_text(b->f[j])))
				rc = lp_seterr(LP_EINVAL, "basis function '%s' given twice",
					       lp_pred_expr_text(b->f[i]));
	if (rc < 0)
		lp_pred_basis_release(b);
	return rc;
}

void lp_pred_basis_release(struct lp_pred_basis *b)
{
	for (size_t i = 0; i < b->n; i++)
		lp_pred_expr_free(b->f[i]);
	memset(b, 0, sizeof(*b));
}

const char *lp_pred_basis_text(const struct lp_pred_basis *b, char *buf, size_t len)
{
	size_t k = 0;

	if (len)
		buf[0] = 0;
	for (size_t i = 0; i < b->n && k < len; i++) {
		int w = snprintf(buf + k, len - k, "%s%s", i ? "," : "", lp_pred_expr_text(b->f[i]));
		if (w < 0)
			break;
		k += (size_t)w;
	}
	return buf;
}

/* ---- fits -------------------------------------------------------------------- */

double lp_pred_fit_eval(const struct lp_pred_basis *b, const struct lp_pred_fit *f, double P)
{
	double s = 0;

	for (size_t j = 0; j < b->n; j++)
		if (f->used & (1u << j))
			s += f->coef[j] * lp_pred_expr_eval(b->f[j], P);
	return s;
}

static double deriv(const struct lp_pred_expr *e, double t)
{
	double h = 1e-4 * t;
	return (lp_pred_expr_eval(e, t + h) - lp_pred_expr_eval(e, t - h)) / (2 * h);
}

/* Direction of the data ordered by size: +1 non-decreasing, -1
 * non-increasing, 0 neither or constant. */
static int direction(const double *P, const double *y, size_t n)
{
	size_t *ord = malloc(n * sizeof(*ord));
	int up = 1, down = 1, flat = 1;

	if (!ord || n < 2) {
		free(ord);
		return 0;
	}
	for (size_t i = 0; i < n; i++)
		ord[i] = i;
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && P[ord[j]] < P[ord[j - 1]]; j--) {
			size_t t = ord[j];
			ord[j] = ord[j - 1];
			ord[j - 1] = t;
		}
	for (size_t i = 1; i < n; i++) {
		double a = y[ord[i - 1]], c = y[ord[i]];
		if (c < a)
			up = 0;
		if (c > a)
			down = 0;
		if (c != a)
			flat = 0;
	}
	free(ord);
	if (flat)
		return 0;
	return up ? 1 : down ? -1 : 0;
}

/* Fit the subset `used` on the points with skip != i (skip = n: all).
 * coef receives the coefficients per basis function. */
struct bound {
	double (*f)(void *arg, double P);
	void *arg;
};

static int fit_points(const struct lp_pred_basis *b, uint32_t used, const double *P, const double *y,
		      size_t n, uint64_t mask, unsigned flags, int dir, double lo, double hi,
		      const struct bound *ub, double *coef)
{
	size_t nt = 0, m = 0, k = 0, idx[LP_PRED_BASIS_MAX];
	double A[64 * LP_PRED_BASIS_MAX], rhs[64], scale[LP_PRED_BASIS_MAX], x[LP_PRED_BASIS_MAX];
	double G[3 * GRID_POINTS * LP_PRED_BASIS_MAX], h[3 * GRID_POINTS], ymax = 0;
	int rc;

	if (n > 64)
		return lp_seterr(LP_ELIMIT, "at most 64 sizes");
	for (size_t j = 0; j < b->n; j++)
		if (used & (1u << j))
			idx[nt++] = j;
	for (size_t i = 0; i < n; i++)
		ymax = fmax(ymax, fabs(y[i]));
	for (size_t t = 0; t < nt; t++) {
		scale[t] = 0;
		for (size_t i = 0; i < n; i++)
			scale[t] = fmax(scale[t], fabs(lp_pred_expr_eval(b->f[idx[t]], P[i])));
		if (!(scale[t] > 0) || !isfinite(scale[t]))
			return lp_seterr(LP_EINVAL, "basis function '%s' is 0 or undefined at the sizes",
					 lp_pred_expr_text(b->f[idx[t]]));
	}
	for (size_t i = 0; i < n; i++) {
		/* absolute residuals (scaled by the largest value): the noise of a
		 * measured distance or count does not grow with it, and the
		 * largest sizes are the best guide to larger ones */
		double w = 1 / (ymax > 0 ? ymax : 1);
		if (!(mask >> i & 1))
			continue;
		for (size_t t = 0; t < nt; t++)
			A[m * nt + t] = w * lp_pred_expr_eval(b->f[idx[t]], P[i]) / scale[t];
		rhs[m++] = w * y[i];
	}
	if (m < nt)
		return lp_seterr(LP_EINVAL, "fewer sizes than terms");
	for (size_t g = 0; g < GRID_POINTS && ((flags & (LP_PRED_FIT_NONNEG | LP_PRED_FIT_MONOTONE)) || ub); g++) {
		double t = lo * pow(hi / lo, (double)g / (GRID_POINTS - 1)), mx = 0, u;
		if (ub && isfinite(u = ub->f(ub->arg, t)) && u >= 0) {
			/* below the bound: -f(t) >= -u */
			for (size_t j = 0; j < nt; j++)
				mx = fmax(mx, fabs(G[k * nt + j] = -lp_pred_expr_eval(b->f[idx[j]], t) / scale[j]));
			if (mx > 0 && isfinite(mx)) {
				for (size_t j = 0; j < nt; j++)
					G[k * nt + j] /= mx;
				h[k++] = -u / mx;
			}
			mx = 0;
		}
		if (flags & LP_PRED_FIT_NONNEG) {
			for (size_t j = 0; j < nt; j++)
				mx = fmax(mx, fabs(G[k * nt + j] = lp_pred_expr_eval(b->f[idx[j]], t) / scale[j]));
			if (mx > 0 && isfinite(mx)) {
				for (size_t j = 0; j < nt; j++)
					G[k * nt + j] /= mx;
				h[k++] = 0;
			}
		}
		if ((flags & LP_PRED_FIT_MONOTONE) && dir) {
			mx = 0;
			for (size_t j = 0; j < nt; j++)
				mx = fmax(mx, fabs(G[k * nt + j] = dir * deriv(b->f[idx[j]], t) / scale[j]));
			if (mx > 0 && isfinite(mx)) {
				for (size_t j = 0; j < nt; j++)
					G[k * nt + j] /= mx;
				h[k++] = 0;
			}
		}
	}
	if ((rc = lp_lsi(A, rhs, m, nt, G, h, k, x)) < 0)
		return rc;
	memset(coef, 0, LP_PRED_BASIS_MAX * sizeof(*coef));
	for (size_t t = 0; t < nt; t++)
		coef[idx[t]] = x[t] / scale[t];
	return 0;
}

static double eval_coef(const struct lp_pred_basis *b, uint32_t used, const double *coef, double P)
{
	double s = 0;

	for (size_t j = 0; j < b->n; j++)
		if (used & (1u << j))
			s += coef[j] * lp_pred_expr_eval(b->f[j], P);
	return s;
}

static double rel(double pred, double y, double ymax)
{
	return (pred - y) / fmax(fabs(y), 1e-9 * ymax + 1e-300);
}

/* Fit the subset on all points and score it by the corrected Akaike
 * information criterion (AICc) of its residuals: n ln(RSS/n) + 2k +
 * 2k(k+1)/(n-k-1) for k terms. With few sizes the correction is steep, so a
 * term must cut the residual many times over to be kept: noisy data get
 * few terms, exact polynomial data their exact terms (the residual of an
 * exact fit is floored at rounding level, so that among exact fits the
 * smaller wins). */
static int subset_fit(const struct lp_pred_basis *b, uint32_t used, const double *P, const double *y,
		      size_t n, unsigned flags, double hi, const struct bound *ub, int validate,
		      struct lp_pred_fit *out)
{
	double lo = INFINITY, ymax = 0, s = 0, rss = 0;
	uint64_t all = n >= 64 ? ~0ull : (1ull << n) - 1;
	int dir = direction(P, y, n), rc, k = __builtin_popcount(used);

	for (size_t i = 0; i < n; i++) {
		lo = fmin(lo, P[i]);
		ymax = fmax(ymax, fabs(y[i]));
		hi = fmax(hi, P[i]);
	}
	memset(out, 0, sizeof(*out));
	if ((rc = fit_points(b, used, P, y, n, all, flags, dir, lo, hi, ub, out->coef)) < 0)
		return rc;
	out->used = used;
	for (size_t i = 0; i < n; i++) {
		double f = eval_coef(b, used, out->coef, P[i]), e = rel(f, y[i], ymax);
		double a = (f - y[i]) / (ymax > 0 ? ymax : 1);
		s += e * e;
		rss += a * a;
	}
	out->rms = sqrt(s / (double)n);
	if (!validate)
		return 0;
	if ((double)n - k - 1 <= 0) {
		out->score = INFINITY;
		return 0;
	}
	rss = fmax(rss / (double)n, 1e-24);
	out->score = (double)n * log(rss) + 2.0 * k + 2.0 * k * (k + 1) / ((double)n - k - 1);
	return 0;
}

/* Relative error of the subset fitted without the largest size, at it. */
static double extrapolation_error(const struct lp_pred_basis *b, uint32_t used, const double *P,
				  const double *y, size_t n, unsigned flags, double hi,
				  const struct bound *ub)
{
	double coef[LP_PRED_BASIS_MAX], lo = INFINITY, ymax = 0;
	size_t top = 0;
	uint64_t mask = 0;

	for (size_t i = 0; i < n; i++) {
		lo = fmin(lo, P[i]);
		ymax = fmax(ymax, fabs(y[i]));
		hi = fmax(hi, P[i]);
		if (P[i] > P[top])
			top = i;
	}
	for (size_t i = 0; i < n; i++)
		if (i != top)
			mask |= 1ull << i;
	if (fit_points(b, used, P, y, n, mask, flags, direction(P, y, n), lo, hi, ub, coef) < 0)
		return INFINITY;
	return fabs(rel(eval_coef(b, used, coef, P[top]), y[top], ymax));
}

int lp_pred_fit_subset(const struct lp_pred_basis *b, uint32_t used, const double *P, const double *y,
		   size_t n, unsigned flags, double hi, struct lp_pred_fit *out)
{
	return subset_fit(b, used, P, y, n, flags, hi, NULL, 1, out);
}

static int popcount(uint32_t x)
{
	return __builtin_popcount(x);
}

int lp_pred_fit_select(const struct lp_pred_basis *b, const double *P, const double *y, size_t n,
		   unsigned flags, double hi, struct lp_pred_fit *out)
{
	return lp_pred_fit_select_below(b, P, y, n, flags, hi, 0, NULL, NULL, out);
}

int lp_pred_fit_select_below(const struct lp_pred_basis *b, const double *P, const double *y, size_t n,
			 unsigned flags, double hi, uint32_t allowed,
			 double (*bound)(void *arg, double P), void *arg, struct lp_pred_fit *out)
{
	struct bound ub = { bound, arg };
	struct lp_pred_fit c;
	int all_zero = 1, have = 0;


	memset(out, 0, sizeof(*out));
	if (!n || !b->n)
		return lp_seterr(LP_EINVAL, "nothing to fit");
	for (size_t i = 0; i < n; i++) {
		if (!isfinite(y[i]) || !isfinite(P[i]) || !(P[i] > 0))
			return lp_seterr(LP_EINVAL, "cannot fit a non-finite value");
		if (y[i] != 0)
			all_zero = 0;
	}
	if (all_zero)
		return 0; /* the zero function: no terms */
	struct lp_pred_fit cand[1 << LP_PRED_BASIS_MAX];
	size_t nc = 0;
	double best = INFINITY;
	for (uint32_t s = 1; s < (1u << b->n); s++) {
		int k = popcount(s);
		if (allowed && (s & ~allowed))
			continue;
		/* with 1 or 2 sizes the criterion is undefined: one term */
		if ((n <= 2 && k > 1) || (n > 2 && (size_t)k + 2 > n) ||
		    subset_fit(b, s, P, y, n, flags, hi, bound ? &ub : NULL, 1, &c) < 0)
			continue;
		if (n <= 2)
			c.score = c.rms;
		cand[nc++] = c;
		best = fmin(best, c.score);
	}
	if (!nc)
		return lp_seterr(LP_EINVAL, "no subset of the basis fits the data");
	/* among the models the criterion cannot tell apart (within 10 of the
	 * best: odds of 150 to 1), the one that best predicts the largest size
	 * from the smaller ones: the use of a model is to extrapolate */
	double best_ext = INFINITY;
	for (size_t i = 0; i < nc; i++) {
		double e = 0;
		int k = popcount(cand[i].used), kb = have ? popcount(out->used) : 0;
		if (cand[i].score > best + (n > 3 ? 10 : 1e-9))
			continue;
		if (n > 3)
			e = extrapolation_error(b, cand[i].used, P, y, n, flags, hi, bound ? &ub : NULL);
		/* errors within rounding (1e-9) or 1e-6 of each other are ties */
		double tie = fmax(1e-9, 1e-6 * best_ext);
		if (!have || e < best_ext - tie ||
		    (e <= best_ext + tie && (k < kb || (k == kb && cand[i].score < out->score)))) {
			*out = cand[i];
			best_ext = e;
			have = 1;
		}
	}
	return 0;
}

const char *lp_pred_fit_format(const struct lp_pred_basis *b, const struct lp_pred_fit *f, char *buf,
			   size_t len)
{
	size_t k = 0;
	int any = 0;

	if (len)
		buf[0] = 0;
	for (size_t j = 0; j < b->n && k < len; j++) {
		int w;
		if (!(f->used & (1u << j)))
			continue;
		if (!strcmp(lp_pred_expr_text(b->f[j]), "1"))
			w = snprintf(buf + k, len - k, "%s%.6g", any ? " + " : "", f->coef[j]);
		else
			w = snprintf(buf + k, len - k, "%s%.6g*%s", any ? " + " : "", f->coef[j],
				     lp_pred_expr_text(b->f[j]));
		if (w < 0)
			break;
		k += (size_t)w;
		any = 1;
	}
	if (!any && len)
		snprintf(buf, len, "0");
	return buf;
}
