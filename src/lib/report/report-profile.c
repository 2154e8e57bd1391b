/* The report of a profile: working-set graphs under LRU (StatStack) and
 * random replacement (StatCache), the named caches, the random-replacement
 * ratio per time window, and the hot pcs and data objects at one cache
 * size (report-hot.c). Everything `locprof report` prints, in every
 * format, comes from here.
 *
 * Assumptions: the models' (docs/models.md). The named caches' LRU ratio is
 * StatStack's set-associative estimate (the placement model,
 * model-setassoc.c); their random ratio is StatCache's fully-associative
 * one, whatever their ways. Every ratio of the curves and named caches
 * gets its interval from the same function that computes it
 * (lp_report_values()), evaluated on resamples of the profile by
 * lp_model_intervals(). */
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
		free(r->curves[i].iv);
	}
	free(r->sizes);
	free(r->caches);
	free(r->windows);
	lp_report_hot_release(r);
	lp_report_threads_release(r);
	lp_report_share_release(r);
	lp_statcache_free(r->sc); /* may use r->ss: first */
	lp_statstack_free(r->ss);
	if (r->has_expanded)
		lp_profile_resample_release(&r->expanded);
	free(r);
}

/* A phase-guided profile (record --phases) is read as the constant-rate
 * run it stands for: each phase's samples fill its recurrences sampled
 * at a lower rate (lp_phases_expand(), docs/models.md "Phases"), so
 * that every table weighs the phases by their line accesses. */
static int report_expand(struct lp_report *r, const struct lp_profile *p)
{
	struct lp_phases *ph;
	int err;

	if (!p->n_intervals)
		return 0;
	if ((err = lp_phases_new(&ph, p, r->li)) < 0)
		return err;
	err = lp_phases_expand(ph, &r->expanded);
	r->info.phases = lp_phases_count(ph);
	lp_phases_free(ph);
	if (err < 0)
		return err;
	r->has_expanded = 1;
	r->p = &r->expanded;
	return 0;
}

/* Every model output of the report, from the models of one profile, in
 * one vector: the LRU curve at each size, the random one, then each named
 * cache's LRU and random ratios. Both curves are always computed (the
 * random one also serves the named caches). The same function gives the
 * estimates and, on resampled profiles, their intervals, so whatever
 * model a value comes from is covered by its interval. */
int lp_report_values(struct lp_statstack *ss, struct lp_statcache *sc, double line,
		     const struct lp_report_params *pa, double *out)
{
	size_t n = pa->nsizes;
	double *lines = malloc((n ? n : 1) * sizeof(*lines));
	int err = 0;

	if (!lines)
		return lp_seterr(LP_ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++) {
		lines[i] = fmax(1.0, (double)pa->sizes[i] / line);
		out[i] = lp_statstack_miss_ratio(ss, lines[i]);
	}
	if (n && (err = lp_statcache_curve(sc, lines, n, out + n)) < 0)
		goto out;
	for (size_t i = 0; i < pa->ncaches; i++) {
		const struct lp_report_cache *k = &pa->caches[i];
		uint64_t nl = k->size / (uint64_t)line, ways;
		double dlines;

		if (!nl)
			nl = 1;
		ways = k->ways ? k->ways : nl;
		out[2 * n + 2 * i] = lp_statstack_setassoc_miss_ratio(ss, nl / ways ? nl / ways : 1, ways);
		dlines = (double)nl;
		if ((err = lp_statcache_setassoc_ratio(sc, ss, nl / ways ? nl / ways : 1, dlines,
						       &out[2 * n + 2 * i + 1])) < 0)
			goto out;
	}
out:
	free(lines);
	return err;
}

int lp_report_models(const struct lp_profile *p, unsigned li, const struct lp_report_params *pa,
		     struct lp_statstack **ss, struct lp_statcache **sc)
{
	int err;

