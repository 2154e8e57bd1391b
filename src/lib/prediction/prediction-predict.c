/* The model evaluated at a problem size (section 5): predicted histograms,
 * fully-associative misses (the cut at the cache size) and set-associative
 * ones (binomial, set distances, calibrated or strided placement). */
#include "prediction/prediction-model.h"

#include "common/error.h"

#include <locprof/model.h>

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>


long lp_pred_model_block_index(const struct lp_pred_model *m, uint64_t block)
{
	for (size_t b = 0; b < m->nblocks; b++)
		if (m->blocks[b] == block)
			return (long)b;
	return -1;
}

double lp_pred_model_eval(const struct lp_pred_model *m, const struct lp_pred_fit *f, double P)
{
	double v = lp_pred_fit_eval(&m->basis, f, P);
	return v > 0 && isfinite(v) ? v : 0;
}

static int cmp_bin(const void *a, const void *b)
{
	const struct lp_pred_bin *x = a, *y = b;
	return x->distance < y->distance ? -1 : x->distance > y->distance;
}

int lp_pred_model_hist(const struct lp_pred_model *m, size_t g, uint64_t block, double P,
		   struct lp_pred_bin **bins, size_t *nbins, double *cold)
{
	long b = lp_pred_model_block_index(m, block);
	const struct xbm *bm;
	struct lp_pred_bin *v;

	*bins = NULL;
	*nbins = 0;
	*cold = 0;
	if (g >= m->ngroups)
		return lp_seterr(LP_EINVAL, "no group %zu", g);
	if (b < 0)
		return lp_seterr(LP_EINVAL, "no histograms of %" PRIu64 "-byte blocks in the model", block);
	bm = &m->g[g].bm[b];
	if (!bm->valid)
		return 0;
	*cold = lp_pred_model_eval(m, &bm->cold, P);
	if (!(v = malloc((bm->nconst + bm->nbins + 1) * sizeof(*v))))
		return lp_seterr(LP_ENOMEM, "out of memory");
	for (size_t i = 0; i < bm->nconst; i++)
		v[i] = (struct lp_pred_bin){ bm->cd[i], lp_pred_model_eval(m, &bm->ck[i], P) };
	/* the bins of the rest share it out (their counts are shares of it:
	 * normalised here only against rounding) */
	double sum = 0, rest = lp_pred_model_eval(m, &bm->rest, P), acc = lp_pred_model_eval(m, &bm->acc, P), cst = 0;
	for (size_t i = 0; i < bm->nbins; i++)
		sum += lp_pred_model_eval(m, &bm->cnt[i], P);
	for (size_t i = 0; i < bm->nbins; i++)
		v[bm->nconst + i] = (struct lp_pred_bin){ lp_pred_model_eval(m, &bm->dist[i], P),
						      sum > 0 ? lp_pred_model_eval(m, &bm->cnt[i], P) * rest / sum : 0 };
	/* and all the parts share out the accesses (section 4.1: the
	 * normalised frequencies of a histogram add up to one). The paper
	 * models the leading constant-distance bins and leaves the rest what
	 * remains; here the rest's count is fitted on its own data (it holds
	 * the long reuses, the misses) and the constant-distance bins take
	 * what remains, in the proportions of their fits: their counts are
	 * differences such as a column walk's P^3 - P^4/2048 reuses within a
	 * page, which the constraints over the whole range need not let a fit
	 * reproduce. Only when cold and rest alone exceed the accesses is the
	 * rest scaled down. */
	for (size_t i = 0; i < bm->nconst; i++)
		cst += v[i].count;
	if (cst > 0) {
		double room = acc - *cold - rest, k = room > 0 ? room / cst : 0;
		for (size_t i = 0; i < bm->nconst; i++)
			v[i].count *= k;
		cst *= k;
	}
	if (*cold + rest > acc && rest > 0) {
		double k = acc > *cold ? (acc - *cold) / rest : 0;
		for (size_t i = 0; i < bm->nbins; i++)
			v[bm->nconst + i].count *= k;
	}
	*nbins = bm->nconst + bm->nbins;
	qsort(v, *nbins, sizeof(*v), cmp_bin);
	*bins = v;
	return 0;
}

