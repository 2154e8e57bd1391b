/* The time view (report --timeline): the miss ratio of a few caches per
 * interval of a phase-guided profile, or per window of a constant-rate
 * one, with each phase's top functions.
 *
 * Assumptions: the phase model's (src/lib/model/model-timeline.c): a
 * phase's intervals behave alike, so an interval's ratio is its phase's;
 * a constant-rate profile's time view is StatCache's per-window solution
 * (random replacement), as `report --window` prints it. */
#include "report/report-internal.h"

#include "common/error.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* One phase's models: its own samples in one window. */
static int phase_models(const struct lp_phases *ph, size_t k, unsigned li, int cold, int fill,
			struct lp_profile *sub, struct lp_statstack **ss, struct lp_statcache **sc)
{
	int err;

	*ss = NULL;
	*sc = NULL;
	memset(sub, 0, sizeof(*sub));
	if ((err = lp_phases_profile(ph, k, sub)) < 0)
		return err;
	if ((err = lp_statstack_new(ss, sub, li, UINT64_MAX, cold)) < 0 ||
	    (err = lp_statcache_new(sc, sub, li, UINT64_MAX, cold)) < 0 ||
	    (fill && (err = lp_statcache_set_fill_with(*sc, fill, *ss)) < 0))
		return err;
	return 0;
}

static void phase_models_free(struct lp_profile *sub, struct lp_statstack *ss, struct lp_statcache *sc)
{
	lp_statcache_free(sc);
	lp_statstack_free(ss);
	lp_profile_resample_release(sub);
}

/* ---- the time view --------------------------------------------------- */

struct lp_timeline {
	struct lp_report_cache *caches;
	size_t ncaches;
	struct lp_timeline_row *rows;
	size_t nrows;
	double *row_ratio; /* nrows x ncaches, or nphases x ncaches shared */
	struct lp_timeline_phase *phases;
	size_t nphases;
	double *phase_ratio; /* nphases x ncaches */
	struct lp_timeline_fn *fns; /* nphases x top */
	double *run;
	size_t unphased;
	unsigned policy;
};

void lp_timeline_free(struct lp_timeline *t)
{
	if (!t)
		return;
	for (size_t i = 0; t->fns && i < t->nphases; i++)
		for (size_t j = 0; j < t->phases[i].ntop; j++)
			free((char *)t->phases[i].top[j].label);
	free(t->fns);
	free(t->caches);
	free(t->rows);
	free(t->row_ratio);
	free(t->phases);
	free(t->phase_ratio);
	free(t->run);
	free(t);
}

/* A cache's ratio and each sample's miss probability (prob may be NULL)
 * under the timeline's policy. */
static int cache_ratio(struct lp_statstack *ss, struct lp_statcache *sc, double line,
		       const struct lp_report_cache *c, unsigned policy, double *ratio, double *prob)
{
	uint64_t lines = c->size / (uint64_t)line, ways;
	int err = 0;

	if (!lines)
		lines = 1;
	ways = c->ways ? c->ways : lines;
	if (policy == LP_REPORT_LRU) {
		uint64_t sets = lines / ways ? lines / ways : 1;
		*ratio = lp_statstack_setassoc_miss_ratio(ss, sets, ways);
		if (prob)
			err = lp_statstack_sample_miss(ss, sets, ways, prob);
	} else {
		double dl = (double)lines;
		if ((err = lp_statcache_curve(sc, &dl, 1, ratio)) >= 0 && prob)
			err = lp_statcache_sample_miss(sc, dl, prob);
	}
	return err;
}

/* Phase k's top functions at the first cache, from its samples' miss
 * probabilities: each sample stands for the phase's line accesses over
 * its samples. */
static int phase_top(struct lp_timeline *t, size_t k, const struct lp_profile *sub, unsigned li,
		     const double *prob, const struct lp_timeline_params *pa)
{
	struct lp_timeline_phase *tp = &t->phases[k];
	struct lp_hotspots *h;
	const struct lp_source_function *f;
	size_t first, n, nf;
	double scale, total = 0;
	int err;

	lp_profile_line_samples(sub, li, &first, &n);
	if (!n)
		return 0;
	scale = (double)tp->info.accesses / (double)n;
	if ((err = lp_hotspots_new(&h, pa->syms)) < 0)
		return err;
	for (size_t i = 0; i < n && err >= 0; i++)
		err = lp_hotspots_add(h, sub->samples[first + i].reuse_pc, scale, scale * prob[i]);
	if (err >= 0)
		err = lp_hotspots_finish(h);
	if (err >= 0) {
		nf = lp_hotspots_functions(h, &f);
		for (size_t j = 0; j < nf; j++)
			total += f[j].misses;
		for (size_t j = 0; j < nf && tp->ntop < pa->top && err >= 0; j++) {
			struct lp_timeline_fn *o = &t->fns[k * pa->top + tp->ntop];
			if (f[j].misses <= 0)
				break;
			if (!(o->label = strdup(f[j].label)))
				err = lp_seterr(LP_ENOMEM, "out of memory");
			o->misses = f[j].misses;
			o->share = total > 0 ? f[j].misses / total : 0;
			tp->ntop += err >= 0;
		}
	}
	lp_hotspots_free(h);
	return err;
}

