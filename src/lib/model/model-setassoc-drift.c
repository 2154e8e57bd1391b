/* Where the lines of a short span lie, from the samples around it: for
 * the set-associative placement model (model-setassoc.c), whose offsets
 * otherwise come only from samples inside a span. docs/models.md,
 * "Spans without samples".
 *
 * A span of d accesses holds a sample with chance about d times the
 * rate: at 1e-3 a span of 12 accesses almost never does. Yet such spans
 * can crowd a set: twelve arrays mapped whole pages apart and walked in
 * lock step put every span's twelve lines in one set of a cache of 4K
 * ways. Their layout is still in the samples, spread over time: each
 * pc's samples lie on its walk, address = a + v * time, and where the
 * other pcs' walks are at the span's time is where their lines in it are.
 *
 * Assumptions:
 * - Three consecutive samples of a pc (of one thread) whose two
 *   velocities in (time, address) are within SA_DRIFT_LINEAR of each
 *   other lie on its walk, and its address at any time between the
 *   first and the last of them is read off that line. The span needs
 *   such a triple (one of the three around one of the pc's samples)
 *   from before it to after it: a walk that restarts every few samples
 *   still has one on each side of most restarts. A pc is followed only
 *   if SA_DRIFT_WALKER of its samples are on such a triple: a pc that
 *   reads at random, or several arrays in turn, is now and then by
 *   chance.
 * - A pc touches the span when its share of the samples around it (up
 *   to SA_DRIFT_SCAN of them on each side) times d is at least 1/2.
 * - The offsets stand for the span only when the pcs followed hold
 *   SA_DRIFT_FOLLOWED of the samples of the pcs that touch it; else the
 *   span keeps none (the lines of the others would be missing: a
 *   transpose's column of B, whose samples lie on no line, beside the
 *   row of A, which does).
 * - Its lines in the span are those its walk crosses there: up to
 *   SA_DRIFT_POINTS points spread over the span, each at its address's
 *   distance from the sampled access rounded to whole lines (the
 *   displacement of two walks that move together is then exact, where
 *   the difference of their line numbers is one line off whenever one
 *   of them has just crossed into its next line); a line once, whatever
 *   pcs touch it.
 * - Where StatStack's D exceeds the lines the walks stand for, the next
 *   lines of walks whose pc straddles two lines are in the span, one per
 *   walk (next_lines()).
 * Cost: one pass over the samples for each sample's previous and next
 * one of its pc and thread (a hash table) and one for the walkers, then
 * at most 2 SA_DRIFT_SCAN samples read for each span that holds none. */
#include "model/model-internal.h"

#include "common/error.h"
#include "common/htab.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#define SA_DRIFT_SCAN 16     /* samples read on each side of the span */
#define SA_DRIFT_POINTS 8    /* points of one pc's walk over a span, at most */
#define SA_DRIFT_LINEAR 0.02 /* relative difference of a walk's two velocities */

#define SA_DRIFT_WALKER 0.25 /* share of a pc's samples on its line: a walker */
#define SA_DRIFT_COPY ((size_t)1 << (sizeof(size_t) * 8 - 1))
#define SA_DRIFT_FOLLOWED 0.9 /* share of the span's pcs' samples whose walk is known */

struct lp_sa_drift {
	size_t *prev;     /* the previous sample of the same pc and thread;
			   * SA_DRIFT_COPY | i: a copy of sample i (same time) */
	size_t *next;     /* the next one */
	struct walk {
		double v, lo, hi; /* walk_line() through the sample; v = NAN:
				   * none, or its pc is not a walker */
	} *walk;
	float *straddle;  /* the share of its pc's references that touch
			   * two lines (LP_PART_FIRST among the first lines) */
};

void lp_sa_drift_free(struct lp_sa_drift *d)
{
	if (!d)
		return;
	free(d->prev);
	free(d->next);
	free(d->walk);
	free(d->straddle);
	free(d);
}

static int walk_line(const struct lp_sa_drift *d, const struct lp_sample *s, size_t j, double *v, double *lo,
		     double *hi);

static uint64_t pc_key(const struct lp_sample *y)
{
	/* pcs are user addresses (below 2^56); the thread in the top byte */
	return (y->pc & ((1ull << 56) - 1)) | (uint64_t)(y->tid & 0xff) << 56;
}

