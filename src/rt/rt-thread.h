/* Internal header of the locprof runtime: a thread's slow-path state,
 * shared by the core (rt-core.c: sampling, sending, threads, process end)
 * and shared time (rt-share.c: the clock of all threads and the
 * coherence records of other threads' watches). */
#ifndef LP_RT_THREAD_H
#define LP_RT_THREAD_H

#include "rt.h"
#include "rt-phase.h"

#include "collect/protocol.h"
#include "common/rng.h"
/* Compiled out: the slow path is measured (tests/unit/common checks the
 * table with its asserts on). */
#define LP_WATCH_ASSERT(cond) ((void)0)
#include "common/watch-core.h"
#include "common/share-core.h"

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* The coarse maps of lp_rt_range_watched(): this thread's live watched
 * granules per 4 KiB page and per 1 MiB region, direct-mapped (256 MiB
 * and 4 GiB of address space before entries alias). */
enum {
	PAGE_SHIFT_RT = LP_RT_PAGE_SHIFT,
	REGION_SHIFT_RT = 20,
	PAGE_ENTRIES = LP_RT_PAGE_ENTRIES,
	REGION_ENTRIES = 1 << 12,
};

/* Lines of other threads' watches a thread remembers touching. */
enum { LP_RT_TOUCHED = 256 };

/* A thread's connection to the collector (rt-conn.c). */
struct lp_rt_conn {
	int fd;            /* -1: none (never made, or the program took the number) */
	int broken;        /* the collector cannot be reached: no more tries */
	uint64_t dev, ino; /* the socket's identity, from fstat at connect */
};

struct lp_rt_thread {
	struct lp_rt_thread *next; /* all threads of this process */
	atomic_int busy;           /* owner's slow path vs. the exit flusher */
	int dead;
	struct lp_rt_conn conn;    /* used under busy */
	uint32_t number, tid;
	struct lp_rt_fast *fast; /* the owner's TLS */
	uint64_t *extra0;        /* the owner's lp_rt_extra0 */
	uint64_t final_refs;
	uint64_t final_extra[LP_MAX_LINE_SIZES];
	uint64_t slow_calls;
	uint64_t next_flush_ns;
	struct lp_rng rng;
	uint32_t gap_level; /* thinning level when the current gap was drawn */
	/* The thread's first reference has drawn its first gap. Until then
	 * its countdown stays 0: a thread set up by an allocation event must
	 * not start its clock, because an instrumented caller may write back
	 * the 0 it read before malloc (LLVM takes malloc to touch no memory
	 * of the program and forwards the stored value across the call). */
	int clock_started;
	/* Odd while the owner rewrites its clock (epoch and countdown): other
	 * threads summing the shared clock read it again. */
	atomic_uint clock_seq;
	/* Lines of other threads' watches this thread touched: at version ver
	 * of the line (rt-share.c), with the chunks it wrote. */
	struct rt_touched {
		uint64_t line;
		uint32_t ver, idx;
		uint64_t wmask;
	} touched[LP_RT_TOUCHED];

	struct lp_rt_roi roi; /* region of interest (rt-roi.c) */
	/* live watches (tag: the sample's thinning level) */
	struct lp_watch_table watches;
	uint32_t *pages;         /* live watched granules per page (exact counts) */
	uint32_t *regions;       /* the sum of pages per region */

	struct lp_msg_sample *samples;
	uint32_t nsamples;
	struct lp_msg_ref *events;
	uint32_t nevents, event_cap;

	struct lp_phase_thread ph; /* record --phases (rt-phase.c) */
};

/* The runtime's own memory (mmap), and a clock. rt-core.c */
void *lp_rt_alloc(uint64_t bytes);
void lp_rt_free(void *p, uint64_t bytes);
uint64_t lp_rt_now_ns(clockid_t clk);
/* The threads of this process image (a list through next), and how many
 * ever started. rt-core.c */
