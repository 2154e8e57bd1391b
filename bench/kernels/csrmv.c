/* Sparse matrix-vector products y = A x with A in compressed sparse row
 * form: n rows, each with a band of 5 entries around the diagonal and 3 at
 * random columns, 10 products. Values and column indices stream, x is read
 * both near the diagonal and at random.
 * usage: csrmv [n]  (default 100000), or built with -DN=n */
#include "kernel.h"

#define BAND 5
#define SCATTERED 3
#define REPS 10

int main(int argc, char **argv)
{
	long n = kernel_size(argc, argv, 100000, 8);
	long nnz = n * (BAND + SCATTERED);
	long *rowptr = kernel_alloc(sizeof(long[n + 1]));
	int *col = kernel_alloc(sizeof(int[nnz]));
	double *val = kernel_alloc(sizeof(double[nnz]));
	double *x = kernel_alloc(sizeof(double[n])), *y = kernel_alloc(sizeof(double[n]));
	uint64_t seed = 7;
	long k = 0;
	double sum = 0;

	for (long r = 0; r < n; r++) {
		rowptr[r] = k;
		for (long d = -BAND / 2; d <= BAND / 2; d++)
			col[k] = (int)((r + d + n) % n), val[k++] = d ? -1.0 : 4.0;
		for (int s = 0; s < SCATTERED; s++)
			col[k] = (int)(kernel_rand(&seed) % (uint64_t)n), val[k++] = 0.125;
	}
	rowptr[n] = k;
	for (long r = 0; r < n; r++)
		x[r] = 1.0 + (double)(r % 9) / 8;
	for (int it = 0; it < REPS; it++) {
		for (long r = 0; r < n; r++) {
			double s = 0;
			for (long i = rowptr[r]; i < rowptr[r + 1]; i++)
				s += val[i] * x[col[i]];
			y[r] = s;
		}
		for (long r = 0; r < n; r++)
			x[r] = y[r] * 0.125;
	}
	for (long r = 0; r < n; r += 13)
		sum += x[r];
	kernel_done("csrmv", n, sum);
	free(rowptr), free(col), free(val), free(x), free(y);
	return 0;
}
