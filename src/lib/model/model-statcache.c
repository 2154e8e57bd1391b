/* StatCache: the miss ratio of a fully associative cache with random
 * replacement, from sampled reuse distances (Berg & Hagersten 2004, 2.4).
 *
 * Assumptions, and where they bend:
 * - Random replacement evicts each resident line with probability 1/L per
 *   miss, so a line survives n misses with probability (1 - 1/L)^n and
 *   f(n) = 1 - (1 - 1/L)^n. Cold start is ignored: the cache is full.
 * - Within a time window the miss ratio R is constant, so a reuse at
 *   distance k saw k*R misses and misses with probability f(kR); summing
 *   over the window's samples gives Eq. 6, R*N = sum_k h(k) f(kR). A phase
 *   change inside a window breaks this; shorter windows help but hold
 *   fewer samples (noisier, and biased: Eq. 6 is not linear). So windows
 *   are the paper's 200 000 accesses widened to SC_MIN_SAMPLES samples,
 *   never across a phase boundary, which need not be on the grid of
 *   windows (model-phases.c places it at the likeliest change point).
 *   The overall ratio is the sum of the windows' expected misses over
 *   their finite samples (each access is sampled with the same
 *   probability); without censored samples that is the average of the
 *   window solutions weighted by their samples.
 * - A sample is assigned to the window of its first access, although its
 *   reuse may end in a later window.
 * - The cache is full from the start and only the misses R counts evict
 *   (cold misses do not), as in the paper. lp_statcache_set_fill() models
 *   the cache filling up and cold misses evicting (window_ev): better when
 *   first touches are a large share of the accesses, worse when they are
 *   bunched in time (docs/models.md), so it is an option.
 * - Dangling samples are censored reuses: the line was not touched again
 *   before the run ended, so its reuse distance is at least the rest of
 *   the run, r = T - 1 - t, and unknown beyond. They describe no miss the
 *   simulation counts (that reuse ends after the run, as a cold miss's
 *   starts before it), so they never enter the ratio; but they do enter
 *   the equation of their window, since the eviction rate there comes
 *   from all its accesses. Left out (the paper, 2.6), the windows near
 *   the end kept only their short reuses and solved to a ratio near 0
 *   (the last 10 % of a zipf run: the curve 0.5 points low at 4 MiB).
 *   Each one is replaced by SC_IMPUTE reuses at the quantiles of the
 *   Kaplan-Meier estimate of the distribution given K >= r
 *   (impute_dangling()); the mass past the last observed reuse is at
 *   infinite distance (f = 1: a line never seen again, whose reuse, like
 *   a cold miss, still evicts). The window's ratio is then the mean of f
 *   over its finite reuses at the rate that solves the whole equation.
 *   With include_cold they are instead misses, f = 1, as before.
 * Solver. psi(R) = sum f(kR) + D - R N is concave with psi(0) = 0, so
 * apart from the trivial root R = 0 it has at most one root in (0, 1]: it
 * exists iff the slope at 0, sum(k)*(-log(1-1/L)) (+inf with dangling
 * misses) exceeds N. Newton's method started to the right of a root of a
 * concave function converges monotonically from the right and never
 * overshoots, and the root for a cache of L lines bounds the root of any
 * bigger cache from above (f decreases in L). So the working-set graph is
 * computed in increasing L with each window's previous root as the start:
 * 2 to 4 Newton steps per window and size. Rounding can stall that near a
 * double root; after 60 steps a bisection on psi(R)/R finishes the job.
 * This is why no general root finder (GSL) is used: it would not exploit
 * the warm start, and the runtime-free library stays dependency-free.
 */
#include <locprof/model.h>

#include "common/array.h"
#include "common/error.h"
#include "common/exp-sum.h"
#include "common/sort.h"
#include "model/model-internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A histogram of reuse distances. When `pw` is set the k are sorted
 * ascending and pw[j][i] = sum_{i' < i} k[i']^(j+1): psi then sums the
 * samples with a tiny exponent by their series and those with a huge one
 * as 1, and calls exp() only for the rest (docs/models.md, "Speed"). */
struct sc_hist {
	const double *k;
	size_t n;
	const double *pw[4];
	double sum_k;
	/* censored reuses (dangling samples, see lp_statcache_new()): reuse
	 * distances ck[0, cn) with weights cw, plus cinf of weight at infinite
	 * distance; cN = their total weight, csum_k = sum cw * ck */
	const double *ck, *cw;
	size_t cn;
	double cinf, cN, csum_k;
	/* when set, ck is sorted and cpw[0][i] = sum_{i' < i} cw[i'],
	 * cpw[j][i] = sum_{i' < i} cw[i'] ck[i']^j (the fast path of psi) */
	const double *cpw[5];
};

/* Fewest samples a window is solved from (docs/models.md): at a rate of
 * 1e-2 the paper's 200 000-access windows hold 2 000 and stay as they
 * are; at 1e-4 they hold 20 and are widened. */
#define SC_MIN_SAMPLES 400

struct sc_window {
	uint64_t start, end; /* line accesses [start, end) */
	size_t first, n; /* finite reuse distances in m->k[first, first + n) */
	double dangling;
	double sum_k;
	struct sc_hist h; /* the finite reuse distances, sorted, with power sums */
	size_t cfirst;    /* its censored part: m->ck/m->cw[cfirst, cfirst + h.cn) */
	double u0, u1;    /* distinct lines touched before start, before end */
	double root; /* warm start: the root for the last, smaller cache */
	double last_lines;
};

