/* Internal header of the locprof runtime, the code linked into programs
 * compiled by `locprof cc` (docs/runtime.md).
 *
 * Only the per-access path lives here, as an inline function, so that the
 * SanitizerCoverage and ThreadSanitizer callbacks (and, in the LTO build,
 * the program itself) inline it. It is the StatCache snippet: decrement a
 * thread-local countdown, test one bit of a per-thread filter of watched
 * lines, return. It allocates nothing, takes no lock, calls nothing
 * indirect; everything else is in the noinline slow paths of rt-core.c.
 */
#ifndef LP_RT_H
#define LP_RT_H

#include <stdint.h>

/* Fibonacci hashing: one multiply, and the top bits are well mixed even for
 * the strided line numbers of array sweeps. */
#define LP_RT_HASH 0x9e3779b97f4a7c15ull

/* The hot, per-thread state: one cache line, reached through the initial-
 * exec TLS model (a %fs-relative access, no __tls_get_addr call). */
struct lp_rt_fast {
	int64_t countdown;      /* references left before the next sample */
	const uint64_t *filter; /* bit array of watched (hashed) lines */
	uint32_t filter_shift;  /* 64 - log2(filter bits) */
	uint32_t line_shift;    /* log2 of the smallest line size */
	/* Reference clock: references of this thread so far = epoch -
	 * countdown, so the hot path maintains one counter, not two. */
	uint64_t epoch;
	struct lp_rt_thread *t; /* slow-path state, NULL until the first event */
	int in_rt;              /* re-entry guard (signal handlers, malloc) */
};

extern __thread struct lp_rt_fast lp_rt_fast __attribute__((tls_model("initial-exec")));

/* pc is the return address of the callback, or 0 when the callback is
 * inlined (LTO): then the slow path takes its own return address, which is
 * in the instrumented function. */
void lp_rt_slow_countdown(uint64_t addr, uint32_t size, uint32_t kind, uint64_t pc)
	__attribute__((noinline, cold));
void lp_rt_slow_filter(uint64_t addr, uint32_t size, uint32_t kind, uint64_t pc)
	__attribute__((noinline, cold));

#ifdef LP_RT_INLINED
#define LP_RT_PC() 0
#else
#define LP_RT_PC() ((uint64_t)__builtin_return_address(0))
#endif

static inline __attribute__((always_inline)) void lp_rt_access(uint64_t addr, uint32_t size,
							       uint32_t kind, uint64_t pc)
{
	struct lp_rt_fast *f = &lp_rt_fast;
	uint64_t h;

	if (__builtin_expect(--f->countdown <= 0, 0)) {
		lp_rt_slow_countdown(addr, size, kind, pc);
		return;
	}
	h = ((addr >> f->line_shift) * LP_RT_HASH) >> f->filter_shift;
	if (__builtin_expect((f->filter[h >> 6] >> (h & 63)) & 1, 0))
		lp_rt_slow_filter(addr, size, kind, pc);
}

/* Allocation events (rt-alloc.c -> rt-core.c). */
void lp_rt_alloc_event(uint64_t addr, uint64_t size, uint32_t kind, uint64_t pc);

/* Flush everything and say goodbye: exit, _exit, fatal signals. */
void lp_rt_process_finish(int status, int how);

/* Raw mmap/munmap through syscall(): the runtime's own memory, and the
 * real functions behind the program's mmap/munmap. */
void *lp_rt_sys_mmap(void *addr, uint64_t len, int prot, int flags, int fd, int64_t off);
int lp_rt_sys_munmap(void *addr, uint64_t len);

#endif
