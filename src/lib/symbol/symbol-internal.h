/* Internal: the uncached libdwfl lookups behind lp_symbols_pc() and
 * lp_symbols_data(), kept callable so that tests can check the caches
 * against them. */
#ifndef LP_SYMBOL_INTERNAL_H
#define LP_SYMBOL_INTERNAL_H

#include "common/htab.h"

#include <locprof/symbol.h>

int lp_symbols_pc_dwfl(struct lp_symbols *s, uint64_t pc, struct lp_code_loc *out);
int lp_symbols_data_dwfl(struct lp_symbols *s, uint64_t addr, struct lp_data_sym *out);
/* Sized data symbols in the cache (builds it). */
size_t lp_symbols_data_count(struct lp_symbols *s);
/* The address range of entry i < lp_symbols_data_count(). */
void lp_symbols_data_range(struct lp_symbols *s, size_t i, uint64_t *start, uint64_t *end);

/* The innermost function of pc's inline chain (DWARF) whose readable
 * name skip() rejects not, with its line: pc's own for the innermost
 * function, else the line of the call it made into the next inlined one;
 * and the function it is itself inlined into, at the call (out's caller
 * fields; NULL where it is not inlined); path (unless NULL): the line's
 * file as lp_code_loc's path. 2 when found and it is the innermost
 * function, 1 when found inlined-into; 0 (nothing set) when none, or pc
 * has no DWARF. */
int lp_symbols_inline_first(struct lp_symbols *s, uint64_t pc, int (*skip)(struct lp_symbols *, const char *),
			    struct lp_alloc_site *out, const char **path);
/* The module of pc (lp_symbols_module()) and pc's address in its ELF
 * file, the parts of lp_symbols_pc_address()'s "gzip+0x430e": 1, or 0
 * (nothing set) when no module holds pc or s is NULL. */
int lp_symbols_pc_file_address(struct lp_symbols *s, uint64_t pc, const char **module, uint64_t *address);
/* compute(s, pc, out), remembered per pc: always the same compute. */
int lp_symbols_site_cached(struct lp_symbols *s, uint64_t pc, struct lp_alloc_site *out,
			   int (*compute)(struct lp_symbols *, uint64_t, struct lp_alloc_site *));

/* The program's own allocation wrappers (lp_symbols_alloc_wrappers(),
 * alloc-site.c): each allocation call site's caller, and the names the
 * user gave. */
struct lp_alloc_wrappers {
	struct lp_htab callers; /* frame pc -> its caller's pc, LP_ALLOC_MANY_CALLERS if several */
	char **names;           /* fnmatch(3) patterns */
	size_t nnames;
	struct lp_htab line_answers; /* site pc -> how its name tells it apart (line_answer()) */
	struct lp_htab calls;       /* call sites of allocations told without a stack */
};
#define LP_ALLOC_MANY_CALLERS UINT64_MAX
/* s's wrappers (never NULL for a non-NULL s), and their release. */
struct lp_alloc_wrappers *lp_symbols_wrappers(struct lp_symbols *s);
void lp_alloc_wrappers_release(struct lp_alloc_wrappers *w);
/* Forget the allocation sites already named (their frames' answers
 * change with the wrappers). */
void lp_symbols_forget_sites(struct lp_symbols *s);

/* Strings owned by one lp_symbols, each stored once. */
struct lp_strpool {
	char **v;
	size_t mask, n;
};
/* A copy of s in the pool (the same pointer for equal strings); NULL when
 * s is NULL or memory runs out. */
const char *lp_strpool_add(struct lp_strpool *p, const char *s);
void lp_strpool_release(struct lp_strpool *p);

/* name as a person reads it: demangled without parameters, template
 * arguments as <...>, gcc's outlined OpenMP region `f._omp_fn.N` as
 * `f [omp region]`. In the pool. */
const char *lp_name_readable(struct lp_strpool *p, const char *name);
/* Whether name is an outlined OpenMP region (gcc's or clang's). */
int lp_name_omp_outlined(const char *name);
/* "enclosing [omp region]", in the pool. */
const char *lp_name_omp_region(struct lp_strpool *p, const char *enclosing);

#endif
