/* Per-reference miss ratios from a profile's per-line-access predictions
 * (docs/models.md, "Per reference").
 *
 * The models predict misses per line access: a reference touching k lines
 * is k line accesses. Cachegrind and hardware counters count a reference
 * once, a miss when any of its lines misses. The two differ by the
 * overlap: the straddling references with two (or more) missed lines.
 *
 * Assumptions:
 *  - the run's extra line accesses S = A - R (line accesses less
 *    references, both exact in the profile) are the straddling references'
 *    lines after their first;
 *  - an extra line misses together with its reference's first line with
 *    the smaller of the two mean miss probabilities: that of the sampled
 *    first lines of straddling references (LP_PART_FIRST) and that of the
 *    sampled extra lines (LP_PART_NEXT). This is exact when the lines of
 *    a reference that are less likely to miss miss only with the others
 *    (an unaligned walk: the first line was just touched and hits, the
 *    next one misses: no overlap; random unaligned accesses: both miss:
 *    full overlap), and an upper bound of the overlap otherwise;
 *  - without sampled parts (a version-1 profile, a backend that does not
 *    mark them, or no straddling reference sampled) both means are taken
 *    to be the line-access ratio, so the per-reference ratio equals it.
 */
#include <locprof/model.h>

#include <math.h>

double lp_ref_miss_ratio(const struct lp_profile *p, unsigned li, const double *prob, double line_ratio)
{
	size_t first, n;
	double sum[2] = { 0, 0 }, q = line_ratio, r;
	uint64_t cnt[2] = { 0, 0 }, acc = p->accesses[li], refs = p->references;
	uint64_t extra = acc > refs ? acc - refs : 0;

	if (!refs || !extra)
		return line_ratio;
	lp_profile_line_samples(p, li, &first, &n);
	for (size_t i = 0; i < n; i++) {
		const struct lp_sample *s = &p->samples[first + i];
		if (s->part == LP_PART_FIRST || s->part == LP_PART_NEXT) {
			sum[s->part == LP_PART_NEXT] += prob[i];
			cnt[s->part == LP_PART_NEXT]++;
		}
	}
	if (cnt[0] && cnt[1])
		q = fmin(sum[0] / (double)cnt[0], sum[1] / (double)cnt[1]);
	r = (line_ratio * (double)acc - (double)extra * q) / (double)refs;
	return r < 0 ? 0 : r > 1 ? 1 : r;
}
