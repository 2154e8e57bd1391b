/* Hot spots of a profile: each sample's probability of missing a cache of
 * lp_report_info.at bytes (StatStack for LRU, else StatCache) is charged to
 * the pc of the access that reuses the line (the one that hits or misses)
 * and to the data object holding the sampled address: the heap block
 * there (named by its allocation call site, from the profile's allocation
 * events), else the global variable (symbols of the profile's mappings),
 * else "(other)" (stack, unknown). A sample stands for 1/rate line
 * accesses, so a row's misses are its summed probabilities over the rate,
 * and its 95% interval comes from their squares (lp_report_count_interval():
 * the sampling error of the row, a few samples for a pc of a short run). */
#include "report/report-internal.h"

#include "common/error.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "func (file.c:12)", "func (h.h:3) in caller (file.c:12)", "func" (the
 * symbol library's label carries the inline chain), or the module and
 * address ("gzip+0x430e", lp_symbols_pc_address()) of a stripped one;
 * *known unless it is only the address in hex. */
const char *lp_report_pc_name(struct lp_symbols *syms, uint64_t pc, char *buf, size_t len, int *known)
{
	struct lp_code_loc loc;

	*known = syms && lp_symbols_pc(syms, pc, &loc) && loc.label;
	if (*known)
		snprintf(buf, len, "%s", loc.label);
	else
		*known = lp_symbols_pc_address(syms, pc, buf, len);
	return buf;
}

struct pc_sum {
	uint64_t pc;
	double misses, misses_sq;
};

static int cmp_pc_sum(const void *a, const void *b)
{
	const struct pc_sum *x = a, *y = b;
	if (x->misses != y->misses)
		return x->misses > y->misses ? -1 : 1;
	return x->pc < y->pc ? -1 : x->pc > y->pc;
}

static int cmp_pc(const void *a, const void *b)
{
	const struct pc_sum *x = a, *y = b;
	return x->pc < y->pc ? -1 : x->pc > y->pc;
}

static double per_sample(const struct lp_report *r)
{
	return r->p->rate > 0 ? r->p->rate : 1;
}

/* Adds per recorded sample: more than 1 where a phase-guided profile's
 * samples also stand for their phases' recurrences (the copies of one
 * sample vary together, so its square counts that many times). */
static double copies(const struct lp_report *r)
{
	return r->info.recorded && r->info.samples > r->info.recorded ? (double)r->info.samples / r->info.recorded
								       : 1.0;
}

void lp_report_scale_row(const struct lp_report *r, double sum, double sum_sq, double *misses, double *sq,
			 double *lo, double *hi)
{
	double s = per_sample(r);

	*misses = sum / s;
	*sq = sum_sq * copies(r) / (s * s);
	lp_report_count_interval(*misses, *sq, r->info.sample_weight, lo, hi);
}

