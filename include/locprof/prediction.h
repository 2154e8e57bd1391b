/* locprof/prediction.h - cross-architecture and cross-input prediction of cache
 * and TLB misses (Marin & Mellor-Crummey, SIGMETRICS 2005).
 *
 * Four parts, in the order a user meets them (docs/prediction.md):
 *
 *   collect  one run of a program at a small problem size P: per reference
 *            group, exact LRU stack-distance histograms for several block
 *            sizes (cache lines and pages), execution counts, and the
 *            static loop structure of the binary the groups come from;
 *   fit      runs at several sizes -> one model per group and block size:
 *            histogram bins whose distances and counts are functions of P,
 *            fitted by constrained least squares on a basis (monomials or
 *            user-given functions such as log(P));
 *   predict  the model evaluated at any P: predicted histograms, and misses
 *            of fully-associative caches (the cut at the cache size) and of
 *            set-associative ones (the binomial model), TLBs as
 *            fully-associative caches of page-sized blocks;
 *   machine  memory hierarchies: files, built-ins (Itanium2, R12000 of the
 *            paper's Table 1) and the host (/sys/devices/system/cpu).
 *
 * All functions return 0 (or a count) on success and a negative LP_E* code
 * on failure with lp_errmsg() set; nothing prints.
 */
#ifndef LOCPROF_PREDICTION_H
#define LOCPROF_PREDICTION_H

#include <locprof/common.h>
#include <locprof/mapping.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- expressions of the problem size P --------------------------------
 * Numbers, P (or p), + - * / ^ (right-associative), unary minus,
 * parentheses and log (natural), log2, log10, sqrt, exp, abs: "P^2",
 * "P*log(P)", "1/P". */
struct lp_pred_expr;

int lp_pred_expr_parse(struct lp_pred_expr **out, const char *text);
double lp_pred_expr_eval(const struct lp_pred_expr *e, double P);
/* The text it was parsed from, without spaces. */
const char *lp_pred_expr_text(const struct lp_pred_expr *e);
void lp_pred_expr_free(struct lp_pred_expr *e);

/* ---- fitting: linear combinations of basis functions --------------------
 * A quantity measured at n problem sizes is fitted as sum_i c_i f_i(P) over
 * a subset of the basis. Every subset with fewer terms than sizes is fitted
 * by weighted (relative) least squares under linear inequality constraints
 * enforced on a grid of sizes from the smallest fitted size to `hi`:
 * LP_PRED_FIT_NONNEG (the value is >= 0) and LP_PRED_FIT_MONOTONE (the derivative
 * keeps the sign the data shows, when the data are monotone). Every subset
 * with at most n-2 terms is fitted; the one with the smallest corrected
 * Akaike criterion wins (ties: fewer terms). */
#define LP_PRED_BASIS_MAX 8

struct lp_pred_basis {
	size_t n;
	struct lp_pred_expr *f[LP_PRED_BASIS_MAX];
};

/* "1,P,P^2,P^3,P^4" (the default when list is NULL). */
int lp_pred_basis_parse(struct lp_pred_basis *b, const char *list);
void lp_pred_basis_release(struct lp_pred_basis *b);
/* Comma-separated texts of the functions into buf. */
const char *lp_pred_basis_text(const struct lp_pred_basis *b, char *buf, size_t len);

enum {
	LP_PRED_FIT_NONNEG = 1,
	LP_PRED_FIT_MONOTONE = 2,
};

struct lp_pred_fit {
	double coef[LP_PRED_BASIS_MAX]; /* per basis function; 0 for those not used */
	uint32_t used;              /* bit i: f_i is a term of the model */
	double score;               /* selection score (AICc; lower is better) */
	double rms;                 /* relative RMS residual at the fitted sizes */
};

/* Select and fit a model of y[i] measured at P[i] (n >= 1 sizes). */
int lp_pred_fit_select(const struct lp_pred_basis *b, const double *P, const double *y, size_t n,
		   unsigned flags, double hi, struct lp_pred_fit *out);
