/* 2-D nine-point Gauss-Seidel relaxation in place on an n x n grid of
 * doubles, 4 sweeps: each point reads its three rows (the row above
 * already updated). Hold-out kernel: not used to develop any model.
 * usage: seidel2d [n]  (default 400), or built with -DN=n */
#include "kernel.h"

#define SWEEPS 4

int main(int argc, char **argv)
{
	long n = kernel_size(argc, argv, 400, 3);
	double (*u)[n] = kernel_alloc(sizeof(double[n][n]));
	double sum = 0;

	for (long i = 0; i < n; i++)
		for (long j = 0; j < n; j++)
			u[i][j] = (double)((i * 11 + j * 5) % 13);
	for (int t = 0; t < SWEEPS; t++)
		for (long i = 1; i < n - 1; i++)
			for (long j = 1; j < n - 1; j++)
				u[i][j] = (u[i - 1][j - 1] + u[i - 1][j] + u[i - 1][j + 1] + u[i][j - 1] + u[i][j] +
					   u[i][j + 1] + u[i + 1][j - 1] + u[i + 1][j] + u[i + 1][j + 1]) /
					  9.0;
	for (long i = 0; i < n; i++)
		sum += u[i][n - 1 - i];
	kernel_done("seidel2d", n, sum);
	free(u);
	return 0;
}
