/* Internal: the state of a profile's report, shared by its curves and
 * caches (report-profile.c) and its hot spots (report-hot.c). */
#ifndef LP_REPORT_INTERNAL_H
#define LP_REPORT_INTERNAL_H

#include <locprof/model.h>
#include <locprof/report.h>

struct lp_report {
	const struct lp_profile *p;
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
};

/* Rank the hot pcs and data objects (params.top > 0). */
int lp_report_hot(struct lp_report *r, const struct lp_report_params *pa);
void lp_report_hot_release(struct lp_report *r);

#endif
