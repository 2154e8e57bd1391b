/* naive: Mattson's LRU stack as a doubly linked list, searched from the top
 * (Almasi et al. 4.1). O(N*M): the obviously-correct reference the other
 * algorithms are tested against, not something to run on big traces. */
#include "exact/exact-internal.h"

#define NIL UINT32_MAX

struct node {
	uint64_t line;
	uint32_t prev, next;
};

struct naive {
	struct node *v;
	size_t n, cap;
	uint32_t head;
};

static int naive_create(void **st, const struct lp_exact_opts *o)
{
	struct naive *s = calloc(1, sizeof(*s));

	if (!s)
		return lp_seterr(LP_ENOMEM, "out of memory");
	s->head = NIL;
	*st = s;
	return 0;
}

static void naive_destroy(void *st)
{
	struct naive *s = st;

	if (!s)
		return;
	free(s->v);
	free(s);
}

static size_t naive_memory(const void *st)
{
	const struct naive *s = st;

	return sizeof(*s) + s->cap * sizeof(struct node);
}

static int naive_batch(void *st, const uint64_t *lines, size_t n, uint64_t *dist, size_t *done)
{
	struct naive *s = st;

	/* Room for every access of the batch being a new line, so that the
	 * loop below never allocates. */
	if (s->n + n > s->cap) {
		int rc = LP_ARRAY_RESERVE_MAX(s->v, s->cap, s->n + n, 1024, NIL, "naive: distinct lines");

		if (rc < 0)
			return rc;
	}
	for (size_t i = 0; i < n; i++) {
		uint64_t depth = 0;
		uint32_t x;

		for (x = s->head; x != NIL && s->v[x].line != lines[i]; x = s->v[x].next)
			depth++;
		if (x == NIL) {
			dist[i] = LP_DIST_COLD;
			x = (uint32_t)s->n++;
			s->v[x].line = lines[i];
		} else {
			dist[i] = depth;
			if (x == s->head)
				continue;
			/* unlink */
			s->v[s->v[x].prev].next = s->v[x].next;
			if (s->v[x].next != NIL)
				s->v[s->v[x].next].prev = s->v[x].prev;
		}
		s->v[x].prev = NIL;
		s->v[x].next = s->head;
		if (s->head != NIL)
			s->v[s->head].prev = x;
		s->head = x;
	}
	*done = n;
	return 0;
}

const struct lp_exact_algo lp_exact_algo_naive = {
	.name = "naive",
	.kind = LP_DIST_STACK,
	.create = naive_create,
	.batch = naive_batch,
	.memory = naive_memory,
	.destroy = naive_destroy,
};