struct lp_statcache {
	struct lp_model_samples in; /* first: lp_model_alloc() fills it */
	unsigned li;
	int fill_mode;           /* lp_statcache_set_fill(): 0, 1 or LP_STATCACHE_FILL_AUTO */
	int fill_model;          /* the fill model is on for fill_lines (fill_for()) */
	struct lp_statstack *ss; /* the footprint over time */
	int ss_owned;            /* built here (else lp_statcache_set_fill_with()'s) */
	int footprint;           /* the windows' u0 and u1 are computed */
	int assume;              /* lp_statcache_assume_footprint() */
	double cap;              /* the cache (lines) asked of now: under
				  * LP_FOOTPRINT_FITS the footprint is at most it */
	double sampled_lines;    /* distinct lines among the samples: the
				  * footprint is at least this many */
	double fill_lines;       /* the cache size fill_time is for */
	uint64_t fill_time;
	uint64_t length;
	double *k;   /* finite reuse distances grouped by window */
	double *pw[4]; /* power sums of each window's k (n + 1 per window) */
	size_t *win; /* window of each profile sample (index from m->in.first) */
	double *ck, *cw; /* imputed reuse distances of the dangling samples */
	double *cpw[5];  /* their prefix sums, per window (sc_hist.cpw) */
	struct sc_window *w;
	size_t nw;
};

#define SERIES_X 1e-3 /* x^5/120 < 1e-17: the 4-term series is exact in doubles */
#define SATURATE_X 40 /* exp(-40) < 5e-18: f = 1 */

/* first index in k[lo, hi) with k[i] >= x */
static size_t k_bound(const double *k, size_t lo, size_t hi, double x)
{
	LP_BISECT(lo, hi, i, k[i] < x);
	return lo;
}

/* Evicting misses per access are al + be R (the paper: 0 + 1 R). */
struct sc_ev {
	double al, be;
};

/* psi(R) and psi'(R); b = log1p(-1/L) < 0. With x = k a, a = -b (al + be R):
 * psi = sum (1 - e^-x) (+ D) - R N, psi' = -b be sum k e^-x - N. */
static void psi(const struct sc_hist *h, double dangling, int include_cold, struct sc_ev ev,
		double N, double b, double R, double *val, double *der)
{
	double s = 0, d = 0, a = -b * (ev.al + ev.be * R);
	size_t lo = 0, hi = h->n;

	if (h->pw[0] && a > 0) {
		lo = k_bound(h->k, 0, h->n, SERIES_X / a);
		hi = k_bound(h->k, lo, h->n, SATURATE_X / a);
		double p1 = h->pw[0][lo], p2 = h->pw[1][lo], p3 = h->pw[2][lo], p4 = h->pw[3][lo];
		/* 1 - e^-x = x - x^2/2 + x^3/6 - x^4/24; k e^-x = k (1 - x + x^2/2 - x^3/6) */
		s = a * (p1 - a * (p2 / 2 - a * (p3 / 6 - a * p4 / 24)));
		d = p1 - a * (p2 - a * (p3 / 2 - a * p4 / 6));
		s += (double)(h->n - hi);
	}
	lp_exp_sums(h->k + lo, NULL, hi - lo, a, &s, &d);
	if (a > 0 && h->cn) {
		const double *const *c = h->cpw;
		lo = 0;
		hi = h->cn;
		if (c[0]) {
			lo = k_bound(h->ck, 0, h->cn, SERIES_X / a);
			hi = k_bound(h->ck, lo, h->cn, SATURATE_X / a);
			double p1 = c[1][lo], p2 = c[2][lo], p3 = c[3][lo], p4 = c[4][lo];
			s += a * (p1 - a * (p2 / 2 - a * (p3 / 6 - a * p4 / 24)));
			d += p1 - a * (p2 - a * (p3 / 2 - a * p4 / 6));
			s += c[0][h->cn] - c[0][hi];
		}
		lp_exp_sums(h->ck + lo, h->cw + lo, hi - lo, a, &s, &d);
	}
	if (a > 0)
		s += h->cinf;
	if (include_cold)
		s += dangling;
	*val = s - R * N;
	*der = -b * ev.be * d - N;
}

/* Newton's last step, relative to R: after a step of 1e-6 R the error
 * left is near 1e-12 R (quadratic convergence); a smaller bound would
 * cost one more pass over the samples per window and size for digits no
 * output shows. */
#define SOLVE_STEP 1e-6

static double solve(const struct sc_hist *h, double dangling, int include_cold, struct sc_ev ev,
		    double lines, double warm)
{
	double N = (double)h->n + (include_cold ? dangling : 0) + h->cN;
	double b, R, v, dv;

	if (N <= 0)
		return NAN;
	if (lines <= 1)
		/* one line: every reuse at distance >= 1 misses */
		b = -INFINITY;
	else
		b = log1p(-1.0 / lines);
	if (!(include_cold && dangling > 0) && !(ev.al > 0) && !(h->cinf > 0) &&
	    (isinf(b) ? h->sum_k + h->csum_k == 0 || !(ev.be > 0)
		      : -b * ev.be * (h->sum_k + h->csum_k) <= N))
		return 0; /* slope at 0 <= N: only the trivial root */
	if (isinf(b)) {
		/* f(kR) = 1 for every k >= 1 and R > 0 */
		double hits = 0;
		for (size_t i = 0; i < h->n; i++)
			hits += h->k[i] == 0;
		for (size_t i = 0; i < h->cn; i++)
			hits += h->ck[i] == 0 ? h->cw[i] : 0;
		return (N - hits) / N;
	}
	R = warm > 0 && warm <= 1 ? warm : 1;
	psi(h, dangling, include_cold, ev, N, b, R, &v, &dv);
	if (v > 0) { /* warm start was not an upper bound: restart at 1 */
		R = 1;
		psi(h, dangling, include_cold, ev, N, b, R, &v, &dv);
		if (v >= 0)
			return 1;
	}
	for (int it = 0; it < 60; it++) {
		double next;
		if (v == 0 || dv >= 0)
			return R;
		next = R - v / dv;
		if (!(next < R) || next <= 0)
			break;
		/* quadratic convergence: the error left after a step of
		 * SOLVE_STEP R is of order SOLVE_STEP^2 R */
		if (R - next <= SOLVE_STEP * R + 1e-15)
			return next;
		R = next;
		psi(h, dangling, include_cold, ev, N, b, R, &v, &dv);
		if (v > 0)
			return R; /* crossed the root by rounding: within 1 ulp-ish */
	}
	/* bisection on psi(R)/R over (0, R]: psi > 0 left of the root */
	double lo = 0, hi = R;
	for (int it = 0; it < 200 && hi - lo > 1e-14 * hi; it++) {
		double mid = 0.5 * (lo + hi);
		psi(h, dangling, include_cold, ev, N, b, mid, &v, &dv);
		if (v > 0)
			lo = mid;
		else
			hi = mid;
	}
	return 0.5 * (lo + hi);
}

