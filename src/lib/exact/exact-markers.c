/* markers: the LRU stack as a linked list with a hash table for the search
 * and markers every ~D elements for the count (Almasi et al. 4.2).
 *
 * A marker is a node of the stack list that records how many lines lie
 * above it. The depth of a line is found by walking up to the nearest
 * marker (<= D steps in steady state); moving the line to the top adds one
 * to the depth of every marker above it (<= M/D markers). With D ~ sqrt(M)
 * that is O(sqrt M) per access.
 *
 * Adaptation: only the segment above the topmost marker grows (lines are
 * pushed on top), so a new marker is put on top whenever that segment
 * reaches D lines; gaps lower down only shrink. When the markers become
 * too many (more than 2M/D + 4) or D too small for M (D^2 < M/4), all
 * markers are removed and laid out again every D = ceil(sqrt(M)) lines:
 * O(M), after at least ~M accesses, so amortised O(1). */
#include "exact/exact-internal.h"

#include <math.h>

#define NIL UINT32_MAX

struct mnode {
	uint64_t val;          /* line, or for a marker the lines above it */
	uint32_t prev, next;   /* stack list, top = head */
	uint32_t mnext;        /* markers list, top to bottom (markers only) */
	uint8_t marker;
};

struct markers {
	struct lp_htab ht;    /* line -> node */
	struct mnode *v;
	size_t n, cap;
	uint32_t head, mhead, freel;
	uint64_t lines, nmarkers, topgap, d;
};

static int markers_create(void **st, const struct lp_exact_opts *o)
{
	struct markers *s = calloc(1, sizeof(*s));

	if (!s || lp_htab_init(&s->ht, 1 << 12) < 0) {
		free(s);
		return lp_seterr(LP_ENOMEM, "out of memory");
	}
	s->head = s->mhead = s->freel = NIL;
	s->d = 8;
	*st = s;
	return 0;
}

static void markers_destroy(void *st)
{
	struct markers *s = st;

	if (!s)
		return;
	free(s->v);
	lp_htab_release(&s->ht);
	free(s);
}

static size_t markers_memory(const void *st)
{
	const struct markers *s = st;

	return sizeof(*s) + lp_htab_memory(&s->ht) + s->cap * sizeof(struct mnode);
}

static int reserve(struct markers *s, size_t extra)
{
	return LP_ARRAY_RESERVE_MAX(s->v, s->cap, s->n + extra, 1024, NIL - 1, "markers: list nodes");
}

static uint32_t new_node(struct markers *s)
{
	uint32_t x;

	if (s->freel != NIL) {
		x = s->freel;
		s->freel = s->v[x].next;
		return x;
	}
	return (uint32_t)s->n++;
}

static void unlink_node(struct markers *s, uint32_t x)
{
	if (s->v[x].prev != NIL)
		s->v[s->v[x].prev].next = s->v[x].next;
	else
		s->head = s->v[x].next;
	if (s->v[x].next != NIL)
		s->v[s->v[x].next].prev = s->v[x].prev;
}

static void push_top(struct markers *s, uint32_t x)
{
	s->v[x].prev = NIL;
	s->v[x].next = s->head;
	if (s->head != NIL)
		s->v[s->head].prev = x;
	s->head = x;
}

static void insert_before(struct markers *s, uint32_t m, uint32_t x)
{
	s->v[m].next = x;
	s->v[m].prev = s->v[x].prev;
	if (s->v[x].prev != NIL)
		s->v[s->v[x].prev].next = m;
	else
		s->head = m;
	s->v[x].prev = m;
}

static int relayout(struct markers *s)
{
	uint32_t x, next, last = NIL;
	uint64_t k = 0;
	int err;

	s->d = (uint64_t)ceil(sqrt((double)s->lines));
	if (s->d < 8)
		s->d = 8;
	if ((err = reserve(s, (size_t)(s->lines / s->d + 2))) < 0)
		return err;
	s->mhead = NIL;
	s->nmarkers = 0;
	for (x = s->head; x != NIL; x = next) {
		next = s->v[x].next;
		if (s->v[x].marker) {
			unlink_node(s, x);
			s->v[x].next = s->freel;
			s->freel = x;
			continue;
		}
		if (k && k % s->d == 0) {
			uint32_t m = new_node(s);

			s->v[m].marker = 1;
			s->v[m].val = k;
			s->v[m].mnext = NIL;
			insert_before(s, m, x);
			if (last == NIL)
				s->mhead = m;
			else
				s->v[last].mnext = m;
			last = m;
			s->nmarkers++;
		}
		k++;
	}
	s->topgap = s->lines < s->d ? s->lines : s->d;
	return 0;
}

static int markers_batch(void *st, const uint64_t *lines, size_t n, uint64_t *dist, size_t *done)
{
	struct markers *s = st;
	int err;

	*done = 0;
	if (lp_htab_reserve(&s->ht, n) < 0)
		return LP_ENOMEM;
	for (size_t i = 0; i < n; i++) {
		int isnew;
		uint64_t *v, c = 0;
		uint32_t x, m = NIL;

		/* at most one line node and one marker per access */
		if ((err = reserve(s, 2)) < 0) {
			*done = i;
			return err;
		}
		v = lp_htab_get(&s->ht, lines[i], &isnew);
		if (isnew) {
			x = new_node(s);
			s->v[x].marker = 0;
			s->v[x].val = lines[i];
			*v = x;
			s->lines++;
			dist[i] = LP_DIST_COLD;
			m = (uint32_t)-2; /* every marker is above the new line */
		} else {
			x = (uint32_t)*v;
			for (uint32_t y = s->v[x].prev; y != NIL; y = s->v[y].prev) {
				if (s->v[y].marker) {
					m = y;
					break;
				}
				c++;
			}
			dist[i] = (m == NIL ? 0 : s->v[m].val) + c;
			if (x == s->head)
				continue;
			unlink_node(s, x);
		}
		push_top(s, x);
		if (m != NIL) {
			/* markers from the top down to m now have one more line above */
			for (uint32_t y = s->mhead; y != NIL; y = s->v[y].mnext) {
				s->v[y].val++;
				if (y == m)
					break;
			}
			s->topgap++;
		}
		if (s->topgap >= s->d) {
			uint32_t mk = new_node(s);

			s->v[mk].marker = 1;
			s->v[mk].val = 0;
			s->v[mk].mnext = s->mhead;
			s->mhead = mk;
			push_top(s, mk);
			s->nmarkers++;
			s->topgap = 0;
		}
		if (s->nmarkers > 2 * s->lines / s->d + 4 || s->d * s->d * 4 < s->lines) {
			if ((err = relayout(s)) < 0) {
				*done = i + 1;
				return err;
			}
		}
	}
	*done = n;
	return 0;
}

const struct lp_exact_algo lp_exact_algo_markers = {
	.name = "markers",
	.kind = LP_DIST_STACK,
	.create = markers_create,
	.batch = markers_batch,
	.memory = markers_memory,
	.destroy = markers_destroy,
};