	if ((err = lp_statstack_new(ss, p, li, pa->window, pa->cold)) < 0 ||
	    (err = lp_statcache_new(sc, p, li, pa->window, pa->cold)) < 0)
		return err;
	if (pa->fill && (err = lp_statcache_set_fill_with(*sc, pa->fill, *ss)) < 0)
		return err;
	return 0;
}

struct resample_ctx {
	const struct lp_report_params *pa;
	unsigned li;
	double line;
	const struct lp_statstack *ss; /* the profile's: its set-associative layout */
	int share;                     /* resamples take ss's layout (else their own) */
};

/* Offsets from which the profile's set-associative layout is shared with
 * the resamples (see resampled_values()). */
#define REPORT_SHARE_LAYOUT_PAIRS 32768

/* Whether the resamples should take the profile's layout: only when it
 * was read from many offsets (lp_sa_group_info.pairs). */
static int share_layout(const struct lp_statstack *ss)
{
	size_t n = lp_statstack_sa_groups(ss), pairs = 0;
	struct lp_sa_group_info g;

	for (size_t k = 0; k < n; k++) {
		lp_statstack_sa_group(ss, k, &g);
		pairs += g.pairs;
	}
	return pairs >= REPORT_SHARE_LAYOUT_PAIRS;
}

/* lp_model_fn: the report's values on a resampled profile. */
static int resampled_values(const struct lp_profile *p, void *ctx, double *out)
{
	const struct resample_ctx *c = ctx;
	struct lp_statstack *ss = NULL;
	struct lp_statcache *sc = NULL;
	int err;

	/* The layout of the placement (which pcs walk which lattices) read
	 * from many offsets (REPORT_SHARE_LAYOUT_PAIRS or more: a profile of
	 * 20 000 samples of random reads has 45 000) is read once, from the
	 * profile: a resample would read the same walks again at the cost of
	 * a fifth of its evaluation, and they are then what the program
	 * does, not noise; each resample's own stack distances still decide
	 * each sample's group and misses. Read from fewer (a kernel's
	 * profile of 1 000 to 5 000 samples at 1e-3 has 50 to 3 000), the
	 * layout's own noise (a column walk's lattice found or not) is part
	 * of the ratio's, so each resample reads its own, at a cost in
	 * proportion to the offsets: small. */
	if ((err = lp_report_models(p, c->li, c->pa, &ss, &sc)) >= 0 &&
	    (!c->pa->ncaches || !c->share || (err = lp_statstack_share_layout(ss, c->ss)) >= 0))
		err = lp_report_values(ss, sc, c->line, c->pa, out);
	lp_statcache_free(sc);
	lp_statstack_free(ss);
	return err;
}

/* lp_model_fn for a phase-guided profile: the resample is of the
 * recorded samples (each kept a Poisson(1) number of times), and only
 * then are the phases' recurrences filled from it (lp_phases_expand()),
 * so that a sample's copies come and go with it. Resampling the
 * expanded profile would treat each copy as an independent sample and
 * narrow the intervals by about the square root of the copies per
 * sample. */
static int resampled_expanded_values(const struct lp_profile *p, void *ctx, double *out)
{
	const struct resample_ctx *c = ctx;
	struct lp_profile e;
	struct lp_phases *ph;
	int err;

	if ((err = lp_phases_new(&ph, p, c->li)) < 0)
		return err;
	err = lp_phases_expand(ph, &e);
	lp_phases_free(ph);
	if (err < 0)
		return err;
	err = resampled_values(&e, ctx, out);
	lp_profile_resample_release(&e);
	return err;
}

