/* Conjugate gradient on the 2-D Poisson problem of a P x P grid, the
 * matrix applied without storing it (five-point stencil): per iteration
 * one stencil sweep, two dot products and three vector updates over five
 * vectors of P^2 doubles, as an HPC solver's inner loop. 12 iterations.
 * Hold-out kernel: not used to develop any model.
 * usage: cg [P]  (default 200), or built with -DN=P */
#include "kernel.h"

static double dot(const double *x, const double *y, long m)
{
	double s = 0;

	for (long i = 0; i < m; i++)
		s += x[i] * y[i];
	return s;
}

int main(int argc, char **argv)
{
	long n = kernel_size(argc, argv, 200, 4), m = n * n;
	double *x = kernel_alloc(sizeof(double) * (size_t)m), *r = kernel_alloc(sizeof(double) * (size_t)m);
	double *p = kernel_alloc(sizeof(double) * (size_t)m), *q = kernel_alloc(sizeof(double) * (size_t)m);
	double rr;

	for (long i = 0; i < m; i++)
		r[i] = p[i] = (double)((i * 7) % 11) - 5;
	rr = dot(r, r, m);
	for (int it = 0; it < 12; it++) {
		for (long i = 0; i < n; i++)
			for (long j = 0; j < n; j++) {
				long k = i * n + j;
				double s = 4 * p[k];
				if (i > 0) s -= p[k - n];
				if (i < n - 1) s -= p[k + n];
				if (j > 0) s -= p[k - 1];
				if (j < n - 1) s -= p[k + 1];
				q[k] = s;
			}
		double alpha = rr / dot(p, q, m), rr2;
		for (long i = 0; i < m; i++) {
			x[i] += alpha * p[i];
			r[i] -= alpha * q[i];
		}
		rr2 = dot(r, r, m);
		for (long i = 0; i < m; i++)
			p[i] = r[i] + rr2 / rr * p[i];
		rr = rr2;
	}
	kernel_done("cg", n, dot(x, x, m));
	return 0;
}
