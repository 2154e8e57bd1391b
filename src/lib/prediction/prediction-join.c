/* Runs joined into reference groups (docs/prediction.md, "Joining runs").
 *
 * Assumptions:
 * - Runs of one binary (same build-id, or the same file bytes) have the
 *   same code at the same link-time addresses: a pc is its binary and
 *   address, as exact as a join can be.
 * - Runs of different binaries (one per size, the size fixed at compile
 *   time with -DN=...) of one source, compiled alike, have the same accesses
 *   at the same source locations: a pc is its file, line, column, the call
 *   sites it is inlined into, its kinds of reference and the shape of its
 *   strides (zero, positive, negative, unknown, irregular at each loop
 *   level). A shape that is not found in every run (the compiler unrolled
 *   or vectorised one size's loop differently) falls back to the location
 *   and kind alone. Several pcs of one run at one key (unrolled copies) are
 *   one access of the model.
 * - Loops of different binaries join by function and source lines, and
 *   through the pcs they hold.
 */
#include "prediction/prediction-model.h"

#include "common/array.h"
#include "common/error.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Share of a run's references that may be in groups another run lacks
 * before fit refuses the runs (code that runs at some sizes only). */
#define JOIN_MAX_UNJOINED 0.05

/* Index of key in keys[0..*n), appended when new. */
static size_t key_index(struct lp_pred_jkey **keys, size_t *n, size_t *cap, const char *module, uint64_t addr)
{
	for (size_t i = 0; i < *n; i++)
		if ((*keys)[i].addr == addr && !strcmp((*keys)[i].module, module))
			return i;
	if (LP_ARRAY_RESERVE(*keys, *cap, *n + 1, 64, "reference keys") < 0)
		return SIZE_MAX;
	(*keys)[*n] = (struct lp_pred_jkey){ module, addr };
	return (*n)++;
}

/* A string the join owns (freed with it); NULL when out of memory. */
static const char *own(struct lp_pred_join *x, char *s)
{
	if (!s || LP_ARRAY_RESERVE(x->owned, x->capowned, x->nowned + 1, 64, "keys") < 0) {
		free(s);
		return NULL;
	}
	return x->owned[x->nowned++] = s;
}

/* What identifies a run's module: its build-id or hash, else its path. */
static const char *module_id(const struct lp_pred_run *R, int m)
{
	if (m < 0 || (size_t)m >= R->nmodules)
		return "";
	return R->module_ids && R->module_ids[m] ? R->module_ids[m] : R->modules[m];
}

static int has_module(const struct lp_pred_run *R, const char *id)
{
	for (size_t m = 0; m < R->nmodules; m++)
		if (!strcmp(module_id(R, (int)m), id))
			return 1;
	return 0;
}

/* Every run has the modules of the first, and no other. */
static int same_binaries(struct lp_pred_run **runs, size_t n)
{
	for (size_t r = 1; r < n; r++) {
		for (size_t m = 0; m < runs[r]->nmodules; m++)
			if (!has_module(runs[0], module_id(runs[r], (int)m)))
				return 0;
		for (size_t m = 0; m < runs[0]->nmodules; m++)
			if (!has_module(runs[r], module_id(runs[0], (int)m)))
				return 0;
	}
	return 1;
}

/* "16,0,?" -> "+0?": the shape of the strides, innermost first. */
static void stride_shape(const char *st, char *out, size_t len)
{
	size_t k = 0;

	while (st && *st && k + 1 < len) {
		char c = *st == '?' || *st == '~' ? *st : *st == '-' ? (st[1] ? '-' : 'n') : *st == '0' ? '0' : '+';
		out[k++] = c;
		st = strchr(st, ',');
		st = st ? st + 1 : NULL;
	}
	out[k] = 0;
}

/* The source key of a pc: "S|loc|kinds|shape" (full) or "B|loc|kinds". */
static char *source_key(const struct lp_pred_run_pc *p, int full)
{
	char shape[XMAX_DEPTH + 8], *s = NULL;

	stride_shape(p->strides, shape, sizeof(shape));
	if ((full ? asprintf(&s, "S|%s|%s|%s", p->src, p->kinds, shape) : asprintf(&s, "B|%s|%s", p->src, p->kinds)) < 0)
		return NULL;
	return s;
}

