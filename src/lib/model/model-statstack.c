/* StatStack: LRU miss ratios from sampled reuse distances (Eklöv &
 * Hagersten 2010), and set-associative LRU by the binomial model of Marin &
 * Mellor-Crummey (2005, section 5.2).
 *
 * Assumptions:
 * - The reuse-distance distribution is the same everywhere in the run
 *   (one global distribution; phases blur the estimate).
 * - Derivation. A reuse of distance d spans accesses t+1 .. t+d. Its stack
 *   distance is the number of distinct lines among them, i.e. the number of
 *   them that are the LAST access to their line inside the span: the access
 *   m positions before the end (m = 0 .. d-1) is one iff its own forward
 *   reuse distance is >= m. None of them touches the reused line. Taking
 *   each intervening access's reuse distance from the sampled distribution:
 *       E[SD(d)] = sum_{m=0}^{d-1} P(RD >= m)
 *                = d - (1/S) sum_{samples s with rd_s <= d-2} (d - 1 - rd_s)
 *   where S counts all samples, dangling ones as infinite reuse (they are
 *   last accesses, so distinct lines). With the finite reuse distances
 *   sorted and prefix-summed this is a binary search: O(S log S) for all.
 * - A reuse misses in a fully associative LRU cache of L lines iff its
 *   stack distance >= L; the expected value stands in for the distribution
 *   of stack distances (error where that distribution is wide around L).
 * - Set-associative: the D = floor(E[SD]) distinct lines map to sets
 *   independently and uniformly; the access hits iff fewer than `ways` of
 *   them map to its set. Real address layouts (strides of a power of two)
 *   violate this; the model cannot see conflict pathologies.
 * - Dangling samples are cold misses: excluded by default, else misses.
 */
#include <locprof/model.h>

#include "common/error.h"

#include <math.h>
#include <stdlib.h>

struct lp_statstack {
	const struct lp_profile *p;
	size_t first, n;
	int include_cold;
	double S;        /* all samples */
	double dangling; /* dangling samples */
	uint64_t *rd;    /* finite reuse distances, sorted */
	double *prefix;  /* prefix[i] = sum rd[0..i) */
	size_t nrd;
	double *sd_sorted; /* expected stack distances of the finite samples, sorted */
};

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

double lp_statstack_expected_sd(const struct lp_statstack *m, uint64_t d)
{
	size_t lo = 0, hi = m->nrd;

	if (d == 0)
		return 0;
	/* c = number of rd <= d - 2 */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (m->rd[mid] + 2 <= d)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (double)d - ((double)lo * (double)(d - 1) - m->prefix[lo]) / m->S;
}

int lp_statstack_new(struct lp_statstack **out, const struct lp_profile *p, unsigned li,
		     int include_cold)
{
	struct lp_statstack *m;

	if (li >= p->n_line_sizes)
		return lp_seterr(LP_EINVAL, "no line size %u in the profile", li);
	if (!(m = calloc(1, sizeof(*m))))
		return lp_seterr(LP_ENOMEM, "out of memory");
	m->p = p;
	m->include_cold = include_cold;
	lp_profile_line_samples(p, li, &m->first, &m->n);
	m->S = (double)m->n;
	m->rd = malloc((m->n ? m->n : 1) * sizeof(*m->rd));
	m->prefix = malloc((m->n + 1) * sizeof(*m->prefix));
	m->sd_sorted = malloc((m->n ? m->n : 1) * sizeof(*m->sd_sorted));
	if (!m->rd || !m->prefix || !m->sd_sorted) {
		lp_statstack_free(m);
		return lp_seterr(LP_ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < m->n; i++) {
		uint64_t r = p->samples[m->first + i].reuse;
		if (r == LP_REUSE_DANGLING)
			m->dangling++;
		else
			m->rd[m->nrd++] = r;
	}
	qsort(m->rd, m->nrd, sizeof(*m->rd), cmp_u64);
	m->prefix[0] = 0;
	for (size_t i = 0; i < m->nrd; i++)
		m->prefix[i + 1] = m->prefix[i] + (double)m->rd[i];
	/* rd is sorted and E[SD] is increasing in d: the SDs come out sorted,
	 * but sort anyway in case rounding ever breaks ties the wrong way */
	for (size_t i = 0; i < m->nrd; i++)
		m->sd_sorted[i] = lp_statstack_expected_sd(m, m->rd[i]);
	qsort(m->sd_sorted, m->nrd, sizeof(*m->sd_sorted), cmp_double);
	*out = m;
	return 0;
}

void lp_statstack_free(struct lp_statstack *m)
{
	if (!m)
		return;
	free(m->rd);
	free(m->prefix);
	free(m->sd_sorted);
	free(m);
}

static double ratio(const struct lp_statstack *m, double misses)
{
	double den = (double)m->nrd + (m->include_cold ? m->dangling : 0);

	if (m->include_cold)
		misses += m->dangling;
	return den > 0 ? misses / den : NAN;
}

double lp_statstack_miss_ratio(const struct lp_statstack *m, double lines)
{
	size_t lo = 0, hi = m->nrd;

	/* first SD >= lines: the misses are from there on */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (m->sd_sorted[mid] < lines)
			lo = mid + 1;
		else
			hi = mid;
	}
	return ratio(m, (double)(m->nrd - lo));
}

double lp_binomial_miss(double sd, uint64_t sets, uint64_t ways)
{
	double D = floor(sd), p, q, hit = 0, lgD;

	if (!(sets >= 1) || ways == 0)
		return 1;
	if (D < (double)ways)
		return 0; /* fewer than `ways` other lines in all: always a hit */
	p = 1.0 / (double)sets;
	q = 1.0 - p;
	lgD = lgamma(D + 1);
	/* P(fewer than `ways` of the D lines in our set) = sum_{i<ways}
	 * C(D,i) p^i q^(D-i); pow(0, 0) = 1 keeps sets = 1 exact (the cut) */
	for (uint64_t i = 0; i < ways; i++) {
		double di = (double)i;
		/* in logarithms: C(D,i) alone overflows a double for large D
		 * (inf * 0 = NaN at s = 1); log(0) = -inf gives exp() = 0 */
		double t = exp(lgD - lgamma(di + 1) - lgamma(D - di + 1) + (di > 0 ? di * log(p) : 0) +
			       (D - di > 0 ? (D - di) * log(q) : 0));
		hit += t;
	}
	return hit >= 1 ? 0 : 1 - hit;
}

double lp_statstack_setassoc_miss_ratio(const struct lp_statstack *m, uint64_t sets, uint64_t ways)
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

int lp_statstack_sample_miss(const struct lp_statstack *m, uint64_t sets, uint64_t ways,
			     double *prob)
{
	for (size_t i = 0; i < m->n; i++) {
		uint64_t r = m->p->samples[m->first + i].reuse;
		if (r == LP_REUSE_DANGLING)
			prob[i] = m->include_cold ? 1 : 0;
		else if (sets == 1) /* the cut; equal to the binomial at s = 1 (tested) */
			prob[i] = lp_statstack_expected_sd(m, r) >= (double)ways;
		else
			prob[i] = lp_binomial_miss(lp_statstack_expected_sd(m, r), sets, ways);
	}
	return 0;
}
