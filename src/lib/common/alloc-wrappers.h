/* The allocation functions an interposer defines, each forwarding to
 * glibc's exported __libc_* entry point: written once for the runtime of
 * `locprof cc` (src/rt/rt-alloc.c) and the pmu backend's preload
 * (src/pmu/pmu-alloc-preload.c), which differ only in what they do with an
 * event. Include once, in the file that defines the functions, after
 * defining:
 *   LP_WRAP_ATTR                 the functions' attributes (visibility)
 *   LP_WRAP_ALLOCATED(p, n, pc)  block p of n bytes allocated at call site
 *                                pc (p is NULL when the allocation failed)
 *   LP_WRAP_FREED(p, pc)         block p (not NULL) freed at pc, or moved
 *                                by realloc
 * Header-only and without libc calls of its own: it runs inside the
 * target. The call site is __builtin_return_address(0) of the wrapper. */
#ifndef LOCPROF_ALLOC_WRAPPERS_H
#define LOCPROF_ALLOC_WRAPPERS_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

void *__libc_malloc(size_t n);
void *__libc_calloc(size_t n, size_t size);
void *__libc_realloc(void *p, size_t n);
void __libc_free(void *p);
void *__libc_memalign(size_t align, size_t n);
void *__libc_valloc(size_t n);
void *__libc_pvalloc(size_t n);

#define LP_WRAP_PC() ((uint64_t)__builtin_return_address(0))

LP_WRAP_ATTR void *malloc(size_t n)
{
	void *p = __libc_malloc(n);
	LP_WRAP_ALLOCATED(p, n, LP_WRAP_PC());
	return p;
}

LP_WRAP_ATTR void *calloc(size_t n, size_t size)
{
	void *p = __libc_calloc(n, size);
	LP_WRAP_ALLOCATED(p, n * size, LP_WRAP_PC());
	return p;
}

LP_WRAP_ATTR void *realloc(void *old, size_t n)
{
	void *p = __libc_realloc(old, n);

	/* A failed realloc leaves the old block alive; realloc(p, 0) frees. */
	if (old && (p || n == 0))
		LP_WRAP_FREED(old, LP_WRAP_PC());
	LP_WRAP_ALLOCATED(p, n, LP_WRAP_PC());
	return p;
}

LP_WRAP_ATTR void free(void *p)
{
	if (p)
		LP_WRAP_FREED(p, LP_WRAP_PC());
	__libc_free(p);
}

LP_WRAP_ATTR void *memalign(size_t align, size_t n)
{
	void *p = __libc_memalign(align, n);
	LP_WRAP_ALLOCATED(p, n, LP_WRAP_PC());
	return p;
}

LP_WRAP_ATTR void *aligned_alloc(size_t align, size_t n)
{
	void *p = __libc_memalign(align, n);
	LP_WRAP_ALLOCATED(p, n, LP_WRAP_PC());
	return p;
}

LP_WRAP_ATTR void *valloc(size_t n)
{
	void *p = __libc_valloc(n);
	LP_WRAP_ALLOCATED(p, n, LP_WRAP_PC());
	return p;
}

LP_WRAP_ATTR void *pvalloc(size_t n)
{
	void *p = __libc_pvalloc(n);
	LP_WRAP_ALLOCATED(p, n, LP_WRAP_PC());
	return p;
}

LP_WRAP_ATTR int posix_memalign(void **out, size_t align, size_t n)
{
	void *p;

	if (align < sizeof(void *) || (align & (align - 1)))
		return EINVAL;
	p = __libc_memalign(align, n);
	if (!p)
		return ENOMEM;
	*out = p;
	LP_WRAP_ALLOCATED(p, n, LP_WRAP_PC());
	return 0;
}

#endif
