/* locprof/model.h - miss ratios of any cache from a profile.
 *
 * Cache sizes are given in lines (bytes / the profile's line size) and may
 * be any value >= 1, not only powers of two. Ratios are misses per line
 * access. With include_cold = 0 (the default everywhere, as in StatCache)
 * cold misses are excluded from both misses and accesses, which is what the
 * `lru-nocold` reference curve measures; with include_cold = 1 dangling
 * samples stand for the cold misses (see docs/models.md).
 */
#ifndef LOCPROF_MODEL_H
#define LOCPROF_MODEL_H

#include <locprof/profile.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- StatCache: fully associative, random replacement ---------------- */

struct lp_statcache;

/* Model of line size index li of p. window: length of the time windows in
 * line accesses (0: the profile's windows). p must outlive the model. */
int lp_statcache_new(struct lp_statcache **out, const struct lp_profile *p, unsigned li,
		     uint64_t window, int include_cold);
void lp_statcache_free(struct lp_statcache *m);

/* on = 1: no evictions until the cache is full, then every miss evicts,
 * cold misses too (the footprint over time from the samples); 0 (the
 * default): the paper's equation, a full cache from the start and no
 * evictions by cold misses; LP_STATCACHE_FILL_AUTO: for each cache size,
 * the fill model where the run's estimated footprint fits in the cache
 * (it never fills), else the paper's equation. See docs/models.md for
 * when each is better. */
#define LP_STATCACHE_FILL_AUTO (-1)
int lp_statcache_set_fill(struct lp_statcache *m, int on);

/* The same, taking the footprint over time from ss (a StatStack model of
 * the same profile and line size, which must outlive m) instead of
 * building one, when both cut the run on the same grid (else as
 * lp_statcache_set_fill()): the report has one already, and builds both
 * for every resample of its intervals. */
struct lp_statstack;
int lp_statcache_set_fill_with(struct lp_statcache *m, int on, const struct lp_statstack *ss);

/* Whether the run's footprint fits the cache, for the fill model of
 * LP_STATCACHE_FILL_AUTO and for random replacement's walks that fit their
 * sets (lp_statcache_setassoc_ratio()): LP_FOOTPRINT_ESTIMATE (the
 * default) compares the footprint estimated from the samples with the
 * cache; the other two impose an answer, for a cache size within the
 * estimate's sampling error (lp_statcache_footprint_band()), where the
 * report gives the ratio under both. 0 or LP_EINVAL. */
#define LP_FOOTPRINT_ESTIMATE 0
#define LP_FOOTPRINT_FITS 1
#define LP_FOOTPRINT_EXCEEDS 2
int lp_statcache_assume_footprint(struct lp_statcache *m, int assume);

/* The run's footprint in lines, as its estimate +- z standard errors
 * (a Poisson count of the samples that are a line's last access), into
 * [*lo, *hi], the estimate into *est, none of them below the number of
 * distinct lines the samples touched (the footprint is at least that): 1, or 0 where no footprint was estimated (the fill model
 * never asked) or no sample is a last access. */
int lp_statcache_footprint_band(const struct lp_statcache *m, double z, double *est, double *lo, double *hi);

/* Miss ratio for each of n cache sizes (in lines, any order): the
 * sample-weighted average of the per-window solutions of Eq. 6. */
int lp_statcache_curve(struct lp_statcache *m, const double *lines, size_t n, double *ratio);

/* Windows of the model, and the solution of each for one cache size
 * (NAN for a window without samples). */
size_t lp_statcache_nwindows(const struct lp_statcache *m);
uint64_t lp_statcache_window_length(const struct lp_statcache *m);
/* Line accesses [start, end) of window k (a window without samples is
 * joined to the one before it, so windows may be longer than the length). */
void lp_statcache_window(const struct lp_statcache *m, size_t k, uint64_t *start, uint64_t *end);
/* Evicting misses per access in window k for a cache of `lines` lines:
 * ev0 + ev1 R, R the window's miss ratio (see lp_statcache_solve_ev()). */
void lp_statcache_window_evictions(struct lp_statcache *m, size_t k, double lines, double *ev0,
				   double *ev1);
