/* Internal: the state of a profile's report, shared by its curves and
 * caches (report-profile.c) and its hot spots (report-hot.c). */
#ifndef LP_REPORT_INTERNAL_H
#define LP_REPORT_INTERNAL_H

#include <locprof/model.h>
#include <locprof/report.h>

struct lp_report_slack; /* report-slack.c */

struct lp_report {
	const struct lp_profile *p; /* the profile, or &expanded */
	struct lp_profile expanded; /* a phase-guided profile's samples as a
				     * constant-rate run's (lp_phases_expand()) */
	int has_expanded;
	const struct lp_profile *recorded; /* the profile as recorded */
	unsigned li;
	size_t first; /* the line size's first sample */
	struct lp_report_info info;
	struct lp_statstack *ss;
	struct lp_statcache *sc;
	uint64_t *sizes; /* shared by the curves */
	struct lp_curve curves[2];
	size_t ncurves;
	struct lp_report_cache *caches;
	size_t ncaches;
	struct lp_report_window *windows;
	size_t nwindows;
	struct lp_report_pc *pcs;
	size_t npcs;
	struct lp_report_object *objects;
	size_t nobjects;
	struct lp_report_pair *pairs;
	size_t npairs;
	struct lp_hotspots *hotspots;
	struct lp_report_thread *threads;
	size_t nthreads;
	double *thread_misses; /* nthreads x nthread_caches */
	struct lp_report_cache *thread_caches;
	size_t nthread_caches;
	struct lp_report_placement *placements;
	size_t nplacements;
	struct lp_report_thread_curve *thread_curves;
	size_t nthread_curves;
	struct lp_report_sharing *sharing;
	size_t nsharing;
};

/* Rank the hot pcs and data objects (params.top > 0). */
int lp_report_hot(struct lp_report *r, const struct lp_report_params *pa);
void lp_report_hot_release(struct lp_report *r);

/* The name of a pc ("func (file.c:12)"..., else its address; *known says
 * which) and of the data object holding sample s's address, as the hot
 * tables give them. report-hot.c */
const char *lp_report_pc_name(struct lp_symbols *syms, uint64_t pc, char *buf, size_t len, int *known);
void lp_report_object_name(const struct lp_objects *objs, struct lp_symbols *syms, const struct lp_sample *s,
			   char *buf, size_t len);

/* A hot row's misses (sum: its samples' summed miss probabilities,
 * sum_sq their squares) as line accesses of the run, with its squares on
 * that scale and its 95% interval (lp_report_count_interval()).
 * report-hot.c */
void lp_report_scale_row(const struct lp_report *r, double sum, double sum_sq, double *misses, double *sq,
			 double *lo, double *hi);
/* The pcs of each hot data object (r->objects computed), from each
 * sample's miss probability prob. report-pairs.c */
int lp_report_pairs_compute(struct lp_report *r, const struct lp_objects *objs, const double *prob, size_t top,
			    struct lp_symbols *syms);
void lp_report_pairs_release(struct lp_report *r);
/* The per-thread table (params.threads). report-threads.c */
int lp_report_threads_compute(struct lp_report *r, const struct lp_report_params *pa);
void lp_report_threads_release(struct lp_report *r);

/* The report's values (report-profile.c: the curves, then each named
 * cache's LRU and random ratio) from the models ss and sc. */
int lp_report_values(struct lp_statstack *ss, struct lp_statcache *sc, double line,
		     const struct lp_report_params *pa, double *out);
/* The steepness check of the intervals (report-profile.c): the factor
 * of slack step k (0 .. 2 LP_REPORT_SLACK_STEPS) on a size, and the
 * widening of intervals iv[0, ncurves n) of values v where a curve drops
 * by LP_INTERVAL_CLIFF between neighbouring slack sizes; w holds curve c
 * at slack k and size i at w[(c K + k) n + i], K = 2 LP_REPORT_SLACK_STEPS
 * + 1, the sizes scaled by slack's factors (lp_report_slack(k) where it
 * is NULL). */
double lp_report_slack(int k);
/* How far from each of n sizes (lines[j] lines) a cliff of the curves
 * could lie, from the sampling error of the profile p's model ss near it
 * (report-slack.c): lp_report_slack_factor() is the factor of slack step
 * k (0 .. 2 LP_REPORT_SLACK_STEPS) on size j (lp_report_slack(k) with s
 * NULL). */
int lp_report_slack_new(struct lp_report_slack **out, const struct lp_statstack *ss, const struct lp_profile *p,
			unsigned li, const double *lines, size_t n);
void lp_report_slack_free(struct lp_report_slack *s);
double lp_report_slack_factor(const struct lp_report_slack *s, size_t j, int k);
void lp_report_widen_steep(const double *w, size_t n, size_t ncurves, const double *v, struct lp_interval *iv,
			   const struct lp_report_slack *slack);
/* The report's models of line size li of p (window, cold, fill of pa). */
int lp_report_models(const struct lp_profile *p, unsigned li, const struct lp_report_params *pa,
		     struct lp_statstack **ss, struct lp_statcache **sc);
/* The threads-and-caches tables (params.share). report-share.c */
/* qsort order of coherence rows: false sharing first, then by misses */
int lp_report_sharing_rank(const void *a, const void *b);
int lp_report_share_compute(struct lp_report *r, const struct lp_report_params *pa);
void lp_report_share_release(struct lp_report *r);

/* Sets and ways of a cache of `bytes` with `ways` ways (0 = fully
 * associative) and the report's line size. */
void lp_report_geometry(const struct lp_report *r, uint64_t bytes, uint64_t ways, uint64_t *sets,
			uint64_t *out_ways);

/* Names of pcs and data objects as lp_attrib gives them, for the other
 * attributions of a trace (coherence.c). lp_attrib_track() follows an
 * allocation or free event and its call-stack frames (an access only
 * closes the stack of the allocation before it: give it the first access
 * after events); the object of an address is then named from the live
 * heap blocks and the symbols. The strings live as long as a. */
int lp_attrib_track(struct lp_attrib *a, const struct lp_ref *event);
int lp_attrib_object_name(struct lp_attrib *a, uint64_t addr, uint32_t *id, const char **name);
int lp_attrib_pc_name(struct lp_attrib *a, uint64_t pc, const char **function, const char **where);

#endif
