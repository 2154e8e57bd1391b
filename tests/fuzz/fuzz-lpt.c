/* libFuzzer harness: the .lpt trace reader (docs/formats.md, "Binary
 * traces"), then the sampler over what it delivers.
 *
 * Mutated files rarely get past the header checksum and zstd's content
 * checksum, so an input whose first byte is 'P' is instead a block
 * payload: the harness compresses the rest into one record block (count
 * from the next two bytes) with good checksums and an end block, which
 * puts the record decoder itself under the fuzzer. Any other input is
 * read as a file. */
#include "fuzz-util.h"
#include "fuzz-trace.h"

#include <string.h>
#include <zstd.h>

static uint32_t fnv(const uint8_t *p, size_t n)
{
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 16777619u;
	return h;
}

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void put64(uint8_t *p, uint64_t v)
{
	put32(p, (uint32_t)v);
	put32(p + 4, (uint32_t)(v >> 32));
}

static size_t block_header(uint8_t *h, char type, uint32_t count, uint32_t csize, uint32_t rsize,
			   uint64_t first)
{
	memset(h, 0, 32);
	h[0] = (uint8_t)type;
	put32(h + 4, count);
	put32(h + 8, csize);
	put32(h + 12, rsize);
	put64(h + 16, first);
	put32(h + 28, fnv(h, 28));
	return 32;
}

/* A trace of one record block holding payload[0, n) as count records. */
static void payload_trace(const uint8_t *payload, size_t n, uint32_t count)
{
	/* version 2: every record of version 1, and frame records */
	static const uint8_t head[16] = { 0x89, 'L', 'P', 'T', '\r', '\n', 0x1a, '\n', 2 };
	size_t bound = ZSTD_compressBound(n), len = 0, c;
	uint8_t *file = malloc(16 + 32 + bound + 32);

	if (!file)
		abort();
	memcpy(file, head, 16);
	len = 16 + 32;
	c = ZSTD_compress(file + len, bound, payload, n, 1);
	if (ZSTD_isError(c))
		abort();
	block_header(file + 16, 'R', count, (uint32_t)c, (uint32_t)n, 0);
	len += c;
	len += block_header(file + len, 'E', 1, 0, 0, count);
	fuzz_read_trace("lpt", fuzz_file(file, len));
	free(file);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size >= 3 && data[0] == 'P') {
		uint32_t count = (uint32_t)data[1] | (uint32_t)data[2] << 8;
		payload_trace(data + 3, size - 3, count ? count : 1);
		return 0;
	}
	fuzz_read_trace("lpt", fuzz_file(data, size));
	return 0;
}
