/* A model from runs at several sizes: the reference groups matched across
 * runs, the loops, references and walks of each group fitted as functions of
 * P, then every group's histograms (prediction-bins.c). */
#include "prediction/prediction-model.h"

#include "common/array.h"
#include "common/error.h"

#include <locprof/model.h>

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>


static int cmp_run(const void *a, const void *b)
{
	const struct lp_pred_run *x = *(const struct lp_pred_run *const *)a, *y = *(const struct lp_pred_run *const *)b;
	return x->size < y->size ? -1 : x->size > y->size;
}

/* "file:a-b" or "file:a" -> file (in buf), a, b; 0 if it does not parse. */
static int parse_where(const char *w, char *file, size_t len, int *a, int *b)
{
	const char *colon = strrchr(w, ':');
	char *end;

	if (!colon || (size_t)(colon - w) >= len)
		return 0;
	memcpy(file, w, (size_t)(colon - w));
	file[colon - w] = 0;
	*a = (int)strtol(colon + 1, &end, 10);
	*b = *a;
	if (*end == '-')
		*b = (int)strtol(end + 1, &end, 10);
	return !*end && *a > 0;
}

static char *join_where(const char *file, int a, int b)
{
	char *s = NULL;
	int rc = a == b ? asprintf(&s, "%s:%d", file, a) : asprintf(&s, "%s:%d-%d", file, a, b);

	return rc < 0 ? NULL : s;
}

/* The innermost stride of a pc ("16,0,?" -> 16); 0 if not a value. */
static int64_t inner_stride(const char *st)
{
	char *end;
	long long v;

	if (!st || !(*st == '-' || (*st >= '0' && *st <= '9')))
		return 0;
	v = strtoll(st, &end, 10);
	return *end == ',' || !*end ? (int64_t)v : 0;
}