/* The same with terms taken only from `allowed` (a mask of basis
 * functions; 0: all), the fit staying at or below bound(arg, t) on the
 * grid when bound is not NULL (distances below the footprint; bound may
 * return INFINITY). */
int lp_pred_fit_select_below(const struct lp_pred_basis *b, const double *P, const double *y, size_t n,
			 unsigned flags, double hi, uint32_t allowed,
			 double (*bound)(void *arg, double P), void *arg, struct lp_pred_fit *out);
/* Fit the given subset of terms only (used: bit mask of basis functions). */
int lp_pred_fit_subset(const struct lp_pred_basis *b, uint32_t used, const double *P, const double *y,
		   size_t n, unsigned flags, double hi, struct lp_pred_fit *out);
double lp_pred_fit_eval(const struct lp_pred_basis *b, const struct lp_pred_fit *f, double P);
/* "3*P^2 + 0.5*P" into buf. */
const char *lp_pred_fit_format(const struct lp_pred_basis *b, const struct lp_pred_fit *f, char *buf,
			   size_t len);

/* Least squares with inequality constraints (Lawson & Hanson, LSI):
 * minimise ||A x - b|| subject to G x >= h, A m x n (row-major) of full
 * column rank, G k x n. Returns 0, or LP_EINVAL when the constraints
 * cannot be met or A is rank deficient. */
int lp_lsi(const double *A, const double *b, size_t m, size_t n, const double *G,
	   const double *h, size_t k, double *x);
/* Non-negative least squares: minimise ||E x - f|| subject to x >= 0,
 * E m x n row-major (Lawson & Hanson's NNLS). */
int lp_nnls(const double *E, const double *f, size_t m, size_t n, double *x);

/* ---- machines ------------------------------------------------------------ */
#define LP_MACHINE_MAX_LEVELS 8
#define LP_PRED_NAME_MAX 32

enum lp_pred_level_kind { LP_PRED_LEVEL_CACHE = 0, LP_PRED_LEVEL_TLB = 1 };

struct lp_pred_level {
	char name[LP_PRED_NAME_MAX]; /* "L1", "L2", "TLB" */
	int kind;                /* enum lp_pred_level_kind */
	uint64_t blocks;         /* lines, or TLB entries */
	uint64_t assoc;          /* ways; 0 = fully associative */
	uint64_t block;          /* line size, or page size, in bytes (a power of two) */
};

struct lp_machine {
	char name[LP_PRED_NAME_MAX * 2];
	size_t n;
	struct lp_pred_level level[LP_MACHINE_MAX_LEVELS];
};

/* Sets and ways of a level (a fully-associative level: 1 set). */
uint64_t lp_pred_level_sets(const struct lp_pred_level *l);
uint64_t lp_pred_level_ways(const struct lp_pred_level *l);

/* "itanium2, r12000, host" */
const char *lp_machine_builtin_names(void);
/* A built-in machine by name, or else a machine file. */
int lp_machine_get(struct lp_machine *m, const char *name_or_path);
int lp_machine_builtin(struct lp_machine *m, const char *name);
/* The machine file format is in docs/prediction.md:
 *   name itanium2
 *   cache L1 16K 4 64        # NAME SIZE ASSOC|full LINE
 *   tlb TLB 128 16K [full]   # NAME ENTRIES PAGE [ASSOC] */
int lp_machine_read(struct lp_machine *m, const char *path);
int lp_machine_parse(struct lp_machine *m, const char *text, const char *what);
/* The host from sysfs (sysfs_root: NULL for "/sys", or a copy for tests),
 * read by lp_host_caches(). Data and unified caches become levels, in level
 * order; a TLB of 64 entries of the system page size is added (sysfs does
 * not describe TLBs). */
int lp_machine_host(struct lp_machine *m, const char *sysfs_root);
/* Append an LRU cache level of size bytes, assoc ways (0: fully
 * associative) and line-byte lines, named name (a cache SPEC of the shared
 * parser, lp_cache_arg_parse(), made a level: predict at --cache). */
int lp_machine_add_cache(struct lp_machine *m, const char *name, uint64_t size, uint64_t assoc, uint64_t line);

