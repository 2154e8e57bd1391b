/* Shared time in the runtime: the clock of all threads of a process and
 * the coherence records of the watched lines, so that every sample also
 * has a shared cache's view and what other threads did to its line
 * (common/share-core.h; docs/runtime.md, "Shared time and coherence").
 * Only the slow path comes here. */
#include "rt-thread.h"

#include <locprof/common.h> /* LP_REF_WRITE */

#include <sched.h>
#include <sys/mman.h>

enum {
	/* shared-time records of live watches, all threads (mapped
	 * MAP_NORESERVE: only the pages used cost memory); a watch beyond
	 * it gets no shared time */
	SHARE_RECS = 1 << 20,
	SHARE_TAB_MIN_LOG2 = 8,
	/* Versions of the watched lines, by hash (sh.ver), and each thread's
	 * memory of the lines it touched at a version (t->touched): a thread
	 * touching a line again, with nothing new to record, skips the
	 * lock. */
	SHARE_VER_LOG2 = 16,
	TAG_LEVEL_BITS = 8, /* a watch's tag: level | record << TAG_LEVEL_BITS */
	/* a lock held this long by another thread at exit: give up on it
	 * (it may be the thread a fatal signal interrupted) */
	SHARE_LOCK_EXIT_NS = 50000000,
	/* reads of another thread's clock before taking it half-written */
	RT_CLOCK_TRIES = 64 + 100000,
};

/* The watched lines of all threads (tag: the first record of the line's
 * chain), their records, the free ones chained by next: all under lock.
 * ver: bumped (under the lock) when a record of a line hashing there
 * starts; read without it. */
static struct {
	atomic_int lock;
	struct lp_watch_table tab;
	struct lp_share_rec *pool;
	uint32_t used, free;
	atomic_uint *ver;
} sh;

/* ---- shared time ------------------------------------------------------------
 * The shared clock of line size i is the sum of every thread's own line
 * accesses (references + extra lines), each read from its owner's TLS
 * (the hot path stores its countdown at every access). A clock being
 * rewritten by its owner (clock_seq odd) is read again. Reading the others
 * costs a walk of the thread list at the two ends of a sample, never on
 * the per-access path: a process-wide counter would be a shared cache
 * line written by every access of every thread. */

