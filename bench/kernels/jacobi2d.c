/* 2-D five-point Jacobi stencil on an n x n grid of doubles, 8 sweeps
 * alternating between two grids.
 * usage: jacobi2d [n]  (default 500), or built with -DN=n */
#include "kernel.h"

#define SWEEPS 8

int main(int argc, char **argv)
{
	long n = kernel_size(argc, argv, 500, 3);
	double (*u)[n] = kernel_alloc(sizeof(double[n][n]));
	double (*v)[n] = kernel_alloc(sizeof(double[n][n]));
	double sum = 0;

	for (long i = 0; i < n; i++)
		for (long j = 0; j < n; j++)
			u[i][j] = v[i][j] = (double)((i * 13 + j * 7) % 11);
	for (int t = 0; t < SWEEPS; t++) {
		double (*src)[n] = t % 2 ? v : u, (*dst)[n] = t % 2 ? u : v;

		for (long i = 1; i < n - 1; i++)
			for (long j = 1; j < n - 1; j++)
				dst[i][j] = 0.2 * (src[i][j] + src[i - 1][j] + src[i + 1][j] +
						   src[i][j - 1] + src[i][j + 1]);
	}
	for (long i = 0; i < n; i++)
		sum += u[i][i];
	kernel_done("jacobi2d", n, sum);
	free(u), free(v);
	return 0;
}
