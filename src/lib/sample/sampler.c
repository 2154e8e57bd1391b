/* The StatCache sampler over a reference stream: Berg & Hagersten section
 * 3, "a common memory reference counter ... a random generator samples
 * memory references and adds their addresses and the value of the counter
 * to a list of watchpoints; when an address matches a watchpoint the reuse
 * distance is recorded and the watchpoint removed".
 *
 * Two clocks per line size, as the instrumentation runtime keeps them: the
 * sampling thread's own line accesses (time and reuse: the next access of
 * the same thread, a private cache's view) and the shared clock of all
 * threads (stime, and the first access by any thread: a shared cache's
 * view), with what other threads' writes did in between
 * (common/share-core.h). Each thread has at most one pending sample per
 * line (its next access to the line ends it first), but several threads
 * may watch one line: the watch table (common/watch-core.h, the core the
 * runtime and the valgrind tool use too) maps a line to the chain of its
 * samples' records (tag: the first record). */
#include <locprof/sample.h>

#include "common/array.h"
#include "common/debug.h"
#include "common/error.h"
#include "common/htab.h"
#include "common/rng.h"
#include "common/share-core.h"
#include "common/watch-core.h"

#include <stdlib.h>
#include <string.h>

enum { TABLE_MIN_LOG2 = 10 }; /* 1024 watches */

struct lane {
	unsigned shift;
	uint64_t clock;     /* line accesses so far, all threads: the shared clock */
	uint64_t countdown; /* accesses until the next selected one, >= 1 */
	struct lp_rng rng;
	/* lines with pending samples of this line size (idx: the lane's
	 * index; tag: the first record of the line's chain) */
	struct lp_watch_table watches;
};

/* A pending sample's own fields (its shared-time record has the same
 * index in the sampler's sh[]). */
struct pending {
	uint64_t begin; /* the sampling thread's clock */
	uint64_t pc, addr;
	uint8_t size, kind; /* kind | part << 4 */
};

/* The sampler's view of a thread: its references, and its own line
 * accesses per line size (its private clock). */
