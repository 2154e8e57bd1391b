/* Matrix-vector product y = A x, n x n doubles, column order: for each
 * column j, y += A[.][j] x[j], so A is walked down its columns (a stride of
 * one row) and y is reused by every column. 4 products.
 * usage: mv-col [n]  (default 1000), or built with -DN=n */
#include "kernel.h"

#define REPS 4

int main(int argc, char **argv)
{
	long n = kernel_size(argc, argv, 1000, 1);
	double (*a)[n] = kernel_alloc(sizeof(double[n][n]));
	double *x = kernel_alloc(sizeof(double[n])), *y = kernel_alloc(sizeof(double[n]));
	double sum = 0;

	for (long i = 0; i < n; i++) {
		x[i] = 1.0 / (i + 1);
		for (long j = 0; j < n; j++)
			a[i][j] = (double)((i ^ j) % 5);
	}
	for (int r = 0; r < REPS; r++) {
		for (long i = 0; i < n; i++)
			y[i] = 0;
		for (long j = 0; j < n; j++) {
			double xj = x[j];
			for (long i = 0; i < n; i++)
				y[i] += a[i][j] * xj;
		}
		x[r % n] += y[(r * 31) % n] * 1e-9;
	}
	for (long i = 0; i < n; i++)
		sum += y[i];
	kernel_done("mv-col", n, sum);
	free(a), free(x), free(y);
	return 0;
}
