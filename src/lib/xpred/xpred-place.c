/* Set-associative misses of strided walks, computed from the walk's actual
 * placement in the sets at the predicted size (docs/prediction.md,
 * "Strided placement").
 *
 * Assumptions:
 * - A reuse at stack distance D of a line of a group that walks memory with
 *   a stride of `stride` bytes (combined over the group's pcs) in walks of
 *   `lines` distinct lines: the D other lines and the reused one are a
 *   window of n = min(D + 1, lines) consecutive lines of the walk, plus
 *   r = D + 1 - n other lines placed at random (each into each set with
 *   chance 1/s, independently: the binomial model of section 5.2). The
 *   reused line is any of the window's n lines with equal chance.
 * - The walk's k-th line is floor((x0 + k stride) / B); a stride below one
 *   line walks consecutive lines. x0 within a line is unknown: the result
 *   is averaged over it exactly (with stride = B p / q in lowest terms,
 *   only q offsets x0 = i B / q differ).
 * - LRU sets: the reuse misses when its set holds at least `ways` of the D
 *   others, that is when c - 1 + X >= ways, c the window's lines in the
 *   reused line's set (itself included) and X ~ Binomial(r, 1/s).
 * Special cases (tests/unit/xpred): a pure strided sweep (r = 0) is exact;
 * no walk (lines <= 1: an irregular group) is the binomial model; one set
 * is the fully-associative cut.
 */
#include "xpred/xpred-internal.h"

#include "common/error.h"

#include <locprof/model.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define XPLACE_MAX_OFFSETS 64

static uint64_t gcd64(uint64_t a, uint64_t b)
{
	while (b) {
		uint64_t t = a % b;
		a = b;
		b = t;
	}
	return a;
}

/* P(X >= k) for X ~ Binomial(r, 1/s), k = 0..K (t[0] = 1). */
static void binom_tails(double r, double s, int K, double *t)
{
	double cum = 0, lp = -log(s), lq = log1p(-1 / s), lg = lgamma(r + 1);

	t[0] = 1;
	for (int k = 1; k <= K; k++) {
		double i = k - 1;
		if (i > r) {
			t[k] = 0;
			continue;
		}
		cum += exp(lg - lgamma(i + 1) - lgamma(r - i + 1) + i * lp + (r - i) * lq);
		t[k] = cum >= 1 ? 0 : 1 - cum;
	}
}

struct req {
	double n; /* window lines */
	size_t idx;
};

static int cmp_req(const void *a, const void *b)
{
	const struct req *x = a, *y = b;
	return x->n < y->n ? -1 : x->n > y->n;
}

int xplace_miss(const struct xplace_walk *w, uint64_t sets, uint64_t ways, uint64_t line, const double *D,
		size_t nd, double *miss)
{
	uint64_t stride, q, g, T, cap;
	size_t nreq = 0, K;
	struct req *rq = NULL;
	double *frac = NULL, walk;
	uint32_t *occ = NULL;
	uint64_t *hc = NULL;
	size_t noff, offstep;

	if (!nd)
		return 0;
	if (sets <= 1) {
		for (size_t i = 0; i < nd; i++)
			miss[i] = D[i] >= (double)ways ? 1 : 0;
		return 0;
	}
	walk = w ? floor(w->lines) : 0;
	if (!w || !(walk >= 2) || !(w->stride > 0) || !line) {
		for (size_t i = 0; i < nd; i++)
			miss[i] = lp_binomial_miss(D[i], sets, ways);
		return 0;
	}
	/* stride in lines = p / q; the walk repeats its set pattern after T
	 * lines: positions x0 + k stride modulo sets * line */
	stride = w->stride < (double)line ? line : (uint64_t)llround(w->stride);
	g = gcd64(stride, line);
	q = line / g;
	T = sets * line / gcd64(stride, sets * line);
	K = ways + 1; /* occupancy classes 1..K; K: more than the ways */
	/* every set the walk visits gets a line per period: after (ways + 1)
	 * periods all are over-full, every reuse in the window misses */
	cap = (ways + 2) * T;
	if (!(rq = malloc(nd * sizeof(*rq))) || !(frac = calloc(nd * (K + 1), sizeof(*frac))) ||
	    !(occ = malloc(sets * sizeof(*occ))) || !(hc = malloc((K + 1) * sizeof(*hc)))) {
		free(rq);
		free(frac);
		free(occ);
		return lp_seterr(LP_ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < nd; i++) {
		double n = floor(D[i] + 0.5) + 1;
		if (!(n >= 1))
			n = 1;
		if (n > walk)
			n = walk;
		rq[nreq++] = (struct req){ n, i };
	}
	qsort(rq, nreq, sizeof(*rq), cmp_req);
	noff = q <= XPLACE_MAX_OFFSETS ? (size_t)q : XPLACE_MAX_OFFSETS;
	offstep = (size_t)(q / noff);
	for (size_t o = 0; o < noff; o++) {
		uint64_t x = (uint64_t)o * offstep * g, k = 0; /* position modulo sets * line */
		uint64_t span = sets * line, step = stride % span;
		size_t r = 0;
		memset(occ, 0, sets * sizeof(*occ));
		memset(hc, 0, (K + 1) * sizeof(*hc));
		while (r < nreq) {
			if ((double)k >= rq[r].n || k >= cap) {
				double *f = &frac[rq[r].idx * (K + 1)];
				if ((double)k < rq[r].n) {
					f[K] += 1; /* beyond the cap: all over-full */
				} else {
					for (size_t c = 1; c <= K; c++)
						f[c] += (double)hc[c] / (double)k;
				}
				r++;
				continue;
			}
			uint64_t s = x / line % sets;
			uint32_t c0 = occ[s]++;
			if (c0 >= K) {
				hc[K]++;
			} else {
				hc[c0] -= c0;
				hc[c0 + 1 > K ? K : c0 + 1] += c0 + 1;
			}
			x += step;
			if (x >= span)
				x -= span;
			k++;
		}
	}
	for (size_t i = 0; i < nd; i++) {
		double n = floor(D[i] + 0.5) + 1, rest, t[64], p = 0;
		const double *f = &frac[i * (K + 1)];

		if (!(n >= 1))
			n = 1;
		if (n > walk)
			n = walk;
		rest = floor(D[i] + 0.5) + 1 - n;
		if (rest < 0)
			rest = 0;
		if (K + 1 <= 64) {
			binom_tails(rest, (double)sets, (int)K, t);
			for (size_t c = 1; c <= K; c++)
				p += f[c] / (double)noff * t[K - c]; /* X >= ways + 1 - c */
		} else {
			/* very high associativity: the binomial model */
			p = lp_binomial_miss(D[i], sets, ways);
		}
		miss[i] = p > 1 ? 1 : p < 0 ? 0 : p;
	}
	free(rq);
	free(frac);
	free(occ);
	free(hc);
	return 0;
}