/* The plain form: every sample through exp(), in any order. */
double lp_statcache_solve_ev(const double *k, size_t n, double dangling, int include_cold,
			     double ev0, double ev1, double lines, double warm)
{
	struct sc_hist h = { .k = k, .n = n };

	for (size_t i = 0; i < n; i++)
		h.sum_k += k[i];
	return solve(&h, dangling, include_cold, (struct sc_ev){ ev0, ev1 }, lines, warm);
}

double lp_statcache_solve_censored(const double *k, size_t n, const double *ck, const double *cw,
				   size_t cn, double cinf, double ev0, double ev1, double lines,
				   double warm)
{
	struct sc_hist h = { .k = k, .n = n, .ck = ck, .cw = cw, .cn = cn, .cinf = cinf };

	for (size_t i = 0; i < n; i++)
		h.sum_k += k[i];
	for (size_t i = 0; i < cn; i++) {
		h.cN += cw[i];
		h.csum_k += cw[i] * ck[i];
	}
	h.cN += cinf;
	return solve(&h, 0, 0, (struct sc_ev){ ev0, ev1 }, lines, warm);
}

/* Sum of f over the finite reuses of a histogram at evictions per access
 * a (the expected misses among them). */
static double finite_misses(const struct sc_hist *h, double a)
{
	struct sc_hist fin = *h;
	double v, dv;

	fin.cn = 0;
	fin.cinf = 0;
	/* psi with N = 0 and R = 0 is the sum itself; psi() takes a from ev */
	psi(&fin, 0, 0, (struct sc_ev){ a, 0 }, 0, -1, 0, &v, &dv);
	return v;
}

double lp_statcache_solve(const double *k, size_t n, double dangling, int include_cold,
			  double lines, double warm)
{
	return lp_statcache_solve_ev(k, n, dangling, include_cold, 0, 1, lines, warm);
}

/* h->k = k[0, h->n) sorted, with its power sums in pw[j][at ...] (the
 * window's n + 1 prefix sums of k^(j+1)). */
static void hist_sort(struct sc_hist *h, double *k, double *const pw[4], size_t at)
{
	lp_sort_double(k, h->n);
	h->k = k;
	for (size_t j = 0; j < 4; j++)
		h->pw[j] = pw[j] + at;
	pw[0][at] = pw[1][at] = pw[2][at] = pw[3][at] = 0;
	for (size_t q = 0; q < h->n; q++) { /* products, not pow(): 4 pow() a
					     * sample were a fifth of a report */
		double x = k[q], x2 = x * x;
		pw[0][at + q + 1] = pw[0][at + q] + x;
		pw[1][at + q + 1] = pw[1][at + q] + x2;
		pw[2][at + q + 1] = pw[2][at + q] + x2 * x;
		pw[3][at + q + 1] = pw[3][at + q] + x2 * x2;
	}
}

/* Quantiles a dangling sample is replaced by (docs/models.md). */
#define SC_IMPUTE 8
#define SC_MERGE 0.01

/* Dangling samples are censored reuses: a dangling sample at time t of a
 * run of T line accesses has a reuse distance of at least r = T - 1 - t,
 * unknown beyond. The Kaplan-Meier estimate of the survival function
 * S(k) = P(K > k) from all the samples of the line size (the finite ones
 * events, the dangling ones censored at r) gives the distribution of K
 * given K >= r: each dangling sample becomes SC_IMPUTE reuses of weight
 * 1/SC_IMPUTE at the midpoint quantiles of that distribution, the ones
 * past the last event at infinite distance (a line never reused within
 * what the run shows: f = 1 for any positive miss ratio). Fills m->ck,
 * m->cw and the censored part of every window's histogram. */
