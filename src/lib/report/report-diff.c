/* Two profiles' reports side by side, as cg_diff does for Cachegrind: the
 * miss-ratio curves point by point with their difference, the named
 * caches, and the hot spots (source lines, functions, data objects)
 * matched by name across the two runs, ranked by how far their misses
 * moved. A spot present in one run only counts 0 misses in the other.
 *
 * Assumptions: both reports were built with the same parameters (sizes,
 * caches, policies), so the curves have the same points; names match when
 * the two runs' sources and allocation sites are the same files (a line
 * is matched by its file's base name and number: two builds of one tree
 * in different directories still compare). */
#include "report/report-internal.h"

#include "common/error.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct spot_set {
	struct lp_diff_spot *v;
	size_t n;
};

struct lp_report_diff {
	struct lp_diff_curve curves[2];
	struct lp_diff_point *points[2];
	size_t ncurves;
	struct lp_diff_cache *caches;
	size_t ncaches;
	struct spot_set spots[3]; /* by enum lp_diff_kind */
	char **names;             /* the line names made here */
	size_t nnames;
};

void lp_report_diff_free(struct lp_report_diff *d)
{
	if (!d)
		return;
	for (int k = 0; k < 2; k++)
		free(d->points[k]);
	free(d->caches);
	for (int k = 0; k < 3; k++)
		free(d->spots[k].v);
	for (size_t i = 0; i < d->nnames; i++)
		free(d->names[i]);
	free(d->names);
	free(d);
}

/* The 95% interval [*lo, *hi] of b - a from the intervals of a and b
 * (MOVER, Zou and Donner 2008: each end from the two ends that move the
 * difference that way, in quadrature). */
static void change_interval(double a, double a_lo, double a_hi, double b, double b_lo, double b_hi, double *lo,
			    double *hi)
{
	double d = b - a;

	*lo = d - sqrt((b - b_lo) * (b - b_lo) + (a_hi - a) * (a_hi - a));
	*hi = d + sqrt((b_hi - b) * (b_hi - b) + (a - a_lo) * (a - a_lo));
}

static int diff_curves(struct lp_report_diff *d, const struct lp_report *a, const struct lp_report *b)
{
	const struct lp_curve *ca, *cb;
	size_t na = lp_report_curves(a, &ca), nb = lp_report_curves(b, &cb);

	for (size_t i = 0; i < na; i++) {
		const struct lp_curve *other = NULL;
		struct lp_diff_point *pt;

		for (size_t j = 0; j < nb; j++)
			if (!strcmp(ca[i].name, cb[j].name))
				other = &cb[j];
		if (!other)
			continue;
		if (other->n != ca[i].n)
			return lp_seterr(LP_EINVAL, "the two reports' %s curves have different sizes", ca[i].name);
		if (!(pt = calloc(ca[i].n + 1, sizeof(*pt))))
			return lp_seterr(LP_ENOMEM, "out of memory");
		for (size_t k = 0; k < ca[i].n; k++) {
			if (ca[i].size[k] != other->size[k]) {
				free(pt);
				return lp_seterr(LP_EINVAL, "the two reports' curves have different sizes");
			}
			pt[k] = (struct lp_diff_point){ .size = ca[i].size[k], .a = ca[i].ratio[k],
							.b = other->ratio[k],
							.delta = other->ratio[k] - ca[i].ratio[k] };
			change_interval(pt[k].a, ca[i].iv ? ca[i].iv[k].lo : pt[k].a,
					ca[i].iv ? ca[i].iv[k].hi : pt[k].a, pt[k].b,
					other->iv ? other->iv[k].lo : pt[k].b, other->iv ? other->iv[k].hi : pt[k].b,
					&pt[k].delta_lo, &pt[k].delta_hi);
		}
		d->points[d->ncurves] = pt;
		d->curves[d->ncurves++] = (struct lp_diff_curve){ .name = ca[i].name, .points = pt, .n = ca[i].n };
	}
	return 0;
}