/* Which pcs walk: a pc whose samples lie on one line now and then by
 * chance (one that reads several arrays in turn, or at random) is not
 * followed, only those whose samples do SA_DRIFT_WALKER of the time or
 * more (a walk fails it where it restarts: sixteen arrays of 4096
 * doubles swept in turn, a pc each, restart every fourth sample of a pc
 * at 1e-3). The counts of each pc, samples on a line in the high half,
 * all in the low one. Each sample's walk is kept (once: a report reads
 * the spans of every resample). */
static void mark_walkers(struct lp_sa_drift *d, const struct lp_sample *s, size_t n, struct lp_htab *pcs)
{
	int isnew;

	for (size_t i = 0; i < n; i++) {
		struct walk *w = &d->walk[i];
		if (d->prev[i] != SIZE_MAX && d->prev[i] & SA_DRIFT_COPY)
			*w = d->walk[d->prev[i] & ~SA_DRIFT_COPY];
		else if (!walk_line(d, s, i, &w->v, &w->lo, &w->hi))
			w->v = NAN;
		*lp_htab_get(pcs, pc_key(&s[i]), &isnew) += (isnan(w->v) ? 0 : 1ull << 32) + 1;
	}
	for (size_t i = 0; i < n; i++) {
		uint64_t c = *lp_htab_get(pcs, pc_key(&s[i]), &isnew);
		if ((double)(c >> 32) < SA_DRIFT_WALKER * (double)(c & 0xffffffffu))
			d->walk[i].v = NAN;
	}
}

/* Each sample's pc's share of references that straddle two lines: of
 * its samples of the first (or only) line of a reference, those of a
 * reference that goes on into the next line. pcs: the pcs' keys. */
static void straddle_shares(struct lp_sa_drift *d, const struct lp_sample *s, size_t n, struct lp_htab *pcs)
{
	int isnew;

	for (size_t k = 0; k <= pcs->mask; k++)
		pcs->s[k].val = 0;
	pcs->top_val = 0;
	for (size_t i = 0; i < n; i++)
		if (s[i].part == LP_PART_WHOLE || s[i].part == LP_PART_FIRST)
			*lp_htab_get(pcs, pc_key(&s[i]), &isnew) += (s[i].part == LP_PART_FIRST ? 1ull << 32 : 0) + 1;
	for (size_t i = 0; i < n; i++) {
		uint64_t c = *lp_htab_get(pcs, pc_key(&s[i]), &isnew);
		d->straddle[i] = (c & 0xffffffffu) ? (float)((double)(c >> 32) / (double)(c & 0xffffffffu)) : 0;
	}
}

