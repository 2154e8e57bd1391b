/* The live watches of one address space (one process image): the sampled
 * lines whose next access ends a sample, each watched by debug registers or
 * by page protection, and a count of page watches per page so that "is
 * this fault on a watched page" costs O(1) however many samples dangle.
 *
 * The watches are the shared watch-table core (common/watch-core.h), keyed
 * by (address >> log2(line size), line size index), so "which watch does
 * this access touch" is a lookup per line it covers. What only this
 * sampler needs (mechanism, debug-register slots, the full sample) lies in
 * a side array indexed by the core watch's tag. Walk the watches with the
 * core's lp_watch_walk (which may end watches) or lp_watch_table_next (which
 * may not) over &wt->t; insert nothing during a walk. */
#ifndef LP_PMU_WATCH_TABLE_H
#define LP_PMU_WATCH_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "common/watch-core.h"
#include "pagecount.h"
#include "pmu-sampler.h"

struct lp_pmu_thread;

/* The pmu-only part of a watch (the side array's entry). */
struct lp_pmu_watch {
	uint64_t line;   /* first byte of the watched line */
	uint32_t size;   /* its line size */
	int mech;        /* LP_PMU_WATCH_DR or LP_PMU_WATCH_PAGE */
	int slots;       /* DR: bitmask of debug registers */
	struct lp_pmu_thread *dr_thread;
	struct lp_pmu_sample s; /* the sample it ends */
};

struct lp_pmu_watch_table {
	struct lp_watch_table t;  /* the live watches; tag: index into side */
	struct lp_pmu_watch *side;
	uint32_t *free_tags;      /* side entries not in use */
	uint32_t nside, cap, nfree;
	uint32_t reserved;        /* the reserved entry's tag, UINT32_MAX if none */
	struct lp_pmu_pagecount pages; /* pages with page watches: how many each */
};

/* An empty table. 0 or LP_ENOMEM. */
int lp_pmu_watches_init(struct lp_pmu_watch_table *wt);
/* A zeroed side entry for a new watch, not yet live; NULL when out of
 * memory (lp_errmsg set). Fill line, size, mech, slots, dr_thread and s,
 * then commit it or forget it (the next reserve reuses it). */
struct lp_pmu_watch *lp_pmu_watches_reserve(struct lp_pmu_watch_table *wt);
/* The reserved watch is live from now on; its line must not be watched
 * already at its line size (lp_pmu_watches_find). 0 or LP_ENOMEM. */
int lp_pmu_watches_commit(struct lp_pmu_watch_table *wt);
/* The live watch of the line holding addr at line size index li
 * (line size size), or NULL. */
struct lp_watch *lp_pmu_watches_find(const struct lp_pmu_watch_table *wt, uint64_t addr, uint32_t size, uint32_t li);
/* The pmu-only part of live watch w. */
static inline struct lp_pmu_watch *lp_pmu_watch_of(const struct lp_pmu_watch_table *wt, const struct lp_watch *w)
{
	return &wt->side[w->tag];
}
static inline uint64_t lp_pmu_watches_live(const struct lp_pmu_watch_table *wt)
{
	return wt->t.live;
}
/* Forget watch w (the caller restores page permissions if needed). Other
 * pointers into the table do not survive this (see lp_watch_remove). */
void lp_pmu_watches_delete(struct lp_pmu_watch_table *wt, struct lp_watch *w);
/* Forget every watch (the caller has emitted them). */
void lp_pmu_watches_clear(struct lp_pmu_watch_table *wt);
/* Watch w moves from debug registers to page protection. 0 or LP_ENOMEM. */
int lp_pmu_watches_to_page(struct lp_pmu_watch_table *wt, struct lp_watch *w);
/* Does any page watch lie on page? */
int lp_pmu_watches_on_page(const struct lp_pmu_watch_table *wt, uint64_t page);
void lp_pmu_watches_release(struct lp_pmu_watch_table *wt);

#endif