static int impute_dangling(struct lp_statcache *m, uint64_t total)
{
	const struct lp_sample *smp = lp_profile_line_first(m->in.p, m->in.first);
	double *ev, *sv, *cen, S = 1, at_risk = (double)m->in.n;
	size_t nd = 0, nf = 0, ne = 0, c = 0;

	for (size_t i = 0; i < m->in.n; i++)
		nd += smp[i].reuse == LP_REUSE_DANGLING;
	if (!nd)
		return 0;
	ev = malloc(m->in.n * sizeof(*ev));
	sv = malloc(m->in.n * sizeof(*sv));
	cen = malloc(nd * sizeof(*cen));
	m->ck = malloc(nd * SC_IMPUTE * sizeof(*m->ck));
	m->cw = malloc(nd * SC_IMPUTE * sizeof(*m->cw));
	if (!ev || !sv || !cen || !m->ck || !m->cw) {
		free(ev);
		free(sv);
		free(cen);
		return LP_ENOMEM;
	}
	/* the events (finite reuses) and the censored ones (dangling
	 * samples, at r), each sorted, then walked together value by value */
	for (size_t i = 0, k = 0; i < m->in.n; i++) {
		if (smp[i].reuse != LP_REUSE_DANGLING)
			ev[nf++] = (double)smp[i].reuse;
		else
			cen[k++] = smp[i].time + 1 < total ? (double)(total - 1 - smp[i].time) : 0;
	}
	lp_sort_double(ev, nf);
	lp_sort_double(cen, nd);
	for (size_t i = 0, j = 0; i < nf || j < nd;) {
		/* at a tie the events first: a reuse censored at v is at risk at v */
		double v = j == nd || (i < nf && ev[i] <= cen[j]) ? ev[i] : cen[j];
		size_t d = 0, censored = 0;
		for (; i < nf && ev[i] == v; i++)
			d++;
		for (; j < nd && cen[j] == v; j++)
			censored++;
		if (d) {
			S *= 1.0 - (double)d / at_risk;
			ev[ne] = v; /* ne <= i - d: the values still to read are beyond */
			sv[ne++] = S;
		}
		at_risk -= (double)(d + censored);
	}
	/* the windows are in time order, and so are their dangling samples */
	for (size_t w = 0; w < m->nw; w++) {
		m->w[w].cfirst = c;
		m->w[w].h.ck = m->ck + c;
		m->w[w].h.cw = m->cw + c;
	}
	for (size_t i = 0; i < m->in.n; i++) {
		struct sc_window *wp = &m->w[m->win[i]];
		double r, Sr;
		size_t lo;

		if (smp[i].reuse != LP_REUSE_DANGLING)
			continue;
		r = smp[i].time + 1 < total ? (double)(total - 1 - smp[i].time) : 0;
		/* S(r-) = P(K >= r): the survival after the last event below r */
		lo = k_bound(ev, 0, ne, r);
		Sr = lo ? sv[lo - 1] : 1;
		if (wp->h.cn == 0) { /* first dangling sample of this window */
			wp->cfirst = c;
			wp->h.ck = m->ck + c;
			wp->h.cw = m->cw + c;
		}
		for (int q = 0; q < SC_IMPUTE; q++) {
			double u = (q + 0.5) / SC_IMPUTE, target = Sr * (1 - u);
			/* first event with S <= target (S falls at events >= r) */
			size_t a = lo, b = ne;
			while (a < b) {
				size_t mid = a + (b - a) / 2;
				if (sv[mid] > target)
					a = mid + 1;
				else
					b = mid;
			}
			if (a == ne) {
				wp->h.cinf += 1.0 / SC_IMPUTE;
			} else {
				m->ck[c] = ev[a];
				m->cw[c++] = 1.0 / SC_IMPUTE;
				wp->h.cn++;
				wp->h.csum_k += ev[a] / SC_IMPUTE;
			}
		}
		wp->h.cN += 1;
	}
	/* windows without censored reuses sit where the next ones start */
	for (size_t w = 0, pos = 0; w < m->nw; w++) {
		if (!m->w[w].h.cn) {
			m->w[w].cfirst = pos;
			m->w[w].h.ck = m->ck + pos;
			m->w[w].h.cw = m->cw + pos;
		}
		pos = m->w[w].cfirst + m->w[w].h.cn;
	}
	/* sort each window's censored reuses, with prefix sums for psi */
	for (size_t j = 0; j < 5; j++)
		if (!(m->cpw[j] = malloc((c + m->nw) * sizeof(double)))) {
			free(cen);
			free(ev);
			free(sv);
			return LP_ENOMEM;
		}
	for (size_t w = 0; w < m->nw; w++) {
		struct sc_hist *h = &m->w[w].h;
		size_t n = h->cn, off = m->w[w].cfirst + w;
		double *k = m->ck + m->w[w].cfirst, *wt = m->cw + m->w[w].cfirst;
		size_t out = 0;
		/* all weights are equal (1/SC_IMPUTE): sorting ck alone keeps
		 * the pairs */
		lp_sort_double(k, n);
		/* Merge the reuses within SC_MERGE of each other into one at
		 * their weighted mean (sum w k is kept, so the slope at R = 0
		 * is too; f(kR) is smooth in k: the error is O(SC_MERGE^2)),
		 * which bounds their number by the octaves they span, not by
		 * SC_IMPUTE times the dangling samples. */
		for (size_t q = 0; q < n;) {
			double sw = 0, swk = 0, k0 = k[q];
			for (; q < n && k[q] <= k0 * (1 + SC_MERGE); q++) {
				sw += wt[q];
				swk += wt[q] * k[q];
			}
			k[out] = swk / sw;
			wt[out++] = sw;
		}
		h->cn = n = out;
		for (size_t j = 0; j < 5; j++) {
			double *v = m->cpw[j] + off;
			v[0] = 0;
			for (size_t q = 0; q < n; q++)
				v[q + 1] = v[q] + h->cw[q] * (j ? pow(h->ck[q], (double)j) : 1);
			h->cpw[j] = v;
		}
	}
	free(cen);
	free(ev);
	free(sv);
	return 0;
}

