/* The threads-and-caches tables of a profile's report (params.share):
 * the miss ratios of placements of the threads onto caches (all on one
 * shared cache, two caches of consecutive threads, a private cache each),
 * each thread's private cache, and the coherence misses by data object
 * and pc, true and false sharing apart (model-share.c computes the
 * ratios; this file picks the placements and groups the samples).
 *
 * Assumptions: the coherence tables count the samples whose reuse was
 * invalidated by another thread's write (lp_sample.coh TRUE or FALSE),
 * each standing for 1/rate line accesses, as coherence misses of private
 * caches large enough to hold the line otherwise; the object is the one
 * holding the sampled address; the pc is that of the reuse, the access
 * that misses. */
#include "report/report-internal.h"

#include "common/error.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The placements shown: one cache for all, two caches (with 3 threads or
 * more: with 2 it is the private one), one per thread. */
static int placements(uint32_t nthreads, uint32_t groups[3], const char *names[3])
{
	int n = 0;

	groups[n] = 1;
	names[n++] = "shared";
	if (nthreads >= 3) {
		groups[n] = 2;
		names[n++] = "2 caches";
	}
	if (nthreads >= 2) {
		groups[n] = nthreads;
		names[n++] = "private";
	}
	return n;
}

/* One placement's ratios on a profile, LRU at each size and then random:
 * the model behind an interval (lp_model_fn). group < 0: the placement's
 * caches together; else group's cache alone. */
struct place_model {
	unsigned li;
	const struct lp_share_placement *pl;
	int64_t group;
	const double *lines;
	size_t n;
	int cold;
};

static int place_values(const struct lp_profile *p, void *arg, double *out)
{
	const struct place_model *m = arg;
	struct lp_share_ratio *o = calloc(m->n ? m->n : 1, sizeof(*o));
	int err;

	if (!o)
		return lp_seterr(LP_ENOMEM, "out of memory");
	err = m->group < 0 ? lp_share_placement_curve(p, m->li, m->pl, m->lines, m->n, m->cold, o)
			   : lp_share_group_curve(p, m->li, m->pl, (uint32_t)m->group, m->lines, m->n, m->cold, o);
	for (size_t i = 0; err >= 0 && i < m->n; i++) {
		out[i] = o[i].lru;
		out[m->n + i] = o[i].random;
	}
	free(o);
	return err < 0 ? err : 0;
}

/* The intervals of model m's ratios est (iv[0, n): LRU, iv[n, 2n):
 * random) as the curves get theirs (report-profile.c): resamples of the
 * profile, with a binomial floor of `samples` samples, and the
 * steepness check at the slack sizes around each size. Without
 * resamples, each interval is its ratio alone. */
static int place_intervals(const struct lp_report *r, const struct lp_report_params *pa,
			   const struct place_model *m, const double *est, size_t samples, struct lp_interval *iv)
{
	enum { K = 2 * LP_REPORT_SLACK_STEPS + 1 };
	size_t n = m->n;
	struct lp_interval_params ip = { .li = r->li, .resamples = pa->resamples, .seed = pa->seed,
					 .floor_samples = samples, .jobs = pa->jobs };
	struct place_model slack = *m;
	double *lines = NULL, *w = NULL;
	int err;

	for (size_t j = 0; j < 2 * n; j++)
		iv[j] = (struct lp_interval){ .lo = est[j], .hi = est[j], .below = NAN, .above = NAN };
	if (!pa->resamples || !n)
		return 0;
	if ((err = lp_model_intervals(r->p, &ip, place_values, (void *)m, est, 2 * n, iv)) < 0)
		return err;
	if (!(lines = malloc(K * n * sizeof(*lines))) || !(w = malloc(2 * K * n * sizeof(*w)))) {
		err = lp_seterr(LP_ENOMEM, "out of memory");
		goto out;
	}
	for (int k = 0; k < K; k++)
		for (size_t i = 0; i < n; i++)
			lines[k * n + i] = m->lines[i] * lp_report_slack(k);
	slack.lines = lines;
	slack.n = K * n;
	if ((err = place_values(r->p, &slack, w)) < 0)
		goto out;
	lp_report_widen_steep(w, n, 2, est, iv, NULL);
out:
	free(lines);
	free(w);
	return err;
}

