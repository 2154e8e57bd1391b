/* locprof/report.h - every table the commands print, computed here and
 * formatted by the front ends: working-set graphs (the shared curve CSV and
 * SVG plots), the named caches, hot pcs and data objects of a profile
 * (lp_report), the exact curves and per-pc ranking of stack and reuse
 * distances (lp_dist_*), MemSpy attribution of a simulated trace
 * (lp_attrib), and the host's caches as sysfs describes them. */
#ifndef LOCPROF_REPORT_H
#define LOCPROF_REPORT_H

#include <locprof/common.h>
#include <locprof/exact.h>
#include <locprof/model.h>
#include <locprof/profile.h>
#include <locprof/sim.h>
#include <locprof/symbol.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One miss-ratio curve: ratio[i] at size[i] bytes, and the interval of
 * each point when the curve is a model's (iv[i]; NULL: none; SVG draws it
 * as a band). */
struct lp_curve {
	char *name; /* owned */
	uint64_t *size;
	double *ratio;
	struct lp_interval *iv;
	size_t n, cap;
};

/* A named point on the plot (a real cache and its predicted ratio). */
struct lp_marker {
	const char *label;
	uint64_t size;
	double ratio;
};

/* Read the shared curve CSV (docs/formats.md); one lp_curve per distinct
 * curve name, in order of appearance. Free with lp_curves_free(). */
int lp_curves_read_csv(const char *path, struct lp_curve **out, size_t *n);
void lp_curves_free(struct lp_curve *c, size_t n);

/* Plot curves (and reference curves, drawn dashed) on a log2 size axis. */
int lp_svg_write(const char *path, const char *title, const struct lp_curve *curves, size_t n,
		 const struct lp_curve *refs, size_t nrefs, const struct lp_marker *marks,
		 size_t nmarks);

/* ---- the report of a profile ------------------------------------------ */
/* A named cache: label, size, ways (0 = fully associative) and line given;
 * lru and random computed by lp_report_new(). */
struct lp_report_cache {
	char label[64];
	uint64_t size, ways, line;
	double lru;    /* set-associative LRU (StatStack + binomial model) */
	double random; /* random replacement, fully associative (StatCache) */
	struct lp_interval lru_iv, random_iv; /* their intervals (lo = hi =
					       * the ratio without resamples) */
};

enum { LP_REPORT_LRU = 1u, LP_REPORT_RANDOM = 2u };

struct lp_report_params {
	unsigned line_index;  /* which of the profile's line sizes */
	const uint64_t *sizes; /* the working-set graph's cache sizes, bytes */
	size_t nsizes;
	const struct lp_report_cache *caches; /* named caches (copied) */
	size_t ncaches;
	/* LP_REPORT_LRU (StatStack) and/or LP_REPORT_RANDOM (StatCache): the
	 * curves computed, and the model ranking the hot spots (LRU if both). */
	unsigned policies;
	uint64_t window; /* models' window in line accesses; 0 = the profile's */
	int cold;        /* count cold misses (dangling samples) */
	int fill;        /* StatCache fill mode: 0, 1 or LP_STATCACHE_FILL_AUTO
			  * (lp_statcache_set_fill(), docs/models.md) */
	int windows;     /* compute the random-replacement ratio per window */
	unsigned resamples; /* intervals of the curves and named caches from
			     * this many resamples (lp_model_intervals());
			     * 0 = none */
	uint64_t seed;      /* of the resamples */
	uint64_t at;     /* bytes: the cache of the windows and hot spots; 0 =
			  * the first named cache, else 32K */
	size_t top;      /* hot pcs and data objects kept; 0 = none computed */
	struct lp_symbols *syms; /* names pcs, allocation sites and globals;
				  * may be NULL; must outlive the report */
};

struct lp_report_info {
	double line;        /* line size, bytes */
	size_t samples;     /* samples of that line size */
	uint64_t accesses;  /* line accesses of the run */
	int accesses_partial; /* the count is below the samples' (a killed run:
			       * lp_profile_count_partial()) */
	uint64_t at;        /* the cache size of windows and hot spots, bytes */
	const char *hot_policy; /* "LRU" or "random": the model of the hot spots */
	double total_misses; /* hot spots: the samples' summed miss probabilities
			      * (not scaled by the rate): the shares' base */
	/* data objects: heap blocks in the profile, allocations of the run,
	 * and whether the blocks are only the ones samples touched */
	size_t heap_blocks;
	uint64_t run_allocs;
	int touched_blocks_only;
	uint64_t window_length; /* windows: line accesses per window */
};