/* Source keys: full where every run has the key, else the base key. */
static int source_pc_keys(struct lp_pred_join *x)
{
	struct lp_pred_jkey *fk = NULL;
	size_t nfk = 0, capfk = 0, **fmap = calloc(x->n, sizeof(*fmap));
	uint64_t *mask = NULL, all = x->n >= 64 ? ~0ull : (1ull << x->n) - 1;
	int rc = -1;

	if (!fmap)
		return -1;
	for (size_t r = 0; r < x->n; r++) {
		struct lp_pred_run *R = x->runs[r];
		if (!(fmap[r] = malloc((R->npcs + 1) * sizeof(**fmap))))
			goto out;
		for (size_t i = 0; i < R->npcs; i++) {
			const struct lp_pred_run_pc *p = &R->pcs[i];
			const char *k;
			fmap[r][i] = SIZE_MAX;
			if (!p->src)
				continue;
			if (!(k = own(x, source_key(p, 1))) || (fmap[r][i] = key_index(&fk, &nfk, &capfk, k, 0)) == SIZE_MAX)
				goto out;
		}
	}
	if (!(mask = calloc(nfk + 1, sizeof(*mask))))
		goto out;
	for (size_t r = 0; r < x->n; r++)
		for (size_t i = 0; i < x->runs[r]->npcs; i++)
			if (fmap[r][i] != SIZE_MAX)
				mask[fmap[r][i]] |= 1ull << r;
	for (size_t r = 0; r < x->n; r++) {
		struct lp_pred_run *R = x->runs[r];
		for (size_t i = 0; i < R->npcs; i++) {
			const struct lp_pred_run_pc *p = &R->pcs[i];
			const char *k;
			if (fmap[r][i] == SIZE_MAX) /* no source location: its binary and address */
				k = p->module >= 0 ? module_id(R, p->module) : "";
			else if (mask[fmap[r][i]] == all)
				k = fk[fmap[r][i]].module;
			else if (!(k = own(x, source_key(p, 0))))
				goto out;
			if ((x->pcmap[r][i] = key_index(&x->pk, &x->npk, &x->cappk, k,
							fmap[r][i] == SIZE_MAX && p->module >= 0 ? p->vaddr : 0)) == SIZE_MAX)
				goto out;
		}
	}
	rc = 0;
out:
	for (size_t r = 0; r < x->n; r++)
		free(fmap[r]);
	free(fmap);
	free(fk);
	free(mask);
	return rc;
}

/* Runs of different binaries need source locations in every run file. */
static int need_sources(const struct lp_pred_join *x)
{
	for (size_t r = 0; r < x->n; r++)
		if (x->runs[r]->version < 2) {
			const struct lp_pred_run *o = x->runs[r ? 0 : 1];
			return lp_seterr(LP_EINVAL,
					 "'%s' (%s) and '%s' (%s) ran different binaries, which join by source "
					 "location, but '%s' is a run file of version 1 without source locations: "
					 "collect it again",
					 x->runs[r]->path, x->runs[r]->nmodules ? x->runs[r]->modules[0] : "?", o->path,
					 o->nmodules ? o->modules[0] : "?", x->runs[r]->path);
		}
	return 0;
}