/* ---- collection ------------------------------------------------------------ */
/* Histograms are keyed by a 64-bit "block key": a block size B for LRU
 * stack distances of B-byte blocks, or LP_PRED_KEY(s, B) for set distances in
 * a cache of s sets of B-byte lines (the distance of an access in its
 * set's own LRU stack; an LRU cache of k ways misses exactly when it is
 * >= k). Run and model files write keys as numbers. */
#define LP_PRED_KEY(sets, line) (((uint64_t)(sets) << 32) | (uint64_t)(line))
static inline uint64_t lp_pred_key_sets(uint64_t key) { return key >> 32; }      /* 0: stack distances */
static inline uint64_t lp_pred_key_block(uint64_t key) { return key & 0xffffffffu; }

struct lp_pred_setspec {
	uint64_t sets, line; /* line: a power of two below 2^32 */
};

struct lp_pred_collect_config {
	const uint64_t *blocks;        /* block sizes (powers of two): lines and pages */
	size_t nblocks;
	const struct lp_pred_setspec *setd; /* set-distance histograms wanted (may be NULL) */
	size_t nsetd;
	const struct lp_mappings *maps; /* the trace's mappings, or NULL */
	const char *binary;            /* the executable, when maps lack it or are NULL */
	uint64_t phase;                /* page phases: the histograms of a block size B
					* above it are averaged over the addresses
					* shifted by k B / n, n = min(B / phase, 8)
					* (where the program's arrays fall in a page:
					* address randomisation moves them by 4K);
					* 0: none */
};

struct lp_pred_collect;

int lp_pred_collect_new(struct lp_pred_collect **out, const struct lp_pred_collect_config *cfg);
/* Feed references in trace order. The first ones may be held back until
 * enough distinct pcs have been seen to place the binary in memory (when
 * the trace has no mappings). */
int lp_pred_collect_feed(struct lp_pred_collect *c, const struct lp_ref *refs, size_t n);
/* Group the references (section 2.2 of the paper) and write the run file:
 * problem size, command, per-group and per-pc histograms, loops, strides. */
int lp_pred_collect_write(struct lp_pred_collect *c, const char *path, double size, const char *command);
void lp_pred_collect_free(struct lp_pred_collect *c);
/* After lp_pred_collect_write: what was found, for the summary. */
struct lp_pred_collect_summary {
	uint64_t references, pcs, pcs_placed, loops, groups;
	uint64_t bias; /* where the binary was found in memory */
	int bias_inferred;
	int place_failed; /* no load address put the pcs on the binary's code */
};
void lp_pred_collect_summary(const struct lp_pred_collect *c, struct lp_pred_collect_summary *out);

/* ---- runs and models --------------------------------------------------------- */
struct lp_pred_run;  /* one collected run (a file written by lp_pred_collect_write) */
struct lp_pred_model;

int lp_pred_run_read(struct lp_pred_run **out, const char *path);
void lp_pred_run_free(struct lp_pred_run *r);
double lp_pred_run_size(const struct lp_pred_run *r);

struct lp_pred_fit_options {
	const char *basis;  /* NULL: "1,P,P^2,P^3,P^4" */
	double range;       /* constraints hold up to range * the largest size; 0: 16 */
	double tolerance;   /* bins stop splitting when their models agree within it; 0: 0.05 */
	unsigned max_depth; /* of the recursive splitting; 0: 10 */
};

/* Fit a model from n runs of the same program at distinct sizes (n >= 3).
 * The model keeps what it needs of them (the measured histograms, for
 * plots); the runs may be freed right after. */
int lp_pred_model_fit(struct lp_pred_model **out, struct lp_pred_run *const *runs, size_t n,
		  const struct lp_pred_fit_options *o);
int lp_pred_model_write(const struct lp_pred_model *m, const char *path);
int lp_pred_model_read(struct lp_pred_model **out, const char *path);
/* The model file of a path: DIR/model.xmodel when path is a directory (where
 * `fit` writes it by default), else path itself; malloc'ed, NULL when out of
 * memory. */
char *lp_pred_model_path(const char *path);
void lp_pred_model_free(struct lp_pred_model *m);

