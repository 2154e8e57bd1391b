/* One report over several profiles: the ranks of an MPI run, each recorded
 * into its own profile and reported with the same parameters, summed into
 * the report of the whole job.
 *
 * Assumptions: each rank runs on caches of its own (the ranks' references
 * do not meet in a cache), so the job's misses in a cache of size C are
 * the sum of each rank's misses in a cache of size C. A miss ratio of the
 * job is then the ranks' ratios weighted by their line accesses (summed
 * misses over summed line accesses); a per-reference ratio is weighted by
 * references. The models are not run on the ranks' samples pooled: the
 * StatCache and StatStack equations are not linear in the reuse-distance
 * histogram, and a pooled histogram would model one cache shared by
 * ranks that never share it. Intervals are weighted the same way, as if
 * the ranks' sampling errors went together: an upper bound on the
 * interval of a sum of independent estimates.
 *
 * Hot pcs are matched by binary and offset in it (a pc's address differs
 * between ranks when the executable is position independent; the row
 * keeps the first rank's address), data objects by name, and summed: each
 * rank gives its top rows only, so a row below every rank's top is
 * missing from the job's. Source lines and functions are summed over
 * every pc (lp_hotspots_merge()). Threads are matched by number: thread
 * 0 of the job is thread 0 of every rank. Windows are not merged: each
 * rank has its own clock. The threads-and-caches tables (params.share)
 * follow the same rules: each placement's ratios weighted by the ranks'
 * line accesses when the ranks' placement rows line up (a rank of two
 * threads has no two-cache row: then none is given), each thread's by
 * its line accesses in each rank, the coherence rows summed by kind,
 * object and the names of the two pcs. */
#include "report/report-internal.h"

#include "common/error.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The weight of each part's ratios: its line accesses, or all equal when
 * no part counted any. */
static void weights(struct lp_report *const *parts, size_t n, int by_refs, double *w)
{
	double total = 0;

	for (size_t i = 0; i < n; i++)
		total += w[i] = (double)(by_refs ? parts[i]->info.references : parts[i]->info.accesses);
	for (size_t i = 0; i < n; i++)
		w[i] = total > 0 ? w[i] / total : 1.0 / (double)n;
}

static void merge_interval(struct lp_interval *out, const struct lp_interval *const *iv, const double *ratio,
			   const double *w, size_t n)
{
	int cliff = 0, steep = 1;

	*out = (struct lp_interval){ .below = NAN, .above = NAN, .slack_lo = 1, .slack_hi = 1 };
	for (size_t i = 0; i < n; i++) {
		out->lo += w[i] * iv[i]->lo;
		out->hi += w[i] * iv[i]->hi;
		cliff |= iv[i]->cliff;
		out->footprint |= iv[i]->footprint;
		out->spans |= iv[i]->spans;
		out->band |= iv[i]->band;
		/* the job's checked ratio: each part's, or its estimate */
		out->checked += w[i] * (iv[i]->spans ? iv[i]->checked : ratio[i]);
		if (iv[i]->cliff)
			steep &= iv[i]->steep;
		if (iv[i]->steep) { /* the sizes checked: as far as any part's */
			out->slack_lo = fmin(out->slack_lo, iv[i]->slack_lo);
			out->slack_hi = fmax(out->slack_hi, iv[i]->slack_hi);
		}
	}
	if (!cliff)
		return;
	/* a part without a cliff stays on its estimate on both sides; the
	 * job's cliff is "steep" (the curve's own drop, not the resamples'
	 * spread) only when every part's cliff is */
	out->cliff = 1;
	out->steep = steep;
	out->below = out->above = 0;
	for (size_t i = 0; i < n; i++) {
		out->below += w[i] * (iv[i]->cliff ? iv[i]->below : ratio[i]);
		out->above += w[i] * (iv[i]->cliff ? iv[i]->above : ratio[i]);
	}
}

/* Every part has the same curves, sizes and named caches (the same
 * params), checked here. */
