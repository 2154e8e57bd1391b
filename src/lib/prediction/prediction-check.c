/* When the fitted sizes cannot speak for the predicted size
 * (docs/prediction.md, "Validity of a prediction").
 *
 * Assumptions:
 * - A fully-associative level misses on the reuses at stack distance >=
 *   its capacity. Reuses whose distance was under the capacity at every
 *   fitted size and reaches it only beyond the largest one are predicted
 *   by extrapolating their distance across a capacity the runs never
 *   crossed. Where their distances at the largest fitted size are long
 *   (SMALL_DIST blocks or more) they are smooth functions of the size and
 *   extrapolate well (the matrix multiply's reuses of B across i, 2500
 *   lines at N = 200, cut at an L3 of 12288 lines at N = 808); where they
 *   are short they are whole numbers of a few blocks that are not yet
 *   polynomials (a matrix that spans 1.5 to 10 pages), and nothing
 *   measured says where they cross. A level whose predicted misses are
 *   more than CROSS_SHARE such short crossing reuses is flagged.
 * - Runs whose data (the cold accesses at the level's block size) span
 *   fewer than FEW_BLOCKS blocks have histograms of a few whole blocks,
 *   decided by where the arrays start in them (a matrix of 1.5 to 10
 *   pages): their counts are not polynomials of the size, not even the
 *   cold ones. A level of such a block size predicted beyond the largest
 *   fitted size is flagged.
 * - The model must explain the fitted runs themselves: its misses at each
 *   fitted size against the runs' measured misses (the same cut of the
 *   measured histograms). A level off by more than FIT_ERR (and by more
 *   than FIT_ABS misses, since a few misses of a small run are whole
 *   numbers) is flagged.
 * - Reuses near the capacity make the misses sensitive to their
 *   distances: the misses with every scaling distance DIST_ERR shorter and
 *   longer bound the prediction (constant-distance bins are exact and are
 *   not moved). A level whose bound is wider than EDGE_WIDTH of its
 *   prediction is flagged.
 * - At P the level holds a share of the program's distinct blocks; the
 *   reuses that decide its misses are those around that share of the
 *   data. At each fitted size a capacity of the same share of that run's
 *   blocks puts the cut among the same reuses, where they were measured:
 *   the model must give back that run's misses there (FIT_ERR, FIT_ABS),
 *   or its histogram does not follow the reuses the prediction rests on
 *   (bins that pair different reuse patterns at different sizes; the 3-D
 *   stencil's plane reuses). A scaled capacity under SCALED_MIN blocks
 *   says nothing and is not tested.
 * - Set-associative misses that differ from the fully-associative ones
 *   (conflicts, or hits of a fold) come from a placement model alone:
 *   where the lines fall in the sets at P. No fitted run measured them
 *   (their data fit in the caches, or their set distances were not
 *   collected), and neither the walk's strided placement nor random
 *   placement sees everything (lines of other walks between two reuses,
 *   strides that are not polynomials, an FFT's butterflies). A level whose
 *   set-associative misses are more than PLACE_ERR from its
 *   fully-associative ones is flagged, with both placements' numbers:
 *   half the 10% a prediction is held to, since the placement model can
 *   be wrong by all of its effect (the suite's 2-D stencil on the R12000's
 *   2-way L1: +9% over the fully-associative misses, +11% over the
 *   simulation).
 * - Both placement models take the lines between two reuses of a group,
 *   other than its own walk's, to be spread over the sets at random. A
 *   walk whose stride at P puts its lines in at most FOLD_FRAC of the sets,
 *   more of them than those sets hold, is not: the other data's reuses
 *   across it miss in the sets it fills and may hit in those it leaves
 *   free, even where the fully-associative cache misses them all (the
 *   suite's column-order matrix-vector product: A's column at a stride of
 *   7680 bytes in 8 of the Itanium2 L1's 64 sets, the reuses of y across
 *   it hit in the other 56; simulated 10% under the fully-associative
 *   misses, which both models predict). A level where such walks make
 *   FOLD_SHARE or more of its accesses is flagged: its set-associative
 *   misses are not known to within the 10% a prediction is held to.
 * - A group's reuses at growing distances (the rest of its histogram)
 *   are counted by a fit of their own. Where that fit and the cold
 *   accesses outgrow the group's accesses by P, the prediction gives all
 *   of the group's accesses to the rest: a share of the accesses that
 *   grew at the fitted sizes is taken to grow until it holds them all.
 *   Some shares do (a column walk's page crossings, P/128 of the accesses
 *   at 1K pages, until every access crosses); others stop well before
 *   (the sparse product's row pointers, reused across more random lines
 *   of x as x grows: 16 448 to 36 830 long reuses at 2000..5000, fitted
 *   as 15913.6 + 3.35e-11*P^4, so that at 40 000 all 800 000 accesses are
 *   long reuses, L1 +67%, L2 +19%). The fitted sizes cannot tell which: a
 *   level whose predicted misses are more than CROSS_SHARE of such
 *   groups' is flagged, with the size from which they are.
 * - The program's references are fitted as a whole and, group by group,
 *   as parts; each fit picks its own terms. Where the parts add up to
 *   more than DIVERGE_ERR off the whole at P, the fitted sizes do not pin
 *   down how the counts grow, and every level's prediction rests on one
 *   choice of terms (the suite's FFT, n log n references at sizes of
 *   different prime factors: its groups fitted with P^2 terms, 7.0e6
 *   references at 10240 against 4.5e6 for the whole; the R12000 L1 +68%).
 *   Only levels whose misses are more than DIVERGE_ERR reuses are
 *   flagged: cold misses are counted by the data's footprint, not by the
 *   references.
 * - Beyond the fitted sizes, a prediction that the model fitted without
 *   the largest fitted size changes by more than LOO_ERR rests on how that
 *   one run bends the fits: the fitted sizes do not pin down how the
 *   reuses grow (the caller fits that model: lp_pred_check.loo).
 */
