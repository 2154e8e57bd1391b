/* Dense C += A B in tiles of 32 x 32 doubles (i-k-j inside a tile), as a
 * tuned library's reference path does: three 8 KiB tiles in use at a time,
 * a cliff of the working set a little below 32 KiB, and whole rows of
 * tiles between the reuses of A's. Hold-out kernel: not used to develop
 * any model.
 * usage: tiledgemm [P]  (default 160; a multiple of 32 is not needed), or
 * built with -DN=P */
#include "kernel.h"

#define T 32

int main(int argc, char **argv)
{
	long n = kernel_size(argc, argv, 160, 8);
	double *a = kernel_alloc(sizeof(double) * (size_t)(n * n)), *b = kernel_alloc(sizeof(double) * (size_t)(n * n));
	double *c = kernel_alloc(sizeof(double) * (size_t)(n * n)), sum = 0;

	for (long i = 0; i < n * n; i++) {
		a[i] = (double)(i % 7) - 3;
		b[i] = (double)(i % 5) * 0.5;
	}
	for (long ii = 0; ii < n; ii += T)
		for (long kk = 0; kk < n; kk += T)
			for (long jj = 0; jj < n; jj += T)
				for (long i = ii; i < ii + T && i < n; i++)
					for (long k = kk; k < kk + T && k < n; k++) {
						double aik = a[i * n + k];
						for (long j = jj; j < jj + T && j < n; j++)
							c[i * n + j] += aik * b[k * n + j];
					}
	for (long i = 0; i < n * n; i++)
		sum += c[i];
	kernel_done("tiledgemm", n, sum);
	return 0;
}