size_t lp_pred_model_nsizes(const struct lp_pred_model *m);
double lp_pred_model_fit_size(const struct lp_pred_model *m, size_t i);
size_t lp_pred_model_nblocks(const struct lp_pred_model *m);
uint64_t lp_pred_model_block(const struct lp_pred_model *m, size_t i);
const char *lp_pred_model_command(const struct lp_pred_model *m);

/* Groups, loops, functions. Strings are owned by the model. */
struct lp_pred_group_info {
	const char *function;
	const char *where;     /* "matmul.c:22-23" */
	const char *strides;   /* "16,0,?" innermost loop first */
	int loop;              /* index of the innermost loop, -1 if none */
	size_t npcs;
};
size_t lp_pred_model_ngroups(const struct lp_pred_model *m);
/* How lp_pred_model_fit() joined the runs' reference groups (all zero for a
 * model read from a file). */
struct lp_pred_join_info {
	int by_source;      /* 1: by source location (the runs ran different
			     * binaries), 0: by code address (one binary) */
	size_t runs;
	size_t binaries;    /* distinct main binaries of the runs */
	size_t groups;      /* the model's groups */
	size_t joined;      /* groups with references in every run */
	double share;       /* references in joined groups, over all runs' */
};
void lp_pred_model_join(const struct lp_pred_model *m, struct lp_pred_join_info *out);
void lp_pred_model_group(const struct lp_pred_model *m, size_t g, struct lp_pred_group_info *out);

struct lp_pred_loop_info {
	const char *function;
	const char *where;     /* source lines of the loop */
	int parent;            /* -1 for an outermost loop */
	int depth;             /* 1 = outermost */
};
size_t lp_pred_model_nloops(const struct lp_pred_model *m);
void lp_pred_model_loop(const struct lp_pred_model *m, size_t l, struct lp_pred_loop_info *out);
/* Nonzero if group g lies in loop l (directly or in a loop nested in it). */
int lp_pred_model_group_in_loop(const struct lp_pred_model *m, size_t g, size_t l);

/* The bins of group g at a block size: constant-distance bins and the rest's
 * bins, and a text account of every fitted formula (malloc'ed; free()). */
int lp_pred_model_bins(const struct lp_pred_model *m, size_t g, uint64_t block, size_t *nconst,
		   size_t *nbins);
char *lp_pred_model_describe(const struct lp_pred_model *m, size_t g, uint64_t block);
/* The formula of the references of group g (or of the program, g = SIZE_MAX). */
const char *lp_pred_model_refs_formula(const struct lp_pred_model *m, size_t g, char *buf, size_t len);
/* Predicted references of the program. */
double lp_pred_model_references(const struct lp_pred_model *m, double P);
/* Measured references of the program in fitted run i. */
double lp_pred_model_measured_references(const struct lp_pred_model *m, size_t i);

/* ---- prediction -------------------------------------------------------------- */
/* One bin of a predicted histogram: `count` line accesses at stack distance
 * `distance` (cold accesses are reported apart). */
struct lp_pred_bin {
	double distance, count;
};

/* The predicted histogram of group g for block size `block` at size P:
 * *nbins bins (malloc'ed, sorted by distance; free()) and the cold count. */
int lp_pred_model_hist(const struct lp_pred_model *m, size_t g, uint64_t block, double P,
		   struct lp_pred_bin **bins, size_t *nbins, double *cold);

struct lp_pred_count {
	double references; /* instructions executed (loads and stores) */
	double accesses;   /* block accesses at the level's block size */
	double fa_misses;  /* fully-associative LRU: cold + distances >= blocks */
	double sa_misses;  /* set-associative LRU: set distances when the model
			    * has them for the level's sets and line, else the
			    * binomial model */
	int sa_setd;       /* 1: sa_misses came from set-distance histograms */
	int sa_cal;        /* 1: sa_misses from calibrated placement weights */
	int sa_strided;    /* 1: sa_misses from the placement of the group's
			    * strided walk at P (LP_PRED_SA_STRIDED; groups with no
			    * walk: the binomial model) */
};

