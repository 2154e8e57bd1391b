/* libFuzzer harness: the machine file reader (docs/prediction.md), from a
 * file and from text. */
#include "fuzz-util.h"

#include <locprof/prediction.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct lp_machine m;
	char *text = fuzz_string(data, size);

	if (lp_machine_parse(&m, text, "fuzz") == 0)
		for (size_t i = 0; i < m.n; i++)
			if (!lp_pred_level_sets(&m.level[i]) || !lp_pred_level_ways(&m.level[i]))
				abort();
	free(text);
	lp_machine_read(&m, fuzz_file(data, size));
	return 0;
}
