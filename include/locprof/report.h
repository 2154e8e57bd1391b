/* locprof/report.h - every table the commands print, computed here and
 * formatted by the front ends: working-set graphs (the shared curve CSV and
 * SVG plots), the named caches, hot pcs, source lines, functions, data
 * objects and threads of a profile (lp_report), the comparison of two
 * profiles (lp_report_diff), the grouping of misses by source line and
 * function with the source text to annotate (lp_hotspots), the exact curves and per-pc ranking of stack and reuse
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

/* ---- hot spots by source line, file and function ----------------------- */
/* lp_hotspots groups misses charged to pcs by the source line, the source
 * file and the function (with the function it was inlined into) that the
 * debug information gives each pc (lp_symbols_pc()). lp_report fills one
 * with a profile's predicted misses, lp_attrib with a trace's simulated
 * ones, so every command ranks lines and functions the same way. To
 * annotate a file as cg_annotate does: lp_hotspots_files() for the hottest
 * files, lp_hotspots_file_lines() for the counts of each line, and
 * lp_source_read() for its text. Strings are owned by the hot spots. */
struct lp_source_line {
	const char *path; /* the source file as the debug info names it */
	const char *file; /* its base name */
	int line;
	double accesses, misses; /* line accesses and misses charged to its pcs */
	double share;            /* of all misses (lp_hotspots_totals()) */
	/* hot spots of samples (lp_hotspots_new_sampled()): the summed squares
	 * of the samples' misses, and the 95% interval of the misses
	 * (lp_report_count_interval()); exact counts: 0, and misses twice */
	double misses_sq, misses_lo, misses_hi;
};
struct lp_source_file {
	const char *path, *file;
	double accesses, misses, share;
	double misses_sq, misses_lo, misses_hi; /* as lp_source_line's */
	size_t first, nlines; /* its lines, internal to lp_hotspots_file_lines() */
};
struct lp_source_function {
	const char *function; /* innermost function ("0x401136" when unknown) */
	const char *caller;   /* the function it was inlined into, else NULL */
	const char *label;    /* "function" or "function in caller" */
	double accesses, misses, share;
	double misses_sq, misses_lo, misses_hi; /* as lp_source_line's */
};

struct lp_hotspots;
/* syms may be NULL (then only the totals and unknown functions); it must
 * outlive lp_hotspots_finish(). */
int lp_hotspots_new(struct lp_hotspots **out, struct lp_symbols *syms);
/* Hot spots whose every lp_hotspots_add() is one sample standing for
 * weight line accesses (its misses at most weight): the rows also get
 * the 95% interval of their misses (lp_report_count_interval()). copies:
 * how many times each recorded sample is added on average (1; more in a
 * phase-guided profile's expansion, lp_phases_expand(), whose copies
 * vary together). */
int lp_hotspots_new_sampled(struct lp_hotspots **out, struct lp_symbols *syms, double weight, double copies);
void lp_hotspots_free(struct lp_hotspots *h);
/* Charge accesses and misses to pc (any number of times per pc); pc 0
 * (unknown) counts in the totals only. */
int lp_hotspots_add(struct lp_hotspots *h, uint64_t pc, double accesses, double misses);
/* Symbolise the pcs and build the tables (once, after the last add). */
int lp_hotspots_finish(struct lp_hotspots *h);
/* By decreasing misses, then accesses, then name. */
size_t lp_hotspots_lines(const struct lp_hotspots *h, const struct lp_source_line **out);
size_t lp_hotspots_files(const struct lp_hotspots *h, const struct lp_source_file **out);
size_t lp_hotspots_functions(const struct lp_hotspots *h, const struct lp_source_function **out);
/* The program's own lines: every pc's line, but where its innermost
 * function is the C++ standard library's (inlined std:: code) the line of
 * the program's code that called into it (lp_symbols_own_line()); by
 * misses. None (0) when no pc with misses is in such code. */
