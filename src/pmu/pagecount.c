/* The page-count table of the watchpoints (pagecount.h). */
#include "pagecount.h"

#include <stdlib.h>

#include <locprof/common.h>
#include "common/error.h"
#include "common/hash.h"

static struct lp_pmu_pcslot *slot(const struct lp_pmu_pagecount *pc, uint64_t page)
{
	size_t mask = pc->cap - 1, i;

	if (!pc->cap)
		return NULL;
	for (i = lp_hash64(page) & mask; pc->v[i].page && pc->v[i].page != page; i = (i + 1) & mask)
		;
	return &pc->v[i];
}

int lp_pmu_pagecount_add(struct lp_pmu_pagecount *pc, uint64_t page)
{
	struct lp_pmu_pcslot *c;

	if (2 * (pc->n + 1) > pc->cap) {
		size_t cap = pc->cap ? 2 * pc->cap : 64, old = pc->cap;
		struct lp_pmu_pcslot *v = calloc(cap, sizeof(*v)), *ov = pc->v;

		if (!v)
			return lp_seterr(LP_ENOMEM, "out of memory");
		pc->v = v;
		pc->cap = cap;
		for (size_t i = 0; i < old; i++)
			if (ov[i].page)
				*slot(pc, ov[i].page) = ov[i];
		free(ov);
	}
	c = slot(pc, page);
	if (!c->page) {
		c->page = page;
		c->n = 0; /* an emptied slot keeps the count it had */
		pc->n++;
	}
	c->n++;
	return 0;
}

void lp_pmu_pagecount_remove(struct lp_pmu_pagecount *pc, uint64_t page)
{
	struct lp_pmu_pcslot *c = slot(pc, page);
	size_t mask = pc->cap - 1, i, j;

	if (!c || c->page != page || --c->n > 0)
		return;
	i = (size_t)(c - pc->v);
	pc->v[i].page = 0;
	pc->n--;
	for (j = (i + 1) & mask; pc->v[j].page; j = (j + 1) & mask) {
		size_t home = lp_hash64(pc->v[j].page) & mask;

		/* Move it back when the hole lies on its probe path [home, j). */
		if (((j - home) & mask) >= ((j - i) & mask)) {
			pc->v[i] = pc->v[j];
			pc->v[j].page = 0;
			i = j;
		}
	}
}

uint32_t lp_pmu_pagecount_get(const struct lp_pmu_pagecount *pc, uint64_t page)
{
	const struct lp_pmu_pcslot *c = slot(pc, page);

	return c && c->page == page ? c->n : 0;
}

void lp_pmu_pagecount_release(struct lp_pmu_pagecount *pc)
{
	free(pc->v);
	pc->v = NULL;
	pc->n = pc->cap = 0;
}
