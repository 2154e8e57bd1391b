// The program of tests/cli/test-names-lib.sh: its data lives in a heap
// block that the shared library of tests/data/names-lib.c allocates and
// walks.
#include <stdio.h>
#include <stdlib.h>

double *lib_table(size_t n);
double lib_sum(const double *t, size_t n, int rounds);

int main(void)
{
	const size_t n = 1 << 19; // 4 MiB of doubles
	double *t = lib_table(n);

	if (!t)
		return 1;
	printf("%g\n", lib_sum(t, n, 4));
	free(t);
	return 0;
}
