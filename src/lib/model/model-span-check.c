/* StatStack's stack distances checked against the samples inside the
 * spans (docs/models.md, "Checking the stack distances").
 *
 * StatStack estimates a reuse's stack distance from the reuse distances
 * of the accesses of its phase, as if every access of the phase were
 * alike. The distinct lines of one span are also counted directly: they
 * are the span's accesses whose next access comes after the span, and a
 * sample y inside x's span (same thread, t_x < t_y <= t_x + rd_x) whose
 * own reuse leaves it is one of them, each access there sampled with
 * the profile's rate. So the samples inside the spans of the reuses
 * whose estimate is in one half-octave count, on average, rate times
 * those reuses' summed stack distances: an unbiased check of the
 * estimates, too noisy for one span (0.5 samples in a span of 500 lines
 * at 1e-3) but not for hundreds.
 *
 * Assumptions: the sampler picks each line access with the same
 * probability `rate`, independently of the samples before it (its
 * geometric gaps); a reuse's span holds only its own thread's accesses
 * (the private clock of each thread).
 * Cost: O(n log n) (a Fenwick tree over each thread's samples in time
 * order, queries by decreasing span end). */
#include "model/model-internal.h"

#include "common/error.h"
#include "common/sort.h"

#include <math.h>
#include <stdlib.h>

static void fen_add(double *f, size_t n, size_t i)
{
	for (i++; i <= n; i += i & -i)
		f[i - 1] += 1;
}

/* samples at positions [0, i) */
static double fen_sum(const double *f, size_t i)
{
	double s = 0;

	for (; i > 0; i -= i & -i)
		s += f[i - 1];
	return s;
}

/* The last access of a sample's span: time + reuse (the reuse itself is
 * the access after it); never for a dangling sample. */
static uint64_t span_end(const struct lp_sample *s)
{
	return s->reuse == LP_REUSE_DANGLING ? UINT64_MAX : s->time + s->reuse;
}

/* pos[0, n): indices of one thread's samples in time order. For each
 * finite sample among them, into count[index]: the samples strictly
 * after it up to its span's end whose own span leaves it. */
static int count_thread(const struct lp_sample *s, const size_t *pos, size_t n, double *count)
{
	struct lp_sort_pair *by_end = malloc((n ? n : 1) * sizeof(*by_end));
	double *fen = calloc(n ? n : 1, sizeof(*fen));
	size_t next = 0;
	int err = 0;

	if (!by_end || !fen) {
		err = lp_seterr(LP_ENOMEM, "out of memory");
		goto out;
	}
	/* by decreasing span end: ascending on the complement */
	for (size_t k = 0; k < n; k++)
		by_end[k] = (struct lp_sort_pair){ .key = UINT64_MAX - span_end(&s[pos[k]]), .val = k };
	if ((err = lp_sort_pairs(by_end, n)) < 0)
		goto out;
	/* queries in the same order: every sample whose span ends after
	 * this one's is in the tree before it is asked */
	for (size_t q = 0; q < n; q++) {
		size_t k = by_end[q].val, lo = k + 1, hi = n;
		const struct lp_sample *x = &s[pos[k]];
		uint64_t e = span_end(x);
		if (x->reuse == LP_REUSE_DANGLING)
			continue;
		while (next < n && UINT64_MAX - by_end[next].key > e)
			fen_add(fen, n, by_end[next++].val);
		/* the span's samples: positions (k, lo) with time <= e */
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (s[pos[mid]].time <= e)
				lo = mid + 1;
			else
				hi = mid;
		}
		count[pos[k]] = fen_sum(fen, lo) - fen_sum(fen, k + 1);
	}
out:
	free(by_end);
	free(fen);
	return err;
}

int lp_sd_span_counts(const struct lp_sample *s, size_t n, double *count)
{
	struct lp_sort_pair *order = malloc((n ? n : 1) * sizeof(*order));
	size_t *pos = malloc((n ? n : 1) * sizeof(*pos));
	int err = 0;

	if (!order || !pos) {
		err = lp_seterr(LP_ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		count[i] = 0;
	/* each thread's samples in time order: the samples are in time
	 * order, and a stable sort by thread keeps it */
	for (size_t i = 0; i < n; i++)
		order[i] = (struct lp_sort_pair){ .key = s[i].tid, .val = i };
	if ((err = lp_sort_pairs(order, n)) < 0)
		goto out;
	for (size_t i = 0; i < n; i++)
		pos[i] = order[i].val;
	for (size_t a = 0, b; a < n && err >= 0; a = b) {
		for (b = a; b < n && s[pos[b]].tid == s[pos[a]].tid; b++)
			;
		err = count_thread(s, pos + a, b - a, count);
	}
out:
	free(order);
	free(pos);
	return err;
}
