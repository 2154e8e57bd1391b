/* Allocation call stacks into a profile (lp_stack_builder,
 * locprof/profile.h): the collector's sinks and the trace sampler. An
 * allocation-heavy program makes millions of allocations from a few
 * hundred places, so each distinct stack is stored once: a hash of the
 * frames finds the first stack stored with that hash, and a stack whose
 * hash is taken by a different one is stored again (rare, and only costs
 * its bytes). */
#include <locprof/profile.h>

#include "common/error.h"
#include "common/hash.h"
#include "common/htab.h"

#include <stdlib.h>
#include <string.h>

struct lp_stack_builder {
	struct lp_htab ids; /* hash of a stack -> its id (first one with that hash) */
	uint64_t frames[LP_ALLOC_STACK_MAX];
	unsigned n;   /* frames so far of the open stack; 0: none open */
	size_t event; /* index of its event in the profile */
	int ended;    /* a 0 frame came: the stack is whole */
};

int lp_stack_builder_new(struct lp_stack_builder **out)
{
	if (!(*out = calloc(1, sizeof(**out))))
		return lp_seterr(LP_ENOMEM, "out of memory");
	return 0;
}

void lp_stack_builder_begin(struct lp_stack_builder *b, size_t event, uint64_t pc)
{
	b->frames[0] = pc;
	b->n = 1;
	b->event = event;
	b->ended = 0;
}

void lp_stack_builder_frames(struct lp_stack_builder *b, const uint64_t *frames, unsigned n)
{
	for (unsigned i = 0; i < n && b->n && !b->ended && b->n < LP_ALLOC_STACK_MAX; i++) {
		if (!frames[i])
			b->ended = 1;
		else
			b->frames[b->n++] = frames[i];
	}
}

static uint64_t stack_hash(const uint64_t *f, unsigned n)
{
	uint64_t h = n;

	for (unsigned i = 0; i < n; i++)
		h = lp_hash64(h ^ f[i]);
	return h;
}

int lp_stack_builder_end(struct lp_stack_builder *b, struct lp_profile *p)
{
	unsigned n = b->n;
	uint64_t h, *v;
	uint32_t id;
	int isnew, err;

	b->n = 0;
	if (n < 2 || b->event >= p->n_allocs)
		return 0;
	if ((!b->ids.s && lp_htab_init(&b->ids, 256) < 0) || lp_htab_reserve(&b->ids, 1) < 0)
		return lp_seterr(LP_ENOMEM, "out of memory");
	h = stack_hash(b->frames, n);
	v = lp_htab_get(&b->ids, h, &isnew);
	if (!isnew) {
		const struct lp_alloc_stack *st = &p->stacks[*v - 1];
		if (st->n == n && !memcmp(st->frames, b->frames, n * sizeof(*b->frames))) {
			p->allocs[b->event].stack = (uint32_t)*v;
			return 0;
		}
	}
	if (p->n_stacks >= LP_ALLOC_STACKS_MAX)
		return 0; /* the table is full: the event is named by its call site */
	if ((err = lp_profile_add_stack(p, b->frames, n, &id)) < 0)
		return err;
	if (isnew)
		*v = id;
	p->allocs[b->event].stack = id;
	return 0;
}

void lp_stack_builder_free(struct lp_stack_builder *b)
{
	if (!b)
		return;
	lp_htab_release(&b->ids);
	free(b);
}
