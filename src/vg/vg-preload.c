/* vgpreload_locprof-amd64-linux.so: the program's own malloc, watched.
 *
 * Valgrind's malloc replacement (the other preload, `-X --allocs=replace`)
 * sends every malloc and free through a client request: a trip out of the
 * generated code to valgrind's scheduler and back, then valgrind's own
 * allocator; on lua that was about 17% of the CPU time beyond --tool=none
 * (docs/valgrind.md, "Overhead"). Here the program's malloc runs as it does
 * natively (glibc's, traced like any code, the native heap layout) and
 * valgrind's function wrapping (valgrind.h, I_WRAP_SONAME_FNNAME_ZU) puts
 * these wrappers around malloc, free, new, delete...: each calls the
 * original, then tells the tool through locprof_vg_event(), an empty
 * function whose code the tool instruments with a direct call into itself
 * (vg-instr.c): no scheduler trip. The tool does not trace this library's
 * own references (its text is excluded), so what is traced is the
 * program, its malloc included.
 *
 * Nested calls (operator new calling malloc) report once, the outermost,
 * with the outermost call site: a per-thread depth. Built without libc
 * (-nodefaultlibs): nothing here may call the functions it wraps. */
#include "valgrind.h"

#include <stddef.h>

#include "vg-preload.h"

typedef unsigned long W;

static int registered;
static __thread int depth __attribute__((tls_model("initial-exec")));

/* The tool instruments this function's entry (arguments in rdi, rsi, rdx,
 * rcx); natively it does nothing. */
__attribute__((noinline, used, visibility("default"))) void locprof_vg_event(W kind, W p, W size, W site)
{
	__asm__ volatile("" : : "r"(kind), "r"(p), "r"(size), "r"(site) : "memory");
}

static void event(W kind, W p, W size, W site)
{
	if (!registered) {
		/* once per process: where the event function and this library's
		 * code are (before the first event: nothing is translated yet) */
		registered = 1;
		VALGRIND_DO_CLIENT_REQUEST_STMT(LPVG_REQ_REGISTER, (W)&locprof_vg_event, 0, 0, 0, 0);
	}
	locprof_vg_event(kind, p, size, site);
}

/* The call site: the return address into the caller, minus one (inside
 * the call instruction, as valgrind's unwinder gives it). */
#define SITE ((W)__builtin_return_address(0) - 1)

/* Call the original with up to three arguments (extra ones are harmless
 * in registers). */
#define ORIG3(r, a, b, c)                                 \
	do {                                              \
		OrigFn fn_;                               \
		VALGRIND_GET_ORIG_FN(fn_);                \
		depth++;                                  \
		CALL_FN_W_WWW(r, fn_, a, b, c);           \
		depth--;                                  \
	} while (0)

/* allocation of a1 bytes (operator new, malloc, valloc, pvalloc) */
#define ALLOC1(so, name)                                               \
	W I_WRAP_SONAME_FNNAME_ZU(so, name)(W a, W b, W c);            \
	W I_WRAP_SONAME_FNNAME_ZU(so, name)(W a, W b, W c)             \
	{                                                              \
		W r, site = SITE;                                      \
		ORIG3(r, a, b, c);                                     \
		if (r && !depth)                                       \
			event(LPVG_EV_ALLOC, r, a, site);              \
		return r;                                              \
	}

/* allocation of a2 bytes (memalign, aligned_alloc) */
#define ALLOC2(so, name)                                               \
	W I_WRAP_SONAME_FNNAME_ZU(so, name)(W a, W b, W c);            \
	W I_WRAP_SONAME_FNNAME_ZU(so, name)(W a, W b, W c)             \
	{                                                              \
		W r, site = SITE;                                      \
		ORIG3(r, a, b, c);                                     \
		if (r && !depth)                                       \
			event(LPVG_EV_ALLOC, r, b, site);              \
		return r;                                              \
	}

/* free of a1 (free, cfree, operator delete in all its forms) */
#define FREE1(so, name)                                                \
	W I_WRAP_SONAME_FNNAME_ZU(so, name)(W a, W b, W c);            \
	W I_WRAP_SONAME_FNNAME_ZU(so, name)(W a, W b, W c)             \
	{                                                              \
		W r, site = SITE;                                      \
		ORIG3(r, a, b, c);                                     \
		if (a && !depth)                                       \
			event(LPVG_EV_FREE, a, 0, site);               \
		return r;                                              \
	}

