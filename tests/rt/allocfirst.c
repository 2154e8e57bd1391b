/* Without arguments, the program's first reference comes after malloc: the
 * runtime sets the thread up in the allocation event, and the instrumented
 * main carries the countdown it read at entry across the call (LLVM takes
 * malloc to touch no memory of the program, so the reload after it is
 * forwarded from the load at entry; the argv[1] branch keeps that load
 * alive). The reference count must not depend on the sampling rate.
 * usage: allocfirst [N]   (default 300000) */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 300000, sum = 0;
	long *a = malloc(sizeof(long) * (size_t)n);

	for (long i = 0; i < n; i++)
		a[i] = i;
	for (int r = 0; r < 3; r++)
		for (long i = 0; i < n; i += 3)
			sum += a[i];
	printf("%ld\n", sum);
	free(a);
	return 0;
}
