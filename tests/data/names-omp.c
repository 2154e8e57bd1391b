// An OpenMP program for the naming of functions and data objects: a
// parallel region inside a function of its own, a threadprivate array,
// a C _Thread_local scratch buffer, and a heap grid allocated in a
// function of the program. tests/cli/test-names-omp.sh profiles it.
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

static double hist[2048]; // 16 KiB per thread
#pragma omp threadprivate(hist)
static _Thread_local double scratch[4096]; // 32 KiB per thread

__attribute__((noinline)) double *make_grid(size_t n)
{
	double *g = calloc(n, sizeof(double));

	if (g) // not a tail call: the allocation's caller is this function
		g[n - 1] = 1;
	return g;
}

__attribute__((noinline)) double relax(double *g, size_t n, int rounds)
{
	double s = 0;
#pragma omp parallel reduction(+ : s)
	{
		for (int r = 0; r < rounds; r++) {
#pragma omp for
			for (size_t i = 1; i < n - 1; i++) {
				g[i] = 0.5 * (g[i - 1] + g[i + 1]);
				scratch[(i * 61) % 4096] += g[i];
				hist[(i * 37) % 2048] += 1;
			}
		}
		s += scratch[omp_get_thread_num()] + hist[omp_get_thread_num()];
	}
	return s;
}

int main(void)
{
	const size_t n = 1 << 19; // 4 MiB of doubles
	double *g = make_grid(n);

	if (!g)
		return 1;
	for (size_t i = 0; i < n; i += 97)
		g[i] = (double)i;
	printf("%g\n", relax(g, n, 6));
	free(g);
	return 0;
}