int lp_statcache_window_ratios(struct lp_statcache *m, double lines, double *ratio);

/* Miss probability of the reuse of each sample of the line size (in the
 * profile's order, [first, first + n) of lp_profile_line_samples()) for one
 * cache size: f(k * R_w) with R_w its window's miss ratio; 1 for dangling
 * samples when cold misses are included, else 0. */
int lp_statcache_sample_miss(struct lp_statcache *m, double lines, double *prob);

/* The miss ratio of a cache of `lines` lines with the reuse distance of
 * each finite sample (profile order, as lp_statcache_sample_miss())
 * multiplied by rho[i]: set-associative random replacement, with rho from
 * lp_statstack_crowding() (docs/models.md). 0 or LP_ENOMEM. */
int lp_statcache_scaled_ratio(struct lp_statcache *m, double lines, const double *rho, double *ratio);

/* Random replacement in a cache of `sets` sets and `lines` lines in all:
 * lp_statcache_scaled_ratio() with rho from lp_statstack_crowding() of ss,
 * a StatStack model of the same profile and line size; the fully
 * associative ratio where nothing crowds (or sets <= 1). */
int lp_statcache_setassoc_ratio(struct lp_statcache *m, const struct lp_statstack *ss, uint64_t sets,
				double lines, double *ratio);

/* Solve Eq. 6 for one histogram given as n reuse distances (one per
 * sample) plus `dangling` dangling samples: the miss ratio R in [0, 1] with
 * R * N = sum f(k R) (+ dangling when include_cold). warm: an upper bound
 * of the root (the root for a smaller cache), or 1. */
double lp_statcache_solve(const double *reuse, size_t n, double dangling, int include_cold,
			  double lines, double warm);

/* The same with ev0 + ev1 R evicting misses per access in place of R
 * (lp_statcache_solve() is ev0 = 0, ev1 = 1); the model's windows use it
 * for the cache filling up and the cold misses (docs/models.md). */
double lp_statcache_solve_ev(const double *reuse, size_t n, double dangling, int include_cold,
			     double ev0, double ev1, double lines, double warm);

/* The same with censored reuses: cn reuse distances ck with weights cw and
 * cinf of weight at infinite distance, all counted in N (the model's
 * windows replace their dangling samples by these; docs/models.md). */
double lp_statcache_solve_censored(const double *reuse, size_t n, const double *ck,
				   const double *cw, size_t cn, double cinf, double ev0, double ev1,
				   double lines, double warm);

/* The censored reuses window k solves with (see above); none when cold
 * misses are included. */
void lp_statcache_window_censored(const struct lp_statcache *m, size_t k, const double **ck,
				  const double **cw, size_t *cn, double *cinf);

/* ---- StatStack: LRU, fully and set associative ------------------------ */

struct lp_statstack;

/* Model of line size index li of p. window: length of the time windows
 * whose samples give the reuse-distance distribution of the accesses in
 * them, in line accesses (0: the profile's windows; a window is widened
 * until it holds enough samples; UINT64_MAX: one window, the whole run's
 * distribution as in Eklöv & Hagersten). p must outlive the model. */
int lp_statstack_new(struct lp_statstack **out, const struct lp_profile *p, unsigned li,
		     uint64_t window, int include_cold);
void lp_statstack_free(struct lp_statstack *m);

/* Expected stack distance of an access whose reuse distance is d, under
 * the whole run's reuse-distance distribution (no windows). */
double lp_statstack_expected_sd(const struct lp_statstack *m, uint64_t d);

/* Expected number of distinct lines among the line accesses [first,
 * last] (inclusive), from the windows' distributions: the accesses of the
 * span whose next access to their line is after it. With first = 0 this is
 * the footprint up to `last`, i.e. the cold misses so far. */
double lp_statstack_distinct(const struct lp_statstack *m, uint64_t first, uint64_t last);

/* The sampling error of lp_statstack_distinct(m, first, last): its
 * standard deviation over the sampler's seeds, from the samples' own
 * spread (each window's share is a ratio of Poisson counts: the delta
 * method). */
double lp_statstack_distinct_sd(const struct lp_statstack *m, uint64_t first, uint64_t last);