int lp_statcache_new(struct lp_statcache **out, const struct lp_profile *p, unsigned li,
		     uint64_t window, int include_cold)
{
	struct lp_statcache *m;
	size_t nfinite = 0, nbase, i = 0;
	uint64_t total;
	int err;

	if ((err = lp_model_alloc((void **)&m, sizeof(*m), p, li, include_cold)) < 0)
		return err;
	m->length = window ? window : p->windows[li].length;
	if (!m->length)
		m->length = 1;
	total = p->accesses[li];
	if (m->in.n && p->samples[m->in.first + m->in.n - 1].time >= total)
		total = p->samples[m->in.first + m->in.n - 1].time + 1;
	m->length = lp_profile_window_length(total, m->length);
	nbase = (size_t)lp_profile_window_count(total, m->length);
	m->k = malloc((m->in.n ? m->in.n : 1) * sizeof(*m->k));
	m->win = malloc((m->in.n ? m->in.n : 1) * sizeof(*m->win));
	if (!m->k || !m->win) {
		lp_statcache_free(m);
		return lp_seterr(LP_ENOMEM, "out of memory");
	}
	/* Windows of m->length line accesses, as in the paper, widened until
	 * they hold SC_MIN_SAMPLES samples (Eq. 6 on a handful of samples is
	 * biased: one long reuse among 20 decides whether the root is 0) but
	 * never across a phase boundary (model-phases.c), since a window must
	 * see one miss ratio. Samples are sorted by time. */
	{
		uint64_t *bounds;
		size_t np, ph = 0;
		const double min_samples = SC_MIN_SAMPLES;
		err = lp_model_phases(lp_profile_line_first(p, m->in.first), m->in.n, total, m->length,
					  &bounds, &np);
		if (err < 0) {
			lp_statcache_free(m);
			return err;
		}
		/* the phase boundaries need not be on the grid of windows
		 * (model-phases.c): walk the pieces between both */
		if (!(m->w = calloc(nbase + np, sizeof(*m->w)))) {
			free(bounds);
			lp_statcache_free(m);
			return lp_seterr(LP_ENOMEM, "out of memory");
		}
		for (uint64_t start = 0, end; start < total; start = end) {
			struct sc_window *wp = m->nw ? &m->w[m->nw - 1] : NULL;
			int new_phase = 0;
			while (ph + 1 < np && bounds[ph + 1] <= start) {
				ph++;
				new_phase = 1;
			}
			end = (start / m->length + 1) * m->length;
			if (end > total || end < start)
				end = total;
			if (ph + 1 < np && bounds[ph + 1] < end)
				end = bounds[ph + 1];
			if (!wp || new_phase || wp->n + wp->dangling >= min_samples) {
				wp = &m->w[m->nw++];
				wp->start = start;
				wp->first = nfinite;
			}
			wp->end = end;
			for (; i < m->in.n && p->samples[m->in.first + i].time < end; i++) {
				const struct lp_sample *s = &p->samples[m->in.first + i];
				m->win[i] = m->nw - 1;
				if (s->reuse == LP_REUSE_DANGLING) {
					wp->dangling++;
					continue;
				}
				m->k[nfinite++] = (double)s->reuse;
				wp->n++;
				wp->sum_k += (double)s->reuse;
			}
		}
		free(bounds);
	}
	for (size_t j = 0; j < 4; j++)
		if (!(m->pw[j] = malloc((nfinite + m->nw) * sizeof(double)))) {
			lp_statcache_free(m);
			return lp_seterr(LP_ENOMEM, "out of memory");
		}
	for (size_t w = 0; w < m->nw; w++) {
		struct sc_window *wp = &m->w[w];
		double *k = m->k + wp->first;
		wp->h.n = wp->n;
		hist_sort(&wp->h, k, m->pw, wp->first + w);
		wp->h.sum_k = wp->sum_k;
	}
	m->li = li;
	if (!include_cold) {
		err = impute_dangling(m, total);
		if (err < 0) {
			lp_statcache_free(m);
			return lp_seterr(err, "out of memory");
		}
	}
	for (size_t w = 0; w < m->nw; w++) {
		m->w[w].root = 1;
		m->w[w].last_lines = 0;
	}
	*out = m;
	return 0;
}

void lp_statcache_free(struct lp_statcache *m)
{
	if (!m)
		return;
	if (m->ss_owned)
		lp_statstack_free(m->ss);
	free(m->k);
	for (size_t j = 0; j < 4; j++)
		free(m->pw[j]);
	free(m->win);
	free(m->ck);
	free(m->cw);
	for (size_t j = 0; j < 5; j++)
		free(m->cpw[j]);
	free(m->w);
	free(m);
}

size_t lp_statcache_nwindows(const struct lp_statcache *m)
{
	return m->nw;
}

uint64_t lp_statcache_window_length(const struct lp_statcache *m)
{
	return m->length;
}

/* Whether the run's footprint fits a cache of L lines: the estimate's
 * answer, or the one lp_statcache_assume_footprint() imposes. */
static int footprint_fits(const struct lp_statcache *m, double L)
{
	if (m->assume != LP_FOOTPRINT_ESTIMATE)
		return m->assume == LP_FOOTPRINT_FITS;
	return m->footprint && m->nw && fmax(m->w[m->nw - 1].u1, m->sampled_lines) <= L;
}

/* Distinct lines among the samples: each is a line the run touched, so
 * the footprint is at least their number, whatever its estimate from the
 * few dangling samples says (covariance at 1e-3 leaves 2 of them: the
 * estimate's band then reaches 0 lines, below the 1 000 lines sampled). */