int lp_pred_join_keys(struct lp_pred_join *x)
{
	x->pcmap = calloc(x->n, sizeof(*x->pcmap));
	x->loopmap = calloc(x->n, sizeof(*x->loopmap));
	if (!x->pcmap || !x->loopmap)
		goto nomem;
	x->by_source = x->force_source || !same_binaries(x->runs, x->n);
	for (size_t r = 0; r < x->n; r++) {
		const char *main = module_id(x->runs[r], 0);
		int seen = 0;
		for (size_t q = 0; q < r && !seen; q++)
			seen = !strcmp(module_id(x->runs[q], 0), main);
		x->nbinaries += !seen;
	}
	if (x->by_source) {
		int rc = need_sources(x);
		if (rc < 0)
			return rc;
	}
	for (size_t r = 0; r < x->n; r++) {
		struct lp_pred_run *R = x->runs[r];
		x->pcmap[r] = malloc((R->npcs + 1) * sizeof(**x->pcmap));
		x->loopmap[r] = malloc((R->nloops + 1) * sizeof(**x->loopmap));
		if (!x->pcmap[r] || !x->loopmap[r])
			goto nomem;
		for (size_t l = 0; l < R->nloops; l++) {
			const struct lp_pred_run_loop *L = &R->loops[l];
			const char *k = module_id(R, L->module);
			uint64_t a = L->header;
			char *s;
			if (x->by_source) {
				if (asprintf(&s, "L|%s|%s", L->function, L->where) < 0 || !(k = own(x, s)))
					goto nomem;
				a = 0;
			}
			if ((x->loopmap[r][l] = key_index(&x->lk, &x->nlk, &x->caplk, k, a)) == SIZE_MAX)
				goto nomem;
		}
		if (x->by_source)
			continue;
		for (size_t i = 0; i < R->npcs; i++) {
			const struct lp_pred_run_pc *p = &R->pcs[i];
			/* code in no binary has no address stable across runs */
			if ((x->pcmap[r][i] = key_index(&x->pk, &x->npk, &x->cappk, module_id(R, p->module),
							p->module >= 0 ? p->vaddr : 0)) == SIZE_MAX)
				goto nomem;
		}
	}
	if (x->by_source && source_pc_keys(x) < 0)
		goto nomem;
	return 0;
nomem:
	return lp_seterr(LP_ENOMEM, "out of memory");
}

int lp_pred_join_unite(struct lp_pred_join *x)
{
	size_t *inner;

	x->gp = malloc((x->npk + 1) * sizeof(*x->gp));
	x->lsrc = malloc((x->nlk + 1) * sizeof(*x->lsrc));
	x->gof = malloc((x->npk + 1) * sizeof(*x->gof));
	x->lof = malloc((x->nlk + 1) * sizeof(*x->lof));
	inner = malloc((x->npk + 1) * sizeof(*inner));
	if (!x->gp || !x->lsrc || !x->gof || !x->lof || !inner) {
		free(inner);
		return -1;
	}
	for (size_t i = 0; i < x->npk; i++) {
		x->gp[i] = i;
		inner[i] = SIZE_MAX;
	}
	for (size_t i = 0; i < x->nlk; i++)
		x->lsrc[i] = i;
	for (size_t r = 0; r < x->n; r++) {
		struct lp_pred_run *R = x->runs[r];
		for (size_t l = 0; l < R->nloops; l++)
			if (R->loops[l].src >= 0)
				lp_pred_uf_union(x->lsrc, x->loopmap[r][l], x->loopmap[r][R->loops[l].src]);
		for (size_t i = 0; i < R->npcs; i++) {
			size_t k = x->pcmap[r][i];
			/* first pc of each run group */
			for (size_t j = 0; j < i; j++)
				if (R->pcs[j].group == R->pcs[i].group) {
					lp_pred_uf_union(x->gp, k, x->pcmap[r][j]);
					break;
				}
			/* one access is in one source loop in every build */
			if (x->by_source && R->pcs[i].loop >= 0) {
				size_t lk = x->loopmap[r][R->pcs[i].loop];
				if (inner[k] == SIZE_MAX)
					inner[k] = lk;
				else
					lp_pred_uf_union(x->lsrc, inner[k], lk);
			}
		}
	}
	free(inner);
	return 0;
}

size_t lp_pred_join_loop_of(const struct lp_pred_join *x, size_t r, size_t l)
{
	return x->lof[lp_pred_uf_find(x->lsrc, x->loopmap[r][l])];
}

/* "0x1136 stencil.c:12:9, ...": the busiest pcs of run r in groups that
 * run o has no references in. */