/* Windows the model uses (after widening): how many, and the line
 * accesses [start, end) of the k-th. */
size_t lp_statstack_nwindows(const struct lp_statstack *m);
/* Samples of the model's line size (finite and dangling). */
size_t lp_statstack_nsamples(const struct lp_statstack *m);
void lp_statstack_window(const struct lp_statstack *m, size_t k, uint64_t *start, uint64_t *end);

/* Estimated stack distance of the reuse of each sample of the line size
 * (in the profile's order, as lp_statcache_sample_miss()), from the
 * windows' distributions; INFINITY for dangling samples. */
int lp_statstack_sample_sd(const struct lp_statstack *m, double *sd);

/* Fully associative LRU miss ratio of a cache of `lines` lines. */
double lp_statstack_miss_ratio(const struct lp_statstack *m, double lines);

/* Set-associative LRU (sets x ways lines, any number of sets) by the
 * placement model (model-setassoc.c, docs/models.md "Set-associative
 * placement"): each sample's expected stack distance, with the share of
 * the lines in its span that its walk places as the samples' addresses
 * show; the binomial model where they show random placement. sets = 1 is
 * the fully associative cut. NAN without samples or memory. */
double lp_statstack_setassoc_miss_ratio(const struct lp_statstack *m, uint64_t sets, uint64_t ways);

/* The fully associative LRU ratio at lines[0, n) with the stack
 * distances checked against the samples inside their spans (the samples
 * there whose own reuse leaves the span count its distinct lines, rate
 * times them on average): each estimate scaled by its half-octave's
 * count over rate times the estimates, where the two differ by more than
 * three standard errors (docs/models.md, "Checking the stack
 * distances"). 0 or LP_ENOMEM. */
int lp_statstack_checked_curve(const struct lp_statstack *m, const double *lines, size_t n, double *ratio);
/* The LRU ratios at lines[0, n) with the estimates scaled by the lowest
 * (lo) and highest (hi) factors that the span counts of their half-octave
 * and the two on each side leave possible at 95% (docs/models.md,
 * "Checking the stack distances"): what the model's assumption, which
 * the span counts test, could be off by. Unscaled where too few span
 * lines are expected to tell. 0 or LP_ENOMEM. */
int lp_statstack_checked_band(const struct lp_statstack *m, const double *lines, size_t n, double *lo,
			      double *hi);

/* How much higher the set-associative LRU ratio of `sets` x `ways` could
 * be where the model could not see the layout: the reuses whose set
 * placement no sample showed (too few samples inside or around their
 * spans: taken as placed at random), over `ways` to LP_SA_UNSEEN_SPAN
 * times `ways` other lines, or over more where the group's own lines are
 * aligned (lp_sa_group_info.aligned) so that its spans' lines, on that
 * alignment, would put `ways` or more in a set, if all their lines shared
 * one set. Their share of the line
 * accesses, less what the model has them miss already (prob: each
 * sample's miss chance, from lp_statstack_sample_miss() for the same
 * cache). 0 for sets = 1 or without samples; NAN without memory. */
#define LP_SA_UNSEEN_SPAN 4
double lp_statstack_setassoc_unseen(const struct lp_statstack *m, uint64_t sets, uint64_t ways,
				    const double *prob);

/* Take the placement's layout (the groups of pcs and distances, their
 * walks) from `from`, a model of the same program, instead of reading it
 * from m's own samples: m's samples are put in from's groups by their pc
 * and stack distance. For the resamples of an interval, which would each
 * read the same layout again (docs/models.md, "Intervals"). Before any
 * set-associative ratio of m; 0 or a negative LP_E*. */
int lp_statstack_share_layout(struct lp_statstack *m, const struct lp_statstack *from);

/* The same by the binomial model alone (random placement everywhere). */
double lp_statstack_binomial_miss_ratio(const struct lp_statstack *m, uint64_t sets, uint64_t ways);