static int placement_rows(struct lp_report *r, const struct lp_report_params *pa, const double *lines)
{
	uint32_t groups[3];
	const char *names[3];
	int np = placements(r->info.threads, groups, names), err = 0;
	size_t n = pa->nsizes;
	double *est = malloc((2 * n + 1) * sizeof(*est));
	struct lp_interval *iv = malloc((2 * n + 1) * sizeof(*iv));
	struct lp_share_ratio *out = calloc(n ? n : 1, sizeof(*out));

	if (!est || !iv || !out || !(r->placements = calloc((size_t)np * n + 1, sizeof(*r->placements)))) {
		err = lp_seterr(LP_ENOMEM, "out of memory");
		goto done;
	}
	for (int k = 0; k < np; k++) {
		struct lp_share_placement pl;
		struct place_model m = { r->li, &pl, -1, lines, n, pa->cold };
		if ((err = lp_share_placement_split(&pl, r->info.threads, groups[k])) < 0)
			break;
		err = lp_share_placement_curve(r->p, r->li, &pl, lines, n, pa->cold, out);
		for (size_t i = 0; !err && i < n; i++) {
			est[i] = out[i].lru;
			est[n + i] = out[i].random;
		}
		if (!err)
			err = place_intervals(r, pa, &m, est, 0, iv);
		for (size_t i = 0; !err && i < n; i++)
			r->placements[r->nplacements++] = (struct lp_report_placement){
				.placement = names[k], .caches = pl.ngroups, .size = pa->sizes[i],
				.lru = out[i].lru, .random = out[i].random,
				.lru_coh = out[i].lru_coh, .random_coh = out[i].random_coh,
				.lru_iv = iv[i], .random_iv = iv[n + i],
			};
		lp_share_placement_release(&pl);
		if (err)
			break;
	}
done:
	free(est);
	free(iv);
	free(out);
	return err;
}

/* Thread t's samples of the report's line size. */
static size_t thread_samples(const struct lp_report *r, uint32_t t)
{
	size_t first, n, k = 0;

	lp_profile_line_samples(r->p, r->li, &first, &n);
	for (size_t i = first; i < first + n; i++)
		k += r->p->samples[i].tid == t;
	return k;
}

static int thread_rows(struct lp_report *r, const struct lp_report_params *pa, const double *lines)
{
	struct lp_share_placement pl;
	size_t n = pa->nsizes;
	struct lp_share_ratio *out = calloc(n ? n : 1, sizeof(*out));
	double *est = malloc((2 * n + 1) * sizeof(*est));
	struct lp_interval *iv = malloc((2 * n + 1) * sizeof(*iv));
	uint32_t nt = r->info.threads;
	int err;

	if (!out || !est || !iv || !(r->thread_curves = calloc((size_t)nt * n + 1, sizeof(*r->thread_curves)))) {
		err = lp_seterr(LP_ENOMEM, "out of memory");
		goto done;
	}
	if ((err = lp_share_placement_split(&pl, nt, nt)) < 0)
		goto done;
	for (uint32_t t = 0; t < nt && !err; t++) {
		double share = lp_share_group_share(r->p, r->li, &pl, t);
		struct place_model m = { r->li, &pl, t, lines, n, pa->cold };
		size_t own = thread_samples(r, t);
		if (!(share > 0) || !own)
			continue; /* no sample: nothing to say of its cache (not 0 misses) */
		err = lp_share_group_curve(r->p, r->li, &pl, t, lines, n, pa->cold, out);
		for (size_t i = 0; !err && i < n; i++) {
			est[i] = out[i].lru;
			est[n + i] = out[i].random;
		}
		if (!err)
			err = place_intervals(r, pa, &m, est, own, iv);
		for (size_t i = 0; !err && i < n; i++)
			r->thread_curves[r->nthread_curves++] = (struct lp_report_thread_curve){
				.tid = t, .share = share, .size = pa->sizes[i],
				.lru = out[i].lru, .random = out[i].random, .lru_coh = out[i].lru_coh,
				.lru_iv = iv[i], .random_iv = iv[n + i],
			};
	}
	lp_share_placement_release(&pl);
done:
	free(out);
	free(est);
	free(iv);
	return err;
}

/* ---- coherence misses by object and pc ---------------------------------- */

struct coh_row {
	char object[160];
	uint64_t pc, wpc;
	int false_sharing;
	uint64_t threads, writers; /* bit t: thread t (mod 64) */
	size_t samples;
};

static int cmp_coh_key(const void *a, const void *b)
{
	const struct coh_row *x = a, *y = b;
	int c = x->false_sharing != y->false_sharing ? y->false_sharing - x->false_sharing
						     : strcmp(x->object, y->object);
	if (c)
		return c;
	if (x->pc != y->pc)
		return x->pc < y->pc ? -1 : 1;
	return x->wpc < y->wpc ? -1 : x->wpc > y->wpc;
}

int lp_report_sharing_rank(const void *a, const void *b)
{
	const struct lp_report_sharing *x = a, *y = b;
	if (x->false_sharing != y->false_sharing)
		return y->false_sharing - x->false_sharing;
	if (x->misses != y->misses)
		return x->misses > y->misses ? -1 : 1;
	return strcmp(x->object, y->object);
}

/* "0,2,5" of a set of threads. */
static void thread_list(uint64_t set, char *buf, size_t len)
{
	size_t at = 0;

	buf[0] = 0;
	for (int t = 0; t < 64 && at + 4 < len; t++)
		if (set >> t & 1)
			at += (size_t)snprintf(buf + at, len - at, "%s%d", at ? "," : "", t);
}

