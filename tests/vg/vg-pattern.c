/* A known reference pattern for the valgrind backend's tests: R cycles over
 * K distinct 64-byte lines, one load per line per cycle, so every load of
 * the cycle after the first has reuse distance exactly K-1 (K-1 other
 * references in between) and the buffer gets exactly K*R references.
 * Built with -O2: the loop keeps its counters in registers, so the volatile
 * loads are its only memory references. Prints the buffer's range. */
#include <stdio.h>
#include <stdlib.h>

#define LINE 64

static char buf[4096 * LINE] __attribute__((aligned(LINE)));

int main(int argc, char **argv)
{
	int k = argc > 1 ? atoi(argv[1]) : 100, r = argc > 2 ? atoi(argv[2]) : 200;
	volatile char *p = buf;
	unsigned sum = 0;

	if (k < 1 || k > 4096 || r < 1)
		return 2;
	for (int c = 0; c < r; c++)
		for (int i = 0; i < k; i++)
			sum += p[(long)i * LINE];
	printf("buf %p %p sum %u\n", (void *)buf, (void *)(buf + (long)k * LINE), sum);
	return 0;
}
