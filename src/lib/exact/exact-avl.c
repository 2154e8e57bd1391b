/* avl: the interval tree of holes (Almasi et al. 4.5 and the appendix).
 *
 * Holes (times that are no longer the last access of their line) are kept
 * as disjoint closed intervals [k1, k2] in an AVL tree. Each node also
 * holds rsum, the holes in its right subtree (the paper's optimisation:
 * going left needs no look at the right child), and tot, the holes in its
 * whole subtree, which the paper does not mention but rotations need to
 * recompute rsum in O(1). One root-to-leaf walk per access counts the holes
 * after p and inserts p: new node, extension of an adjacent interval, or
 * fusion of the two intervals around p. O(log M) per access (the number of
 * intervals is at most M + 1), O(M) memory, 64-bit times, no limit.
 *
 * The appendix's pseudo-code needs three corrections, made here:
 *  - going left must also count the holes of the node's own interval
 *    (k2 - k1 + 1), not only sum(n);
 *  - the interval adjacent below p is the *largest* interval of the left
 *    subtree, not left(n) itself (likewise the smallest of the right
 *    subtree above p), and removing it must fix the sums on its path;
 *  - the "merge right node" case removes the right neighbour, not left(n).
 * Nodes come from a pool with a free list (the paper saw 33% from a custom
 * allocator). */
#include "exact/exact-internal.h"

#define NIL UINT32_MAX

struct anode {
	uint64_t k1, k2;
	uint64_t rsum, tot;
	uint32_t l, r;
	int32_t h;
};

struct avl {
	struct lp_htab ht;
	struct anode *v;
	size_t n, cap;
	uint32_t freel, root;
	uint64_t now, acc; /* acc: holes after p found on the way down */
};

static int avl_create(void **st, const struct lp_exact_opts *o)
{
	struct avl *s = calloc(1, sizeof(*s));

	if (!s || lp_htab_init(&s->ht, 1 << 12) < 0) {
		free(s);
		return lp_seterr(LP_ENOMEM, "out of memory");
	}
	s->freel = s->root = NIL;
	*st = s;
	return 0;
}

static void avl_destroy(void *st)
{
	struct avl *s = st;

	if (!s)
		return;
	free(s->v);
	lp_htab_release(&s->ht);
	free(s);
}

static size_t avl_memory(const void *st)
{
	const struct avl *s = st;

	return sizeof(*s) + lp_htab_memory(&s->ht) + s->cap * sizeof(struct anode);
}

#define N(x) (s->v[x])

static inline int32_t ht_(const struct avl *s, uint32_t x) { return x == NIL ? 0 : s->v[x].h; }
static inline uint64_t tot_(const struct avl *s, uint32_t x) { return x == NIL ? 0 : s->v[x].tot; }

static inline void fix_h(struct avl *s, uint32_t x)
{
	int32_t a = ht_(s, N(x).l), b = ht_(s, N(x).r);

	N(x).h = 1 + (a > b ? a : b);
}

/* Rotations keep tot of the subtree root and recompute rsum/tot of the
 * two nodes from their children's tot. */
static uint32_t rot_right(struct avl *s, uint32_t y)
{
	uint32_t x = N(y).l, beta = N(x).r;
	uint64_t whole = N(y).tot;

	N(y).l = beta;
	N(y).tot = whole - N(x).tot + tot_(s, beta);
	N(x).r = y;
	N(x).rsum = N(y).tot;
	N(x).tot = whole;
	fix_h(s, y);
	fix_h(s, x);
	return x;
}

static uint32_t rot_left(struct avl *s, uint32_t x)
{
	uint32_t y = N(x).r, beta = N(y).l;
	uint64_t whole = N(x).tot;

	N(x).r = beta;
	N(x).rsum = tot_(s, beta);
	N(x).tot = whole - N(y).tot + tot_(s, beta);
	N(y).l = x;
	N(y).tot = whole;
	fix_h(s, x);
	fix_h(s, y);
	return y;
}

static uint32_t balance(struct avl *s, uint32_t x)
{
	int32_t bf = ht_(s, N(x).l) - ht_(s, N(x).r);

	/* one insertion or removal below x changed a height by at most 1 */
	assert(bf >= -2 && bf <= 2);

	if (bf > 1) {
		if (ht_(s, N(N(x).l).l) < ht_(s, N(N(x).l).r))
			N(x).l = rot_left(s, N(x).l);
		return rot_right(s, x);
	}
	if (bf < -1) {
		if (ht_(s, N(N(x).r).r) < ht_(s, N(N(x).r).l))
			N(x).r = rot_right(s, N(x).r);
		return rot_left(s, x);
	}
	fix_h(s, x);
	return x;
}

static void free_node(struct avl *s, uint32_t x)
{
	N(x).l = s->freel;
	s->freel = x;
}

/* Remove the largest interval of subtree x, returning it in *k1, *k2 and
 * its size; the sums on the path (all right turns) shrink by that size. */
static uint32_t remove_max(struct avl *s, uint32_t x, uint64_t *k1, uint64_t *k2)
{
	uint32_t l;

	if (N(x).r == NIL) {
		*k1 = N(x).k1;
		*k2 = N(x).k2;
		l = N(x).l;
		free_node(s, x);
		return l;
	}
	N(x).r = remove_max(s, N(x).r, k1, k2);
	assert(N(x).rsum >= *k2 - *k1 + 1 && N(x).tot >= N(x).rsum);
	N(x).rsum -= *k2 - *k1 + 1;
	N(x).tot -= *k2 - *k1 + 1;
	return balance(s, x);
}

