/* Phases: the run cut where its reuse distances change.
 *
 * Both models need the reuse-distance distribution "here": StatStack for
 * the accesses inside a reuse's span, StatCache for a window whose miss
 * ratio it takes as constant. A fixed window of 200 000 line accesses
 * holds about 20 samples at a rate of 1e-4: far too few to estimate a
 * distribution (StatStack on a stationary matrix multiply smeared its
 * cliff over a factor of two in cache size) while one window for the
 * whole run mixes the phases of a phased program (38 points of error on
 * `synth mix`). So the fixed windows are only the grain: walking them in
 * order, a window joins the current phase unless its reuse distances
 * differ from the phase's by a two-sample Kolmogorov-Smirnov test at the
 * 0.1 % level, when it starts a new phase. A stationary run is then one
 * phase (every sample estimates its distribution); a phase change shows
 * within a window or two, because a 20-sample window of a very different
 * distribution fails the test. As Vestberg notes (5.3), phases make
 * natural sampling windows.
 *
 * The test runs on histograms with quarter-octave bins (and one bin for
 * dangling samples), O(bins) per window; binning only makes it slightly
 * conservative.
 *
 * A change is found on the grid of windows, and up to a window late (a
 * window half old, half new may still pass the test), while a program's
 * phases need not start on the grid. A window that straddles a change
 * holds two behaviours, which StatCache takes as one miss ratio (on
 * `synth mix` at 1e-4 the cyclic phases' misses were charged to the
 * strided phases' short reuses: 4 points at 16 KiB). So each boundary is
 * then moved to the most likely change point within a window either
 * side of it: the split of the samples there that maximises their
 * likelihood under the histograms of the two phases away from the
 * boundary (refine()). */
#include "model/model-internal.h"

#include "common/error.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NBINS (4 * 64 + 2)
/* c(alpha) of the two-sample KS test: reject when D > c sqrt((n+m)/(nm));
 * 1.95 is alpha = 0.001, so that a run of 500 stationary windows is cut
 * about once by chance. */
#define KS_C 1.95

static unsigned bin_of(uint64_t rd)
{
	if (rd == LP_REUSE_DANGLING)
		return NBINS - 1;
	/* quarter octaves of rd + 1 */
	double b = floor(4 * log2((double)rd + 1));
	return b >= NBINS - 2 ? NBINS - 2 : (unsigned)b;
}

static int differ(const double *a, double na, const double *b, double nb)
{
	double ca = 0, cb = 0, d = 0;

	if (na <= 0 || nb <= 0)
		return 0;
	for (unsigned i = 0; i < NBINS; i++) {
		ca += a[i];
		cb += b[i];
		double x = fabs(ca / na - cb / nb);
		if (x > d)
			d = x;
	}
	return d > KS_C * sqrt((na + nb) / (na * nb));
}

/* octave bins (and one for dangling) for the likelihood of refine() */
#define RBINS 66

static unsigned rbin_of(uint64_t rd)
{
	if (rd == LP_REUSE_DANGLING)
		return RBINS - 1;
	unsigned b = (unsigned)floor(log2((double)rd + 1));
	return b >= RBINS - 2 ? RBINS - 2 : b;
}

/* log of the smoothed bin probabilities of the samples s[a, b) */
static void rhist(const struct lp_sample *s, size_t a, size_t b, double *lp)
{
	double n = (double)(b - a) + 0.5 * RBINS;

	for (unsigned k = 0; k < RBINS; k++)
		lp[k] = 0.5;
	for (size_t i = a; i < b; i++)
		lp[rbin_of(s[i].reuse)]++;
	for (unsigned k = 0; k < RBINS; k++)
		lp[k] = log(lp[k] / n);
}

