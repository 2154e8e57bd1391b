/* OpenMP stencils of other shapes and schedules than examples/mt/
 * mt-stencil.c, to check the thread and shared-cache models on kernels
 * they were not developed on (bench/mt-accuracy.sh with RUNS). Each runs
 * SWEEPS sweeps between two grids of doubles with the threads of
 * OMP_NUM_THREADS.
 *
 *   box9     2-D 9-point box on an N x N grid, rows split statically
 *   heat3d   3-D 7-point on an N x N x N grid, planes split statically
 *   dyn5     2-D 5-point on an N x N grid, rows handed out dynamically
 *            in chunks of 4 (schedule(dynamic, 4))
 *
 * usage: omp-stencils KERNEL N SWEEPS; prints a checksum. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double *grid(long cells)
{
	double *g = calloc((size_t)cells, sizeof(*g));

	if (!g) {
		fprintf(stderr, "omp-stencils: out of memory\n");
		exit(1);
	}
	g[0] = 1.0;
	return g;
}

static double box9(long n, long sweeps, double *a, double *b)
{
	for (long s = 0; s < sweeps; s++) {
#pragma omp parallel for schedule(static)
		for (long i = 1; i < n - 1; i++)
			for (long j = 1; j < n - 1; j++) {
				double t = 0;
				for (long di = -1; di <= 1; di++)
					t += a[(i + di) * n + j - 1] + a[(i + di) * n + j] + a[(i + di) * n + j + 1];
				b[i * n + j] = t / 9;
			}
		double *t = a;
		a = b;
		b = t;
	}
	return a[n + 1];
}

static double heat3d(long n, long sweeps, double *a, double *b)
{
	long p = n * n;

	for (long s = 0; s < sweeps; s++) {
#pragma omp parallel for schedule(static)
		for (long k = 1; k < n - 1; k++)
			for (long i = 1; i < n - 1; i++)
				for (long j = 1; j < n - 1; j++) {
					long c = k * p + i * n + j;
					b[c] = (a[c - p] + a[c + p] + a[c - n] + a[c + n] + a[c - 1] + a[c + 1]) / 6;
				}
		double *t = a;
		a = b;
		b = t;
	}
	return a[p + n + 1];
}

static double dyn5(long n, long sweeps, double *a, double *b)
{
	for (long s = 0; s < sweeps; s++) {
#pragma omp parallel for schedule(dynamic, 4)
		for (long i = 1; i < n - 1; i++)
			for (long j = 1; j < n - 1; j++)
				b[i * n + j] = 0.25 * (a[(i - 1) * n + j] + a[(i + 1) * n + j] + a[i * n + j - 1] +
						       a[i * n + j + 1]);
		double *t = a;
		a = b;
		b = t;
	}
	return a[n + 1];
}

int main(int argc, char **argv)
{
	long n, sweeps, cells;
	double r, *a, *b;

	if (argc != 4 || (n = atol(argv[2])) < 3 || (sweeps = atol(argv[3])) < 1) {
		fprintf(stderr, "usage: omp-stencils box9|heat3d|dyn5 N>=3 SWEEPS>=1\n");
		return 2;
	}
	cells = !strcmp(argv[1], "heat3d") ? n * n * n : n * n;
	a = grid(cells);
	b = grid(cells);
	if (!strcmp(argv[1], "box9"))
		r = box9(n, sweeps, a, b);
	else if (!strcmp(argv[1], "heat3d"))
		r = heat3d(n, sweeps, a, b);
	else if (!strcmp(argv[1], "dyn5"))
		r = dyn5(n, sweeps, a, b);
	else {
		fprintf(stderr, "omp-stencils: unknown kernel '%s'\n", argv[1]);
		return 2;
	}
	printf("%s: checksum %.6g\n", argv[1], r);
	free(a);
	free(b);
	return 0;
}
