/* Triangular matrix product B = L B, L lower triangular n x n, B n x n,
 * in place (rows of B from the last up), i-k-j order: row i of B reads
 * rows 0..i of B, a triangular nest whose inner reuse grows with i.
 * Hold-out kernel: not used to develop any model.
 * usage: trmm [n]  (default 200), or built with -DN=n */
#include "kernel.h"

int main(int argc, char **argv)
{
	long n = kernel_size(argc, argv, 200, 2);
	double (*l)[n] = kernel_alloc(sizeof(double[n][n]));
	double (*b)[n] = kernel_alloc(sizeof(double[n][n]));
	double *row = kernel_alloc(sizeof(double[n]));
	double sum = 0;

	for (long i = 0; i < n; i++)
		for (long j = 0; j < n; j++) {
			l[i][j] = j <= i ? 1.0 / (double)(1 + i - j) : 0;
			b[i][j] = (double)((i + 2 * j) % 7);
		}
	for (long i = n - 1; i >= 0; i--) {
		for (long j = 0; j < n; j++)
			row[j] = 0;
		for (long k = 0; k <= i; k++)
			for (long j = 0; j < n; j++)
				row[j] += l[i][k] * b[k][j];
		for (long j = 0; j < n; j++)
			b[i][j] = row[j];
	}
	for (long i = 0; i < n; i++)
		sum += b[i][i];
	kernel_done("trmm", n, sum);
	free(l), free(b), free(row);
	return 0;
}
