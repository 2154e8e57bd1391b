/* Heap blocks of a profile, from its allocation events: which block held
 * an address at a time (locprof/profile.h, lp_objects_*).
 *
 * A block lives from its allocation to the first free of its start
 * address after it. Blocks are sorted by start with a running maximum of
 * their ends, so a lookup is a binary search and a backward walk over the
 * blocks that can still cover the address. Addresses are reused after a
 * free; among the blocks covering an address the one alive at the asked
 * time wins, else the latest allocated before it, else (times unknown)
 * the latest in event order.
 *
 * Nothing here assumes the events in time order across addresses: a
 * profile with touched blocks only (LP_ALLOCS_TOUCHED) writes a block's
 * allocation when a sample first touches it, long after it happened, with
 * its original time; per address the events still come in order (a
 * block's free follows its allocation, the next block at that address is
 * allocated after it), which is all the pairing below needs. With
 * per-thread clocks (LP_ALLOCS_THREAD_CLOCK) a block compares by time only
 * with accesses of the thread that allocated it. */
#include <locprof/profile.h>

#include "common/error.h"

#include <stdlib.h>
#include <string.h>

struct lp_block {
	uint64_t start, end; /* [start, end) */
	uint64_t pc;         /* allocation call site */
	uint64_t t0, t1;     /* allocation and free times (LP_TIME_UNKNOWN) */
	size_t ord0, ord1;   /* event indices; ord1 = SIZE_MAX when never freed */
	uint32_t tid, tid1;  /* allocating and freeing threads */
	uint32_t stack;      /* the allocation's call stack (lp_alloc_event.stack) */
};

struct lp_objects {
	struct lp_block *b;
	uint64_t *maxend; /* maxend[i] = max end of b[0..i] */
	size_t n;
	struct lp_alloc_stack *stacks; /* a copy of the profile's */
	size_t nstacks;
	struct lp_tls_block *tls;      /* a copy of the profile's */
	size_t ntls;
	int thread_clock;    /* LP_ALLOCS_THREAD_CLOCK */
	uint64_t run_allocs; /* the profile's total, or n */
};

struct ev_ref {
	uint64_t addr;
	size_t i;
};