/* A curve's ratio near a size where the curve itself drops at once (a
 * group of reuses at one distance: a stencil's rows) is not known to the
 * precision the resamples show: the model's stack distances are
 * estimates, and the group lands on either side of the size with an
 * estimate a few percent off, a bias every resample shares (jacobi2d at
 * 520: the cliff is at 16.3K; one seed in three puts it between 14K and
 * 15K, and its 16K ratio was 8.5 points off with an interval of +-0.6).
 * So the curves are also evaluated at LP_REPORT_SLACK_STEPS sizes either
 * side of each size, LP_REPORT_SLACK_STEP apart; where the ratio drops
 * by LP_INTERVAL_CLIFF or more between two neighbours (a drop a smooth
 * curve does not make over a few percent of size), the interval covers
 * the ratios at both ends and is called a cliff, as one whose resamples
 * fell on both sides. */
static int widen_steep(struct lp_report *r, const struct lp_report_params *pa, const double *v,
		       struct lp_interval *iv, const struct lp_report_slack *slack)
{
	enum { K = 2 * LP_REPORT_SLACK_STEPS + 1 };
	size_t n = pa->nsizes;
	uint64_t *scaled = malloc(K * n * sizeof(*scaled));
	double *w = malloc(2 * K * n * sizeof(*w));
	struct lp_report_params q = *pa;
	int err = 0;

	if (!scaled || !w) {
		err = lp_seterr(LP_ENOMEM, "out of memory");
		goto out;
	}
	for (int k = 0; k < K; k++)
		for (size_t i = 0; i < n; i++)
			scaled[k * n + i] = (uint64_t)((double)pa->sizes[i] * lp_report_slack_factor(slack, i, k) + 0.5);
	/* one evaluation for all of them: StatCache solves its curve's sizes
	 * together */
	q.ncaches = 0;
	q.nsizes = K * n;
	q.sizes = scaled;
	if ((err = lp_report_values(r->ss, r->sc, r->info.line, &q, w)) < 0)
		goto out;
	lp_report_widen_steep(w, n, 2, v, iv, slack);
out:
	free(scaled);
	free(w);
	return err;
}

double lp_report_slack(int k)
{
	return 1 + (k - LP_REPORT_SLACK_STEPS) * LP_REPORT_SLACK_STEP;
}

/* Widen x (the interval of estimate est) to cover a and b, as a cliff
 * between them. */
static void cover_cliff(struct lp_interval *x, double est, double a, double b)
{
	double low = fmin(a, b), high = fmax(a, b);

	x->lo = fmin(x->lo, low);
	x->hi = fmax(x->hi, high);
	x->below = x->cliff ? fmin(x->below, low) : fmin(est, low);
	x->above = x->cliff ? fmax(x->above, high) : fmax(est, high);
	x->cliff = 1;
}

/* One output's steepness check: c[k * stride] is its curve at slack k;
 * where the curve drops by LP_INTERVAL_CLIFF between neighbours, x
 * (around estimate est) covers both ends, as a cliff. */
static void widen_if_steep(const double *c, size_t stride, double est, double lo, double hi, struct lp_interval *x)
{
	enum { K = 2 * LP_REPORT_SLACK_STEPS + 1 };
	double small = c[0], large = c[(size_t)(K - 1) * stride], drop = 0;

	for (int k = 1; k < K; k++)
		drop = fmax(drop, c[(size_t)(k - 1) * stride] - c[(size_t)k * stride]);
	if (!isfinite(small) || !isfinite(large) || !(drop >= LP_INTERVAL_CLIFF))
		return;
	x->steep = !x->cliff;
	x->slack_lo = lo;
	x->slack_hi = hi;
	cover_cliff(x, est, large, small);
}

void lp_report_widen_steep(const double *w, size_t n, size_t ncurves, const double *v, struct lp_interval *iv,
			   const struct lp_report_slack *slack)
{
	enum { K = 2 * LP_REPORT_SLACK_STEPS + 1 };

	/* output j: curve j / n at size j % n */
	for (size_t j = 0; j < ncurves * n; j++)
		widen_if_steep(w + (j / n) * K * n + j % n, n, v[j], lp_report_slack_factor(slack, j % n, 0),
			       lp_report_slack_factor(slack, j % n, K - 1), &iv[j]);
}

