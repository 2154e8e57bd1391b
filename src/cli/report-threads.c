/* report --threads in text: the threads' references, samples, line
 * accesses and misses in each cache (lp_report_threads()), the busiest
 * rows of a run of thousands of threads (docs/commands/report.md, "Per
 * thread"). CSV and JSON are in cmd-report.c. */
#include "cli.h"

#include <locprof/report.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

/* A text table of thousands of threads (a server, a test of thread churn)
 * hides the few that matter: the busiest TEXT_THREADS are shown, in thread
 * order, and the rest summed in one line; CSV and JSON list every one. */
#define TEXT_THREADS 32

static int busier_thread(const void *a, const void *b)
{
	const struct lp_report_thread *x = *(const struct lp_report_thread *const *)a;
	const struct lp_report_thread *y = *(const struct lp_report_thread *const *)b;

	if (x->references != y->references)
		return x->references < y->references ? 1 : -1;
	if (x->samples != y->samples)
		return x->samples < y->samples ? 1 : -1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static int thread_order(const void *a, const void *b)
{
	const struct lp_report_thread *x = *(const struct lp_report_thread *const *)a;
	const struct lp_report_thread *y = *(const struct lp_report_thread *const *)b;

	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static void text_thread_row(const struct lp_report_thread *t, size_t nc)
{
	printf("%8" PRIu32 " %14" PRIu64 " %9zu %14.0f", t->tid, t->references, t->samples, t->accesses);
	for (size_t k = 0; k < nc; k++)
		printf(" %14.0f", t->misses[k]);
	printf("\n");
}

void cli_text_threads(const struct lp_report *r)
{
	const struct lp_report_thread *t, **shown;
	const struct lp_report_cache *c;
	size_t nt = lp_report_threads(r, &t), nc = lp_report_thread_caches(r, &c);
	size_t ns = nt < TEXT_THREADS ? nt : TEXT_THREADS;
	uint64_t rest_refs = 0;
	size_t rest_samples = 0;

	printf("\nper thread (line accesses: its references and the run's line accesses per reference; misses: "
	       "its samples' miss ratio predicted by LRU, times its line accesses):\n");
	printf("%8s %14s %9s %14s", "thread", "references", "samples", "line accesses");
	for (size_t k = 0; k < nc; k++)
		printf(" %14s", c[k].label);
	printf("\n");
	if (!(shown = malloc((nt ? nt : 1) * sizeof(*shown)))) { /* every row then */
		for (size_t i = 0; i < nt; i++)
			text_thread_row(&t[i], nc);
		return;
	}
	for (size_t i = 0; i < nt; i++)
		shown[i] = &t[i];
	qsort(shown, nt, sizeof(*shown), busier_thread);
	for (size_t i = ns; i < nt; i++) {
		rest_refs += shown[i]->references;
		rest_samples += shown[i]->samples;
	}
	qsort(shown, ns, sizeof(*shown), thread_order);
	for (size_t i = 0; i < ns; i++)
		text_thread_row(shown[i], nc);
	if (nt > ns)
		printf("%8s %14" PRIu64 " %9zu  (%zu threads more, none with more references than those above; "
		       "--format csv lists every thread)\n",
		       "...", rest_refs, rest_samples, nt - ns);
	free(shown);
}
