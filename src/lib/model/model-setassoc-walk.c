/* Set-associative LRU misses of reuses whose lines are, in part, a strided
 * walk: the one placement model of the library. `report` and the
 * set-associative ratios of StatStack give it the walks they read from a
 * profile's samples (model-setassoc.c), `model predict --strided` those of
 * its reference groups (src/lib/prediction). docs/models.md,
 * "Set-associative placement".
 *
 * Assumptions:
 * - A reuse at stack distance D of a line that a walk of stride `stride`
 *   bytes visits (walks of `lines` distinct lines): m of the D other lines
 *   and the reused one are a window of m consecutive lines of the walk
 *   (m given per reuse, or by default min(D + 1, lines)), and the
 *   r = D + 1 - m others are placed at random (each into each set with
 *   chance 1/s, independently: the binomial model of Marin &
 *   Mellor-Crummey, section 5.2). The reused line is any of the window's
 *   m lines with equal chance.
 * - The walk's k-th line is floor((x0 + k stride) / B); a stride below one
 *   line walks consecutive lines. x0 within a line is unknown: the result
 *   is averaged over it exactly (with stride = B p / q in lowest terms,
 *   only q offsets x0 = i B / q differ).
 * - LRU sets: the reuse misses when its set holds at least `ways` of the D
 *   others, that is when c - 1 + X >= ways, c the window's lines in the
 *   reused line's set (itself included) and X ~ Binomial(r, 1/s).
 * - Sets are line % s, for any s (not only powers of two).
 * Special cases (tests/unit/model, tests/unit/prediction): a pure strided
 * sweep (r = 0) is exact; no walk (lines <= 1: an irregular group) is the
 * binomial model; one set is the fully-associative cut.
 */
#include <locprof/model.h>

#include "common/error.h"
#include "common/htab.h"
#include "common/lgamma.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define XPLACE_MAX_OFFSETS 64
#define XPLACE_MAX_LATTICE (1u << 20) /* lines of a walk and its moves */

uint64_t lp_sa_gcd(uint64_t a, uint64_t b)
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
	double cum = 0, lp = -log(s), lq = log1p(-1 / s), lg = lp_log_factorial(r);

	t[0] = 1;
	for (int k = 1; k <= K; k++) {
		double i = k - 1;
		if (i > r) {
			t[k] = 0;
			continue;
		}
		cum += exp(lg - lp_log_factorial(i) - lp_log_factorial(r - i) + i * lp + (r - i) * lq);
		t[k] = cum >= 1 ? 0 : 1 - cum;
	}
}

struct req {
	double n; /* the reuse's lines: D + 1 */
	double m; /* of them on the walk (1..n) */
	double R; /* the walk's lines they are drawn from (m..) */
	size_t idx;
};

/* By region, then walk lines, then lines: equal requests are adjacent. */
static int cmp_req(const void *a, const void *b)
{
	const struct req *x = a, *y = b;

	if (x->R != y->R)
		return x->R < y->R ? -1 : 1;
	if (x->m != y->m)
		return x->m < y->m ? -1 : 1;
	return x->n < y->n ? -1 : x->n > y->n;
}

/* Equal requests (the same n, m and R: reuses of one stack distance,
 * and the copies of a sample in a resampled profile) have the same miss
 * chance: rq (sorted) is cut to its distinct requests, each request's idx
 * renumbered to its place there, and map[i] says which one the i-th
 * reuse is. Returns the number of distinct requests. */
static size_t distinct_requests(struct req *rq, size_t n, size_t *map)
{
	size_t u = 0;

	for (size_t k = 0; k < n; k++) {
		size_t orig = rq[k].idx;
		if (!u || rq[k].R != rq[u - 1].R || rq[k].m != rq[u - 1].m || rq[k].n != rq[u - 1].n) {
			rq[u] = rq[k];
			rq[u].idx = u;
			u++;
		}
		map[orig] = u - 1;
	}
	return u;
}