/* Per finite sample (profile order), the share of its span's misses
 * that fall in its line's set in a cache of `sets` sets and `lines` lines,
 * times `sets`, by the placement model: 1 where the lines spread evenly,
 * more where they crowd into few sets (docs/models.md, "Random
 * replacement in a set-associative cache"); 1 for dangling samples.
 * evict: the misses per access (the fully associative ratio), from which
 * the miss chances of a span's lines are read; 0: they miss alike.
 * fits: the run's footprint fits the cache (the fill model's cache never
 * fills), so that the lines of a walk that fit their sets' ways miss only
 * when other lines evict them. 0 or a negative LP_E*. */
int lp_statstack_crowding(const struct lp_statstack *m, uint64_t sets, double lines, double evict, int fits,
			  double *rho);

/* Per-sample miss probabilities, as lp_statcache_sample_miss(), by the
 * placement model. */
int lp_statstack_sample_miss(const struct lp_statstack *m, uint64_t sets, uint64_t ways,
			     double *prob);

/* ---- per reference ------------------------------------------------------ */
/* The per-reference miss ratio (Cachegrind's and the hardware counters':
 * a reference is one access, a miss when any of its lines misses) of line
 * size index li, from line_ratio (misses per line access) and the miss
 * probability of the reuse of each sample of the line size (in the
 * profile's order, as lp_statcache_sample_miss() gives them). It takes the
 * overlap of a straddling reference's line misses from the sampled first
 * and extra lines of straddling references (docs/models.md, "Per
 * reference"); equal to line_ratio when no reference straddles. */
double lp_ref_miss_ratio(const struct lp_profile *p, unsigned li, const double *prob, double line_ratio);

/* How the placement model reads the samples of a StatStack model: the
 * groups of samples it found (a pc with enough samples in spans, or the
 * rest together), and for the group of sample i (profile order, as
 * lp_statstack_sample_sd()) its walk: the lattice step in lines of the
 * lines in its spans, the share of them on that walk near the sampled
 * line, and how densely they fill it. */
#define LP_SA_RESIDUE_BITS 25 /* caches of up to 2^24 sets */
struct lp_sa_group_info {
	uint64_t pc;      /* 0: the rest */
	uint64_t step;    /* lines between the walk's lines (>= 1) */
	double near;      /* share of a span's lines on the walk near the
			   * reused line, 0..1 (0: random placement) */
	double density;   /* share of the walk's lines there that were
			   * touched, 0..1 */
	double extent;    /* lines of the walk that a span's lines can be
			   * among (their offsets' 99th percentile, both
			   * sides) */
	double other;     /* share of a span's lines on a second walk of
			   * the same step, shifted from the first (two
			   * columns walked together) */
	uint64_t shift[4]; /* the second walk's commonest shifts from the
			    * first (lines, modulo step) */
	double at[4];      /* the share of `other` at each; the rest is at
			    * shifts spread evenly (each span draws its own) */
	size_t samples;   /* finite samples in the group */
	size_t pairs;     /* span lines seen (samples inside their spans) */
	uint64_t aligned; /* a group with too few span lines for a layout:
			   * the largest power of two (lines, up to 2^20)
			   * modulo which most of its own sampled lines are
			   * alike (lines each at the start of a page: 64),
			   * 1 where none is; 0 where not read */
	/* weight of the span lines' offsets that are multiples of 2^k lines:
	 * residue[0] all of them, residue[k] / residue[0] the share in the
	 * reused line's set of a cache of 2^k sets */
	double residue[LP_SA_RESIDUE_BITS];
};
size_t lp_statstack_sa_groups(const struct lp_statstack *m);
void lp_statstack_sa_group(const struct lp_statstack *m, size_t g, struct lp_sa_group_info *out);

/* ---- Set-associative placement of strided walks (model-setassoc-walk.c) */

/* Greatest common divisor (gcd(a, 0) = a). */
uint64_t lp_sa_gcd(uint64_t a, uint64_t b);

struct lp_sa_walk {
	double stride;  /* bytes between consecutive lines of the walk (> 0;
			 * below a line: consecutive lines) */
	double lines;   /* distinct lines of one walk; < 2: no walk (random
			 * placement) */
	double stride1; /* bytes by which the next outer iteration moves the
			 * walk (0: unknown, or it does not move) */
};

