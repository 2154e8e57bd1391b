/* Set-distance histograms (src/lib/prediction): for a cache of s sets and
 * B-byte lines, the set distance of an access is the number of distinct
 * lines mapping to the same set (line % s) that were touched since the
 * last access to its line, i.e. its distance in that set's own LRU stack;
 * an LRU cache of s sets and k ways misses exactly when it is >= k (or the
 * access is cold). Each set counts its distances in its own time (see
 * struct xset): O(log n) per access, n the distinct lines of the set. The
 * tests check it against a plain per-set LRU stack. */
#include "prediction/prediction-internal.h"

#include "common/array.h"
#include "common/error.h"
#include "common/hash.h"
#include "exact/exact-internal.h"

#include <locprof/exact.h>

#include <stdlib.h>
#include <string.h>

/* One set: a Fenwick tree over the set's own access times, with a marker
 * at the last access time of every line in the set; a line's set distance
 * is the number of markers after its own. When the times run out the live
 * markers are renumbered from 0 (their order kept), so a set's tree stays
 * within about twice its distinct lines. */
struct xset {
	uint32_t *bit;  /* Fenwick tree, 1-based, cap entries */
	uint64_t *who;  /* line whose marker is at time t, or UINT64_MAX */
	uint32_t t, cap, live;
};

struct lp_pred_sets {
	uint64_t sets, line, shift;
	struct xset *st;
	struct lp_xhtab pos; /* line -> time of its marker in its set */
	struct lp_hist **h; /* per pc index */
	size_t nh;
};

int lp_pred_sets_new(struct lp_pred_sets **out, uint64_t sets, uint64_t line)
{
	struct lp_pred_sets *e;

	*out = NULL;
	if (!sets || !line || (line & (line - 1)))
		return lp_seterr(LP_EINVAL, "set distances need a power-of-two line and at least one set");
	if (!(e = calloc(1, sizeof(*e))) || !(e->st = calloc(sets, sizeof(*e->st)))) {
		free(e);
		return lp_seterr(LP_ENOMEM, "out of memory");
	}
	e->sets = sets;
	e->line = line;
	while ((1ull << e->shift) < line)
		e->shift++;
	if (lp_xhtab_init(&e->pos, 1024) < 0) {
		lp_pred_sets_free(e);
		return LP_ENOMEM;
	}
	*out = e;
	return 0;
}

void lp_pred_sets_free(struct lp_pred_sets *e)
{
	if (!e)
		return;
	for (uint64_t s = 0; s < e->sets; s++) {
		free(e->st[s].bit);
		free(e->st[s].who);
	}
	for (size_t i = 0; i < e->nh; i++)
		lp_hist_free(e->h[i]);
	free(e->st);
	lp_xhtab_release(&e->pos);
	free(e->h);
	free(e);
}

uint64_t lp_pred_sets_sets(const struct lp_pred_sets *e) { return e->sets; }
uint64_t lp_pred_sets_line(const struct lp_pred_sets *e) { return e->line; }

static void bit_add(uint32_t *bit, uint32_t cap, uint32_t t, int v)
{
	for (uint32_t i = t + 1; i <= cap; i += i & -i)
		bit[i - 1] += (uint32_t)v;
}

/* Markers at times < t. */
static uint32_t bit_prefix(const uint32_t *bit, uint32_t t)
{
	uint32_t s = 0;

	for (uint32_t i = t; i > 0; i -= i & -i)
		s += bit[i - 1];
	return s;
}

/* Make room for one more time in set q: renumber its live markers from 0
 * and, if they fill more than half of it, double it. */