/* bc[j] = P(X <= j) for X ~ Binomial(r, 1/s), j < ways (ways <= 65). */
static void binom_cdf(double r, double s, uint64_t ways, double *bc)
{
	double p = 1 / s, b = exp(r * log1p(-p));

	for (uint64_t j = 0; j < ways; j++) {
		bc[j] = (j ? bc[j - 1] : 0) + b;
		b *= (r - (double)j) / ((double)j + 1) * p / (1 - p);
		if (r - (double)j <= 0)
			b = 0;
	}
}

/* P(H + X >= ways) for H ~ Hypergeometric(N items, Kc marked, d drawn) and
 * X ~ Binomial(r, 1/s), bc X's cdf (binom_cdf()): the miss chance of a
 * reuse whose walk lines are d of the N others of its region, Kc of which
 * in its set, and r more lines at random. The hypergeometric pmf by its
 * ratios (this runs for every sampled reuse of a sparse walk; the callers
 * share one bc among the calls of one reuse). */
static double sparse_tail(double N, double Kc, double d, const double *bc, uint64_t ways)
{
	double hp, hit = 0;
	double lo = d - (N - Kc) > 0 ? d - (N - Kc) : 0, hi = Kc < d ? Kc : d;

	if (lo >= (double)ways)
		return 1;
	/* P(H = 0) = C(N - Kc, d) / C(N, d) = prod_{j < Kc} (N - d - j) / (N - j):
	 * for the few marked lines of a set, Kc products instead of nine
	 * log-factorials (this runs for every distinct reuse of every resample) */
	if (lo == 0 && Kc <= 64) {
		hp = 1;
		for (double j = 0; j < Kc; j++)
			hp *= (N - d - j) / (N - j);
	} else
		hp = exp(lp_log_factorial(Kc) - lp_log_factorial(lo) - lp_log_factorial(Kc - lo) +
			 lp_log_factorial(N - Kc) - lp_log_factorial(d - lo) - lp_log_factorial(N - Kc - d + lo) -
			 lp_log_factorial(N) + lp_log_factorial(d) + lp_log_factorial(N - d));
	for (double i = lo; i <= hi && i < (double)ways; i++) {
		hit += hp * bc[ways - 1 - (uint64_t)i];
		hp *= (Kc - i) * (d - i) / ((i + 1) * (N - Kc - d + i + 1));
	}
	return hit >= 1 ? 0 : 1 - hit;
}

/* Lines of the walk seen (with an outer stride, columns overlap): 1 if
 * line is new, 0 if seen, or a negative LP_E*. The table is allocated at
 * the first line. */
static int lineset_add(struct lp_htab *h, uint64_t line)
{
	int isnew;

	if ((!h->s && lp_htab_init(h, 1024) < 0) || lp_htab_reserve(h, 1) < 0)
		return lp_seterr(LP_ENOMEM, "out of memory");
	lp_htab_get(h, line, &isnew);
	return isnew;
}

struct occ {
	uint64_t sets;
	size_t K;
	uint32_t *occ; /* lines per set */
	uint64_t hc[66]; /* lines in sets holding c of them (K: K or more) */
	uint64_t lines;
};

static void occ_add(struct occ *o, uint64_t line)
{
	uint64_t s = line % o->sets;
	uint32_t c0 = o->occ[s]++;

	if (c0 >= o->K) {
		o->hc[o->K]++;
	} else {
		o->hc[c0] -= c0;
		o->hc[c0 + 1 > o->K ? o->K : c0 + 1] += c0 + 1;
	}
	o->lines++;
}

/* The miss chance of a reuse whose `n` lines are `m` of the `wn` of the
 * window (their classes hc) and n - m at random. */
static double window_miss(const uint64_t *hc, uint64_t wn, double m, double n, double sets, size_t K)
{
	double t[66], p = 0, rest = n - (m < (double)wn ? m : (double)wn);

	if (m < (double)wn) { /* a sparse window: m - 1 of its wn - 1 others */
		binom_cdf(rest, sets, K - 1, t);
		for (size_t c = 1; c <= K; c++)
			if (hc[c])
				p += (double)hc[c] / (double)wn *
				     sparse_tail((double)wn - 1, (double)c - 1, m - 1, t, K - 1);
		return p;
	}
	binom_tails(rest > 0 ? rest : 0, sets, (int)K, t);
	for (size_t c = 1; c <= K; c++)
		p += (double)hc[c] / (double)wn * t[K - c]; /* X >= ways + 1 - c */
	return p;
}

