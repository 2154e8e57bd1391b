/* Distance histograms: exact below 256, log-linear above (128 bins per
 * octave), so that miss counts at "round" cache sizes are exact while the
 * whole u64 range fits in 7424 bins (58 KiB). Bins are allocated up to the
 * largest one used, so per-pc histograms of short distances stay small. */
#include "exact/exact-internal.h"

int lp_hist_init(struct lp_hist *h, size_t initial_bins)
{
	memset(h, 0, sizeof(*h));
	if (initial_bins) {
		if (initial_bins > LP_HIST_NBINS)
			initial_bins = LP_HIST_NBINS;
		h->c = calloc(initial_bins, sizeof(*h->c));
		if (!h->c)
			return lp_seterr(LP_ENOMEM, "out of memory for a histogram");
		h->cap = initial_bins;
	}
	return 0;
}

void lp_hist_release(struct lp_hist *h)
{
	free(h->c);
	memset(h, 0, sizeof(*h));
}

int lp_hist_grow(struct lp_hist *h, size_t bin)
{
	size_t old = h->cap;
	int rc = LP_ARRAY_RESERVE_MAX(h->c, h->cap, bin + 1, 16, LP_HIST_NBINS, "histogram bins");

	if (rc < 0)
		return rc;
	memset(h->c + old, 0, (h->cap - old) * sizeof(*h->c));
	return 0;
}

int lp_hist_new(struct lp_hist **out)
{
	struct lp_hist *h = malloc(sizeof(*h));

	*out = NULL;
	if (!h)
		return lp_seterr(LP_ENOMEM, "out of memory for a histogram");
	lp_hist_init(h, 0);
	*out = h;
	return 0;
}

void lp_hist_free(struct lp_hist *h)
{
	if (!h)
		return;
	lp_hist_release(h);
	free(h);
}

int lp_hist_add(struct lp_hist *h, uint64_t d, uint64_t count)
{
	size_t b;

	if (d == LP_DIST_COLD) {
		h->cold += count;
		return 0;
	}
	if (!count)
		return 0;
	b = lp_hist_bin_inline(d);
	if (b >= h->cap && lp_hist_grow(h, b) < 0)
		return LP_ENOMEM;
	h->c[b] += count;
	if (b >= h->used)
		h->used = b + 1;
	h->finite += count;
	if (d > h->max)
		h->max = d;
	return 0;
}

int lp_hist_merge(struct lp_hist *dst, const struct lp_hist *src)
{
	if (src->used && src->used > dst->cap && lp_hist_grow(dst, src->used - 1) < 0)
		return LP_ENOMEM;
	for (size_t b = 0; b < src->used; b++)
		dst->c[b] += src->c[b];
	if (src->used > dst->used)
		dst->used = src->used;
	dst->cold += src->cold;
	dst->finite += src->finite;
	if (src->max > dst->max)
		dst->max = src->max;
	return 0;
}

size_t lp_hist_bin_of(uint64_t d)
{
	return lp_hist_bin_inline(d);
}

void lp_hist_bin_range(size_t bin, uint64_t *lo, uint64_t *hi)
{
	size_t k, sub;

	if (bin < 256) {
		*lo = *hi = bin;
		return;
	}
	k = 8 + (bin - 256) / 128;
	sub = (bin - 256) % 128;
	*lo = (uint64_t)(128 + sub) << (k - 7);
	*hi = *lo + ((UINT64_C(1) << (k - 7)) - 1);
}

int lp_hist_is_boundary(uint64_t c)
{
	uint64_t lo, hi;

	lp_hist_bin_range(lp_hist_bin_inline(c), &lo, &hi);
	return lo == c;
}

size_t lp_hist_nbins(const struct lp_hist *h) { return h->used; }
uint64_t lp_hist_bin_count(const struct lp_hist *h, size_t bin) { return bin < h->used ? h->c[bin] : 0; }
uint64_t lp_hist_cold(const struct lp_hist *h) { return h->cold; }
uint64_t lp_hist_finite(const struct lp_hist *h) { return h->finite; }
uint64_t lp_hist_max(const struct lp_hist *h) { return h->max; }

double lp_hist_count_ge(const struct lp_hist *h, uint64_t c)
{
	size_t b = lp_hist_bin_inline(c);
	uint64_t lo, hi, above = 0;
	double part;

	if (b >= h->used)
		return 0.0;
	for (size_t i = b + 1; i < h->used; i++)
		above += h->c[i];
	lp_hist_bin_range(b, &lo, &hi);
	/* Within the bin, distances are assumed uniform over [lo, hi]. */
	part = (double)h->c[b] * ((double)(hi - c) + 1.0) / ((double)(hi - lo) + 1.0);
	return (double)above + part;
}

double lp_hist_misses(const struct lp_hist *h, uint64_t c)
{
	return (double)h->cold + lp_hist_count_ge(h, c);
}