/* Miss chances, in an LRU cache of `sets` sets of `ways` ways and
 * `line`-byte lines, of reuses at stack distances D[0..nd-1] of a line on
 * walk w (NULL: random placement, the binomial model), into miss[]. walk:
 * per reuse, how many of its D + 1 lines are on the walk, the reused line
 * included (NULL: min(D + 1, w->lines)); the others are placed at random.
 * region: per reuse, the consecutive lines of the walk, through the reused
 * one, that those are drawn from at random (NULL, or at most walk[i]: they
 * are all of them, a dense window). */
int lp_sa_walk_miss(const struct lp_sa_walk *w, uint64_t sets, uint64_t ways, uint64_t line,
		    const double *D, const double *walk, const double *region, size_t nd,
		    double *miss);

/* Probability that an access with stack distance floor(sd) misses in an
 * LRU cache of `sets` sets of `ways` ways, when lines map to sets uniformly
 * (Marin & Mellor-Crummey section 5.2). */
double lp_binomial_miss(double sd, uint64_t sets, uint64_t ways);

/* ---- Phases of a phase-guided profile (record --phases) --------------
 * The runtime classified each interval of each thread into a phase and
 * sampled it at the rate the interval records (lp_phase_interval). A
 * phase's samples, pooled over its intervals, estimate its reuse
 * distances whatever the rate of each interval, if its intervals behave
 * alike (the assumption of phase-guided sampling); a phase's share of the
 * run is its line accesses. So each phase gets a model of its own samples
 * (one window: a phase is the natural sampling window, Vestberg §5.3),
 * and the run's ratio is the phases' ratios weighted by their line
 * accesses (docs/models.md, "Phases"). */
struct lp_phase_info {
	uint32_t id;        /* the runtime's phase id */
	uint64_t accesses;  /* line accesses (line size li) in its intervals */
	uint64_t references;
	size_t intervals;
	size_t samples;     /* samples of line size li in its intervals */
	double weight;      /* accesses / the accesses of every interval; 0 for
			     * a phase without samples, whose share the others
			     * take in proportion (their weights sum to 1) */
};

struct lp_phases;
/* The phases of line size li of p (lp_profile_finish()ed, with
 * intervals): LP_EINVAL when p has none or no line size li. A sample
 * belongs to the interval of its thread that holds its time, else (a run
 * cut short) to that thread's last interval before it; a sample of a
 * thread without intervals belongs to no phase. p must outlive it. */
int lp_phases_new(struct lp_phases **out, const struct lp_profile *p, unsigned li);
void lp_phases_free(struct lp_phases *ph);
size_t lp_phases_count(const struct lp_phases *ph);
const struct lp_phase_info *lp_phases_info(const struct lp_phases *ph, size_t k);
/* Index in lp_phases_info() of each interval of p (in p's order). */
const size_t *lp_phases_interval_phase(const struct lp_phases *ph);
/* Samples of line size li in no phase. */
size_t lp_phases_unphased(const struct lp_phases *ph);
/* Phase k alone: *out is p with only the samples of line size li in
 * phase k (times unchanged, time order) and one window (window =
 * UINT64_MAX); the rest is shared with p. Release with
 * lp_profile_resample_release(). */
int lp_phases_profile(const struct lp_phases *ph, size_t k, struct lp_profile *out);
/* The run as a constant-rate profile would show it (line size li):
 * *out gets p's samples of li, plus, in each interval sampled below its
 * phase's highest rate r, copies of samples from the phase's intervals
 * sampled at r (each at the same offset within its interval, scaled to
 * the interval's length; reuse distance, pcs and address kept), chosen
 * in turn so that each interval holds about r times its line accesses.
 * A phase's recurrences then stand in the run where they happened, and
 * the models' windows see the mix of phases over time that they would
 * with constant-rate samples: a reuse spanning several phases finds the
 * stack distance of all of them. *out is a copy of p's metadata sharing
 * the rest with p; release with lp_profile_resample_release(). */
int lp_phases_expand(const struct lp_phases *ph, struct lp_profile *out);

/* The run's value from one value per phase: sum of weight_k v[k]
 * (phases of weight 0 left out); NAN if no phase has samples. */
double lp_phases_weigh(const struct lp_phases *ph, const double *v);