/* The same for a sparse window of R lines beyond the enumeration, spread
 * evenly over the `covered` sets the walk visits. */
static double region_miss(double R, double m, double n, double covered, double sets, uint64_t ways)
{
	double c = floor(R / covered), up = R - c * covered; /* sets with c + 1 */
	double pu = (c + 1) * up / R, p = 0, bc[65];

	binom_cdf(n - m, sets, ways, bc);
	if (pu > 0)
		p += pu * sparse_tail(R - 1, c, m - 1, bc, ways);
	if (pu < 1)
		p += (1 - pu) * sparse_tail(R - 1, c - 1, m - 1, bc, ways);
	return p;
}

/* The requests of the nd reuses, in order, equal ones once (map: each
 * reuse's request); returns how many. */
static size_t build_requests(struct req *rq, const double *D, const double *walk, const double *region,
			     size_t nd, size_t *map)
{
	size_t nreq = 0;

	for (size_t i = 0; i < nd; i++) {
		double n = floor(D[i] + 0.5) + 1, m, R;
		n = n >= 1 ? n : 1;
		m = walk ? floor(walk[i] + 0.5) : n;
		m = m < 1 ? 1 : m > n ? n : m;
		R = region ? floor(fmin(region[i], 1e15) + 0.5) : m;
		rq[nreq++] = (struct req){ n, m, R > m ? R : m, i };
	}
	/* callers that pass their reuses by distance (model-setassoc.c)
	 * give requests in order already: only the check is paid then */
	for (size_t k = 1; k < nreq; k++)
		if (cmp_req(&rq[k - 1], &rq[k]) > 0) {
			qsort(rq, nreq, sizeof(*rq), cmp_req);
			break;
		}
	return distinct_requests(rq, nreq, map);
}

