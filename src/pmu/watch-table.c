/* The live watches of one address space (watch-table.h). */
#include "watch-table.h"

#include <stdlib.h>
#include <string.h>

#include "common/error.h"

#define WATCH_PAGE_MASK (~(uint64_t)4095)

struct lp_pmu_watch *lp_pmu_watches_reserve(struct lp_pmu_watch_table *wt)
{
	if (wt->n == wt->cap) {
		size_t cap = wt->cap ? 2 * wt->cap : 64;
		struct lp_pmu_watch *v = realloc(wt->v, cap * sizeof(*v));

		if (!v) {
			lp_seterr(LP_ENOMEM, "out of memory");
			return NULL;
		}
		wt->v = v;
		wt->cap = cap;
	}
	memset(&wt->v[wt->n], 0, sizeof(wt->v[0]));
	return &wt->v[wt->n];
}

int lp_pmu_watches_commit(struct lp_pmu_watch_table *wt)
{
	struct lp_pmu_watch *w = &wt->v[wt->n];

	if (w->mech == LP_PMU_WATCH_PAGE && lp_pmu_pagecount_add(&wt->pages, w->line & WATCH_PAGE_MASK) < 0)
		return LP_ENOMEM;
	wt->n++;
	return 0;
}

void lp_pmu_watches_delete(struct lp_pmu_watch_table *wt, size_t i)
{
	if (wt->v[i].mech == LP_PMU_WATCH_PAGE)
		lp_pmu_pagecount_remove(&wt->pages, wt->v[i].line & WATCH_PAGE_MASK);
	wt->v[i] = wt->v[--wt->n];
}

int lp_pmu_watches_to_page(struct lp_pmu_watch_table *wt, size_t i)
{
	struct lp_pmu_watch *w = &wt->v[i];

	w->mech = LP_PMU_WATCH_PAGE;
	w->slots = 0;
	return lp_pmu_pagecount_add(&wt->pages, w->line & WATCH_PAGE_MASK) < 0 ? LP_ENOMEM : 0;
}

int lp_pmu_watches_on_page(const struct lp_pmu_watch_table *wt, uint64_t page)
{
	return lp_pmu_pagecount_get(&wt->pages, page) > 0;
}

void lp_pmu_watches_release(struct lp_pmu_watch_table *wt)
{
	free(wt->v);
	lp_pmu_pagecount_release(&wt->pages);
	memset(wt, 0, sizeof(*wt));
}
