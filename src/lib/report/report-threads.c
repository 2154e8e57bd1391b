/* The per-thread table of a profile's report: each thread's references
 * (the run's exact count, where the profile has one per thread), its
 * samples and the line accesses they stand for, and its predicted LRU
 * misses in each named cache (StatStack's per-sample miss probability,
 * set-associative by the placement model, summed over the thread's
 * samples).
 *
 * Assumptions: a sample belongs to the thread of the sampled access; its
 * reuse (the access that hits or misses) is charged there too, even when
 * another thread made it. A sample stands for 1/rate line accesses of its
 * thread, as of the whole run. */
#include "report/report-internal.h"

#include "common/error.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

/* The threads of the samples and of the per-thread counts, sorted. */
static int thread_ids(const struct lp_report *r, uint32_t **out, size_t *n)
{
	const struct lp_profile *p = r->p;
	size_t m = 0, k = 0;
	uint32_t *ids = malloc((r->info.samples + p->n_threads + 1) * sizeof(*ids));

	if (!ids)
		return lp_seterr(LP_ENOMEM, "out of memory");
	for (size_t i = 0; i < r->info.samples; i++)
		ids[m++] = p->samples[r->first + i].tid;
	for (uint32_t t = 0; t < p->n_threads; t++)
		if (p->thread_refs[t])
			ids[m++] = t;
	qsort(ids, m, sizeof(*ids), cmp_u32);
	for (size_t i = 0; i < m; i++)
		if (!k || ids[k - 1] != ids[i])
			ids[k++] = ids[i];
	*out = ids;
	*n = k;
	return 0;
}

static size_t thread_index(const struct lp_report *r, uint32_t tid)
{
	size_t lo = 0, hi = r->nthreads;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (r->threads[mid].tid < tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	assert(lo < r->nthreads && r->threads[lo].tid == tid);
	return lo;
}

/* The named caches, or the hot spots' cache. */
static int thread_caches(struct lp_report *r, const struct lp_report_params *pa)
{
	size_t n = r->ncaches ? r->ncaches : 1;

	if (!(r->thread_caches = calloc(n, sizeof(*r->thread_caches))))
		return lp_seterr(LP_ENOMEM, "out of memory");
	if (r->ncaches) {
		memcpy(r->thread_caches, r->caches, n * sizeof(*r->caches));
	} else {
		struct lp_report_cache *c = &r->thread_caches[0];
		c->size = r->info.at;
		c->ways = pa->at_ways;
		c->line = (uint64_t)r->info.line;
		/* "32K:8:64", as the cache SPEC is written */
		if (c->size % (1u << 20) == 0)
			snprintf(c->label, sizeof(c->label), "%lluM", (unsigned long long)(c->size >> 20));
		else if (c->size % 1024 == 0)
			snprintf(c->label, sizeof(c->label), "%lluK", (unsigned long long)(c->size >> 10));
		else
			snprintf(c->label, sizeof(c->label), "%llu", (unsigned long long)c->size);
		/* a fully associative one (ways 0) as "32K:full:64" */
		if (c->ways)
			snprintf(c->label + strlen(c->label), sizeof(c->label) - strlen(c->label), ":%llu:%llu",
				 (unsigned long long)c->ways, (unsigned long long)c->line);
		else
			snprintf(c->label + strlen(c->label), sizeof(c->label) - strlen(c->label), ":full:%llu",
				 (unsigned long long)c->line);
	}
	r->nthread_caches = n;
	return 0;
}

/* A thread's line accesses: its references (exact, where the profile
 * counts them per thread) times the run's line accesses per reference
 * (the references that straddle two lines, as a share of the run's), else
 * its samples over the rate. zstd's main thread had 11 samples, 11 000
 * line accesses by them, against 8 281 references. */
static double thread_accesses(const struct lp_report *r, const struct lp_report_thread *th, double scale)
{
	if (th->references && r->info.references && r->info.accesses >= r->info.references &&
	    !r->info.accesses_partial)
		return (double)th->references * (double)r->info.accesses / (double)r->info.references;
	return (double)th->samples * scale;
}

int lp_report_threads_compute(struct lp_report *r, const struct lp_report_params *pa)
{
	const struct lp_profile *p = r->p;
	double *prob = NULL, scale = 1 / (p->rate > 0 ? p->rate : 1);
	uint32_t *ids = NULL;
	size_t n = 0;
	int err;

	if ((err = thread_caches(r, pa)) < 0 || (err = thread_ids(r, &ids, &n)) < 0)
		return err;
	r->threads = calloc(n + 1, sizeof(*r->threads));
	r->thread_misses = calloc(n * r->nthread_caches + 1, sizeof(*r->thread_misses));
	prob = malloc((r->info.samples + 1) * sizeof(*prob));
	if (!r->threads || !r->thread_misses || !prob) {
		err = lp_seterr(LP_ENOMEM, "out of memory");
		goto out;
	}
	r->nthreads = n;
	for (size_t t = 0; t < n; t++) {
		struct lp_report_thread *th = &r->threads[t];
		th->tid = ids[t];
		th->references = ids[t] < p->n_threads ? p->thread_refs[ids[t]] : 0;
		th->misses = r->thread_misses + t * r->nthread_caches;
	}
	for (size_t i = 0; i < r->info.samples; i++)
		r->threads[thread_index(r, p->samples[r->first + i].tid)].samples++;
	for (size_t t = 0; t < n; t++)
		r->threads[t].accesses = thread_accesses(r, &r->threads[t], scale);
	for (size_t c = 0; c < r->nthread_caches; c++) {
		uint64_t sets, ways;

		lp_report_geometry(r, r->thread_caches[c].size, r->thread_caches[c].ways, &sets, &ways);
		if ((err = lp_statstack_sample_miss(r->ss, sets, ways, prob)) < 0)
			goto out;
		for (size_t i = 0; i < r->info.samples; i++) {
			size_t k = thread_index(r, p->samples[r->first + i].tid);
			/* the thread's miss ratio over its samples, times its
			 * line accesses */
			r->thread_misses[k * r->nthread_caches + c] +=
				prob[i] * r->threads[k].accesses / (double)r->threads[k].samples;
		}
	}
out:
	free(prob);
	free(ids);
	return err;
}

void lp_report_threads_release(struct lp_report *r)
{
	free(r->threads);
	free(r->thread_misses);
	free(r->thread_caches);
}

size_t lp_report_threads(const struct lp_report *r, const struct lp_report_thread **out)
{
	*out = r->threads;
	return r->nthreads;
}

size_t lp_report_thread_caches(const struct lp_report *r, const struct lp_report_cache **out)
{
	*out = r->thread_caches;
	return r->nthread_caches;
}
