/* libFuzzer harness: the miss-ratio curve CSV reader (docs/formats.md,
 * "Miss-ratio curves"), as report --reference uses it. */
#include "fuzz-util.h"

#include <locprof/report.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct lp_curve *c;
	size_t n;

	if (lp_curves_read_csv(fuzz_file(data, size), &c, &n) == 0)
		lp_curves_free(c, n);
	return 0;
}