size_t lp_model_first_at(const struct lp_sample *s, size_t n, uint64_t t)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (s[mid].time < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Move each boundary v[k] to the likeliest change point in
 * [v[k] - len, v[k] + len), given the samples of the two phases outside
 * that zone. A phase of one window between two others is most often the
 * window that straddles the change (its mixture differs from both): its
 * two boundaries become one, searched over the window and one either
 * side. Boundaries whose zone would reach a neighbour stay. Returns the
 * new number of phases (v keeps its last entry, the end of the run). */
static size_t refine(const struct lp_sample *s, size_t n, uint64_t *v, size_t np, uint64_t len)
{
	double pl[RBINS], pr[RBINS];
	size_t out = 1, k = 1;

	while (k < np) {
		int pair = k + 1 < np && v[k + 1] - v[k] <= len;
		uint64_t prev = v[out - 1], next = v[k + 1 + pair];
		uint64_t zl = v[k] - len, zr = v[k + pair] + len;
		size_t a, zi, zj, b;

		if (v[k] < len || zl <= prev || zr >= next)
			goto keep;
		a = lp_model_first_at(s, n, prev);
		zi = lp_model_first_at(s, n, zl);
		zj = lp_model_first_at(s, n, zr);
		b = lp_model_first_at(s, n, next);
		if (zi == a || zj == b || zj == zi)
			goto keep;
		rhist(s, a, zi, pl);
		rhist(s, zj, b, pr);
		/* score(j): samples zi..zi+j-1 left, the rest right */
		double sc = 0, best;
		size_t bj = 0;
		for (size_t i = zi; i < zj; i++)
			sc += pr[rbin_of(s[i].reuse)];
		best = sc;
		for (size_t i = zi; i < zj; i++) {
			unsigned q = rbin_of(s[i].reuse);
			sc += pl[q] - pr[q];
			if (sc > best) {
				best = sc;
				bj = i - zi + 1;
			}
		}
		if (bj == 0)
			v[out++] = zl;
		else if (zi + bj == zj)
			v[out++] = zr;
		else { /* halfway between the last left and the first right sample */
			uint64_t t0 = s[zi + bj - 1].time, t1 = s[zi + bj].time;
			v[out++] = t0 + 1 + (t1 - t0 - 1) / 2;
		}
		k += 1 + pair;
		continue;
keep:
		v[out++] = v[k++];
	}
	v[out] = v[np];
	return out;
}

int lp_model_phases(const struct lp_sample *s, size_t n, uint64_t total, uint64_t len,
		    uint64_t **bounds, size_t *nphases)
{
	size_t nbase, i = 0, np = 0;
	uint64_t *v;
	double *seg = calloc(NBINS, sizeof(double)), *win = calloc(NBINS, sizeof(double)), nseg = 0;

	if (!total)
		total = 1;
	/* the callers' grid, bounded (a hostile profile's counts) */
	len = lp_profile_window_length(total, len);
	nbase = (size_t)lp_profile_window_count(total, len);
	v = malloc((nbase + 1) * sizeof(*v));
	if (!seg || !win || !v) {
		free(seg);
		free(win);
		free(v);
		return lp_seterr(LP_ENOMEM, "out of memory");
	}
	v[np++] = 0;
	for (size_t bw = 0; bw < nbase && i < n; bw++) {
		/* An empty window passes the test and adds nothing: go straight
		 * to the next sample's, so that the cost follows the samples,
		 * not the windows (2^18 of them, O(bins) each, took 11 s under
		 * the fuzzer's instrumentation). */
		if (s[i].time / len > bw)
			bw = s[i].time / len < nbase ? (size_t)(s[i].time / len) : nbase - 1;
		uint64_t end = bw + 1 == nbase ? total : (uint64_t)(bw + 1) * len;
		double nwin = 0;
		memset(win, 0, NBINS * sizeof(double));
		for (; i < n && s[i].time < end; i++) {
			win[bin_of(s[i].reuse)]++;
			nwin++;
		}
		if (bw > 0 && differ(seg, nseg, win, nwin)) {
			v[np++] = (uint64_t)bw * len;
			memset(seg, 0, NBINS * sizeof(double));
			nseg = 0;
		}
		for (unsigned k = 0; k < NBINS; k++)
			seg[k] += win[k];
		nseg += nwin;
	}
	v[np] = total;
	np = refine(s, n, v, np, len);
	free(seg);
	free(win);
	*bounds = v;
	*nphases = np;
	return 0;
}
