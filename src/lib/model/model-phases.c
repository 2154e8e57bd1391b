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
 * conservative. */
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

int lp_model_phases(const struct lp_sample *s, size_t n, uint64_t total, uint64_t len,
		    uint64_t **bounds, size_t *nphases)
{
	size_t nbase, i = 0, np = 0;
	uint64_t *v;
	double *seg = calloc(NBINS, sizeof(double)), *win = calloc(NBINS, sizeof(double)), nseg = 0;

	if (!total)
		total = 1;
	if (!len || len > total)
		len = total;
	nbase = (size_t)((total + len - 1) / len);
	v = malloc((nbase + 1) * sizeof(*v));
	if (!seg || !win || !v) {
		free(seg);
		free(win);
		free(v);
		return lp_seterr(LP_ENOMEM, "out of memory");
	}
	v[np++] = 0;
	for (size_t bw = 0; bw < nbase; bw++) {
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
	free(seg);
	free(win);
	*bounds = v;
	*nphases = np;
	return 0;
}
