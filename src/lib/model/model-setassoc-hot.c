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
 *   nothing (the placement model's chance stands).
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

struct lp_sa_hot {
	size_t n;        /* samples */
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
	if ((err = sort_key_line(v, m)) < 0 || (err = hot_runs(h, v, m, &index)) < 0)
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

int lp_sa_hot_miss(const struct lp_sa_hot *h, const double *sd, uint64_t sets, uint64_t ways, double *prob)
{
	uint64_t **res;
	int err = 0;

	if (!h || !h->nf || sets <= 1)
		return 0;
	if (!(res = calloc(h->nf, sizeof(*res))))
		return lp_seterr(LP_ENOMEM, "out of memory");
	for (size_t k = 0; k < h->nf; k++) {
		size_t a = h->start[k], b = h->start[k + 1];
		if (!(res[k] = malloc((b - a) * sizeof(**res)))) {
			err = lp_seterr(LP_ENOMEM, "out of memory");
			goto out;
		}
		for (size_t i = a; i < b; i++)
			res[k][i - a] = h->lines[i] % sets;
		lp_sort_u64(res[k], b - a);
	}
	for (size_t i = 0; i < h->n; i++) {
		size_t k = h->foot[i], lines;
		if (k == UINT32_MAX || !isfinite(sd[i]))
			continue;
		lines = h->start[k + 1] - h->start[k];
		/* the footprint's other lines in this line's set, all in the
		 * span when it holds the whole footprint */
		if ((double)lines <= floor(sd[i] + 0.5) + 1 &&
		    count_equal(res[k], lines, h->xline[i] % sets) >= ways + 1)
			prob[i] = 1;
	}
out:
	for (size_t k = 0; k < h->nf; k++)
		free(res[k]);
	free(res);
	return err;
}
