/* libFuzzer harness: the source-file reader of `locprof annotate`
 * (lp_source_read): any bytes split into lines, each without its newline,
 * and no more lines than the input has bytes plus one. */
#include "fuzz-util.h"

#include <locprof/report.h>

#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct lp_source_text *t;

	if (lp_source_read(&t, fuzz_file(data, size), NULL, 0) < 0)
		return 0;
	if (t->n > size + 1)
		abort();
	for (size_t i = 0; i < t->n; i++)
		if (strchr(t->lines[i], '\n'))
			abort();
	lp_source_free(t);
	return 0;
}