double lp_pred_miss_fa(double d, uint64_t blocks)
{
	return d >= (double)blocks ? 1 : 0;
}

double lp_pred_miss_sa(double d, uint64_t sets, uint64_t ways)
{
	if (sets <= 1)
		return lp_pred_miss_fa(d, ways);
	return lp_binomial_miss(d, sets, ways);
}

/* The key of the level's set-distance histograms, 0 if the model has none
 * (or the level is fully associative, assoc 0: its stack distances are
 * exact; a level of one set given by its ways uses the set distances of
 * 1xLINE when they were collected, which are its stack distances). */
uint64_t lp_pred_model_setd_key(const struct lp_pred_model *m, const struct lp_pred_level *l)
{
	uint64_t sets = lp_pred_level_sets(l);

	if (l->assoc == 0 || l->block >= (1ull << 32) || sets >= (1ull << 31))
		return 0;
	return lp_pred_model_block_index(m, LP_PRED_KEY(sets, l->block)) >= 0 ? LP_PRED_KEY(sets, l->block) : 0;
}

/* The key of the set-distance histograms predict uses for level l: those
 * of its geometry, if the largest fitted run has set distances of at least
 * the level's ways (in some group). If none has, the fitted runs never
 * exercised the level's ways: every reuse then sat at a few lines per set,
 * where set distances are small integers that hide how the reuses grow
 * (a capacity reuse of 7500 lines in 2048 sets is at 3 or 4 like its
 * neighbours), and the binomial model of the stack distances, which keep
 * that growth, is used instead. */
static uint64_t setd_use(const struct lp_pred_model *m, const struct lp_pred_level *l)
{
	uint64_t key = lp_pred_model_setd_key(m, l);
	double W = (double)lp_pred_level_ways(l);
	long b;

	if (!key)
		return 0;
	b = lp_pred_model_block_index(m, key);
	for (size_t g = 0; g < m->ngroups; g++) {
		const struct lp_pred_hist *h = &m->g[g].mh[(m->nsizes - 1) * m->nblocks + (size_t)b];
		for (size_t i = 0; i < h->n; i++)
			if (h->e[i].hi >= W && h->e[i].count > 0)
				return key;
	}
	return 0;
}

int lp_pred_model_has_setd(const struct lp_pred_model *m, const struct lp_pred_level *l)
{
	return lp_pred_model_setd_key(m, l) != 0;
}

int lp_pred_model_uses_setd(const struct lp_pred_model *m, const struct lp_pred_level *l)
{
	return setd_use(m, l) != 0;
}

int lp_pred_model_walk(const struct lp_pred_model *m, size_t g, const struct lp_pred_level *l, double P,
		   struct lp_pred_place_walk *w)
{
	const struct xgroup *G;
	double st, acc;

	memset(w, 0, sizeof(*w));
	if (g >= m->ngroups || !(G = &m->g[g])->walk)
		return 0;
	/* strides are whole bytes */
	st = fabs(round(lp_pred_model_eval(m, &G->wstride, P)));
	acc = lp_pred_model_eval(m, &G->wlen, P);
	if (!(st > 0) || !(acc >= 2))
		return 0;
	w->stride = st;
	if (G->walk1)
		w->stride1 = fabs(round(lp_pred_model_eval(m, &G->wstride1, P)));
	/* a stride below the line walks consecutive lines */
	w->lines = st >= (double)l->block ? acc : ceil(acc * st / (double)l->block);
	return w->lines >= 2;
}

int lp_pred_model_predict(const struct lp_pred_model *m, size_t g, const struct lp_pred_level *l, double P,
		      struct lp_pred_count *out)
{
	return lp_pred_model_predict_sa(m, g, l, P, LP_PRED_SA_AUTO, out);
}