static uint32_t remove_min(struct avl *s, uint32_t x, uint64_t *k1, uint64_t *k2)
{
	uint32_t r;

	if (N(x).l == NIL) {
		*k1 = N(x).k1;
		*k2 = N(x).k2;
		r = N(x).r;
		free_node(s, x);
		return r;
	}
	N(x).l = remove_min(s, N(x).l, k1, k2);
	assert(N(x).tot >= *k2 - *k1 + 1);
	N(x).tot -= *k2 - *k1 + 1;
	return balance(s, x);
}

/* Insert hole p into subtree x, adding the holes after p to s->acc. A free
 * node is guaranteed by the caller. */
static uint32_t insert(struct avl *s, uint32_t x, uint64_t p)
{
	uint64_t a, b;

	if (x == NIL) {
		x = s->freel;
		assert(x != NIL);
		s->freel = N(x).l;
		N(x) = (struct anode){ .k1 = p, .k2 = p, .tot = 1, .l = NIL, .r = NIL, .h = 1 };
		return x;
	}
	N(x).tot++;
	if (p + 1 < N(x).k1) {
		s->acc += N(x).rsum + (N(x).k2 - N(x).k1 + 1);
		N(x).l = insert(s, N(x).l, p);
		return balance(s, x);
	}
	if (p > N(x).k2 + 1) {
		N(x).rsum++;
		N(x).r = insert(s, N(x).r, p);
		return balance(s, x);
	}
	if (p + 1 == N(x).k1) {
		/* p joins this interval from below; the interval ending at
		 * p-1, if any, is the largest one of the left subtree */
		s->acc += N(x).rsum + (N(x).k2 - N(x).k1 + 1);
		N(x).k1 = p;
		if (N(x).l != NIL && p > 0) {
			uint32_t m = N(x).l;

			while (N(m).r != NIL)
				m = N(m).r;
			if (N(m).k2 + 1 == p) {
				N(x).l = remove_max(s, N(x).l, &a, &b);
				N(x).k1 = a;
				return balance(s, x);
			}
		}
		return x;
	}
	/* p == k2 + 1: joins from above; maybe fuse with the smallest
	 * interval of the right subtree */
	s->acc += N(x).rsum;
	N(x).k2 = p;
	if (N(x).r != NIL) {
		uint32_t m = N(x).r;

		while (N(m).l != NIL)
			m = N(m).l;
		if (N(m).k1 == p + 1) {
			N(x).r = remove_min(s, N(x).r, &a, &b);
			N(x).k2 = b;
			N(x).rsum -= b - a + 1;
			return balance(s, x);
		}
	}
	return x;
}

/* The whole tree's invariants (LP_DEBUG_CHECKS builds): intervals in
 * order, disjoint and not adjacent (adjacent ones are fused), heights
 * right and balanced, tot and rsum the holes of the subtree and of its
 * right child. Returns the subtree's height; *lo and *hi its bounds. */
static int32_t avl_check(const struct avl *s, uint32_t x, uint64_t *lo, uint64_t *hi)
{
	uint64_t llo, lhi, rlo, rhi;
	int32_t hl = 0, hr = 0;

	if (x == NIL)
		return 0;
	assert(N(x).k1 <= N(x).k2);
	*lo = N(x).k1;
	*hi = N(x).k2;
	if (N(x).l != NIL) {
		hl = avl_check(s, N(x).l, &llo, &lhi);
		assert(lhi + 1 < N(x).k1);
		*lo = llo;
	}
	if (N(x).r != NIL) {
		hr = avl_check(s, N(x).r, &rlo, &rhi);
		assert(N(x).k2 + 1 < rlo);
		*hi = rhi;
	}
	assert(hl - hr >= -1 && hl - hr <= 1);
	hl = 1 + (hl > hr ? hl : hr);
	assert(N(x).h == hl);
	assert(N(x).rsum == tot_(s, N(x).r));
	assert(N(x).tot == tot_(s, N(x).l) + tot_(s, N(x).r) + (N(x).k2 - N(x).k1 + 1));
	return hl;
}

static int avl_batch(void *st, const uint64_t *lines, size_t n, uint64_t *dist, size_t *done)
{
	struct avl *s = st;
	uint64_t start = s->now;

	*done = 0;
	if (lp_htab_reserve(&s->ht, n) < 0)
		return LP_ENOMEM;
	/* Each access adds at most one node: make room for the batch. */
	if (s->n + n > s->cap) {
		int rc = LP_ARRAY_RESERVE_MAX(s->v, s->cap, s->n + n, 1024, NIL - 1, "avl: hole intervals");

		if (rc < 0)
			return rc;
	}
	for (size_t i = 0; i < n; i++) {
		int isnew;
		uint64_t *v;

		v = lp_exact_lookup(&s->ht, lines, i, n, &isnew);
		if (isnew) {
			dist[i] = LP_DIST_COLD;
		} else {
			uint64_t p = *v;

			if (s->freel == NIL) {
				s->freel = (uint32_t)s->n++;
				N(s->freel).l = NIL;
			}
			s->acc = 0;
			s->root = insert(s, s->root, p);
			assert(s->acc <= s->now - p - 1);
			dist[i] = s->now - p - 1 - s->acc;
		}
		*v = s->now++;
	}
	/* every access but a line's first left one hole */
	assert(tot_(s, s->root) == s->now - s->ht.n - (uint64_t)s->ht.has_top);
	/* the whole tree when time passes a power of two: O(1) per access */
	if (LP_DEBUG_CHECKS && (start ^ s->now) > start) {
		uint64_t lo, hi;

		avl_check(s, s->root, &lo, &hi);
	}
	*done = n;
	return 0;
}

const struct lp_exact_algo lp_exact_algo_avl = {
	.name = "avl",
	.kind = LP_DIST_STACK,
	.create = avl_create,
	.batch = avl_batch,
	.memory = avl_memory,
	.destroy = avl_destroy,
};