struct lp_rt_thread *lp_rt_thread_list(void);
uint32_t lp_rt_thread_count(void);
/* 1 when no live watch (of any thread) may cover a byte of [addr, last]. */
int lp_rt_range_unwatched(uint64_t addr, uint64_t last);

/* ---- the connection (rt-conn.c) ---- */
struct sockaddr_un;
struct iovec;
enum { LP_RT_CONN_BROKEN = -1, LP_RT_CONN_GONE = -2 };
/* Connect c to the collector at addr on a descriptor in the runtime's
 * high range: 0, or -1 (c->broken set when trying again is pointless). */
int lp_rt_conn_open(struct lp_rt_conn *c, const struct sockaddr_un *addr);
/* 1 while c's descriptor is still the socket c made; else c forgets it
 * (never closing it: the number is the program's now) and returns 0. */
int lp_rt_conn_ours(struct lp_rt_conn *c);
/* Send the whole of iov: 0; LP_RT_CONN_GONE when the descriptor stopped
 * being ours (connect again, send the whole message there); or
 * LP_RT_CONN_BROKEN when the collector went away (c->broken set). */
int lp_rt_conn_send(struct lp_rt_conn *c, struct iovec *iov, size_t niov);
/* Close c's descriptor if it is still ours. */
void lp_rt_conn_close(struct lp_rt_conn *c);

/* ---- watches (rt-watch.c) ---- */
/* log2 of line size idx (rt-core.c). */
uint32_t lp_rt_line_shift(unsigned idx);
/* Watch w on (delta 1) or off (-1) the shared shadow, and this thread's
 * coarse maps; a thread's watches all off the shadow and out of its table;
 * one watch ended; the table doubled (-1: no memory). */
void lp_rt_shadow_add(const struct lp_watch *w, int delta);
void lp_rt_coarse_add(struct lp_rt_thread *t, const struct lp_watch *w, int32_t delta);
void lp_rt_shadow_drop(struct lp_rt_thread *t);
void lp_rt_watch_remove(struct lp_rt_thread *t, struct lp_watch *w);
int lp_rt_table_grow(struct lp_rt_thread *t);

/* ---- shared time (rt-share.c) ---- */
/* A new process image: no records, no table. */
void lp_rt_share_reset(void);
/* Around the owner's rewrite of its clock (epoch and countdown). */
void lp_rt_clock_write_begin(struct lp_rt_thread *t);
void lp_rt_clock_write_end(struct lp_rt_thread *t);
/* The shared clock of line size i at the calling thread's line access
 * number own. */
uint64_t lp_rt_shared_now(const struct lp_rt_thread *self, uint32_t i, uint64_t own);
/* Watch w of thread t (tag: its level) begins at shared clock now: its
 * record, or REC_SOLO while the process has only ever had one thread. */
void lp_rt_share_begin(struct lp_rt_thread *t, struct lp_watch *w, uint64_t now);
/* Thread t's access to line `line` of line size i (2^shift bytes),
 * bytes [addr, last], its own clock own at this line access: other
 * threads' records learn of it, and t's own watch w of the line (NULL:
 * none) ends: returns 1 with its shared time in *o and *sbegin. *snow:
 * the shared clock + 1 at the reference's first line of size i, 0 until
 * read (the caller keeps it across the reference's lines). */
int lp_rt_share_access(struct lp_rt_thread *t, const struct lp_watch *w, uint64_t line, uint32_t i,
		       uint32_t shift, uint64_t addr, uint64_t last, uint32_t kind, uint64_t pc,
		       uint64_t own, uint64_t off, uint64_t *snow, struct lp_share_out *o,
		       uint64_t *sbegin);
/* At the end of thread t: the lock for its dangling watches (0: not
 * taken within a while, e.g. held by a thread a fatal signal stopped),
 * each one's shared time (1 when known; locked: the lock is held), the
 * unlock. */
int lp_rt_share_lock_exit(void);
int lp_rt_share_dangle(struct lp_rt_thread *t, const struct lp_watch *w, int locked, struct lp_share_out *o,
		       uint64_t *sbegin);
void lp_rt_share_unlock(void);

#endif
