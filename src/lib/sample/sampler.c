/* The StatCache sampler over a reference stream: Berg & Hagersten section
 * 3, "a common memory reference counter ... a random generator samples
 * memory references and adds their addresses and the value of the counter
 * to a list of watchpoints; when an address matches a watchpoint the reuse
 * distance is recorded and the watchpoint removed".
 *
 * One line can have at most one pending sample: a new sample on a watched
 * line can only be taken at an access to that line, and that access first
 * resolves the pending one. So the watch table (common/watch-core.h, the
 * core the runtime and the valgrind tool use too) maps line -> one watch. */
#include <locprof/sample.h>

#include "common/array.h"
#include "common/debug.h"
#include "common/error.h"
#include "common/htab.h"
#include "common/rng.h"
#include "common/watch-core.h"

#include <stdlib.h>
#include <string.h>

enum { TABLE_MIN_LOG2 = 10 }; /* 1024 watches */

struct lane {
	unsigned shift;
	uint64_t clock;     /* line accesses so far */
	uint64_t countdown; /* accesses until the next selected one, >= 1 */
	struct lp_rng rng;
	/* pending samples of this line size (idx: the lane's index; tag:
	 * the sampled reference's thread) */
	struct lp_watch_table watches;
};

struct lp_sampler {
	struct lp_profile *p;
	struct lane lanes[LP_PROFILE_MAX_LINE_SIZES];
	unsigned n;
	double rate;
	uint64_t refs;
	/* threads numbered 0, 1, ... in order of appearance: a trace's ids
	 * may be anything up to 2^32 - 1, and the profile's table of
	 * references per thread must not grow with the largest one */
	uint64_t *thread_refs;
	size_t n_threads, cap_threads;
	struct lp_htab tids; /* trace thread id -> dense index */
	uint32_t cur_tid, cur_idx; /* the last thread looked up */
};

static int table_grow(struct lane *l)
{
	struct lp_watch *old = l->watches.slot;
	struct lp_watch *mem = malloc(lp_watch_table_bytes(l->watches.log2 + 1));

	if (!mem)
		return LP_ENOMEM;
	lp_watch_table_move(&l->watches, mem, l->watches.log2 + 1);
	free(old);
	return 0;
}

int lp_sampler_new(struct lp_sampler **out, struct lp_profile *p)
{
	struct lp_sampler *s;

	if (p->n_line_sizes == 0 || p->n_line_sizes > LP_PROFILE_MAX_LINE_SIZES)
		return lp_seterr(LP_EINVAL, "between 1 and %d line sizes", LP_PROFILE_MAX_LINE_SIZES);
	if (!(p->rate > 0 && p->rate <= 1))
		return lp_seterr(LP_EINVAL, "sampling rate %g is not in (0, 1]", p->rate);
	if (!(s = calloc(1, sizeof(*s))))
		return lp_seterr(LP_ENOMEM, "out of memory");
	s->p = p;
	s->n = p->n_line_sizes;
	if (lp_htab_init(&s->tids, 16) < 0) {
		free(s);
		return lp_seterr(LP_ENOMEM, "out of memory");
	}
	s->rate = p->rate;
	for (unsigned i = 0; i < s->n; i++) {
		struct lane *l = &s->lanes[i];
		uint32_t ls = p->line_sizes[i];
		if (ls == 0 || (ls & (ls - 1))) {
			lp_sampler_free(s);
			return lp_seterr(LP_EINVAL, "line size %u is not a power of two", ls);
		}
		l->shift = (unsigned)__builtin_ctz(ls);
		lp_rng_seed(&l->rng, p->seed + i);
		l->countdown = lp_rng_geometric(&l->rng, s->rate);
		struct lp_watch *mem = malloc(lp_watch_table_bytes(TABLE_MIN_LOG2));
		if (!mem) {
			lp_sampler_free(s);
			return lp_seterr(LP_ENOMEM, "out of memory");
		}
		lp_watch_table_init(&l->watches, mem, TABLE_MIN_LOG2);
	}
	*out = s;
	return 0;
}

/* The dense index of trace thread id tid, registering it when new. */
static int thread_index(struct lp_sampler *s, uint32_t tid, uint32_t *idx)
{
	uint64_t *val;
	int isnew, err;

	if ((err = lp_htab_reserve(&s->tids, 1)) < 0 ||
	    (err = LP_ARRAY_RESERVE(s->thread_refs, s->cap_threads, s->n_threads + 1, 16,
				    "threads")) < 0)
		return err;
	val = lp_htab_get(&s->tids, tid, &isnew);
	if (isnew) {
		s->thread_refs[s->n_threads] = 0;
		*val = s->n_threads++;
	}
	*idx = (uint32_t)*val;
	return 0;
}

/* thread_index() with a one-entry cache: traces come in runs of one
 * thread. */
static inline int thread_of(struct lp_sampler *s, uint32_t tid, uint32_t *idx)
{
	int err;

	if (tid == s->cur_tid && s->n_threads) {
		*idx = s->cur_idx;
		return 0;
	}
	if ((err = thread_index(s, tid, idx)) < 0)
		return err;
	s->cur_tid = tid;
	s->cur_idx = *idx;
	return 0;
}

