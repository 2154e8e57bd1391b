/* libFuzzer harness: the fitted model file reader (model fit's
 * model.xmodel, docs/prediction.md). */
#include "fuzz-util.h"

#include <locprof/xpred.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct lp_xmodel *m;

	if (lp_xmodel_read(&m, fuzz_file(data, size)) == 0) {
		for (size_t g = 0; g < lp_xmodel_ngroups(m); g++) {
			struct lp_xgroup_info gi;
			lp_xmodel_group(m, g, &gi);
		}
		lp_xmodel_free(m);
	}
	return 0;
}
