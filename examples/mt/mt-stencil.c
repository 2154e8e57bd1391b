/* Multi-threaded kernel: an OpenMP Jacobi stencil on an N x N grid of
 * doubles, rows split among the threads (static schedule), T sweeps
 * between two grids. A thread reads the boundary rows of its neighbours'
 * blocks, which they wrote in the sweep before: true sharing at the block
 * edges, and nothing shared inside the blocks.
 * Usage: mt-stencil [N [SWEEPS]] (default 128 4); threads: OMP_NUM_THREADS */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 128, sweeps = argc > 2 ? atol(argv[2]) : 4;
	double *a, *b, sum = 0;

	if (n < 3 || !(a = calloc((size_t)(n * n), sizeof(*a))) || !(b = calloc((size_t)(n * n), sizeof(*b))))
		return 2;
	for (long j = 0; j < n; j++)
		a[j] = b[j] = 1.0; /* a hot top edge */
	for (long s = 0; s < sweeps; s++) {
#pragma omp parallel for schedule(static)
		for (long i = 1; i < n - 1; i++)
			for (long j = 1; j < n - 1; j++)
				b[i * n + j] = 0.25 * (a[(i - 1) * n + j] + a[(i + 1) * n + j] + a[i * n + j - 1] +
						       a[i * n + j + 1]);
		double *t = a;
		a = b;
		b = t;
	}
	for (long i = 0; i < n * n; i++)
		sum += a[i];
	printf("%.6f\n", sum);
	free(a);
	free(b);
	return 0;
}
