/* locprof/exact.h - exact reuse and stack distances, and their histograms.
 *
 * A reference touches the lines addr>>log2(line) ... (addr+size-1)>>log2(line)
 * in order (an access that straddles lines touches each of them; one that
 * runs past the top of the address space stops at the last line). Time
 * advances by one per line access. Only LP_REF_READ and LP_REF_WRITE records
 * count; allocation events are skipped.
 *
 *   reuse distance  line accesses, of any line, strictly between two
 *                   accesses to the same line (StatCache)
 *   stack distance  distinct other lines accessed between them (LRU, Mattson)
 *
 * A first touch has infinite distance (cold): LP_DIST_COLD.
 *
 * Two levels of API: lp_distcalc turns a sequence of line numbers into one
 * distance per line access (what the tests compare between algorithms);
 * lp_exact consumes references for one or several line sizes and keeps
 * histograms, optionally per pc. Algorithms are described in
 * docs/algorithms.md.
 */
#ifndef LOCPROF_EXACT_H
#define LOCPROF_EXACT_H

#include <locprof/common.h>

#ifdef __cplusplus
extern "C" {
#endif

#define LP_DIST_COLD UINT64_MAX

enum lp_distance {
	LP_DIST_STACK = 0,
	LP_DIST_REUSE = 1,
};

/* Default hard limit of the "prealloc" algorithm, in line accesses. */
#define LP_PREALLOC_N_DEFAULT (UINT64_C(1) << 28)

/* ---- histograms --------------------------------------------------------
 * Exact counts for distances below 256; above, each power-of-two octave
 * [2^k, 2^(k+1)) is split into 128 equal bins, so every integer with at most
 * 8 significant bits (256, 384, 49152, 1.5M, ...) is a bin boundary. Counts
 * are kept only up to the largest bin used, so a histogram of short
 * distances stays small. */
struct lp_hist;

#define LP_HIST_NBINS 7424 /* 256 + 56 * 128: covers every u64 distance */

int lp_hist_new(struct lp_hist **out);
void lp_hist_free(struct lp_hist *h);
/* Add count occurrences of distance d (LP_DIST_COLD: count cold accesses). */
int lp_hist_add(struct lp_hist *h, uint64_t d, uint64_t count);
/* Add every count of src to dst. */
int lp_hist_merge(struct lp_hist *dst, const struct lp_hist *src);

/* Bin index of a distance, and the inclusive range [lo, hi] of a bin. */
size_t lp_hist_bin_of(uint64_t d);
void lp_hist_bin_range(size_t bin, uint64_t *lo, uint64_t *hi);
/* Nonzero if c is the low end of a bin (counts "d >= c" are then exact). */
int lp_hist_is_boundary(uint64_t c);

/* Number of bins holding data (the largest used bin + 1; 0 if none). */
size_t lp_hist_nbins(const struct lp_hist *h);
uint64_t lp_hist_bin_count(const struct lp_hist *h, size_t bin);
uint64_t lp_hist_cold(const struct lp_hist *h);
/* Finite distances counted (cold excluded). */
uint64_t lp_hist_finite(const struct lp_hist *h);
/* Largest finite distance added (0 if none). */
uint64_t lp_hist_max(const struct lp_hist *h);
/* Finite distances >= c: exact when lp_hist_is_boundary(c), otherwise the
 * bin containing c is assumed uniform and its share is interpolated. */
double lp_hist_count_ge(const struct lp_hist *h, uint64_t c);
/* Misses of a fully-associative LRU cache of c lines (for stack distances):
 * cold + count(d >= c); same exactness as lp_hist_count_ge(). */
double lp_hist_misses(const struct lp_hist *h, uint64_t c);

/* ---- per-access distances --------------------------------------------- */
struct lp_exact_opts {
	enum lp_distance kind;
	const char *algorithm; /* stack distance algorithm; NULL = "fast" */
	uint64_t prealloc_n;   /* limit of "prealloc"; 0 = LP_PREALLOC_N_DEFAULT */
	uint64_t fast_min_slots; /* "fast": smallest time capacity, a power of two
				  * >= 512; 0 = 2^20. Small values force frequent
				  * compactions (for tests). */
	const char *fast_isa;    /* "fast": instruction set of its inner loop,
				  * "avx512", "avx2", "popcnt" or "generic";
				  * NULL = the best this CPU has (for tests and
				  * benchmarks of each variant). */
};

/* The name of the variant of "fast" that lp_exact_opts.fast_isa = name
 * selects on this CPU (name NULL: the best one), or NULL if that variant is
 * unknown or unsupported here. */
const char *lp_exact_fast_isa(const char *name);

/* Comma-separated names of the stack distance algorithms ("fast, naive, ..."). */
const char *lp_exact_algorithm_names(void);
int lp_exact_algorithm_known(const char *name);

struct lp_distcalc;

int lp_distcalc_new(struct lp_distcalc **out, const struct lp_exact_opts *opts);
/* The distance of each of n line accesses, in order, into dist[]
 * (LP_DIST_COLD for a first touch). On failure (LP_ENOMEM; LP_ELIMIT from
 * "prealloc") returns the error; *done (may be NULL) says how many
 * distances were written. */
int lp_distcalc_run(struct lp_distcalc *c, const uint64_t *lines, size_t n, uint64_t *dist,
		    size_t *done);
/* Bytes held by the data structures. */
size_t lp_distcalc_memory(const struct lp_distcalc *c);
void lp_distcalc_free(struct lp_distcalc *c);

/* ---- the engine: references in, histograms out ------------------------ */
struct lp_exact_config {
	enum lp_distance kind;
	const char *algorithm;      /* NULL = "fast" */
	const uint64_t *line_sizes; /* powers of two, 1 .. 2^40; NULL = {64} */
	size_t n_line_sizes;
	int per_pc;                 /* also keep a histogram per pc */
	uint64_t prealloc_n;
};

struct lp_exact;

int lp_exact_new(struct lp_exact **out, const struct lp_exact_config *cfg);
/* Feed references (any record kind; only reads and writes count). On
 * failure the histograms still hold every line access processed before. */
int lp_exact_feed(struct lp_exact *e, const struct lp_ref *refs, size_t n);
void lp_exact_free(struct lp_exact *e);

/* Read and write references fed so far. */
uint64_t lp_exact_references(const struct lp_exact *e);
size_t lp_exact_n_line_sizes(const struct lp_exact *e);
uint64_t lp_exact_line_size(const struct lp_exact *e, size_t i);
uint64_t lp_exact_line_accesses(const struct lp_exact *e, size_t i);
/* Distinct lines touched (= cold accesses). */
uint64_t lp_exact_distinct_lines(const struct lp_exact *e, size_t i);
const struct lp_hist *lp_exact_hist(const struct lp_exact *e, size_t i);
/* Per-pc histograms (per_pc only): how many pcs, and the k-th (any order). */
size_t lp_exact_pc_count(const struct lp_exact *e, size_t i);
const struct lp_hist *lp_exact_pc_hist(const struct lp_exact *e, size_t i, size_t k, uint64_t *pc);
size_t lp_exact_memory(const struct lp_exact *e);

#ifdef __cplusplus
}
#endif
#endif
