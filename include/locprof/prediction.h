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
#ifndef LOCPROF_XPRED_H
#define LOCPROF_XPRED_H

#include <locprof/common.h>
#include <locprof/mapping.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- expressions of the problem size P --------------------------------
 * Numbers, P (or p), + - * / ^ (right-associative), unary minus,
 * parentheses and log (natural), log2, log10, sqrt, exp, abs: "P^2",
 * "P*log(P)", "1/P". */
struct lp_xexpr;

int lp_xexpr_parse(struct lp_xexpr **out, const char *text);
double lp_xexpr_eval(const struct lp_xexpr *e, double P);
/* The text it was parsed from, without spaces. */
const char *lp_xexpr_text(const struct lp_xexpr *e);
void lp_xexpr_free(struct lp_xexpr *e);

/* ---- fitting: linear combinations of basis functions --------------------
 * A quantity measured at n problem sizes is fitted as sum_i c_i f_i(P) over
 * a subset of the basis. Every subset with fewer terms than sizes is fitted
 * by weighted (relative) least squares under linear inequality constraints
 * enforced on a grid of sizes from the smallest fitted size to `hi`:
 * LP_XFIT_NONNEG (the value is >= 0) and LP_XFIT_MONOTONE (the derivative
 * keeps the sign the data shows, when the data are monotone). Every subset
 * with at most n-2 terms is fitted; the one with the smallest corrected
 * Akaike criterion wins (ties: fewer terms). */
#define LP_XBASIS_MAX 8

struct lp_xbasis {
	size_t n;
	struct lp_xexpr *f[LP_XBASIS_MAX];
};

/* "1,P,P^2,P^3,P^4" (the default when list is NULL). */
int lp_xbasis_parse(struct lp_xbasis *b, const char *list);
void lp_xbasis_release(struct lp_xbasis *b);
/* Comma-separated texts of the functions into buf. */
const char *lp_xbasis_text(const struct lp_xbasis *b, char *buf, size_t len);

enum {
	LP_XFIT_NONNEG = 1,
	LP_XFIT_MONOTONE = 2,
};

struct lp_xfit {
	double coef[LP_XBASIS_MAX]; /* per basis function; 0 for those not used */
	uint32_t used;              /* bit i: f_i is a term of the model */
	double score;               /* selection score (AICc; lower is better) */
	double rms;                 /* relative RMS residual at the fitted sizes */
};

/* Select and fit a model of y[i] measured at P[i] (n >= 1 sizes). */
int lp_xfit_select(const struct lp_xbasis *b, const double *P, const double *y, size_t n,
		   unsigned flags, double hi, struct lp_xfit *out);
/* The same with terms taken only from `allowed` (a mask of basis
 * functions; 0: all), the fit staying at or below bound(arg, t) on the
 * grid when bound is not NULL (distances below the footprint; bound may
 * return INFINITY). */
int lp_xfit_select_below(const struct lp_xbasis *b, const double *P, const double *y, size_t n,
			 unsigned flags, double hi, uint32_t allowed,
			 double (*bound)(void *arg, double P), void *arg, struct lp_xfit *out);
/* Fit the given subset of terms only (used: bit mask of basis functions). */
int lp_xfit_subset(const struct lp_xbasis *b, uint32_t used, const double *P, const double *y,
		   size_t n, unsigned flags, double hi, struct lp_xfit *out);
