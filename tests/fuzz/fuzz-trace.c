/* libFuzzer harness: a trace reader (FUZZ_FORMAT: "text", "lackey" or
 * "lpt"; docs/formats.md), and the StatCache sampler over what it
 * delivers, which walks every line of every reference and numbers the
 * threads. Every record delivered must be a valid reference or event. */
#include "fuzz-util.h"
#include "fuzz-trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_read_trace(FUZZ_FORMAT, fuzz_file(data, size));
	return 0;
}