/* ---- Threads and shared caches (model-share.c, docs/models.md "Threads
 * and shared caches") ---------------------------------------------------- */

/* Which cache each thread uses: thread t (the samples' tid) on cache
 * group[t] for t < nthreads, later threads on t mod ngroups. One group
 * of all threads: a cache shared by the whole process (the shared view);
 * one group per thread: private caches. */
struct lp_share_placement {
	uint32_t *group;
	uint32_t nthreads, ngroups;
};

/* Threads 0 .. nthreads - 1 split into ngroups groups of consecutive
 * threads (at most nthreads groups). Release with
 * lp_share_placement_release(). */
int lp_share_placement_split(struct lp_share_placement *pl, uint32_t nthreads, uint32_t ngroups);
void lp_share_placement_release(struct lp_share_placement *pl);

/* Threads of a profile: one more than the largest thread number of its
 * samples and counts (at least 1). */
uint32_t lp_share_threads(const struct lp_profile *p);

/* How finely the threads ran interleaved, from the samples of li on both
 * clocks: for each thread, the median over its consecutive samples of the
 * shared accesses per own access between them, against that ratio over
 * its whole run; the references-weighted mean over the threads with at
 * least 16 such pairs. Near 1 when the threads ran together at steady
 * speeds (each on a core of its own), near 1 / threads when they ran one
 * at a time in long bursts (more threads than cores), which the shared
 * and two-cache models do not assume (docs/models.md, "Threads and
 * shared caches"). NAN without shared time or without two such threads. */
double lp_share_together(const struct lp_profile *p, unsigned li);
/* Below this, say that the threads ran in bursts: 4 threads in random
 * bursts of 1 to 200 accesses give 0.23 to 0.27, of 1 to 8 accesses 0.84
 * to 0.88; an OpenMP triad recorded with 4 threads on 2 cores 0.41 to
 * 0.51, with 2 threads 0.62 to 0.91. A 2-D heat stencil's 2 threads on
 * a loaded 2-core machine gave 0.51 to 0.52 in three runs whose shared
 * ratios at 16K were 16.5 %, 18.1 % and 21.0 % (simulation 16.3 %): below
 * the finely interleaved 0.84, the run's schedule moves the shared view
 * more than its sampling error, so it is said. */
#define LP_SHARE_BURSTS 0.75

/* Share of the run's references (line accesses) made by the threads of
 * group g: from the per-thread counts, else from the samples of li. */
double lp_share_group_share(const struct lp_profile *p, unsigned li, const struct lp_share_placement *pl,
			    uint32_t g);

/* The profile as group g's cache sees it: one line size (li of p), the
 * samples of g's threads on g's clock, their reuse by g's threads, and
 * lp_sample.coh = LP_COH_TRUE where a thread outside g wrote the line
 * before the reuse (else LP_COH_NONE), g's share of the accesses. Any
 * model of this header takes it. lp_profile_free() it. */
int lp_share_view(struct lp_profile **out, const struct lp_profile *p, unsigned li,
		  const struct lp_share_placement *pl, uint32_t g);

/* Misses per line access of the caches of a placement: LRU (StatStack)
 * and random (StatCache), with the coherence misses included, and of
 * them the coherence misses alone. */
struct lp_share_ratio {
	double lru, random;
	double lru_coh, random_coh;
};

/* For each of n cache sizes (lines, per cache): group g's cache alone,
 * per the group's own line accesses. */
int lp_share_group_curve(const struct lp_profile *p, unsigned li, const struct lp_share_placement *pl,
			 uint32_t g, const double *lines, size_t n, int include_cold,
			 struct lp_share_ratio *out);

/* The same for all the placement's caches (each of the size), per line
 * access of the whole process: the groups' ratios weighted by their
 * shares. */
int lp_share_placement_curve(const struct lp_profile *p, unsigned li, const struct lp_share_placement *pl,
			     const double *lines, size_t n, int include_cold, struct lp_share_ratio *out);

/* ---- Intervals: any model output, by resampling the samples ----------- */

/* A model as a function of a profile: fills out[0, n) for the n outputs
 * the caller asked for (the same n every call). */
typedef int (*lp_model_fn)(const struct lp_profile *p, void *ctx, double *out);

