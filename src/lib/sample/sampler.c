/* The StatCache sampler over a reference stream: Berg & Hagersten section
 * 3, "a common memory reference counter ... a random generator samples
 * memory references and adds their addresses and the value of the counter
 * to a list of watchpoints; when an address matches a watchpoint the reuse
 * distance is recorded and the watchpoint removed".
 *
 * One line can have at most one pending sample: a new sample on a watched
 * line can only be taken at an access to that line, and that access first
 * resolves the pending one. So the watch table maps line -> one slot. */
#include <locprof/sample.h>

#include "common/error.h"
#include "common/hash.h"
#include "common/rng.h"

#include <stdlib.h>
#include <string.h>

/* Lines are addr >> shift; only shift 0 (1-byte lines) could reach this. */
#define EMPTY UINT64_MAX

struct lane {
	unsigned shift;
	uint64_t clock;     /* line accesses so far */
	uint64_t countdown; /* accesses until the next selected one, >= 1 */
	struct lp_rng rng;
	/* open-addressing table line -> slot; linear probing, backward-shift
	 * deletion (no tombstones, so lookups of unwatched lines stay short) */
	uint64_t *keys;
	uint32_t *vals;
	size_t mask, used;
	/* pending samples; free slots chained through .time */
	struct lp_sample *slots;
	size_t nslots, capslots;
	uint64_t free_head; /* slot index + 1, 0 = none */
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
	uint32_t n_threads, cap_threads;
	uint64_t *tid_keys; /* open addressing: trace id + 1, 0 = empty */
	uint32_t *tid_vals; /* dense index */
	size_t tid_mask;
	uint32_t cur_tid, cur_idx; /* the last thread looked up */
};

static int table_init(struct lane *l, size_t cap)
{
	l->keys = malloc(cap * sizeof(*l->keys));
	l->vals = malloc(cap * sizeof(*l->vals));
	if (!l->keys || !l->vals)
		return LP_ENOMEM;
	for (size_t i = 0; i < cap; i++)
		l->keys[i] = EMPTY;
	l->mask = cap - 1;
	l->used = 0;
	return 0;
}

static int table_grow(struct lane *l)
{
	uint64_t *ok = l->keys;
	uint32_t *ov = l->vals;
	size_t ocap = l->mask + 1;

	if (table_init(l, 2 * ocap) < 0) {
		free(l->keys);
		free(l->vals);
		l->keys = ok;
		l->vals = ov;
		l->mask = ocap - 1;
		return LP_ENOMEM;
	}
	for (size_t i = 0; i < ocap; i++) {
		if (ok[i] == EMPTY)
			continue;
		size_t j = lp_hash64(ok[i]) & l->mask;
		while (l->keys[j] != EMPTY)
			j = (j + 1) & l->mask;
		l->keys[j] = ok[i];
		l->vals[j] = ov[i];
		l->used++;
	}
	free(ok);
	free(ov);
	return 0;
}

static void table_delete(struct lane *l, size_t i)
{
	size_t j = i;

	for (;;) {
		j = (j + 1) & l->mask;
		if (l->keys[j] == EMPTY)
			break;
		size_t home = lp_hash64(l->keys[j]) & l->mask;
		/* move j back to i unless its home lies cyclically in (i, j] */
		if ((j > i && (home <= i || home > j)) || (j < i && (home <= i && home > j))) {
			l->keys[i] = l->keys[j];
			l->vals[i] = l->vals[j];
			i = j;
		}
	}
	l->keys[i] = EMPTY;
	l->used--;
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
		if (table_init(l, 1024) < 0) {
			lp_sampler_free(s);
			return lp_seterr(LP_ENOMEM, "out of memory");
		}
	}
	*out = s;
	return 0;
}

static int tid_table_grow(struct lp_sampler *s)
{
	size_t ocap = s->tid_keys ? s->tid_mask + 1 : 0, cap = ocap ? 2 * ocap : 64;
	uint64_t *keys = calloc(cap, sizeof(*keys));
	uint32_t *vals = malloc(cap * sizeof(*vals));

	if (!keys || !vals) {
		free(keys);
		free(vals);
		return LP_ENOMEM;
	}
	for (size_t i = 0; i < ocap; i++) {
		if (!s->tid_keys[i])
			continue;
		size_t j = lp_hash64(s->tid_keys[i]) & (cap - 1);
		while (keys[j])
			j = (j + 1) & (cap - 1);
		keys[j] = s->tid_keys[i];
		vals[j] = s->tid_vals[i];
	}
	free(s->tid_keys);
	free(s->tid_vals);
	s->tid_keys = keys;
	s->tid_vals = vals;
	s->tid_mask = cap - 1;
	return 0;
}

