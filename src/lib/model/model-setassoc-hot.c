/* Hot footprints that crowd a set: for the set-associative placement model
 * (model-setassoc.c), the reuses among a pc's few lines read over and over,
 * whose spans hold no sample to show where they lie. docs/models.md,
 * "Hot footprints".
 *
 * A table of 16 doubles 4 KiB apart, read in turn beside a stream of
 * records, puts its 16 lines in one set of any cache of up to 64 sets.
 * Between two reads of an entry the other 15 are read, and the reuse
 * misses in 8 ways; but its span of about 60 lines (100 accesses) holds
 * a sample once in ten at 1e-3, so the placement model, with no offset
 * to read, places its lines at random and calls it a hit. The table's
 * own samples show it: they fall on 16 lines again and again, all in one
 * set.
 *
 * Assumptions:
 * - The samples of one pc in one octave of distance (the groups' key of
 *   model-setassoc.c) that fall on few lines, each SA_HOT_REVISITS times
 *   or more on average, show that pc's whole footprint there: its N
 *   distinct lines.
 * - A reuse of one of them over D + 1 >= N lines spans all N (the pc
 *   reads them in turn), so the footprint's other lines in the reused
 *   line's set are in its span: with `ways` or more of them there, LRU
 *   misses whatever the rest of the span is.
 * - Only that: a footprint whose lines spread over the sets changes
 *   nothing (the placement model's chance stands). For random
 *   replacement the same lines set rho (lp_sa_place_crowding()) where
 *   they crowd a set and visit fewer sets than the cache has.
 * - A pc's own lines (own_lines(), docs/models.md "A pc's own lines"):
 *   where a reuse's group read too few offsets to show its layout, and
 *   the sampled lines of its key are alike modulo 2^j beyond chance (an
 *   FFT's twiddle factors at whole pages), the pc's lines in its span
 *   are alike too, spread evenly over that class's sets; their number
 *   is StatStack's sum over the pc's samples alone.
 * Cost: one sort of the samples' (key, line) pairs when the model is
 * built; per cache, one sort of each hot footprint's sets. */
#include "model/model-internal.h"

#include "common/error.h"
#include "common/sort.h"
#include "common/htab.h"

#include <math.h>
#include <stdlib.h>

#define SA_HOT_REVISITS 2.0 /* samples per distinct line: a footprint seen whole */
#define SA_HOT_MAX 4096     /* distinct lines of a hot footprint, at most */
#define SA_OWN_MIN 8         /* samples of a key for its alignment (as */
#define SA_OWN_ALIKE 0.8     /* model-setassoc-align.c reads a group's) */
#define SA_OWN_ALIGN_MAX 20
#define SA_OWN_CHANCE 1e-3  /* ... and so many alike by chance at most this likely */

struct lp_sa_hot {
	size_t n;        /* samples */
	/* per sample, its pc's own lines (see own_lines()): the alignment
	 * of its key's sampled lines (1: none), the share of them alike
	 * there, and the pc's share of the span's lines */
	uint64_t *align;
	double *alike, *own;
	uint32_t *foot;  /* per sample: its hot footprint, UINT32_MAX: none */
	uint64_t *xline; /* per sample: its line */
	size_t nf;       /* hot footprints */
	size_t *start;   /* footprint k's lines are lines[start[k], start[k + 1]) */
	uint64_t *lines;
};

void lp_sa_hot_free(struct lp_sa_hot *h)
{
	if (!h)
		return;
	free(h->foot);
	free(h->xline);
	free(h->align);
	free(h->alike);
	free(h->own);
	free(h->start);
	free(h->lines);
	free(h);
}

struct key_line {
	uint64_t key, line;
};

/* By key, and by line within a key: stably by line, then by key. */
static int sort_key_line(struct key_line *v, size_t m)
{
	struct lp_sort_pair *p = malloc((m ? m : 1) * sizeof(*p));
	int err;

	if (!p)
		return lp_seterr(LP_ENOMEM, "out of memory");
	for (size_t i = 0; i < m; i++)
		p[i] = (struct lp_sort_pair){ v[i].line, v[i].key };
	if ((err = lp_sort_pairs(p, m)) >= 0) {
		for (size_t i = 0; i < m; i++)
			p[i] = (struct lp_sort_pair){ p[i].val, p[i].key };
		err = lp_sort_pairs(p, m);
	}
	for (size_t i = 0; err >= 0 && i < m; i++)
		v[i] = (struct key_line){ p[i].key, p[i].val };
	free(p);
	return err;
}

