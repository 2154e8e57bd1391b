/* StatStack: LRU miss ratios from sampled reuse distances (Eklöv &
 * Hagersten 2010), with time-local reuse distributions, and
 * set-associative LRU by the placement model (model-setassoc.c; the
 * binomial model of Marin & Mellor-Crummey, 2005, section 5.2, where the
 * samples show random placement).
 *
 * Derivation. A reuse of distance d after an access at time t spans the
 * accesses t+1 .. e = t+d. Its stack distance is the number of distinct
 * lines among them, i.e. the number of them that are the LAST access to
 * their line inside the span: the access at j is one iff its own forward
 * reuse distance is >= e - j. None of them touches the reused line. So
 *       E[SD] = sum_{j=t+1}^{e} P(RD_j >= e - j).
 * Eklöv & Hagersten take every RD_j from one distribution, the whole
 * run's; then E[SD(d)] = sum_{m=0}^{d-1} P(RD >= m).
 *
 * Assumptions, and where they bend:
 * - Time-local distributions. One global distribution is wrong for a
 *   program with phases: the reuses of a phase that sweeps 16K lines
 *   (stack distance 16K) were estimated at half that because the run's
 *   distribution also held the short reuses of other phases (the `mix`
 *   trace: 38 points of error). So RD_j is taken from the samples of the
 *   time window holding j: each sample of a window with S_w samples
 *   stands for 1/S_w of every position of the window (uniform smear).
 *   A sample s of window w then adds, to the span, the number of
 *   positions j of the window inside the span with j + rd_s >= e, over
 *   S_w. A span inside one window is the global formula with the window's
 *   distribution; a span over many windows counts, window by window, the
 *   accesses whose reuse leaves the span, which is what the stack
 *   distance is. The windows are the run's phases (model-phases.c):
 *   fixed windows joined while their reuse distances look alike, so a
 *   stationary run is one window (all samples estimate its distribution;
 *   fixed 200 000-access windows of 20 samples at a rate of 1e-4 smeared
 *   a matrix multiply's cliff over a factor of two) and a phased one is
 *   cut at its phase changes. One window for the whole run is the global
 *   model.
 * - Within a window the distribution is the same everywhere (a phase
 *   change the test misses blurs it). A phase can also drift without
 *   changing: a triangular loop nest runs its inner loop with trip counts
 *   1 .. n-i in every row i, so every window and phase holds all of them,
 *   while the span of one long inner loop holds only accesses of that
 *   loop, all reused one loop later. With the phase's mixture the span's
 *   accesses looked short-reused and its stack distance came out about
 *   30 % low (6 to 7 points at 16K on such a kernel at 1e-3, at every
 *   seed). So each phase is tested for drift (phase_drifts(): do chunks of
 *   SS_DRIFT_CHUNK consecutive samples differ from the phase more often
 *   than chance allows?) and a drifting one is cut into those chunks, the
 *   most local distribution the samples give. A drift too slow for any
 *   chunk to show (LU's shrinking trailing block) shows in the long
 *   reuses of the phase's first quarter against those of its third; such
 *   a phase is cut into SS_SLOW_PARTS parts (16-sample chunks would blur
 *   the cliffs of a slowly drifting kernel). With too few samples for
 *   that test (16 above the 90th percentile in each quarter), a drift
 *   still shows as long reuses that come in runs in time order (a
 *   wavefront whose diagonals grow and shrink: the runs test of
 *   long_reuses_in_runs()); such a phase is cut the same way. A
 *   stationary phase stays
 *   whole (chunks that small would blur a sharp cliff); at rates too low
 *   for a chunk to be shorter than the drift (the same kernel at 1e-4:
 *   16 samples span a whole row) the test does not fire and the bias
 *   remains (docs/models.md).
 * - Dangling samples are last accesses: infinite reuse, so they count as
 *   distinct lines in every span they are in. As cold misses they are
 *   excluded from the ratio by default, else misses.
 * - A reuse misses in a fully associative LRU cache of L lines iff its
 *   stack distance >= L; the expected value stands in for the distribution
 *   of stack distances (error where that distribution is wide around L).
 *   With each position's reuse independent that spread is a few lines;
 *   the wide ones come from spans of one phase that differ at a finer
 *   scale than the samples' spacing, which the samples cannot show
 *   (covariance: 3 % of its reuses at stack distance 121 estimated at
 *   about 227; docs/models.md).
 * - Set-associative: the access hits iff fewer than `ways` of its
 *   E[SD] distinct lines map to its set; where they map is
 *   model-setassoc.c's (its own assumptions).
 *
 * Cost: two binary searches per window a span touches; the estimates are
 * computed once in lp_statstack_new(), after which a miss ratio is one
 * binary search.
 */
#include <locprof/model.h>

#include "common/array.h"
#include "common/error.h"
#include "common/sort.h"
#include "model/model-internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>


struct ss_window {
	uint64_t a, b;   /* positions [a, b) */
	size_t off, nfin; /* its finite reuse distances: wrd[off, off + nfin) */
	double S, D;     /* samples, dangling samples */
	uint64_t maxrd;  /* largest finite reuse distance (0 if none) */
};

/* The footprint over time, counted from the samples themselves
 * (lp_statstack_prepare_footprint()): n samples at times t (sorted) and
 * the footprint at each sample's time (fit: see isotonic()). */
struct ss_footprint {
	size_t n;
	uint64_t *t;
	double *fit;
};

/* Samples per window inside a phase whose reuse distances drift. */
#define SS_DRIFT_CHUNK 16
#define SS_SLOW_PARTS 8 /* a slowly drifting phase is cut into 8 */