static int count_sampled_lines(struct lp_statcache *m)
{
	size_t n = m->in.n, d = 0;
	unsigned shift = 0;
	uint64_t *v = malloc((n ? n : 1) * sizeof(*v));

	if (!v)
		return lp_seterr(LP_ENOMEM, "out of memory");
	while ((1u << shift) < m->in.p->line_sizes[m->li])
		shift++;
	for (size_t i = 0; i < n; i++)
		v[i] = m->in.p->samples[m->in.first + i].addr >> shift;
	lp_sort_u64(v, n);
	for (size_t i = 0; i < n; i++)
		d += !i || v[i] != v[i - 1];
	free(v);
	m->sampled_lines = (double)d;
	return 0;
}

int lp_statcache_assume_footprint(struct lp_statcache *m, int assume)
{
	if (assume != LP_FOOTPRINT_ESTIMATE && assume != LP_FOOTPRINT_FITS && assume != LP_FOOTPRINT_EXCEEDS)
		return lp_seterr(LP_EINVAL, "bad footprint assumption %d", assume);
	m->assume = assume;
	m->fill_lines = -1; /* the fill time was for the other answer */
	for (size_t w = 0; w < m->nw; w++) {
		m->w[w].root = 1; /* warm starts were for the other answer */
		m->w[w].last_lines = 0;
	}
	return 0;
}

/* The run's footprint counts the lines whose last access was sampled
 * (the dangling samples), each standing for 1 / rate lines: a Poisson
 * count, whose relative error is 1 / sqrt(count). No end of the band is
 * below the distinct lines sampled. */
int lp_statcache_footprint_band(const struct lp_statcache *m, double z, double *est, double *lo, double *hi)
{
	double d = 0, F;

	if (!m->footprint || !m->nw)
		return 0;
	for (size_t w = 0; w < m->nw; w++)
		d += m->w[w].dangling;
	F = m->w[m->nw - 1].u1;
	if (!(d > 0) || !(F > 0))
		return 0;
	*est = fmax(F, m->sampled_lines);
	*lo = fmax(F * fmax(0, 1 - z / sqrt(d)), m->sampled_lines);
	*hi = fmax(F * (1 + z / sqrt(d)), m->sampled_lines);
	return 1;
}

/* Under LP_FOOTPRINT_FITS, the footprint over time is the estimate's
 * scaled down so that the run ends with at most the cache asked of (its
 * shape kept: a crowded set's smaller cache still fills); else 1. */
static double footprint_scale(const struct lp_statcache *m)
{
	double F = m->footprint && m->nw ? m->w[m->nw - 1].u1 : 0;

	return m->assume == LP_FOOTPRINT_FITS && m->cap > 0 && F > m->cap ? m->cap / F : 1;
}

/* LP_STATCACHE_FILL_AUTO: the fill model for a cache of L lines only when
 * the run's footprint fits in it (the cache never fills: the paper's
 * full-from-the-start cache would evict where nothing is evicted). */
static void fill_for(struct lp_statcache *m, double L)
{
	if (m->fill_mode == LP_STATCACHE_FILL_AUTO)
		m->fill_model = footprint_fits(m, L);
}

int lp_statcache_set_fill_with(struct lp_statcache *m, int on, const struct lp_statstack *ss)
{
	size_t nw = lp_statstack_nwindows(ss);
	uint64_t a, b;

	/* the same windows, so the same footprint, only when both models cut
	 * the same run with the same grid (a cut-short profile may give them
	 * different ends) */
	if (on && !m->ss && nw && m->nw && lp_statstack_length(ss) == m->length) {
		lp_statstack_window(ss, nw - 1, &a, &b);
		if (b == m->w[m->nw - 1].end)
			m->ss = (struct lp_statstack *)ss;
	}
	return lp_statcache_set_fill(m, on);
}

int lp_statcache_set_fill(struct lp_statcache *m, int on)
{
	if (on != 0 && on != 1 && on != LP_STATCACHE_FILL_AUTO)
		return lp_seterr(LP_EINVAL, "bad fill mode %d", on);
	if (on && !m->ss) {
		/* the footprint over time, counted from the samples of a
		 * StatStack model's windows (lp_statstack_prepare_footprint()) */
		int err = lp_statstack_new_internal(&m->ss, m->in.p, m->li, m->length, 0, 0);
		if (err < 0)
			return err;
		m->ss_owned = 1;
	}
	if (on && !m->footprint) {
		int err = lp_statstack_prepare_footprint(m->ss);
		if (err < 0 || (err = count_sampled_lines(m)) < 0)
			return err;
		for (size_t w = 0; w < m->nw; w++) {
			struct sc_window *wp = &m->w[w];
			wp->u0 = w ? m->w[w - 1].u1 : 0;
			wp->u1 = wp->end ? lp_statstack_footprint(m->ss, wp->end - 1) : 0;
		}
		m->fill_lines = -1;
		m->footprint = 1;
	}
	m->fill_mode = on;
	m->fill_model = on == 1;
	for (size_t w = 0; w < m->nw; w++) {
		m->w[w].root = 1; /* the warm starts were for the other equation */
		m->w[w].last_lines = 0;
	}
	return 0;
}

void lp_statcache_window(const struct lp_statcache *m, size_t k, uint64_t *start, uint64_t *end)
{
	*start = m->w[k].start;
	*end = m->w[k].end;
}

/* The time the cache of L lines fills up: the first line access t with
 * more than L distinct lines in [0, t] (UINT64_MAX: never). */
static void set_fill(struct lp_statcache *m, double L)
{
	if (m->fill_lines == L)
		return;
	m->fill_lines = L;
	m->fill_time = lp_statstack_fill_time(m->ss, L);
}

