/* The live watches of one address space (one process image): the sampled
 * lines whose next access ends a sample, each watched by debug registers or
 * by page protection, and a count of page watches per page so that "is
 * this fault on a watched page" costs O(1) however many samples dangle.
 *
 * This is the whole interface the engine uses to keep watches: adopting a
 * shared watch-table core for all backends means changing this file and
 * watch-table.c only. Watches are in no order; deleting one moves the last
 * one into its place (callers walking the table with an index do not
 * advance it after a delete). */
#ifndef LP_PMU_WATCH_TABLE_H
#define LP_PMU_WATCH_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "pagecount.h"
#include "pmu-sampler.h"

struct lp_pmu_thread;

struct lp_pmu_watch {
	uint64_t line;   /* first byte of the watched line */
	uint32_t size;   /* its line size */
	int mech;        /* LP_PMU_WATCH_DR or LP_PMU_WATCH_PAGE */
	int slots;       /* DR: bitmask of debug registers */
	struct lp_pmu_thread *dr_thread;
	struct lp_pmu_sample s; /* the sample it ends */
};

struct lp_pmu_watch_table {
	struct lp_pmu_watch *v; /* v[0..n) are live */
	size_t n, cap;
	struct lp_pmu_pagecount pages; /* pages with page watches: how many each */
};

/* A zeroed slot for a new watch, not yet live (v[n]); NULL when out of
 * memory (lp_errmsg set). Fill it, then commit it or forget it. */
struct lp_pmu_watch *lp_pmu_watches_reserve(struct lp_pmu_watch_table *wt);
/* The reserved watch is live from now on. 0 or LP_ENOMEM. */
int lp_pmu_watches_commit(struct lp_pmu_watch_table *wt);
/* Forget watch i (the caller restores page permissions if needed). */
void lp_pmu_watches_delete(struct lp_pmu_watch_table *wt, size_t i);
/* Watch i moves from debug registers to page protection. 0 or LP_ENOMEM. */
int lp_pmu_watches_to_page(struct lp_pmu_watch_table *wt, size_t i);
/* Does any page watch lie on page? */
int lp_pmu_watches_on_page(const struct lp_pmu_watch_table *wt, uint64_t page);
void lp_pmu_watches_release(struct lp_pmu_watch_table *wt);

#endif
