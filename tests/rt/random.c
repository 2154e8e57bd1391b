/* A spread of reuse distances: N one-byte loads of lines drawn at random
 * (xorshift, fixed seed) from M lines, half of them from the first M/16
 * lines (a hot set), so that distances cover several orders of magnitude.
 * usage: random M N */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	long m = argc > 1 ? atol(argv[1]) : 4096, n = argc > 2 ? atol(argv[2]) : 1000000, s = 0;
	volatile char *a;
	unsigned long x = 88172645463325252ul;

	if (m < 16 || n < 1)
		return 2;
	a = aligned_alloc(64, (size_t)m * 64);
	memset((char *)a, 1, (size_t)m * 64);
	for (long i = 0; i < n; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		long line = (long)((x >> 1) % (unsigned long)((x & 1) ? m / 16 : m));
		s += a[line * 64];
	}
	printf("%ld\n", s);
	return 0;
}