/* Evicting misses per access in window w for a cache of L lines. A
 * random-replacement cache evicts only once full (set_fill); from then on
 * every miss evicts, cold ones too. Over the window's part after the fill,
 * the cold misses are the lines first touched there (u1 - max(u0, L)) and
 * the others are reuses that miss with the window's ratio R, so
 * evictions per access = al + be R with
 *     al = cold misses after the fill / len,
 *     be = (accesses after the fill - those cold misses) / len.
 * With cold misses included in R (include_cold), al = 0 and be = the
 * share of the window after the fill. The paper's equation is al = 0,
 * be = 1: a full cache from the start and no cold misses. */
static struct sc_ev window_ev(struct lp_statcache *m, const struct sc_window *w, double L)
{
	double len = (double)(w->end - w->start), after, cold, scale = footprint_scale(m);

	if (!m->fill_model)
		return (struct sc_ev){ 0, 1 };
	/* the footprint over time scaled by `scale`: a cache of L lines
	 * fills when the estimate reaches L / scale */
	L /= scale;
	set_fill(m, L);
	if (m->fill_time >= w->end || len <= 0)
		return (struct sc_ev){ 0, 0 };
	after = (double)(w->end - (m->fill_time > w->start ? m->fill_time : w->start));
	if (m->in.include_cold)
		return (struct sc_ev){ 0, after / len };
	cold = (w->u1 - (w->u0 > L ? w->u0 : L)) * scale;
	cold = cold < 0 ? 0 : cold > after ? after : cold;
	return (struct sc_ev){ cold / len, (after - cold) / len };
}

void lp_statcache_window_evictions(struct lp_statcache *m, size_t k, double lines, double *ev0,
				   double *ev1)
{
	struct sc_ev e;

	m->cap = lines;
	fill_for(m, lines);
	e = window_ev(m, &m->w[k], lines);
	*ev0 = e.al;
	*ev1 = e.be;
}

void lp_statcache_window_censored(const struct lp_statcache *m, size_t k, const double **ck,
				  const double **cw, size_t *cn, double *cinf)
{
	*ck = m->w[k].h.ck;
	*cw = m->w[k].h.cw;
	*cn = m->fill_model ? 0 : m->w[k].h.cn;
	*cinf = m->fill_model ? 0 : m->w[k].h.cinf;
}

static double window_weight(const struct lp_statcache *m, const struct sc_window *w)
{
	return (double)w->n + (m->in.include_cold ? w->dangling : 0);
}

/* Solve window w for `lines`, warm-starting when the last solve was for a
 * smaller cache. */
static double solve_window(struct lp_statcache *m, struct sc_window *w, double lines)
{
	double warm = w->last_lines > 0 && w->last_lines <= lines ? w->root : 1;
	struct sc_hist h = w->h;

	m->cap = lines;
	/* AUTO: the fill model from the footprint up, so a warm start from a
	 * smaller cache (either model) is still an upper bound of the root */
	fill_for(m, lines);
	if (m->fill_model) { /* it counts the cold misses its own way */
		h.cn = 0;
		h.cinf = h.cN = h.csum_k = 0;
	}
	w->root = solve(&h, w->dangling, m->in.include_cold, window_ev(m, w, lines), lines, warm);
	w->last_lines = lines;
	return w->root;
}

/* Expected misses among the finite reuses of window w, solved for
 * `lines`: R N when nothing is censored (Eq. 6), else the sum of f over
 * the finite reuses at the eviction rate the censored ones helped find,
 * the one solve() took (its evictions per access for ev_lines: `lines`,
 * or lp_statcache_scaled_ratio()'s cache that crowded reuses see; a
 * smaller one here than in the solve counted 92 % misses where the solve
 * had found 78 %, and simulation 82 %). */
static double hist_misses(struct lp_statcache *m, const struct sc_window *w, const struct sc_hist *h,
			  double R, double lines, double ev_lines)
{
	double ev, n = 0;
	struct sc_ev e;

	if (m->in.include_cold || m->fill_model || h->cN == 0)
		return R * window_weight(m, w);
	e = window_ev(m, w, ev_lines);
	ev = e.al + e.be * R;
	if (!(ev > 0))
		return 0;
	if (lines <= 1) {
		for (size_t i = 0; i < h->n; i++)
			n += h->k[i] > 0;
		return n;
	}
	return finite_misses(h, -log1p(-1.0 / lines) * ev);
}

static double window_misses(struct lp_statcache *m, struct sc_window *w, double lines)
{
	double R = solve_window(m, w, lines);

	return hist_misses(m, w, &w->h, R, lines, lines);
}

static int cmp_idx_lines(const void *a, const void *b, void *ctx)
{
	const double *v = ctx;
	double x = v[*(const size_t *)a], y = v[*(const size_t *)b];
	return x < y ? -1 : x > y;
}

int lp_statcache_curve(struct lp_statcache *m, const double *lines, size_t n, double *ratio)
{
	size_t *order = malloc((n ? n : 1) * sizeof(*order));

	if (!order)
		return lp_seterr(LP_ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++)
		order[i] = i;
	qsort_r(order, n, sizeof(*order), cmp_idx_lines, (void *)lines);
	for (size_t j = 0; j < n; j++) {
		double L = lines[order[j]], num = 0, den = 0;
		for (size_t w = 0; w < m->nw; w++) {
			double wt = window_weight(m, &m->w[w]);
			if (wt <= 0)
				continue;
			num += window_misses(m, &m->w[w], L);
			den += wt;
		}
		ratio[order[j]] = den > 0 ? num / den : NAN;
	}
	free(order);
	return 0;
}

int lp_statcache_window_ratios(struct lp_statcache *m, double lines, double *ratio)
{
	for (size_t w = 0; w < m->nw; w++)
		ratio[w] = window_weight(m, &m->w[w]) > 0 ? solve_window(m, &m->w[w], lines) : NAN;
	return 0;
}