#include "prediction/prediction-model.h"

#include "common/error.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define CROSS_SHARE 0.10
#define SMALL_DIST 256.0
#define FEW_BLOCKS 64.0
#define FIT_ERR 0.10
#define FIT_ABS 16.0
#define DIST_ERR 0.05
#define EDGE_WIDTH 0.20
#define SCALED_MIN 4.0
#define PLACE_ERR 0.05
#define LOO_ERR 0.10
#define DIVERGE_ERR 0.10
#define FOLD_FRAC 0.125
#define FOLD_SHARE 0.20

/* The count shares of the rest's bins at P, as lp_pred_model_hist() makes
 * them (the bins of the rest share it out; scaled down when cold and rest
 * exceed the accesses). */
static double rest_scale(const struct lp_pred_model *m, const struct xbm *bm, double P)
{
	double sum = 0, rest = lp_pred_model_eval(m, &bm->rest, P), acc = lp_pred_model_eval(m, &bm->acc, P);
	double cold = lp_pred_model_eval(m, &bm->cold, P), k = 1;

	for (size_t i = 0; i < bm->nbins; i++)
		sum += lp_pred_model_eval(m, &bm->cnt[i], P);
	if (!(sum > 0))
		return 0;
	if (cold + rest > acc && rest > 0)
		k = acc > cold ? (acc - cold) / rest : 0;
	return rest / sum * k;
}

/* The smallest size in (lo, hi] at which the distance fit d reaches L
 * (bisection; distances grow with the size); hi if it does only there. */
static double reach_at(const struct lp_pred_model *m, const struct lp_pred_fit *d, double L, double lo, double hi)
{
	for (int it = 0; it < 48 && hi - lo > 0.5; it++) {
		double mid = (lo + hi) / 2;
		if (lp_pred_model_eval(m, d, mid) >= L)
			hi = mid;
		else
			lo = mid;
	}
	return hi;
}

/* The bins of the rest: crossed misses, and the misses with the
 * distances moved by -DIST_ERR and +DIST_ERR. */
static void check_rest(const struct lp_pred_model *m, const struct xbm *bm, double L, double P,
		       struct lp_pred_check *out)
{
	double pmax = m->sizes[m->nsizes - 1], k = rest_scale(m, bm, P);