struct lp_statstack {
	struct lp_model_samples in; /* first: lp_model_alloc() fills it */
	uint64_t length; /* requested window length */
	/* the whole run's distribution (lp_statstack_expected_sd) */
	double S, dangling;
	uint64_t *rd; /* finite reuse distances, sorted */
	double *prefix;
	size_t nrd;
	/* windows */
	struct ss_window *w;
	size_t nw;
	uint64_t *wrd;  /* finite reuse distances grouped by window, sorted in each */
	double *wcum;   /* wcum[i] = sum wrd[0..i) */
	double *sd;     /* estimate per sample of the line size (INFINITY: dangling) */
	double *sd_sorted; /* estimates of the finite samples, sorted */
	/* where the spans' lines fall in the sets: built at the first
	 * set-associative question (a cache of the model, hence set through
	 * a const model), so that the fully associative curves do not pay */
	struct lp_sa_place *place;
	struct ss_footprint *fp; /* lp_statstack_prepare_footprint() */
	double line; /* bytes */
	int has_sd;
};

/* First index in v[0, n) with v[i] >= x. */
static size_t lower_bound(const uint64_t *v, size_t n, uint64_t x)
{
	size_t lo = 0, hi = n;

	LP_BISECT(lo, hi, i, v[i] < x);
	return lo;
}

double lp_statstack_expected_sd(const struct lp_statstack *m, uint64_t d)
{
	size_t c;

	if (d == 0 || m->S <= 0)
		return 0;
	/* c = number of rd <= d - 2 */
	c = lower_bound(m->rd, m->nrd, d - 1);
	return (double)d - ((double)c * (double)(d - 1) - m->prefix[c]) / m->S;
}

/* Contribution of window w to the span ending at e, for the positions
 * [lo, hi] of w: sum over its samples of #{j in [lo, hi] : j + rd >= e},
 * over S_w. With g = e - hi and n = hi - lo + 1 a sample adds
 * clamp(rd + 1 - g, 0, n). */
static double window_part(const struct lp_statstack *m, const struct ss_window *w, uint64_t lo,
			  uint64_t hi, uint64_t e)
{
	uint64_t g = e - hi, n = hi - lo + 1;
	double full = w->D, part = 0;

	if (w->S <= 0)
		return 0;
	if (w->nfin && w->maxrd + 1 > g) {
		const uint64_t *v = m->wrd + w->off;
		const double *cum = m->wcum + w->off;
		/* rd < g: add 0; rd >= g + n - 1: add n; between: rd + 1 - g */
		size_t i1 = lower_bound(v, w->nfin, g);
		size_t i2 = g + n - 1 < g ? w->nfin : lower_bound(v, w->nfin, g + n - 1);
		full += (double)(w->nfin - i2);
		part = (cum[i2] - cum[i1]) + (double)(i2 - i1) * (1.0 - (double)g);
	}
	return (full * (double)n + part) / w->S;
}