int lp_sa_walk_miss(const struct lp_sa_walk *w, uint64_t sets, uint64_t ways, uint64_t line, const double *D,
		    const double *walk, const double *region, size_t nd, double *miss)
{
	uint64_t stride, s1, q, g, T, cap, col, span, lcap;
	size_t nreq = 0, K, noff, offstep, *map = NULL;
	struct req *rq = NULL;
	double *um = NULL; /* the miss chance of each distinct request */
	struct occ o = { 0 };
	struct lp_htab ls = { 0 };
	double wlen;
	int rc = 0;

	if (!nd)
		return 0;
	if (sets <= 1) {
		for (size_t i = 0; i < nd; i++)
			miss[i] = D[i] >= (double)ways ? 1 : 0;
		return 0;
	}
	wlen = w ? floor(w->lines) : 0;
	if (!w || !(wlen >= 2) || !(w->stride > 0) || !line || ways + 1 > 64) {
		for (size_t i = 0; i < nd; i++)
			miss[i] = lp_binomial_miss(D[i], sets, ways);
		return 0;
	}
	/* the walk's k-th line: (x0 + k stride) / line, a stride below the
	 * line read as one line (consecutive lines); positions modulo
	 * sets * line repeat after T lines */
	stride = w->stride < (double)line ? line : (uint64_t)llround(w->stride);
	/* (an outer stride below the line moves the walk to the next lines
	 * after line / stride1 steps, which add no line before: whole lines,
	 * like the walk's own stride) */
	s1 = w->stride1 >= 1 ? (uint64_t)llround(w->stride1) : 0;
	if (s1 && s1 < line)
		s1 = line;
	span = sets * line;
	g = lp_sa_gcd(stride, line);
	if (s1)
		g = lp_sa_gcd(g, s1);
	q = line / g;
	T = span / lp_sa_gcd(stride, span);
	K = ways + 1; /* occupancy classes 1..K; K: more than the ways */
	/* every set the walk visits gets a line per period: after (ways + 2)
	 * periods all are over-full, every reuse in the window misses */
	cap = (ways + 2) * T;
	col = wlen < 1e18 ? (uint64_t)wlen : (uint64_t)1e18;
	/* moved walks are followed up to 8 (ways + 1) lines per set: a reuse
	 * over more lines hits with a chance under 1/8 whatever the placement
	 * (the lines in sets of at most `ways` are at most sets * ways), and
	 * beyond that the last walks that fit and the rest at random say
	 * nearly always miss */
	lcap = 8 * sets * (ways + 1);
	if (lcap > XPLACE_MAX_LATTICE)
		lcap = XPLACE_MAX_LATTICE;
	if (!(rq = malloc(nd * sizeof(*rq))) || !(o.occ = malloc(sets * sizeof(*o.occ))) ||
	    !(map = malloc(nd * sizeof(*map))) || !(um = calloc(nd, sizeof(*um)))) {
		rc = lp_seterr(LP_ENOMEM, "out of memory");
		goto out;
	}
	o.sets = sets;
	o.K = K;
	nreq = build_requests(rq, D, walk, region, nd, map);
	/* an outer stride costs a set of lines per start: fewer starts */
	noff = q <= (s1 ? 16u : XPLACE_MAX_OFFSETS) ? (size_t)q : (s1 ? 16u : XPLACE_MAX_OFFSETS);
	offstep = (size_t)(q / noff);
	for (size_t off = 0; off < noff && !rc; off++) {
		uint64_t x0 = (uint64_t)off * offstep * g, hcprev[66], lprev;
		size_t r = 0;
		int capped = 0;
		memset(o.occ, 0, sets * sizeof(*o.occ));
		memset(o.hc, 0, sizeof(o.hc));
		o.lines = 0;
		lp_htab_release(&ls); /* each start walks its own lines */
		/* the walk itself: a window of n of its lines */
		for (uint64_t k = 0;; k++) {
			while (r < nreq && rq[r].R <= (double)o.lines) {
				um[rq[r].idx] += window_miss(o.hc, o.lines, rq[r].m, rq[r].n, (double)sets, K) / (double)noff;
				r++;
			}
			if (r == nreq || k == col)
				break;
			if (k >= cap) {
				capped = 1;
				break;
			}
			uint64_t l = (x0 + k * stride) / line;
			if (s1 && (rc = lineset_add(&ls, l)) < 0)
				goto out;
			rc = 0;
			occ_add(&o, l);
		}
		if (capped) {
			/* every set the window visits holds more than `ways`: a
			 * dense window misses, a sparse one draws from them */
			double covered = 0;
			for (uint64_t k = 0; k < sets; k++)
				covered += o.occ[k] > 0;
			for (; r < nreq; r++)
				um[rq[r].idx] += (rq[r].m >= rq[r].R ? 1.0
								      : region_miss(rq[r].R, rq[r].m, rq[r].n, covered,
										    (double)sets, ways)) /
						   (double)noff;
			continue;
		}
		/* beyond one walk: with an outer stride, whole walks moved by it
		 * as long as their lines fit in the reuse (the window is the walks
		 * that fit, the rest at random); without, the walk and the rest at
		 * random */
		memcpy(hcprev, o.hc, sizeof(hcprev));
		lprev = o.lines;
		for (uint64_t k1 = 1; s1 && r < nreq && o.lines < lcap; k1++) {
			for (uint64_t k = 0; k < col; k++) {
				uint64_t l = (x0 + k * stride + k1 * s1) / line;
				if ((rc = lineset_add(&ls, l)) < 0)
					goto out;
				if (rc)
					occ_add(&o, l);
			}
			rc = 0;
			while (r < nreq && rq[r].n < (double)o.lines) {
				um[rq[r].idx] += window_miss(hcprev, lprev, rq[r].m, rq[r].n, (double)sets, K) / (double)noff;
				r++;
			}
			memcpy(hcprev, o.hc, sizeof(hcprev));
			lprev = o.lines;
		}
		for (; r < nreq; r++)
			um[rq[r].idx] += window_miss(hcprev, lprev, rq[r].m, rq[r].n, (double)sets, K) / (double)noff;
	}
	for (size_t i = 0; i < nd; i++)
		miss[i] = um[map[i]] > 1 ? 1 : um[map[i]] < 0 ? 0 : um[map[i]];
out:
	free(rq);
	free(map);
	free(um);
	free(o.occ);
	lp_htab_release(&ls);
	return rc;
}