	for (size_t i = 0; i < bm->nbins; i++) {
		double c = lp_pred_model_eval(m, &bm->cnt[i], P) * k, d = lp_pred_model_eval(m, &bm->dist[i], P);
		out->fa_short += c * lp_pred_miss_fa(d * (1 - DIST_ERR), (uint64_t)L);
		out->fa_long += c * lp_pred_miss_fa(d * (1 + DIST_ERR), (uint64_t)L);
		double dmax = lp_pred_model_eval(m, &bm->dist[i], pmax);
		if (!(d >= L) || dmax >= L || P <= pmax || dmax >= SMALL_DIST)
			continue;
		out->crossed += c;
		{
			double at = reach_at(m, &bm->dist[i], L, pmax, P);
			if (!(out->cross_at > 0) || at < out->cross_at)
				out->cross_at = at;
		}
	}
}

/* Whether the cold accesses and the rest of bm outgrow its accesses at P. */
static int outgrows(const struct lp_pred_model *m, const struct xbm *bm, double P)
{
	return lp_pred_model_eval(m, &bm->cold, P) + lp_pred_model_eval(m, &bm->rest, P) >
	       1.001 * lp_pred_model_eval(m, &bm->acc, P) + 1;
}

/* The program's distinct blocks of block index b at P (the models of the
 * groups' cold accesses), or in run r (measured). */
static double footprint(const struct lp_pred_model *m, long b, double P, long r)
{
	double f = 0;

	for (size_t g = 0; g < m->ngroups; g++) {
		if (!m->g[g].bm[b].valid)
			continue;
		f += r < 0 ? lp_pred_model_eval(m, &m->g[g].bm[b].cold, P)
			   : m->g[g].mh[(size_t)r * m->nblocks + (size_t)b].cold;
	}
	return f;
}

/* The smallest size beyond the fitted ones, up to the end of the model's
 * range, at which the program's data span FEW_BLOCKS blocks of index b
 * (bisection: footprints grow with the size); 0 if none. The footprint is
 * that of the smallest block size, in bytes: the counts of a block size
 * with few blocks are what cannot be extrapolated. */
static double few_at(const struct lp_pred_model *m, long b)
{
	long b0 = -1;
	double lo = m->sizes[m->nsizes - 1], hi = m->range * lo, scale;

	for (size_t i = 0; i < m->nblocks; i++)
		if (!lp_pred_key_sets(m->blocks[i]) && (b0 < 0 || m->blocks[i] < m->blocks[b0]))
			b0 = (long)i;
	if (b0 < 0)
		return 0;
	scale = (double)m->blocks[b0] / (double)m->blocks[b];
	if (footprint(m, b0, lo, -1) * scale >= FEW_BLOCKS || !(footprint(m, b0, hi, -1) * scale >= FEW_BLOCKS))
		return 0;
	for (int it = 0; it < 48 && hi - lo > 0.5; it++) {
		double mid = (lo + hi) / 2;
		if (footprint(m, b0, mid, -1) * scale >= FEW_BLOCKS)
			hi = mid;
		else
			lo = mid;
	}
	return ceil(hi);
}

/* The model's and the runs' misses at each fitted size with a
 * fully-associative capacity of the share of the data the level holds at
 * P (see the assumptions above). */
static int check_scaled(const struct lp_pred_model *m, size_t g, const struct lp_pred_level *l, long b, double P,
			struct lp_pred_check *out)
{
	double fp = footprint(m, b, P, -1), share;
	int rc;

	if (!(P > out->pmax) || !(fp > 0))
		return 0;
	share = (double)l->blocks / fp;
	for (size_t r = 0; r < m->nsizes; r++) {
		struct lp_pred_level ls = *l;
		struct lp_pred_count pc, mc;
		double cap = floor(share * footprint(m, b, 0, (long)r) + 0.5);
		if (cap < SCALED_MIN)
			continue;
		ls.assoc = 0;
		ls.blocks = (uint64_t)cap;
		if ((rc = lp_pred_model_predict(m, g, &ls, m->sizes[r], &pc)) < 0 ||
		    (rc = lp_pred_model_measured(m, g, &ls, r, &mc)) < 0)
			return rc;
		out->scap[r] = cap;
		out->sfit[r] = pc.fa_misses;
		out->smeas[r] = mc.fa_misses;
	}
	return 0;
}

/* The sets that the walk of group g falls in at P, if at most FOLD_FRAC of
 * the level's and fewer than its lines over the ways (the walk overflows
 * them): its k-th line is (x0 + k stride) / B, so its sets repeat after
 * B S / gcd(stride, B S) steps; a stride under the line walks consecutive
 * lines, over every set. */