static int hot_pcs(struct lp_report *r, const double *prob, size_t top, struct lp_symbols *syms)
{
	size_t n = r->info.samples, m = 0, keep = 0;
	struct pc_sum *rows = malloc((n + 1) * sizeof(*rows));
	double total = 0;

	if (!rows)
		return lp_seterr(LP_ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++) {
		rows[i].pc = r->p->samples[r->first + i].reuse_pc;
		rows[i].misses = prob[i];
		rows[i].misses_sq = prob[i] * prob[i];
		total += prob[i];
	}
	qsort(rows, n, sizeof(*rows), cmp_pc);
	for (size_t i = 0; i < n; i++) {
		if (m && rows[m - 1].pc == rows[i].pc) {
			rows[m - 1].misses += rows[i].misses;
			rows[m - 1].misses_sq += rows[i].misses_sq;
		} else
			rows[m++] = rows[i];
	}
	qsort(rows, m, sizeof(*rows), cmp_pc_sum);
	while (keep < m && keep < top && rows[keep].misses > 0)
		keep++;
	r->info.total_misses = total;
	if (!(r->pcs = calloc(keep ? keep : 1, sizeof(*r->pcs)))) {
		free(rows);
		return lp_seterr(LP_ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < keep; i++) {
		struct lp_report_pc *pc = &r->pcs[r->npcs++];
		char name[512];
		int known;

		pc->pc = rows[i].pc;
		lp_report_scale_row(r, rows[i].misses, rows[i].misses_sq, &pc->misses, &pc->misses_sq, &pc->misses_lo,
			  &pc->misses_hi);
		pc->share = rows[i].misses / total;
		lp_report_pc_name(syms, rows[i].pc, name, sizeof(name), &known);
		if (known && !(pc->name = strdup(name))) {
			free(rows);
			return lp_seterr(LP_ENOMEM, "out of memory");
		}
	}
	free(rows);
	return 0;
}

struct object_sum {
	char name[160];
	double misses, misses_sq;
};

static int cmp_object_sum(const void *a, const void *b)
{
	const struct object_sum *x = a, *y = b;
	if (x->misses != y->misses)
		return x->misses > y->misses ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int cmp_object_name(const void *a, const void *b)
{
	return strcmp(((const struct object_sum *)a)->name, ((const struct object_sum *)b)->name);
}

/* The name of the object that sample s's miss touches: the one at the
 * reuse's address (the access at reuse_pc, which misses: another variable
 * of the line than the sampled access's, where two share it), else at the
 * sampled address (a dangling sample, a profile without reuse addresses),
 * and among the heap blocks that held that address, the one alive at the
 * reuse: a block written once and freed, whose address the next malloc
 * gives to a block swept over and over, has its last accesses reused by
 * the second block's first sweep, and those misses are the second's
 * (charged to the first, it had 1 400 misses where simulation has none).
 * A thread-local variable of the sample's thread, else a heap block by the
 * first frame of its allocation's call stack outside the allocator's
 * wrappers (lp_symbols_alloc_site), else a global, else "(other)". */
void lp_report_object_name(const struct lp_objects *objs, struct lp_symbols *syms, const struct lp_sample *s,
			   char *buf, size_t len)
{
	const struct lp_alloc_stack *stack;
	uint64_t start, size, site, image, addr = s->reuse_addr ? s->reuse_addr : s->addr;
	/* the reuse's time in the sampling thread's clock (the events' own
	 * in sample mode): the first access after `reuse` others */
	uint64_t when = s->reuse == LP_REUSE_DANGLING || s->time > UINT64_MAX - 2 - s->reuse ? s->time
											     : s->time + s->reuse + 1;
	struct lp_alloc_site as;
	struct lp_data_sym ds;
	const char *tls;
	char nb[150];

	/* before the heap: a worker's TLS can lie in a block its runtime
	 * allocated for the thread's stack */
	if (syms && lp_objects_find_tls(objs, addr, s->tid, &start, &image) &&
	    lp_symbols_tls(syms, image, addr - start, &tls)) {
		snprintf(buf, len, "%s", tls);
	} else if (lp_objects_find_stack(objs, addr, when, s->tid, &start, &size, &site, &stack)) {
		lp_symbols_alloc_site(syms, stack ? stack->frames : &site, stack ? stack->n : 1, &as);
		lp_symbols_alloc_site_name(syms, &as, nb, sizeof(nb));
		snprintf(buf, len, "heap@%s", nb);
	} else if (syms && lp_symbols_data(syms, addr, &ds) && ds.name) {
		snprintf(buf, len, "%s", lp_symbols_readable(syms, ds.name));
	} else {
		snprintf(buf, len, "(other)");
	}
}

/* Sums the samples with a miss probability by object name, sorting the
 * names: a profile holds at most a few hundred thousand samples. */
static int hot_objects(struct lp_report *r, const struct lp_objects *objs, const double *prob, size_t top,
		       struct lp_symbols *syms)
{
	size_t n = r->info.samples, m = 0, k = 0;
	struct object_sum *rows = malloc((n ? n : 1) * sizeof(*rows));
	double total = 0;
	int err = 0;

	if (!rows)
		return lp_seterr(LP_ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++) {
		if (prob[i] <= 0)
			continue;
		lp_report_object_name(objs, syms, &r->p->samples[r->first + i], rows[m].name, sizeof(rows[m].name));
		rows[m].misses_sq = prob[i] * prob[i];
		rows[m++].misses = prob[i];
		total += prob[i];
	}
	qsort(rows, m, sizeof(*rows), cmp_object_name);
	for (size_t i = 0; i < m; i++) {
		if (k && !strcmp(rows[k - 1].name, rows[i].name)) {
			rows[k - 1].misses += rows[i].misses;
			rows[k - 1].misses_sq += rows[i].misses_sq;
		} else
			rows[k++] = rows[i];
	}
	qsort(rows, k, sizeof(*rows), cmp_object_sum);
	if (k > top)
		k = top;
	if (!(r->objects = calloc(k ? k : 1, sizeof(*r->objects)))) {
		err = lp_seterr(LP_ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < k; i++) {
		struct lp_report_object *o = &r->objects[r->nobjects];
		if (!(o->name = strdup(rows[i].name))) {
			err = lp_seterr(LP_ENOMEM, "out of memory");
			goto out;
		}
		lp_report_scale_row(r, rows[i].misses, rows[i].misses_sq, &o->misses, &o->misses_sq, &o->misses_lo,
			  &o->misses_hi);
		o->share = rows[i].misses / total;
		r->nobjects++;
	}
out:
	free(rows);
	return err;
}

/* Every sample's reuse, at its pc, by source line and function: the
 * reuse is one line access (non-cold: every access but a line's first is
 * the reuse of exactly one other), so a pc's samples over the rate
 * estimate its line accesses too. */
static int hot_sources(struct lp_report *r, const double *prob, struct lp_symbols *syms)
{
	double scale = 1 / per_sample(r);
	int err;

	if ((err = lp_hotspots_new_sampled(&r->hotspots, syms, 1 / per_sample(r), copies(r))) < 0)
		return err;
	for (size_t i = 0; i < r->info.samples; i++)
		if ((err = lp_hotspots_add(r->hotspots, r->p->samples[r->first + i].reuse_pc, scale,
					   prob[i] * scale)) < 0)
			return err;
	return lp_hotspots_finish(r->hotspots);
}

int lp_report_hot(struct lp_report *r, const struct lp_report_params *pa)
{
	uint64_t lines = (uint64_t)fmax(1.0, (double)r->info.at / r->info.line);
	double *prob = malloc((r->info.samples + 1) * sizeof(*prob));
	struct lp_objects *objs = NULL;
	int err;

	if (!prob)
		return lp_seterr(LP_ENOMEM, "out of memory");
	r->info.sample_weight = copies(r) / per_sample(r);
	if (pa->policies & LP_REPORT_LRU) {
		uint64_t sets = 1, ways = lines;

		if (pa->at_ways)
			lp_report_geometry(r, r->info.at, pa->at_ways, &sets, &ways);
		err = lp_statstack_sample_miss(r->ss, sets, ways, prob);
	} else
		err = lp_statcache_sample_miss(r->sc, (double)lines, prob);
	if (err < 0 || (err = hot_pcs(r, prob, pa->top, pa->syms)) < 0 ||
	    (err = hot_sources(r, prob, pa->syms)) < 0 ||
	    (err = lp_objects_new(&objs, r->p)) < 0)
		goto out;
	r->info.heap_blocks = lp_objects_count(objs);
	r->info.run_allocs = lp_objects_run_allocs(objs);
	r->info.touched_blocks_only = (r->p->alloc_flags & LP_ALLOCS_TOUCHED) != 0;
	if ((err = hot_objects(r, objs, prob, pa->top, pa->syms)) < 0)
		goto out;
	err = lp_report_pairs_compute(r, objs, prob, pa->top, pa->syms);
out:
	lp_objects_free(objs);
	free(prob);
	return err;
}

void lp_report_hot_release(struct lp_report *r)
{
	for (size_t i = 0; i < r->npcs; i++)
		free((char *)r->pcs[i].name);
	for (size_t i = 0; i < r->nobjects; i++)
		free((char *)r->objects[i].name);
	free(r->pcs);
	free(r->objects);
	lp_report_pairs_release(r);
	lp_hotspots_free(r->hotspots);
}

size_t lp_report_pcs(const struct lp_report *r, const struct lp_report_pc **out)
{
	*out = r->pcs;
	return r->npcs;
}

size_t lp_report_objects(const struct lp_report *r, const struct lp_report_object **out)
{
	*out = r->objects;
	return r->nobjects;
}

const struct lp_hotspots *lp_report_hotspots(const struct lp_report *r)
{
	return r->hotspots;
}
