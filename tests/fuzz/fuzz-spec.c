/* libFuzzer harness: the cache SPEC parser (SIZE:ASSOC:LINE[:POLICY],
 * docs/simulator.md) and the size lists of --sizes and --line
 * (4K,32K..1M), both read from the command line. */
#include "fuzz-util.h"

#include <locprof/sim.h>

#include "cli.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_string(data, size), buf[128];
	struct lp_cache_spec spec;
	uint64_t *v;
	size_t n;

	if (lp_cache_spec_parse(&spec, text) == 0) {
		if (lp_cache_spec_check(&spec) < 0 || !lp_cache_spec_ways(&spec) ||
		    !lp_cache_spec_sets(&spec))
			abort(); /* a parsed spec is a valid one */
		lp_cache_spec_format(&spec, buf, sizeof(buf));
	}
	if (cli_parse_size_list(text, &v, &n) == 0) {
		for (size_t i = 1; i < n; i++)
			if (v[i] <= v[i - 1])
				abort(); /* sorted, without duplicates */
		free(v);
	}
	free(text);
	return 0;
}