static void unjoined_pcs(const struct lp_pred_model *m, const struct lp_pred_join *x, size_t r, size_t o,
			 char *buf, size_t len)
{
	const struct lp_pred_run *R = x->runs[r];
	size_t k = 0, shown[3];
	int nshown = 0;

	buf[0] = 0;
	while (nshown < 3) {
		size_t best = SIZE_MAX;
		for (size_t i = 0; i < R->npcs; i++) {
			const struct lp_pred_run_pc *p = &R->pcs[i];
			int dup = 0;
			for (int s = 0; s < nshown; s++)
				dup |= shown[s] == i;
			if (dup || !p->refs || m->g[x->gof[x->pcmap[r][i]]].mrefs[o] > 0)
				continue;
			if (best == SIZE_MAX || p->refs > R->pcs[best].refs)
				best = i;
		}
		if (best == SIZE_MAX)
			break;
		shown[nshown++] = best;
		{
			const struct lp_pred_run_pc *p = &R->pcs[best];
			int w = snprintf(buf + k, len - k, "%s0x%" PRIx64 " %s", nshown > 1 ? ", " : "", p->vaddr,
					 p->src ? p->src : p->where && *p->where ? p->where : "(no source location)");
			if (w < 0 || (size_t)w >= len - k)
				break;
			k += (size_t)w;
		}
	}
}

int lp_pred_join_check(struct lp_pred_model *m, const struct lp_pred_join *x)
{
	double all = 0, joined = 0, worst = 0;
	size_t wr = 0, wo = 0;
	char pcs[400];

	memset(&m->join, 0, sizeof(m->join));
	m->join.by_source = x->by_source;
	m->join.runs = x->n;
	m->join.binaries = x->nbinaries;
	m->join.groups = m->ngroups;
	for (size_t k = 0; k < m->ngroups; k++) {
		const struct xgroup *g = &m->g[k];
		int every = 1;
		double s = 0;
		for (size_t r = 0; r < x->n; r++) {
			every &= g->mrefs[r] > 0;
			s += g->mrefs[r];
		}
		all += s;
		if (every) {
			m->join.joined++;
			joined += s;
		}
	}
	m->join.share = all > 0 ? joined / all : 1;
	/* the run with the largest share of references another run lacks */
	for (size_t r = 0; r < x->n; r++) {
		double tot = 0;
		for (size_t k = 0; k < m->ngroups; k++)
			tot += m->g[k].mrefs[r];
		for (size_t o = 0; o < x->n && tot > 0; o++) {
			double miss = 0;
			for (size_t k = 0; k < m->ngroups; k++)
				if (!(m->g[k].mrefs[o] > 0))
					miss += m->g[k].mrefs[r];
			if (miss / tot > worst) {
				worst = miss / tot;
				wr = r;
				wo = o;
			}
		}
	}
	if (worst <= JOIN_MAX_UNJOINED)
		return 0;
	unjoined_pcs(m, x, wr, wo, pcs, sizeof(pcs));
	return lp_seterr(LP_EINVAL,
			 "the runs do not join: %.0f%% of the references of '%s' (%s) are at pcs with no counterpart "
			 "in '%s' (%s), by %s: %s; are they runs of one program?",
			 100 * worst, x->runs[wr]->path, x->runs[wr]->nmodules ? x->runs[wr]->modules[0] : "?",
			 x->runs[wo]->path, x->runs[wo]->nmodules ? x->runs[wo]->modules[0] : "?",
			 x->by_source ? "source location" : "code address", pcs);
}

void lp_pred_join_release(struct lp_pred_join *x)
{
	for (size_t r = 0; r < x->n; r++) {
		if (x->pcmap)
			free(x->pcmap[r]);
		if (x->loopmap)
			free(x->loopmap[r]);
	}
	for (size_t i = 0; i < x->nowned; i++)
		free(x->owned[i]);
	free(x->owned);
	free(x->pcmap);
	free(x->loopmap);
	free(x->pk);
	free(x->lk);
	free(x->gp);
	free(x->lsrc);
	free(x->gof);
	free(x->lof);
}
