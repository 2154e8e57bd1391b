/* A loop with a known number of accesses: N 4-byte stores, then N 4-byte
 * loads, for the exact counts of trace mode. */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	int n = atoi(argv[1]);
	volatile int *a = malloc((size_t)n * sizeof(int));
	long s = 0;

	for (int i = 0; i < n; i++)
		a[i] = i;
	for (int i = 0; i < n; i++)
		s += a[i];
	printf("%ld\n", s);
	return 0;
}
