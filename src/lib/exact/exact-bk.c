/* bk: Bennett and Kruskal's partial-sum hierarchy over trace time
 * (Almasi et al. 4.4). B(t) = 1 iff t is the last access of its line; a
 * binary hierarchy of counts of ones sits above a bitmap of B (64-bit
 * words as leaves). Each access walks root-to-leaf twice: once to count
 * the ones after p while clearing B(p), once to set B(now).
 *
 * The trace length is not capped: when time reaches the capacity every
 * level doubles (the new halves are zero, so the old counts stay valid)
 * and one level is added on top. Memory is therefore O(N): about N/4
 * bytes (bitmap N/8, counts N/8). Times are 64-bit. */
#include "exact/exact-internal.h"

struct bk {
	struct lp_htab ht;
	struct lp_bitsum b;  /* B over times [0, cap) */
	uint64_t cap, now;   /* cap = 64 * 2^b.top */
};

static void bk_destroy(void *st)
{
	struct bk *s = st;

	if (!s)
		return;
	lp_bitsum_release(&s->b);
	lp_htab_release(&s->ht);
	free(s);
}

static int bk_create(void **st, const struct lp_exact_opts *o)
{
	struct bk *s = calloc(1, sizeof(*s));

	if (!s)
		return lp_seterr(LP_ENOMEM, "out of memory");
	s->cap = UINT64_C(64) << 10;
	if (lp_htab_init(&s->ht, 1 << 12) < 0 || lp_bitsum_init(&s->b, 10, s->cap / 64) < 0)
		goto out_nomem;
	*st = s;
	return 0;
out_nomem:
	bk_destroy(s);
	return lp_seterr(LP_ENOMEM, "out of memory");
}

static size_t bk_memory(const void *st)
{
	const struct bk *s = st;

	return sizeof(*s) + lp_htab_memory(&s->ht) + (size_t)(s->cap / 8) +
	       ((size_t)2 << s->b.top) * sizeof(uint32_t);
}

/* Double the time capacity. */
static int bk_grow(struct bk *s)
{
	struct lp_bitsum *b = &s->b;
	size_t words = (size_t)(s->cap / 64);
	uint64_t *bits;

	if (b->top + 1 >= LP_BITSUM_MAX_LEVELS)
		return lp_seterr(LP_ELIMIT, "bk: trace longer than 2^63 line accesses");
	if (!(bits = realloc(b->bits, 2 * words * 8)))
		goto out_nomem;
	memset(bits + words, 0, words * 8);
	b->bits = bits;
	for (int j = 0; j <= b->top; j++) {
		size_t n = (size_t)1 << (b->top - j);
		uint32_t *l = realloc(b->lv[j], 2 * n * sizeof(uint32_t));

		if (!l)
			goto out_nomem;
		memset(l + n, 0, n * sizeof(uint32_t));
		b->lv[j] = l;
	}
	if (!(b->lv[b->top + 1] = malloc(sizeof(uint32_t))))
		goto out_nomem;
	b->lv[b->top + 1][0] = b->lv[b->top][0];
	b->top++;
	s->cap *= 2;
	return 0;
out_nomem:
	return lp_seterr(LP_ENOMEM, "out of memory growing the partial-sum hierarchy");
}

static int bk_batch(void *st, const uint64_t *lines, size_t n, uint64_t *dist, size_t *done)
{
	struct bk *s = st;
	int err;

	*done = 0;
	if (lp_htab_reserve(&s->ht, n) < 0)
		return LP_ENOMEM;
	for (size_t i = 0; i < n; i++) {
		int isnew;
		uint64_t *v;

		if (s->now == s->cap && (err = bk_grow(s)) < 0) {
			*done = i;
			return err;
		}
		v = lp_exact_lookup(&s->ht, lines, i, n, &isnew);
		/* count the ones after p, clear B(p); then set B(now) */
		dist[i] = isnew ? LP_DIST_COLD : lp_bitsum_after_flip(&s->b, *v, 0);
		lp_bitsum_after_flip(&s->b, s->now, 1);
		*v = s->now++;
	}
	*done = n;
	return 0;
}

const struct lp_exact_algo lp_exact_algo_bk = {
	.name = "bk",
	.kind = LP_DIST_STACK,
	.create = bk_create,
	.batch = bk_batch,
	.memory = bk_memory,
	.destroy = bk_destroy,
};