/* The hot footprints of the sorted pairs v[0, m): each run of one key
 * with SA_HOT_REVISITS samples a distinct line or more keeps its
 * distinct lines; `index` maps the key to its footprint. */
static int hot_runs(struct lp_sa_hot *h, const struct key_line *v, size_t m, struct lp_htab *index)
{
	size_t kept = 0;

	if (!(h->start = malloc((m + 1) * sizeof(*h->start))) || !(h->lines = malloc((m ? m : 1) * sizeof(*h->lines))))
		return lp_seterr(LP_ENOMEM, "out of memory");
	for (size_t a = 0, b; a < m; a = b) {
		size_t distinct = 0, first = kept;
		int isnew;
		uint64_t *slot;
		for (b = a; b < m && v[b].key == v[a].key; b++)
			distinct += b == a || v[b].line != v[b - 1].line;
		if (distinct < 2 || distinct > SA_HOT_MAX || (double)(b - a) < SA_HOT_REVISITS * (double)distinct)
			continue;
		for (size_t i = a; i < b; i++)
			if (i == a || v[i].line != v[i - 1].line)
				h->lines[kept++] = v[i].line;
		if (!(slot = lp_htab_get(index, v[a].key, &isnew)))
			return lp_seterr(LP_ENOMEM, "out of memory");
		*slot = h->nf;
		h->start[h->nf++] = first;
	}
	h->start[h->nf] = kept;
	return 0;
}

/* P(X >= k), X ~ Binomial(n, p) */
static double chance_alike(double n, double k, double p)
{
	double t = 0;

	for (double i = k; i <= n; i++)
		t += exp(lgamma(n + 1) - lgamma(i + 1) - lgamma(n - i + 1) + i * log(p) + (n - i) * log1p(-p));
	return t;
}

/* The largest 2^j lines (j <= SA_OWN_ALIGN_MAX) modulo which
 * SA_OWN_ALIKE of the lines v[0, m) are alike, beyond chance, into
 * *share the share alike; 1 where none is. tmp: room for m. */
static uint64_t run_alignment(const struct key_line *v, size_t m, uint64_t *tmp, double *share)
{
	for (unsigned j = SA_OWN_ALIGN_MAX; j >= 1; j--) {
		size_t run = 1, best = 1;
		for (size_t i = 0; i < m; i++)
			tmp[i] = v[i].line & ((1ull << j) - 1);
		lp_sort_u64(tmp, m);
		for (size_t i = 1; i < m; i++) {
			run = tmp[i] == tmp[i - 1] ? run + 1 : 1;
			best = run > best ? run : best;
		}
		/* as many alike by chance (any of the 2^j classes) is too
		 * likely below 2^j or so: 7 of 8 lines placed at random are
		 * alike modulo 2 with probability 7 % */
		if ((double)best >= SA_OWN_ALIKE * (double)m &&
		    ldexp(chance_alike((double)m, (double)best, ldexp(1, -(int)j)), (int)j) <= SA_OWN_CHANCE) {
			*share = (double)best / (double)m;
			return 1ull << j;
		}
	}
	*share = 0;
	return 1;
}

struct pc_rd {
	uint64_t pc, rd; /* rd: UINT64_MAX for a dangling sample */
};

static int cmp_pc_rd(const void *a, const void *b)
{
	const struct pc_rd *x = a, *y = b;

	if (x->pc != y->pc)
		return x->pc < y->pc ? -1 : 1;
	return x->rd < y->rd ? -1 : x->rd > y->rd;
}

/* sum over v[0, m) (sorted by rd; pre[j] - pre[0] the sum of the
 * first j finite rd) of min(rd, r) */
static double sum_min(const struct pc_rd *v, const double *pre, size_t m, uint64_t r)
{
	size_t lo = 0, hi = m;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (v[mid].rd < r)
			lo = mid + 1;
		else
			hi = mid;
	}
	return pre[lo] - pre[0] + (double)r * (double)(m - lo);
}

