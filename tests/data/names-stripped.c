// The program of tests/cli/test-names-stripped.sh: two arrays from two
// allocation call sites, in two functions that a stripped copy of the
// program no longer names, swept in a random order so that both miss.
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) static double *make_a(long n)
{
	double *p = malloc(n * sizeof(*p));

	for (long i = 0; p && i < n; i++)
		p[i] = (double)i;
	return p;
}

__attribute__((noinline)) static double *make_b(long n)
{
	double *p = calloc(n, sizeof(*p));

	for (long i = 0; p && i < n; i++)
		p[i] = (double)i;
	return p;
}

int main(void)
{
	const long n = 1 << 17; // 1 MiB each
	double *a = make_a(n), *b = make_b(n), s = 0;

	if (!a || !b)
		return 1;
	for (int r = 0; r < 2; r++)
		for (long i = 0; i < n; i++)
			s += a[(i * 4099) % n] + b[(i * 8191) % n];
	printf("%g\n", s);
	free(a);
	free(b);
	return 0;
}