static int set_room(struct lp_pred_sets *e, struct xset *q)
{
	uint32_t ncap = q->cap < 8 ? 8 : q->cap, n = 0;
	uint32_t *nb;
	uint64_t *nw;

	if (q->live * 2 > ncap / 2 || !q->cap) {
		if (ncap > UINT32_MAX / 2)
			return lp_seterr(LP_ENOMEM, "a set of more than 2^31 lines");
		ncap = q->cap ? ncap * 2 : 8;
	}
	if (!(nb = calloc(ncap, sizeof(*nb))) || !(nw = malloc((size_t)ncap * sizeof(*nw)))) {
		free(nb);
		return lp_seterr(LP_ENOMEM, "out of memory");
	}
	for (uint32_t t = 0; t < q->t; t++) {
		if (q->who[t] == UINT64_MAX)
			continue;
		nw[n] = q->who[t];
		int isnew;
		*lp_xhtab_get(&e->pos, q->who[t], &isnew) = n;
		nb[n] = 1; /* leaves first, then the tree built in place */
		n++;
	}
	for (uint32_t i = n; i < ncap; i++)
		nw[i] = UINT64_MAX;
	for (uint32_t i = 1; i <= ncap; i++) {
		uint32_t j = i + (i & -i);
		if (j <= ncap)
			nb[j - 1] += nb[i - 1];
	}
	free(q->bit);
	free(q->who);
	q->bit = nb;
	q->who = nw;
	q->cap = ncap;
	q->t = n;
	return 0;
}

/* Set distance of an access to line x (LP_DIST_COLD if first); x's marker
 * moved to its set's current time. */
static int access_line(struct lp_pred_sets *e, uint64_t x, uint64_t *dist)
{
	struct xset *q = &e->st[e->sets & (e->sets - 1) ? x % e->sets : x & (e->sets - 1)];
	uint64_t *pos;
	int rc, isnew;

	if (q->t == q->cap && (rc = set_room(e, q)) < 0)
		return rc;
	if (x == UINT64_MAX)
		return lp_seterr(LP_EINVAL, "line 2^64-1 cannot be tracked");
	if ((rc = lp_xhtab_reserve(&e->pos, 1)) < 0)
		return rc;
	pos = lp_xhtab_get(&e->pos, x, &isnew);
	if (!isnew) {
		uint32_t p = (uint32_t)*pos;
		*dist = q->live - bit_prefix(q->bit, p + 1);
		bit_add(q->bit, q->cap, p, -1);
		q->who[p] = UINT64_MAX;
	} else {
		*dist = LP_DIST_COLD;
		q->live++;
	}
	*pos = q->t;
	q->who[q->t] = x;
	bit_add(q->bit, q->cap, q->t, 1);
	q->t++;
	return 0;
}

int lp_pred_sets_access(struct lp_pred_sets *e, const struct lp_ref *r, size_t pcidx)
{
	uint64_t end, first, last, d = 0;
	int rc;

	if (pcidx >= e->nh) {
		size_t n = e->nh; /* e->h[0..nh) is initialised: NULL until used */
		if (LP_ARRAY_RESERVE(e->h, n, pcidx + 1, 64, "pc histograms") < 0)
			return lp_seterr(LP_ENOMEM, "out of memory");
		memset(e->h + e->nh, 0, (n - e->nh) * sizeof(*e->h));
		e->nh = n;
	}
	if (!e->h[pcidx] && (rc = lp_hist_new(&e->h[pcidx])) < 0)
		return rc;
	/* the lines an access touches, as the exact engine counts them */
	end = r->size ? r->size - 1 : 0;
	end = end > UINT64_MAX - r->addr ? UINT64_MAX : r->addr + end;
	first = r->addr >> e->shift;
	last = end >> e->shift;
	for (uint64_t x = first;; x++) {
		if ((rc = access_line(e, x, &d)) < 0 || (rc = lp_hist_add(e->h[pcidx], d, 1)) < 0)
			return rc;
		if (x == last)
			break;
	}
	return 0;
}

const struct lp_hist *lp_pred_sets_hist(const struct lp_pred_sets *e, size_t pcidx)
{
	return pcidx < e->nh ? e->h[pcidx] : NULL;
}