void lp_sampler_free(struct lp_sampler *s)
{
	if (!s)
		return;
	for (unsigned i = 0; i < LP_PROFILE_MAX_LINE_SIZES; i++)
		free(s->lanes[i].watches.slot);
	free(s->thread_refs);
	lp_htab_release(&s->tids);
	free(s);
}

/* The sample of watch w ends at this access (line access number l->clock). */
static int end_sample(struct lp_sampler *s, struct lane *l, unsigned li, struct lp_watch *w,
		      const struct lp_ref *r)
{
	struct lp_sample smp = {
		.time = w->begin, .pc = w->pc, .addr = w->addr,
		.reuse = r ? l->clock - w->begin - 1 : LP_REUSE_DANGLING, .reuse_pc = r ? r->pc : 0,
		.tid = w->tag, .kind = w->kind & 0x0f, .line_idx = (uint8_t)li, .part = w->kind >> 4,
	};

	return lp_profile_add_sample(s->p, &smp);
}

/* One line access at l->clock. */
static int access_line(struct lp_sampler *s, unsigned li, uint64_t line, uint64_t addr,
		       const struct lp_ref *r, uint32_t tid, uint8_t part)
{
	struct lane *l = &s->lanes[li];
	struct lp_watch *w;
	int err;

	if (l->watches.live && (w = lp_watch_find(&l->watches, line, li))) {
		if ((err = end_sample(s, l, li, w, r)) < 0)
			return err;
		lp_watch_remove(&l->watches, w);
	}
	if (--l->countdown == 0) {
		l->countdown = lp_rng_geometric(&l->rng, s->rate);
		if (lp_watch_table_must_grow(&l->watches) && table_grow(l) < 0)
			return lp_seterr(LP_ENOMEM, "out of memory");
		w = lp_watch_insert(&l->watches, line, li);
		w->begin = l->clock;
		w->pc = r->pc;
		w->addr = addr;
		w->tag = tid;
		w->size = r->size > 255 ? 255 : (uint8_t)r->size;
		w->kind = (uint8_t)(r->kind | part << 4);
	}
	l->clock++;
	return 0;
}

int lp_sampler_feed(struct lp_sampler *s, const struct lp_ref *refs, size_t n)
{
	uint32_t tid;
	int err;

	for (size_t i = 0; i < n; i++) {
		const struct lp_ref *r = &refs[i];
		if (!lp_ref_is_access(r)) {
			if (r->kind != LP_EV_ALLOC && r->kind != LP_EV_FREE)
				continue;
			if ((err = thread_of(s, r->tid, &tid)) < 0)
				return err;
			struct lp_alloc_event e = {
				.time = s->refs, .addr = r->addr, .size = r->size,
				.pc = r->pc, .tid = tid, .kind = r->kind,
			};
			if ((err = lp_profile_add_alloc(s->p, &e)) < 0)
				return err;
			continue;
		}
		s->refs++;
		if ((err = thread_of(s, r->tid, &tid)) < 0)
			return err;
		s->thread_refs[tid]++;
		uint64_t last_byte = r->addr + (r->size ? r->size - 1 : 0);
		if (last_byte < r->addr)
			last_byte = UINT64_MAX; /* wraps: clamp */
		for (unsigned li = 0; li < s->n; li++) {
			unsigned sh = s->lanes[li].shift;
			uint64_t first = r->addr >> sh, last = last_byte >> sh;
			for (uint64_t line = first;; line++) {
				uint64_t addr = line == first ? r->addr : line << sh;
				uint8_t part = first == last ? LP_PART_WHOLE : line == first ? LP_PART_FIRST : LP_PART_NEXT;
				if ((err = access_line(s, li, line, addr, r, tid, part)) < 0)
					return err;
				if (line == last)
					break;
			}
		}
	}
	return 0;
}

int lp_sampler_finish(struct lp_sampler *s)
{
	struct lp_profile *p = s->p;
	int err;

	for (unsigned li = 0; li < s->n; li++) {
		struct lane *l = &s->lanes[li];
		struct lp_watch *w;
		uint64_t pos = 0;
		assert(!LP_DEBUG_CHECKS || lp_watch_table_check(&l->watches) == 0);
		while ((w = lp_watch_table_next(&l->watches, &pos)))
			if ((err = end_sample(s, l, li, w, NULL)) < 0)
				return err;
		lp_watch_table_clear(&l->watches);
		p->accesses[li] = l->clock;
	}
	p->references = s->refs;
	for (uint32_t t = 0; t < s->n_threads; t++)
		if ((err = lp_profile_set_thread_refs(p, t, s->thread_refs[t])) < 0)
			return err;
	return lp_profile_finish(p, p->window);
}

uint64_t lp_line_accesses(const struct lp_ref *refs, size_t n, uint32_t line_size)
{
	unsigned sh = (unsigned)__builtin_ctz(line_size);
	uint64_t total = 0;

	for (size_t i = 0; i < n; i++) {
		if (!lp_ref_is_access(&refs[i]))
			continue;
		uint64_t last = refs[i].addr + (refs[i].size ? refs[i].size - 1 : 0);
		if (last < refs[i].addr)
			last = UINT64_MAX;
		total += (last >> sh) - (refs[i].addr >> sh) + 1;
	}
	return total;
}