static int merge_curves(struct lp_report *m, struct lp_report *const *parts, size_t n, const double *w,
			const double *wref)
{
	const struct lp_report *a = parts[0];
	const struct lp_interval **iv = malloc(n * sizeof(*iv));
	double *ratio = malloc(n * sizeof(*ratio));
	size_t ns = a->ncurves ? a->curves[0].n : 0;
	int err = 0;

	if (!iv || !ratio || (ns && !(m->sizes = malloc(ns * sizeof(*m->sizes)))) ||
	    (a->ncaches && !(m->caches = malloc(a->ncaches * sizeof(*m->caches))))) {
		err = lp_seterr(LP_ENOMEM, "out of memory");
		goto out;
	}
	if (ns)
		memcpy(m->sizes, a->sizes, ns * sizeof(*m->sizes));
	for (size_t k = 0; k < a->ncurves; k++) {
		struct lp_curve *c = &m->curves[k];
		if (!(c->name = strdup(a->curves[k].name)) || !(c->ratio = calloc(ns + 1, sizeof(*c->ratio))) ||
		    (a->curves[k].iv && !(c->iv = calloc(ns + 1, sizeof(*c->iv))))) {
			err = lp_seterr(LP_ENOMEM, "out of memory");
			goto out;
		}
		m->ncurves++;
		c->size = m->sizes;
		c->n = c->cap = ns;
		for (size_t s = 0; s < ns; s++) {
			for (size_t i = 0; i < n; i++) {
				ratio[i] = parts[i]->curves[k].ratio[s];
				c->ratio[s] += w[i] * ratio[i];
				iv[i] = c->iv ? &parts[i]->curves[k].iv[s] : NULL;
			}
			if (c->iv)
				merge_interval(&c->iv[s], iv, ratio, w, n);
		}
	}
	for (size_t k = 0; k < a->ncaches; k++) {
		struct lp_report_cache *c = &m->caches[k];
		*c = a->caches[k];
		c->lru = c->random = c->lru_ref = c->random_ref = c->lru_unseen = 0;
		for (size_t i = 0; i < n; i++) {
			c->lru += w[i] * parts[i]->caches[k].lru;
			c->lru_unseen += w[i] * parts[i]->caches[k].lru_unseen;
			c->random += w[i] * parts[i]->caches[k].random;
			c->lru_ref += wref[i] * parts[i]->caches[k].lru_ref;
			c->random_ref += wref[i] * parts[i]->caches[k].random_ref;
		}
		for (size_t i = 0; i < n; i++) {
			ratio[i] = parts[i]->caches[k].lru;
			iv[i] = &parts[i]->caches[k].lru_iv;
		}
		merge_interval(&c->lru_iv, iv, ratio, w, n);
		for (size_t i = 0; i < n; i++) {
			ratio[i] = parts[i]->caches[k].random;
			iv[i] = &parts[i]->caches[k].random_iv;
		}
		merge_interval(&c->random_iv, iv, ratio, w, n);
	}
	m->ncaches = a->ncaches;
out:
	free(iv);
	free(ratio);
	return err;
}

/* A hot row of some part, keyed by name. */
struct named_row {
	char *key;     /* owned: the name, or the pc in hex when unknown */
	size_t object; /* pairs: index of the object in the merged report */
	uint64_t pc;
	const char *name; /* the row's pc name (pcs, pairs), borrowed */
	double misses, misses_sq;
	size_t first;  /* the part that gave it first (ties keep its pc) */
};

static int cmp_row_key(const void *a, const void *b)
{
	const struct named_row *x = a, *y = b;
	int c = x->object < y->object ? -1 : x->object > y->object;
	if (!c)
		c = strcmp(x->key, y->key);
	return c ? c : (x->first > y->first) - (x->first < y->first);
}

static int cmp_row_misses(const void *a, const void *b)
{
	const struct named_row *x = a, *y = b;
	if (x->object != y->object)
		return x->object < y->object ? -1 : 1;
	if (x->misses != y->misses)
		return x->misses > y->misses ? -1 : 1;
	return strcmp(x->key, y->key);
}

static void free_rows(struct named_row *v, size_t n)
{
	for (size_t i = 0; v && i < n; i++)
		free(v[i].key);
	free(v);
}

/* Sum the rows by (object, key) and sort them by object, then decreasing
 * misses; returns the number left. */
