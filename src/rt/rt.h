/* Internal header of the locprof runtime, the code linked into programs
 * compiled by `locprof cc` (docs/runtime.md).
 *
 * Only the per-access path lives here, as an inline function, so that the
 * SanitizerCoverage and ThreadSanitizer callbacks (and, in the LTO build,
 * the program itself) inline it. It is the StatCache snippet: decrement a
 * thread-local countdown, test one byte of a per-thread map of watched
 * lines, return. It allocates nothing, takes no lock, calls nothing
 * indirect; everything else is in the noinline slow paths of rt-core.c.
 */
#ifndef LP_RT_H
#define LP_RT_H

#include <stdint.h>

/* The watch shadow: one byte per 64-byte granule of the whole user
 * address space (2^47 bytes, so 2^41 bytes of shadow), at a fixed address
 * that fits an x86-64 32-bit displacement, so that the check of an access
 * is `shr $6; cmpb $0, SHADOW(reg); jne`: no base or mask register, no
 * aliasing. Byte (addr >> 6) counts the live watches, of any thread, whose
 * line covers that granule (saturating at 255). A line size below 64
 * bytes shares its granule (the slow path's exact table sorts that out);
 * a larger one covers several granules. Mapped once per process image,
 * MAP_NORESERVE: pages never written read as the zero page and cost
 * nothing (docs/runtime.md, "The watch shadow"). */
#define LP_RT_GRANULE_SHIFT 6
#define LP_RT_SHADOW 0x7fff8000ull
#define LP_RT_SHADOW_BYTES (1ull << (47 - LP_RT_GRANULE_SHIFT))
#define LP_RT_PAGE_SHIFT 12
#define LP_RT_PAGE_ENTRIES (1 << 16)
#define LP_RT_MAX_LINES 4 /* LP_MAX_LINE_SIZES of the protocol */

/* Straddling references (docs/runtime.md, "The per-access path"). While
 * recording: lp_rt_line_shift0 is log2 of the smallest recorded line size
 * (63 otherwise, which makes the count below 0), and each reference adds
 * its extra lines of that size, (last >> shift0) - (addr >> shift0), to
 * the thread's lp_rt_extra0; lp_rt_straddle_mask is that line size - 1
 * (all ones otherwise); lp_rt_straddle_slow is the same when larger line
 * sizes are recorded too (all ones otherwise): a reference touching two
 * lines of the smallest size then takes the slow path, which counts its
 * extra lines of the other sizes. */
extern uint64_t lp_rt_straddle_mask;
extern uint64_t lp_rt_straddle_slow;
extern uint32_t lp_rt_line_shift0;
extern __thread uint64_t lp_rt_extra0 __attribute__((tls_model("initial-exec")));

static inline __attribute__((always_inline)) uint8_t lp_rt_shadow_load(uint64_t addr)
{
	return *(const uint8_t *)(LP_RT_SHADOW + (addr >> LP_RT_GRANULE_SHIFT));
}

/* The hot, per-thread state, reached through the initial-exec TLS model
 * (a %fs-relative access, no __tls_get_addr call). */
struct lp_rt_fast {
	/* References left before the next sample: the reference that finds
	 * it at 0 is sampled (and leaves it at UINT64_MAX for the slow path
	 * to see). Unsigned, so that the test and the decrement are one
	 * `sub $1; jb` when the compiler keeps it in memory. */
	uint64_t countdown;
	/* This thread's live watched granules per 4 KiB page,
	 * LP_RT_PAGE_ENTRIES entries, direct-mapped (entry
	 * (addr >> LP_RT_PAGE_SHIFT) & (entries - 1)): the pass's versioned
	 * loops read it inline for ranges of one or two pages, and
	 * lp_rt_range_watched() for longer ones. The second field: the pass
	 * knows the first two. */
	const uint32_t *pages;
	/* Reference clock: references of this thread so far, including the
	 * current one = epoch - countdown (mod 2^64), so the hot path keeps
	 * one counter, not two. */
	uint64_t epoch;
	struct lp_rt_thread *t; /* slow-path state, NULL until the first event */
	int in_rt;              /* re-entry guard (signal handlers, malloc) */
	/* Line accesses beyond one per reference, per configured line size
	 * but the smallest (lp_rt_extra0): a reference touching k lines adds
	 * k - 1 (counted by the slow path, which every reference straddling
	 * lines of the smallest size reaches when there are several). */
	uint64_t extra_lines[LP_RT_MAX_LINES];
};

extern __thread struct lp_rt_fast lp_rt_fast __attribute__((tls_model("initial-exec")));

/* The one slow path: the countdown ran out, or the map says the line may
 * be watched. pc is the return address of the callback, or 0 when the
 * callback is inlined (LTO): then the slow path takes its own return
 * address, which is in the instrumented function. */
void lp_rt_slow(uint64_t addr, uint32_t size, uint32_t kind, uint64_t pc)
	__attribute__((noinline, cold));

/* The pass's loop versioning asks before a strip of a loop whether a live
 * watch of this thread may cover a byte of [lo, hi) (docs/runtime.md, "Loop
 * versioning"): 0 only if certainly not, then the strip runs without watch
 * checks. */
int lp_rt_range_watched(uint64_t lo, uint64_t hi);

#ifdef LP_RT_INLINED
#define LP_RT_PC() 0
#else
#define LP_RT_PC() ((uint64_t)__builtin_return_address(0))
#endif