/* One phase: its ratio in every cache and its top functions. */
static int timeline_phase(struct lp_timeline *t, const struct lp_phases *ph, size_t k, const struct lp_profile *p,
			  const struct lp_timeline_params *pa)
{
	double line = p->line_sizes[pa->line_index], *prob = NULL;
	struct lp_profile sub;
	struct lp_statstack *ss;
	struct lp_statcache *sc;
	size_t first, n;
	int err;

	t->phases[k].info = *lp_phases_info(ph, k);
	t->phases[k].ratio = t->phase_ratio + k * t->ncaches;
	t->phases[k].top = t->fns + k * (pa->top ? pa->top : 1);
	if (!t->phases[k].info.samples) {
		for (size_t c = 0; c < t->ncaches; c++)
			t->phase_ratio[k * t->ncaches + c] = NAN;
		return 0;
	}
	if ((err = phase_models(ph, k, pa->line_index, pa->cold, pa->fill, &sub, &ss, &sc)) < 0)
		goto out;
	lp_profile_line_samples(&sub, pa->line_index, &first, &n);
	if (!(prob = malloc((n ? n : 1) * sizeof(*prob)))) {
		err = lp_seterr(LP_ENOMEM, "out of memory");
		goto out;
	}
	for (size_t c = 0; c < t->ncaches && err >= 0; c++)
		err = cache_ratio(ss, sc, line, &t->caches[c], pa->policy, &t->phase_ratio[k * t->ncaches + c],
				  c == 0 ? prob : NULL);
	if (err >= 0 && pa->top)
		err = phase_top(t, k, &sub, pa->line_index, prob, pa);
out:
	free(prob);
	phase_models_free(&sub, ss, sc);
	return err;
}

static int cmp_row(const void *a, const void *b)
{
	const struct lp_timeline_row *x = a, *y = b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->start < y->start ? -1 : x->start > y->start;
}

static int timeline_phased(struct lp_timeline *t, const struct lp_profile *p, const struct lp_timeline_params *pa)
{
	struct lp_phases *ph;
	const size_t *ivp;
	double *v = NULL;
	int err;

	if ((err = lp_phases_new(&ph, p, pa->line_index)) < 0)
		return err;
	t->nphases = lp_phases_count(ph);
	t->unphased = lp_phases_unphased(ph);
	if (!(t->phases = calloc(t->nphases, sizeof(*t->phases))) ||
	    !(t->phase_ratio = calloc(t->nphases * t->ncaches, sizeof(double))) ||
	    !(t->fns = calloc(t->nphases * (pa->top ? pa->top : 1), sizeof(*t->fns))) ||
	    !(t->rows = calloc(p->n_intervals, sizeof(*t->rows))) || !(v = calloc(t->nphases, sizeof(*v)))) {
		err = lp_seterr(LP_ENOMEM, "out of memory");
		goto out;
	}
	for (size_t k = 0; k < t->nphases && err >= 0; k++)
		err = timeline_phase(t, ph, k, p, pa);
	if (err < 0)
		goto out;
	for (size_t c = 0; c < t->ncaches; c++) {
		for (size_t k = 0; k < t->nphases; k++)
			v[k] = t->phase_ratio[k * t->ncaches + c];
		t->run[c] = lp_phases_weigh(ph, v);
	}
	ivp = lp_phases_interval_phase(ph);
	for (size_t i = 0; i < p->n_intervals; i++) {
		const struct lp_phase_interval *iv = &p->intervals[i];
		t->rows[i] = (struct lp_timeline_row){ .tid = iv->tid, .start = iv->begin[pa->line_index],
						       .accesses = iv->accesses[pa->line_index], .phase = ivp[i],
						       .rate = iv->rate, .ratio = t->phase_ratio + ivp[i] * t->ncaches };
	}
	t->nrows = p->n_intervals;
	qsort(t->rows, t->nrows, sizeof(*t->rows), cmp_row);
out:
	free(v);
	lp_phases_free(ph);
	return err;
}

