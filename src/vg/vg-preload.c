/* vgpreload_locprof-amd64-linux.so: the program's own malloc, watched.
 *
 * Valgrind's malloc replacement (the other preload, `-X --allocs=replace`)
 * sends every malloc and free through a client request: a trip out of the
 * generated code to valgrind's scheduler and back, then valgrind's own
 * allocator; on lua that was about 17% of the CPU time beyond --tool=none
 * (docs/valgrind.md, "Overhead"). Function wrapping (valgrind.h) costs as
 * much: its call to the original is a "no-redirect" jump, which valgrind
 * serves in its scheduler too. So nothing is redirected here: the
 * program's malloc runs as natively (glibc's, traced like any code, the
 * native heap layout), and the tool instruments the first instruction of
 * malloc, calloc, realloc, free... (their addresses, as the program binds
 * them, come from the table this library registers at start-up) with a
 * direct call into itself (vg-instr.c). At the entry of an allocating
 * function the tool notes the arguments and the call site and puts the
 * address of locprof_vg_tramp in place of the return address; the
 * function returns there, the trampoline calls locprof_vg_ret (whose
 * entry the tool also instruments: it sees the result, records the
 * allocation and writes the real return address back in the slot the
 * trampoline left), and returns to the caller. The tool traces none of
 * this library's own references. Built without libc (-nodefaultlibs): the
 * functions are only named here, never called, but for dl_iterate_phdr,
 * which says where the thread-local storage of each module lies (weak:
 * left out when nothing defines it).
 *
 * Thread-local storage: the tool cannot ask the C library where a
 * thread's TLS is, and glibc keeps it at no documented place. But the
 * block of every module loaded with the program (the executable's
 * _Thread_local and __thread variables, OpenMP threadprivate ones, the
 * libraries' own) is static TLS, at a distance below the thread pointer
 * that is the same in every thread (x86-64's TLS variant II). So this
 * library measures those distances in the thread that loads it (the
 * module's block from dl_iterate_phdr, the thread pointer from %fs:0) and
 * registers them; the tool sends each thread's blocks from its own thread
 * pointer (vg-tls.c). Modules loaded later by dlopen are left out. */
#define _GNU_SOURCE /* dl_iterate_phdr */
#include "valgrind.h"

#include "vg-preload.h"

#include <link.h>
#include <stddef.h>

typedef unsigned long W;

/* The tool instruments this function's entry (result in rdi, the slot for
 * the return address in rsi); natively it does nothing. */
__attribute__((noinline, used, visibility("hidden"))) void locprof_vg_ret(W result, W slot)
{
	__asm__ volatile("" : : "r"(result), "r"(slot) : "memory");
}

/* A watched call returns here (rsp as after a normal return): keep rax,
 * leave a slot for the real return address (16-byte aligned call), let
 * the tool fill it, return through it. */
__asm__(".text\n"
	".globl locprof_vg_tramp\n"
	".hidden locprof_vg_tramp\n"
	".type locprof_vg_tramp,@function\n"
	"locprof_vg_tramp:\n"
	"\tsubq $8, %rsp\n"
	"\tpushq %rax\n"
	"\tmovq %rax, %rdi\n"
	"\tleaq 8(%rsp), %rsi\n"
	"\tcall locprof_vg_ret\n"
	"\tpopq %rax\n"
	"\tret\n"
	".size locprof_vg_tramp, .-locprof_vg_tramp\n");
extern char locprof_vg_tramp[];

/* As the program binds them (its own malloc if it has one, else libc's);
 * weak: 0 when nothing defines them (no libstdc++). */
#define WEAK(name) extern char name[] __attribute__((weak))
WEAK(malloc);
WEAK(valloc);
WEAK(pvalloc);
WEAK(memalign);
WEAK(aligned_alloc);
WEAK(calloc);
WEAK(realloc);
WEAK(reallocarray);
WEAK(posix_memalign);
WEAK(free);
WEAK(cfree);
WEAK(_Znwm);
WEAK(_Znam);
WEAK(_ZnwmRKSt9nothrow_t);
WEAK(_ZnamRKSt9nothrow_t);
WEAK(_ZnwmSt11align_val_t);
WEAK(_ZnamSt11align_val_t);
WEAK(_ZnwmSt11align_val_tRKSt9nothrow_t);
WEAK(_ZnamSt11align_val_tRKSt9nothrow_t);

static struct lpvg_hooks hooks;

#pragma weak dl_iterate_phdr

/* One module's static TLS block, as its distance below the thread
 * pointer tp (a variant II block lies wholly below it). */
static int tls_module(struct dl_phdr_info *info, size_t size, void *arg)
{
	W tp = *(const W *)arg;

	if (size < offsetof(struct dl_phdr_info, dlpi_tls_data) + sizeof(info->dlpi_tls_data))
		return 1; /* a C library without dlpi_tls_data: nothing to say */
	for (int i = 0; i < info->dlpi_phnum && hooks.ntls < LPVG_TLS_MAX; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		W start = (W)info->dlpi_tls_data;

		if (ph->p_type != PT_TLS || !start || !ph->p_memsz || start > tp || tp - start < ph->p_memsz)
			continue;
		hooks.tls_below[hooks.ntls] = tp - start;
		hooks.tls_size[hooks.ntls] = ph->p_memsz;
		hooks.tls_image[hooks.ntls++] = info->dlpi_addr + ph->p_vaddr;
	}
	return hooks.ntls == LPVG_TLS_MAX;
}

static void find_tls(void)
{
	W tp;

	if (!dl_iterate_phdr)
		return;
	/* the thread control block's first word points at itself */
	__asm__ volatile("movq %%fs:0, %0" : "=r"(tp));
	dl_iterate_phdr(tls_module, &tp);
}

static void add(W addr, W kind)
{
	if (addr && hooks.n < LPVG_HOOKS_MAX) {
		hooks.addr[hooks.n] = addr;
		hooks.kind[hooks.n++] = kind;
	}
}

__attribute__((constructor)) static void locprof_vg_register(void)
{
	hooks.ret_fn = (W)&locprof_vg_ret;
	hooks.tramp = (W)locprof_vg_tramp;
	add((W)malloc, LPVG_H_ALLOC1);
	add((W)valloc, LPVG_H_ALLOC1);
	add((W)pvalloc, LPVG_H_ALLOC1);
	add((W)memalign, LPVG_H_ALLOC2);
	add((W)aligned_alloc, LPVG_H_ALLOC2);
	add((W)calloc, LPVG_H_CALLOC);
	add((W)realloc, LPVG_H_REALLOC);
	add((W)reallocarray, LPVG_H_REALLOCARRAY);
	add((W)posix_memalign, LPVG_H_POSIX_MEMALIGN);
	add((W)free, LPVG_H_FREE);
	add((W)cfree, LPVG_H_FREE);
	add((W)_Znwm, LPVG_H_NEW);
	add((W)_Znam, LPVG_H_NEW);
	add((W)_ZnwmRKSt9nothrow_t, LPVG_H_NEW);
	add((W)_ZnamRKSt9nothrow_t, LPVG_H_NEW);
	add((W)_ZnwmSt11align_val_t, LPVG_H_NEW);
	add((W)_ZnamSt11align_val_t, LPVG_H_NEW);
	add((W)_ZnwmSt11align_val_tRKSt9nothrow_t, LPVG_H_NEW);
	add((W)_ZnamSt11align_val_tRKSt9nothrow_t, LPVG_H_NEW);
	find_tls();
	VALGRIND_DO_CLIENT_REQUEST_STMT(LPVG_REQ_REGISTER, (W)&hooks, 0, 0, 0, 0);
}