static int diff_caches(struct lp_report_diff *d, const struct lp_report *a, const struct lp_report *b)
{
	const struct lp_report_cache *ca, *cb;
	size_t na = lp_report_caches(a, &ca), nb = lp_report_caches(b, &cb);

	if (!(d->caches = calloc(na + 1, sizeof(*d->caches))))
		return lp_seterr(LP_ENOMEM, "out of memory");
	for (size_t i = 0; i < na; i++)
		for (size_t j = 0; j < nb; j++) {
			if (ca[i].size != cb[j].size || ca[i].ways != cb[j].ways || strcmp(ca[i].label, cb[j].label))
				continue;
			struct lp_diff_cache *c = &d->caches[d->ncaches++];

			*c = (struct lp_diff_cache){ .label = ca[i].label, .size = ca[i].size, .ways = ca[i].ways,
						     .lru_a = ca[i].lru, .lru_b = cb[j].lru,
						     .random_a = ca[i].random, .random_b = cb[j].random };
			change_interval(c->lru_a, ca[i].lru_iv.lo, ca[i].lru_iv.hi, c->lru_b, cb[j].lru_iv.lo,
					cb[j].lru_iv.hi, &c->lru_delta_lo, &c->lru_delta_hi);
			change_interval(c->random_a, ca[i].random_iv.lo, ca[i].random_iv.hi, c->random_b,
					cb[j].random_iv.lo, cb[j].random_iv.hi, &c->random_delta_lo, &c->random_delta_hi);
			break;
		}
	return 0;
}

/* One run's rows of a kind, as (name, misses, share) spots in a[..]. */
struct named {
	const char *name;
	double misses, share;
	double sq; /* the row's summed squares (lp_report_count_interval()) */
	int run;   /* 0: a, 1: b */
};

static int cmp_named(const void *x, const void *y)
{
	const struct named *a = x, *b = y;
	int c = strcmp(a->name, b->name);
	return c ? c : a->run - b->run;
}

static int cmp_spot(const void *x, const void *y)
{
	const struct lp_diff_spot *a = x, *b = y;
	double da = fabs(a->delta), db = fabs(b->delta);

	if (da != db)
		return da > db ? -1 : 1;
	return strcmp(a->name, b->name);
}

/* "file.c:24", kept by d. */
static const char *line_name(struct lp_report_diff *d, const struct lp_source_line *l, size_t *cap)
{
	char *s, **v;

	if (d->nnames == *cap) {
		*cap = *cap ? 2 * *cap : 64;
		if (!(v = realloc(d->names, *cap * sizeof(*v))))
			return NULL;
		d->names = v;
	}
	if (asprintf(&s, "%s:%d", l->file, l->line) < 0)
		return NULL;
	return d->names[d->nnames++] = s;
}

/* The rows of kind k of report r (run 0 or 1), appended to v. */
static int collect(struct lp_report_diff *d, const struct lp_report *r, int run, enum lp_diff_kind k,
		   struct named *v, size_t *n, size_t *cap_names)
{
	const struct lp_hotspots *h = lp_report_hotspots(r);

	if (k == LP_DIFF_OBJECT) {
		const struct lp_report_object *o;
		size_t no = lp_report_objects(r, &o);
		for (size_t i = 0; i < no; i++)
			v[(*n)++] = (struct named){ o[i].name, o[i].misses, o[i].share, o[i].misses_sq, run };
	} else if (k == LP_DIFF_FUNCTION && h) {
		const struct lp_source_function *f;
		size_t nf = lp_hotspots_functions(h, &f);
		for (size_t i = 0; i < nf; i++)
			v[(*n)++] = (struct named){ f[i].label, f[i].misses, f[i].share, f[i].misses_sq, run };
	} else if (h) {
		const struct lp_source_line *l;
		size_t nl = lp_hotspots_lines(h, &l);
		for (size_t i = 0; i < nl; i++) {
			const char *name = line_name(d, &l[i], cap_names);
			if (!name)
				return lp_seterr(LP_ENOMEM, "out of memory");
			v[(*n)++] = (struct named){ name, l[i].misses, l[i].share, l[i].misses_sq, run };
		}
	}
	return 0;
}

static size_t rows_of(const struct lp_report *r, enum lp_diff_kind k)
{
	const struct lp_hotspots *h = lp_report_hotspots(r);
	const struct lp_report_object *o;
	const struct lp_source_function *f;
	const struct lp_source_line *l;

	if (k == LP_DIFF_OBJECT)
		return lp_report_objects(r, &o);
	if (!h)
		return 0;
	return k == LP_DIFF_FUNCTION ? lp_hotspots_functions(h, &f) : lp_hotspots_lines(h, &l);
}

