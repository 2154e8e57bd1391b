/* reuse: StatCache reuse distance, the line accesses strictly between two
 * accesses to the same line. A hash table of the last access time of each
 * line and a global 64-bit line-access counter; O(1) per access, O(M)
 * memory, no limit on the trace length. */
#include "exact/exact-internal.h"

struct reuse {
	struct lp_htab ht;
	uint64_t now;
};

static int reuse_create(void **st, const struct lp_exact_opts *o)
{
	struct reuse *s = calloc(1, sizeof(*s));

	if (!s)
		return lp_seterr(LP_ENOMEM, "out of memory");
	if (lp_htab_init(&s->ht, 1 << 12) < 0) {
		free(s);
		return LP_ENOMEM;
	}
	*st = s;
	return 0;
}

static void reuse_destroy(void *st)
{
	struct reuse *s = st;

	if (!s)
		return;
	lp_htab_release(&s->ht);
	free(s);
}

static size_t reuse_memory(const void *st)
{
	const struct reuse *s = st;

	return sizeof(*s) + lp_htab_memory(&s->ht);
}

static int reuse_batch(void *st, const uint64_t *lines, size_t n, uint64_t *dist, size_t *done)
{
	struct reuse *s = st;

	*done = 0;
	if (lp_htab_reserve(&s->ht, n) < 0)
		return LP_ENOMEM;
	for (size_t i = 0; i < n; i++) {
		int isnew;
		uint64_t *v;

		v = lp_exact_lookup(&s->ht, lines, i, n, &isnew);
		dist[i] = isnew ? LP_DIST_COLD : s->now - *v - 1;
		*v = s->now++;
	}
	*done = n;
	return 0;
}

const struct lp_exact_algo lp_exact_algo_reuse = {
	.name = "reuse",
	.kind = LP_DIST_REUSE,
	.create = reuse_create,
	.batch = reuse_batch,
	.memory = reuse_memory,
	.destroy = reuse_destroy,
};