static int sharing_rows(struct lp_report *r, const struct lp_report_params *pa)
{
	const struct lp_profile *p = r->p;
	struct lp_objects *objs = NULL;
	struct coh_row *rows = NULL;
	size_t n = 0, m = 0;
	int err;

	if ((err = lp_objects_new(&objs, p)) < 0)
		return err;
	if (!(rows = calloc(r->info.samples + 1, sizeof(*rows)))) {
		err = lp_seterr(LP_ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < r->info.samples; i++) {
		const struct lp_sample *s = &p->samples[r->first + i];
		if (s->coh != LP_COH_TRUE && s->coh != LP_COH_FALSE)
			continue;
		struct coh_row *x = &rows[n++];
		lp_report_object_name(objs, pa->syms, s, x->object, sizeof(x->object));
		x->pc = s->reuse_pc;
		x->wpc = s->wpc;
		x->false_sharing = s->coh == LP_COH_FALSE;
		x->threads = 1ull << (s->tid & 63);
		x->writers = 1ull << (s->wtid & 63);
		x->samples = 1;
	}
	if (n > 1)
		qsort(rows, n, sizeof(*rows), cmp_coh_key);
	for (size_t i = 0; i < n; i++) { /* merge equal keys */
		if (m && !cmp_coh_key(&rows[m - 1], &rows[i])) {
			rows[m - 1].threads |= rows[i].threads;
			rows[m - 1].writers |= rows[i].writers;
			rows[m - 1].samples++;
		} else {
			rows[m++] = rows[i];
		}
	}
	if (!(r->sharing = calloc(m + 1, sizeof(*r->sharing)))) {
		err = lp_seterr(LP_ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < m; i++) {
		struct lp_report_sharing *o = &r->sharing[i];
		char name[300];
		int known;
		o->false_sharing = rows[i].false_sharing;
		o->pc = rows[i].pc;
		o->wpc = rows[i].wpc;
		o->samples = rows[i].samples;
		o->misses = (double)rows[i].samples / p->rate;
		o->share = r->info.samples ? (double)rows[i].samples / (double)r->info.samples : 0;
		thread_list(rows[i].threads, o->threads, sizeof(o->threads));
		thread_list(rows[i].writers, o->writers, sizeof(o->writers));
		if (!(o->object = strdup(rows[i].object)) ||
		    !(o->pc_name = strdup(lp_report_pc_name(pa->syms, o->pc, name, sizeof(name), &known))) ||
		    !(o->wpc_name = strdup(lp_report_pc_name(pa->syms, o->wpc, name, sizeof(name), &known)))) {
			r->nsharing = i + 1;
			err = lp_seterr(LP_ENOMEM, "out of memory");
			goto out;
		}
		r->nsharing = i + 1;
	}
	qsort(r->sharing, r->nsharing, sizeof(*r->sharing), lp_report_sharing_rank);
out:
	free(rows);
	lp_objects_free(objs);
	return err;
}

int lp_report_share_compute(struct lp_report *r, const struct lp_report_params *pa)
{
	double *lines = malloc((pa->nsizes ? pa->nsizes : 1) * sizeof(*lines));
	int err;

	if (!lines)
		return lp_seterr(LP_ENOMEM, "out of memory");
	for (size_t i = 0; i < pa->nsizes; i++)
		lines[i] = fmax(1.0, (double)pa->sizes[i] / r->info.line);
	r->info.shared_time = r->p->shared;
	r->info.threads = lp_share_threads(r->p);
	r->info.together = lp_share_together(r->p, r->li);
	if ((err = placement_rows(r, pa, lines)) < 0 || (err = thread_rows(r, pa, lines)) < 0 ||
	    (err = sharing_rows(r, pa)) < 0)
		goto out;
out:
	free(lines);
	return err;
}

void lp_report_share_release(struct lp_report *r)
{
	for (size_t i = 0; i < r->nsharing; i++) {
		free((char *)r->sharing[i].object);
		free((char *)r->sharing[i].pc_name);
		free((char *)r->sharing[i].wpc_name);
	}
	free(r->sharing);
	free(r->placements);
	free(r->thread_curves);
	r->sharing = NULL;
	r->placements = NULL;
	r->thread_curves = NULL;
	r->nsharing = r->nplacements = r->nthread_curves = 0;
}

size_t lp_report_placements(const struct lp_report *r, const struct lp_report_placement **out)
{
	*out = r->placements;
	return r->nplacements;
}

size_t lp_report_thread_curves(const struct lp_report *r, const struct lp_report_thread_curve **out)
{
	*out = r->thread_curves;
	return r->nthread_curves;
}

size_t lp_report_sharing(const struct lp_report *r, const struct lp_report_sharing **out)
{
	*out = r->sharing;
	return r->nsharing;
}