size_t lp_hotspots_own_lines(const struct lp_hotspots *h, const struct lp_source_line **out);
/* The lines of file number f (of lp_hotspots_files()), by line number. */
size_t lp_hotspots_file_lines(const struct lp_hotspots *h, size_t f, const struct lp_source_line **out);
void lp_hotspots_totals(const struct lp_hotspots *h, double *accesses, double *misses);
/* The hot spots of several runs summed (each one finished): lines by
 * path and line number, functions by name, totals summed; finished, with
 * no symbols of its own (every string copied). */
int lp_hotspots_merge(struct lp_hotspots **out, const struct lp_hotspots *const *parts, size_t n);

/* A source file's text: lines[i] is line i + 1, without its newline. */
struct lp_source_text {
	char *path; /* the file read */
	const char **lines;
	size_t n;
};
/* Read the source file that path (from the debug info) names: for each
 * of dirs in order, DIR/ + the path's tails, longest first (so DIR remaps
 * a moved tree, or holds the file by its base name), then path itself.
 * LP_EIO ("source file 'PATH' not found ...") when none exists. */
int lp_source_read(struct lp_source_text **out, const char *path, const char *const *dirs, size_t ndirs);
void lp_source_free(struct lp_source_text *t);

/* ---- the report of a profile ------------------------------------------ */
/* A named cache: label, size, ways (0 = fully associative) and line given;
 * lru and random computed by lp_report_new(). */
struct lp_report_cache {
	char label[64];
	uint64_t size, ways, line;
	double lru;    /* set-associative LRU (StatStack + the placement model) */
	double random; /* random replacement (StatCache; in a set-associative
			* cache, where a reuse's lines crowd its set) */
	struct lp_interval lru_iv, random_iv; /* their intervals (lo = hi =
					       * the ratio without resamples;
					       * hi includes lru_unseen) */
	/* the same per reference (lp_ref_miss_ratio()) */
	double lru_ref, random_ref;
	/* how much higher lru could be where no sample showed the layout
	 * (lp_statstack_setassoc_unseen()): the upper ends of lru_iv and
	 * random_iv add it to what another seed could give */
	double lru_unseen;
};

enum { LP_REPORT_LRU = 1u, LP_REPORT_RANDOM = 2u };

/* Where a curve's ratio is also evaluated around each size, for its
 * interval: LP_REPORT_SLACK_STEPS sizes on either side, each at least
 * LP_REPORT_SLACK_STEP (a share of the size) from the next, so +-15% or
 * as far as the sampling error of the stack distances near the size
 * reaches (report-slack.c).
 * StatStack's stack distance estimates put a stencil's cliff 8 to 14%
 * early (jacobi2d at 520, one seed in three, docs/models.md "Intervals"),
 * so a drop of the curve that near the size is within its error. */
#define LP_REPORT_SLACK_STEPS 6
#define LP_REPORT_SLACK_STEP 0.025

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
			     * this many resamples (lp_model_intervals()),
			     * and each curve size's interval widened to the
			     * ratios 15% (or more: LP_REPORT_SLACK_STEPS)
			     * either side of it where the curve drops by
			     * LP_INTERVAL_CLIFF or more between neighbouring
			     * sizes there (a cliff); 0 = none */
	uint64_t seed;      /* of the resamples */
	unsigned jobs;      /* resamples evaluated at once, on threads
			     * (lp_interval_params.jobs; 0 or 1: one at a
			     * time); the report is the same whatever it is */
	uint64_t at;     /* bytes: the cache of the windows and hot spots; 0 =
			  * the first named cache, else 32K */
	uint64_t at_ways; /* its ways for the LRU hot spots (binomial model);
			   * 0 = fully associative */
	size_t top;      /* hot pcs and data objects kept; 0 = none computed
			  * (nor the hot lines and functions) */
	int threads;     /* compute the per-thread table */
	int share;       /* compute the threads-and-caches tables (placements,
			  * per-thread private caches, coherence misses) */
	struct lp_symbols *syms; /* names pcs, allocation sites and globals;
				  * may be NULL; must outlive the report */
};