static void check_fold(const struct lp_pred_model *m, size_t g, const struct lp_pred_level *l, double P, double acc,
		       struct lp_pred_check *out)
{
	struct lp_pred_place_walk w;
	uint64_t S = lp_pred_level_sets(l), W = lp_pred_level_ways(l), st, period;
	double sets;

	if (!lp_pred_model_walk(m, g, l, P, &w) || w.stride < (double)l->block || w.stride > 0x1p62)
		return;
	st = (uint64_t)w.stride;
	period = l->block * S / lp_pred_place_gcd(st, l->block * S);
	sets = fmin(w.lines, (double)period);
	if (sets > FOLD_FRAC * (double)S || !(w.lines > sets * (double)W))
		return;
	out->fold_acc = acc;
	out->fold_sets = sets;
	out->fold_stride = w.stride;
}

int lp_pred_model_check(const struct lp_pred_model *m, size_t g, const struct lp_pred_level *l, double P,
			struct lp_pred_check *out)
{
	return lp_pred_model_check_sa(m, g, l, P, LP_PRED_SA_STRIDED, out);
}

int lp_pred_model_check_sa(const struct lp_pred_model *m, size_t g, const struct lp_pred_level *l, double P,
			   int how, struct lp_pred_check *out)
{
	long b = lp_pred_model_block_index(m, l->block);
	struct lp_pred_count pc;
	const struct xbm *bm;
	int rc;

	memset(out, 0, sizeof(*out));
	if (g >= m->ngroups)
		return lp_seterr(LP_EINVAL, "no group %zu", g);
	if (b < 0)
		return lp_seterr(LP_EINVAL, "level %s needs histograms of %llu-byte blocks, which were not collected",
				 l->name, (unsigned long long)l->block);
	if (m->nsizes > LP_PRED_CHECK_RUNS)
		return lp_seterr(LP_ELIMIT, "at most %d runs", LP_PRED_CHECK_RUNS);
	out->nsizes = m->nsizes;
	out->pmax = m->sizes[m->nsizes - 1];
	out->size = P;
	if ((rc = lp_pred_model_predict(m, g, l, P, &pc)) < 0)
		return rc;
	out->fa = pc.fa_misses;
	out->refs = pc.references;
	/* constant-distance bins and cold accesses are not moved */
	out->fa_short = out->fa_long = pc.fa_misses;
	bm = &m->g[g].bm[b];
	if (bm->valid) {
		struct lp_pred_check rest = { 0 };
		check_rest(m, bm, (double)l->blocks, P, &rest);
		/* replace the rest's own misses by their moved ones */
		{
			double k = rest_scale(m, bm, P), own = 0;
			for (size_t i = 0; i < bm->nbins; i++)
				own += lp_pred_model_eval(m, &bm->cnt[i], P) * k *
				       lp_pred_miss_fa(lp_pred_model_eval(m, &bm->dist[i], P), l->blocks);
			out->fa_short += rest.fa_short - own;
			out->fa_long += rest.fa_long - own;
		}
		out->crossed = rest.crossed;
		out->cross_at = rest.cross_at;
		if (P > out->pmax && outgrows(m, bm, P) && !outgrows(m, bm, out->pmax)) {
			double lo = out->pmax, hi = P;
			for (int it = 0; it < 48 && hi - lo > 0.5; it++) {
				double mid = (lo + hi) / 2;
				if (outgrows(m, bm, mid))
					hi = mid;
				else
					lo = mid;
			}
			/* its reuses' misses: the cold ones stand */
			out->outgrown = fmax(0, pc.fa_misses - lp_pred_model_eval(m, &bm->cold, P));
			out->outgrow_at = ceil(hi);
		}
		out->blocks_at = lp_pred_model_eval(m, &bm->cold, P);
		out->cold = out->blocks_at;
	}
	out->blocks_max = m->g[g].mh[(m->nsizes - 1) * m->nblocks + (size_t)b].cold;
	out->few_at = few_at(m, b);
	for (size_t r = 0; r < m->nsizes; r++) {
		struct lp_pred_count mc;
		if ((rc = lp_pred_model_predict(m, g, l, m->sizes[r], &pc)) < 0 ||
		    (rc = lp_pred_model_measured(m, g, l, r, &mc)) < 0)
			return rc;
		out->sizes[r] = m->sizes[r];
		out->fit[r] = pc.fa_misses;
		out->meas[r] = mc.fa_misses;
	}
	if (lp_pred_level_sets(l) > 1) {
		struct lp_pred_count st, bi, sa;
		if ((rc = lp_pred_model_predict_sa(m, g, l, P, LP_PRED_SA_STRIDED, &st)) < 0 ||
		    (rc = lp_pred_model_predict_sa(m, g, l, P, LP_PRED_SA_BINOMIAL, &bi)) < 0 ||
		    (rc = lp_pred_model_predict_sa(m, g, l, P, how, &sa)) < 0)
			return rc;
		out->sa = sa.sa_misses;
		out->sa_strided = st.sa_misses;
		out->sa_binomial = bi.sa_misses;
		out->acc = sa.accesses;
		check_fold(m, g, l, P, sa.accesses, out);
	}
	return check_scaled(m, g, l, b, P, out);
}