static size_t coalesce(struct named_row *v, size_t n)
{
	size_t k = 0;

	qsort(v, n, sizeof(*v), cmp_row_key);
	for (size_t i = 0; i < n; i++) {
		if (k && v[k - 1].object == v[i].object && !strcmp(v[k - 1].key, v[i].key)) {
			v[k - 1].misses += v[i].misses;
			v[k - 1].misses_sq += v[i].misses_sq;
			free(v[i].key);
			continue;
		}
		v[k++] = v[i];
	}
	qsort(v, k, sizeof(*v), cmp_row_misses);
	return k;
}

/* A pc's key across ranks: its binary and offset there (the same code of
 * the same executable, wherever it was loaded), else its name, else its
 * address. */
static char *pc_key(const struct lp_report *part, uint64_t pc, const char *name)
{
	const struct lp_mapping *m = lp_mappings_find(&part->p->mappings, pc);
	char *k;

	if (m && m->path && m->path[0]) {
		if (asprintf(&k, "%s+%#" PRIx64, m->path, pc - m->start + m->file_offset) < 0)
			return NULL;
	} else if (name) {
		k = strdup(name);
	} else if (asprintf(&k, "%#" PRIx64, pc) < 0) {
		return NULL;
	}
	return k;
}

/* Every part's hot pcs (objects: 0) or data objects (1) as rows, summed
 * by key and sorted by misses: *out, *nout of them. */
static int gather(struct lp_report *const *parts, size_t n, int objects, struct named_row **out, size_t *nout)
{
	size_t all = 0, k = 0;
	struct named_row *v = NULL;

	for (size_t i = 0; i < n; i++)
		all += objects ? parts[i]->nobjects : parts[i]->npcs;
	if (!(v = calloc(all + 1, sizeof(*v))))
		return lp_seterr(LP_ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < (objects ? parts[i]->nobjects : parts[i]->npcs); j++, k++) {
			if (objects) {
				v[k] = (struct named_row){ .key = strdup(parts[i]->objects[j].name),
							   .misses = parts[i]->objects[j].misses,
							   .misses_sq = parts[i]->objects[j].misses_sq, .first = i };
			} else {
				const struct lp_report_pc *pc = &parts[i]->pcs[j];
				v[k] = (struct named_row){ .key = pc_key(parts[i], pc->pc, pc->name), .pc = pc->pc,
							   .name = pc->name, .misses = pc->misses,
							   .misses_sq = pc->misses_sq, .first = i };
			}
			if (!v[k].key) {
				free_rows(v, k);
				return lp_seterr(LP_ENOMEM, "out of memory");
			}
		}
	*out = v;
	*nout = coalesce(v, all);
	return 0;
}