/* Each sample's pc's share of its span's lines (own_lines()): StatStack
 * counts an access u before the span's end among its lines when its
 * reuse distance is u or more, so the pc's lines are sum(min(rd, r)) over
 * its samples against that over all of them (r the sample's reuse
 * distance; a dangling sample counts r). */
static int own_shares(struct lp_sa_hot *h, const struct lp_sample *s, size_t n)
{
	struct pc_rd *v = malloc((n ? n : 1) * sizeof(*v)), *all = malloc((n ? n : 1) * sizeof(*all));
	double *pre = malloc((n + 1) * sizeof(*pre)), *apre = malloc((n + 1) * sizeof(*apre));
	int err = 0;

	if (!v || !all || !pre || !apre) {
		err = lp_seterr(LP_ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		uint64_t rd = s[i].reuse == LP_REUSE_DANGLING ? UINT64_MAX : s[i].reuse;
		v[i] = (struct pc_rd){ s[i].pc, rd };
		all[i] = (struct pc_rd){ 0, rd };
	}
	qsort(v, n, sizeof(*v), cmp_pc_rd);
	qsort(all, n, sizeof(*all), cmp_pc_rd);
	pre[0] = apre[0] = 0;
	for (size_t i = 0; i < n; i++) {
		pre[i + 1] = pre[i] + (v[i].rd == UINT64_MAX ? 0 : (double)v[i].rd);
		apre[i + 1] = apre[i] + (all[i].rd == UINT64_MAX ? 0 : (double)all[i].rd);
	}
	for (size_t i = 0; i < n; i++) {
		size_t lo = 0, hi = n, a, b;
		double mine, total;
		h->own[i] = 0;
		if (h->align[i] <= 1 || s[i].reuse == LP_REUSE_DANGLING)
			continue;
		while (lo < hi) { /* the first of s[i]'s pc */
			size_t mid = lo + (hi - lo) / 2;
			if (v[mid].pc < s[i].pc)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (a = lo, b = lo; b < n && v[b].pc == s[i].pc; b++)
			;
		mine = sum_min(v + a, pre + a, b - a, s[i].reuse);
		total = sum_min(all, apre, n, s[i].reuse);
		h->own[i] = total > 0 ? fmin(1, mine / total) : 0;
	}
out:
	free(v);
	free(all);
	free(pre);
	free(apre);
	return err;
}

/* Each finite sample's key's alignment (run_alignment() of its sampled
 * lines, SA_OWN_MIN of them or more) into h->align and h->alike; the
 * pairs v[0, m) sorted by key. */
static int own_alignment(struct lp_sa_hot *h, const struct lp_sample *s, const double *sd, const struct key_line *v,
			 size_t m)
{
	struct lp_htab index = { 0 };
	uint64_t *tmp = malloc((m ? m : 1) * sizeof(*tmp)), *al = malloc((m ? m : 1) * sizeof(*al));
	double *alk = malloc((m ? m : 1) * sizeof(*alk));
	size_t nk = 0;
	int err = 0;

	if (!tmp || !al || !alk || lp_htab_init(&index, 64) < 0 || lp_htab_reserve(&index, m + 1) < 0) {
		err = lp_seterr(LP_ENOMEM, "out of memory");
		goto out;
	}
	for (size_t a = 0, b; a < m; a = b) {
		int isnew;
		uint64_t *slot;
		for (b = a; b < m && v[b].key == v[a].key; b++)
			;
		if (b - a < SA_OWN_MIN)
			continue;
		al[nk] = run_alignment(v + a, b - a, tmp, &alk[nk]);
		if (al[nk] <= 1)
			continue;
		if (!(slot = lp_htab_get(&index, v[a].key, &isnew))) {
			err = lp_seterr(LP_ENOMEM, "out of memory");
			goto out;
		}
		*slot = nk++;
	}
	for (size_t i = 0; i < h->n; i++) {
		uint64_t *f = NULL;
		if (nk && s[i].reuse != LP_REUSE_DANGLING && isfinite(sd[i]))
			f = lp_htab_find(&index, lp_sa_group_key(&s[i], sd[i]));
		h->align[i] = f ? al[*f] : 1;
		h->alike[i] = f ? alk[*f] : 0;
	}
out:
	free(tmp);
	free(al);
	free(alk);
	lp_htab_release(&index);
	return err;
}

int lp_sa_hot_new(struct lp_sa_hot **out, const struct lp_sample *s, size_t n, const double *sd, uint64_t line)
{
	struct lp_sa_hot *h = calloc(1, sizeof(*h));
	struct key_line *v = malloc((n ? n : 1) * sizeof(*v));
	struct lp_htab index = { 0 };
	unsigned shift = 0;
	size_t m = 0;
	int err = 0;

	*out = NULL;
	while (shift < 63 && (1ull << shift) < line)
		shift++;
	if (!h || !v || !(h->foot = malloc((n ? n : 1) * sizeof(*h->foot))) ||
	    !(h->align = malloc((n ? n : 1) * sizeof(*h->align))) ||
	    !(h->alike = malloc((n ? n : 1) * sizeof(*h->alike))) || !(h->own = malloc((n ? n : 1) * sizeof(*h->own))) ||
	    !(h->xline = malloc((n ? n : 1) * sizeof(*h->xline))) || lp_htab_init(&index, 64) < 0 ||
	    lp_htab_reserve(&index, n + 1) < 0) {
		err = lp_seterr(LP_ENOMEM, "out of memory");
		goto out;
	}
	h->n = n;
	for (size_t i = 0; i < n; i++) {
		h->xline[i] = s[i].addr >> shift;
		h->foot[i] = UINT32_MAX;
		if (s[i].reuse != LP_REUSE_DANGLING && isfinite(sd[i]))
			v[m++] = (struct key_line){ lp_sa_group_key(&s[i], sd[i]), h->xline[i] };
	}
	if ((err = sort_key_line(v, m)) < 0 || (err = hot_runs(h, v, m, &index)) < 0 ||
	    (err = own_alignment(h, s, sd, v, m)) < 0 || (err = own_shares(h, s, n)) < 0)
		goto out;
	for (size_t i = 0; i < n && h->nf; i++) {
		uint64_t *f;
		if (s[i].reuse != LP_REUSE_DANGLING && isfinite(sd[i]) && (f = lp_htab_find(&index, lp_sa_group_key(&s[i], sd[i]))))
			h->foot[i] = (uint32_t)*f;
	}
	*out = h;
	h = NULL;
out:
	free(v);
	lp_htab_release(&index);
	lp_sa_hot_free(h);
	return err;
}

/* How many of the sorted residues r[0, k) equal x. */
static size_t count_equal(const uint64_t *r, size_t k, uint64_t x)
{
	size_t lo = 0, hi = k, first;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (r[mid] < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	first = lo;
	while (lo < k && r[lo] == x)
		lo++;
	return lo - first;
}

/* A pc's own lines in a span whose layout no sample showed (own_lines:
 * docs/models.md, "A pc's own lines"): sample i's pc holds own[i] of the
 * span's D other lines; where its key's sampled lines are alike modulo
 * 2^j (align[i]), so are those, a share alike[i] on the reused line's
 * class, which spreads over sets / gcd(2^j, sets) sets. *w: the pc's
 * lines, *c: those in the reused line's set (expected counts). 0 where
 * the rule says nothing. */
static int own_lines(const struct lp_sa_hot *h, size_t i, double D, uint64_t sets, double *c, double *w)
{
	if (h->align[i] <= 1 || !(h->own[i] > 0) || !(D >= 1))
		return 0;
	*w = h->own[i] * D;
	*c = h->alike[i] * *w * (double)lp_sa_gcd(h->align[i], sets) / (double)sets;
	return 1;
}

/* P(c + X >= ways), X ~ Binomial(r, 1/s) */
static double own_tail(double c, double r, double s, uint64_t ways)
{
	double need = (double)ways - floor(c + 0.5), p = 1 / s, b, cum = 0;

	if (need <= 0)
		return 1;
	if (need > r)
		return 0;
	b = exp(r * log1p(-p));
	for (double j = 0; j < need; j++) {
		cum += b;
		b *= (r - j) / (j + 1) * p / (1 - p);
	}
	return cum >= 1 ? 0 : 1 - cum;
}

/* The distinct values of the sorted r[0, k). */
static uint64_t distinct_sets(const uint64_t *r, size_t k)
{
	uint64_t d = 0;

	for (size_t i = 0; i < k; i++)
		d += !i || r[i] != r[i - 1];
	return d;
}

/* The footprints' lines in each footprint's sets, sorted: res[k]. */
static int hot_residues(const struct lp_sa_hot *h, uint64_t sets, uint64_t ***out)
{
	uint64_t **res = calloc(h->nf ? h->nf : 1, sizeof(*res));

	*out = res;
	if (!res)
		return lp_seterr(LP_ENOMEM, "out of memory");
	for (size_t k = 0; k < h->nf; k++) {
		size_t a = h->start[k], b = h->start[k + 1];
		if (!(res[k] = malloc((b - a) * sizeof(**res))))
			return lp_seterr(LP_ENOMEM, "out of memory");
		for (size_t i = a; i < b; i++)
			res[k][i - a] = h->lines[i] % sets;
		lp_sort_u64(res[k], b - a);
	}
	return 0;
}

static void hot_residues_free(const struct lp_sa_hot *h, uint64_t **res)
{
	for (size_t k = 0; res && k < h->nf; k++)
		free(res[k]);
	free(res);
}

int lp_sa_hot_miss(const struct lp_sa_hot *h, const struct lp_sa_place *pl, const double *sd, uint64_t sets,
		   uint64_t ways, double *prob)
{
	uint64_t **res;
	int err;

	if (!h || sets <= 1)
		return 0;
	if ((err = hot_residues(h, sets, &res)) < 0)
		goto out;
	for (size_t i = 0; i < h->n; i++) {
		size_t k = h->foot[i], lines;
		double D = floor(sd[i] + 0.5), c, w;
		if (!isfinite(sd[i]))
			continue;
		if (lp_sa_place_unseen(pl, i) && own_lines(h, i, D, sets, &c, &w))
			prob[i] = fmax(prob[i], own_tail(c, D - w, (double)sets, ways));
		if (k == UINT32_MAX)
			continue;
		lines = h->start[k + 1] - h->start[k];
		/* the footprint's other lines in this line's set, all in the
		 * span when it holds the whole footprint */
		if ((double)lines <= D + 1 && count_equal(res[k], lines, h->xline[i] % sets) >= ways + 1)
			prob[i] = 1;
	}
out:
	hot_residues_free(h, res);
	return err;
}

int lp_sa_hot_rho(const struct lp_sa_hot *h, const struct lp_sa_place *pl, const double *sd, uint64_t sets,
		  double ways, int fits, double *rho)
{
	uint64_t **res;
	int err;

	if (!h || sets <= 1)
		return 0;
	if ((err = hot_residues(h, sets, &res)) < 0)
		goto out;
	for (size_t i = 0; i < h->n; i++) {
		size_t k = h->foot[i], lines;
		double D = floor(sd[i] + 0.5), c = 0, w = 0, oc, ow;
		if (!isfinite(sd[i]))
			continue;
		if (lp_sa_place_unseen(pl, i) && own_lines(h, i, D, sets, &oc, &ow)) {
			c = oc;
			w = ow;
		}
		/* a footprint that crowds the set, as LRU's rule takes it, on
		 * fewer sets than the cache has (one over every set leaves rho
		 * at 1, as lp_sa_place_crowding() does a walk that visits them
		 * all) */
		if (k != UINT32_MAX && (double)(lines = h->start[k + 1] - h->start[k]) <= D + 1 &&
		    distinct_sets(res[k], lines) < sets &&
		    (oc = (double)count_equal(res[k], lines, h->xline[i] % sets) - 1) >= ways && oc > c) {
			c = oc;
			w = (double)lines - 1;
		}
		/* the footprint's or the pc's lines miss as the others do */
		if (c > 0)
			rho[i] = fmax(rho[i], lp_sa_crowd_rho(c, w, D, 1, sets, ways, fits));
	}
out:
	hot_residues_free(h, res);
	return err;
}
