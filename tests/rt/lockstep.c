/* Two arrays of N lines touched in lock-step, R rounds: a[i] then b[i].
 * Every non-dangling sample has reuse distance 2N-1. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	long n = atol(argv[1]), rounds = atol(argv[2]), s = 0;
	volatile char *a = aligned_alloc(64, (size_t)n * 64);
	volatile char *b = aligned_alloc(64, (size_t)n * 64);

	memset((char *)a, 1, (size_t)n * 64);
	memset((char *)b, 2, (size_t)n * 64);
	for (long r = 0; r < rounds; r++)
		for (long i = 0; i < n; i++)
			s += a[i * 64] + b[i * 64];
	printf("%ld\n", s);
	return 0;
}
