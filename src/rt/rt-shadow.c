/* Mapping the watch shadow (rt.h) before any instrumented code runs, and
 * the section that marks a binary as instrumented. */
#include "rt.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#else
#define RUNNING_ON_VALGRIND 0
#endif

/* ---- the watch shadow (rt.h) ----------------------------------------------
 * Mapped before any instrumented code can run: from the executable's
 * .preinit_array, which the dynamic loader (or the static start-up code)
 * runs before every constructor, ours and the libraries' (instrumented
 * shared libraries use the executable's runtime). Without it no
 * instrumented access can execute, so failing to map it is fatal, in one
 * line. libc is not initialised yet here: raw system calls only. */
static void rt_shadow_fail(long err)
{
	static const char head[] = "locprof runtime: cannot reserve the 2 TiB watch shadow at 0x7fff8000: ";
	const char *why = err == ENOMEM ? "out of address space (is `ulimit -v` set, or "
					  "vm.overcommit_memory 2?)\n"
			  : err == EEXIST ? "something is already mapped there (a non-PIE "
					    "program of over 2 GiB?)\n"
					  : "mmap failed\n";

	(void)!syscall(SYS_write, 2, head, sizeof(head) - 1);
	(void)!syscall(SYS_write, 2, why, strlen(why));
	syscall(SYS_exit_group, 127);
}

static long rt_shadow_mmap(uint64_t bytes)
{
	/* every argument a long: syscall() reads six, and an int 0 would leave
	 * the offset's upper half undefined */
	return syscall(SYS_mmap, (long)LP_RT_SHADOW, (long)bytes, (long)(PROT_READ | PROT_WRITE),
		       (long)(MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE), -1L, 0L);
}

void lp_rt_shadow_map(void)
{
	static int mapped;
	uint64_t bytes = LP_RT_SHADOW_BYTES;
	long p;

	if (mapped)
		return;
	p = rt_shadow_mmap(bytes);
	/* Valgrind gives its client far less than 2^47 bytes of address space
	 * (below 2^37 in valgrind 3.19) and refuses a mapping of 2 TiB. The
	 * largest shadow it accepts (32 GiB there) covers 2^41 bytes of
	 * addresses, more than any the program can have under valgrind. */
	while (p == -1 && RUNNING_ON_VALGRIND && bytes > (1ull << 30)) {
		bytes /= 2;
		p = rt_shadow_mmap(bytes);
	}
	if (p == -1)
		rt_shadow_fail(errno);
	if ((uint64_t)p != LP_RT_SHADOW) { /* a kernel before 4.17 took it as a hint */
		syscall(SYS_munmap, (void *)p, bytes);
		rt_shadow_fail(EEXIST);
	}
	mapped = 1;
}

/* The mark `locprof record` looks for before it starts a program
 * (lp_binary_instrumented()); a section, not a symbol, so that it survives
 * `strip`. */
__attribute__((section(".locprof_rt"), used)) static const char rt_mark[] = "locprof runtime";

__attribute__((section(".preinit_array"), used)) static void (*const rt_shadow_preinit)(void) =
	lp_rt_shadow_map;