static int diff_spots(struct lp_report_diff *d, const struct lp_report *a, const struct lp_report *b,
		      enum lp_diff_kind k, size_t *cap_names)
{
	size_t n = 0, m = 0, cap = rows_of(a, k) + rows_of(b, k) + 1;
	struct named *v = malloc(cap * sizeof(*v));
	double *sq = calloc(2 * cap, sizeof(*sq)); /* each spot's squares in a and b */
	double wa = lp_report_info(a)->sample_weight, wb = lp_report_info(b)->sample_weight;
	struct spot_set *s = &d->spots[k];
	int err;

	if (!v || !sq || !(s->v = calloc(cap, sizeof(*s->v)))) {
		free(v);
		free(sq);
		return lp_seterr(LP_ENOMEM, "out of memory");
	}
	if ((err = collect(d, a, 0, k, v, &n, cap_names)) < 0 || (err = collect(d, b, 1, k, v, &n, cap_names)) < 0)
		goto out;
	/* lines of one name in one run (the same base name in two
	 * directories) add up */
	qsort(v, n, sizeof(*v), cmp_named);
	for (size_t i = 0; i < n; i++) {
		struct lp_diff_spot *sp = m ? &s->v[m - 1] : NULL;

		if (!sp || strcmp(sp->name, v[i].name)) {
			sp = &s->v[m++];
			*sp = (struct lp_diff_spot){ .kind = k, .name = v[i].name };
		}
		if (v[i].run) {
			sp->misses_b += v[i].misses;
			sp->share_b += v[i].share;
		} else {
			sp->misses_a += v[i].misses;
			sp->share_a += v[i].share;
		}
		sq[2 * (m - 1) + v[i].run] += v[i].sq;
		sp->delta = sp->misses_b - sp->misses_a;
	}
	for (size_t i = 0; i < m; i++) {
		struct lp_diff_spot *sp = &s->v[i];
		double alo, ahi, blo, bhi;

		lp_report_count_interval(sp->misses_a, sq[2 * i], wa, &alo, &ahi);
		lp_report_count_interval(sp->misses_b, sq[2 * i + 1], wb, &blo, &bhi);
		change_interval(sp->misses_a, alo, ahi, sp->misses_b, blo, bhi, &sp->delta_lo, &sp->delta_hi);
	}
	/* a line or function with accesses but no misses in either run did
	 * not move */
	n = m;
	m = 0;
	for (size_t i = 0; i < n; i++)
		if (s->v[i].misses_a > 0 || s->v[i].misses_b > 0)
			s->v[m++] = s->v[i];
	s->n = m;
	qsort(s->v, m, sizeof(*s->v), cmp_spot);
out:
	free(v);
	free(sq);
	return err;
}

int lp_report_diff_new(struct lp_report_diff **out, const struct lp_report *a, const struct lp_report *b)
{
	struct lp_report_diff *d;
	size_t cap_names = 0;
	int err;

	*out = NULL;
	if (!(d = calloc(1, sizeof(*d))))
		return lp_seterr(LP_ENOMEM, "out of memory");
	if ((err = diff_curves(d, a, b)) < 0 || (err = diff_caches(d, a, b)) < 0)
		goto out_free;
	for (int k = LP_DIFF_LINE; k <= LP_DIFF_OBJECT; k++)
		if ((err = diff_spots(d, a, b, (enum lp_diff_kind)k, &cap_names)) < 0)
			goto out_free;
	*out = d;
	return 0;
out_free:
	lp_report_diff_free(d);
	return err;
}

size_t lp_report_diff_curves(const struct lp_report_diff *d, const struct lp_diff_curve **out)
{
	*out = d->curves;
	return d->ncurves;
}

size_t lp_report_diff_caches(const struct lp_report_diff *d, const struct lp_diff_cache **out)
{
	*out = d->caches;
	return d->ncaches;
}

size_t lp_report_diff_spots(const struct lp_report_diff *d, enum lp_diff_kind kind, const struct lp_diff_spot **out)
{
	*out = d->spots[kind].v;
	return d->spots[kind].n;
}
