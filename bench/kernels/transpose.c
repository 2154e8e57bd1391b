/* Out-of-place transpose B = A^T of an n x n matrix of doubles, 6 times:
 * A read by rows, B written down columns (a column walk whose stride is a
 * row of B). Hold-out kernel: not used to develop any model.
 * usage: transpose [n]  (default 400), or built with -DN=n */
#include "kernel.h"

#define REPS 6

int main(int argc, char **argv)
{
	long n = kernel_size(argc, argv, 400, 2);
	double (*a)[n] = kernel_alloc(sizeof(double[n][n]));
	double (*b)[n] = kernel_alloc(sizeof(double[n][n]));
	double sum = 0;

	for (long i = 0; i < n; i++)
		for (long j = 0; j < n; j++)
			a[i][j] = (double)((i * 7 + j * 3) % 17);
	for (int r = 0; r < REPS; r++)
		for (long i = 0; i < n; i++)
			for (long j = 0; j < n; j++)
				b[j][i] = a[i][j] + r;
	for (long i = 0; i < n; i++)
		sum += b[i][(i * 5) % n];
	kernel_done("transpose", n, sum);
	free(a), free(b);
	return 0;
}