int lp_statcache_sample_miss(struct lp_statcache *m, double lines, double *prob)
{
	double b = lines <= 1 ? -INFINITY : log1p(-1.0 / lines);

	for (size_t w = 0; w < m->nw; w++)
		if (window_weight(m, &m->w[w]) > 0)
			solve_window(m, &m->w[w], lines);
	for (size_t i = 0; i < m->in.n; i++) {
		const struct lp_sample *s = &m->in.p->samples[m->in.first + i];
		const struct sc_window *w = &m->w[m->win[i]];
		struct sc_ev e = window_ev(m, w, lines);
		double ev = e.al + e.be * w->root;
		if (s->reuse == LP_REUSE_DANGLING)
			prob[i] = m->in.include_cold ? 1 : 0;
		else if (s->reuse == 0 || ev <= 0)
			prob[i] = 0;
		else
			prob[i] = isinf(b) ? 1 : -expm1((double)s->reuse * ev * b);
	}
	return 0;
}

/* The miss ratio of a cache of `lines` lines with each finite sample's
 * reuse distance multiplied by rho[i] (profile order from m->in.first):
 * set-associative random replacement (lp_sa_place_crowding(): rho = 1
 * everywhere is the fully associative ratio, equal to lp_statcache_curve()
 * to rounding). The censored reuses keep their distances: no sample shows
 * where their lines were. Each window is solved from its scaled reuses,
 * sorted again with their power sums (the order changes with rho). */
int lp_statcache_scaled_ratio(struct lp_statcache *m, double lines, const double *rho, double *ratio)
{
	size_t nk = 0;
	double *k, *pw[4] = { NULL }, num = 0, den = 0, scaled = 0, plain = 0, fill_lines;
	int err = 0;

	for (size_t w = 0; w < m->nw; w++)
		nk += m->w[w].n;
	k = malloc((nk ? nk : 1) * sizeof(*k));
	for (size_t j = 0; j < 4; j++)
		pw[j] = malloc((nk + m->nw) * sizeof(double));
	if (!k || !pw[0] || !pw[1] || !pw[2] || !pw[3]) {
		err = lp_seterr(LP_ENOMEM, "out of memory");
		goto out;
	}
	/* the windows' finite samples are consecutive in time, as m->k */
	for (size_t i = 0, at = 0; i < m->in.n; i++) {
		const struct lp_sample *s = &m->in.p->samples[m->in.first + i];
		if (s->reuse != LP_REUSE_DANGLING) {
			k[at] = (double)s->reuse * (isfinite(rho[i]) && rho[i] > 0 ? rho[i] : 1);
			scaled += k[at++];
			plain += (double)s->reuse;
		}
	}
	/* A reuse whose distance is scaled by rho sees a cache of lines / rho
	 * lines: its crowded sets fill (and start to evict) that much sooner.
	 * The fill model and the evictions per access are taken for the
	 * cache the reuses see on average, weighted as the equation's slope
	 * weighs them (by distance): a list whose 400 nodes are pages apart,
	 * on 8 of 512 sets, fills those sets after 64 distinct lines, not
	 * 4 096 (the fill model for 4 096 lines put its ratio at 0, where
	 * simulation gives 49.9%). */
	fill_lines = scaled > plain && plain > 0 ? lines * plain / scaled : lines;
	m->cap = lines;
	fill_for(m, fill_lines);
	for (size_t w = 0; w < m->nw; w++) {
		struct sc_window *wp = &m->w[w];
		struct sc_hist h = wp->h;
		double wt = window_weight(m, wp), R;
		if (wt <= 0)
			continue;
		hist_sort(&h, k + wp->first, pw, wp->first + w);
		h.sum_k = h.pw[0][wp->n];
		if (m->fill_model) {
			h.cn = 0;
			h.cinf = h.cN = h.csum_k = 0;
		}
		R = solve(&h, wp->dangling, m->in.include_cold, window_ev(m, wp, fill_lines), lines, 1);
		num += hist_misses(m, wp, &h, R, lines, fill_lines);
		den += wt;
	}
	*ratio = den > 0 ? num / den : NAN;
out:
	free(k);
	for (size_t j = 0; j < 4; j++)
		free(pw[j]);
	return err;
}

int lp_statcache_setassoc_ratio(struct lp_statcache *m, const struct lp_statstack *ss, uint64_t sets,
				double lines, double *ratio)
{
	size_t n = lp_statstack_nsamples(ss);
	double *rho;
	int err, even = 1, fits;

	if (sets <= 1 || n != m->in.n)
		return lp_statcache_curve(m, &lines, 1, ratio);
	if (!(rho = malloc((n ? n : 1) * sizeof(*rho))))
		return lp_seterr(LP_ENOMEM, "out of memory");
	/* the fully associative ratio: the misses per access from which the
	 * crowding reads the miss chances of a span's lines */
	/* the fill model's footprint fits the cache: it never fills */
	fits = m->fill_mode != 0 && footprint_fits(m, lines);
	if ((err = lp_statcache_curve(m, &lines, 1, ratio)) >= 0 &&
	    (err = lp_statstack_crowding(ss, sets, lines, isfinite(*ratio) ? *ratio : 0, fits, rho)) >= 0) {
		for (size_t i = 0; i < n && even; i++)
			even = rho[i] == 1;
		/* nothing crowds: the fully associative ratio, already in *ratio */
		if (!even)
			err = lp_statcache_scaled_ratio(m, lines, rho, ratio);
	}
	free(rho);
	return err;
}
