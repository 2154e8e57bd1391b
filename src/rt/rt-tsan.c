/* The gcc path: gcc -fsanitize=thread --param tsan-instrument-func-entry-exit=0
 * calls these before memory accesses; linking this runtime instead of
 * libtsan turns them into locprof references. Every symbol gcc 12's tsan
 * instrumentation can reference is defined (sanitizer.def): plain, unaligned
 * and volatile reads/writes, ranges (struct copies), vptr updates, function
 * entry/exit (no-ops, for code compiled without the --param), and the
 * atomics, which perform the real atomic operation (always sequentially
 * consistent: stronger than asked, never weaker) and count as one reference
 * (a read for loads, a write for everything else). */
#include "rt.h"

#include <locprof/common.h>

#include <stddef.h>

#define PC() ((uint64_t)__builtin_return_address(0))

void __tsan_init(void);
void __tsan_init(void)
{
}

void __tsan_func_entry(void *pc);
void __tsan_func_entry(void *pc)
{
}

void __tsan_func_exit(void);
void __tsan_func_exit(void)
{
}

#define TSAN_RW(n)                                                                          \
	void __tsan_read##n(void *a);                                                       \
	void __tsan_write##n(void *a);                                                      \
	void __tsan_volatile_read##n(void *a);                                              \
	void __tsan_volatile_write##n(void *a);                                             \
	void __tsan_read##n(void *a) { lp_rt_access((uint64_t)a, n, LP_REF_READ, PC()); }   \
	void __tsan_write##n(void *a) { lp_rt_access((uint64_t)a, n, LP_REF_WRITE, PC()); } \
	void __tsan_volatile_read##n(void *a)                                               \
	{                                                                                   \
		lp_rt_access((uint64_t)a, n, LP_REF_READ, PC());                            \
	}                                                                                   \
	void __tsan_volatile_write##n(void *a)                                              \
	{                                                                                   \
		lp_rt_access((uint64_t)a, n, LP_REF_WRITE, PC());                           \
	}
#define TSAN_UNALIGNED(n)                                                                   \
	void __tsan_unaligned_read##n(void *a);                                             \
	void __tsan_unaligned_write##n(void *a);                                            \
	void __tsan_unaligned_volatile_read##n(void *a);                                    \
	void __tsan_unaligned_volatile_write##n(void *a);                                   \
	void __tsan_unaligned_read##n(void *a)                                              \
	{                                                                                   \
		lp_rt_access((uint64_t)a, n, LP_REF_READ, PC());                            \
	}                                                                                   \
	void __tsan_unaligned_write##n(void *a)                                             \
	{                                                                                   \
		lp_rt_access((uint64_t)a, n, LP_REF_WRITE, PC());                           \
	}                                                                                   \
	void __tsan_unaligned_volatile_read##n(void *a)                                     \
	{                                                                                   \
		lp_rt_access((uint64_t)a, n, LP_REF_READ, PC());                            \
	}                                                                                   \
	void __tsan_unaligned_volatile_write##n(void *a)                                    \
	{                                                                                   \
		lp_rt_access((uint64_t)a, n, LP_REF_WRITE, PC());                           \
	}

TSAN_RW(1)
TSAN_RW(2)
TSAN_RW(4)
TSAN_RW(8)
TSAN_RW(16)
TSAN_UNALIGNED(2)
TSAN_UNALIGNED(4)
TSAN_UNALIGNED(8)
TSAN_UNALIGNED(16)

/* A range (struct copy, memcpy/memset expansion) is one reference at its
 * start, its size capped at 255 in samples (the full size in traces). */
void __tsan_read_range(void *a, size_t n);
void __tsan_write_range(void *a, size_t n);
void __tsan_read_range(void *a, size_t n)
{
	if (n)
		lp_rt_access((uint64_t)a, (uint32_t)(n > 0xffffffffu ? 0xffffffffu : n), LP_REF_READ,
			     PC());
}
void __tsan_write_range(void *a, size_t n)
{
	if (n)
		lp_rt_access((uint64_t)a, (uint32_t)(n > 0xffffffffu ? 0xffffffffu : n), LP_REF_WRITE,
			     PC());
}

/* C++ virtual pointer stores and loads. */
void __tsan_vptr_update(void **vptr_p, void *new_val);
void __tsan_vptr_read(void **vptr_p);
void __tsan_vptr_update(void **vptr_p, void *new_val)
{
	lp_rt_access((uint64_t)vptr_p, 8, LP_REF_WRITE, PC());
}
void __tsan_vptr_read(void **vptr_p)
{
	lp_rt_access((uint64_t)vptr_p, 8, LP_REF_READ, PC());
}