/* Window holding position x (the last one for x past the end). */
static size_t window_of(const struct lp_statstack *m, uint64_t x)
{
	size_t lo = 0, hi = m->nw;

	/* last window with a <= x */
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (m->w[mid].a <= x)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

typedef double window_fn(const struct lp_statstack *m, const struct ss_window *w, uint64_t lo, uint64_t hi,
			 uint64_t e);

/* The sum of part() over the windows of the accesses [lo, hi], each for
 * its own positions of them and the span's end hi. */
static double sum_windows(const struct lp_statstack *m, uint64_t lo, uint64_t hi, window_fn *part)
{
	uint64_t last = m->w[m->nw - 1].b - 1;
	double sum = 0;

	if (hi > last) /* damaged profile: a reuse past the counted accesses */
		hi = last;
	if (lo > hi)
		return 0;
	for (size_t k = window_of(m, lo); k < m->nw && m->w[k].a <= hi; k++) {
		const struct ss_window *w = &m->w[k];
		uint64_t a = w->a > lo ? w->a : lo, b = w->b - 1 < hi ? w->b - 1 : hi;
		sum += part(m, w, a, b, hi);
	}
	return sum;
}

/* Expected distinct lines among the accesses [lo, hi]: the accesses of
 * the span whose reuse reaches past hi, window by window. */
static double span_distinct(const struct lp_statstack *m, uint64_t lo, uint64_t hi)
{
	return sum_windows(m, lo, hi, window_part);
}

double lp_statstack_distinct(const struct lp_statstack *m, uint64_t first, uint64_t last)
{
	return span_distinct(m, first, last);
}

/* The variance of window_part() over the sampler's seeds. The window's
 * part is n V, V = sum x_i / S over its S samples, x_i in [0, 1] the
 * share of the positions [lo, hi] at which sample i's reuse reaches past
 * e (window_part()). A seed keeps each access a Poisson number of times,
 * so V is a ratio of Poisson sums, and by the delta method
 * Var V = sum (x_i - V)^2 / S^2 = (sum x_i^2 - S V^2) / S^2. */
static double window_part_var(const struct lp_statstack *m, const struct ss_window *w, uint64_t lo,
			      uint64_t hi, uint64_t e)
{
	uint64_t g = e - hi, n = hi - lo + 1;
	double V = window_part(m, w, lo, hi, e) / (double)n, sq = w->D;

	if (w->S <= 0)
		return 0;
	if (w->nfin && w->maxrd + 1 > g) {
		const uint64_t *v = m->wrd + w->off;
		size_t i1 = lower_bound(v, w->nfin, g);
		size_t i2 = g + n - 1 < g ? w->nfin : lower_bound(v, w->nfin, g + n - 1);
		sq += (double)(w->nfin - i2);
		for (size_t i = i1; i < i2; i++) {
			double x = (double)(v[i] + 1 - g) / (double)n;
			sq += x * x;
		}
	}
	return fmax(sq - w->S * V * V, 0.0) / (w->S * w->S) * (double)n * (double)n;
}

double lp_statstack_distinct_sd(const struct lp_statstack *m, uint64_t first, uint64_t last)
{
	/* the windows' samples are disjoint: their errors add */
	return sqrt(sum_windows(m, first, last, window_part_var));
}

/* The footprint over time, for StatCache's fill model: the distinct
 * lines among the accesses [0, h] are the accesses up to h whose next
 * access is after h, and every sample says whether it is one of them (its
 * reuse, at t + rd + 1, is after h or never comes). So the footprint is
 * counted directly, each sample weighing the accesses of its window per
 * sample. span_distinct() would smear each window's distribution over the
 * whole window instead, which a span of a few samples needs but the
 * footprint does not, and which counts a line twice where a window holds
 * both the long reuses of a loop's passes and the last pass's dangling
 * samples: mv-row's 245 000 lines (four passes over a 15.7 MB matrix, one
 * window) came out 418 000 to 445 000 on six seeds at 1e-3, and 16M got
 * the paper's equation, 0.6 to 1.3 points where a simulation has 0. */

/* The footprint never shrinks, but its count at each sample's time is
 * noisy (a few percent at 1e-3), and the first time a noisy count
 * crosses a cache size is early: the largest of many noisy values is
 * high (mv-row's 245 000 lines, counted after every sample, first
 * crossed 262 144 within the second pass). So v[0, n) is replaced by its
 * isotonic regression, the nondecreasing sequence nearest to it in least
 * squares (pool adjacent violators: a block whose mean falls below the
 * one before it is merged with it). The end of a run keeps the samples
 * before it in its estimate this way: a profile of a few hundred samples
 * may hold no dangling one. 0, or LP_ENOMEM. */
static int isotonic(double *v, size_t n)
{
	double *sum = malloc((n ? n : 1) * sizeof(*sum));
	size_t *len = malloc((n ? n : 1) * sizeof(*len)), nb = 0;

	if (!sum || !len) {
		free(sum);
		free(len);
		return lp_seterr(LP_ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < n; i++) {
		sum[nb] = v[i];
		len[nb++] = 1;
		while (nb > 1 && sum[nb - 2] * (double)len[nb - 1] > sum[nb - 1] * (double)len[nb - 2]) {
			sum[nb - 2] += sum[nb - 1];
			len[nb - 2] += len[nb - 1];
			nb--;
		}
	}
	for (size_t b = 0, i = 0; b < nb; b++)
		for (size_t j = 0; j < len[b]; j++)
			v[i++] = sum[b] / (double)len[b];
	free(sum);
	free(len);
	return 0;
}

static void footprint_free(struct ss_footprint *fp)
{
	if (fp) {
		free(fp->t);
		free(fp->fit);
		free(fp);
	}
}

/* The count at each sample's time: the weights of the samples at or
 * before it, less those of the samples whose reuse came at or before it.
 * A reuse at r lowers the count from the first sample at or after r on
 * (a difference array over the samples, found by bisection: no sort of
 * the reuses, which cost the report 7 % with its resamples). Copies of a
 * sample (a resample's) share its time and get the count after all of
 * them. */
int lp_statstack_prepare_footprint(const struct lp_statstack *m)
{
	struct lp_statstack *mm = (struct lp_statstack *)m; /* a cache, as place */
	const struct lp_sample *s = lp_profile_line_first(m->in.p, m->in.first);
	struct ss_footprint *fp;
	size_t n = m->in.n, k = 0;
	double *drop, count = 0;
	int err;

	if (m->fp)
		return 0;
	if (!(fp = calloc(1, sizeof(*fp))))
		return lp_seterr(LP_ENOMEM, "out of memory");
	fp->t = malloc((n ? n : 1) * sizeof(*fp->t));
	fp->fit = malloc((n ? n : 1) * sizeof(*fp->fit));
	drop = calloc(n + 1, sizeof(*drop));
	if (!fp->t || !fp->fit || !drop) {
		free(drop);
		footprint_free(fp);
		return lp_seterr(LP_ENOMEM, "out of memory");
	}
	fp->n = n;
	for (size_t i = 0; i < n; i++)
		fp->t[i] = s[i].time;
	for (size_t i = 0; i < n; i++) {
		while (k + 1 < m->nw && s[i].time >= m->w[k].b)
			k++;
		double w = m->w[k].S > 0 ? (double)(m->w[k].b - m->w[k].a) / m->w[k].S : 0;
		fp->fit[i] = w; /* for now, the sample's weight */
		if (s[i].reuse != LP_REUSE_DANGLING)
			drop[lower_bound(fp->t, n, s[i].time + s[i].reuse + 1)] += w;
	}
	for (size_t i = 0; i < n; i++) {
		count += fp->fit[i] - drop[i];
		fp->fit[i] = count;
	}
	for (size_t i = n; i-- > 1;) /* a tie gets the count after all of it */
		if (fp->t[i - 1] == fp->t[i])
			fp->fit[i - 1] = fp->fit[i];
	free(drop);
	if ((err = isotonic(fp->fit, n)) < 0) {
		footprint_free(fp);
		return err;
	}
	mm->fp = fp; /* kept only whole: a later call finds it ready */
	return 0;
}

double lp_statstack_footprint(const struct lp_statstack *m, uint64_t h)
{
	const struct ss_footprint *fp = m->fp;
	size_t i = lower_bound(fp->t, fp->n, h + 1); /* samples at or before h */

	return i ? fp->fit[i - 1] : 0;
}

uint64_t lp_statstack_fill_time(const struct lp_statstack *m, double lines)
{
	const struct ss_footprint *fp = m->fp;
	size_t lo = 0, hi = fp->n;

	LP_BISECT(lo, hi, i, fp->fit[i] <= lines);
	return lo < fp->n ? fp->t[lo] : UINT64_MAX;
}

/* The reuse after an access at t at distance d spans t+1 .. t+d. */
static double sample_sd(const struct lp_statstack *m, uint64_t t, uint64_t d)
{
	return d == 0 ? 0 : span_distinct(m, t + 1, t + d);
}

/* Reuse distances as doubles for the drift test: dangling is infinite. */
static double rd_value(uint64_t rd)
{
	return rd == LP_REUSE_DANGLING ? INFINITY : (double)rd;
}

/* Share of the phase's samples at or below x (F(x)), or below it (F(x-)),
 * from its values sorted in v[0, n). */
static double ecdf(const double *v, size_t n, double x, int strict)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (strict ? v[mid] < x : v[mid] <= x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (double)lo / (double)n;
}

/* Does the reuse-distance distribution drift inside the phase of samples
 * s[0, n)? Cut into chunks of SS_DRIFT_CHUNK consecutive samples, a
 * stationary phase has each chunk's distribution a draw from the phase's:
 * the two-sample Kolmogorov-Smirnov distance of a chunk exceeds its 10 %
 * critical value in 10 % of the chunks (fewer: ties make the test
 * conservative). A phase whose reuses drift (a loop whose trip count
 * grows with an outer index, as in a triangular loop nest) exceeds it in
 * many more: drift when the share is above 10 % by four standard
 * errors. v: scratch for n doubles. */
/* Do the reuse distances above t of the phase's first quarter s[0, q)
 * and of its third one s[2q, 3q) differ, by the two-sample
 * Kolmogorov-Smirnov test at the 0.1 % level? Near the end of the run the
 * long reuses are cut short (dangling: their line is not touched again
 * before the end), which no stationary phase would show at its start: so
 * the third quarter, not the last, and every value capped at the run's
 * length after the third quarter, which both quarters see in full.
 * (w: 2q scratch; T: the run's line accesses) */
static int tails_differ(const struct lp_sample *s, size_t q, double t, uint64_t T, double *w)
{
	double *a = w, *b = w + q, d = 0, cap;
	size_t na = 0, nb = 0, i = 0, j = 0;

	if (!q || s[3 * q - 1].time + 1 >= T)
		return 0;
	cap = (double)(T - 1 - s[3 * q - 1].time);
	if (t >= cap)
		return 0; /* the tail is beyond what both quarters can see */
	for (size_t k = 0; k < q; k++) {
		if (rd_value(s[k].reuse) > t)
			a[na++] = fmin(rd_value(s[k].reuse), cap);
		if (rd_value(s[2 * q + k].reuse) > t)
			b[nb++] = fmin(rd_value(s[2 * q + k].reuse), cap);
	}
	if (na < SS_DRIFT_CHUNK || nb < SS_DRIFT_CHUNK)
		return 0;
	lp_sort_double(a, na);
	lp_sort_double(b, nb);
	while (i < na && j < nb) {
		double x = a[i] < b[j] ? a[i] : b[j];
		while (i < na && a[i] == x)
			i++;
		while (j < nb && b[j] == x)
			j++;
		d = fmax(d, fabs((double)i / (double)na - (double)j / (double)nb));
	}
	return d > 1.949 * sqrt((double)(na + nb) / ((double)na * (double)nb));
}

/* Do the long reuses of s[0, n) (above t) come in runs, in time order?
 * The Wald-Wolfowitz runs test: each long reuse is above or not above
 * their median; in a stationary phase the samples are exchangeable and
 * the number of runs is near 1 + 2 n1 n2 / m, in a drifting one (a
 * wavefront whose diagonals grow and shrink, a triangular nest at a rate
 * where 16 samples span many of its rows) the long reuses of one stretch
 * of time are all longer or all shorter than the rest, and the runs are
 * few: drift when below the mean by 3.09 sd (0.1 %, one-sided). The
 * quarter test needs 16 reuses above the 90th percentile in each quarter;
 * this one sees a drift in 40 long reuses. As in tails_differ(), only the
 * first three quarters, with values capped at what they all see in full.
 * (w: n scratch; T: the run's line accesses) */
static int long_reuses_in_runs(const struct lp_sample *s, size_t n, double t, uint64_t T, double *w)
{
	size_t q = n / 4, m = 0, n1 = 0, runs = 0;
	double cap, med;

	if (!q || s[3 * q - 1].time + 1 >= T)
		return 0;
	cap = (double)(T - 1 - s[3 * q - 1].time);
	for (size_t k = 0; k < 3 * q; k++)
		if (rd_value(s[k].reuse) > t && t < cap)
			w[m++] = fmin(rd_value(s[k].reuse), cap);
	if (m < 40)
		return 0;
	double *sorted = w + m;
	memcpy(sorted, w, m * sizeof(*w));
	lp_sort_double(sorted, m);
	med = sorted[(m - 1) / 2];
	for (size_t k = 0; k < m; k++) {
		int above = w[k] > med;
		n1 += (size_t)above;
		runs += k == 0 || above != (w[k - 1] > med);
	}
	double n2 = (double)(m - n1), a = (double)n1, mm = (double)m;
	if (n1 < 8 || n2 < 8)
		return 0;
	double mu = 1 + 2 * a * n2 / mm, var = 2 * a * n2 * (2 * a * n2 - mm) / (mm * mm * (mm - 1));
	return (double)runs < mu - 3.09 * sqrt(var);
}

/* 0: no drift, 1: a drift the chunks show, 2: a slow one (v: 3n scratch) */
static int phase_drifts(const struct lp_sample *s, size_t n, uint64_t T, double *v)
{
	size_t chunks = n / SS_DRIFT_CHUNK, over = 0;
	const double crit = 1.224 / sqrt((double)SS_DRIFT_CHUNK);

	if (chunks < 8)
		return 0;
	for (size_t i = 0; i < n; i++)
		v[i] = rd_value(s[i].reuse);
	lp_sort_double(v, n);
	for (size_t c = 0; c < chunks; c++) {
		double x[SS_DRIFT_CHUNK], d = 0;
		for (size_t k = 0; k < SS_DRIFT_CHUNK; k++)
			x[k] = rd_value(s[c * SS_DRIFT_CHUNK + k].reuse);
		lp_sort_double(x, SS_DRIFT_CHUNK);
		for (size_t k = 0; k < SS_DRIFT_CHUNK; k++) {
			/* the chunk's CDF steps at x[k]: compare both sides */
			if (k == 0 || x[k] > x[k - 1])
				d = fmax(d, fabs((double)k / SS_DRIFT_CHUNK - ecdf(v, n, x[k], 1)));
			if (k + 1 == SS_DRIFT_CHUNK || x[k + 1] > x[k])
				d = fmax(d, fabs((double)(k + 1) / SS_DRIFT_CHUNK - ecdf(v, n, x[k], 0)));
		}
		over += d > crit;
	}
	if ((double)over / (double)chunks > 0.1 + 4 * sqrt(0.09 / (double)chunks))
		return 1;
	/* A slow drift of the long reuses (a loop nest whose trip counts
	 * shrink over the whole run: LU's trailing matrix, whose reuses one
	 * step later fall from 30 000 to 8 000 accesses) moves no chunk far
	 * enough to be seen, and the long reuses are a tenth of the samples,
	 * too few to move the whole distribution; but above the phase's 90th
	 * percentile the first quarter's reuses differ from the third
	 * quarter's, which a stationary phase's do once in a thousand. */
	if (tails_differ(s, n / 4, v[(size_t)(0.9 * (double)(n - 1))], T, v + n))
		return 2;
	return long_reuses_in_runs(s, n, v[(size_t)(0.75 * (double)(n - 1))], T, v + n) ? 2 : 0;
}

/* Cut the run into phases (model-phases.c) and group the finite reuse
 * distances by phase; a phase whose distribution drifts is cut into
 * chunks of SS_DRIFT_CHUNK samples instead (see the top of the file). */
static int build_windows(struct lp_statstack *m, uint64_t total, uint64_t len)
{
	const struct lp_sample *s = lp_profile_line_first(m->in.p, m->in.first);
	uint64_t *bounds, *cut;
	size_t np, i = 0, nfin = 0, nc = 0;
	double *scratch;
	int err;

	if ((err = lp_model_phases(s, m->in.n, total, len, &bounds, &np)) < 0)
		return err;
	/* each phase stays whole or is cut every SS_DRIFT_CHUNK samples */
	cut = malloc((np + m->in.n / SS_DRIFT_CHUNK + 2) * sizeof(*cut));
	scratch = malloc((m->in.n ? 3 * m->in.n : 1) * sizeof(*scratch));
	if (!cut || !scratch) {
		free(cut);
		free(scratch);
		free(bounds);
		return LP_ENOMEM;
	}
	for (size_t k = 0, a = 0; k < np; k++) {
		size_t b = a;
		while (b < m->in.n && s[b].time < bounds[k + 1])
			b++;
		cut[nc++] = bounds[k];
		/* a fast drift: chunks of SS_DRIFT_CHUNK samples; a slow one:
		 * SS_SLOW_PARTS parts, local enough for a drift over the whole
		 * phase, and not so small that they blur a cliff */
		int drift = b > a ? phase_drifts(s + a, b - a, total, scratch) : 0; /* s is NULL without samples */
		size_t step = drift == 2 ? (b - a) / SS_SLOW_PARTS : SS_DRIFT_CHUNK;
		if (drift)
			for (size_t c = a + step; c + step / 2 < b; c += step)
				if (s[c].time > cut[nc - 1])
					cut[nc++] = s[c].time;
		a = b;
	}
	cut[nc] = bounds[np];
	free(bounds);
	free(scratch);
	bounds = cut;
	np = nc;
	if (!(m->w = calloc(np, sizeof(*m->w)))) {
		free(bounds);
		return LP_ENOMEM;
	}
	m->nw = np;
	for (size_t k = 0; k < np; k++) {
		struct ss_window *w = &m->w[k];
		w->a = bounds[k];
		w->b = bounds[k + 1];
		w->off = nfin;
		for (; i < m->in.n && s[i].time < w->b; i++) {
			w->S++;
			if (s[i].reuse == LP_REUSE_DANGLING) {
				w->D++;
			} else {
				m->wrd[nfin++] = s[i].reuse;
				w->nfin++;
				if (s[i].reuse > w->maxrd)
					w->maxrd = s[i].reuse;
			}
		}
	}
	free(bounds);
	m->wcum[0] = 0;
	for (size_t k = 0; k < m->nw; k++) {
		struct ss_window *w = &m->w[k];
		lp_sort_u64(m->wrd + w->off, w->nfin);
		for (size_t j = w->off; j < w->off + w->nfin; j++)
			m->wcum[j + 1] = m->wcum[j] + (double)m->wrd[j];
	}
	return 0;
}

int lp_statstack_new(struct lp_statstack **out, const struct lp_profile *p, unsigned li,
		     uint64_t window, int include_cold)
{
	return lp_statstack_new_internal(out, p, li, window, include_cold, 1);
}

int lp_model_alloc(void **out, size_t size, const struct lp_profile *p, unsigned li, int include_cold)
{
	struct lp_model_samples *in;

	if (li >= p->n_line_sizes)
		return lp_seterr(LP_EINVAL, "no line size %u in the profile", li);
	if (!(in = calloc(1, size)))
		return lp_seterr(LP_ENOMEM, "out of memory");
	in->p = p;
	in->include_cold = include_cold;
	lp_profile_line_samples(p, li, &in->first, &in->n);
	*out = in;
	return 0;
}

int lp_statstack_new_internal(struct lp_statstack **out, const struct lp_profile *p, unsigned li,
			      uint64_t window, int include_cold, int want_sd)
{
	struct lp_statstack *m = NULL; /* set by lp_model_alloc; gcc -O3 cannot tell */
	uint64_t total;
	size_t k = 0;
	int err;

	if ((err = lp_model_alloc((void **)&m, sizeof(*m), p, li, include_cold)) < 0)
		return err;
	err = LP_ENOMEM;
	m->S = (double)m->in.n;
	size_t n1 = m->in.n ? m->in.n : 1;
	m->rd = malloc(n1 * sizeof(*m->rd));
	m->prefix = malloc((m->in.n + 1) * sizeof(*m->prefix));
	m->wrd = malloc(n1 * sizeof(*m->wrd));
	m->wcum = malloc((m->in.n + 1) * sizeof(*m->wcum));
	m->sd = malloc(n1 * sizeof(*m->sd));
	m->sd_sorted = malloc(n1 * sizeof(*m->sd_sorted));
	if (!m->rd || !m->prefix || !m->wrd || !m->wcum || !m->sd || !m->sd_sorted)
		goto out_free;
	for (size_t i = 0; i < m->in.n; i++) {
		uint64_t r = p->samples[m->in.first + i].reuse;
		if (r == LP_REUSE_DANGLING)
			m->dangling++;
		else
			m->rd[m->nrd++] = r;
	}
	lp_sort_u64(m->rd, m->nrd);
	m->prefix[0] = 0;
	for (size_t i = 0; i < m->nrd; i++)
		m->prefix[i + 1] = m->prefix[i] + (double)m->rd[i];

	/* the run's length: the counted accesses, or (a profile cut short)
	 * as far as a sample or its reuse reaches */
	total = p->accesses[li];
	for (size_t i = 0; i < m->in.n; i++) {
		const struct lp_sample *s = &p->samples[m->in.first + i];
		uint64_t end = s->reuse == LP_REUSE_DANGLING ? s->time : s->time + s->reuse + 1;
		if (end >= total)
			total = end + 1;
	}
	if (!total)
		total = 1;
	m->length = lp_profile_window_length(total, window ? window : p->windows[li].length);
	if ((err = build_windows(m, total, m->length)) < 0)
		goto out_free;

	for (size_t i = 0; i < m->in.n && want_sd; i++) {
		const struct lp_sample *s = &p->samples[m->in.first + i];
		if (s->reuse == LP_REUSE_DANGLING) {
			m->sd[i] = INFINITY;
			continue;
		}
		m->sd[i] = sample_sd(m, s->time, s->reuse);
		m->sd_sorted[k++] = m->sd[i];
	}
	lp_sort_double(m->sd_sorted, k);
	m->line = p->line_sizes[li];
	m->has_sd = want_sd;
	*out = m;
	return 0;
out_free:
	lp_statstack_free(m);
	return lp_seterr(err, "out of memory");
}

void lp_statstack_free(struct lp_statstack *m)
{
	if (!m)
		return;
	free(m->rd);
	free(m->prefix);
	free(m->w);
	free(m->wrd);
	free(m->wcum);
	free(m->sd);
	free(m->sd_sorted);
	lp_sa_place_free(m->place);
	footprint_free(m->fp);
	free(m);
}

uint64_t lp_statstack_length(const struct lp_statstack *m)
{
	return m->length;
}

size_t lp_statstack_nsamples(const struct lp_statstack *m)
{
	return m->in.n;
}

size_t lp_statstack_nwindows(const struct lp_statstack *m)
{
	return m->nw;
}

void lp_statstack_window(const struct lp_statstack *m, size_t k, uint64_t *start, uint64_t *end)
{
	*start = m->w[k].a;
	*end = m->w[k].b;
}

int lp_statstack_sample_sd(const struct lp_statstack *m, double *sd)
{
	for (size_t i = 0; i < m->in.n; i++)
		sd[i] = m->sd[i];
	return 0;
}

static double ratio(const struct lp_statstack *m, double misses)
{
	double den = (double)m->nrd + (m->in.include_cold ? m->dangling : 0);

	if (m->in.include_cold)
		misses += m->dangling;
	return den > 0 ? misses / den : NAN;
}

/* The miss ratio of `lines` lines from the k finite stack distances
 * sd[0, k), sorted: the misses are the ones from the first >= lines on. */
static double sorted_ratio(const struct lp_statstack *m, const double *sd, size_t k, double lines)
{
	size_t lo = 0, hi = k;

	LP_BISECT(lo, hi, i, sd[i] < lines);
	return ratio(m, (double)(k - lo));
}

double lp_statstack_miss_ratio(const struct lp_statstack *m, double lines)
{
	return sorted_ratio(m, m->sd_sorted, m->nrd, lines);
}

/* Half-octaves of the estimates, and the standard errors a half-octave's
 * count of span lines must be from its estimate to be taken instead. */
#define SS_CHECK_BINS 128
#define SS_CHECK_Z 3.0
#define SS_CHECK_MIN 20.0 /* span lines expected in a half-octave, at least */
#define SS_CHECK_POOL 2   /* half-octaves pooled on each side, at most */

static int check_bin(double sd)
{
	int b = (int)floor(2 * log2(sd + 1));

	return b < 0 ? 0 : b >= SS_CHECK_BINS ? SS_CHECK_BINS - 1 : b;
}

/* The span lines (n) and rate times the estimates (d) of the
 * half-octaves within w of b. */
static void pooled(const double *num, const double *den, int b, int w, double *n, double *d)
{
	*n = *d = 0;
	for (int c = b - w; c <= b + w; c++)
		if (c >= 0 && c < SS_CHECK_BINS) {
			*n += num[c];
			*d += den[c];
		}
}

/* The factor the span counts give the estimates of half-octave b: its
 * own count where that alone is SS_CHECK_Z standard errors from the
 * estimates, else the pooled count of the half-octaves within one, then
 * two, of it (a bias over an octave or two of distances, which a
 * half-octave's few span lines at a low rate cannot show alone: gzip -9
 * at 1e-4 has 1.1 to 2.0 times the span lines expected in each
 * half-octave from 128 to 724 lines, 4 sigma together, under 3 in each);
 * else 1. */
static double check_factor(const double *num, const double *den, int b)
{
	for (int w = 0; w <= SS_CHECK_POOL; w++) {
		double n, d;

		pooled(num, den, b, w, &n, &d);
		if (den[b] > 0 && d >= SS_CHECK_MIN && fabs(n - d) > SS_CHECK_Z * sqrt(d))
			return n / d;
	}
	return 1;
}

/* The factors that the span counts around half-octave b leave possible
 * (95%): the pooled count of the half-octaves within SS_CHECK_POOL of it
 * over rate times their estimates, give or take two Poisson standard
 * errors; [1, 1] where too few span lines are expected there to tell. */
static void check_band(const double *num, const double *den, int b, double *lo, double *hi)
{
	double n, d;

	*lo = *hi = 1;
	pooled(num, den, b, SS_CHECK_POOL, &n, &d);
	if (!(den[b] > 0) || d < SS_CHECK_MIN)
		return;
	*lo = fmin(1, fmax(0, (n - 2 * sqrt(n)) / d));
	*hi = fmax(1, (n + 2 * sqrt(n + 1) + 1) / d);
}

/* Each finite estimate's span lines (num) and rate times the estimate
 * (den), summed per half-octave of the estimate. 0, 1 when the profile
 * has nothing to check (no estimates, or every access sampled), or
 * LP_ENOMEM. */
static int span_bins(const struct lp_statstack *m, double *num, double *den)
{
	const struct lp_sample *s = lp_profile_line_first(m->in.p, m->in.first);
	double rate = m->in.p->rate, *count;
	int err;

	if (!m->has_sd || !(rate > 0) || rate >= 1)
		return 1;
	if (!(count = malloc((m->in.n ? m->in.n : 1) * sizeof(*count))))
		return lp_seterr(LP_ENOMEM, "out of memory");
	if ((err = lp_sd_span_counts(s, m->in.n, count)) >= 0)
		for (size_t i = 0; i < m->in.n; i++)
			if (isfinite(m->sd[i]) && m->sd[i] > 0) {
				num[check_bin(m->sd[i])] += count[i];
				den[check_bin(m->sd[i])] += rate * m->sd[i];
			}
	free(count);
	return err < 0 ? err : 0;
}

/* The ratios at lines[0, n) with each estimate scaled by f of its
 * half-octave. 0 or LP_ENOMEM. */
static int scaled_curve(const struct lp_statstack *m, const double *f, const double *lines, size_t n, double *out)
{
	double *sd = malloc((m->in.n ? m->in.n : 1) * sizeof(*sd));
	size_t k = 0;

	if (!sd)
		return lp_seterr(LP_ENOMEM, "out of memory");
	for (size_t i = 0; i < m->in.n; i++)
		if (isfinite(m->sd[i]))
			sd[k++] = m->sd[i] > 0 ? m->sd[i] * f[check_bin(m->sd[i])] : 0;
	lp_sort_double(sd, k);
	for (size_t j = 0; j < n; j++)
		out[j] = sorted_ratio(m, sd, k, lines[j]);
	free(sd);
	return 0;
}

/* The model's own ratios at lines[0, n): what a profile without anything
 * to check (no estimates, or every access sampled) is checked to. */
static void model_curve(const struct lp_statstack *m, const double *lines, size_t n, double *out)
{
	for (size_t j = 0; j < n; j++)
		out[j] = lp_statstack_miss_ratio(m, lines[j]);
}

int lp_statstack_checked_curve(const struct lp_statstack *m, const double *lines, size_t n, double *out)
{
	double num[SS_CHECK_BINS] = { 0 }, den[SS_CHECK_BINS] = { 0 }, f[SS_CHECK_BINS];
	int err = span_bins(m, num, den);

	if (err < 0)
		return err;
	if (err) {
		model_curve(m, lines, n, out);
		return 0;
	}
	for (int b = 0; b < SS_CHECK_BINS; b++)
		f[b] = check_factor(num, den, b);
	return scaled_curve(m, f, lines, n, out);
}

int lp_statstack_checked_band(const struct lp_statstack *m, const double *lines, size_t n, double *lo, double *hi)
{
	double num[SS_CHECK_BINS] = { 0 }, den[SS_CHECK_BINS] = { 0 }, flo[SS_CHECK_BINS], fhi[SS_CHECK_BINS];
	int err = span_bins(m, num, den);

	if (err < 0)
		return err;
	if (err) {
		model_curve(m, lines, n, lo);
		model_curve(m, lines, n, hi);
		return 0;
	}
	for (int b = 0; b < SS_CHECK_BINS; b++)
		check_band(num, den, b, &flo[b], &fhi[b]);
	if ((err = scaled_curve(m, flo, lines, n, lo)) < 0)
		return err;
	return scaled_curve(m, fhi, lines, n, hi);
}

double lp_binomial_miss(double sd, uint64_t sets, uint64_t ways)
{
	double D = floor(sd), p, hit = 0, lgD;

	if (!(sets >= 1) || ways == 0)
		return 1;
	if (D < (double)ways)
		return 0; /* fewer than `ways` other lines in all: always a hit */
	if (sets == 1)
		return 1; /* the fully associative cut (the sum below would
			   * multiply inf binomial coefficients by 0^k) */
	p = 1.0 / (double)sets;
	/* P(fewer than `ways` of the D lines in our set) = sum_{i<ways}
	 * C(D,i) p^i q^(D-i), each term in logs (C(D,i) alone overflows),
	 * the next from the last: term(i+1) = term(i) (D-i)/(i+1) p/q. One
	 * log and one exp a term instead of three lgamma(): the set-
	 * associative ratio is evaluated once per distinct D of every sample,
	 * for every resample of the intervals. Equal to the lgamma() form to
	 * 1e-10 (test_binomial). */
	lgD = D * log1p(-p);
	double lr = log(p) - log1p(-p);
	for (uint64_t i = 0; i < ways; i++) {
		double di = (double)i, t = exp(lgD);
		hit += t;
		/* past the mode the terms only shrink: stop when negligible */
		if (di > D * p && t < 1e-17 * hit)
			break;
		lgD += log((D - di) / (di + 1)) + lr;
	}
	return hit >= 1 ? 0 : 1 - hit;
}

double lp_statstack_binomial_miss_ratio(const struct lp_statstack *m, uint64_t sets, uint64_t ways)
{
	double misses = 0, last_d = -1, last_p = 0;

	for (size_t i = 0; i < m->nrd; i++) {
		double d = floor(m->sd_sorted[i]);
		if (d != last_d) { /* sorted: one evaluation per distinct D */
			last_d = d;
			last_p = lp_binomial_miss(d, sets, ways);
		}
		misses += last_p;
	}
	return ratio(m, misses);
}

/* The placement, built when first asked for (0, or a negative LP_E*). */
static int place_of(const struct lp_statstack *m)
{
	struct lp_statstack *mm = (struct lp_statstack *)m;

	if (m->place || !m->has_sd)
		return 0;
	return lp_sa_place_new(&mm->place, lp_profile_line_first(m->in.p, m->in.first), m->in.n, m->sd,
			       (uint64_t)m->line);
}

int lp_statstack_share_layout(struct lp_statstack *m, const struct lp_statstack *from)
{
	int err;

	if (m->place || !m->has_sd || !from->has_sd || m->line != from->line)
		return 0;
	if ((err = place_of(from)) < 0)
		return err;
	if (!from->place)
		return 0;
	return lp_sa_place_assign(&m->place, from->place, lp_profile_line_first(m->in.p, m->in.first), m->in.n,
				  m->sd);
}

int lp_statstack_sample_miss(const struct lp_statstack *m, uint64_t sets, uint64_t ways,
			     double *prob)
{
	int err;

	if (sets > 1 && (err = place_of(m)) < 0)
		return err;
	for (size_t i = 0; i < m->in.n; i++) {
		uint64_t r = m->in.p->samples[m->in.first + i].reuse;
		if (r == LP_REUSE_DANGLING)
			prob[i] = m->in.include_cold ? 1 : 0;
		else if (sets == 1 || !m->place) /* the cut; equal to the binomial at s = 1 (tested) */
			prob[i] = sets == 1 ? m->sd[i] >= (double)ways : lp_binomial_miss(m->sd[i], sets, ways);
	}
	if (sets > 1 && m->place && (err = lp_sa_place_miss(m->place, m->sd, sets, ways, prob)) < 0)
		return err;
	return 0;
}

int lp_statstack_crowding(const struct lp_statstack *m, uint64_t sets, double lines, double evict, int fits,
			  double *rho)
{
	int err;

	if (sets > 1 && (err = place_of(m)) < 0)
		return err;
	if (sets > 1 && m->place)
		return lp_sa_place_crowding(m->place, m->sd, sets, lines, evict, fits, rho);
	for (size_t i = 0; i < m->in.n; i++)
		rho[i] = 1;
	return 0;
}

double lp_statstack_setassoc_miss_ratio(const struct lp_statstack *m, uint64_t sets, uint64_t ways)
{
	double *prob, misses = 0;

	if (sets > 1 && place_of(m) < 0)
		return NAN;
	if (sets <= 1 || !m->place)
		return lp_statstack_binomial_miss_ratio(m, sets, ways);
	if (!(prob = malloc((m->in.n ? m->in.n : 1) * sizeof(*prob))))
		return NAN;
	if (lp_statstack_sample_miss(m, sets, ways, prob) < 0) {
		free(prob);
		return NAN;
	}
	for (size_t i = 0; i < m->in.n; i++)
		if (m->in.p->samples[m->in.first + i].reuse != LP_REUSE_DANGLING)
			misses += prob[i];
	free(prob);
	return ratio(m, misses);
}

size_t lp_statstack_sa_groups(const struct lp_statstack *m)
{
	return place_of(m) < 0 ? 0 : lp_sa_place_groups(m->place);
}

void lp_statstack_sa_group(const struct lp_statstack *m, size_t g, struct lp_sa_group_info *out)
{
	lp_sa_place_group(m->place, g, out);
}

/* Only reuses over `ways` to LP_SA_UNSEEN_SPAN ways lines: a longer one
 * would need more than a quarter of its lines in its own set to miss, a
 * crowding no layout of whole arrays gives (with reuses of every length
 * in, covariance at 1e-4 read +95 points at every geometry). */
double lp_statstack_setassoc_unseen(const struct lp_statstack *m, uint64_t sets, uint64_t ways,
				    const double *prob)
{
	double gap = 0;

	if (sets <= 1)
		return 0;
	if (place_of(m) < 0)
		return NAN;
	if (!m->place) /* no samples: nothing unseen to count */
		return 0;
	for (size_t i = 0; i < m->in.n; i++) {
		double D = floor(m->sd[i] + 0.5);
		if (lp_sa_place_unseen(m->place, i) && D >= (double)ways &&
		    (D < LP_SA_UNSEEN_SPAN * (double)ways || (D + 1) / lp_sa_place_aligned_sets(m->place, i, sets) >= (double)ways))
			gap += 1 - prob[i];
	}
	return ratio(m, gap) - (m->in.include_cold ? ratio(m, 0) : 0);
}