enum lp_pred_sa_model lp_pred_model_sa_model(const struct lp_pred_model *m, const struct lp_pred_level *l,
					     int how)
{
	uint64_t sets = lp_pred_level_sets(l);

	if (how == LP_PRED_SA_CALIBRATED && lp_pred_model_has_setd(m, l) && sets > 1)
		return LP_PRED_SA_MODEL_CALIBRATED;
	if (how == LP_PRED_SA_STRIDED && l->assoc && sets > 1)
		return LP_PRED_SA_MODEL_STRIDED;
	if (how == LP_PRED_SA_AUTO && lp_pred_model_uses_setd(m, l))
		return LP_PRED_SA_MODEL_SETD;
	if (how == LP_PRED_SA_AUTO && lp_pred_model_has_setd(m, l))
		return LP_PRED_SA_MODEL_BINOMIAL_UNEXERCISED;
	return !l->assoc || sets <= 1 ? LP_PRED_SA_MODEL_FULL : LP_PRED_SA_MODEL_BINOMIAL;
}

const char *lp_pred_sa_model_name(enum lp_pred_sa_model model)
{
	static const char *const names[] = {
		[LP_PRED_SA_MODEL_FULL] = "full",
		[LP_PRED_SA_MODEL_BINOMIAL] = "binomial",
		[LP_PRED_SA_MODEL_BINOMIAL_UNEXERCISED] = "binomial-unexercised",
		[LP_PRED_SA_MODEL_SETD] = "setd",
		[LP_PRED_SA_MODEL_CALIBRATED] = "calibrated",
		[LP_PRED_SA_MODEL_STRIDED] = "strided",
	};

	return (unsigned)model < sizeof(names) / sizeof(names[0]) ? names[model] : "?";
}

int lp_pred_model_predict_sa(const struct lp_pred_model *m, size_t g, const struct lp_pred_level *l, double P,
			 int how, struct lp_pred_count *out)
{
	struct lp_pred_bin *bins;
	size_t nb;
	double cold;
	uint64_t sets = lp_pred_level_sets(l), ways = lp_pred_level_ways(l);
	uint64_t key = how == LP_PRED_SA_AUTO ? setd_use(m, l) : 0;
	long b = lp_pred_model_block_index(m, l->block);
	struct lp_pred_placement pl;
	int rc;

	memset(out, 0, sizeof(*out));
	if (b < 0)
		return lp_seterr(LP_EINVAL, "level %s needs histograms of %" PRIu64 "-byte blocks, "
				 "which were not collected (collect with --line or --page)", l->name, l->block);
	if ((rc = lp_pred_model_hist(m, g, l->block, P, &bins, &nb, &cold)) < 0)
		return rc;
	out->references = lp_pred_model_eval(m, &m->g[g].refs, P);
	out->accesses = m->g[g].bm[b].valid ? lp_pred_model_eval(m, &m->g[g].bm[b].acc, P) : 0;
	out->fa_misses = out->sa_misses = cold;
	lp_pred_model_placement(m, g, l, &pl);
	if (how == LP_PRED_SA_CALIBRATED && pl.det && sets > 1)
		out->sa_cal = 1;
	if (how == LP_PRED_SA_STRIDED && sets > 1) {
		/* placement of the group's walk at P (prediction-place.c) */
		struct lp_pred_place_walk w;
		double *D = malloc((nb + 1) * sizeof(*D)), *pm = malloc((nb + 1) * sizeof(*pm));
		int have = lp_pred_model_walk(m, g, l, P, &w);
		if (!D || !pm) {
			free(D);
			free(pm);
			free(bins);
			return lp_seterr(LP_ENOMEM, "out of memory");
		}
		for (size_t i = 0; i < nb; i++)
			D[i] = bins[i].distance;
		rc = lp_pred_place_miss(have ? &w : NULL, sets, ways, l->block, D, nb, pm);
		for (size_t i = 0; i < nb && rc == 0; i++) {
			out->fa_misses += bins[i].count * lp_pred_miss_fa(bins[i].distance, l->blocks);
			out->sa_misses += bins[i].count * pm[i];
		}
		out->sa_strided = have;
		free(D);
		free(pm);
		free(bins);
		return rc;
	}
	for (size_t i = 0; i < nb; i++) {
		out->fa_misses += bins[i].count * lp_pred_miss_fa(bins[i].distance, l->blocks);
		if (key)
			continue;
		if (!out->sa_cal) {
			out->sa_misses += bins[i].count * lp_pred_miss_sa(bins[i].distance, sets, ways);
			continue;
		}
		for (int p = 0; p < LP_PRED_PLACE_N; p++)
			if (pl.w[p] > 0)
				out->sa_misses += bins[i].count * pl.w[p] * lp_pred_miss_place(p, bins[i].distance, sets, ways);
	}
	free(bins);
	if (key) {
		/* set distances: an LRU set of k ways misses when d >= k */
		if ((rc = lp_pred_model_hist(m, g, key, P, &bins, &nb, &cold)) < 0)
			return rc;
		out->sa_misses = cold;
		for (size_t i = 0; i < nb; i++)
			out->sa_misses += bins[i].count * lp_pred_miss_fa(bins[i].distance, ways);
		out->sa_setd = 1;
		free(bins);
	}
	return 0;
}