static int cmp_ev(const void *a, const void *b)
{
	const struct ev_ref *x = a, *y = b;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

static int cmp_block(const void *a, const void *b)
{
	const struct lp_block *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->ord0 < y->ord0 ? -1 : x->ord0 > y->ord0;
}

int lp_objects_new(struct lp_objects **out, const struct lp_profile *p)
{
	struct lp_objects *o = calloc(1, sizeof(*o));
	struct ev_ref *ev = malloc((p->n_allocs ? p->n_allocs : 1) * sizeof(*ev));
	size_t nev = p->n_allocs;

	if (!o || !ev)
		goto out_nomem;
	o->b = malloc((nev ? nev : 1) * sizeof(*o->b));
	o->maxend = malloc((nev ? nev : 1) * sizeof(*o->maxend));
	if (!o->b || !o->maxend)
		goto out_nomem;
	for (size_t i = 0; i < nev; i++)
		ev[i] = (struct ev_ref){ p->allocs[i].addr, i };
	qsort(ev, nev, sizeof(*ev), cmp_ev);
	/* per address in event order: an alloc opens a block, a free closes
	 * the one open there (a free of nothing, or a second alloc at an
	 * open address after a lost free, is taken as it comes) */
	for (size_t i = 0; i < nev;) {
		size_t j = i, open = SIZE_MAX;
		while (j < nev && ev[j].addr == ev[i].addr) {
			const struct lp_alloc_event *e = &p->allocs[ev[j].i];
			if (e->kind == LP_EV_ALLOC && e->size > 0) {
				uint64_t end = e->addr + e->size < e->addr ? UINT64_MAX : e->addr + e->size;
				o->b[o->n] = (struct lp_block){ e->addr, end, e->pc, e->time, LP_TIME_UNKNOWN,
								ev[j].i, SIZE_MAX, e->tid, e->tid,
								e->stack <= p->n_stacks ? e->stack : 0 };
				open = o->n++;
			} else if (e->kind == LP_EV_FREE && open != SIZE_MAX) {
				o->b[open].t1 = e->time;
				o->b[open].ord1 = ev[j].i;
				o->b[open].tid1 = e->tid;
				open = SIZE_MAX;
			}
			j++;
		}
		i = j;
	}
	qsort(o->b, o->n, sizeof(*o->b), cmp_block);
	for (size_t i = 0; i < o->n; i++)
		o->maxend[i] = i && o->maxend[i - 1] > o->b[i].end ? o->maxend[i - 1] : o->b[i].end;
	free(ev);
	if (p->n_stacks) {
		if (!(o->stacks = malloc(p->n_stacks * sizeof(*o->stacks))))
			goto out_nomem_b;
		memcpy(o->stacks, p->stacks, p->n_stacks * sizeof(*o->stacks));
		o->nstacks = p->n_stacks;
	}
	if (p->n_tls) {
		if (!(o->tls = malloc(p->n_tls * sizeof(*o->tls))))
			goto out_nomem_b;
		memcpy(o->tls, p->tls, p->n_tls * sizeof(*o->tls));
		o->ntls = p->n_tls;
	}
	o->thread_clock = !!(p->alloc_flags & LP_ALLOCS_THREAD_CLOCK);
	o->run_allocs = p->alloc_flags & LP_ALLOCS_TOTALS ? p->alloc_total : o->n;
	*out = o;
	return 0;
out_nomem:
	free(ev);
out_nomem_b:
	lp_objects_free(o);
	return lp_seterr(LP_ENOMEM, "out of memory");
}

void lp_objects_free(struct lp_objects *o)
{
	if (!o)
		return;
	free(o->b);
	free(o->maxend);
	free(o->stacks);
	free(o->tls);
	free(o);
}

size_t lp_objects_count(const struct lp_objects *o)
{
	return o->n;
}

uint64_t lp_objects_run_allocs(const struct lp_objects *o)
{
	return o->run_allocs;
}

/* How well block b fits time t: 3 alive at t, 2 allocated before t and
 * freed before it too, 1 times unknown, 0 allocated after t. */
static int fit(const struct lp_objects *o, const struct lp_block *b, uint64_t t, uint32_t tid)
{
	if (t == LP_TIME_UNKNOWN || b->t0 == LP_TIME_UNKNOWN || (o->thread_clock && b->tid != tid))
		return 1;
	if (b->t0 > t)
		return 0;
	/* freed by another thread: its free time is in another clock */
	return b->ord1 == SIZE_MAX || b->t1 == LP_TIME_UNKNOWN || (o->thread_clock && b->tid1 != b->tid) ||
			       b->t1 > t
		       ? 3
		       : 2;
}

int lp_objects_find(const struct lp_objects *o, uint64_t addr, uint64_t time, uint64_t *start,
		    uint64_t *size, uint64_t *pc)
{
	/* no thread: per-thread times cannot be compared */
	return lp_objects_find_tid(o, addr, o->thread_clock ? LP_TIME_UNKNOWN : time, 0, start, size,
				   pc);
}

int lp_objects_find_tid(const struct lp_objects *o, uint64_t addr, uint64_t time, uint32_t tid,
			uint64_t *start, uint64_t *size, uint64_t *pc)
{
	const struct lp_alloc_stack *stack;

	return lp_objects_find_stack(o, addr, time, tid, start, size, pc, &stack);
}

int lp_objects_find_stack(const struct lp_objects *o, uint64_t addr, uint64_t time, uint32_t tid,
			  uint64_t *start, uint64_t *size, uint64_t *pc, const struct lp_alloc_stack **stack)
{
	size_t lo = 0, hi = o->n, best = SIZE_MAX;
	int best_fit = -1;

	/* last block with start <= addr */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (o->b[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i-- > 0 && o->maxend[i] > addr;) {
		const struct lp_block *b = &o->b[i];
		if (b->end <= addr)
			continue;
		int f = fit(o, b, time, tid);
		/* ties: the later allocation (a later time, else a later event) */
		if (f > best_fit || (f == best_fit && (b->t0 != LP_TIME_UNKNOWN && o->b[best].t0 != LP_TIME_UNKNOWN &&
						       (!o->thread_clock || b->tid == o->b[best].tid)
							? b->t0 > o->b[best].t0
							: b->ord0 > o->b[best].ord0))) {
			best = i;
			best_fit = f;
		}
	}
	if (best == SIZE_MAX)
		return 0;
	*start = o->b[best].start;
	*size = o->b[best].end - o->b[best].start;
	*pc = o->b[best].pc;
	*stack = o->b[best].stack ? &o->stacks[o->b[best].stack - 1] : NULL;
	return 1;
}

/* A thread has a segment per module with TLS: a handful, searched in turn. */
int lp_objects_find_tls(const struct lp_objects *o, uint64_t addr, uint32_t tid, uint64_t *start,
			uint64_t *image)
{
	for (size_t i = 0; i < o->ntls; i++) {
		const struct lp_tls_block *b = &o->tls[i];
		if (b->tid == tid && addr >= b->start && addr - b->start < b->size) {
			*start = b->start;
			*image = b->image;
			return 1;
		}
	}
	return 0;
}
