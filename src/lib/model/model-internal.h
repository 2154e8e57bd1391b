/* Internal: what the models share inside src/lib/model. */
#ifndef LP_MODEL_INTERNAL_H
#define LP_MODEL_INTERNAL_H

#include <locprof/model.h>

/* lp_statstack_new(), without the per-sample stack distance estimates
 * when want_sd is 0: only lp_statstack_distinct(),
 * lp_statstack_expected_sd() and the footprint below may then be used
 * (StatCache takes the footprint over time from it). */
int lp_statstack_new_internal(struct lp_statstack **out, const struct lp_profile *p, unsigned li,
			      uint64_t window, int include_cold, int want_sd);

/* The footprint over time, counted from the samples (StatCache's fill
 * model): lp_statstack_prepare_footprint() builds it (0, or LP_ENOMEM);
 * then lp_statstack_footprint() is the distinct lines among the line
 * accesses [0, h] and lp_statstack_fill_time() the first sample time at
 * which the footprint exceeded `lines` (UINT64_MAX: never). */
int lp_statstack_prepare_footprint(const struct lp_statstack *m);
double lp_statstack_footprint(const struct lp_statstack *m, uint64_t h);
uint64_t lp_statstack_fill_time(const struct lp_statstack *m, double lines);

/* The window length the model was built with (its phases' grid). */
uint64_t lp_statstack_length(const struct lp_statstack *m);

/* Cut the run [0, total) into phases: windows of len line accesses
 * joined while their reuse distances look alike (model-phases.c). s: the
 * line size's samples, sorted by time. *bounds gets *nphases + 1
 * positions, from 0 to total; free() it. */
int lp_model_phases(const struct lp_sample *s, size_t n, uint64_t total, uint64_t len,
		    uint64_t **bounds, size_t *nphases);

/* What both models read of a profile: the samples of one line size. */
struct lp_model_samples {
	const struct lp_profile *p;
	size_t first, n; /* [first, first + n) of p's samples */
	int include_cold;
};

/* A zeroed model of `size` bytes that starts with a struct
 * lp_model_samples for line size li of p. Returns 0, LP_EINVAL (no such
 * line size) or LP_ENOMEM. */
int lp_model_alloc(void **out, size_t size, const struct lp_profile *p, unsigned li, int include_cold);

/* First index in s[0, n) (sorted by time) with time >= t. */
size_t lp_model_first_at(const struct lp_sample *s, size_t n, uint64_t t);

/* For each finite sample of s[0, n) (one line size, in time order), the
 * samples of its thread inside its span whose own span leaves it: rate
 * times its stack distance on average (model-span-check.c); 0 for the
 * dangling ones. 0 or LP_ENOMEM. */
int lp_sd_span_counts(const struct lp_sample *s, size_t n, double *count);

/* The placement of the samples' spans in the sets (model-setassoc.c):
 * built from the samples s[0, n) of one line size (sorted by time) and
 * their stack distance estimates sd (INFINITY: dangling). */
struct lp_sa_place;
int lp_sa_place_new(struct lp_sa_place **out, const struct lp_sample *s, size_t n, const double *sd,
		    uint64_t line);
void lp_sa_place_free(struct lp_sa_place *pl);
/* The lines of the spans that hold no sample, from the walks of the pcs
 * around them (model-setassoc-drift.c): built once for the samples
 * s[0, n) of one line size (sorted by time). */
struct lp_sa_drift;
int lp_sa_drift_new(struct lp_sa_drift **out, const struct lp_sample *s, size_t n);
void lp_sa_drift_free(struct lp_sa_drift *d);
/* The offsets (in lines of `line` bytes, from sample i's access) of the
 * lines that the walks of the pcs around sample i cross in its span, at
 * most max of them into delta, and beside each the reuse distance of the
 * sample its walk was read from (INFINITY: dangling) into rd; returns how
 * many. span_lines: the D + 1 lines of the span (StatStack's estimate):
 * where the walks stand for fewer, the next lines of walks that move
 * together are added (see next_lines()). */
size_t lp_sa_drift_offsets(const struct lp_sa_drift *d, const struct lp_sample *s, size_t n, size_t i,
			   uint64_t line, double span_lines, int64_t *delta, double *rd, size_t max);
/* The key of a sample's group (model-setassoc-key.c): its pc and the
 * octave of its stack distance sd, below 16 lines the distance itself. */
uint64_t lp_sa_group_key(const struct lp_sample *x, double sd);
/* The key of its pc and octave (model-setassoc-key.c): lp_sa_group_key()'s
 * from 16 lines on; below, the pool of its D's keys. */
uint64_t lp_sa_octave_key(const struct lp_sample *x, double sd);
/* The hot footprints of the samples s[0, n) (sorted by time; sd as for
 * lp_sa_place_new()): the pcs that read a few lines over and over
 * (model-setassoc-hot.c). */