struct thread_clock {
	uint64_t refs;
	uint64_t clock[LP_PROFILE_MAX_LINE_SIZES];
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
	struct thread_clock *threads;
	size_t n_threads, cap_threads;
	/* pending samples of every lane (free ones chained by sh[].next) */
	struct lp_share_rec *sh;
	struct pending *pend;
	size_t n_pend, cap_pend, cap_sh;
	uint32_t free_pend;
	struct lp_htab tids; /* trace thread id -> dense index */
	uint32_t cur_tid, cur_idx; /* the last thread looked up */
	struct lp_stack_builder *stacks; /* the allocations' call stacks (LP_EV_FRAME) */
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
	s->free_pend = LP_SHARE_NONE;
	if (lp_htab_init(&s->tids, 16) < 0 || lp_stack_builder_new(&s->stacks) < 0) {
		lp_htab_release(&s->tids);
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
	    (err = LP_ARRAY_RESERVE(s->threads, s->cap_threads, s->n_threads + 1, 16,
				    "threads")) < 0)
		return err;
	val = lp_htab_get(&s->tids, tid, &isnew);
	if (isnew) {
		memset(&s->threads[s->n_threads], 0, sizeof(*s->threads));
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
	free(s->threads);
	free(s->pend);
	free(s->sh);
	lp_htab_release(&s->tids);
	lp_stack_builder_free(s->stacks);
	free(s);
}

/* A free pending record, or LP_SHARE_NONE when out of memory. */
static uint32_t pend_alloc(struct lp_sampler *s)
{
	uint32_t r = s->free_pend;

	if (r != LP_SHARE_NONE) {
		s->free_pend = s->sh[r].next;
		return r;
	}
	if (s->n_pend >= LP_SHARE_NONE - 1 ||
	    LP_ARRAY_RESERVE(s->pend, s->cap_pend, s->n_pend + 1, 1024, "samples") < 0 ||
	    LP_ARRAY_RESERVE(s->sh, s->cap_sh, s->n_pend + 1, 1024, "samples") < 0)
		return LP_SHARE_NONE;
	return (uint32_t)s->n_pend++;
}

/* The sample of pending record r (unlinked) ends: at an access of its
 * thread at its clock `own` and the shared clock `now` touching chunks
 * mask of the line, by reference r (NULL: never, the sample dangles). */
static int end_sample(struct lp_sampler *s, unsigned li, uint32_t r, uint64_t own, uint64_t now,
		      uint64_t mask, const struct lp_ref *ref)
{
	struct pending *x = &s->pend[r];
	struct lp_share_out o;
	int err;

	lp_share_end(&s->sh[r], ref ? now : LP_SHARE_NEVER, mask, &o);
	/* the reuse's address in the line: its line's start where it began
	 * in the line before */
	uint64_t line_start = x->addr >> s->lanes[li].shift << s->lanes[li].shift;
	struct lp_sample smp = {
		.time = x->begin, .pc = x->pc, .addr = x->addr,
		.reuse = ref ? own - x->begin - 1 : LP_REUSE_DANGLING, .reuse_pc = ref ? ref->pc : 0,
		.reuse_addr = !ref ? 0 : ref->addr > line_start ? ref->addr : line_start,
		.tid = s->sh[r].owner, .kind = x->kind & 0x0f, .line_idx = (uint8_t)li,
		.part = x->kind >> 4, .coh = o.coh, .stid = o.stid, .wtid = o.wtid, .wpc = o.wpc,
		.stime = s->sh[r].sbegin, .sreuse = o.sreuse, .sown = o.sown,
		.touched = o.tmask, .writers = o.wtmask,
	};
	err = lp_profile_add_sample(s->p, &smp);
	s->sh[r].next = s->free_pend;
	s->free_pend = r;
	return err;
}

/* One line access of thread tid at the lane's shared clock: it touches
 * the line's pending samples of other threads, ends tid's own, and may
 * start a new one. */
static int access_line(struct lp_sampler *s, unsigned li, uint64_t line, uint64_t addr,
		       const struct lp_ref *r, uint32_t tid, uint8_t part, uint64_t last_byte)
{
	struct lane *l = &s->lanes[li];
	uint64_t *own = &s->threads[tid].clock[li];
	struct lp_watch *w = l->watches.live ? lp_watch_find(&l->watches, line, li) : NULL;
	uint32_t head = w ? w->tag : LP_SHARE_NONE, x;
	int err;

	if (w) {
		uint64_t mask = lp_share_mask(line, l->shift, r->addr, last_byte);
		lp_share_touch(s->sh, head, tid, l->clock, r->kind == LP_REF_WRITE, mask, r->pc);
		x = lp_share_take(s->sh, &head, tid);
		if (x != LP_SHARE_NONE && (err = end_sample(s, li, x, *own, l->clock, mask, r)) < 0)
			return err;
		if (head == LP_SHARE_NONE) {
			lp_watch_remove(&l->watches, w);
			w = NULL;
		} else {
			w->tag = head;
		}
	}
	if (--l->countdown == 0) {
		l->countdown = lp_rng_geometric(&l->rng, s->rate);
		if ((x = pend_alloc(s)) == LP_SHARE_NONE)
			return lp_seterr(LP_ENOMEM, "out of memory");
		if (!w) {
			if (lp_watch_table_must_grow(&l->watches) && table_grow(l) < 0)
				return lp_seterr(LP_ENOMEM, "out of memory");
			w = lp_watch_insert(&l->watches, line, li);
			w->tag = LP_SHARE_NONE;
		}
		struct pending *p = &s->pend[x];
		lp_share_start(s->sh, &w->tag, x, tid, l->clock);
		p->begin = *own;
		p->pc = r->pc;
		p->addr = addr;
		p->size = r->size > 255 ? 255 : (uint8_t)r->size;
		p->kind = (uint8_t)(r->kind | part << 4);
	}
	l->clock++;
	++*own;
	return 0;
}

int lp_sampler_feed(struct lp_sampler *s, const struct lp_ref *refs, size_t n)
{
	uint32_t tid;
	int err;

	for (size_t i = 0; i < n; i++) {
		const struct lp_ref *r = &refs[i];
		if (!lp_ref_is_access(r)) {
			if (r->kind == LP_EV_FRAME) {
				lp_stack_builder_frames(s->stacks, &r->pc, 1);
				continue;
			}
			if ((err = lp_stack_builder_end(s->stacks, s->p)) < 0)
				return err;
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
			if (e.kind == LP_EV_ALLOC)
				lp_stack_builder_begin(s->stacks, s->p->n_allocs - 1, e.pc);
			continue;
		}
		s->refs++;
		if ((err = thread_of(s, r->tid, &tid)) < 0)
			return err;
		s->threads[tid].refs++;
		uint64_t last_byte = r->addr + (r->size ? r->size - 1 : 0);
		if (last_byte < r->addr)
			last_byte = UINT64_MAX; /* wraps: clamp */
		for (unsigned li = 0; li < s->n; li++) {
			unsigned sh = s->lanes[li].shift;
			uint64_t first = r->addr >> sh, last = last_byte >> sh;
			for (uint64_t line = first;; line++) {
				uint64_t addr = line == first ? r->addr : line << sh;
				uint8_t part = first == last ? LP_PART_WHOLE : line == first ? LP_PART_FIRST : LP_PART_NEXT;
				if ((err = access_line(s, li, line, addr, r, tid, part, last_byte)) < 0)
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

	if ((err = lp_stack_builder_end(s->stacks, p)) < 0)
		return err;
	for (unsigned li = 0; li < s->n; li++) {
		struct lane *l = &s->lanes[li];
		struct lp_watch *w;
		uint64_t pos = 0;
		assert(!LP_DEBUG_CHECKS || lp_watch_table_check(&l->watches) == 0);
		while ((w = lp_watch_table_next(&l->watches, &pos))) {
			uint32_t head = w->tag, x;
			while ((x = head) != LP_SHARE_NONE) {
				head = s->sh[x].next;
				if ((err = end_sample(s, li, x, 0, 0, 0, NULL)) < 0)
					return err;
			}
		}
		lp_watch_table_clear(&l->watches);
		p->accesses[li] = l->clock;
	}
	p->references = s->refs;
	p->shared = 1;
	p->masks = 1;
	for (uint32_t t = 0; t < s->n_threads; t++)
		if ((err = lp_profile_set_thread_refs(p, t, s->threads[t].refs)) < 0)
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
