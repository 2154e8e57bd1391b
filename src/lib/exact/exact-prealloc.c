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

struct prealloc {
	struct lp_htab ht;
	struct lp_bitsum b; /* the holes, one bit per time */
	uint64_t n, now;
};

static void prealloc_destroy(void *st)
{
	struct prealloc *s = st;

	if (!s)
		return;
	lp_bitsum_release(&s->b);
	lp_htab_release(&s->ht);
	free(s);
}

static int prealloc_create(void **st, const struct lp_exact_opts *o)
{
	struct prealloc *s = calloc(1, sizeof(*s));
	uint64_t words;
	int top = 0;

	if (!s)
		return lp_seterr(LP_ENOMEM, "out of memory");
	s->n = o->prealloc_n ? o->prealloc_n : LP_PREALLOC_N_DEFAULT;
	if (s->n > (UINT64_C(1) << 40))
		s->n = UINT64_C(1) << 40;
	words = (s->n + 63) / 64;
	while ((UINT64_C(1) << top) < words)
		top++;
	if (lp_htab_init(&s->ht, 1 << 12) < 0 || lp_bitsum_init(&s->b, top, words) < 0)
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
	       (size_t)((UINT64_C(2) << s->b.top) * sizeof(uint32_t));
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
		v = lp_exact_lookup(&s->ht, lines, i, n, &isnew);
		/* the holes after p, and p becomes one */
		dist[i] = isnew ? LP_DIST_COLD : s->now - *v - 1 - lp_bitsum_after_flip(&s->b, *v, 1);
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