/* Nonzero if the model has set-distance histograms for level l (then
 * lp_pred_model_measured() uses them). */
int lp_pred_model_has_setd(const struct lp_pred_model *m, const struct lp_pred_level *l);
/* Nonzero if lp_pred_model_predict() uses them: the largest fitted run has set
 * distances of at least the level's ways; else the fitted runs never
 * exercised its ways, and the binomial model is used. */
int lp_pred_model_uses_setd(const struct lp_pred_model *m, const struct lp_pred_level *l);
/* How sa_misses are predicted: set distances when collected for the
 * level's geometry, else the binomial model (AUTO); always the binomial. */
enum { LP_PRED_SA_AUTO = 0, LP_PRED_SA_BINOMIAL = 1, LP_PRED_SA_CALIBRATED = 2, LP_PRED_SA_STRIDED = 3 };

/* Placement-calibrated set associativity (docs/prediction.md, "Placement
 * calibration"). A reuse at stack distance D has, in its set of a cache of
 * s sets, a set distance d that depends on where the D other lines fall:
 *   RANDOM  each into each set with chance 1/s: d ~ Binomial(D, 1/s), the
 *           paper's model (section 5.2);
 *   EVEN    the reused line and the D others spread evenly over the sets
 *           (each set holds floor or ceil of (D+1)/s of them; the reused
 *           line is in a fuller set in proportion to its count): exact for
 *           a cyclic sweep over consecutive lines;
 *   CUT     a miss in k ways exactly when D >= s*k (the fully-associative
 *           cut; the same as EVEN up to s*k lines, more misses beyond).
 * For each group and collected geometry the weights of a mixture of the
 * three are fitted (least squares, weights >= 0 adding up to 1) so that
 * the mixture of the transforms of the measured stack-distance histograms
 * matches the measured set-distance histograms of the fitted runs, over set
 * distances 1..32 and all runs; the mixture then predicts set-associative
 * misses from the predicted stack-distance histogram at any size. A fit
 * that the data do not determine falls back to RANDOM alone. */
enum { LP_PRED_PLACE_RANDOM = 0, LP_PRED_PLACE_EVEN = 1, LP_PRED_PLACE_CUT = 2, LP_PRED_PLACE_N = 3 };

struct lp_pred_placement {
	int have;                /* set distances collected for the geometry */
	int det;                 /* the fit is used (else RANDOM alone) */
	double w[LP_PRED_PLACE_N];   /* fitted weights */
	double lo[LP_PRED_PLACE_N], hi[LP_PRED_PLACE_N]; /* range of the runs' own fits */
	double sep;              /* how far apart the transforms are (W1, lines) */
	double resid;            /* how far the mixture is from the data (W1) */
};

/* Refit the placement weights of every group and geometry with only the
 * placements in mask (bits 1 << LP_PRED_PLACE_*; RANDOM is always allowed). A
 * fit is used (det) when the transforms are apart (sep >= 0.01) and the
 * weights of RANDOM fitted to each run alone span at most `agree` (0: 0.5;
 * 1 or more: no check). lp_pred_model_fit() and lp_pred_model_read() calibrate
 * with LP_PRED_PLACE_DEFAULT and 0. */
#define LP_PRED_PLACE_DEFAULT ((1u << LP_PRED_PLACE_RANDOM) | (1u << LP_PRED_PLACE_EVEN))
int lp_pred_model_calibrate(struct lp_pred_model *m, unsigned mask, double agree);
/* The placement fit of group g for level l's geometry (have = 0 if its set
 * distances were not collected; a fully-associative level has none). */
void lp_pred_model_placement(const struct lp_pred_model *m, size_t g, const struct lp_pred_level *l,
			 struct lp_pred_placement *out);

/* ---- validity of a prediction (docs/prediction.md, "Validity") ---------------- */
#define LP_PRED_CHECK_RUNS 64
/* What a prediction of fully-associative misses at P rests on, for one
 * group and level; additive over groups (lp_pred_check_add). */