struct lp_report_info {
	double line;        /* line size, bytes */
	size_t samples;     /* samples of that line size the models read */
	size_t recorded;    /* samples of that line size in the profile: fewer
			     * than samples in a phase-guided profile, whose
			     * phases' samples also stand for their
			     * recurrences (lp_phases_expand()) */
	size_t phases;      /* phases of a phase-guided profile, else 0 */
	uint64_t accesses;  /* line accesses of the run */
	uint64_t references; /* references (loads and stores) of the run */
	int accesses_partial; /* the count is below the samples' (a killed run:
			       * lp_profile_count_partial()) */
	uint64_t at;        /* the cache size of windows and hot spots, bytes */
	const char *hot_policy; /* "LRU" or "random": the model of the hot spots */
	double total_misses; /* hot spots: the samples' summed miss probabilities
			      * (not scaled by the rate): the shares' base */
	double sample_weight; /* line accesses one sample stands for (1/rate;
			       * the largest of the ranks' in a merged report):
			       * the hot spots' intervals */
	/* data objects: heap blocks in the profile, allocations of the run,
	 * and whether the blocks are only the ones samples touched */
	size_t heap_blocks;
	uint64_t run_allocs;
	int touched_blocks_only;
	uint64_t window_length; /* windows: line accesses per window */
	/* the profile's region of interest (lp_profile.region): NULL, the
	 * whole run */
	const char *region;
	uint64_t region_skipped, region_entries;
	/* params.share: the samples carry shared time (lp_profile.shared;
	 * else every placement is the private view), and the threads */
	int shared_time;
	uint32_t threads;
	double together; /* lp_share_together(): NAN when unknown */
};

/* A hot pc or data object: misses estimated for the whole run (each sample
 * stands for 1/rate line accesses) and the share of all predicted misses. */