/* The named caches' LRU ratio where the fully associative LRU curve drops
 * steeply near the cache's size: the stack distances of many reuses are
 * then within the slack of the number of lines, and whether such a reuse
 * hits depends on how its lines share the sets, which the samples show
 * poorly. Lines spread evenly over the sets make the cache exactly as good
 * as a fully associative one of its size; lines placed at random let a
 * reuse a little longer than the cache hit in a set that happens to hold
 * fewer. So the interval covers the fully associative curve over the
 * slack, as a cliff. Two 4 MiB arrays read in a scattered order whose
 * strides spread each reuse's 16 400 lines evenly over 1M:16:64's sets:
 * simulation 91.6 %, the placement model 73.4 % +-0.4, the fully
 * associative curve 91.7 % at 1M and 53.1 % 6 % above it. */
static void widen_steep_caches(struct lp_report *r, const struct lp_report_params *pa, struct lp_interval *iv,
			       const double *v, const struct lp_report_slack *slack)
{
	enum { K = 2 * LP_REPORT_SLACK_STEPS + 1 };
	size_t n = pa->nsizes;

	for (size_t c = 0; c < pa->ncaches; c++) {
		double w[K];

		for (int k = 0; k < K; k++)
			w[k] = lp_statstack_miss_ratio(
				r->ss, fmax(1.0, (double)pa->caches[c].size * lp_report_slack_factor(slack, n + c, k) /
							 r->info.line));
		widen_if_steep(w, 1, v[2 * n + 2 * c], lp_report_slack_factor(slack, n + c, 0),
			       lp_report_slack_factor(slack, n + c, K - 1), &iv[2 * n + 2 * c]);
	}
}

/* Random replacement in a cache whose size is within sampling error of
 * the run's footprint: whether the cache ever fills is not known, and it
 * decides the ratio (the fill model's cache that never fills evicts
 * nothing; a walk that fits its sets then never misses). The footprint
 * is a count of the samples that are their line's last access, few in a
 * short run: soa16's 16 arrays of 512 lines, exactly 512K, sampled at
 * 1e-3 leave 11 of them, and the estimate (11 000 lines, +-60 %) said the
 * cache fills, where simulation gives 0.3 % misses against 46 % from the
 * model at 512K:8:64. So the ratio under the other answer is computed too,
 * and the interval covers both, as a cliff. */
#define REPORT_FOOTPRINT_Z 1.96
static int widen_footprint(struct lp_report *r, const struct lp_report_params *pa, const double *v,
			   struct lp_interval *iv)
{
	size_t n = pa->nsizes;
	double F, lo, hi, alt;
	int err = 0;

	if (pa->fill != LP_STATCACHE_FILL_AUTO || !lp_statcache_footprint_band(r->sc, REPORT_FOOTPRINT_Z, &F, &lo, &hi))
		return 0;
	for (size_t j = 0; j < n + pa->ncaches && err >= 0; j++) {
		const struct lp_report_cache *k = j < n ? NULL : &pa->caches[j - n];
		uint64_t size = k ? k->size : pa->sizes[j], nl = size / (uint64_t)r->info.line, ways, sets;
		size_t at = k ? 2 * n + 2 * (j - n) + 1 : n + j;
		double L = fmax(1.0, (double)nl);
		if (!(L >= lo && L <= hi))
			continue;
		/* the other answer than the estimate's */
		if ((err = lp_statcache_assume_footprint(r->sc, L >= F ? LP_FOOTPRINT_EXCEEDS
										 : LP_FOOTPRINT_FITS)) < 0)
			break;
		ways = k && k->ways ? k->ways : (uint64_t)L;
		sets = (uint64_t)L / ways ? (uint64_t)L / ways : 1;
		err = k ? lp_statcache_setassoc_ratio(r->sc, r->ss, sets, L, &alt) : lp_statcache_curve(r->sc, &L, 1, &alt);
		if (err >= 0 && isfinite(alt) && fabs(alt - v[at]) >= LP_INTERVAL_CLIFF) {
			cover_cliff(&iv[at], v[at], alt, v[at]);
			iv[at].footprint = 1;
		}
	}
	if (err >= 0)
		err = lp_statcache_assume_footprint(r->sc, LP_FOOTPRINT_ESTIMATE);
	return err;
}

