/* Scalable models of reuse-distance histograms (Marin & Mellor-Crummey,
 * section 4.1) and their evaluation (section 5).
 *
 * Assumptions (docs/prediction.md, "Modelling"):
 * - A group's histogram at a block size is modelled as: cold accesses; the
 *   leading bins whose distance is the same at every size (constant-distance
 *   reuse inside the innermost loop), each with its own count; and the rest,
 *   split into bins that hold a fixed fraction of the rest at every size,
 *   each with a distance that is a function of P. Counts (accesses, cold,
 *   constant bins, rest) and distances are each fitted as functions of P
 *   (prediction-fit.c), the counts rather than fractions because they are the
 *   quantities that scale as plain polynomials in regular codes.
 * - Splitting: a bin [u0, u1] of the rest's quantiles is split where, in
 *   each run, the midpoint of its distance range falls; the median of those
 *   fractions over the runs is the split for all runs. Splitting stops when
 *   the two halves' fitted distances agree within the tolerance at every
 *   fitted size and on a grid up to the constraint range, at a depth limit,
 *   or when the bin is already that narrow in every run. Adjacent bins whose
 *   models agree are then coalesced.
 * - A bin's accesses are all at its fitted (mean) distance: fully
 *   associative LRU misses are cold accesses plus the bins at distances >=
 *   the cache's blocks (section 5.1); set-associative ones weight each bin
 *   by the binomial miss probability (section 5.2, lp_binomial_miss()).
 * - Stack distances are per block size: a level is predicted only from
 *   histograms collected at its line (or page) size.
 */
#include "prediction/prediction-model.h"

#include "common/error.h"

#include <locprof/model.h>

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static void bm_release(struct xbm *b)
{
	free(b->cd);
	free(b->ck);
	free(b->cnt);
	free(b->dist);
	memset(b, 0, sizeof(*b));
}

void lp_pred_model_free(struct lp_pred_model *m)
{
	if (!m)
		return;
	lp_pred_basis_release(&m->basis);
	free(m->command);
	free(m->sizes);
	free(m->blocks);
	free(m->total);
	for (size_t i = 0; i < m->ngroups; i++) {
		struct xgroup *g = &m->g[i];
		free(g->function);
		free(g->where);
		free(g->strides);
		for (size_t b = 0; g->bm && b < m->nblocks; b++)
			bm_release(&g->bm[b]);
		free(g->bm);
		free(g->cal);
		free(g->mrefs);
		free(g->mwstride);
		free(g->mwlen);
		free(g->mwstride1);
		for (size_t k = 0; g->mh && k < m->nsizes * m->nblocks; k++)
			lp_pred_hist_release(&g->mh[k]);
		free(g->mh);
	}
	free(m->g);
	for (size_t i = 0; i < m->nloops; i++) {
		free(m->loops[i].function);
		free(m->loops[i].where);
	}
	free(m->loops);
	free(m);
}

/* ---- accessors ------------------------------------------------------------------ */

size_t lp_pred_model_nsizes(const struct lp_pred_model *m) { return m->nsizes; }
double lp_pred_model_fit_size(const struct lp_pred_model *m, size_t i) { return m->sizes[i]; }
size_t lp_pred_model_nblocks(const struct lp_pred_model *m) { return m->nblocks; }
uint64_t lp_pred_model_block(const struct lp_pred_model *m, size_t i) { return m->blocks[i]; }
const char *lp_pred_model_command(const struct lp_pred_model *m) { return m->command; }
size_t lp_pred_model_ngroups(const struct lp_pred_model *m) { return m->ngroups; }
size_t lp_pred_model_nloops(const struct lp_pred_model *m) { return m->nloops; }

void lp_pred_model_group(const struct lp_pred_model *m, size_t g, struct lp_pred_group_info *out)
{
	const struct xgroup *x = &m->g[g];

	out->function = x->function && *x->function ? x->function : "?";
	out->where = x->where ? x->where : "";
	out->strides = x->strides ? x->strides : "-";
	out->loop = x->loop;
	out->npcs = x->npcs;
}

