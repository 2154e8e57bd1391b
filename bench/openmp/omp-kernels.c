/* OpenMP kernels for bench/openmp-overhead.sh: each runs ITERS parallel
 * loops over arrays of N doubles with the threads of OMP_NUM_THREADS, with
 * a barrier between loops (where idle threads wait, spinning or not by
 * OMP_WAIT_POLICY).
 *
 *   triad    a[i] = b[i] + s * c[i]           (streaming, 3 arrays)
 *   jacobi   2-D 5-point stencil on a sqrt(N) x sqrt(N) grid, two grids
 *   reduce   a dot product with a reduction, then a[i] scaled by it
 *            (a reduction's combine and a serial section per iteration)
 *
 * usage: omp-kernels KERNEL N ITERS; prints a checksum (the same for any
 * thread count up to rounding). */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double *array(long n, double v)
{
	double *a = malloc((size_t)n * sizeof(*a));

	if (!a) {
		fprintf(stderr, "omp-kernels: out of memory\n");
		exit(1);
	}
	for (long i = 0; i < n; i++)
		a[i] = v + (double)(i % 7);
	return a;
}

static double triad(long n, long iters)
{
	double *a = array(n, 0), *b = array(n, 1), *c = array(n, 2), sum = 0;

	for (long it = 0; it < iters; it++) {
		double s = 1.0 / (double)(it + 1);
#pragma omp parallel for schedule(static)
		for (long i = 0; i < n; i++)
			a[i] = b[i] + s * c[i];
#pragma omp parallel for schedule(static)
		for (long i = 0; i < n; i++)
			b[i] = 0.5 * (a[i] + b[i]);
	}
	for (long i = 0; i < n; i++)
		sum += a[i];
	free(a);
	free(b);
	free(c);
	return sum;
}

static double jacobi(long n, long iters)
{
	long m = (long)sqrt((double)n);
	double *g = array(m * m, 0), *h = array(m * m, 0), sum = 0;

	for (long it = 0; it < iters; it++) {
#pragma omp parallel for schedule(static)
		for (long i = 1; i < m - 1; i++)
			for (long j = 1; j < m - 1; j++)
				h[i * m + j] = 0.25 * (g[(i - 1) * m + j] + g[(i + 1) * m + j] + g[i * m + j - 1] +
						       g[i * m + j + 1]);
		double *t = g;
		g = h;
		h = t;
	}
	for (long i = 0; i < m * m; i++)
		sum += g[i];
	free(g);
	free(h);
	return sum;
}

static double reduce(long n, long iters)
{
	double *a = array(n, 1), *b = array(n, 2), dot = 0;

	for (long it = 0; it < iters; it++) {
		dot = 0;
#pragma omp parallel for schedule(static) reduction(+ : dot)
		for (long i = 0; i < n; i++)
			dot += a[i] * b[i];
		double scale = 1.0 / sqrt(dot);
#pragma omp parallel for schedule(static)
		for (long i = 0; i < n; i++)
			a[i] *= scale * (double)n;
	}
	free(a);
	free(b);
	return dot;
}

int main(int argc, char **argv)
{
	long n, iters;
	double r;

	if (argc != 4 || (n = atol(argv[2])) < 16 || (iters = atol(argv[3])) < 1) {
		fprintf(stderr, "usage: omp-kernels triad|jacobi|reduce N>=16 ITERS>=1\n");
		return 2;
	}
	if (!strcmp(argv[1], "triad"))
		r = triad(n, iters);
	else if (!strcmp(argv[1], "jacobi"))
		r = jacobi(n, iters);
	else if (!strcmp(argv[1], "reduce"))
		r = reduce(n, iters);
	else {
		fprintf(stderr, "omp-kernels: unknown kernel '%s'\n", argv[1]);
		return 2;
	}
	printf("%s: %d threads, checksum %.6g\n", argv[1], omp_get_max_threads(), r);
	return 0;
}
