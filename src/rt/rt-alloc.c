/* Allocation tracking: the runtime defines the allocation functions, so the
 * program's calls (and libc's own calls through the PLT, e.g. strdup's)
 * come here; they forward to glibc's exported __libc_* entry points and
 * report (block, size, call stack) to the collector in batches. The call
 * site is __builtin_return_address(0); the callers above it come from
 * libunwind (docs/runtime.md, "Allocation call stacks"), so that a block
 * that operator new and std::allocator allocate is named at the program's
 * own function. Recursion (the runtime or libc allocating while we
 * report, or libunwind allocating its cache) is cut by lp_rt_fast.in_rt. mmap/munmap go to the system call directly; only
 * anonymous mappings are reported. */
#include "rt.h"

#include <locprof/common.h>

#include <errno.h>
#define UNW_LOCAL_ONLY
#include <libunwind.h>
#include <malloc.h>
#include <stdlib.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/types.h>

#define PC() ((uint64_t)__builtin_return_address(0))

/* The callers above call site pc: unw_backtrace() from here, whose first
 * frames are the runtime's own (this function, the allocation function)
 * up to pc. libunwind reads the DWARF call frame information, so it is
 * right in code built without frame pointers (libstdc++, most
 * distributions' libraries), where a frame-pointer walk would skip
 * operator new's caller, and with its per-thread cache of each pc's frame
 * description a frame costs a lookup and a few loads (glibc's backtrace(),
 * which decodes the CFI again at every frame, cost 6.2x the CPU time of
 * a recorded allocation-heavy run without stacks; this 1.62x). Up to
 * LP_RT_STACK_UP frames; 0 when pc is not found among the first ones. */
static __attribute__((noinline)) unsigned stack_above(uint64_t pc, uint64_t *up)
{
	enum { OWN = 4 };
	void *v[OWN + LP_RT_STACK_UP];
	int n, i;

	lp_rt_fast.in_rt++;
	n = unw_backtrace(v, OWN + LP_RT_STACK_UP);
	lp_rt_fast.in_rt--;
	for (i = 0; i < n && i < OWN && (uint64_t)v[i] != pc; i++)
		;
	if (i >= n || i >= OWN)
		return 0;
	if (n - i - 1 > LP_RT_STACK_UP)
		n = i + 1 + LP_RT_STACK_UP;
	for (int k = i + 1; k < n; k++)
		up[k - i - 1] = (uint64_t)v[k];
	return (unsigned)(n - i - 1);
}

static void alloc_done(void *p, size_t n, uint64_t pc)
{
	uint64_t up[LP_RT_STACK_UP];
	unsigned nup;

	if (!p || !lp_rt_alloc_wanted())
		return;
	nup = stack_above(pc, up);
	lp_rt_alloc_event((uint64_t)p, n, LP_EV_ALLOC, pc, up, nup);
}

/* libunwind allocates its per-thread cache on its first call: done here,
 * under the guard, rather than in the program's first malloc. Only when
 * the run is recorded: a program run natively (or under memcheck, which
 * reports libunwind's probing of stack memory with write()) never
 * unwinds. */
__attribute__((constructor(102))) static void stack_warm_up(void)
{
	void *v[2];

	if (!lp_rt_alloc_wanted())
		return;
	lp_rt_fast.in_rt++;
	unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
	unw_backtrace(v, 2);
	lp_rt_fast.in_rt--;
}

static void free_done(void *p, uint64_t pc)
{
	lp_rt_alloc_event((uint64_t)p, 0, LP_EV_FREE, pc, NULL, 0);
}

#define LP_WRAP_ATTR
#define LP_WRAP_ALLOCATED alloc_done
#define LP_WRAP_FREED free_done
#include "common/alloc-wrappers.h"

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	void *p = lp_rt_sys_mmap(addr, len, prot, flags, fd, off);

	if (p != MAP_FAILED && (flags & MAP_ANONYMOUS))
		alloc_done(p, len, PC());
	return p;
}

void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
	__attribute__((alias("mmap")));

int munmap(void *addr, size_t len)
{
	int r = lp_rt_sys_munmap(addr, len);

	if (r == 0)
		lp_rt_alloc_event((uint64_t)addr, len, LP_EV_FREE, PC(), NULL, 0);
	return r;
}
