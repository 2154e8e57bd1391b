/* The clang path: -fsanitize-coverage=edge,trace-loads,trace-stores makes
 * the compiler call one of these before every load and store (the vector
 * code of -O2 uses the 16-byte ones). Each is the inline snippet of rt.h.
 * In liblocprof-rt-lto.a this file is LLVM bitcode (LP_RT_INLINED), so
 * lld's LTO inlines the snippet into the program (docs/runtime.md). */
#include "rt.h"

#include <locprof/common.h>

#define LP_RT_LOAD_STORE(n)                                                            \
	void __sanitizer_cov_load##n(void *addr);                                      \
	void __sanitizer_cov_store##n(void *addr);                                     \
	__attribute__((always_inline)) void __sanitizer_cov_load##n(void *addr)        \
	{                                                                              \
		lp_rt_access((uint64_t)addr, n, LP_REF_READ, LP_RT_PC());              \
	}                                                                              \
	__attribute__((always_inline)) void __sanitizer_cov_store##n(void *addr)       \
	{                                                                              \
		lp_rt_access((uint64_t)addr, n, LP_REF_WRITE, LP_RT_PC());             \
	}

LP_RT_LOAD_STORE(1)
LP_RT_LOAD_STORE(2)
LP_RT_LOAD_STORE(4)
LP_RT_LOAD_STORE(8)
LP_RT_LOAD_STORE(16)