/* The stride at the next level out ("16,8,?" -> 8); -1 if not a value. */
static double outer_stride(const char *st)
{
	const char *c = st ? strchr(st, ',') : NULL;
	char *end;
	long long v;

	if (!c || !(c[1] == '-' || (c[1] >= '0' && c[1] <= '9')))
		return -1;
	v = strtoll(c + 1, &end, 10);
	return *end == ',' || !*end ? (double)(v < 0 ? -v : v) : -1;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

/* The walk of model group gi in run R (pcs mapped to groups by grp[]):
 * the busiest pc with a nonzero innermost stride s and measured runs; the
 * group's pcs with the same |s| at distinct first addresses, u of them,
 * interleave when their offsets modulo |s| are multiples of |s| / u (an
 * unrolled loop: A[i][k], A[i][k+1]); then the group walks with stride
 * |s| / u, u (steps per run + 1) accesses per walk. 0 if not. */
static int run_walk(const struct lp_pred_run *R, const size_t *grp, size_t gi, double *stride, double *len,
		    double *stride1)
{
	const struct lp_pred_run_pc *best = NULL;
	int64_t s, off[64];
	size_t u = 0;

	for (size_t i = 0; i < R->npcs; i++) {
		const struct lp_pred_run_pc *p = &R->pcs[i];
		if (grp[i] != gi || !p->has_walk || !p->wruns || !inner_stride(p->strides))
			continue;
		if (!best || p->refs > best->refs)
			best = p;
	}
	if (!best)
		return 0;
	s = inner_stride(best->strides);
	s = s < 0 ? -s : s;
	for (size_t i = 0; i < R->npcs; i++) {
		const struct lp_pred_run_pc *p = &R->pcs[i];
		int64_t v = inner_stride(p->strides), o;
		int dup = 0;
		if (grp[i] != gi || !p->has_walk || (v != s && v != -s))
			continue;
		o = (int64_t)(p->first - best->first) % s;
		if (o < 0)
			o += s;
		for (size_t k = 0; k < u; k++)
			dup |= off[k] == o;
		if (dup)
			continue;
		if (u == 64)
			return 0;
		off[u++] = o;
	}
	qsort(off, u, sizeof(*off), cmp_i64);
	if (s % (int64_t)u)
		return 0;
	for (size_t k = 0; k < u; k++)
		if (off[k] != (int64_t)k * (s / (int64_t)u))
			return 0;
	*stride = (double)(s / (int64_t)u);
	*len = (double)u * ((double)best->wsteps / (double)best->wruns + 1);
	/* the next loop out moves every pc of the walk by the same step */
	*stride1 = outer_stride(best->strides);
	return 1;
}

/* Fit the group's walk when every run has one; the stride must be fitted
 * exactly (within half a byte at every run), or there is no walk. */
static int fit_walk(struct lp_pred_model *m, struct xgroup *g)
{
	double hi = m->range * m->sizes[m->nsizes - 1];
	int rc;

	g->walk = 0;
	for (size_t r = 0; r < m->nsizes; r++)
		if (!(g->mwstride[r] > 0) || !(g->mwlen[r] >= 1))
			return 0;
	if ((rc = lp_pred_fit_select(&m->basis, m->sizes, g->mwstride, m->nsizes, LP_PRED_FIT_NONNEG,
				 hi, &g->wstride)) < 0)
		return rc;
	for (size_t r = 0; r < m->nsizes; r++)
		if (fabs(lp_pred_model_eval(m, &g->wstride, m->sizes[r]) - g->mwstride[r]) > 0.5)
			return 0;
	if ((rc = lp_pred_fit_select(&m->basis, m->sizes, g->mwlen, m->nsizes, LP_PRED_FIT_NONNEG | LP_PRED_FIT_MONOTONE,
				 hi, &g->wlen)) < 0)
		return rc;
	g->walk = 1;
	/* the outer stride, when every run has one (and fitted exactly) */
	g->walk1 = 0;
	for (size_t r = 0; r < m->nsizes; r++)
		if (!(g->mwstride1[r] > 0))
			return 0;
	if ((rc = lp_pred_fit_select(&m->basis, m->sizes, g->mwstride1, m->nsizes, LP_PRED_FIT_NONNEG, hi,
				 &g->wstride1)) < 0)
		return rc;
	for (size_t r = 0; r < m->nsizes; r++)
		if (fabs(lp_pred_model_eval(m, &g->wstride1, m->sizes[r]) - g->mwstride1[r]) > 0.5)
			return 0;
	g->walk1 = 1;
	return 0;
}

/* Options, the runs sorted by size, and the block sizes common to all. */
static int model_setup(struct lp_pred_model *m, struct lp_pred_run **runs, size_t n,
		       const struct lp_pred_fit_options *o)
{
	int rc;

	if ((rc = lp_pred_basis_parse(&m->basis, o && o->basis ? o->basis : NULL)) < 0)
		return rc;
	m->range = o && o->range > 0 ? o->range : 16;
	m->tolerance = o && o->tolerance > 0 ? o->tolerance : 0.05;
	m->max_depth = o && o->max_depth ? o->max_depth : 10;
	qsort(runs, n, sizeof(*runs), cmp_run);
	for (size_t r = 1; r < n; r++)
		if (runs[r]->size == runs[r - 1]->size)
			return lp_seterr(LP_EINVAL, "two runs at size %g", runs[r]->size);
	m->nsizes = n;
	if (!(m->sizes = malloc(n * sizeof(*m->sizes))) || !(m->total = malloc(n * sizeof(*m->total))))
		return lp_seterr(LP_ENOMEM, "out of memory");
	for (size_t r = 0; r < n; r++) {
		m->sizes[r] = runs[r]->size;
		m->total[r] = (double)runs[r]->references;
	}
	if (!(m->command = strdup(runs[n - 1]->command ? runs[n - 1]->command : "")))
		return lp_seterr(LP_ENOMEM, "out of memory");
	/* block sizes common to every run */
	if (!(m->blocks = malloc(runs[0]->nblocks * sizeof(*m->blocks))))
		return lp_seterr(LP_ENOMEM, "out of memory");
	for (size_t b = 0; b < runs[0]->nblocks; b++) {
		int all = 1;
		for (size_t r = 1; r < n && all; r++) {
			int have = 0;
			for (size_t k = 0; k < runs[r]->nblocks; k++)
				have |= runs[r]->blocks[k] == runs[0]->blocks[b];
			all = have;
		}
		if (all)
			m->blocks[m->nblocks++] = runs[0]->blocks[b];
	}
	if (!m->nblocks)
		return lp_seterr(LP_EINVAL, "the runs have no block size in common");
	return 0;
}

/* Model loops: source loops, numbered in order of first appearance, with
 * the line range widened over their object loops; then their parents. */
static int model_loops(struct lp_pred_model *m, struct lp_pred_join *x)
{
	for (size_t i = 0; i < x->nlk; i++)
		x->lof[i] = SIZE_MAX;
	for (size_t r = x->n; r-- > 0;) {
		struct lp_pred_run *R = x->runs[r];
		for (size_t l = 0; l < R->nloops; l++) {
			size_t root = lp_pred_uf_find(x->lsrc, x->loopmap[r][l]);
			if (x->lof[root] == SIZE_MAX) {
				struct xmloop *nl2 = realloc(m->loops, (m->nloops + 1) * sizeof(*nl2));
				if (!nl2)
					return -1;
				m->loops = nl2;
				memset(&m->loops[m->nloops], 0, sizeof(*m->loops));
				m->loops[m->nloops].parent = -1;
				m->loops[m->nloops].depth = R->loops[l].depth;
				if (!(m->loops[m->nloops].function = strdup(R->loops[l].function)) ||
				    !(m->loops[m->nloops].where = strdup(R->loops[l].where)))
					return -1;
				x->lof[root] = m->nloops++;
			} else {
				struct xmloop *L = &m->loops[x->lof[root]];
				char f1[256], f2[256];
				int a1, b1, a2, b2;
				if (parse_where(L->where, f1, sizeof(f1), &a1, &b1) &&
				    parse_where(R->loops[l].where, f2, sizeof(f2), &a2, &b2) && !strcmp(f1, f2) &&
				    (a2 < a1 || b2 > b1)) {
					char *w = join_where(f1, a2 < a1 ? a2 : a1, b2 > b1 ? b2 : b1);
					if (!w)
						return -1;
					free(L->where);
					L->where = w;
				}
			}
		}
	}
	for (size_t r = x->n; r-- > 0;) {
		struct lp_pred_run *R = x->runs[r];
		for (size_t l = 0; l < R->nloops; l++) {
			size_t me = lp_pred_join_loop_of(x, r, l);
			if (R->loops[l].parent >= 0 && m->loops[me].parent < 0) {
				size_t p = lp_pred_join_loop_of(x, r, (size_t)R->loops[l].parent);
				if (p != me)
					m->loops[me].parent = (int)p;
			}
		}
	}
	return 0;
}

/* Model groups: one per united set of pc keys, with their per-run arrays
 * and walks. */
static int model_groups(struct lp_pred_model *m, struct lp_pred_join *x)
{
	size_t n = x->n;

	for (size_t i = 0; i < x->npk; i++)
		x->gof[i] = SIZE_MAX;
	for (size_t i = 0; i < x->npk; i++) {
		size_t root = lp_pred_uf_find(x->gp, i);
		if (x->gof[root] == SIZE_MAX)
			x->gof[root] = m->ngroups++;
		x->gof[i] = x->gof[root];
	}
	if (!(m->g = calloc(m->ngroups + 1, sizeof(*m->g))))
		return -1;
	for (size_t k = 0; k < m->ngroups; k++) {
		struct xgroup *g = &m->g[k];
		g->loop = -1;
		g->bm = calloc(m->nblocks, sizeof(*g->bm));
		g->mrefs = calloc(n, sizeof(*g->mrefs));
		g->mh = calloc(n * m->nblocks, sizeof(*g->mh));
		g->mwstride = calloc(n, sizeof(*g->mwstride));
		g->mwlen = calloc(n, sizeof(*g->mwlen));
		g->mwstride1 = calloc(n, sizeof(*g->mwstride1));
		if (!g->bm || !g->mrefs || !g->mh || !g->mwstride || !g->mwlen || !g->mwstride1)
			return -1;
	}
	for (size_t r = 0; r < n; r++) {
		size_t *grp = malloc((x->runs[r]->npcs + 1) * sizeof(*grp));
		if (!grp)
			return -1;
		for (size_t i = 0; i < x->runs[r]->npcs; i++)
			grp[i] = x->gof[x->pcmap[r][i]];
		for (size_t k = 0; k < m->ngroups; k++)
			if (!run_walk(x->runs[r], grp, k, &m->g[k].mwstride[r], &m->g[k].mwlen[r], &m->g[k].mwstride1[r]))
				m->g[k].mwstride[r] = m->g[k].mwlen[r] = 0, m->g[k].mwstride1[r] = -1;
		free(grp);
	}
	return 0;
}

/* What the group's pcs add up to: per run its references and histograms;
 * its pcs counted once, its source lines, and its names from its busiest
 * pc. */
struct group_names {
	unsigned char *counted; /* per pc key */
	uint64_t *best;         /* per group: references of the pc named after */
	int *lmin, *lmax;       /* per group: source line range in file[] */
	char (*file)[256];
};

static int group_add_pc(struct lp_pred_model *m, const struct lp_pred_join *x, struct group_names *gn, size_t r,
			size_t i)
{
	const struct lp_pred_run *R = x->runs[r];
	const struct lp_pred_run_pc *p = &R->pcs[i];
	size_t gi = x->gof[x->pcmap[r][i]];
	struct xgroup *g = &m->g[gi];
	char f[256];
	int a, b, rc = 0;

	g->mrefs[r] += (double)p->refs;
	for (size_t bb = 0; bb < m->nblocks && !rc; bb++) {
		size_t k;
		for (k = 0; k < R->nblocks && R->blocks[k] != m->blocks[bb]; k++)
			;
		rc = lp_pred_hist_merge(&g->mh[r * m->nblocks + bb], &p->h[k]);
	}
	if (rc < 0)
		return rc;
	if (!gn->counted[x->pcmap[r][i]]) {
		gn->counted[x->pcmap[r][i]] = 1;
		g->npcs++;
	}
	if (parse_where(p->where, f, sizeof(f), &a, &b) && (!gn->file[gi][0] || !strcmp(gn->file[gi], f))) {
		snprintf(gn->file[gi], sizeof(gn->file[gi]), "%s", f);
		if (!gn->lmin[gi] || a < gn->lmin[gi])
			gn->lmin[gi] = a;
		if (b > gn->lmax[gi])
			gn->lmax[gi] = b;
	}
	if (!g->function || p->refs > gn->best[gi]) {
		gn->best[gi] = p->refs;
		free(g->function);
		free(g->strides);
		g->function = strdup(p->function);
		g->strides = strdup(p->strides);
		g->loop = p->loop >= 0 ? (int)lp_pred_join_loop_of(x, r, (size_t)p->loop) : -1;
		if (!g->function || !g->strides)
			return lp_seterr(LP_ENOMEM, "out of memory");
	}
	return 0;
}

static int group_measure(struct lp_pred_model *m, const struct lp_pred_join *x)
{
	struct group_names gn = {
		.counted = calloc(x->npk + 1, 1),
		.best = calloc(m->ngroups + 1, sizeof(*gn.best)),
		.lmin = calloc(m->ngroups + 1, sizeof(*gn.lmin)),
		.lmax = calloc(m->ngroups + 1, sizeof(*gn.lmax)),
		.file = calloc(m->ngroups + 1, sizeof(*gn.file)),
	};
	int rc = 0;

	if (!gn.counted || !gn.best || !gn.lmin || !gn.lmax || !gn.file)
		rc = lp_seterr(LP_ENOMEM, "out of memory");
	for (size_t r = x->n; r-- > 0 && !rc;)
		for (size_t i = 0; i < x->runs[r]->npcs && !rc; i++)
			rc = group_add_pc(m, x, &gn, r, i);
	for (size_t k = 0; k < m->ngroups && !rc; k++) {
		struct xgroup *g = &m->g[k];
		if (gn.file[k][0])
			g->where = join_where(gn.file[k], gn.lmin[k], gn.lmax[k]);
		else
			g->where = strdup("");
		if (!g->where)
			rc = lp_seterr(LP_ENOMEM, "out of memory");
	}
	free(gn.counted);
	free(gn.best);
	free(gn.lmin);
	free(gn.lmax);
	free(gn.file);
	return rc;
}

/* The models: references, footprint, then each group. */
static int model_fit_all(struct lp_pred_model *m)
{
	size_t n = m->nsizes, fb = 0;
	double y[64] = { 0 };
	int rc;

	if ((rc = lp_pred_fit_select(&m->basis, m->sizes, m->total, n, LP_PRED_FIT_NONNEG | LP_PRED_FIT_MONOTONE,
				     m->range * m->sizes[n - 1], &m->refs)) < 0)
		return rc;
	/* (keys of set distances are above every block size) */
	for (size_t b = 1; b < m->nblocks; b++)
		if (m->blocks[b] < m->blocks[fb])
			fb = b;
	for (size_t k = 0; k < m->ngroups; k++)
		for (size_t r = 0; r < n; r++)
			y[r] += m->g[k].mh[r * m->nblocks + fb].cold;
	if (lp_pred_fit_select(&m->basis, m->sizes, y, n, LP_PRED_FIT_NONNEG | LP_PRED_FIT_MONOTONE,
			       m->range * m->sizes[n - 1], &m->footprint) == 0)
		m->fblock = m->blocks[fb];
	for (size_t k = 0; k < m->ngroups; k++) {
		struct xgroup *g = &m->g[k];
		if ((rc = lp_pred_fit_select(&m->basis, m->sizes, g->mrefs, n,
					     LP_PRED_FIT_NONNEG | LP_PRED_FIT_MONOTONE, m->range * m->sizes[n - 1],
					     &g->refs)) < 0)
			return rc;
		for (size_t b = 0; b < m->nblocks; b++)
			if ((rc = lp_pred_model_fit_block(m, g, b)) < 0)
				return rc;
		if ((rc = fit_walk(m, g)) < 0)
			return rc;
	}
	return lp_pred_model_calibrate(m, LP_PRED_PLACE_DEFAULT, 0);
}

/* One fit with the runs joined by address (one binary) or by source
 * location (several, or force_source); *unjoined when the join check
 * refused the runs. */
static int fit_joined(struct lp_pred_model **out, struct lp_pred_run *const *runs_in, size_t n,
		      const struct lp_pred_fit_options *o, int force_source, int *unjoined, int *by_source)
{
	struct lp_pred_model *m;
	struct lp_pred_join x = { .n = n, .force_source = force_source };
	int rc;

	*out = NULL;
	*unjoined = *by_source = 0;
	if (!(m = calloc(1, sizeof(*m))) || !(x.runs = malloc(n * sizeof(*x.runs)))) {
		free(m);
		return lp_seterr(LP_ENOMEM, "out of memory");
	}
	memcpy(x.runs, runs_in, n * sizeof(*x.runs));
	if ((rc = model_setup(m, x.runs, n, o)) < 0)
		goto out;
	if ((rc = lp_pred_join_keys(&x)) < 0)
		goto out;
	*by_source = x.by_source;
	if (lp_pred_join_unite(&x) < 0 || model_loops(m, &x) < 0 || model_groups(m, &x) < 0) {
		rc = lp_seterr(LP_ENOMEM, "out of memory");
		goto out;
	}
	if ((rc = group_measure(m, &x)) == 0) {
		if ((rc = lp_pred_join_check(m, &x)) == 0)
			rc = model_fit_all(m);
		else
			*unjoined = 1;
	}
out:
	lp_pred_join_release(&x);
	free(x.runs);
	if (rc < 0) {
		lp_pred_model_free(m);
		return rc;
	}
	*out = m;
	return 0;
}

int lp_pred_model_fit(struct lp_pred_model **out, struct lp_pred_run *const *runs, size_t n,
		      const struct lp_pred_fit_options *o)
{
	int rc, unjoined, by_source, sources = 1;

	*out = NULL;
	if (n < 3)
		return lp_seterr(LP_EINVAL, "a model needs runs at 3 or more sizes (have %zu)", n);
	if (n > 64)
		return lp_seterr(LP_ELIMIT, "at most 64 runs");
	rc = fit_joined(out, runs, n, o, 0, &unjoined, &by_source);
	for (size_t r = 0; r < n; r++)
		sources &= runs[r]->version >= 2;
	/* Runs of one binary whose code differs with the size (a vectorised
	 * loop whose scalar remainder runs at some sizes only, or only the
	 * remainder at the smallest) leave pcs without counterparts by
	 * address; by source location they are the same accesses. */
	if (rc < 0 && unjoined && !by_source && sources)
		rc = fit_joined(out, runs, n, o, 1, &unjoined, &by_source);
	return rc;
}
