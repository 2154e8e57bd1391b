/* Straddle pattern: 8-byte loads at offset OFF (default 60) of every 64-byte
 * line of a buffer, so that each load touches two lines (bytes 60..63 of
 * one and 0..3 of the next). usage: unaligned [LINES] [PASSES] [OFF] */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	size_t lines = argc > 1 ? strtoul(argv[1], NULL, 0) : 4096;
	int passes = argc > 2 ? atoi(argv[2]) : 50;
	size_t off = argc > 3 ? strtoul(argv[3], NULL, 0) : 60;
	unsigned char *buf = aligned_alloc(64, (lines + 1) * 64);
	uint64_t sum = 0;

	if (!buf)
		return 1;
	memset(buf, 1, (lines + 1) * 64);
	for (int p = 0; p < passes; p++)
		for (size_t i = 0; i < lines; i++) {
			uint64_t v;
			memcpy(&v, buf + i * 64 + off, sizeof(v)); /* one unaligned 8-byte load */
			sum += v;
		}
	printf("%llu\n", (unsigned long long)sum);
	free(buf);
	return 0;
}