struct lp_pred_check {
	double size, pmax;         /* P, and the largest fitted size */
	double fa;                 /* predicted misses at P */
	double fa_short, fa_long;  /* with every scaling reuse distance 5% shorter, longer */
	double crossed;            /* of fa: reuses under the capacity at every fitted size,
				    * at distances under 256 blocks at the largest */
	double cross_at;           /* the smallest size at which such reuses reach it (0: none) */
	double blocks_max, blocks_at; /* distinct blocks (cold accesses) at the largest fitted size, at P */
	double few_at;             /* the smallest size at which the program's data span 64 blocks (0: not known) */
	size_t nsizes;
	double sizes[LP_PRED_CHECK_RUNS]; /* the fitted sizes */
	double fit[LP_PRED_CHECK_RUNS];   /* the model's misses at each fitted size */
	double meas[LP_PRED_CHECK_RUNS];  /* the run's measured misses there */
	/* The same at each fitted size with a fully-associative capacity that
	 * holds the share of that run's data the level holds at P (its blocks
	 * over the program's distinct blocks at P): whether the fit follows
	 * the reuses that decide the level at P where they were measured.
	 * scap[r] = 0: not tested (P not beyond the fitted sizes). */
	double scap[LP_PRED_CHECK_RUNS], sfit[LP_PRED_CHECK_RUNS], smeas[LP_PRED_CHECK_RUNS];
	/* set-associative misses at P with the model the prediction uses, with
	 * the walk's strided placement and with random placement (the binomial
	 * model); 0 for a fully-associative level */
	double sa, sa_strided, sa_binomial;
	/* at a set-associative level: the predicted block accesses at P, and
	 * of them those of groups whose strided walk at P puts its lines in a
	 * few of the sets (at most an eighth) and overflows them; the fewest
	 * sets such a walk falls in, and its stride in bytes (0: none) */
	double acc, fold_acc, fold_sets, fold_stride;
	/* of fa: misses of groups whose cold accesses and reuses at growing
	 * distances (the rest of their histograms) are fitted to outgrow
	 * their accesses by P; the smallest size at which one does (0: none) */
	double outgrown, outgrow_at;
	/* the references of the groups at P (their fits, summed); set by the
	 * caller for a program's totals: the program's references at P as
	 * fitted on its own (total = 1) */
	double refs, cold; /* and of fa, the cold misses */
	int total;
	double refs_total;
	/* set by the caller for a program's totals: the misses at P of the
	 * model fitted without the largest fitted size (loo_pmax) */
	int loo;
	double loo_fa, loo_pmax;
};
/* The check of group g's prediction at level l and size P; set-associative
 * misses by the model `how` (LP_PRED_SA_*) that predicts them. */
int lp_pred_model_check_sa(const struct lp_pred_model *m, size_t g, const struct lp_pred_level *l, double P,
			   int how, struct lp_pred_check *out);
/* The same with the default model, LP_PRED_SA_STRIDED. */
int lp_pred_model_check(const struct lp_pred_model *m, size_t g, const struct lp_pred_level *l, double P,
			struct lp_pred_check *out);
void lp_pred_check_add(struct lp_pred_check *dst, const struct lp_pred_check *src);

enum {
	LP_PRED_CHECK_CROSSES = 1, /* most misses cross the capacity beyond the fitted sizes */
	LP_PRED_CHECK_UNFIT = 2,   /* the model misses the fitted runs' own misses by > 10% */
	LP_PRED_CHECK_EDGE = 4,    /* reuses near the capacity: +-5% in distance moves the misses > 20% */
	LP_PRED_CHECK_FEW = 8,     /* the fitted runs' data span under 64 blocks of the level */
	LP_PRED_CHECK_SHAPE = 16,  /* at the capacity scaled to each fitted run, > 10% off that run */
	LP_PRED_CHECK_CONFLICTS = 32, /* set-associative misses > 5% from the fully-associative */
	LP_PRED_CHECK_UNSTABLE = 64, /* fitted without the largest size, > 10% off at P */
	LP_PRED_CHECK_FOLD = 128,  /* a walk of >= 20% of the accesses fills <= 1/8 of the sets */
	LP_PRED_CHECK_OUTGROWN = 256, /* > 10% of the misses: groups whose rest outgrows their accesses */
	LP_PRED_CHECK_DIVERGES = 512, /* the groups' references at P > 10% from the program's fit */
};
struct lp_pred_validity {
	unsigned flags;            /* LP_PRED_CHECK_*; 0: the prediction stands */
	double lo, hi;             /* the fully-associative misses with distances 5% shorter, longer */
	char reason[1024];         /* the flags in words ("" when none) */
};
/* Where to collect so that the checks `crosses` and `few` (which say from
 * which size their cause is gone) pass at P: per level of levels[], its
 * flags at P (every check, each level's groups summed) and the largest
 * fitted size those two ask for (0: none); need_max the largest of them. */