#define LIBC libcZdsoZa
#define LIBSTDCXX libstdcZpZpZa

ALLOC1(LIBC, malloc)
ALLOC1(LIBC, valloc)
ALLOC1(LIBC, pvalloc)
ALLOC2(LIBC, memalign)
ALLOC2(LIBC, aligned_alloc)
FREE1(LIBC, free)
FREE1(LIBC, cfree)

W I_WRAP_SONAME_FNNAME_ZU(LIBC, calloc)(W m, W n);
W I_WRAP_SONAME_FNNAME_ZU(LIBC, calloc)(W m, W n)
{
	W r, site = SITE;

	ORIG3(r, m, n, 0);
	if (r && !depth)
		event(LPVG_EV_ALLOC, r, m * n, site);
	return r;
}

/* realloc moves or resizes: the old block ends, the new one starts (at
 * the same address when resized in place); realloc(p, 0) frees p. */
static void moved(W p, W r, W n, int overflow, W site)
{
	if (depth)
		return;
	if (p && (r || (n == 0 && !overflow)))
		event(LPVG_EV_FREE, p, 0, site);
	if (r)
		event(LPVG_EV_ALLOC, r, n, site);
}

W I_WRAP_SONAME_FNNAME_ZU(LIBC, realloc)(W p, W n);
W I_WRAP_SONAME_FNNAME_ZU(LIBC, realloc)(W p, W n)
{
	W r, site = SITE;

	ORIG3(r, p, n, 0);
	moved(p, r, n, 0, site);
	return r;
}

W I_WRAP_SONAME_FNNAME_ZU(LIBC, reallocarray)(W p, W m, W n);
W I_WRAP_SONAME_FNNAME_ZU(LIBC, reallocarray)(W p, W m, W n)
{
	W r, site = SITE, total;
	int overflow = __builtin_mul_overflow(m, n, &total);

	ORIG3(r, p, m, n);
	moved(p, r, total, overflow, site);
	return r;
}

int I_WRAP_SONAME_FNNAME_ZU(LIBC, posix_memalign)(void **pp, W al, W n);
int I_WRAP_SONAME_FNNAME_ZU(LIBC, posix_memalign)(void **pp, W al, W n)
{
	W r, site = SITE;

	ORIG3(r, (W)pp, al, n);
	if ((int)r == 0 && !depth)
		event(LPVG_EV_ALLOC, (W)*pp, n, site);
	return (int)r;
}

/* C++: new (plain, nothrow, aligned), delete (plain, sized, nothrow,
 * aligned). Their malloc and free inside report nothing (depth). */
ALLOC1(LIBSTDCXX, _Znwm)
ALLOC1(LIBSTDCXX, _Znam)
ALLOC1(LIBSTDCXX, _ZnwmRKSt9nothrow_t)
ALLOC1(LIBSTDCXX, _ZnamRKSt9nothrow_t)
ALLOC1(LIBSTDCXX, _ZnwmSt11align_val_t)
ALLOC1(LIBSTDCXX, _ZnamSt11align_val_t)
ALLOC1(LIBSTDCXX, _ZnwmSt11align_val_tRKSt9nothrow_t)
ALLOC1(LIBSTDCXX, _ZnamSt11align_val_tRKSt9nothrow_t)
FREE1(LIBSTDCXX, _ZdlPv)
FREE1(LIBSTDCXX, _ZdaPv)
FREE1(LIBSTDCXX, _ZdlPvm)
FREE1(LIBSTDCXX, _ZdaPvm)
FREE1(LIBSTDCXX, _ZdlPvRKSt9nothrow_t)
FREE1(LIBSTDCXX, _ZdaPvRKSt9nothrow_t)
FREE1(LIBSTDCXX, _ZdlPvSt11align_val_t)
FREE1(LIBSTDCXX, _ZdaPvSt11align_val_t)
FREE1(LIBSTDCXX, _ZdlPvmSt11align_val_t)
FREE1(LIBSTDCXX, _ZdaPvmSt11align_val_t)
FREE1(LIBSTDCXX, _ZdlPvSt11align_val_tRKSt9nothrow_t)
FREE1(LIBSTDCXX, _ZdaPvSt11align_val_tRKSt9nothrow_t)