struct lp_sa_hot;
int lp_sa_hot_new(struct lp_sa_hot **out, const struct lp_sample *s, size_t n, const double *sd, uint64_t line);
void lp_sa_hot_free(struct lp_sa_hot *h);
/* prob[i] = 1 (an LRU miss in `sets` x `ways`) for the samples whose
 * hot footprint, held whole by the reuse's span, has `ways` or more other
 * lines in the sample's set; where lp_sa_place_unseen() (no sample
 * showed the span's layout), at least the miss chance of the pc's own lines in the span on
 * the alignment of its sampled lines; the others left alone. */
int lp_sa_hot_miss(const struct lp_sa_hot *h, const struct lp_sa_place *pl, const double *sd, uint64_t sets,
		   uint64_t ways, double *prob);
/* The same lines for random replacement in `sets` sets of `ways` ways:
 * rho[i] (lp_sa_place_crowding()) at least what they give. */
int lp_sa_hot_rho(const struct lp_sa_hot *h, const struct lp_sa_place *pl, const double *sd, uint64_t sets,
		  double ways, int fits, double *rho);
/* Span lines that crowd the reused line's set beyond what a group's walk
 * places there (model-setassoc-residue.c): lp_sa_residue_add() counts
 * each offset into G->residue; for a group placed at random or on a walk
 * of step 1, lp_sa_residue_miss() sets prob[idx[j]] (LRU) and
 * lp_sa_residue_rho() rho[idx[j]] (random replacement) of its k samples
 * and returns 1 where the offsets' share in the reused line's set of a
 * cache of `sets` sets is beyond chance; 0 (nothing set) otherwise. */
void lp_sa_residue_add(struct lp_sa_group_info *G, int64_t delta, double weight);
int lp_sa_residue_miss(const struct lp_sa_group_info *G, const double *sd, uint64_t sets, uint64_t ways,
		       const size_t *idx, size_t k, double *prob);
int lp_sa_residue_rho(const struct lp_sa_group_info *G, const double *sd, uint64_t sets, double ways, int fits,
		      const size_t *idx, size_t k, double *rho);
/* rho of a reuse over D other lines, c of the w lines a walk (or a rule
 * of model-setassoc-hot.c) places in its set, theta their miss chance
 * against the others' (model-setassoc.c). */
double lp_sa_crowd_rho(double c, double w, double D, double theta, uint64_t sets, double ways, int fits);
/* The samples s[0, n) of another profile (a resample) in the groups of
 * `layout`, with its walks: by their pc and octave of sd, the rest of the
 * octave where the layout has no group of their own, the binomial model
 * where it has neither. */
int lp_sa_place_assign(struct lp_sa_place **out, const struct lp_sa_place *layout, const struct lp_sample *s,
		       size_t n, const double *sd);
size_t lp_sa_place_groups(const struct lp_sa_place *pl);
void lp_sa_place_group(const struct lp_sa_place *pl, size_t g, struct lp_sa_group_info *out);
/* 1 for a finite sample whose group read too few offsets for a layout
 * (placed at random by default, not by what was seen). */
int lp_sa_place_unseen(const struct lp_sa_place *pl, size_t i);
/* Each group's lp_sa_group_info.aligned (model-setassoc-align.c), from
 * its finite samples s[order[start[k], start[k + 1])] (line = addr >>
 * shift); 1 for the groups with min_pairs span lines or more, whose
 * layout was read. 0 or LP_ENOMEM. */
int lp_sa_group_alignment(struct lp_sa_group_info *g, size_t ng, const size_t *start, const size_t *order,
			  const struct lp_sample *s, unsigned shift, size_t min_pairs);
/* The sets of `sets` that lines on sample i's group's alignment
 * (lp_sa_group_info.aligned) land on: sets / gcd(aligned, sets), sets
 * where the group's own lines show none. */
double lp_sa_place_aligned_sets(const struct lp_sa_place *pl, size_t i, uint64_t sets);
/* Miss chance of each finite sample's reuse in an LRU cache of `sets`
 * sets of `ways` ways, into prob[i] (the dangling ones left alone). */
int lp_sa_place_miss(const struct lp_sa_place *pl, const double *sd, uint64_t sets, uint64_t ways,
		     double *prob);
/* For random replacement in a cache of `sets` sets and `lines` lines: per
 * finite sample, the share of its span's misses that fall in its line's
 * set, times `sets` (1: even, as with random placement), into rho[i]; 1
 * for the dangling ones. evict: misses per access, for the miss chances
 * of the span's lines (0: they miss alike). fits: the run's footprint
 * fits the cache, so that a walk that fits its sets evicts nothing. */
int lp_sa_place_crowding(const struct lp_sa_place *pl, const double *sd, uint64_t sets, double lines, double evict,
			 int fits, double *rho);

#endif