int lp_pred_model_measured(const struct lp_pred_model *m, size_t g, const struct lp_pred_level *l, size_t run,
		       struct lp_pred_count *out)
{
	long b = lp_pred_model_block_index(m, l->block);
	const struct lp_pred_hist *h;
	uint64_t sets = lp_pred_level_sets(l), ways = lp_pred_level_ways(l);
	double S = (double)l->blocks;

	memset(out, 0, sizeof(*out));
	if (b < 0)
		return lp_seterr(LP_EINVAL, "level %s needs histograms of %" PRIu64 "-byte blocks, "
				 "which were not collected", l->name, l->block);
	if (run >= m->nsizes || g >= m->ngroups)
		return lp_seterr(LP_EINVAL, "no run %zu or group %zu", run, g);
	if (lp_pred_model_setd_key(m, l)) {
		/* exact: an LRU set of k ways misses when the set distance is >= k */
		const struct lp_pred_hist *sh = &m->g[g].mh[run * m->nblocks + (size_t)lp_pred_model_block_index(m, lp_pred_model_setd_key(m, l))];
		double W = (double)ways, sa = sh->cold;
		for (size_t i = 0; i < sh->n; i++) {
			const struct lp_pred_hent *e = &sh->e[i];
			if (e->lo >= W)
				sa += e->count;
			else if (e->hi >= W)
				sa += e->count * (e->hi - W + 1) / (e->hi - e->lo + 1);
		}
		out->sa_setd = 1;
		h = &m->g[g].mh[run * m->nblocks + (size_t)b];
		out->references = m->g[g].mrefs[run];
		out->accesses = lp_pred_hist_finite(h) + h->cold;
		out->fa_misses = h->cold;
		for (size_t i = 0; i < h->n; i++) {
			const struct lp_pred_hent *e = &h->e[i];
			if (e->lo >= S)
				out->fa_misses += e->count;
			else if (e->hi >= S)
				out->fa_misses += e->count * (e->hi - S + 1) / (e->hi - e->lo + 1);
		}
		out->sa_misses = sa;
		return 0;
	}
	h = &m->g[g].mh[run * m->nblocks + (size_t)b];
	out->references = m->g[g].mrefs[run];
	out->accesses = lp_pred_hist_finite(h) + h->cold;
	out->fa_misses = out->sa_misses = h->cold;
	for (size_t i = 0; i < h->n; i++) {
		const struct lp_pred_hent *e = &h->e[i];
		double fa;
		if (e->lo >= S)
			fa = e->count;
		else if (e->hi < S)
			fa = 0;
		else
			fa = e->count * (e->hi - S + 1) / (e->hi - e->lo + 1);
		out->fa_misses += fa;
		out->sa_misses += sets <= 1 ? fa : e->count * lp_binomial_miss((e->lo + e->hi) / 2, sets, ways);
	}
	return 0;
}