void lp_pred_model_loop(const struct lp_pred_model *m, size_t l, struct lp_pred_loop_info *out)
{
	out->function = m->loops[l].function;
	out->where = m->loops[l].where;
	out->parent = m->loops[l].parent;
	out->depth = m->loops[l].depth;
}

int lp_pred_model_group_in_loop(const struct lp_pred_model *m, size_t g, size_t l)
{
	for (int x = m->g[g].loop, guard = 0; x >= 0 && guard < 64; x = m->loops[x].parent, guard++)
		if ((size_t)x == l)
			return 1;
	return 0;
}

int lp_pred_model_bins(const struct lp_pred_model *m, size_t g, uint64_t block, size_t *nconst,
		   size_t *nbins)
{
	long b = lp_pred_model_block_index(m, block);

	*nconst = *nbins = 0;
	if (b < 0 || g >= m->ngroups)
		return lp_seterr(LP_EINVAL, "no group %zu or block size %" PRIu64, g, block);
	*nconst = m->g[g].bm[b].nconst;
	*nbins = m->g[g].bm[b].nbins;
	return 0;
}

const char *lp_pred_model_refs_formula(const struct lp_pred_model *m, size_t g, char *buf, size_t len)
{
	return lp_pred_fit_format(&m->basis, g == SIZE_MAX ? &m->refs : &m->g[g].refs, buf, len);
}

double lp_pred_model_references(const struct lp_pred_model *m, double P)
{
	return lp_pred_model_eval(m, &m->refs, P);
}

double lp_pred_model_measured_references(const struct lp_pred_model *m, size_t i)
{
	return i < m->nsizes ? m->total[i] : 0;
}

char *lp_pred_model_describe(const struct lp_pred_model *m, size_t g, uint64_t block)
{
	long b = lp_pred_model_block_index(m, block);
	const struct xbm *bm;
	char f[512], *s = NULL;
	size_t len = 0;
	FILE *o;

	if (b < 0 || g >= m->ngroups) {
		lp_seterr(LP_EINVAL, "no group %zu or block size %" PRIu64, g, block);
		return NULL;
	}
	bm = &m->g[g].bm[b];
	if (!(o = open_memstream(&s, &len))) {
		lp_seterr(LP_ENOMEM, "out of memory");
		return NULL;
	}
	fprintf(o, "  accesses   %s\n", lp_pred_fit_format(&m->basis, &bm->acc, f, sizeof(f)));
	fprintf(o, "  cold       %s\n", lp_pred_fit_format(&m->basis, &bm->cold, f, sizeof(f)));
	for (size_t i = 0; i < bm->nconst; i++)
		fprintf(o, "  d = %-6g count %s\n", bm->cd[i], lp_pred_fit_format(&m->basis, &bm->ck[i], f, sizeof(f)));
	fprintf(o, "  rest       %s\n", lp_pred_fit_format(&m->basis, &bm->rest, f, sizeof(f)));
	for (size_t i = 0; i < bm->nbins; i++) {
		char c[512];
		fprintf(o, "  bin %2zu  count %s  at d = %s\n", i, lp_pred_fit_format(&m->basis, &bm->cnt[i], c, sizeof(c)),
			lp_pred_fit_format(&m->basis, &bm->dist[i], f, sizeof(f)));
	}
	if (m->g[g].walk) {
		char c[512], d[512];
		fprintf(o, "  walk       stride %s bytes, %s accesses", lp_pred_fit_format(&m->basis, &m->g[g].wstride, f, sizeof(f)),
			lp_pred_fit_format(&m->basis, &m->g[g].wlen, c, sizeof(c)));
		if (m->g[g].walk1)
			fprintf(o, ", moved by %s bytes", lp_pred_fit_format(&m->basis, &m->g[g].wstride1, d, sizeof(d)));
		fputc('\n', o);
	}
	if (fclose(o)) {
		free(s);
		lp_seterr(LP_ENOMEM, "out of memory");
		return NULL;
	}
	return s;
}

void lp_pred_model_join(const struct lp_pred_model *m, struct lp_pred_join_info *out)
{
	*out = m->join;
}