/* The LRU curve where the samples inside the reuses' spans disagree with
 * the model's stack distances (lp_statstack_checked_curve()): the
 * resamples rerun the same model, so its bias is not in their interval.
 * Where the checked ratio is outside it by REPORT_SPANS_MIN or more, the
 * interval reaches it. gzip -9 at 1e-3: 15.1 % at 32K, the checked
 * 16.5 %, the trace 15.8 %, outside the resamples' +-1.3 points. The
 * interval also reaches the curves of the distances the span counts leave
 * possible (lp_statstack_checked_band()), which at a low rate the check
 * cannot tell from the model's: gzip -9 on 1.8 MB at 1e-4, 24 % at 32K
 * +-2 on every seed, the trace 29 %. */
#define REPORT_SPANS_MIN 0.002
#define REPORT_BAND_FLAG 0.01 /* a widening this large is flagged */
static int widen_band(struct lp_report *r, const double *lines, size_t n, struct lp_interval *iv)
{
	double *lo = malloc((n ? n : 1) * sizeof(*lo)), *hi = malloc((n ? n : 1) * sizeof(*hi));
	int err;

	if (!lo || !hi) {
		err = lp_seterr(LP_ENOMEM, "out of memory");
		goto out;
	}
	if ((err = lp_statstack_checked_band(r->ss, lines, n, lo, hi)) < 0)
		goto out;
	for (size_t j = 0; j < n; j++) {
		struct lp_interval *x = &iv[j];
		if (isfinite(lo[j]) && lo[j] < x->lo - REPORT_SPANS_MIN) {
			x->band |= lo[j] < x->lo - REPORT_BAND_FLAG;
			x->lo = lo[j];
		}
		if (isfinite(hi[j]) && hi[j] > x->hi + REPORT_SPANS_MIN) {
			x->band |= hi[j] > x->hi + REPORT_BAND_FLAG;
			x->hi = hi[j];
		}
	}
out:
	free(lo);
	free(hi);
	return err;
}

static int widen_spans(struct lp_report *r, const struct lp_report_params *pa, struct lp_interval *iv)
{
	size_t n = pa->nsizes;
	double *lines = malloc((n ? n : 1) * sizeof(*lines)), *alt = malloc((n ? n : 1) * sizeof(*alt));
	int err = 0;

	if (!lines || !alt) {
		err = lp_seterr(LP_ENOMEM, "out of memory");
		goto out;
	}
	for (size_t j = 0; j < n; j++)
		lines[j] = fmax(1.0, (double)pa->sizes[j] / r->info.line);
	if ((err = lp_statstack_checked_curve(r->ss, lines, n, alt)) < 0)
		goto out;
	for (size_t j = 0; j < n; j++) {
		struct lp_interval *x = &iv[j];
		if (!isfinite(alt[j]) || !(alt[j] < x->lo - REPORT_SPANS_MIN || alt[j] > x->hi + REPORT_SPANS_MIN))
			continue;
		x->lo = fmin(x->lo, alt[j]);
		x->hi = fmax(x->hi, alt[j]);
		x->spans = 1;
		x->checked = alt[j];
	}
	err = widen_band(r, lines, n, iv);
out:
	free(lines);
	free(alt);
	return err;
}

/* The intervals iv of the report's values v: the resamples', widened
 * where the curves drop within the sampling error of the stack distances
 * near a size (report-slack.c), where the footprint is near the size, and
 * where the spans' samples disagree with the model. */