void lp_pred_check_add(struct lp_pred_check *dst, const struct lp_pred_check *src)
{
	dst->fa += src->fa;
	dst->fa_short += src->fa_short;
	dst->fa_long += src->fa_long;
	dst->crossed += src->crossed;
	dst->blocks_max += src->blocks_max;
	dst->blocks_at += src->blocks_at;
	if (src->few_at > 0)
		dst->few_at = src->few_at;
	if (src->cross_at > 0 && (!(dst->cross_at > 0) || src->cross_at < dst->cross_at))
		dst->cross_at = src->cross_at;
	dst->sa += src->sa;
	dst->sa_strided += src->sa_strided;
	dst->sa_binomial += src->sa_binomial;
	dst->acc += src->acc;
	dst->fold_acc += src->fold_acc;
	dst->outgrown += src->outgrown;
	dst->refs += src->refs;
	dst->cold += src->cold;
	if (src->outgrow_at > 0 && (!(dst->outgrow_at > 0) || src->outgrow_at < dst->outgrow_at))
		dst->outgrow_at = src->outgrow_at;
	if (src->fold_sets > 0 && (!(dst->fold_sets > 0) || src->fold_sets < dst->fold_sets)) {
		dst->fold_sets = src->fold_sets;
		dst->fold_stride = src->fold_stride;
	}
	dst->nsizes = src->nsizes;
	dst->pmax = src->pmax;
	dst->size = src->size;
	for (size_t r = 0; r < src->nsizes && r < LP_PRED_CHECK_RUNS; r++) {
		dst->sizes[r] = src->sizes[r];
		dst->fit[r] += src->fit[r];
		dst->meas[r] += src->meas[r];
		/* every group of a level has the same scaled capacity */
		if (src->scap[r] > 0)
			dst->scap[r] = src->scap[r];
		dst->sfit[r] += src->sfit[r];
		dst->smeas[r] += src->smeas[r];
	}
}

/* The capacity in words: "2048 lines of 128B", "128 pages of 16K". */
static void capacity_words(const struct lp_pred_level *l, char *buf, size_t len)
{
	unsigned long long b = (unsigned long long)l->block;

	if (l->kind == LP_PRED_LEVEL_TLB)
		snprintf(buf, len, "%llu pages of %lluK", (unsigned long long)l->blocks, b / 1024);
	else
		snprintf(buf, len, "%llu lines of %lluB", (unsigned long long)l->blocks, b);
}

