/* Curves and per-pc ranking of exact stack and reuse distances: the tables
 * of `locprof stackdist` and `locprof reusedist`. A point's count is exact
 * when its threshold lies on a histogram bin boundary, else interpolated
 * inside the bin (lp_hist_misses()). */
#include <locprof/report.h>

#include "common/error.h"

#include <stdlib.h>
#include <string.h>

/* Distance threshold of a point: lines of the cache, or the distance. */
static uint64_t threshold(const struct lp_exact *e, size_t li, enum lp_distance kind, uint64_t x)
{
	return kind == LP_DIST_STACK ? x / lp_exact_line_size(e, li) : x;
}

/* The x values: powers of two up to the footprint or beyond the largest
 * distance, then the extra ones; sorted, without repeats. */
static uint64_t *curve_xs(const struct lp_exact *e, size_t li, enum lp_distance kind, const uint64_t *extra,
			  size_t nextra, size_t *np)
{
	uint64_t line = lp_exact_line_size(e, li), *v;
	size_t n = 0;

	if (!(v = malloc((80 + nextra) * sizeof(*v))))
		return NULL;
	if (kind == LP_DIST_STACK) {
		uint64_t foot = lp_exact_distinct_lines(e, li) * line;

		for (uint64_t s = line; n < 64; s *= 2) {
			v[n++] = s;
			if (s >= foot || s > UINT64_MAX / 2)
				break;
		}
	} else {
		uint64_t top = lp_hist_max(lp_exact_hist(e, li));

		v[n++] = 0;
		for (uint64_t x = 1; n < 66; x *= 2) {
			v[n++] = x;
			if (x > top || x > UINT64_MAX / 2)
				break;
		}
	}
	for (size_t i = 0; i < nextra; i++)
		v[n++] = extra[i];
	/* insertion sort: n is small */
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && v[j - 1] > v[j]; j--) {
			uint64_t t = v[j];
			v[j] = v[j - 1];
			v[j - 1] = t;
		}
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (!k || v[k - 1] != v[i])
			v[k++] = v[i];
	*np = k;
	return v;
}

int lp_dist_curve(const struct lp_exact *e, size_t li, enum lp_distance kind, const uint64_t *extra,
		  size_t nextra, struct lp_dist_point **out, size_t *n)
{
	const struct lp_hist *h = lp_exact_hist(e, li);
	uint64_t acc = lp_exact_line_accesses(e, li), cold = lp_hist_cold(h);
	size_t np = 0;
	uint64_t *xs = curve_xs(e, li, kind, extra, nextra, &np);
	struct lp_dist_point *v = xs ? calloc(np ? np : 1, sizeof(*v)) : NULL;

	*out = NULL;
	*n = 0;
	if (!v) {
		free(xs);
		return lp_seterr(LP_ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < np; i++) {
		struct lp_dist_point *p = &v[i];

		p->x = xs[i];
		p->threshold = threshold(e, li, kind, xs[i]);
		p->exact = lp_hist_is_boundary(p->threshold);
		p->misses = lp_hist_misses(h, p->threshold);
		p->misses_nocold = p->misses - (double)cold;
		p->ratio = acc ? p->misses / (double)acc : 0;
		p->ratio_nocold = acc > cold ? p->misses_nocold / (double)(acc - cold) : 0;
	}
	free(xs);
	*out = v;
	*n = np;
	return 0;
}

uint64_t lp_dist_rank_point(enum lp_distance kind, const uint64_t *sizes, size_t n)
{
	if (n)
		return sizes[0];
	return kind == LP_DIST_STACK ? 32768 : 1024;
}

static int cmp_dist_pc(const void *a, const void *b)
{
	const struct lp_dist_pc *x = a, *y = b;

	if (x->misses != y->misses)
		return x->misses < y->misses ? 1 : -1;
	return x->pc < y->pc ? -1 : x->pc > y->pc;
}

int lp_dist_pcs(const struct lp_exact *e, size_t li, enum lp_distance kind, uint64_t point,
		struct lp_dist_pc **out, size_t *n)
{
	size_t np = lp_exact_pc_count(e, li);
	struct lp_dist_pc *r = calloc(np + 1, sizeof(*r));
	uint64_t c = threshold(e, li, kind, point);

	*out = NULL;
	*n = 0;
	if (!r)
		return lp_seterr(LP_ENOMEM, "out of memory");
	for (size_t k = 0; k < np; k++) {
		const struct lp_hist *h = lp_exact_pc_hist(e, li, k, &r[k].pc);

		r[k].index = k;
		r[k].accesses = lp_hist_cold(h) + lp_hist_finite(h);
		r[k].cold = lp_hist_cold(h);
		r[k].misses = lp_hist_misses(h, c);
	}
	qsort(r, np, sizeof(*r), cmp_dist_pc);
	*out = r;
	*n = np;
	return 0;
}
