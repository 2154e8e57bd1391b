/* Pages holding page-protection watches: page -> number of watches, so
 * that "is this fault ours" costs O(1) however many samples are dangling.
 * Open addressing, linear probing, backward-shift deletion (no
 * tombstones); at most half full. Checked against a plain array in
 * tests/pmu/test-pmu-unit.c. */
#ifndef LP_PMU_PAGECOUNT_H
#define LP_PMU_PAGECOUNT_H

#include <stddef.h>
#include <stdint.h>

struct lp_pmu_pcslot {
	uint64_t page; /* 0: empty (page 0 is never mapped) */
	uint32_t n;
};

struct lp_pmu_pagecount {
	struct lp_pmu_pcslot *v; /* capacity a power of two */
	size_t n, cap;
};

/* One more watch on page (nonzero). 0 or LP_ENOMEM. */
int lp_pmu_pagecount_add(struct lp_pmu_pagecount *pc, uint64_t page);
/* One watch fewer on page (nothing if it has none). */
void lp_pmu_pagecount_remove(struct lp_pmu_pagecount *pc, uint64_t page);
/* Watches on page. */
uint32_t lp_pmu_pagecount_get(const struct lp_pmu_pagecount *pc, uint64_t page);
void lp_pmu_pagecount_release(struct lp_pmu_pagecount *pc);

#endif