/* A constant-rate profile: StatCache's windows, random replacement. */
static int timeline_windows(struct lp_timeline *t, const struct lp_profile *p, const struct lp_timeline_params *pa)
{
	double line = p->line_sizes[pa->line_index], *r = NULL;
	struct lp_statcache *sc = NULL;
	struct lp_statstack *ss = NULL;
	size_t nw;
	int err;

	if ((err = lp_statcache_new(&sc, p, pa->line_index, pa->window, pa->cold)) < 0)
		goto out;
	if (pa->fill && ((err = lp_statstack_new(&ss, p, pa->line_index, pa->window, pa->cold)) < 0 ||
			 (err = lp_statcache_set_fill_with(sc, pa->fill, ss)) < 0))
		goto out;
	nw = lp_statcache_nwindows(sc);
	if (!(t->rows = calloc(nw ? nw : 1, sizeof(*t->rows))) ||
	    !(t->row_ratio = calloc((nw ? nw : 1) * t->ncaches, sizeof(double))) ||
	    !(r = malloc((nw ? nw : 1) * sizeof(*r)))) {
		err = lp_seterr(LP_ENOMEM, "out of memory");
		goto out;
	}
	for (size_t c = 0; c < t->ncaches; c++) {
		double lines = fmax(1.0, (double)(t->caches[c].size / (uint64_t)line));
		if ((err = lp_statcache_window_ratios(sc, lines, r)) < 0 ||
		    (err = lp_statcache_curve(sc, &lines, 1, &t->run[c])) < 0)
			goto out;
		for (size_t w = 0; w < nw; w++)
			t->row_ratio[w * t->ncaches + c] = r[w];
	}
	for (size_t w = 0; w < nw; w++) {
		uint64_t start, end;
		lp_statcache_window(sc, w, &start, &end);
		t->rows[w] = (struct lp_timeline_row){ .start = start, .accesses = end - start,
						       .phase = LP_TIMELINE_NO_PHASE, .rate = p->rate,
						       .ratio = t->row_ratio + w * t->ncaches };
	}
	t->nrows = nw;
out:
	free(r);
	lp_statcache_free(sc);
	lp_statstack_free(ss);
	return err;
}

int lp_timeline_new(struct lp_timeline **out, const struct lp_profile *p, const struct lp_timeline_params *pa)
{
	struct lp_timeline *t;
	int err;

	*out = NULL;
	if (pa->line_index >= p->n_line_sizes || !pa->ncaches ||
	    (pa->policy != LP_REPORT_LRU && pa->policy != LP_REPORT_RANDOM))
		return lp_seterr(LP_EINVAL, "timeline: no such line size, no cache or no policy");
	if (!p->line_sizes[pa->line_index])
		return lp_seterr(LP_ECORRUPT, "the profile's line size is 0");
	if (!(t = calloc(1, sizeof(*t))) || !(t->caches = malloc(pa->ncaches * sizeof(*t->caches))) ||
	    !(t->run = calloc(pa->ncaches, sizeof(double)))) {
		lp_timeline_free(t);
		return lp_seterr(LP_ENOMEM, "out of memory");
	}
	memcpy(t->caches, pa->caches, pa->ncaches * sizeof(*t->caches));
	t->ncaches = pa->ncaches;
	t->policy = p->n_intervals ? pa->policy : LP_REPORT_RANDOM;
	err = p->n_intervals ? timeline_phased(t, p, pa) : timeline_windows(t, p, pa);
	if (err < 0) {
		lp_timeline_free(t);
		return err;
	}
	*out = t;
	return 0;
}

size_t lp_timeline_rows(const struct lp_timeline *t, const struct lp_timeline_row **out)
{
	*out = t->rows;
	return t->nrows;
}

size_t lp_timeline_phases(const struct lp_timeline *t, const struct lp_timeline_phase **out)
{
	*out = t->phases;
	return t->nphases;
}

size_t lp_timeline_caches(const struct lp_timeline *t, const struct lp_report_cache **out)
{
	*out = t->caches;
	return t->ncaches;
}

const double *lp_timeline_run(const struct lp_timeline *t)
{
	return t->run;
}

unsigned lp_timeline_policy(const struct lp_timeline *t)
{
	return t->policy;
}

size_t lp_timeline_unphased(const struct lp_timeline *t)
{
	return t->unphased;
}
