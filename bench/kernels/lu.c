/* LU decomposition without pivoting of a diagonally dominant n x n matrix,
 * in place (right-looking, k-i-j): a triangular loop nest whose trailing
 * submatrix shrinks at every step.
 * usage: lu [n]  (default 240), or built with -DN=n */
#include "kernel.h"

int main(int argc, char **argv)
{
	long n = kernel_size(argc, argv, 240, 2);
	double (*a)[n] = kernel_alloc(sizeof(double[n][n]));
	double sum = 0;

	for (long i = 0; i < n; i++)
		for (long j = 0; j < n; j++)
			a[i][j] = i == j ? 2.0 * n : 1.0 / (1 + i + j);
	for (long k = 0; k < n; k++)
		for (long i = k + 1; i < n; i++) {
			double l = a[i][k] /= a[k][k];
			for (long j = k + 1; j < n; j++)
				a[i][j] -= l * a[k][j];
		}
	for (long i = 0; i < n; i++)
		sum += a[i][i] + a[i][n - 1 - i];
	kernel_done("lu", n, sum);
	free(a);
	return 0;
}