struct lp_report_pc {
	uint64_t pc;      /* the pc of the access that misses */
	double misses, share;
	/* the summed squares of its samples' misses, and the misses' 95%
	 * interval from them (lp_report_count_interval()) */
	double misses_sq, misses_lo, misses_hi;
	const char *name; /* "func (file.c:12)", "func", "gzip+0x430e" (a stripped
			   * binary: lp_symbols_pc_address()), or NULL when unknown */
};
struct lp_report_object {
	const char *name; /* "heap@<allocation site>", a global's name, "(other)" */
	double misses, share;
	double misses_sq, misses_lo, misses_hi; /* as lp_report_pc's */
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
/* The 95% interval [*lo, *hi] of a count estimated from samples that
 * each stand for weight line accesses: sum is the samples' summed
 * contributions (each at most weight), sum_sq the sum of their squares
 * (Fay and Feuer's gamma interval; with whole samples, Garwood's exact
 * Poisson interval; [0, 3.69 weight] for a count of 0). A weight of 0
 * means an exact count: *lo = *hi = sum. */
void lp_report_count_interval(double sum, double sum_sq, double weight, double *lo, double *hi);
/* Sorted by decreasing misses, at most params.top, pcs with misses only. */
size_t lp_report_pcs(const struct lp_report *r, const struct lp_report_pc **out);
size_t lp_report_objects(const struct lp_report *r, const struct lp_report_object **out);
/* The pcs that miss on each hot data object (MemSpy's data object x code
 * view): for each object of lp_report_objects(), in that order, its pcs by
 * decreasing misses (then pc), at most params.top of them. */
struct lp_report_pair {
	size_t object;    /* index in lp_report_objects() */
	uint64_t pc;      /* the pc of the access that misses */
	const char *name; /* the pc's name, as lp_report_pc's; NULL when unknown */
	double misses;    /* line accesses of the whole run */
	double share;     /* of the object's misses */
	double misses_sq, misses_lo, misses_hi; /* as lp_report_pc's */
};
size_t lp_report_pairs(const struct lp_report *r, const struct lp_report_pair **out);
/* Every pc's misses (the hot pcs' model) by source line and function;
 * NULL when params.top is 0. Owned by the report. */
const struct lp_hotspots *lp_report_hotspots(const struct lp_report *r);

/* Per thread (params.threads): a sample counts for the thread that made
 * the sampled access; the misses are those of its reuse, predicted by the
 * LRU model (StatStack, set-associative by the binomial model) for each
 * cache of lp_report_thread_caches(). Estimated from the samples: a
 * sample stands for 1/rate line accesses. */
struct lp_report_thread {
	uint32_t tid;         /* the profile's thread number */
	uint64_t references;  /* loads and stores of the run (exact; 0 when the
			       * profile does not count them per thread) */
	size_t samples;
	double accesses;      /* line accesses: its references times the run's
			       * line accesses per reference (samples / rate
			       * where references are not counted per thread) */
	const double *misses; /* one per thread cache */
};
/* Sorted by tid. */
size_t lp_report_threads(const struct lp_report *r, const struct lp_report_thread **out);
/* The caches of the per-thread misses: the named caches, or without any
 * the hot spots' (params.at, at_ways). */
size_t lp_report_thread_caches(const struct lp_report *r, const struct lp_report_cache **out);

/* ---- the time view (report --timeline) -------------------------------- */
/* The miss ratio over time of a few caches, with the phases marked. A
 * phase-guided profile (record --phases) gives one row per interval of
 * each thread, whose ratio is its phase's (each phase's model is built
 * from its own samples, lp_phases_new()), and each phase's top functions;
 * a constant-rate profile gives one row per StatCache window (random
 * replacement, whatever the policy) and no phases. */
struct lp_timeline_params {
	unsigned line_index;
	const struct lp_report_cache *caches; /* at least one; copied */
	size_t ncaches;
	unsigned policy;  /* LP_REPORT_LRU (set-associative, the placement
			   * model) or LP_REPORT_RANDOM (StatCache) */
	int cold;
	int fill;         /* StatCache fill mode, as lp_report_params.fill */
	uint64_t window;  /* constant-rate profiles: the window; 0 = the profile's */
	size_t top;       /* functions per phase, by misses in the first cache */
	struct lp_symbols *syms; /* may be NULL; must outlive the timeline */
};

#define LP_TIMELINE_NO_PHASE SIZE_MAX
struct lp_timeline_row {
	uint32_t tid;      /* the profile's thread (0 for windows) */
	uint64_t start;    /* line accesses of its thread's clock */
	uint64_t accesses; /* its length in line accesses */
	size_t phase;      /* index into lp_timeline_phases(), or LP_TIMELINE_NO_PHASE */
	double rate;       /* sampling rate in it */
	const double *ratio; /* one per cache: misses per line access */
};

struct lp_timeline_fn {
	const char *label; /* "function" or "function in caller" */
	double misses;     /* line accesses of the whole run that miss */
	double share;      /* of the phase's misses */
};

struct lp_timeline_phase {
	struct lp_phase_info info;
	const double *ratio;  /* one per cache */
	const struct lp_timeline_fn *top;
	size_t ntop;
};

struct lp_timeline;
int lp_timeline_new(struct lp_timeline **out, const struct lp_profile *p,
		    const struct lp_timeline_params *pa);
void lp_timeline_free(struct lp_timeline *t);
/* Rows by thread, then time. */
size_t lp_timeline_rows(const struct lp_timeline *t, const struct lp_timeline_row **out);
size_t lp_timeline_phases(const struct lp_timeline *t, const struct lp_timeline_phase **out);
size_t lp_timeline_caches(const struct lp_timeline *t, const struct lp_report_cache **out);
/* The whole run's ratio per cache (phases weighted by their line accesses). */
const double *lp_timeline_run(const struct lp_timeline *t);
/* The policy of the ratios: LP_REPORT_LRU or LP_REPORT_RANDOM (a
 * constant-rate profile's windows are always StatCache's). */
unsigned lp_timeline_policy(const struct lp_timeline *t);
/* Samples of the line size in no phase (a thread without intervals). */
size_t lp_timeline_unphased(const struct lp_timeline *t);
/* Plot the ratio over time of thread 0 (or the first thread with rows):
 * a line per cache, the phases as coloured bands with a legend. */
int lp_timeline_svg(const struct lp_timeline *t, const char *path, const char *title);
/* ---- threads and caches (params.share; model-share.c) ------------------
 * Misses per line access of the whole process when its threads are placed
 * onto caches of each size of params.sizes: "shared" (one cache for all),
 * "2 caches" (consecutive threads split in two; with 3 threads or more)
 * and "private" (one per thread; with 2 or more). lru and random include
 * the coherence misses; lru_coh and random_coh are those alone. */
struct lp_report_placement {
	const char *placement; /* static */
	uint32_t caches;
	uint64_t size; /* bytes, each cache */
	double lru, random, lru_coh, random_coh;
	/* 95 % intervals of lru and random (params.resamples; without
	 * resamples lo = hi = the ratio), cliff as the curves' */
	struct lp_interval lru_iv, random_iv;
};
size_t lp_report_placements(const struct lp_report *r, const struct lp_report_placement **out);
/* Each thread alone on a private cache of each size: misses per line
 * access of the thread; share: its part of the run's references. By
 * thread, then size; a thread without samples is left out. */
struct lp_report_thread_curve {
	uint32_t tid;
	uint64_t size;
	double share, lru, random, lru_coh;
	struct lp_interval lru_iv, random_iv; /* as lp_report_placement's,
					       * from the thread's samples */
};
size_t lp_report_thread_curves(const struct lp_report *r, const struct lp_report_thread_curve **out);
/* Coherence misses: reuses invalidated by another thread's write, by
 * data object, the pc that misses and the pc of the write; false sharing
 * (the reuse touched no byte that the other threads wrote) before true
 * sharing, each by decreasing misses. misses: line accesses of the run
 * (samples / rate); share: of the line size's samples. threads: the
 * threads that missed, writers: the threads that wrote ("0,3"). */
struct lp_report_sharing {
	int false_sharing;
	const char *object;
	uint64_t pc, wpc;
	const char *pc_name, *wpc_name; /* name or hex address */
	size_t samples;
	double misses, share;
	char threads[64], writers[64];
};
size_t lp_report_sharing(const struct lp_report *r, const struct lp_report_sharing **out);

/* ---- several profiles: the ranks of an MPI job ------------------------- */
/* The report of the whole job from the reports of its ranks' profiles
 * (each from lp_report_new() with the same params; they must outlive the
 * merged one). Each rank has caches of its own, so the job's misses are
 * the ranks' misses summed: line accesses, references, samples, misses of
 * the hot pcs, data objects, pairs, source lines, functions and threads
 * (by thread number) are summed, and every miss ratio of the curves and
 * named caches is the ranks' weighted by their line accesses (per
 * reference: by references), with intervals weighted the same way.
 * Hot pcs, objects and pairs are matched by name and keep at most top
 * rows (of the union of the ranks' top rows); no windows (each rank has
 * its own clock). The threads-and-caches tables (params.share): the
 * placements as the curves when the ranks' rows line up (else none),
 * each thread's rows weighted by its line accesses in each rank, the
 * coherence rows summed by kind, object and pc names. LP_EINVAL when the
 * reports were computed with different line sizes or parameters. */
int lp_report_merge(struct lp_report **out, struct lp_report *const *parts, size_t n, size_t top);

/* ---- two profiles compared -------------------------------------------- */
/* lp_report_diff sets two reports side by side (built with the same
 * params, one per profile): their curves point by point, their named
 * caches, and the hot spots - source lines, functions and data objects -
 * matched by name, with the change of their misses, by decreasing size of
 * the change. Both reports must outlive it. Each change has a 95%
 * interval from the two runs' own intervals (the curves', the caches',
 * the hot rows'), combined as two independent estimates are (Zou and
 * Donner's MOVER: lo = delta - sqrt((b - b_lo)^2 + (a_hi - a)^2), hi =
 * delta + sqrt((b_hi - b)^2 + (a - a_lo)^2)): a change whose interval
 * holds 0 may be sampling noise. */
struct lp_diff_point {
	uint64_t size;
	double a, b, delta; /* miss ratios; delta = b - a */
	double delta_lo, delta_hi;
};
struct lp_diff_curve {
	const char *name; /* "statstack" or "statcache" */
	const struct lp_diff_point *points;
	size_t n;
};
struct lp_diff_cache {
	const char *label;
	uint64_t size, ways;
	double lru_a, lru_b, random_a, random_b;
	double lru_delta_lo, lru_delta_hi, random_delta_lo, random_delta_hi;
};
enum lp_diff_kind { LP_DIFF_LINE, LP_DIFF_FUNCTION, LP_DIFF_OBJECT };
struct lp_diff_spot {
	enum lp_diff_kind kind;
	const char *name;         /* "matmul.c:24", a function's label, an object */
	double misses_a, misses_b; /* predicted misses of each run (0 when absent) */
	double share_a, share_b;
	double delta;             /* misses_b - misses_a */
	double delta_lo, delta_hi; /* from the rows' intervals; a row absent
				    * from a run counts as no sample there:
				    * 0 in [0, 3.69 samples' weight] */
};
struct lp_report_diff;
int lp_report_diff_new(struct lp_report_diff **out, const struct lp_report *a, const struct lp_report *b);
void lp_report_diff_free(struct lp_report_diff *d);
size_t lp_report_diff_curves(const struct lp_report_diff *d, const struct lp_diff_curve **out);
size_t lp_report_diff_caches(const struct lp_report_diff *d, const struct lp_diff_cache **out);
/* The hot spots of one kind present in either run, by decreasing |delta|
 * (then name). */
size_t lp_report_diff_spots(const struct lp_report_diff *d, enum lp_diff_kind kind,
			    const struct lp_diff_spot **out);

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
/* The pcs' line accesses and misses by source line and function (the
 * grouping lp_report uses), as of now; valid until the next call or
 * lp_attrib_free(). */
int lp_attrib_hotspots(struct lp_attrib *a, const struct lp_hotspots **out);

/* ---- coherence misses by data object and instruction ------------------ */
/* lp_coherence runs the multi-threaded simulation (lp_mtsim, sim.h) and
 * charges every first-level coherence miss to the pc that missed and to
 * the data object it touched (named as lp_attrib names them), split into
 * false and true sharing, with the threads that missed and the threads
 * and pc that wrote (docs/simulator.md). */
struct lp_coherence;
/* cfg as for lp_mtsim_new() (its flags are ignored); syms may be NULL. */
int lp_coherence_new(struct lp_coherence **out, const struct lp_mtsim_config *cfg, struct lp_symbols *syms);
void lp_coherence_free(struct lp_coherence *c);
int lp_coherence_refs(struct lp_coherence *c, const struct lp_ref *refs, size_t n);
/* The simulation, for its counts. */
const struct lp_mtsim *lp_coherence_sim(const struct lp_coherence *c);

struct lp_coherence_row {
	const char *object;        /* data object (object rows; the object of the pc's first miss for pc rows) */
	const char *function;      /* pc rows: the function, or "0x401136" */
	const char *where;         /* pc rows: "file.c:12", else "" */
	uint64_t pc;               /* pc rows */
	uint64_t coherence, false_sharing, true_sharing; /* first-level coherence misses */
	uint64_t threads;          /* bit t: thread number t (lp_mtsim_thread_id(), t < 64) missed */
	uint64_t writers;          /* bit t: thread number t wrote the invalidating write */
	uint64_t writer_pc;        /* the pc of the most recent invalidating write */
	const char *writer_where;  /* its function and line: "bump (counters.c:20)" */
};

enum lp_coherence_view {
	LP_COHERENCE_OBJECTS,
	LP_COHERENCE_PCS,
};
/* Rows with at least one coherence miss, by decreasing coherence misses
 * (then name, then pc); valid until the next call or lp_coherence_free(). */
size_t lp_coherence_rows(struct lp_coherence *c, enum lp_coherence_view view,
			 const struct lp_coherence_row **rows);

#ifdef __cplusplus
}
#endif
#endif
