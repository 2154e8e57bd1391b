/* Internal: what the models share inside src/lib/model. */
#ifndef LP_MODEL_INTERNAL_H
#define LP_MODEL_INTERNAL_H

#include <locprof/model.h>

/* lp_statstack_new(), without the per-sample stack distance estimates
 * when want_sd is 0: only lp_statstack_distinct() and
 * lp_statstack_expected_sd() may then be used (StatCache takes the
 * footprint over time from it). */
int lp_statstack_new_internal(struct lp_statstack **out, const struct lp_profile *p, unsigned li,
			      uint64_t window, int include_cold, int want_sd);

#endif
