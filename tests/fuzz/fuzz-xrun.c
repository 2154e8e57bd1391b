/* libFuzzer harness: the model run file reader (predict collect's
 * size-P.xrun, docs/prediction.md). */
#include "fuzz-util.h"

#include <locprof/prediction.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct lp_pred_run *r;

	if (lp_pred_run_read(&r, fuzz_file(data, size)) == 0)
		lp_pred_run_free(r);
	return 0;
}