/* The dense index of trace thread id tid, registering it when new. */
static int thread_index(struct lp_sampler *s, uint32_t tid, uint32_t *idx)
{
	uint64_t key = (uint64_t)tid + 1;
	size_t j;

	if ((!s->tid_keys || 2 * ((size_t)s->n_threads + 1) > s->tid_mask + 1) &&
	    tid_table_grow(s) < 0)
		return lp_seterr(LP_ENOMEM, "out of memory");
	for (j = lp_hash64(key) & s->tid_mask; s->tid_keys[j]; j = (j + 1) & s->tid_mask)
		if (s->tid_keys[j] == key) {
			*idx = s->tid_vals[j];
			return 0;
		}
	if (s->n_threads == s->cap_threads) {
		uint32_t cap = s->cap_threads ? 2 * s->cap_threads : 16;
		uint64_t *v = realloc(s->thread_refs, (size_t)cap * sizeof(*v));
		if (!v)
			return lp_seterr(LP_ENOMEM, "out of memory");
		s->thread_refs = v;
		s->cap_threads = cap;
	}
	s->thread_refs[s->n_threads] = 0;
	s->tid_keys[j] = key;
	s->tid_vals[j] = s->n_threads;
	*idx = s->n_threads++;
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
	for (unsigned i = 0; i < LP_PROFILE_MAX_LINE_SIZES; i++) {
		free(s->lanes[i].keys);
		free(s->lanes[i].vals);
		free(s->lanes[i].slots);
	}
	free(s->thread_refs);
	free(s->tid_keys);
	free(s->tid_vals);
	free(s);
}

static int watch(struct lane *l, const struct lp_sample *smp, uint64_t line)
{
	uint64_t slot;
	size_t j;

	if (2 * (l->used + 1) > l->mask + 1 && table_grow(l) < 0)
		return LP_ENOMEM;
	if (l->free_head) {
		slot = l->free_head - 1;
		l->free_head = l->slots[slot].time;
	} else {
		if (l->nslots == l->capslots) {
			size_t cap = l->capslots ? 2 * l->capslots : 1024;
			struct lp_sample *v;
			if (cap > UINT32_MAX || !(v = realloc(l->slots, cap * sizeof(*v))))
				return LP_ENOMEM;
			l->slots = v;
			l->capslots = cap;
		}
		slot = l->nslots++;
	}
	l->slots[slot] = *smp;
	j = lp_hash64(line) & l->mask;
	while (l->keys[j] != EMPTY)
		j = (j + 1) & l->mask;
	l->keys[j] = line;
	l->vals[j] = (uint32_t)slot;
	l->used++;
	return 0;
}

/* One line access at l->clock. */
static int access_line(struct lp_sampler *s, unsigned li, uint64_t line, uint64_t addr,
		       const struct lp_ref *r, uint32_t tid)
{
	struct lane *l = &s->lanes[li];
	int err;

	if (l->used) {
		size_t j = lp_hash64(line) & l->mask;
		while (l->keys[j] != EMPTY) {
			if (l->keys[j] == line) {
				uint32_t slot = l->vals[j];
				struct lp_sample *smp = &l->slots[slot];
				smp->reuse = l->clock - smp->time - 1;
				smp->reuse_pc = r->pc;
				if ((err = lp_profile_add_sample(s->p, smp)) < 0)
					return err;
				smp->time = l->free_head;
				l->free_head = (uint64_t)slot + 1;
				table_delete(l, j);
				break;
			}
			j = (j + 1) & l->mask;
		}
	}
	if (--l->countdown == 0) {
		struct lp_sample smp = {
			.time = l->clock, .pc = r->pc, .addr = addr, .reuse = LP_REUSE_DANGLING, .reuse_pc = 0,
			.tid = tid, .kind = r->kind, .line_idx = (uint8_t)li,
		};
		l->countdown = lp_rng_geometric(&l->rng, s->rate);
		if ((err = watch(l, &smp, line)) < 0)
			return lp_seterr(err, "out of memory");
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
				if ((err = access_line(s, li, line, addr, r, tid)) < 0)
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
		for (size_t j = 0; j <= l->mask; j++) {
			if (l->keys[j] == EMPTY)
				continue;
			struct lp_sample smp = l->slots[l->vals[j]];
			smp.reuse = LP_REUSE_DANGLING;
			if ((err = lp_profile_add_sample(p, &smp)) < 0)
				return err;
			l->keys[j] = EMPTY;
		}
		l->used = 0;
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