void lp_rt_clock_write_begin(struct lp_rt_thread *t)
{
	atomic_fetch_add_explicit(&t->clock_seq, 1, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
}

void lp_rt_clock_write_end(struct lp_rt_thread *t)
{
	atomic_fetch_add_explicit(&t->clock_seq, 1, memory_order_release);
}

/* Thread u's line accesses of line size i so far, read from another
 * thread. */
static uint64_t rt_clock_of(const struct lp_rt_thread *u, uint32_t i)
{
	const struct lp_rt_fast *f = u->fast;
	uint64_t v = 0;

	if (u->dead)
		return u->final_refs + u->final_extra[i];
	/* The owner rewrites its clock in a few instructions, but may be
	 * preempted inside them (more threads than cores): after 64 spins,
	 * yield to it rather than take a half-written clock, whose new
	 * countdown beside the old epoch reads as fewer accesses or none (a
	 * shared distance below the private one, under load). Bounded: an
	 * owner stopped there for good (a fatal signal) is read as it is. */
	for (int tries = 0; tries < RT_CLOCK_TRIES; tries++) {
		unsigned s1;
		if (tries >= 64)
			sched_yield();
		s1 = atomic_load_explicit(&u->clock_seq, memory_order_acquire);
		uint64_t e = __atomic_load_n(&f->epoch, __ATOMIC_RELAXED);
		uint64_t c = __atomic_load_n(&f->countdown, __ATOMIC_RELAXED);
		uint64_t x = i ? __atomic_load_n(&f->extra_lines[i], __ATOMIC_RELAXED)
			       : __atomic_load_n(u->extra0, __ATOMIC_RELAXED);
		atomic_thread_fence(memory_order_acquire);
		v = e - c + x;
		if (!(s1 & 1) && s1 == atomic_load_explicit(&u->clock_seq, memory_order_relaxed))
			break;
	}
	/* an inert thread's clock reads as a huge number: it made none */
	return v > LP_SAMPLE_DANGLING / 4 ? 0 : v;
}

/* The shared clock of line size i at the calling thread's line access
 * number own (its own clock). */
uint64_t lp_rt_shared_now(const struct lp_rt_thread *self, uint32_t i, uint64_t own)
{
	uint64_t sum = own;

	for (const struct lp_rt_thread *u = lp_rt_thread_list(); u; u = u->next)
		if (u != self)
			sum += rt_clock_of(u, i);
	return sum;
}

/* A spin lock that yields: with more threads than cores a holder may be
 * preempted, and spinning through its time slice was most of the
 * runtime's cost for 4 threads on 2 cores (perf: the spin loop). */
static void rt_share_lock(void)
{
	while (atomic_exchange_explicit(&sh.lock, 1, memory_order_acquire))
		for (int spins = 0; atomic_load_explicit(&sh.lock, memory_order_relaxed); spins++) {
			if (spins < 64)
				__builtin_ia32_pause();
			else
				sched_yield();
		}
}

/* At exit: the lock may be held by the thread a fatal signal interrupted,
 * which will never release it. 1 when taken. */
int lp_rt_share_lock_exit(void)
{
	uint64_t deadline = lp_rt_now_ns(CLOCK_MONOTONIC) + SHARE_LOCK_EXIT_NS;

	while (atomic_exchange_explicit(&sh.lock, 1, memory_order_acquire))
		if (lp_rt_now_ns(CLOCK_MONOTONIC) > deadline)
			return 0;
	return 1;
}

void lp_rt_share_unlock(void)
{
	atomic_store_explicit(&sh.lock, 0, memory_order_release);
}

/* The process's table and records, once per image (a forked child
 * starts with none: rt_share_reset()). */
void lp_rt_share_reset(void)
{
	if (!sh.pool)
		sh.pool = lp_rt_sys_mmap(NULL, SHARE_RECS * sizeof(struct lp_share_rec),
					      PROT_READ | PROT_WRITE,
					      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (sh.pool == MAP_FAILED)
		sh.pool = NULL;
	if (!sh.ver)
		sh.ver = lp_rt_alloc((1ull << SHARE_VER_LOG2) * sizeof(*sh.ver));
	if (!sh.tab.slot && (sh.tab.slot = lp_rt_alloc(lp_watch_table_bytes(SHARE_TAB_MIN_LOG2))))
		lp_watch_table_init(&sh.tab, sh.tab.slot, SHARE_TAB_MIN_LOG2);
	else if (sh.tab.slot)
		lp_watch_table_clear(&sh.tab);
	sh.used = 0;
	sh.free = LP_SHARE_NONE;
	atomic_store(&sh.lock, 0);
}

/* A watch's record: REC_NONE when it has none (out of records), REC_SOLO
 * when it began while the process had only ever had this one thread:
 * then the shared clock is the thread's own, and the table is left alone
 * (a single-threaded program pays nothing for shared time) as long as no
 * other thread exists. */
enum { REC_NONE = 0xffffff, REC_SOLO = 0xfffffe };

static uint64_t rt_share_hash(uint64_t line, uint32_t idx)
{
	return lp_watch_hash(line, idx) >> (64 - SHARE_VER_LOG2);
}

/* 1 when thread t touched (line, idx) before with nothing new since: no
 * record started on the line (its version is the same) and this access
 * writes no chunk t has not written. Else *slot is where to remember it
 * (rt_share_remember()) and *ver the version to remember. */
static int rt_share_seen(struct lp_rt_thread *t, uint64_t line, uint32_t idx, uint64_t wmask,
			 struct rt_touched **slot, uint32_t *ver)
{
	uint64_t h = rt_share_hash(line, idx);
	struct rt_touched *e = &t->touched[h & (LP_RT_TOUCHED - 1)];

	*slot = e;
	*ver = sh.ver ? atomic_load_explicit(&sh.ver[h], memory_order_acquire) : 0;
	return sh.ver && e->line == line && e->idx == idx + 1 && e->ver == *ver && !(wmask & ~e->wmask);
}

static void rt_share_remember(struct rt_touched *e, uint64_t line, uint32_t idx, uint32_t ver, uint64_t wmask)
{
	if (e->line != line || e->idx != idx + 1 || e->ver != ver)
		e->wmask = 0;
	e->line = line;
	e->idx = idx + 1; /* 0: an empty entry */
	e->ver = ver;
	e->wmask |= wmask;
}

static uint32_t rt_watch_rec(const struct lp_watch *w)
{
	return w->tag >> TAG_LEVEL_BITS;
}

/* Under the lock: a shared-time record for watch w of thread t, begun at
 * shared clock now (none when out of records or memory: the sample then
 * has no shared time). */
static void rt_share_watch(struct lp_rt_thread *t, struct lp_watch *w, uint64_t now)
{
	struct lp_watch *e;
	uint32_t r = LP_SHARE_NONE;

	if (sh.pool && sh.tab.slot) {
		if (sh.free != LP_SHARE_NONE) {
			r = sh.free;
			sh.free = sh.pool[r].next;
		} else if (sh.used < SHARE_RECS) {
			r = sh.used++;
		}
	}
	if (r != LP_SHARE_NONE && !(e = lp_watch_find(&sh.tab, w->line, w->idx))) {
		if (lp_watch_table_must_grow(&sh.tab)) {
			struct lp_watch *old = sh.tab.slot;
			uint32_t log2 = sh.tab.log2;
			struct lp_watch *mem = lp_rt_alloc(lp_watch_table_bytes(log2 + 1));
			if (mem) {
				lp_watch_table_move(&sh.tab, mem, log2 + 1);
				lp_rt_free(old, lp_watch_table_bytes(log2));
			}
		}
		if (lp_watch_table_must_grow(&sh.tab)) {
			e = NULL;
		} else {
			e = lp_watch_insert(&sh.tab, w->line, w->idx);
			e->tag = LP_SHARE_NONE;
		}
		if (!e) {
			sh.pool[r].next = sh.free;
			sh.free = r;
			r = LP_SHARE_NONE;
		}
	}
	if (r != LP_SHARE_NONE) {
		lp_share_start(sh.pool, &e->tag, r, t->number, now);
		if (sh.ver)
			atomic_fetch_add_explicit(&sh.ver[rt_share_hash(w->line, w->idx)], 1,
						  memory_order_release);
	}
	w->tag = (w->tag & ((1u << TAG_LEVEL_BITS) - 1)) | (r & 0xffffff) << TAG_LEVEL_BITS;
}

/* The shared time of a REC_SOLO watch w ended at the owner's clock `end`
 * (LP_SAMPLE_DANGLING: never): the owner's own. */
static void rt_share_solo(const struct lp_watch *w, uint64_t end, struct lp_share_out *o, uint64_t *sbegin)
{
	*sbegin = w->begin;
	o->sreuse = o->sown = end == LP_SAMPLE_DANGLING ? LP_SAMPLE_DANGLING : end - w->begin - 1;
	o->stid = 0;
	o->wtid = 0;
	o->wpc = 0;
	o->tmask = 0;
	o->wtmask = 0;
	o->coh = 0;
}

/* Under the lock: does thread t's access to line (line, i) need the
 * shared clock? When it ends t's own record (watch w), or is the first
 * access after another thread's sample. */
static int rt_share_needs_clock(const struct lp_rt_thread *t, uint64_t line, uint32_t i,
				const struct lp_watch *w)
{
	const struct lp_watch *e = sh.tab.slot ? lp_watch_find(&sh.tab, line, i) : NULL;

	if (!e)
		return 0;
	if (w && rt_watch_rec(w) < REC_SOLO)
		return 1;
	for (uint32_t r = e->tag; r != LP_SHARE_NONE; r = sh.pool[r].next)
		if (sh.pool[r].owner != t->number && sh.pool[r].first == LP_SHARE_NEVER)
			return 1;
	return 0;
}

/* Under the lock: thread t's access to line (line, i) at shared clock now
 * touching chunks mask: the other threads' records of the line learn of
 * it; t's own (the record of watch w, when w is not NULL) ends into *o
 * (returns 1, and its shared time in *sbegin). */
static int rt_share_access(struct lp_rt_thread *t, uint64_t line, uint32_t i, uint64_t now,
			   int write, uint64_t mask, uint64_t pc, const struct lp_watch *w,
			   struct lp_share_out *o, uint64_t *sbegin)
{
	struct lp_watch *e = sh.tab.slot ? lp_watch_find(&sh.tab, line, i) : NULL;
	uint32_t r;

	if (!e)
		return 0;
	lp_share_touch(sh.pool, e->tag, t->number, now, write, mask, pc);
	if (!w || rt_watch_rec(w) >= REC_SOLO)
		return 0;
	r = lp_share_take(sh.pool, &e->tag, t->number);
	if (e->tag == LP_SHARE_NONE)
		lp_watch_remove(&sh.tab, e);
	if (r == LP_SHARE_NONE)
		return 0;
	lp_share_end(&sh.pool[r], now, mask, o);
	*sbegin = sh.pool[r].sbegin;
	sh.pool[r].next = sh.free;
	sh.free = r;
	return 1;
}

/* Under the lock: the record of t's watch w ends dangling (the thread
 * ends): 1 and its shared time in *o, *sbegin. */
static int rt_share_record_dangle(struct lp_rt_thread *t, const struct lp_watch *w,
				  struct lp_share_out *o, uint64_t *sbegin)
{
	struct lp_watch *e;
	uint32_t r;

	if (rt_watch_rec(w) >= REC_SOLO || !sh.tab.slot ||
	    !(e = lp_watch_find(&sh.tab, w->line, w->idx)))
		return 0;
	r = lp_share_take(sh.pool, &e->tag, t->number);
	if (e->tag == LP_SHARE_NONE)
		lp_watch_remove(&sh.tab, e);
	if (r == LP_SHARE_NONE)
		return 0;
	lp_share_end(&sh.pool[r], LP_SHARE_NEVER, 0, o);
	*sbegin = sh.pool[r].sbegin;
	sh.pool[r].next = sh.free;
	sh.free = r;
	return 1;
}


void lp_rt_share_begin(struct lp_rt_thread *t, struct lp_watch *w, uint64_t now)
{
	if (lp_rt_thread_count() <= 1) {
		w->tag |= (uint32_t)REC_SOLO << TAG_LEVEL_BITS;
		return;
	}
	rt_share_lock();
	rt_share_watch(t, w, now);
	lp_rt_share_unlock();
}

/* The shared clock (a walk of the threads, reading lines that they write
 * at every access) only when a record needs it: the owner's reuse,
 * another thread's first access; measured: reading it at every touch
 * doubled the CPU time of 4 threads reading one table. */
int lp_rt_share_access(struct lp_rt_thread *t, const struct lp_watch *w, uint64_t line, uint32_t i,
		       uint32_t shift, uint64_t addr, uint64_t last, uint32_t kind, uint64_t pc,
		       uint64_t own, uint64_t off, uint64_t *snow, struct lp_share_out *o,
		       uint64_t *sbegin)
{
	uint64_t lo = line << shift, hi = lo + ((1ull << shift) - 1);
	int have = 0;

	if (w && rt_watch_rec(w) == REC_SOLO) {
		rt_share_solo(w, own, o, sbegin);
		have = 1;
		if (lp_rt_thread_count() <= 1)
			return have; /* no other thread's watch to touch */
	}
	/* another thread's watch of the line: the shadow says so */
	if (w || !lp_rt_range_unwatched(lo > addr ? lo : addr, hi < last ? hi : last)) {
		uint64_t wmask = kind == LP_REF_WRITE ? lp_share_mask(line, shift, addr, last) : 0;
		struct rt_touched *seen = NULL;
		uint32_t ver = 0;
		/* another thread's line, touched before: nothing to record,
		 * no lock (4 threads reading one table took 2.1 times the CPU
		 * time of main with it) */
		if (!w && rt_share_seen(t, line, i, wmask, &seen, &ver))
			return 0;
		for (;;) {
			rt_share_lock();
			if (*snow || !rt_share_needs_clock(t, line, i, w))
				break;
			lp_rt_share_unlock();
			*snow = lp_rt_shared_now(t, i, own - off) + 1;
		}
		have |= rt_share_access(t, line, i, *snow ? *snow - 1 + off : 0, kind == LP_REF_WRITE,
					lp_share_mask(line, shift, addr, last), pc, w, o, sbegin);
		lp_rt_share_unlock();
		if (!w)
			rt_share_remember(seen, line, i, ver, wmask);
	}
	return have;
}

int lp_rt_share_dangle(struct lp_rt_thread *t, const struct lp_watch *w, int locked, struct lp_share_out *o,
		       uint64_t *sbegin)
{
	if (rt_watch_rec(w) == REC_SOLO) {
		rt_share_solo(w, LP_SAMPLE_DANGLING, o, sbegin);
		return 1;
	}
	return locked && rt_share_record_dangle(t, w, o, sbegin);
}