static int report_intervals(struct lp_report *r, const struct lp_report_params *pa, const double *v,
			    struct lp_interval *iv)
{
	size_t n = pa->nsizes, nc = pa->ncaches, ns = n + nc;
	struct resample_ctx c = { pa, r->li, r->info.line, r->ss, nc && share_layout(r->ss) };
	struct lp_interval_params ip = { .li = r->li, .resamples = pa->resamples, .seed = pa->seed, .jobs = pa->jobs };
	double *lines = malloc((ns ? ns : 1) * sizeof(*lines));
	struct lp_report_slack *slack = NULL;
	int err;

	if (!lines) {
		err = lp_seterr(LP_ENOMEM, "out of memory");
		goto out;
	}
	for (size_t j = 0; j < ns; j++)
		lines[j] = fmax(1.0, (double)(j < n ? pa->sizes[j] : pa->caches[j - n].size) / r->info.line);
	if ((err = lp_model_intervals(r->recorded, &ip, r->has_expanded ? resampled_expanded_values : resampled_values,
				      &c, v, 2 * ns, iv)) < 0 ||
	    (err = lp_report_slack_new(&slack, r->ss, r->p, r->li, lines, ns)) < 0)
		goto out;
	if ((n && (err = widen_steep(r, pa, v, iv, slack)) < 0) || (err = widen_footprint(r, pa, v, iv)) < 0 ||
	    (n && (pa->policies & LP_REPORT_LRU) && (err = widen_spans(r, pa, iv)) < 0))
		goto out;
	widen_steep_caches(r, pa, iv, v, slack);
out:
	lp_report_slack_free(slack);
	free(lines);
	return err;
}

/* The curves and named caches, with their intervals when asked. */
static int report_curves(struct lp_report *r, const struct lp_report_params *pa)
{
	size_t n = pa->nsizes, nv = 2 * n + 2 * pa->ncaches;
	double *v = malloc((nv ? nv : 1) * sizeof(*v));
	struct lp_interval *iv = calloc(nv ? nv : 1, sizeof(*iv));
	int err = 0;

	if (!v || !iv || (n && !(r->sizes = malloc(n * sizeof(*r->sizes)))) ||
	    (pa->ncaches && !(r->caches = malloc(pa->ncaches * sizeof(*r->caches))))) {
		err = lp_seterr(LP_ENOMEM, "out of memory");
		goto out;
	}
	if (n)
		memcpy(r->sizes, pa->sizes, n * sizeof(*r->sizes));
	if ((err = lp_report_values(r->ss, r->sc, r->info.line, pa, v)) < 0)
		goto out;
	for (size_t i = 0; i < nv; i++)
		iv[i] = (struct lp_interval){ .lo = v[i], .hi = v[i], .below = NAN, .above = NAN };
	if (pa->resamples && nv && (err = report_intervals(r, pa, v, iv)) < 0)
		goto out;
	for (int k = 0; k < 2; k++) {
		if (!(pa->policies & (k ? LP_REPORT_RANDOM : LP_REPORT_LRU)))
			continue;
		struct lp_curve *c = &r->curves[r->ncurves];
		if (!(c->name = strdup(curve_names[k])) || !(c->ratio = malloc((n ? n : 1) * sizeof(double))) ||
		    (pa->resamples && !(c->iv = malloc((n ? n : 1) * sizeof(*c->iv))))) {
			err = lp_seterr(LP_ENOMEM, "out of memory");
			goto out;
		}
		c->size = r->sizes;
		c->n = c->cap = n;
		r->ncurves++;
		if (n)
			memcpy(c->ratio, v + k * n, n * sizeof(double));
		if (n && c->iv)
			memcpy(c->iv, iv + k * n, n * sizeof(*iv));
	}
	for (size_t i = 0; i < pa->ncaches; i++) {
		struct lp_report_cache *k = &r->caches[i];
		*k = pa->caches[i];
		k->lru = v[2 * n + 2 * i];
		k->random = v[2 * n + 2 * i + 1];
		k->lru_iv = iv[2 * n + 2 * i];
		k->random_iv = iv[2 * n + 2 * i + 1];
	}
	r->ncaches = pa->ncaches;
out:
	free(v);
	free(iv);
	return err;
}