/* Resamples of the default interval (each a full evaluation of the model:
 * evaluation must stay instant). An interval is called wide because of a
 * cliff of the curve when its resamples spread over at least
 * LP_INTERVAL_CLIFF and over more than LP_INTERVAL_CLIFF_NOISE times the
 * binomial noise of the ratio (docs/models.md, "Intervals"). */
#define LP_INTERVAL_RESAMPLES 8
/* Threads evaluating resamples at once, at most (lp_interval_params.jobs). */
#define LP_INTERVAL_MAX_JOBS 64
/* The intervals are two-sided 95 % confidence intervals: the normal
 * quantile of their binomial floor (and, with Student's t for the
 * resamples' sd, of their width). */
#define LP_INTERVAL_Z 1.959964
/* The models' own resolution, which no resampling shows: no interval is
 * narrower than this either side of its estimate (a quarter of a point:
 * on programs recorded with 40 000 to 300 000 samples the models' errors
 * are 0.1 to 0.4 points where the resamples spread by 0.02;
 * docs/models.md, "The interval"). */
#define LP_INTERVAL_MODEL 0.0025
#define LP_INTERVAL_CLIFF 0.03
#define LP_INTERVAL_CLIFF_NOISE 6

struct lp_interval_params {
	unsigned li;        /* the line size whose samples are resampled */
	unsigned resamples; /* 0: LP_INTERVAL_RESAMPLES */
	uint64_t seed;      /* same seed, same interval */
	size_t floor_samples; /* the samples behind each output, for the
			       * binomial floor (0: every sample of li) */
	unsigned jobs;      /* resamples evaluated at once, on threads of
			     * their own (0 or 1: one at a time, on the
			     * caller's); the model function is then called
			     * concurrently, on different resamples, with the
			     * same ctx. The intervals are the same whatever
			     * the number. At most LP_INTERVAL_MAX_JOBS. */
};

/* A confidence interval of one output (a miss ratio in [0, 1]). cliff:
 * it is wide because a cliff of the curve lies within sampling error of
 * the cache size: the estimate and the resamples ranged from below to
 * above (else both NAN). */
struct lp_interval {
	double lo, hi;
	int cliff;
	double below, above;
	int steep; /* a cliff only because the curve itself drops near the
		    * size (report's LP_REPORT_SLACK_STEPS check), not because
		    * the resamples fell on both sides */
	double slack_lo, slack_hi; /* steep: the sizes checked, as factors
				    * on the size (0.85 and 1.15, or as far
				    * as the sampling error of the stack
				    * distances near it reaches) */
	int footprint; /* random replacement: a cliff because the run's
			* footprint is within sampling error of the cache's
			* size (it may never fill: report gives both ratios) */
	int spans;     /* fully associative LRU: the interval reaches the
			* ratio of the stack distances checked against the
			* samples inside their spans, outside the resamples'
			* (lp_statstack_checked_curve()); `checked` is it */
	double checked;
	int band;      /* fully associative LRU: the interval reaches, by a
			* point or more, the curves of the stack distances
			* that the samples inside the spans leave possible
			* (lp_statstack_checked_band()): the model checked
			* only loosely at the profile's rate */
};

/* Evaluate fn on resamples of p (every sample of line size ip->li kept a
 * Poisson(1) number of times) and give, for each of the n outputs whose
 * estimate on p is est[i], its interval (docs/models.md, "Intervals"):
 * the union of est +- t sd of the resamples and their range, in [0, 1]. */
int lp_model_intervals(const struct lp_profile *p, const struct lp_interval_params *ip, lp_model_fn fn,
		       void *ctx, const double *est, size_t n, struct lp_interval *out);

/* One resample: *out is p with its samples replaced by those of line size
 * li, each kept k ~ Poisson(1) times (times unchanged, order kept).
 * Everything else is shared with p: release with
 * lp_profile_resample_release(), never lp_profile_free(). */
int lp_profile_resample(struct lp_profile *out, const struct lp_profile *p, unsigned li, uint64_t seed);
void lp_profile_resample_release(struct lp_profile *r);

#ifdef __cplusplus
}
#endif
#endif
