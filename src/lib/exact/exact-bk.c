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

#define MAX_LEVELS 58

struct bk {
	struct lp_htab ht;
	uint64_t *bits;
	uint32_t *lv[MAX_LEVELS]; /* lv[s][i] = ones in [i*64*2^s, (i+1)*64*2^s) */
	int top;                  /* lv[top] has one entry */
	uint64_t cap, now;        /* cap = 64 * 2^top */
};

static void bk_destroy(void *st)
{
	struct bk *s = st;

	if (!s)
		return;
	for (int j = 0; j <= s->top; j++)
		free(s->lv[j]);
	free(s->bits);
	lp_htab_release(&s->ht);
	free(s);
}

static int bk_create(void **st, const struct lp_exact_opts *o)
{
	struct bk *s = calloc(1, sizeof(*s));

	if (!s)
		return lp_seterr(LP_ENOMEM, "out of memory");
	s->top = 10;
	s->cap = UINT64_C(64) << s->top;
	if (lp_htab_init(&s->ht, 1 << 12) < 0 || !(s->bits = calloc((size_t)(s->cap / 64), 8)))
		goto out_nomem;
	for (int j = 0; j <= s->top; j++)
		if (!(s->lv[j] = calloc((size_t)1 << (s->top - j), sizeof(uint32_t))))
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
	       ((size_t)2 << s->top) * sizeof(uint32_t);
}

/* Double the time capacity. */
static int bk_grow(struct bk *s)
{
	size_t words = (size_t)(s->cap / 64);
	uint64_t *b;

	if (s->top + 1 >= MAX_LEVELS)
		return lp_seterr(LP_ELIMIT, "bk: trace longer than 2^63 line accesses");
	if (!(b = realloc(s->bits, 2 * words * 8)))
		goto out_nomem;
	memset(b + words, 0, words * 8);
	s->bits = b;
	for (int j = 0; j <= s->top; j++) {
		size_t n = (size_t)1 << (s->top - j);
		uint32_t *l = realloc(s->lv[j], 2 * n * sizeof(uint32_t));

		if (!l)
			goto out_nomem;
		memset(l + n, 0, n * sizeof(uint32_t));
		s->lv[j] = l;
	}
	if (!(s->lv[s->top + 1] = malloc(sizeof(uint32_t))))
		goto out_nomem;
	s->lv[s->top + 1][0] = s->lv[s->top][0];
	s->top++;
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
		uint64_t *v, w;

		if (s->now == s->cap && (err = bk_grow(s)) < 0) {
			*done = i;
			return err;
		}
		if (i + 16 < n)
			lp_htab_prefetch(&s->ht, lines[i + 16]);
		v = lp_htab_get(&s->ht, lines[i], &isnew);
		if (isnew) {
			dist[i] = LP_DIST_COLD;
		} else {
			/* first traversal: count ones after p, clear B(p) */
			uint64_t p = *v, d = 0;

			w = p >> 6;
			for (int j = s->top; j >= 0; j--) {
				uint64_t k = w >> j;

				if (j < s->top && !(k & 1))
					d += s->lv[j][k + 1];
				s->lv[j][k]--;
			}
			d += (uint64_t)__builtin_popcountll(s->bits[w] & (~UINT64_C(1) << (p & 63)));
			s->bits[w] &= ~(UINT64_C(1) << (p & 63));
			dist[i] = d;
		}
		/* second traversal: set B(now) */
		w = s->now >> 6;
		for (int j = s->top; j >= 0; j--)
			s->lv[j][w >> j]++;
		s->bits[w] |= UINT64_C(1) << (s->now & 63);
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