#define SC __ATOMIC_SEQ_CST
#define TSAN_ATOMIC(bits, T)                                                                 \
	T __tsan_atomic##bits##_load(const volatile T *a, int mo);                           \
	void __tsan_atomic##bits##_store(volatile T *a, T v, int mo);                        \
	T __tsan_atomic##bits##_exchange(volatile T *a, T v, int mo);                        \
	T __tsan_atomic##bits##_fetch_add(volatile T *a, T v, int mo);                       \
	T __tsan_atomic##bits##_fetch_sub(volatile T *a, T v, int mo);                       \
	T __tsan_atomic##bits##_fetch_and(volatile T *a, T v, int mo);                       \
	T __tsan_atomic##bits##_fetch_or(volatile T *a, T v, int mo);                        \
	T __tsan_atomic##bits##_fetch_xor(volatile T *a, T v, int mo);                       \
	T __tsan_atomic##bits##_fetch_nand(volatile T *a, T v, int mo);                      \
	int __tsan_atomic##bits##_compare_exchange_strong(volatile T *a, T *c, T v, int mo,  \
							  int fmo);                          \
	int __tsan_atomic##bits##_compare_exchange_weak(volatile T *a, T *c, T v, int mo,    \
							int fmo);                            \
	T __tsan_atomic##bits##_compare_exchange_val(volatile T *a, T c, T v, int mo,        \
						     int fmo);                               \
	T __tsan_atomic##bits##_load(const volatile T *a, int mo)                            \
	{                                                                                    \
		lp_rt_access((uint64_t)a, sizeof(T), LP_REF_READ, PC());                     \
		return __atomic_load_n(a, SC);                                               \
	}                                                                                    \
	void __tsan_atomic##bits##_store(volatile T *a, T v, int mo)                         \
	{                                                                                    \
		lp_rt_access((uint64_t)a, sizeof(T), LP_REF_WRITE, PC());                    \
		__atomic_store_n(a, v, SC);                                                  \
	}                                                                                    \
	T __tsan_atomic##bits##_exchange(volatile T *a, T v, int mo)                         \
	{                                                                                    \
		lp_rt_access((uint64_t)a, sizeof(T), LP_REF_WRITE, PC());                    \
		return __atomic_exchange_n(a, v, SC);                                        \
	}                                                                                    \
	T __tsan_atomic##bits##_fetch_add(volatile T *a, T v, int mo)                        \
	{                                                                                    \
		lp_rt_access((uint64_t)a, sizeof(T), LP_REF_WRITE, PC());                    \
		return __atomic_fetch_add(a, v, SC);                                         \
	}                                                                                    \
	T __tsan_atomic##bits##_fetch_sub(volatile T *a, T v, int mo)                        \
	{                                                                                    \
		lp_rt_access((uint64_t)a, sizeof(T), LP_REF_WRITE, PC());                    \
		return __atomic_fetch_sub(a, v, SC);                                         \
	}                                                                                    \
	T __tsan_atomic##bits##_fetch_and(volatile T *a, T v, int mo)                        \
	{                                                                                    \
		lp_rt_access((uint64_t)a, sizeof(T), LP_REF_WRITE, PC());                    \
		return __atomic_fetch_and(a, v, SC);                                         \
	}                                                                                    \
	T __tsan_atomic##bits##_fetch_or(volatile T *a, T v, int mo)                         \
	{                                                                                    \
		lp_rt_access((uint64_t)a, sizeof(T), LP_REF_WRITE, PC());                    \
		return __atomic_fetch_or(a, v, SC);                                          \
	}                                                                                    \
	T __tsan_atomic##bits##_fetch_xor(volatile T *a, T v, int mo)                        \
	{                                                                                    \
		lp_rt_access((uint64_t)a, sizeof(T), LP_REF_WRITE, PC());                    \
		return __atomic_fetch_xor(a, v, SC);                                         \
	}                                                                                    \
	T __tsan_atomic##bits##_fetch_nand(volatile T *a, T v, int mo)                       \
	{                                                                                    \
		lp_rt_access((uint64_t)a, sizeof(T), LP_REF_WRITE, PC());                    \
		return __atomic_fetch_nand(a, v, SC);                                        \
	}                                                                                    \
	int __tsan_atomic##bits##_compare_exchange_strong(volatile T *a, T *c, T v, int mo,  \
							  int fmo)                           \
	{                                                                                    \
		lp_rt_access((uint64_t)a, sizeof(T), LP_REF_WRITE, PC());                    \
		return __atomic_compare_exchange_n(a, c, v, 0, SC, SC);                      \
	}                                                                                    \
	int __tsan_atomic##bits##_compare_exchange_weak(volatile T *a, T *c, T v, int mo,    \
							int fmo)                             \
	{                                                                                    \
		lp_rt_access((uint64_t)a, sizeof(T), LP_REF_WRITE, PC());                    \
		return __atomic_compare_exchange_n(a, c, v, 1, SC, SC);                      \
	}                                                                                    \
	T __tsan_atomic##bits##_compare_exchange_val(volatile T *a, T c, T v, int mo,        \
						     int fmo)                                \
	{                                                                                    \
		lp_rt_access((uint64_t)a, sizeof(T), LP_REF_WRITE, PC());                    \
		__atomic_compare_exchange_n(a, &c, v, 0, SC, SC);                            \
		return c;                                                                    \
	}

TSAN_ATOMIC(8, uint8_t)
TSAN_ATOMIC(16, uint16_t)
TSAN_ATOMIC(32, uint32_t)
TSAN_ATOMIC(64, uint64_t)
/* 128-bit atomics: cmpxchg16b, inlined by compiling this file with -mcx16. */
TSAN_ATOMIC(128, unsigned __int128)

void __tsan_atomic_thread_fence(int mo);
void __tsan_atomic_signal_fence(int mo);
void __tsan_atomic_thread_fence(int mo)
{
	__atomic_thread_fence(SC);
}
void __tsan_atomic_signal_fence(int mo)
{
	__atomic_signal_fence(SC);
}