/* Written so that an inlined snippet has a single cold call: with one
 * unavailable predecessor per snippet, GVN's load PRE keeps the countdown,
 * map and mask in registers from one access to the next (the countdown is
 * still stored every time, for the slow path and other threads). With the
 * old two-call snippet it reloaded them from TLS at every access; this
 * form, with the direct-mapped byte map instead of a hashed bit filter,
 * took `matmul naive` from 3.45x to 1.48x and the vectorised `interchange`
 * from 6.1x to 3.3x (program CPU time, LTO, runtime inert; bench/overhead.sh,
 * docs/runtime.md). */
static inline __attribute__((always_inline)) void lp_rt_access(uint64_t addr, uint32_t size,
							       uint32_t kind, uint64_t pc)
{
	struct lp_rt_fast *f = &lp_rt_fast;
	uint64_t cd = f->countdown, last = addr + (size ? size - 1 : 0);

	f->countdown = cd - 1;
	lp_rt_extra0 += (last >> lp_rt_line_shift0) - (addr >> lp_rt_line_shift0);
	/* | and not ||: the shadow is always mapped, and with || its load
	 * sits in a block of its own, which defeats PRE. The last byte's
	 * granule: a watch on a straddling reference's second line. */
	uint8_t w = lp_rt_shadow_load(addr) | lp_rt_shadow_load(last);

	if (__builtin_expect((int)(cd == 0) | (int)(w != 0) | (int)((addr ^ last) > lp_rt_straddle_slow), 0))
		lp_rt_slow(addr, size, kind, pc);
}

/* The pass's versioned loops, once per strip run uninstrumented: the
 * extra lines (smallest line size) of an access of `size` bytes at
 * a0 + step * t for t in [0, n), added to lp_rt_extra0. */
void lp_rt_strip_extra(uint64_t a0, int64_t step, uint64_t size, uint64_t n);

/* Map the watch shadow at LP_RT_SHADOW, once; a failure ends the process
 * with one line (rt-shadow.c). */
void lp_rt_shadow_map(void);

/* Allocation events (rt-alloc.c -> rt-core.c): an allocation's call
 * stack above its call site pc is up[0..nup), innermost first. */
#define LP_RT_STACK_RECORDS 4 /* frame records after an allocation event */
#define LP_RT_STACK_UP (3 * LP_RT_STACK_RECORDS)
void lp_rt_alloc_event(uint64_t addr, uint64_t size, uint32_t kind, uint64_t pc, const uint64_t *up,
		       unsigned nup);
/* The calling thread's TLS segments, at most max (rt-tls.c). */
struct lp_rt_tls {
	uint64_t start, size, image;
};
#define LP_RT_TLS_MAX 16
unsigned lp_rt_tls_segments(struct lp_rt_tls *v, unsigned max);

/* Whether this thread records allocation events now (not inside the
 * runtime, the process recorded). */
int lp_rt_alloc_wanted(void);

/* Regions of interest (rt-roi.c). A thread outside the region keeps its
 * clock here and runs a countdown of its own (rt-roi.c explains). */
struct lp_rt_roi {
	int outside;
	int skip_phase;          /* the outside references count towards --skip */
	uint64_t skip_left;      /* references of the region still to skip */
	uint64_t skipped;        /* references left out, up to the last look */
	uint64_t saved_countdown, saved_epoch, saved_extra0;
	uint64_t saved_extra[LP_RT_MAX_LINES];
	const uint32_t *pages;   /* the thread's page counts (lp_rt_fast.pages inside) */
};

/* 1 when the recording has a region (markers, --start-at, --stop-at,
 * --skip); 0: the whole run, and none of the calls below is made. */
extern int lp_rt_roi_set;

/* Read the region's settings from the environment; arm breakpoints.
 * zero_pages: empty page counts, which a thread outside runs with. */
void lp_rt_roi_init(const uint32_t *zero_pages);
void lp_rt_roi_thread_init(struct lp_rt_roi *r, const uint32_t *pages);
/* From the slow path with the thread's state taken: follow the process's
 * state. With ref, for the reference being handled (e0: its extra lines
 * of the smallest size); returns 1 when that reference is outside the
 * region and nothing more is to be done for it. Sets the thread's page
 * counts: empty outside, so versioned loops run unchecked. */
int lp_rt_roi_follow(struct lp_rt_fast *f, struct lp_rt_roi *r, int ref, uint64_t e0);
/* The REGION message's body (protocol.h): what a thread left out so far,
 * the times the process entered. */
struct lp_msg_region;
void lp_rt_roi_message(const struct lp_rt_fast *f, const struct lp_rt_roi *r, uint32_t thread,
		       struct lp_msg_region *m);
/* locprof_start() (what 1) and locprof_stop() (0) of locprof/roi.h. */
void lp_rt_roi_mark(int what);
/* The calling thread follows the process's state now (rt-core.c). */
void lp_rt_roi_apply(void);

/* Flush everything and say goodbye: exit, _exit, fatal signals. */
void lp_rt_process_finish(int status, int how);

/* Raw mmap/munmap through syscall(): the runtime's own memory, and the
 * real functions behind the program's mmap/munmap. */
void *lp_rt_sys_mmap(void *addr, uint64_t len, int prot, int flags, int fd, int64_t off);
int lp_rt_sys_munmap(void *addr, uint64_t len);

#endif
