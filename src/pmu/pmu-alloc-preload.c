/* liblocprof-pmu-alloc.so: the allocation interposer of the pmu backend
 * (docs/pmu.md, "Allocations"). `locprof record --backend pmu` preloads
 * it into the program. Each allocation function forwards to glibc's
 * exported __libc_* entry point, then tells the supervisor what happened
 * with one system call of a number no kernel has (LP_PMU_ALLOC_SYSCALL):
 * the ptrace supervisor stops the thread at its entry, reads the event
 * from the registers and unwinds the call stack from outside; the kernel
 * answers ENOSYS. So the interposer does no unwinding, holds no buffer,
 * opens no connection and needs no state: a forked child and a program
 * run without the supervisor (the call fails, errno untouched) need
 * nothing more. It adds a handful of the program's own references per
 * event (the wrapper's calls and returns), not the thousands an unwinder
 * inside the program would.
 *
 * Built on its own, with no sanitizer or instrumentation: it runs inside
 * the target. */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#include "pmu-alloc-abi.h"


/* The event, in the registers of a system call (pmu-alloc-abi.h). Raw:
 * libc's syscall() would set errno to ENOSYS under the program's feet. */
static inline void report(uint64_t kind, uint64_t addr, uint64_t size, uint64_t pc)
{
	register uint64_t r10 __asm__("r10") = pc;
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "0"((long)LP_PMU_ALLOC_SYSCALL), "D"(kind), "S"(addr), "d"(size), "r"(r10)
			 : "rcx", "r11", "memory");
	(void)ret;
}

static inline void allocated(void *p, size_t n, uint64_t pc)
{
	if (p)
		report(LP_PMU_ALLOC_EV_ALLOC, (uint64_t)p, n, pc);
}

static inline void freed(void *p, uint64_t pc)
{
	report(LP_PMU_ALLOC_EV_FREE, (uint64_t)p, 0, pc);
}

#define LP_WRAP_ATTR __attribute__((visibility("default")))
#define LP_WRAP_ALLOCATED allocated
#define LP_WRAP_FREED freed
#include "common/alloc-wrappers.h"