double lp_xfit_eval(const struct lp_xbasis *b, const struct lp_xfit *f, double P);
/* "3*P^2 + 0.5*P" into buf. */
const char *lp_xfit_format(const struct lp_xbasis *b, const struct lp_xfit *f, char *buf,
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
#define LP_XNAME_MAX 32

enum lp_xlevel_kind { LP_XLEVEL_CACHE = 0, LP_XLEVEL_TLB = 1 };

struct lp_xlevel {
	char name[LP_XNAME_MAX]; /* "L1", "L2", "TLB" */
	int kind;                /* enum lp_xlevel_kind */
	uint64_t blocks;         /* lines, or TLB entries */
	uint64_t assoc;          /* ways; 0 = fully associative */
	uint64_t block;          /* line size, or page size, in bytes (a power of two) */
};

struct lp_machine {
	char name[LP_XNAME_MAX * 2];
	size_t n;
	struct lp_xlevel level[LP_MACHINE_MAX_LEVELS];
};

/* Sets and ways of a level (a fully-associative level: 1 set). */
uint64_t lp_xlevel_sets(const struct lp_xlevel *l);
uint64_t lp_xlevel_ways(const struct lp_xlevel *l);

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
/* The host from sysfs (root: "/sys/devices/system/cpu", or a copy for tests).
 * Data and unified caches become levels; a TLB of 64 entries of the
 * system page size is added (sysfs does not describe TLBs). */
int lp_machine_host(struct lp_machine *m, const char *root);

/* ---- collection ------------------------------------------------------------ */
/* Histograms are keyed by a 64-bit "block key": a block size B for LRU
 * stack distances of B-byte blocks, or LP_XKEY(s, B) for set distances in
 * a cache of s sets of B-byte lines (the distance of an access in its
 * set's own LRU stack; an LRU cache of k ways misses exactly when it is
 * >= k). Run and model files write keys as numbers. */
#define LP_XKEY(sets, line) (((uint64_t)(sets) << 32) | (uint64_t)(line))
static inline uint64_t lp_xkey_sets(uint64_t key) { return key >> 32; }      /* 0: stack distances */
static inline uint64_t lp_xkey_block(uint64_t key) { return key & 0xffffffffu; }

struct lp_xsetspec {
	uint64_t sets, line; /* line: a power of two below 2^32 */
};

struct lp_xcollect_config {
	const uint64_t *blocks;        /* block sizes (powers of two): lines and pages */
	size_t nblocks;
	const struct lp_xsetspec *setd; /* set-distance histograms wanted (may be NULL) */
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

struct lp_xcollect;

int lp_xcollect_new(struct lp_xcollect **out, const struct lp_xcollect_config *cfg);
/* Feed references in trace order. The first ones may be held back until
 * enough distinct pcs have been seen to place the binary in memory (when
 * the trace has no mappings). */
int lp_xcollect_feed(struct lp_xcollect *c, const struct lp_ref *refs, size_t n);
/* Group the references (section 2.2 of the paper) and write the run file:
 * problem size, command, per-group and per-pc histograms, loops, strides. */
int lp_xcollect_write(struct lp_xcollect *c, const char *path, double size, const char *command);
void lp_xcollect_free(struct lp_xcollect *c);
/* After lp_xcollect_write: what was found, for the summary. */
struct lp_xcollect_summary {
	uint64_t references, pcs, pcs_placed, loops, groups;
	uint64_t bias; /* where the binary was found in memory */
	int bias_inferred;
	int place_failed; /* no load address put the pcs on the binary's code */
};
void lp_xcollect_summary(const struct lp_xcollect *c, struct lp_xcollect_summary *out);

/* ---- runs and models --------------------------------------------------------- */
struct lp_xrun;  /* one collected run (a file written by lp_xcollect_write) */
struct lp_xmodel;

int lp_xrun_read(struct lp_xrun **out, const char *path);
void lp_xrun_free(struct lp_xrun *r);
double lp_xrun_size(const struct lp_xrun *r);

struct lp_xfit_options {
	const char *basis;  /* NULL: "1,P,P^2,P^3,P^4" */
	double range;       /* constraints hold up to range * the largest size; 0: 16 */
	double tolerance;   /* bins stop splitting when their models agree within it; 0: 0.05 */
	unsigned max_depth; /* of the recursive splitting; 0: 10 */
};

/* Fit a model from n runs of the same program at distinct sizes (n >= 3).
 * The model keeps what it needs of them (the measured histograms, for
 * plots); the runs may be freed right after. */
int lp_xmodel_fit(struct lp_xmodel **out, struct lp_xrun *const *runs, size_t n,
		  const struct lp_xfit_options *o);
int lp_xmodel_write(const struct lp_xmodel *m, const char *path);
int lp_xmodel_read(struct lp_xmodel **out, const char *path);
void lp_xmodel_free(struct lp_xmodel *m);

size_t lp_xmodel_nsizes(const struct lp_xmodel *m);
double lp_xmodel_fit_size(const struct lp_xmodel *m, size_t i);
size_t lp_xmodel_nblocks(const struct lp_xmodel *m);
uint64_t lp_xmodel_block(const struct lp_xmodel *m, size_t i);
const char *lp_xmodel_command(const struct lp_xmodel *m);

/* Groups, loops, functions. Strings are owned by the model. */
struct lp_xgroup_info {
	const char *function;
	const char *where;     /* "matmul.c:22-23" */
	const char *strides;   /* "16,0,?" innermost loop first */
	int loop;              /* index of the innermost loop, -1 if none */
	size_t npcs;
};
size_t lp_xmodel_ngroups(const struct lp_xmodel *m);
void lp_xmodel_group(const struct lp_xmodel *m, size_t g, struct lp_xgroup_info *out);

struct lp_xloop_info {
	const char *function;
	const char *where;     /* source lines of the loop */
	int parent;            /* -1 for an outermost loop */
	int depth;             /* 1 = outermost */
};
size_t lp_xmodel_nloops(const struct lp_xmodel *m);
void lp_xmodel_loop(const struct lp_xmodel *m, size_t l, struct lp_xloop_info *out);
/* Nonzero if group g lies in loop l (directly or in a loop nested in it). */
int lp_xmodel_group_in_loop(const struct lp_xmodel *m, size_t g, size_t l);

/* The bins of group g at a block size: constant-distance bins and the rest's
 * bins, and a text account of every fitted formula (malloc'ed; free()). */
int lp_xmodel_bins(const struct lp_xmodel *m, size_t g, uint64_t block, size_t *nconst,
		   size_t *nbins);
char *lp_xmodel_describe(const struct lp_xmodel *m, size_t g, uint64_t block);
/* The formula of the references of group g (or of the program, g = SIZE_MAX). */
const char *lp_xmodel_refs_formula(const struct lp_xmodel *m, size_t g, char *buf, size_t len);
/* Predicted references of the program. */
double lp_xmodel_references(const struct lp_xmodel *m, double P);
/* Measured references of the program in fitted run i. */
double lp_xmodel_measured_references(const struct lp_xmodel *m, size_t i);

/* ---- prediction -------------------------------------------------------------- */
/* One bin of a predicted histogram: `count` line accesses at stack distance
 * `distance` (cold accesses are reported apart). */
struct lp_xbin {
	double distance, count;
};

/* The predicted histogram of group g for block size `block` at size P:
 * *nbins bins (malloc'ed, sorted by distance; free()) and the cold count. */
int lp_xmodel_hist(const struct lp_xmodel *m, size_t g, uint64_t block, double P,
		   struct lp_xbin **bins, size_t *nbins, double *cold);

struct lp_xcount {
	double references; /* instructions executed (loads and stores) */
	double accesses;   /* block accesses at the level's block size */
	double fa_misses;  /* fully-associative LRU: cold + distances >= blocks */
	double sa_misses;  /* set-associative LRU: set distances when the model
			    * has them for the level's sets and line, else the
			    * binomial model */
	int sa_setd;       /* 1: sa_misses came from set-distance histograms */
	int sa_cal;        /* 1: sa_misses from calibrated placement weights */
	int sa_strided;    /* 1: sa_misses from the placement of the group's
			    * strided walk at P (LP_XSA_STRIDED; groups with no
			    * walk: the binomial model) */
};

/* Nonzero if the model has set-distance histograms for level l (then
 * lp_xmodel_measured() uses them). */
int lp_xmodel_has_setd(const struct lp_xmodel *m, const struct lp_xlevel *l);
/* Nonzero if lp_xmodel_predict() uses them: the largest fitted run has set
 * distances of at least the level's ways; else the fitted runs never
 * exercised its ways, and the binomial model is used. */
int lp_xmodel_uses_setd(const struct lp_xmodel *m, const struct lp_xlevel *l);
/* How sa_misses are predicted: set distances when collected for the
 * level's geometry, else the binomial model (AUTO); always the binomial. */
enum { LP_XSA_AUTO = 0, LP_XSA_BINOMIAL = 1, LP_XSA_CALIBRATED = 2, LP_XSA_STRIDED = 3 };

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
enum { LP_XPLACE_RANDOM = 0, LP_XPLACE_EVEN = 1, LP_XPLACE_CUT = 2, LP_XPLACE_N = 3 };

struct lp_xplacement {
	int have;                /* set distances collected for the geometry */
	int det;                 /* the fit is used (else RANDOM alone) */
	double w[LP_XPLACE_N];   /* fitted weights */
	double lo[LP_XPLACE_N], hi[LP_XPLACE_N]; /* range of the runs' own fits */
	double sep;              /* how far apart the transforms are (W1, lines) */
	double resid;            /* how far the mixture is from the data (W1) */
};

/* Refit the placement weights of every group and geometry with only the
 * placements in mask (bits 1 << LP_XPLACE_*; RANDOM is always allowed). A
 * fit is used (det) when the transforms are apart (sep >= 0.01) and the
 * weights of RANDOM fitted to each run alone span at most `agree` (0: 0.5;
 * 1 or more: no check). lp_xmodel_fit() and lp_xmodel_read() calibrate
 * with LP_XPLACE_DEFAULT and 0. */
#define LP_XPLACE_DEFAULT ((1u << LP_XPLACE_RANDOM) | (1u << LP_XPLACE_EVEN))
int lp_xmodel_calibrate(struct lp_xmodel *m, unsigned mask, double agree);
/* The placement fit of group g for level l's geometry (have = 0 if its set
 * distances were not collected; a fully-associative level has none). */
void lp_xmodel_placement(const struct lp_xmodel *m, size_t g, const struct lp_xlevel *l,
			 struct lp_xplacement *out);

/* Misses of group g at one level at size P. LP_EINVAL if the model has no
 * histograms for the level's block size. */
int lp_xmodel_predict(const struct lp_xmodel *m, size_t g, const struct lp_xlevel *l, double P,
		      struct lp_xcount *out);
/* The same with how (LP_XSA_*). */
int lp_xmodel_predict_sa(const struct lp_xmodel *m, size_t g, const struct lp_xlevel *l, double P,
			 int how, struct lp_xcount *out);

/* The same from the measured histograms of fitted run i (exact, not a
 * prediction): what the model was fitted on. */
int lp_xmodel_measured(const struct lp_xmodel *m, size_t g, const struct lp_xlevel *l,
		       size_t run, struct lp_xcount *out);

/* ---- plots --------------------------------------------------------------- */
struct lp_xseries {
	const char *name;
	const double *x, *y;
	size_t n;
	int points;  /* 1: markers (measured), 0: a line (predicted) */
	int dashed;
	int color;   /* index into a fixed palette */
};

/* Misses (per unit of work) against problem size, log-log, with the fitted
 * range [fit_lo, fit_hi] marked by two vertical lines. */
int lp_xsvg_write(const char *path, const char *title, const char *ylabel,
		  const struct lp_xseries *s, size_t n, double fit_lo, double fit_hi);

#ifdef __cplusplus
}
#endif
#endif
