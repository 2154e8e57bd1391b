/* libFuzzer harness: the fitted model file reader (model fit's
 * model.xmodel, docs/prediction.md). */
#include "fuzz-util.h"

#include <locprof/prediction.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct lp_pred_model *m;

	if (lp_pred_model_read(&m, fuzz_file(data, size)) == 0) {
		for (size_t g = 0; g < lp_pred_model_ngroups(m); g++) {
			struct lp_pred_group_info gi;
			lp_pred_model_group(m, g, &gi);
		}
		lp_pred_model_free(m);
	}
	return 0;
}