int lp_sa_drift_new(struct lp_sa_drift **out, const struct lp_sample *s, size_t n)
{
	struct lp_sa_drift *d = calloc(1, sizeof(*d));
	struct lp_htab last = { 0 };
	size_t cap = 64;

	*out = NULL;
	while (cap < 2 * n)
		cap <<= 1;
	if (!d || !(d->prev = malloc((n ? n : 1) * sizeof(*d->prev))) ||
	    !(d->next = malloc((n ? n : 1) * sizeof(*d->next))) ||
	    !(d->walk = malloc((n ? n : 1) * sizeof(*d->walk))) ||
	    !(d->straddle = malloc((n ? n : 1) * sizeof(*d->straddle))) || lp_htab_init(&last, cap) < 0 ||
	    lp_htab_reserve(&last, n + 1) < 0) {
		lp_htab_release(&last);
		lp_sa_drift_free(d);
		return lp_seterr(LP_ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < n; i++) {
		int isnew;
		uint64_t *v = lp_htab_get(&last, pc_key(&s[i]), &isnew);
		size_t p = isnew || s[(size_t)*v].tid != s[i].tid ? SIZE_MAX : (size_t)*v;
		d->next[i] = SIZE_MAX;
		if (p != SIZE_MAX && s[p].time == s[i].time) {
			/* a copy of sample p (a resample keeps a sample k times):
			 * p's walk is its own, and the chain links p only */
			d->prev[i] = p | SA_DRIFT_COPY;
			continue;
		}
		d->prev[i] = p;
		if (p != SIZE_MAX)
			d->next[p] = i;
		*v = i;
	}
	/* the same keys, counted now */
	for (size_t k = 0; k <= last.mask; k++)
		last.s[k].val = 0;
	last.top_val = 0;
	mark_walkers(d, s, n, &last);
	straddle_shares(d, s, n, &last);
	lp_htab_release(&last);
	*out = d;
	return 0;
}

/* Whether samples a, b, c (of one pc, in time order) lie on one line in
 * (time, address): their two velocities within SA_DRIFT_LINEAR. */
static int on_line(const struct lp_sample *s, size_t a, size_t b, size_t c, double *v)
{
	double v1, v2;

	if (a == SIZE_MAX || b == SIZE_MAX || c == SIZE_MAX || s[b].time <= s[a].time || s[c].time <= s[b].time)
		return 0;
	v1 = ((double)s[b].addr - (double)s[a].addr) / (double)(s[b].time - s[a].time);
	v2 = ((double)s[c].addr - (double)s[b].addr) / (double)(s[c].time - s[b].time);
	if (fabs(v1 - v2) > SA_DRIFT_LINEAR * fmax(fabs(v1), fabs(v2)))
		return 0;
	*v = v2;
	return 1;
}

/* The walk through sample j: its velocity (bytes per access) and the
 * times [lo, hi] over which it is known to hold, from the first of the
 * three triples of its pc's samples around j (j last, middle, first)
 * that lie on one line: a walk that restarts every few samples still has
 * one on each side of most restarts. */
static int walk_line(const struct lp_sa_drift *d, const struct lp_sample *s, size_t j, double *v, double *lo,
		     double *hi)
{
	size_t p = d->prev[j], n = d->next[j];
	size_t pp = p == SIZE_MAX ? SIZE_MAX : d->prev[p], nn = n == SIZE_MAX ? SIZE_MAX : d->next[n];
	size_t t[3][3] = { { pp, p, j }, { p, j, n }, { j, n, nn } };

	for (int k = 0; k < 3; k++)
		if (on_line(s, t[k][0], t[k][1], t[k][2], v)) {
			*lo = (double)s[t[k][0]].time;
			*hi = (double)s[t[k][2]].time;
			return 1;
		}
	return 0;
}

struct near_pc {
	uint64_t pc;
	unsigned count; /* its samples read */
	size_t j;       /* its nearest sample whose walk reaches over the
			 * span (SIZE_MAX: none) */
	double v;       /* that walk's velocity */
};

/* The pcs of the samples of i's thread around i: up to SA_DRIFT_SCAN on
 * each side (reading at most 4 times as many of all threads), each with
 * its nearest sample whose walk (walk_line()) is known over the whole
 * span [t, t + span]. Returns how many
 * pcs; *seen: how many samples. */
static size_t pcs_around(const struct lp_sa_drift *d, const struct lp_sample *s, size_t n, size_t i,
			 struct near_pc *pc, size_t *seen)
{
	double span = (double)s[i].reuse, mid = (double)s[i].time + span / 2;
	size_t npc = 0;

	*seen = 0;
	for (int side = -1; side <= 1; side += 2) {
		size_t j = i, taken = 0;
		for (size_t steps = 0; taken < SA_DRIFT_SCAN && steps < 4 * SA_DRIFT_SCAN; steps++) {
			size_t k = 0;
			const struct walk *w;
			double far;
			if ((side < 0 && j == 0) || (side > 0 && j + 1 >= n))
				break;
			j = side < 0 ? j - 1 : j + 1;
			if (s[j].tid != s[i].tid)
				continue;
			taken++;
			(*seen)++;
			while (k < npc && pc[k].pc != s[j].pc)
				k++;
			if (k == npc)
				pc[npc++] = (struct near_pc){ s[j].pc, 0, SIZE_MAX, NAN };
			pc[k].count++;
			far = fabs((double)s[j].time - mid);
			w = &d->walk[j];
			if (!isnan(w->v) && w->lo <= (double)s[i].time && (double)s[i].time + span <= w->hi &&
			    (pc[k].j == SIZE_MAX || far < fabs((double)s[pc[k].j].time - mid))) {
				pc[k].j = j;
				pc[k].v = w->v;
			}
		}
	}
	return npc;
}

/* Whether off is among delta[0, nd): the lines of a span are distinct
 * (a[i][j - 1] and a[i][j + 1], two pcs, read one line). */
static int seen_before(const int64_t *delta, size_t nd, int64_t off)
{
	for (size_t k = 0; k < nd; k++)
		if (delta[k] == off)
			return 1;
	return 0;
}

/* A followed pc's walk over the span. */
struct pc_walk {
	int64_t mid;     /* its offset at the middle of the span */
	double straddle; /* its pc's share of references over two lines */
	double rd;       /* reuse distance of the sample it was read from */
};

/* The lines of a span that the walks' offsets do not show (beyond those
 * that the pcs around it taken as outside it may touch): the next lines
 * of walks whose references straddle two lines. Offsets are whole lines
 * (rounded), so a walk is one line where a reference that straddles
 * touches its next line too; which spans hold such next lines is in
 * StatStack's D, not in the walks: as many of them as D exceeds the
 * walks' lines, one per straddling walk, the likeliest first. A 2-D
 * stencil of 128-line rows (unaligned 16-byte loads of a[i - 1][j],
 * a[i][j +- 1], a[i + 1][j], a quarter of them straddling; a[i - 1],
 * a[i + 1] and b[i] a multiple of 64 lines from a[i]) had every short
 * span's offsets on the step of 64: five or six lines in one set of
 * 16K:4:64, 72 % misses where simulation has 17 %. Walks that do not
 * straddle add nothing: the lines missing then are those of pcs that
 * the samples around the span do not show (twelve arrays in lock step,
 * a pc each), placed like the walks' lines. Appends to delta and rd (at
 * most max in all); returns the new count. */
static size_t next_lines(struct pc_walk *w, size_t nw, double missing, int64_t *delta, double *rd, size_t nd,
			 size_t max)
{
	while (nd < max && missing >= 0.5) {
		size_t best = nw;
		for (size_t k = 0; k < nw; k++)
			if (w[k].straddle > 0.01 && (best == nw || w[k].straddle > w[best].straddle))
				best = k;
		if (best == nw)
			break;
		if (w[best].mid + 1 != 0) {
			rd[nd] = w[best].rd;
			delta[nd++] = w[best].mid + 1;
			missing -= 1;
		}
		w[best].straddle = 0;
	}
	return nd;
}

size_t lp_sa_drift_offsets(const struct lp_sa_drift *d, const struct lp_sample *s, size_t n, size_t i,
			   uint64_t line, double span_lines, int64_t *delta, double *rd, size_t max)
{
	struct near_pc pc[2 * SA_DRIFT_SCAN];
	struct pc_walk w[2 * SA_DRIFT_SCAN];
	double span = (double)s[i].reuse, t = (double)s[i].time, x = (double)s[i].addr, known = 0;
	size_t seen, npc, nd = 0, nw = 0, active = 0, followed = 0;

	if (s[i].reuse == LP_REUSE_DANGLING || !line)
		return 0;
	npc = pcs_around(d, s, n, i, pc, &seen);
	/* the pcs in the span, and those of them whose walk is known */
	for (size_t k = 0; k < npc; k++) {
		if ((double)pc[k].count * span < 0.5 * (double)seen) {
			/* taken as outside the span, yet it may touch a line
			 * there: that many of the missing lines may be its */
			known += (double)pc[k].count * span / (double)seen;
			continue;
		}
		active += pc[k].count;
		followed += pc[k].j != SIZE_MAX ? pc[k].count : 0;
	}
	/* the lines of a pc that is not followed (a column walk of a matrix
	 * written by a transpose, its samples on no line) would be missing
	 * from the offsets, which would then say that the span is all the
	 * others' lines: such a span stays without offsets */
	if (!((double)followed >= SA_DRIFT_FOLLOWED * (double)active))
		return 0;
	for (size_t k = 0; k < npc && nd < max; k++) {
		const struct lp_sample *y;
		double v = pc[k].v, crossed;
		size_t first = nd;
		int points;
		if (pc[k].j == SIZE_MAX || (double)pc[k].count * span < 0.5 * (double)seen)
			continue;
		y = &s[pc[k].j];
		crossed = fmax(1, ceil(fabs(v) * span / (double)line));
		points = (int)fmin(SA_DRIFT_POINTS, crossed);
		w[nw] = (struct pc_walk){ 0, d->straddle[pc[k].j],
					  y->reuse == LP_REUSE_DANGLING ? INFINITY : (double)y->reuse };
		for (int p = 0; p < points && nd < max; p++) {
			double u = t + span * (p + 0.5) / points;
			double at = (double)y->addr + v * (u - (double)y->time), lines = (at - x) / (double)line;
			int64_t off;
			if (!(fabs(lines) < 0x1p62)) /* a hostile profile's address or time */
				continue;
			off = (int64_t)llround(lines);
			if (p == points / 2)
				w[nw].mid = off;
			if (off != 0 && !seen_before(delta, nd, off)) {
				rd[nd] = w[nw].rd;
				delta[nd++] = off;
			}
		}
		known += (double)(nd - first) * crossed / (double)points;
		nw++;
	}
	if (!nd)
		return 0;
	return next_lines(w, nw, span_lines - 1 - known, delta, rd, nd, max);
}
