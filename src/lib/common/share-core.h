/* Shared time and coherence for the StatCache watch: what the other
 * threads of a process did to a watched line between the sampled access
 * and the sampling thread's own reuse. One core for the trace sampler
 * (src/lib/sample/sampler.c) and the instrumentation runtime (src/rt).
 *
 * A sample of thread T on line L (Berg, Zeffer & Hagersten's
 * multiprocessor StatCache: each sample also learns whether another
 * processor touched or wrote the line before the reuse) records, besides
 * T's own reuse:
 *  - the first access to L by any thread: the reuse of a cache shared by
 *    all threads (its shared reuse distance counts the line accesses of
 *    every thread in between, on the shared clock);
 *  - the first write to L by another thread before T's reuse: it
 *    invalidates T's private copy, so T's reuse is a coherence miss;
 *  - the bytes of L written by other threads since then: at T's reuse,
 *    touching one of them is true sharing, touching only others is false
 *    sharing (Dubois et al.'s classification of coherence misses);
 *  - the set of the other threads that touched L before T's reuse, and of
 *    those that wrote it (bit tid % 64 of a mask): a cache shared by some
 *    of the threads knows from them whether one of its threads came back
 *    to L, and whether a thread outside it invalidated L.
 *
 * Freestanding like watch-core.h: header-only, static inline, no libc, no
 * allocation. The caller supplies the record pool (an array of nrec
 * records) and keeps, per watched (line, idx), the index of the first
 * record of the line's chain (several threads may watch one line: each
 * has its own record). Lock the pool where threads share it.
 */
#ifndef LP_COMMON_SHARE_CORE_H
#define LP_COMMON_SHARE_CORE_H

#include <stdint.h>

#define LP_SHARE_NONE UINT32_MAX  /* no record: the end of a chain */
#define LP_SHARE_NEVER UINT64_MAX /* no such access (yet) */

struct lp_share_rec {
	uint32_t next;   /* next record of the same line, or LP_SHARE_NONE */
	uint32_t owner;  /* the sampling thread */
	uint64_t sbegin; /* shared clock of the sampled access */
	uint64_t first;  /* shared clock of the first access after it by any
			  * thread, or LP_SHARE_NEVER */
	uint64_t wpc;    /* pc of the first write by another thread */
	uint64_t wmask;  /* chunks of the line written by other threads since
			  * (bit k: bytes [k, k + 1) * line / 64) */
	uint64_t tmask;  /* threads but the owner that touched the line
			  * since (bit tid % 64) */
	uint64_t wtmask; /* of them, those that wrote it */
	uint32_t ftid;   /* the thread of `first` */
	uint32_t wtid;   /* the first writer but the owner */
	uint8_t written; /* another thread wrote the line before the reuse */
};

/* The chunks of a line of 2^shift bytes that bytes [addr, last] touch
 * (the part of them in line `line`), as a mask of 64 bits. */
static inline uint64_t lp_share_mask(uint64_t line, uint32_t shift, uint64_t addr, uint64_t last)
{
	uint64_t lo = line << shift, hi = lo + ((1ull << shift) - 1);
	uint32_t cshift = shift > 6 ? shift - 6 : 0; /* bytes per chunk: 2^cshift */
	uint64_t a = addr > lo ? addr : lo, b = last < hi ? last : hi;
	uint64_t c0 = (a - lo) >> cshift, c1 = (b - lo) >> cshift;

	if (a > b)
		return 0;
	return (c1 >= 63 ? ~0ull : (1ull << (c1 + 1)) - 1) & ~((1ull << c0) - 1);
}

/* A thread's bit in lp_share_rec.tmask and wtmask (threads beyond 64
 * share bits). */
static inline uint64_t lp_share_thread_bit(uint32_t tid)
{
	return 1ull << (tid & 63);
}

/* A new record of owner's sample at shared clock now, at the head of the
 * chain *head. */
static inline void lp_share_start(struct lp_share_rec *pool, uint32_t *head, uint32_t r,
				  uint32_t owner, uint64_t now)
{
	struct lp_share_rec *x = &pool[r];

	x->next = *head;
	x->owner = owner;
	x->sbegin = now;
	x->first = LP_SHARE_NEVER;
	x->wpc = 0;
	x->wmask = 0;
	x->tmask = 0;
	x->wtmask = 0;
	x->ftid = owner;
	x->wtid = owner;
	x->written = 0;
	*head = r;
}

/* An access of thread tid at shared clock now to the line of chain head:
 * it is the first access for every record that has none yet, and a write
 * by anyone but the owner marks the owner's copy invalid. The owner's own
 * record is left to lp_share_end(). */
static inline void lp_share_touch(struct lp_share_rec *pool, uint32_t head, uint32_t tid,
				  uint64_t now, int write, uint64_t mask, uint64_t pc)
{
	for (uint32_t r = head; r != LP_SHARE_NONE; r = pool[r].next) {
		struct lp_share_rec *x = &pool[r];
		if (x->owner == tid)
			continue;
		if (x->first == LP_SHARE_NEVER) {
			x->first = now;
			x->ftid = tid;
		}
		x->tmask |= lp_share_thread_bit(tid);
		if (write) {
			x->wtmask |= lp_share_thread_bit(tid);
			if (!x->written) {
				x->written = 1;
				x->wtid = tid;
				x->wpc = pc;
			}
			x->wmask |= mask;
		}
	}
}

/* The record of owner in chain *head, unlinked, or LP_SHARE_NONE. */
static inline uint32_t lp_share_take(struct lp_share_rec *pool, uint32_t *head, uint32_t owner)
{
	for (uint32_t *link = head; *link != LP_SHARE_NONE; link = &pool[*link].next) {
		uint32_t r = *link;
		if (pool[r].owner == owner) {
			*link = pool[r].next;
			pool[r].next = LP_SHARE_NONE;
			return r;
		}
	}
	return LP_SHARE_NONE;
}

/* The shared-time fields of a sample whose record is x, ended by its
 * owner's access at shared clock now touching chunks mask (now =
 * LP_SHARE_NEVER: never reused; the sample dangles). The shared
 * distances count the accesses strictly between, as reuse distances do;
 * a clock read a little early by a racing thread cannot make them
 * negative. coh: enum lp_sample_coh of locprof/profile.h (0 none, 1 true
 * sharing, 2 false sharing, 3 invalidated and never reused). */
struct lp_share_out {
	uint64_t sreuse, sown, wpc, tmask, wtmask;
	uint32_t stid, wtid;
	uint8_t coh;
};

static inline uint64_t lp_share_dist(uint64_t begin, uint64_t end)
{
	return end == LP_SHARE_NEVER ? LP_SHARE_NEVER : end > begin ? end - begin - 1 : 0;
}

static inline void lp_share_end(const struct lp_share_rec *x, uint64_t now, uint64_t mask,
				struct lp_share_out *o)
{
	uint64_t first = x->first != LP_SHARE_NEVER && (now == LP_SHARE_NEVER || x->first < now)
				 ? x->first
				 : now;

	o->sreuse = lp_share_dist(x->sbegin, first);
	o->stid = first == now ? x->owner : x->ftid;
	o->sown = lp_share_dist(x->sbegin, now);
	o->wtid = x->written ? x->wtid : 0;
	o->wpc = x->written ? x->wpc : 0;
	o->tmask = x->tmask;
	o->wtmask = x->wtmask;
	o->coh = !x->written ? 0 : now == LP_SHARE_NEVER ? 3 : (mask & x->wmask) ? 1 : 2;
}

#endif
