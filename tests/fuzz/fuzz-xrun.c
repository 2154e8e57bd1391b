/* libFuzzer harness: the model run file reader (model collect's
 * size-P.xrun, docs/prediction.md). */
#include "fuzz-util.h"

#include <locprof/xpred.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct lp_xrun *r;

	if (lp_xrun_read(&r, fuzz_file(data, size)) == 0)
		lp_xrun_free(r);
	return 0;
}