void lp_pred_check_judge(const struct lp_pred_check *c, const struct lp_pred_level *l, struct lp_pred_validity *out)
{
	double worst = 0, fa = c->fa;
	size_t k = 0, wr = 0;
	char cap[96];

	memset(out, 0, sizeof(*out));
	out->lo = fmin(fa, fmin(c->fa_short, c->fa_long));
	out->hi = fmax(fa, fmax(c->fa_short, c->fa_long));
	capacity_words(l, cap, sizeof(cap));
	/* the fitted runs, as the model gives them back */
	for (size_t r = 0; r < c->nsizes && r < LP_PRED_CHECK_RUNS; r++) {
		double d = fabs(c->fit[r] - c->meas[r]), e = c->meas[r] > 0 ? d / c->meas[r] : (d > 0 ? 1 : 0);
		if (d > FIT_ABS && e > worst) {
			worst = e;
			wr = r;
		}
	}
	if (fa > 0 && c->crossed > CROSS_SHARE * fa) {
		out->flags |= LP_PRED_CHECK_CROSSES;
		k += (size_t)snprintf(out->reason + k, sizeof(out->reason) - k,
				      "extrapolates past its capacity (%s): %.0f%% of its predicted misses are reuses "
				      "that every fitted size (up to P = %g) held under it, at distances too short to "
				      "show how they grow, reaching it at P = %.4g; collect sizes beyond that",
				      cap, 100 * c->crossed / fa, c->pmax, c->cross_at);
	}
	if (c->size > c->pmax && c->blocks_max < FEW_BLOCKS && k < sizeof(out->reason)) {
		out->flags |= LP_PRED_CHECK_FEW;
		k += (size_t)snprintf(out->reason + k, sizeof(out->reason) - k,
				      "%sthe fitted runs' data span %.4g blocks of %lluB at the largest fitted size "
				      "(P = %g), too few for their counts to follow the size (%.4g at P = %g%s); "
				      "collect sizes where they span %g or more",
				      k ? "; " : "", c->blocks_max, (unsigned long long)l->block, c->pmax, c->blocks_at,
				      c->size, c->blocks_at >= (double)l->blocks && c->blocks_max < (double)l->blocks
						       ? ", past its capacity" : "", FEW_BLOCKS);
		if (c->few_at > 0 && k < sizeof(out->reason))
			k += (size_t)snprintf(out->reason + k, sizeof(out->reason) - k,
					      " (the program's data do from P = %g)", c->few_at);
	}
	if (worst > FIT_ERR && k < sizeof(out->reason)) {
		out->flags |= LP_PRED_CHECK_UNFIT;
		k += (size_t)snprintf(out->reason + k, sizeof(out->reason) - k,
				      "%sthe fit does not explain the fitted runs: %.4g misses at P = %g "
				      "where the run has %.4g (%+.0f%%)",
				      k ? "; " : "", c->fit[wr], c->sizes[wr], c->meas[wr],
				      c->meas[wr] > 0 ? 100 * (c->fit[wr] - c->meas[wr]) / c->meas[wr] : 100.0);
	}
	/* the fitted runs at the capacity scaled to their data */
	worst = 0;
	for (size_t r = 0; r < c->nsizes && r < LP_PRED_CHECK_RUNS; r++) {
		double d = fabs(c->sfit[r] - c->smeas[r]), e = c->smeas[r] > 0 ? d / c->smeas[r] : (d > 0 ? 1 : 0);
		if (c->scap[r] > 0 && d > FIT_ABS && e > worst) {
			worst = e;
			wr = r;
		}
	}
	if (worst > FIT_ERR && k < sizeof(out->reason)) {
		out->flags |= LP_PRED_CHECK_SHAPE;
		k += (size_t)snprintf(out->reason + k, sizeof(out->reason) - k,
				      "%sthe fit does not follow the reuses that decide it at P = %g: at P = %g, "
				      "with a capacity of %.0f blocks (the same share of that run's data), the "
				      "model has %.4g misses where the run has %.4g (%+.0f%%)",
				      k ? "; " : "", c->size, c->sizes[wr], c->scap[wr], c->sfit[wr], c->smeas[wr],
				      c->smeas[wr] > 0 ? 100 * (c->sfit[wr] - c->smeas[wr]) / c->smeas[wr] : 100.0);
	}
	if (lp_pred_level_sets(l) > 1 && fabs(c->sa - fa) > PLACE_ERR * fmax(c->sa, fa) && fabs(c->sa - fa) > FIT_ABS &&
	    k < sizeof(out->reason)) {
		out->flags |= LP_PRED_CHECK_CONFLICTS;
		k += (size_t)snprintf(out->reason + k, sizeof(out->reason) - k,
				      "%sits set-associative misses (%.4g) are %+.0f%% from its fully-associative ones, "
				      "by where a placement model puts the lines in its sets, which no fitted run "
				      "measured (%.4g with the walks' strided placement, %.4g with random placement)",
				      k ? "; " : "", c->sa, fa > 0 ? 100 * (c->sa - fa) / fa : 100.0, c->sa_strided,
				      c->sa_binomial);
	}
	if (lp_pred_level_sets(l) > 1 && c->fold_acc >= FOLD_SHARE * c->acc && c->fold_acc > 0 && fa > FIT_ABS &&
	    k < sizeof(out->reason)) {
		out->flags |= LP_PRED_CHECK_FOLD;
		k += (size_t)snprintf(out->reason + k, sizeof(out->reason) - k,
				      "%sa strided walk (%.0f bytes a step at P = %g) puts its lines in %.0f of its "
				      "%llu sets, more than they hold, and makes %.0f%% of its accesses: the reuses of "
				      "other data across it miss in those sets and may hit in the others, which the "
				      "placement models (lines spread at random) do not see; its set-associative "
				      "misses can be far from the fully-associative ones either way: simulate this "
				      "size, or predict one where the stride spreads over the sets",
				      k ? "; " : "", c->fold_stride, c->size, c->fold_sets,
				      (unsigned long long)lp_pred_level_sets(l), 100 * c->fold_acc / c->acc);
	}
	if (fa > 0 && c->outgrown > CROSS_SHARE * fa && k < sizeof(out->reason)) {
		out->flags |= LP_PRED_CHECK_OUTGROWN;
		k += (size_t)snprintf(out->reason + k, sizeof(out->reason) - k,
				      "%s%.0f%% of its predicted misses are reuses of reference groups whose reuses at growing "
				      "distances are fitted to grow faster than their accesses, and to hold them all "
				      "from P = %g: a share that grew at the fitted sizes (up to P = %g) and may stop "
				      "growing before then, which they cannot tell; collect sizes nearer P",
				      k ? "; " : "", 100 * c->outgrown / fa, c->outgrow_at, c->pmax);
	}
	if (c->total && c->size > c->pmax && fabs(c->refs - c->refs_total) > DIVERGE_ERR * c->refs_total &&
	    fa - c->cold > DIVERGE_ERR * fa && k < sizeof(out->reason)) {
		out->flags |= LP_PRED_CHECK_DIVERGES;
		k += (size_t)snprintf(out->reason + k, sizeof(out->reason) - k,
				      "%sits reference groups, fitted one by one, add up to %.4g references at P = %g, "
				      "where the program's own fit has %.4g (%+.0f%%): the fitted sizes do not pin down "
				      "how the counts grow (each fit took other terms); collect sizes nearer P, or "
				      "fit with a basis of the terms the program's counts have (--basis)",
				      k ? "; " : "", c->refs, c->size, c->refs_total,
				      c->refs_total > 0 ? 100 * (c->refs - c->refs_total) / c->refs_total : 100.0);
	}
	if (c->loo && c->size > c->pmax && fabs(c->loo_fa - fa) > LOO_ERR * fmax(fa, c->loo_fa) &&
	    fabs(c->loo_fa - fa) > FIT_ABS && k < sizeof(out->reason)) {
		out->flags |= LP_PRED_CHECK_UNSTABLE;
		k += (size_t)snprintf(out->reason + k, sizeof(out->reason) - k,
				      "%sfitted without its largest size (up to P = %g), the model predicts %.4g "
				      "misses (%+.0f%%): the fitted sizes do not pin down how its reuses grow",
				      k ? "; " : "", c->loo_pmax, c->loo_fa, fa > 0 ? 100 * (c->loo_fa - fa) / fa : 100.0);
	}
	if (fa > 0 && out->hi - out->lo > EDGE_WIDTH * fa && k < sizeof(out->reason)) {
		out->flags |= LP_PRED_CHECK_EDGE;
		k += (size_t)snprintf(out->reason + k, sizeof(out->reason) - k,
				      "%sreuses sit near its capacity (%s): with their distances %.0f%% shorter or "
				      "longer it has %.4g to %.4g misses",
				      k ? "; " : "", cap, 100 * DIST_ERR, out->lo, out->hi);
	}
}

const char *lp_pred_check_name(unsigned flags, char *buf, size_t len)
{
	static const char *const names[] = { "crosses",  "unfit", "edge",     "few",     "shape",
					     "conflicts", "unstable", "fold", "outgrown", "diverges" };
	size_t k = 0;

	buf[0] = 0;
	for (int i = 0; i < 10; i++)
		if (flags & (1u << i))
			k += (size_t)snprintf(buf + k, len > k ? len - k : 0, "%s%s", k ? "+" : "", names[i]);
	if (!k)
		snprintf(buf, len, "ok");
	return buf;
}
