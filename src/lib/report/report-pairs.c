/* The pcs of each hot data object, MemSpy's data object x code view: the
 * samples that lp_report_hot charged to one of the kept objects (by the
 * same name) are summed again by their reuse pc, the pc of the access that
 * hits or misses, and each object keeps its top pcs. Shares are of the
 * object's misses, so a row says which code makes that object miss. */
#include "report/report-internal.h"

#include "common/error.h"

#include <stdlib.h>
#include <string.h>

struct pair_sum {
	size_t object;
	uint64_t pc;
	double misses, misses_sq;
};

static int cmp_object_pc(const void *a, const void *b)
{
	const struct pair_sum *x = a, *y = b;
	if (x->object != y->object)
		return x->object < y->object ? -1 : 1;
	return x->pc < y->pc ? -1 : x->pc > y->pc;
}

static int cmp_object_misses(const void *a, const void *b)
{
	const struct pair_sum *x = a, *y = b;
	if (x->object != y->object)
		return x->object < y->object ? -1 : 1;
	if (x->misses != y->misses)
		return x->misses > y->misses ? -1 : 1;
	return x->pc < y->pc ? -1 : x->pc > y->pc;
}

struct object_index {
	const char *name;
	size_t object;
};

static int cmp_index_name(const void *a, const void *b)
{
	return strcmp(((const struct object_index *)a)->name, ((const struct object_index *)b)->name);
}

/* Each sample with a miss probability on a kept object, as (object, pc,
 * probability); *n of them. */
static struct pair_sum *charge_samples(struct lp_report *r, const struct lp_objects *objs, const double *prob,
				       struct lp_symbols *syms, size_t *n)
{
	struct object_index *index = malloc((r->nobjects ? r->nobjects : 1) * sizeof(*index));
	struct pair_sum *rows = malloc((r->info.samples ? r->info.samples : 1) * sizeof(*rows));

	*n = 0;
	if (!index || !rows) {
		free(index);
		free(rows);
		return NULL;
	}
	for (size_t k = 0; k < r->nobjects; k++)
		index[k] = (struct object_index){ r->objects[k].name, k };
	qsort(index, r->nobjects, sizeof(*index), cmp_index_name);
	for (size_t i = 0; i < r->info.samples; i++) {
		const struct lp_sample *s = &r->p->samples[r->first + i];
		struct object_index key, *hit;
		char name[160]; /* as report-hot.c's object rows */

		if (prob[i] <= 0)
			continue;
		lp_report_object_name(objs, syms, s, name, sizeof(name));
		key.name = name;
		if (!(hit = bsearch(&key, index, r->nobjects, sizeof(*index), cmp_index_name)))
			continue;
		rows[(*n)++] = (struct pair_sum){ hit->object, s->reuse_pc, prob[i], prob[i] * prob[i] };
	}
	free(index);
	return rows;
}

int lp_report_pairs_compute(struct lp_report *r, const struct lp_objects *objs, const double *prob, size_t top,
			    struct lp_symbols *syms)
{
	size_t n, m = 0, kept = 0;
	struct pair_sum *rows = charge_samples(r, objs, prob, syms, &n);

	if (!rows)
		return lp_seterr(LP_ENOMEM, "out of memory");
	qsort(rows, n, sizeof(*rows), cmp_object_pc);
	for (size_t i = 0; i < n; i++) {
		if (m && rows[m - 1].object == rows[i].object && rows[m - 1].pc == rows[i].pc) {
			rows[m - 1].misses += rows[i].misses;
			rows[m - 1].misses_sq += rows[i].misses_sq;
		} else
			rows[m++] = rows[i];
	}
	qsort(rows, m, sizeof(*rows), cmp_object_misses);
	if (!(r->pairs = calloc(m ? m : 1, sizeof(*r->pairs)))) {
		free(rows);
		return lp_seterr(LP_ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < m; i++) {
		struct lp_report_pair *pr;
		const struct lp_report_object *o = &r->objects[rows[i].object];
		char name[512];
		int known;

		kept = i && rows[i - 1].object == rows[i].object ? kept + 1 : 1;
		if (kept > top)
			continue;
		pr = &r->pairs[r->npairs++];
		pr->object = rows[i].object;
		pr->pc = rows[i].pc;
		lp_report_scale_row(r, rows[i].misses, rows[i].misses_sq, &pr->misses, &pr->misses_sq, &pr->misses_lo,
				    &pr->misses_hi);
		pr->share = o->misses > 0 ? pr->misses / o->misses : 0;
		lp_report_pc_name(syms, rows[i].pc, name, sizeof(name), &known);
		if (known && !(pr->name = strdup(name))) {
			free(rows);
			return lp_seterr(LP_ENOMEM, "out of memory");
		}
	}
	free(rows);
	return 0;
}

void lp_report_pairs_release(struct lp_report *r)
{
	for (size_t i = 0; i < r->npairs; i++)
		free((char *)r->pairs[i].name);
	free(r->pairs);
	r->pairs = NULL;
	r->npairs = 0;
}

size_t lp_report_pairs(const struct lp_report *r, const struct lp_report_pair **out)
{
	*out = r->pairs;
	return r->npairs;
}
