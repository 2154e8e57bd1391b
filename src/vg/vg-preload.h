/* Shared by the tool and its preload library (vg-preload.c): the client
 * request that registers the functions to watch, and their table.
 * Freestanding. */
#ifndef LP_VG_PRELOAD_H
#define LP_VG_PRELOAD_H

/* VG_USERREQ_TOOL_BASE('L','P'): arg1 = address of a struct lpvg_hooks */
#define LPVG_REQ_REGISTER (((unsigned)'L' & 0xff) << 24 | ((unsigned)'P' & 0xff) << 16)
/* locprof/roi.h's LOCPROF_ROI_REQUEST: arg1 = 1 start, 0 stop (vg-roi.c) */
#define LPVG_REQ_ROI (LPVG_REQ_REGISTER + 1)

/* What a watched function is, by its arguments (rdi, rsi, rdx). */
enum lpvg_hook_kind {
	LPVG_H_NONE = 0,
	LPVG_H_ALLOC1,       /* malloc(n), valloc(n), pvalloc(n) */
	LPVG_H_ALLOC2,       /* memalign(al, n), aligned_alloc(al, n) */
	LPVG_H_CALLOC,       /* calloc(m, n) */
	LPVG_H_REALLOC,      /* realloc(p, n) */
	LPVG_H_REALLOCARRAY, /* reallocarray(p, m, n) */
	LPVG_H_POSIX_MEMALIGN, /* posix_memalign(pp, al, n) */
	LPVG_H_FREE,         /* free(p), cfree(p) */
	LPVG_H_NEW,          /* operator new...: only the call site, for the malloc inside */
};

#define LPVG_HOOKS_MAX 24
#define LPVG_TLS_MAX 16
struct lpvg_hooks {
	unsigned long ret_fn;  /* locprof_vg_ret(result, slot) */
	unsigned long tramp;   /* where a watched call returns to */
	unsigned long n;
	unsigned long addr[LPVG_HOOKS_MAX]; /* 0: not found */
	unsigned long kind[LPVG_HOOKS_MAX];
	/* The modules' static TLS blocks (vg-tls.c): a thread's instance of
	 * block i starts tls_below[i] bytes below its thread pointer (the
	 * same distance in every thread), holds tls_size[i] bytes, and its
	 * module holds the address tls_image[i]. */
	unsigned long ntls;
	unsigned long tls_below[LPVG_TLS_MAX];
	unsigned long tls_size[LPVG_TLS_MAX];
	unsigned long tls_image[LPVG_TLS_MAX];
};

#endif