static int merge_pcs(struct lp_report *m, struct lp_report *const *parts, size_t n, size_t top, double total)
{
	struct named_row *v = NULL;
	size_t all = 0, k;
	int err;

	if ((err = gather(parts, n, 0, &v, &all)) < 0)
		return err;
	k = all < top ? all : top;
	if (!(m->pcs = calloc(k + 1, sizeof(*m->pcs)))) {
		err = lp_seterr(LP_ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < k; i++, m->npcs++) {
		struct lp_report_pc *pc = &m->pcs[i];

		*pc = (struct lp_report_pc){ .pc = v[i].pc, .misses = v[i].misses, .misses_sq = v[i].misses_sq,
					     .share = total > 0 ? v[i].misses / total : 0 };
		lp_report_count_interval(pc->misses, pc->misses_sq, m->info.sample_weight, &pc->misses_lo,
					 &pc->misses_hi);
		if (v[i].name && !(m->pcs[i].name = strdup(v[i].name))) {
			err = lp_seterr(LP_ENOMEM, "out of memory");
			goto out;
		}
	}
out:
	free_rows(v, all);
	return err;
}

static int merge_objects(struct lp_report *m, struct lp_report *const *parts, size_t n, size_t top,
			 double total)
{
	struct named_row *v = NULL;
	size_t all = 0, k;
	int err;

	if ((err = gather(parts, n, 1, &v, &all)) < 0)
		return err;
	k = all < top ? all : top;
	if (!(m->objects = calloc(k + 1, sizeof(*m->objects)))) {
		free_rows(v, all);
		return lp_seterr(LP_ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < k; i++, m->nobjects++) {
		struct lp_report_object *o = &m->objects[i];

		*o = (struct lp_report_object){ .name = v[i].key, .misses = v[i].misses, .misses_sq = v[i].misses_sq,
						.share = total > 0 ? v[i].misses / total : 0 };
		lp_report_count_interval(o->misses, o->misses_sq, m->info.sample_weight, &o->misses_lo,
					 &o->misses_hi);
		v[i].key = NULL; /* the object owns it now */
	}
	free_rows(v, all);
	return 0;
}

/* The index of object name in m's objects, or m->nobjects. */
static size_t object_index(const struct lp_report *m, const char *name)
{
	size_t i = 0;

	while (i < m->nobjects && strcmp(m->objects[i].name, name))
		i++;
	return i;
}

static int merge_pairs(struct lp_report *m, struct lp_report *const *parts, size_t n, size_t top)
{
	size_t all = 0, k = 0, kept = 0;
	struct named_row *v = NULL;
	int err = 0;

	for (size_t i = 0; i < n; i++)
		all += parts[i]->npairs;
	if (!(v = calloc(all + 1, sizeof(*v))))
		return lp_seterr(LP_ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < parts[i]->npairs; j++) {
			const struct lp_report_pair *pr = &parts[i]->pairs[j];
			size_t o = object_index(m, parts[i]->objects[pr->object].name);
			if (o == m->nobjects)
				continue; /* not among the job's hot objects */
			v[k] = (struct named_row){ .key = pc_key(parts[i], pr->pc, pr->name), .object = o, .pc = pr->pc,
						   .name = pr->name, .misses = pr->misses, .misses_sq = pr->misses_sq,
						   .first = i };
			if (!v[k++].key) {
				err = lp_seterr(LP_ENOMEM, "out of memory");
				goto out;
			}
		}
	all = k = coalesce(v, k);
	if (!(m->pairs = calloc(k + 1, sizeof(*m->pairs)))) {
		err = lp_seterr(LP_ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0, rank = 0; i < k; i++) {
		double om = m->objects[v[i].object].misses;
		rank = i && v[i - 1].object == v[i].object ? rank + 1 : 0;
		if (rank >= top)
			continue;
		struct lp_report_pair *pr = &m->pairs[kept];

		*pr = (struct lp_report_pair){ .object = v[i].object, .pc = v[i].pc, .misses = v[i].misses,
					       .misses_sq = v[i].misses_sq, .share = om > 0 ? v[i].misses / om : 0 };
		lp_report_count_interval(pr->misses, pr->misses_sq, m->info.sample_weight, &pr->misses_lo,
					 &pr->misses_hi);
		if (v[i].name && !(m->pairs[kept].name = strdup(v[i].name))) {
			err = lp_seterr(LP_ENOMEM, "out of memory");
			goto out;
		}
		m->npairs = ++kept;
	}
out:
	free_rows(v, all);
	return err;
}

static int merge_hot(struct lp_report *m, struct lp_report *const *parts, size_t n, size_t top)
{
	const struct lp_hotspots **h = malloc(n * sizeof(*h));
	double total = 0;
	size_t nh = 0;
	int err;

	if (!h)
		return lp_seterr(LP_ENOMEM, "out of memory");
	/* the shares' base: every part's predicted misses, in line accesses;
	 * the intervals' weight: the largest sample's */
	m->info.sample_weight = 0;
	for (size_t i = 0; i < n; i++) {
		if (parts[i]->info.sample_weight > m->info.sample_weight)
			m->info.sample_weight = parts[i]->info.sample_weight;
		total += parts[i]->info.total_misses / (parts[i]->p->rate > 0 ? parts[i]->p->rate : 1);
		if (parts[i]->hotspots)
			h[nh++] = parts[i]->hotspots;
	}
	if ((err = merge_pcs(m, parts, n, top, total)) >= 0 && (err = merge_objects(m, parts, n, top, total)) >= 0 &&
	    (err = merge_pairs(m, parts, n, top)) >= 0 && nh)
		err = lp_hotspots_merge(&m->hotspots, h, nh);
	free(h);
	return err < 0 ? err : 0;
}

/* Threads by number; the caches are the first part's (the same params). */
static int merge_threads(struct lp_report *m, struct lp_report *const *parts, size_t n)
{
	size_t nt = 0, nc = parts[0]->nthread_caches;

	for (size_t i = 0; i < n; i++)
		for (size_t t = 0; t < parts[i]->nthreads; t++)
			if (parts[i]->threads[t].tid >= nt)
				nt = (size_t)parts[i]->threads[t].tid + 1;
	m->threads = calloc(nt + 1, sizeof(*m->threads));
	m->thread_misses = calloc(nt * nc + 1, sizeof(*m->thread_misses));
	m->thread_caches = calloc(nc + 1, sizeof(*m->thread_caches));
	if (!m->threads || !m->thread_misses || !m->thread_caches)
		return lp_seterr(LP_ENOMEM, "out of memory");
	if (nc)
		memcpy(m->thread_caches, parts[0]->thread_caches, nc * sizeof(*m->thread_caches));
	m->nthread_caches = nc;
	for (size_t i = 0; i < n; i++)
		for (size_t t = 0; t < parts[i]->nthreads; t++) {
			const struct lp_report_thread *pt = &parts[i]->threads[t];
			struct lp_report_thread *th = &m->threads[pt->tid];
			th->references += pt->references;
			th->samples += pt->samples;
			th->accesses += pt->accesses;
			for (size_t c = 0; c < nc; c++)
				m->thread_misses[pt->tid * nc + c] += pt->misses[c];
		}
	/* only the thread numbers some rank has */
	for (size_t t = 0; t < nt; t++) {
		int seen = 0;
		for (size_t i = 0; i < n && !seen; i++)
			for (size_t j = 0; j < parts[i]->nthreads && !seen; j++)
				seen = parts[i]->threads[j].tid == t;
		if (!seen)
			continue;
		m->threads[m->nthreads] = m->threads[t];
		m->threads[m->nthreads].tid = (uint32_t)t;
		m->threads[m->nthreads].misses = m->thread_misses + t * nc;
		m->nthreads++;
	}
	return 0;
}

/* Each thread's private-cache rows (by thread and size): a rank's row
 * weighs by that thread's line accesses (its share of the rank's). */
static int merge_thread_curves(struct lp_report *m, struct lp_report *const *parts, size_t n, size_t cap)
{
	const struct lp_report_thread_curve **row = malloc((n + 1) * sizeof(*row));
	const struct lp_interval **iv = malloc((n + 1) * sizeof(*iv));
	double *ratio = malloc((n + 1) * sizeof(*ratio)), *wt = malloc((n + 1) * sizeof(*wt));
	int err = 0;

	if (!row || !iv || !ratio || !wt || !(m->thread_curves = calloc(cap + 1, sizeof(*m->thread_curves)))) {
		err = lp_seterr(LP_ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < parts[i]->nthread_curves; j++) {
			const struct lp_report_thread_curve *c = &parts[i]->thread_curves[j];
			struct lp_report_thread_curve *t;
			size_t k = 0, got = 0;
			double all = 0;
			while (k < m->nthread_curves &&
			       (m->thread_curves[k].tid != c->tid || m->thread_curves[k].size != c->size))
				k++;
			if (k < m->nthread_curves)
				continue; /* merged when its first rank came */
			/* this thread and size in every rank (at most once each) */
			for (size_t r = i; r < n; r++)
				for (size_t q = 0; q < parts[r]->nthread_curves; q++)
					if (parts[r]->thread_curves[q].tid == c->tid &&
					    parts[r]->thread_curves[q].size == c->size) {
						row[got] = &parts[r]->thread_curves[q];
						wt[got] = row[got]->share * (double)parts[r]->info.accesses;
						all += wt[got++];
						break;
					}
			t = &m->thread_curves[m->nthread_curves++];
			*t = *c;
			t->lru = t->random = t->lru_coh = 0;
			for (size_t g = 0; g < got; g++) {
				wt[g] = all > 0 ? wt[g] / all : 1.0 / (double)got;
				t->lru += wt[g] * row[g]->lru;
				t->random += wt[g] * row[g]->random;
				t->lru_coh += wt[g] * row[g]->lru_coh;
			}
			for (size_t g = 0; g < got; g++) {
				ratio[g] = row[g]->lru;
				iv[g] = &row[g]->lru_iv;
			}
			merge_interval(&t->lru_iv, iv, ratio, wt, got);
			for (size_t g = 0; g < got; g++) {
				ratio[g] = row[g]->random;
				iv[g] = &row[g]->random_iv;
			}
			merge_interval(&t->random_iv, iv, ratio, wt, got);
			t->share = m->info.accesses ? all / (double)m->info.accesses : 0;
		}
out:
	free(row);
	free(iv);
	free(ratio);
	free(wt);
	return err;
}

/* The coherence rows of every rank, summed by kind, object and the names
 * of the pc that misses and of the write's (the first rank's pcs kept:
 * position-independent code has other addresses in other ranks). */
static int merge_sharing(struct lp_report *m, struct lp_report *const *parts, size_t n, size_t cap)
{
	size_t samples = 0;

	if (!(m->sharing = calloc(cap + 1, sizeof(*m->sharing))))
		return lp_seterr(LP_ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++) {
		samples += parts[i]->info.samples;
		for (size_t j = 0; j < parts[i]->nsharing; j++) {
			const struct lp_report_sharing *x = &parts[i]->sharing[j];
			size_t k = 0;
			while (k < m->nsharing &&
			       (m->sharing[k].false_sharing != x->false_sharing || strcmp(m->sharing[k].object, x->object) ||
				strcmp(m->sharing[k].pc_name, x->pc_name) || strcmp(m->sharing[k].wpc_name, x->wpc_name)))
				k++;
			if (k == m->nsharing) {
				struct lp_report_sharing *y = &m->sharing[m->nsharing];
				*y = *x;
				y->misses = 0;
				y->samples = 0;
				y->object = y->pc_name = y->wpc_name = NULL;
				m->nsharing++;
				if (!(y->object = strdup(x->object)) || !(y->pc_name = strdup(x->pc_name)) ||
				    !(y->wpc_name = strdup(x->wpc_name)))
					return lp_seterr(LP_ENOMEM, "out of memory");
			}
			m->sharing[k].misses += x->misses;
			m->sharing[k].samples += x->samples;
		}
	}
	for (size_t k = 0; k < m->nsharing; k++)
		m->sharing[k].share = samples ? (double)m->sharing[k].samples / (double)samples : 0;
	qsort(m->sharing, m->nsharing, sizeof(*m->sharing), lp_report_sharing_rank);
	return 0;
}

/* Whether every part has the same placement rows (by name and size): a
 * rank with two threads has no "2 caches" row, so ranks of different
 * thread counts do not line up. */
static int placements_align(struct lp_report *const *parts, size_t n)
{
	const struct lp_report *a = parts[0];

	for (size_t i = 1; i < n; i++) {
		if (parts[i]->nplacements != a->nplacements)
			return 0;
		for (size_t k = 0; k < a->nplacements; k++)
			if (strcmp(parts[i]->placements[k].placement, a->placements[k].placement) ||
			    parts[i]->placements[k].size != a->placements[k].size)
				return 0;
	}
	return a->nplacements > 0;
}

/* The threads-and-caches tables of the job (params.share): each rank's
 * threads on caches of that rank, so a placement's ratio is the ranks'
 * ratios weighted by their line accesses (w), as the curves'; thread t
 * of the job is thread t of every rank, its ratios weighted by the
 * rank's line accesses of that thread; the coherence rows summed by
 * kind, object and the two pcs' names. Placements are left out when the
 * ranks' rows do not line up. */
static int merge_share(struct lp_report *m, struct lp_report *const *parts, size_t n, const double *w)
{
	const struct lp_report *a = parts[0];
	const struct lp_interval **iv = malloc(n * sizeof(*iv));
	double *ratio = malloc(n * sizeof(*ratio)), tw = 0, tsum = 0;
	size_t cap_tc = 0, cap_sh = 0;
	int err = 0;

	if (!iv || !ratio) {
		err = lp_seterr(LP_ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		m->info.threads = parts[i]->info.threads > m->info.threads ? parts[i]->info.threads : m->info.threads;
		if (!isnan(parts[i]->info.together)) {
			tsum += w[i] * parts[i]->info.together;
			tw += w[i];
		}
		cap_tc += parts[i]->nthread_curves;
		cap_sh += parts[i]->nsharing;
	}
	m->info.together = tw > 0 ? tsum / tw : NAN;
	if (placements_align(parts, n)) {
		if (!(m->placements = calloc(a->nplacements, sizeof(*m->placements)))) {
			err = lp_seterr(LP_ENOMEM, "out of memory");
			goto out;
		}
		for (size_t k = 0; k < a->nplacements; k++) {
			struct lp_report_placement *pl = &m->placements[k];
			*pl = a->placements[k];
			pl->lru = pl->random = pl->lru_coh = pl->random_coh = 0;
			for (size_t i = 0; i < n; i++) {
				const struct lp_report_placement *q = &parts[i]->placements[k];
				pl->lru += w[i] * q->lru;
				pl->random += w[i] * q->random;
				pl->lru_coh += w[i] * q->lru_coh;
				pl->random_coh += w[i] * q->random_coh;
			}
			for (size_t i = 0; i < n; i++) {
				ratio[i] = parts[i]->placements[k].lru;
				iv[i] = &parts[i]->placements[k].lru_iv;
			}
			merge_interval(&pl->lru_iv, iv, ratio, w, n);
			for (size_t i = 0; i < n; i++) {
				ratio[i] = parts[i]->placements[k].random;
				iv[i] = &parts[i]->placements[k].random_iv;
			}
			merge_interval(&pl->random_iv, iv, ratio, w, n);
		}
		m->nplacements = a->nplacements;
	}
	if ((err = merge_thread_curves(m, parts, n, cap_tc)) < 0 || (err = merge_sharing(m, parts, n, cap_sh)) < 0)
		goto out;
out:
	free(iv);
	free(ratio);
	return err;
}

/* The parts must agree on what was computed: line size, curves, sizes,
 * caches, hot-spot cache and policy. */
static int check_parts(struct lp_report *const *parts, size_t n)
{
	const struct lp_report *a = parts[0];

	for (size_t i = 1; i < n; i++) {
		const struct lp_report *b = parts[i];
		if (b->info.line != a->info.line)
			return lp_seterr(LP_EINVAL, "the profiles have different line sizes (%g and %g bytes)",
					 a->info.line, b->info.line);
		if (b->ncurves != a->ncurves || b->ncaches != a->ncaches || b->info.at != a->info.at ||
		    strcmp(b->info.hot_policy, a->info.hot_policy) || (b->hotspots == NULL) != (a->hotspots == NULL) ||
		    b->nthread_caches != a->nthread_caches ||
		    (a->ncurves && (b->curves[0].n != a->curves[0].n ||
				    memcmp(b->sizes, a->sizes, a->curves[0].n * sizeof(*a->sizes)))))
			return lp_seterr(LP_EINVAL, "the reports to merge were computed with different parameters");
	}
	return 0;
}

int lp_report_merge(struct lp_report **out, struct lp_report *const *parts, size_t n, size_t top)
{
	struct lp_report *m;
	double *w, *wref;
	int err;

	*out = NULL;
	if (!n)
		return lp_seterr(LP_EINVAL, "no report to merge");
	if ((err = check_parts(parts, n)) < 0)
		return err;
	m = calloc(1, sizeof(*m));
	w = malloc(2 * n * sizeof(*w));
	if (!m || !w) {
		free(m);
		free(w);
		return lp_seterr(LP_ENOMEM, "out of memory");
	}
	wref = w + n;
	weights(parts, n, 0, w);
	weights(parts, n, 1, wref);
	m->info = parts[0]->info;
	m->info.samples = 0;
	m->info.accesses = m->info.references = 0;
	m->info.total_misses = 0;
	m->info.heap_blocks = 0;
	m->info.run_allocs = 0;
	m->info.window_length = 0;
	for (size_t i = 0; i < n; i++) {
		const struct lp_report_info *in = &parts[i]->info;
		m->info.samples += in->samples;
		m->info.accesses += in->accesses;
		m->info.references += in->references;
		m->info.accesses_partial |= in->accesses_partial;
		m->info.total_misses += in->total_misses;
		m->info.heap_blocks += in->heap_blocks;
		m->info.run_allocs += in->run_allocs;
		m->info.touched_blocks_only |= in->touched_blocks_only;
	}
	if ((err = merge_curves(m, parts, n, w, wref)) < 0 || (err = merge_hot(m, parts, n, top)) < 0 ||
	    (parts[0]->threads && (err = merge_threads(m, parts, n)) < 0) ||
	    (parts[0]->placements && (err = merge_share(m, parts, n, w)) < 0)) {
		lp_report_free(m);
		m = NULL;
	}
	free(w);
	*out = m;
	return err < 0 ? err : 0;
}
