// A shared library for the naming of code and heap blocks by library
// (tests/cli/test-names-lib.sh): a table allocated by the library and its
// hot loop, called from tests/data/names-lib-main.c.
#include <stdlib.h>

__attribute__((noinline)) double *lib_table(size_t n)
{
	double *t = malloc(n * sizeof(double));

	if (t) // not a tail call: the allocation's caller is this function
		for (size_t i = 0; i < n; i++)
			t[i] = (double)(i % 7);
	return t;
}

__attribute__((noinline)) double lib_sum(const double *t, size_t n, int rounds)
{
	double s = 0;

	for (int r = 0; r < rounds; r++)
		for (size_t i = 0; i < n; i += 8) // one access per 64-byte line
			s += t[(i * 40503) % n];
	return s;
}
