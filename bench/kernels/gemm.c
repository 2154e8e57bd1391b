/* Dense matrix multiply C += A B, n x n doubles, i-k-j loop order (rows of
 * B and C streamed, A read one element at a time).
 * usage: gemm [n]  (default 160), or built with -DN=n */
#include "kernel.h"

int main(int argc, char **argv)
{
	long n = kernel_size(argc, argv, 160, 2);
	double (*a)[n] = kernel_alloc(sizeof(double[n][n]));
	double (*b)[n] = kernel_alloc(sizeof(double[n][n]));
	double (*c)[n] = kernel_alloc(sizeof(double[n][n]));
	double sum = 0;

	for (long i = 0; i < n; i++)
		for (long j = 0; j < n; j++) {
			a[i][j] = (double)((i + 2 * j) % 7) - 3;
			b[i][j] = (double)((3 * i + j) % 5) - 2;
		}
	for (long i = 0; i < n; i++)
		for (long k = 0; k < n; k++) {
			double aik = a[i][k];
			for (long j = 0; j < n; j++)
				c[i][j] += aik * b[k][j];
		}
	for (long i = 0; i < n; i++)
		sum += c[i][(i * 7) % n];
	kernel_done("gemm", n, sum);
	free(a), free(b), free(c);
	return 0;
}
