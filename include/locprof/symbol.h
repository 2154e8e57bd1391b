/* locprof/symbol.h - symbolisation and MemSpy-style attribution.
 *
 * lp_symbols maps a pc to function + file:line and a data address to the
 * global or static variable (ELF STT_OBJECT symbol with a size) holding it,
 * with elfutils' libdwfl, from the mappings a trace carries or from one
 * non-PIE executable.
 *
 * lp_attrib simulates one cache and charges every reference and miss to
 * its pc, its function and its data object (a global by its symbol, a heap
 * block by the call site that allocated it, from LP_EV_ALLOC/LP_EV_FREE
 * events), giving MemSpy's table of memory stall time per (data object,
 * procedure) pair, with cold and replacement misses. */
#ifndef LOCPROF_SYMBOL_H
#define LOCPROF_SYMBOL_H

#include <locprof/common.h>
#include <locprof/mapping.h>
#include <locprof/sim.h>

#ifdef __cplusplus
extern "C" {
#endif

struct lp_symbols;

/* maps may be NULL; binary (a non-PIE executable, used at its link
 * addresses) may be NULL. At least one must be given. A mapping with a
 * build-id is skipped when the file at its path has another one (it was
 * rebuilt since the run); LP_EINVAL when no file at all could be used. */
int lp_symbols_new(struct lp_symbols **out, const struct lp_mappings *maps, const char *binary);
void lp_symbols_free(struct lp_symbols *s);
/* A message naming the mapped files skipped because their build-id
 * changed, or NULL. */
const char *lp_symbols_warning(const struct lp_symbols *s);

/* Strings are owned by s and valid until lp_symbols_free(). */
struct lp_code_loc {
	const char *function; /* NULL when unknown */
	const char *file;     /* NULL when there is no line information */
	int line;
	int column;           /* 0 when unknown */
};
/* 1 when something was found, 0 when the pc is unknown. Answers are
 * cached per pc. */
int lp_symbols_pc(struct lp_symbols *s, uint64_t pc, struct lp_code_loc *out);

struct lp_data_sym {
	const char *name;
	uint64_t start, size;
};
/* 1 when addr lies inside a sized STT_OBJECT symbol, else 0. A binary
 * search in a table of all data symbols, built on the first call. */
int lp_symbols_data(struct lp_symbols *s, uint64_t addr, struct lp_data_sym *out);

/* Whether the ELF file at path was built with `locprof cc`: it carries the
 * runtime's section or names its symbols (a stripped file keeps the
 * section). 1 or 0; LP_EFORMAT when the file is not ELF (a script, say),
 * LP_EIO when it cannot be opened. */
int lp_binary_instrumented(const char *path);

/* ---- attribution ------------------------------------------------------- */
struct lp_attrib_params {
	struct lp_cache_spec cache;
	uint64_t seed;
	double miss_latency; /* cycles per miss */
	double compute_cost; /* cycles per reference */
};

struct lp_attrib;
/* syms may be NULL: pcs and objects are then named by address. */
int lp_attrib_new(struct lp_attrib **out, const struct lp_attrib_params *p, struct lp_symbols *syms);
void lp_attrib_free(struct lp_attrib *a);
int lp_attrib_refs(struct lp_attrib *a, const struct lp_ref *refs, size_t n);

struct lp_attrib_row {
	const char *object;   /* "g_table", "heap@make_list (list.c:12)", "(other)" */
	const char *function; /* "walk", or "0x401136" when unknown */
	const char *where;    /* for pc rows: "file.c:12", else "" */
	uint64_t pc;          /* pc rows only */
	uint64_t refs, accesses, misses, cold, replacement;
	double stall, compute, share; /* stall = misses * latency; share of all stall */
};
enum lp_attrib_view {
	LP_ATTRIB_PAIRS,     /* (data object, function), MemSpy's bottleneck table */
	LP_ATTRIB_OBJECTS,   /* data objects */
	LP_ATTRIB_FUNCTIONS, /* functions: stall vs compute (MemSpy's first display) */
	LP_ATTRIB_PCS,       /* instructions */
};
/* Rows sorted by decreasing stall (then name); valid until the next call
 * or lp_attrib_free(). */
size_t lp_attrib_rows(struct lp_attrib *a, enum lp_attrib_view view, const struct lp_attrib_row **rows);
/* Totals over everything. */
void lp_attrib_total(const struct lp_attrib *a, struct lp_attrib_row *out);

#ifdef __cplusplus
}
#endif
#endif
