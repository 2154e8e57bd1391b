/* 3-D seven-point heat stencil on an n x n x n grid of doubles, 4 sweeps
 * alternating between two grids: reuses across rows and across planes.
 * usage: heat3d [n]  (default 80), or built with -DN=n */
#include "kernel.h"

#define SWEEPS 4

int main(int argc, char **argv)
{
	long n = kernel_size(argc, argv, 80, 3);
	double (*u)[n][n] = kernel_alloc(sizeof(double[n][n][n]));
	double (*v)[n][n] = kernel_alloc(sizeof(double[n][n][n]));
	double sum = 0;

	for (long i = 0; i < n; i++)
		for (long j = 0; j < n; j++)
			for (long k = 0; k < n; k++)
				u[i][j][k] = v[i][j][k] = (double)((i + 3 * j + 5 * k) % 9);
	for (int t = 0; t < SWEEPS; t++) {
		double (*src)[n][n] = t % 2 ? v : u, (*dst)[n][n] = t % 2 ? u : v;

		for (long i = 1; i < n - 1; i++)
			for (long j = 1; j < n - 1; j++)
				for (long k = 1; k < n - 1; k++)
					dst[i][j][k] = 0.4 * src[i][j][k] +
						       0.1 * (src[i - 1][j][k] + src[i + 1][j][k] +
							      src[i][j - 1][k] + src[i][j + 1][k] +
							      src[i][j][k - 1] + src[i][j][k + 1]);
	}
	for (long i = 0; i < n; i++)
		sum += u[i][i][n - 1 - i];
	kernel_done("heat3d", n, sum);
	free(u), free(v);
	return 0;
}