/* A hot pc or data object: misses estimated for the whole run (each sample
 * stands for 1/rate line accesses) and the share of all predicted misses. */
struct lp_report_pc {
	uint64_t pc;      /* the pc of the access that misses */
	double misses, share;
	const char *name; /* "func (file.c:12)", "func", or NULL when unknown */
};
struct lp_report_object {
	const char *name; /* "heap@<allocation site>", a global's name, "(other)" */
	double misses, share;
};
struct lp_report_window {
	uint64_t start; /* line accesses */
	double ratio;   /* random replacement at lp_report_info.at */
};

struct lp_report;

/* Compute every table of params for profile p (which must outlive the
 * report). LP_EINVAL for a line index the profile lacks or no policy,
 * LP_ECORRUPT for a line size of 0. */
int lp_report_new(struct lp_report **out, const struct lp_profile *p,
		  const struct lp_report_params *params);
void lp_report_free(struct lp_report *r);
const struct lp_report_info *lp_report_info(const struct lp_report *r);
/* The curves asked for, LRU ("statstack") first, then random ("statcache"),
 * each with a point per params.sizes. */
size_t lp_report_curves(const struct lp_report *r, const struct lp_curve **out);
size_t lp_report_caches(const struct lp_report *r, const struct lp_report_cache **out);
size_t lp_report_windows(const struct lp_report *r, const struct lp_report_window **out);
/* Sorted by decreasing misses, at most params.top, pcs with misses only. */
size_t lp_report_pcs(const struct lp_report *r, const struct lp_report_pc **out);
size_t lp_report_objects(const struct lp_report *r, const struct lp_report_object **out);

/* ---- exact stack and reuse distances: curves and pcs ------------------ */
/* One point of the miss-ratio curve (stack distances: accesses that miss a
 * fully-associative LRU cache of x bytes) or of the reuse-distance
 * survival curve (accesses whose reuse distance is >= x, or cold). */
struct lp_dist_point {
	uint64_t x;         /* bytes (stack) or a distance (reuse) */
	uint64_t threshold; /* lines of the cache (stack) or x (reuse) */
	double misses;      /* accesses at or beyond threshold, cold ones included */
	double misses_nocold;
	double ratio;        /* misses / line accesses */
	double ratio_nocold; /* misses_nocold / non-cold line accesses */
	int exact;          /* 0: interpolated inside a histogram bin */
};

/* The points for line size li of e: powers of two up to the footprint
 * (stack: one line up) or beyond the largest distance (reuse: 0, 1, 2,
 * ...), plus the extra ones, sorted and without repeats. kind is the kind
 * of distances e computed. free() *out. */
int lp_dist_curve(const struct lp_exact *e, size_t li, enum lp_distance kind,
		  const uint64_t *extra, size_t nextra, struct lp_dist_point **out, size_t *n);

/* The point that ranks pcs: the first size given, else 32K (stack) or
 * 1024 (reuse). */
uint64_t lp_dist_rank_point(enum lp_distance kind, const uint64_t *sizes, size_t n);

struct lp_dist_pc {
	size_t index; /* for lp_exact_pc_hist() */
	uint64_t pc, accesses, cold;
	double misses; /* accesses at or beyond the rank point, cold included */
};
/* Every pc of line size li (e kept per-pc histograms), by decreasing
 * misses at point (bytes for stack, a distance for reuse), then pc.
 * free() *out. */
int lp_dist_pcs(const struct lp_exact *e, size_t li, enum lp_distance kind, uint64_t point,
		struct lp_dist_pc **out, size_t *n);

/* ---- MemSpy attribution ----------------------------------------------- */
/* lp_attrib simulates one cache and charges every reference and miss to
 * its pc, its function and its data object (a global by its symbol, a heap
 * block by the call site that allocated it, from LP_EV_ALLOC/LP_EV_FREE
 * events), giving MemSpy's table of memory stall time per (data object,
 * procedure) pair, with cold and replacement misses. */
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