void lp_report_geometry(const struct lp_report *r, uint64_t bytes, uint64_t ways, uint64_t *sets,
			uint64_t *out_ways)
{
	uint64_t lines = bytes / (uint64_t)r->info.line;

	if (!lines)
		lines = 1;
	*out_ways = ways ? ways : lines;
	*sets = lines / *out_ways ? lines / *out_ways : 1;
}

/* The named caches' per-reference ratios (lp_ref_miss_ratio()), from the
 * per-sample miss probabilities of each model. */
static int report_ref_ratios(struct lp_report *r, const struct lp_report_params *pa)
{
	size_t first, n;
	double *prob;
	int err = 0;

	if (!r->ncaches)
		return 0;
	lp_profile_line_samples(r->p, r->li, &first, &n);
	if (!(prob = malloc((n ? n : 1) * sizeof(*prob))))
		return lp_seterr(LP_ENOMEM, "out of memory");
	for (size_t i = 0; i < r->ncaches; i++) {
		struct lp_report_cache *k = &r->caches[i];
		uint64_t sets, ways, lines = k->size / (uint64_t)r->info.line;

		if (!lines)
			lines = 1;
		lp_report_geometry(r, k->size, k->ways, &sets, &ways);
		if ((err = lp_statstack_sample_miss(r->ss, sets, ways, prob)) < 0)
			break;
		k->lru_ref = lp_ref_miss_ratio(r->p, r->li, prob, k->lru);
		k->lru_unseen = lp_statstack_setassoc_unseen(r->ss, sets, ways, prob);
		/* the intervals hold the layouts no sample showed too: a reuse
		 * that crowds its set misses under either policy, so the LRU
		 * bound stands for random replacement as well */
		if (pa->resamples) {
			k->lru_iv.hi = fmin(1.0, k->lru_iv.hi + k->lru_unseen);
			k->random_iv.hi = fmin(1.0, k->random_iv.hi + k->lru_unseen);
		}
		if ((err = lp_statcache_sample_miss(r->sc, (double)lines, prob)) < 0)
			break;
		k->random_ref = lp_ref_miss_ratio(r->p, r->li, prob, k->random);
	}
	free(prob);
	return err;
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
	r->p = r->recorded = p;
	r->li = pa->line_index;
	{
		size_t first;
		lp_profile_line_samples(p, r->li, &first, &r->info.recorded);
	}
	if ((err = report_expand(r, p)) < 0)
		goto out_free;
	p = r->p;
	r->info.line = p->line_sizes[r->li];
	r->info.accesses = p->accesses[r->li];
	r->info.references = p->references;
	r->info.accesses_partial = lp_profile_count_partial(p, r->li);
	r->info.region = p->region;
	r->info.region_skipped = p->region_skipped;
	r->info.region_entries = p->region_entries;
	lp_profile_line_samples(p, r->li, &r->first, &r->info.samples);
	r->info.at = pa->at ? pa->at : pa->ncaches ? pa->caches[0].size : 32768;
	r->info.hot_policy = pa->policies & LP_REPORT_LRU ? "LRU" : "random";
	if ((err = lp_report_models(p, r->li, pa, &r->ss, &r->sc)) < 0 || (err = report_curves(r, pa)) < 0 ||
	    (err = report_ref_ratios(r, pa)) < 0)
		goto out_free;
	if (pa->windows && (err = report_windows(r)) < 0)
		goto out_free;
	if (pa->top && (err = lp_report_hot(r, pa)) < 0)
		goto out_free;
	if (pa->threads && (err = lp_report_threads_compute(r, pa)) < 0)
		goto out_free;
	if (pa->share && (err = lp_report_share_compute(r, pa)) < 0)
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
