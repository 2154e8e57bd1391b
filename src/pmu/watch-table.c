/* The live watches of one address space (watch-table.h). */
#include "watch-table.h"

#include <stdlib.h>
#include <string.h>

#include "common/error.h"

#define WATCH_PAGE_MASK (~(uint64_t)4095)
#define WATCH_LOG2_FIRST 6
#define NO_TAG UINT32_MAX

int lp_pmu_watches_init(struct lp_pmu_watch_table *wt)
{
	void *mem = malloc(lp_watch_table_bytes(WATCH_LOG2_FIRST));

	memset(wt, 0, sizeof(*wt));
	wt->reserved = NO_TAG;
	if (!mem)
		return lp_seterr(LP_ENOMEM, "out of memory");
	lp_watch_table_init(&wt->t, mem, WATCH_LOG2_FIRST);
	return 0;
}

/* A side entry's tag: a freed one, or a new one at the end. */
static int side_take(struct lp_pmu_watch_table *wt, uint32_t *tag)
{
	if (wt->nfree) {
		*tag = wt->free_tags[--wt->nfree];
		return 0;
	}
	if (wt->nside == wt->cap) {
		uint32_t cap = wt->cap ? 2 * wt->cap : 64;
		struct lp_pmu_watch *v = realloc(wt->side, cap * sizeof(*v));
		uint32_t *f;

		if (!v)
			return LP_ENOMEM;
		wt->side = v;
		if (!(f = realloc(wt->free_tags, cap * sizeof(*f))))
			return LP_ENOMEM;
		wt->free_tags = f;
		wt->cap = cap;
	}
	*tag = wt->nside++;
	return 0;
}

struct lp_pmu_watch *lp_pmu_watches_reserve(struct lp_pmu_watch_table *wt)
{
	if (wt->reserved == NO_TAG && side_take(wt, &wt->reserved) < 0) {
		lp_seterr(LP_ENOMEM, "out of memory");
		return NULL;
	}
	memset(&wt->side[wt->reserved], 0, sizeof(wt->side[0]));
	return &wt->side[wt->reserved];
}

static uint32_t line_shift(uint32_t size)
{
	return (uint32_t)__builtin_ctz(size);
}

struct lp_watch *lp_pmu_watches_find(const struct lp_pmu_watch_table *wt, uint64_t addr, uint32_t size, uint32_t li)
{
	return lp_watch_find(&wt->t, addr >> line_shift(size), li);
}

int lp_pmu_watches_commit(struct lp_pmu_watch_table *wt)
{
	struct lp_pmu_watch *p = &wt->side[wt->reserved];
	struct lp_watch *w;

	if (lp_watch_table_must_grow(&wt->t)) {
		void *mem = malloc(lp_watch_table_bytes(wt->t.log2 + 1)), *old = wt->t.slot;

		if (!mem)
			return LP_ENOMEM;
		lp_watch_table_move(&wt->t, mem, wt->t.log2 + 1);
		free(old);
	}
	if (p->mech == LP_PMU_WATCH_PAGE && lp_pmu_pagecount_add(&wt->pages, p->line & WATCH_PAGE_MASK) < 0)
		return LP_ENOMEM;
	w = lp_watch_insert(&wt->t, p->line >> line_shift(p->size), p->s.line_idx);
	w->begin = p->s.begin;
	w->pc = p->s.pc;
	w->addr = p->s.addr;
	w->size = (uint8_t)(p->s.size < 255 ? p->s.size : 255);
	w->kind = p->s.kind;
	w->tag = wt->reserved;
	wt->reserved = NO_TAG;
	return 0;
}

void lp_pmu_watches_delete(struct lp_pmu_watch_table *wt, struct lp_watch *w)
{
	struct lp_pmu_watch *p = lp_pmu_watch_of(wt, w);

	if (p->mech == LP_PMU_WATCH_PAGE)
		lp_pmu_pagecount_remove(&wt->pages, p->line & WATCH_PAGE_MASK);
	wt->free_tags[wt->nfree++] = w->tag; /* nfree < nside <= cap */
	lp_watch_remove(&wt->t, w);
}

void lp_pmu_watches_clear(struct lp_pmu_watch_table *wt)
{
	lp_watch_table_clear(&wt->t);
	wt->nside = wt->nfree = 0;
	wt->reserved = NO_TAG;
}

int lp_pmu_watches_to_page(struct lp_pmu_watch_table *wt, struct lp_watch *w)
{
	struct lp_pmu_watch *p = lp_pmu_watch_of(wt, w);

	p->mech = LP_PMU_WATCH_PAGE;
	p->slots = 0;
	return lp_pmu_pagecount_add(&wt->pages, p->line & WATCH_PAGE_MASK) < 0 ? LP_ENOMEM : 0;
}

int lp_pmu_watches_on_page(const struct lp_pmu_watch_table *wt, uint64_t page)
{
	return lp_pmu_pagecount_get(&wt->pages, page) > 0;
}

void lp_pmu_watches_release(struct lp_pmu_watch_table *wt)
{
	free(wt->t.slot);
	free(wt->side);
	free(wt->free_tags);
	lp_pmu_pagecount_release(&wt->pages);
	memset(wt, 0, sizeof(*wt));
}
