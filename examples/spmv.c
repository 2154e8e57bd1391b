/* Sparse matrix-vector products y = A x, ITERS times, with A in compressed
 * sparse row form: the 5-point Laplacian of a G x G grid (n = G*G rows)
 * plus one long-range coupling per row to a pseudo-random column, so that
 * x is read both with stencil-like reuse and irregularly.
 * usage: spmv [G] [ITERS]   (default 512 4) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	int g = argc > 1 ? atoi(argv[1]) : 512, iters = argc > 2 ? atoi(argv[2]) : 4;
	long n, nnz = 0;
	long *rowptr;
	int *col;
	double *val, *x, *y, sum = 0;

	if (g < 2 || iters < 1) {
		fprintf(stderr, "usage: spmv [G] [ITERS]\n");
		return 2;
	}
	n = (long)g * g;
	rowptr = malloc(sizeof(*rowptr) * (n + 1));
	col = malloc(sizeof(*col) * n * 6);
	val = malloc(sizeof(*val) * n * 6);
	x = malloc(sizeof(*x) * n);
	y = malloc(sizeof(*y) * n);
	if (!rowptr || !col || !val || !x || !y)
		return 1;
	for (long r = 0; r < n; r++) {
		long i = r / g, j = r % g;
		/* splitmix64's finaliser: r * golden ratio alone (a Weyl
		 * sequence) gives columns in a quasi-periodic pattern whose reuse
		 * distances depend on n arithmetically, not at random */
		uint64_t h = (uint64_t)r * 0x9e3779b97f4a7c15ull;
		h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ull;
		h = (h ^ (h >> 27)) * 0x94d049bb133111ebull;
		h ^= h >> 31;
		rowptr[r] = nnz;
		if (i > 0)
			col[nnz] = (int)(r - g), val[nnz++] = -1;
		if (j > 0)
			col[nnz] = (int)(r - 1), val[nnz++] = -1;
		col[nnz] = (int)r, val[nnz++] = 4.5;
		if (j < g - 1)
			col[nnz] = (int)(r + 1), val[nnz++] = -1;
		if (i < g - 1)
			col[nnz] = (int)(r + g), val[nnz++] = -1;
		col[nnz] = (int)(h % (uint64_t)n), val[nnz++] = 0.25;
	}
	rowptr[n] = nnz;
	for (long r = 0; r < n; r++)
		x[r] = 1.0 + (r % 7) * 0.125;
	for (int it = 0; it < iters; it++) {
		for (long r = 0; r < n; r++) {
			double s = 0;
			for (long k = rowptr[r]; k < rowptr[r + 1]; k++)
				s += val[k] * x[col[k]];
			y[r] = s;
		}
		double *t = x; /* the next product takes this one's result */
		x = y;
		y = t;
	}
	for (long r = 0; r < n; r++)
		sum += x[r];
	printf("spmv %d x %d grid, %ld nonzeros, %d iterations: checksum %.6g\n", g, g, nnz, iters, sum);
	free(rowptr);
	free(col);
	free(val);
	free(x);
	free(y);
	return 0;
}