#define LP_PRED_PLAN_LEVELS 16
struct lp_pred_plan {
	size_t nlevels;
	unsigned flags[LP_PRED_PLAN_LEVELS];
	double need[LP_PRED_PLAN_LEVELS];
	double need_max;
};
int lp_pred_model_plan(const struct lp_pred_model *m, const struct lp_pred_level *levels, size_t nlevels, double P,
		       struct lp_pred_plan *out);
/* The verdict on a level's prediction from its (summed) checks. */
void lp_pred_check_judge(const struct lp_pred_check *c, const struct lp_pred_level *l, struct lp_pred_validity *out);
/* "ok", or the flags' names joined by "+" ("crosses+edge"). */
const char *lp_pred_check_name(unsigned flags, char *buf, size_t len);

/* Misses of group g at one level at size P. LP_EINVAL if the model has no
 * histograms for the level's block size. */
int lp_pred_model_predict(const struct lp_pred_model *m, size_t g, const struct lp_pred_level *l, double P,
		      struct lp_pred_count *out);
/* The same with how (LP_PRED_SA_*). */
int lp_pred_model_predict_sa(const struct lp_pred_model *m, size_t g, const struct lp_pred_level *l, double P,
			 int how, struct lp_pred_count *out);

/* Which model gives a level's sa_misses under `how` (LP_PRED_SA_*), for the
 * whole level: FULL for a fully-associative level (the cut); SETD for set
 * distances; BINOMIAL_UNEXERCISED when set distances were collected for
 * the level but no fitted run has any as large as its ways (so the
 * binomial model is used); CALIBRATED when set distances were collected
 * and a placement fit can apply; STRIDED for strided placement (groups with
 * no walk: the binomial model); else BINOMIAL. */
enum lp_pred_sa_model {
	LP_PRED_SA_MODEL_FULL = 0,
	LP_PRED_SA_MODEL_BINOMIAL,
	LP_PRED_SA_MODEL_BINOMIAL_UNEXERCISED,
	LP_PRED_SA_MODEL_SETD,
	LP_PRED_SA_MODEL_CALIBRATED,
	LP_PRED_SA_MODEL_STRIDED,
};
enum lp_pred_sa_model lp_pred_model_sa_model(const struct lp_pred_model *m, const struct lp_pred_level *l,
					     int how);
/* "full", "binomial", "binomial-unexercised", "setd", "calibrated", "strided". */
const char *lp_pred_sa_model_name(enum lp_pred_sa_model model);

/* The same from the measured histograms of fitted run i (exact, not a
 * prediction): what the model was fitted on. */
int lp_pred_model_measured(const struct lp_pred_model *m, size_t g, const struct lp_pred_level *l,
		       size_t run, struct lp_pred_count *out);

/* ---- plots --------------------------------------------------------------- */
struct lp_pred_series {
	const char *name;
	const double *x, *y;
	size_t n;
	int points;  /* 1: markers (measured), 0: a line (predicted) */
	int dashed;
	int color;   /* index into a fixed palette */
};

/* Misses (per unit of work) against problem size, log-log, with the fitted
 * range [fit_lo, fit_hi] marked by two vertical lines. */
int lp_pred_svg_write(const char *path, const char *title, const char *ylabel,
		  const struct lp_pred_series *s, size_t n, double fit_lo, double fit_hi);

#ifdef __cplusplus
}
#endif
#endif
