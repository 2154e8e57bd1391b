/* The report of a profile: working-set graphs under LRU (StatStack) and
 * random replacement (StatCache), the named caches, the random-replacement
 * ratio per time window, and the hot pcs and data objects at one cache
 * size (report-hot.c). Everything `locprof report` prints, in every
 * format, comes from here.
 *
 * Assumptions: the models' (docs/models.md). The named caches' LRU ratio is
 * StatStack's set-associative estimate (the placement model,
 * model-setassoc.c); their random ratio is StatCache's fully-associative
 * one, whatever their ways. */
#include "report/report-internal.h"

#include "common/error.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const curve_names[2] = { "statstack", "statcache" };

void lp_report_free(struct lp_report *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->ncurves; i++) {
		free(r->curves[i].name);
		free(r->curves[i].ratio);
	}
	free(r->sizes);
	free(r->caches);
	free(r->windows);
	lp_report_hot_release(r);
	lp_statstack_free(r->ss);
	lp_statcache_free(r->sc);
	free(r);
}

/* Both curves are always computed (the random one also serves the named
 * caches), the ones asked for are kept. */
static int report_curves(struct lp_report *r, const struct lp_report_params *pa)
{
	size_t n = pa->nsizes;
	double *lines = malloc((n ? n : 1) * sizeof(*lines));
	double *ratio[2] = { malloc((n ? n : 1) * sizeof(double)), malloc((n ? n : 1) * sizeof(double)) };
	int err = 0;

	if (!lines || !ratio[0] || !ratio[1] || (n && !(r->sizes = malloc(n * sizeof(*r->sizes))))) {
		err = lp_seterr(LP_ENOMEM, "out of memory");
		goto out;
	}
	if (n)
		memcpy(r->sizes, pa->sizes, n * sizeof(*r->sizes));
	for (size_t i = 0; i < n; i++) {
		lines[i] = fmax(1.0, (double)pa->sizes[i] / r->info.line);
		ratio[0][i] = lp_statstack_miss_ratio(r->ss, lines[i]);
	}
	if (n && (err = lp_statcache_curve(r->sc, lines, n, ratio[1])) < 0)
		goto out;
	for (int k = 0; k < 2; k++) {
		if (!(pa->policies & (k ? LP_REPORT_RANDOM : LP_REPORT_LRU)))
			continue;
		struct lp_curve *c = &r->curves[r->ncurves];
		if (!(c->name = strdup(curve_names[k]))) {
			err = lp_seterr(LP_ENOMEM, "out of memory");
			goto out;
		}
		c->size = r->sizes;
		c->ratio = ratio[k];
		c->n = c->cap = n;
		ratio[k] = NULL;
		r->ncurves++;
	}
out:
	free(lines);
	free(ratio[0]);
	free(ratio[1]);
	return err;
}

static int report_caches(struct lp_report *r, const struct lp_report_params *pa)
{
	if (!pa->ncaches)
		return 0;
	if (!(r->caches = malloc(pa->ncaches * sizeof(*r->caches))))
		return lp_seterr(LP_ENOMEM, "out of memory");
	memcpy(r->caches, pa->caches, pa->ncaches * sizeof(*r->caches));
	r->ncaches = pa->ncaches;
	for (size_t i = 0; i < r->ncaches; i++) {
		struct lp_report_cache *k = &r->caches[i];
		uint64_t lines = k->size / (uint64_t)r->info.line, ways;
		double dlines;
		int err;

		if (!lines)
			lines = 1;
		ways = k->ways ? k->ways : lines;
		k->lru = lp_statstack_setassoc_miss_ratio(r->ss, lines / ways ? lines / ways : 1, ways);
		dlines = (double)lines;
		if ((err = lp_statcache_curve(r->sc, &dlines, 1, &k->random)) < 0)
			return err;
	}
	return 0;
}

static int report_windows(struct lp_report *r)
{
	size_t nw = lp_statcache_nwindows(r->sc);
	double *ratio = malloc((nw ? nw : 1) * sizeof(*ratio));
	int err = 0;

	if (!ratio || !(r->windows = malloc((nw ? nw : 1) * sizeof(*r->windows)))) {
		free(ratio);
		return lp_seterr(LP_ENOMEM, "out of memory");
	}
	if ((err = lp_statcache_window_ratios(r->sc, fmax(1.0, (double)r->info.at / r->info.line), ratio)) < 0)
		goto out;
	for (size_t w = 0; w < nw; w++) {
		uint64_t end;
		lp_statcache_window(r->sc, w, &r->windows[w].start, &end);
		r->windows[w].ratio = ratio[w];
	}
	r->nwindows = nw;
	r->info.window_length = lp_statcache_window_length(r->sc);
out:
	free(ratio);
	return err;
}

int lp_report_new(struct lp_report **out, const struct lp_profile *p, const struct lp_report_params *pa)
{
	struct lp_report *r;
	int err;

	*out = NULL;
	if (pa->line_index >= p->n_line_sizes)
		return lp_seterr(LP_EINVAL, "the profile has no line size number %u", pa->line_index);
	if (!p->line_sizes[pa->line_index])
		return lp_seterr(LP_ECORRUPT, "the profile's line size is 0");
	if (!(pa->policies & (LP_REPORT_LRU | LP_REPORT_RANDOM)))
		return lp_seterr(LP_EINVAL, "no replacement policy asked for");
	if (!(r = calloc(1, sizeof(*r))))
		return lp_seterr(LP_ENOMEM, "out of memory");
	r->p = p;
	r->li = pa->line_index;
	r->info.line = p->line_sizes[r->li];
	r->info.accesses = p->accesses[r->li];
	r->info.accesses_partial = lp_profile_count_partial(p, r->li);
	lp_profile_line_samples(p, r->li, &r->first, &r->info.samples);
	r->info.at = pa->at ? pa->at : pa->ncaches ? pa->caches[0].size : 32768;
	r->info.hot_policy = pa->policies & LP_REPORT_LRU ? "LRU" : "random";
	if ((err = lp_statstack_new(&r->ss, p, r->li, pa->window, pa->cold)) < 0 ||
	    (err = lp_statcache_new(&r->sc, p, r->li, pa->window, pa->cold)) < 0)
		goto out_free;
	if (pa->fill && (err = lp_statcache_set_fill(r->sc, pa->fill)) < 0)
		goto out_free;
	if ((err = report_curves(r, pa)) < 0 || (err = report_caches(r, pa)) < 0)
		goto out_free;
	if (pa->windows && (err = report_windows(r)) < 0)
		goto out_free;
	if (pa->top && (err = lp_report_hot(r, pa)) < 0)
		goto out_free;
	*out = r;
	return 0;
out_free:
	lp_report_free(r);
	return err;
}

const struct lp_report_info *lp_report_info(const struct lp_report *r)
{
	return &r->info;
}

size_t lp_report_curves(const struct lp_report *r, const struct lp_curve **out)
{
	*out = r->curves;
	return r->ncurves;
}

size_t lp_report_caches(const struct lp_report *r, const struct lp_report_cache **out)
{
	*out = r->caches;
	return r->ncaches;
}

size_t lp_report_windows(const struct lp_report *r, const struct lp_report_window **out)
{
	*out = r->windows;
	return r->nwindows;
}
