/* Where to collect: the largest fitted size that the checks `crosses` and
 * `few` ask for at a predicted size (docs/prediction.md, "Choosing the
 * sizes"), for `predict collect --sizes auto`.
 *
 * Assumptions:
 * - Each of those two checks says, in its reason, from which size its
 *   cause is gone: `crosses` the size at which the short reuses it counts
 *   reach the level's capacity (collected there, they are measured past
 *   it), `few` the size from which the program's data span 64 blocks of
 *   the level. The largest fitted size must reach both, for every level.
 *   The other checks name no size: collecting nearer P is all they ask,
 *   and that is what a larger largest size does as well.
 * - A `few` level whose data reach 64 blocks only past the model's range
 *   (few_at = 0) asks for P itself.
 */
#include "prediction/prediction-model.h"

#include "common/error.h"

#include <math.h>
#include <string.h>

int lp_pred_model_plan(const struct lp_pred_model *m, const struct lp_pred_level *levels, size_t nlevels, double P,
		       struct lp_pred_plan *out)
{
	memset(out, 0, sizeof(*out));
	if (nlevels > LP_PRED_PLAN_LEVELS)
		return lp_seterr(LP_ELIMIT, "at most %d levels", LP_PRED_PLAN_LEVELS);
	out->nlevels = nlevels;
	for (size_t l = 0; l < nlevels; l++) {
		struct lp_pred_check sum, c;
		struct lp_pred_validity v;
		double need = 0;
		int rc;

		memset(&sum, 0, sizeof(sum));
		for (size_t g = 0; g < m->ngroups; g++) {
			if ((rc = lp_pred_model_check(m, g, &levels[l], P, &c)) < 0)
				return rc;
			lp_pred_check_add(&sum, &c);
		}
		sum.total = 1;
		sum.refs_total = lp_pred_model_eval(m, &m->refs, P);
		lp_pred_check_judge(&sum, &levels[l], &v);
		out->flags[l] = v.flags;
		if (v.flags & LP_PRED_CHECK_CROSSES)
			need = fmax(need, sum.cross_at > 0 ? sum.cross_at : P);
		if (v.flags & LP_PRED_CHECK_FEW)
			need = fmax(need, sum.few_at > 0 ? sum.few_at : P);
		out->need[l] = need;
		out->need_max = fmax(out->need_max, need);
	}
	return 0;
}
