/* prealloc: the preallocated tree of holes (Almasi et al. 4.6).
 *
 * A hole is a time that is no longer the last access of its line; holes
 * are created and never destroyed, and the stack distance of an access
 * whose line was last touched at p is (now - p - 1) - holes after p. A
 * complete binary hierarchy of hole counts over all N times is allocated
 * up front (calloc: the kernel hands out zero pages only as the trace
 * advances through them), and one root-to-leaf walk per access both counts
 * the holes right of p and records p as a hole. O(log N) per access.
 *
 * The hard limit: N line accesses (opts->prealloc_n, default 2^28, which
 * reserves 64 MiB of virtual memory). Beyond it the algorithm stops with
 * LP_ELIMIT; it never wraps or drops accesses. */
#include "exact/exact-internal.h"

#define MAX_LEVELS 48

struct prealloc {
	struct lp_htab ht;
	uint64_t *bits;           /* hole bits, one per time */
	uint32_t *lv[MAX_LEVELS]; /* lv[s][i] = holes in [i*64*2^s, (i+1)*64*2^s) */
	int top;                  /* lv[top] has a single entry */
	uint64_t n, now;
};

static void prealloc_destroy(void *st)
{
	struct prealloc *s = st;

	if (!s)
		return;
	for (int j = 0; j <= s->top; j++)
		free(s->lv[j]);
	free(s->bits);
	lp_htab_release(&s->ht);
	free(s);
}

static int prealloc_create(void **st, const struct lp_exact_opts *o)
{
	struct prealloc *s = calloc(1, sizeof(*s));
	uint64_t words;

	if (!s)
		return lp_seterr(LP_ENOMEM, "out of memory");
	s->n = o->prealloc_n ? o->prealloc_n : LP_PREALLOC_N_DEFAULT;
	if (s->n > (UINT64_C(1) << 40))
		s->n = UINT64_C(1) << 40;
	words = (s->n + 63) / 64;
	while ((UINT64_C(1) << s->top) < words)
		s->top++;
	if (lp_htab_init(&s->ht, 1 << 12) < 0)
		goto out_nomem;
	if (!(s->bits = calloc((size_t)words, sizeof(uint64_t))))
		goto out_nomem;
	for (int j = 0; j <= s->top; j++)
		if (!(s->lv[j] = calloc((size_t)(((UINT64_C(1) << s->top) >> j)), sizeof(uint32_t))))
			goto out_nomem;
	*st = s;
	return 0;
out_nomem:
	prealloc_destroy(s);
	return lp_seterr(LP_ENOMEM, "out of memory preallocating the hole tree for %llu accesses",
			 (unsigned long long)(o->prealloc_n ? o->prealloc_n : LP_PREALLOC_N_DEFAULT));
}

static size_t prealloc_memory(const void *st)
{
	const struct prealloc *s = st;

	return sizeof(*s) + lp_htab_memory(&s->ht) + (size_t)((s->n + 63) / 64 * 8) +
	       (size_t)((UINT64_C(2) << s->top) * sizeof(uint32_t));
}

/* Holes after p, and make p a hole: one walk from the root to p. */
static inline uint64_t holes_after_insert(struct prealloc *s, uint64_t p)
{
	uint64_t h = 0, w = p >> 6;

	for (int j = s->top; j >= 0; j--) {
		uint64_t i = w >> j;

		if (j < s->top && !(i & 1))
			h += s->lv[j][i + 1];
		s->lv[j][i]++;
	}
	h += (uint64_t)__builtin_popcountll(s->bits[w] & (~UINT64_C(1) << (p & 63)));
	s->bits[w] |= UINT64_C(1) << (p & 63);
	return h;
}

static int prealloc_batch(void *st, const uint64_t *lines, size_t n, uint64_t *dist, size_t *done)
{
	struct prealloc *s = st;

	*done = 0;
	if (lp_htab_reserve(&s->ht, n) < 0)
		return LP_ENOMEM;
	for (size_t i = 0; i < n; i++) {
		int isnew;
		uint64_t *v;

		if (s->now == s->n) {
			*done = i;
			return lp_seterr(LP_ELIMIT,
					 "prealloc: the trace has more than %llu line accesses, the size of "
					 "the preallocated hole tree; raise the limit with --prealloc-n "
					 "(prealloc_n) or use another algorithm",
					 (unsigned long long)s->n);
		}
		if (i + 16 < n)
			lp_htab_prefetch(&s->ht, lines[i + 16]);
		v = lp_htab_get(&s->ht, lines[i], &isnew);
		dist[i] = isnew ? LP_DIST_COLD : s->now - *v - 1 - holes_after_insert(s, *v);
		*v = s->now++;
	}
	*done = n;
	return 0;
}

const struct lp_exact_algo lp_exact_algo_prealloc = {
	.name = "prealloc",
	.kind = LP_DIST_STACK,
	.create = prealloc_create,
	.batch = prealloc_batch,
	.memory = prealloc_memory,
	.destroy = prealloc_destroy,
};
