/* Kernels for the interval-coverage and bias checks (bench/coverage.sh):
 * real loop nests whose exact curves come from a trace of the same binary.
 *
 *   covariance N M    covariance of M variables over N observations
 *   mvrow N           y = A x, A row-major, walked by rows
 *   mvcol N           y = A x, A row-major, walked by columns
 *   matmul N          naive C = A B (i, j, k)
 *   stencil N STEPS   5-point Jacobi on an N x N grid
 *   triangle N        dynamic programming over a triangle: a[i][j] from
 *                     a[i][k] and a[k][j], k between i and j
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double *alloc(size_t n)
{
	double *p = malloc(n * sizeof(*p));

	if (!p) {
		perror("malloc");
		exit(1);
	}
	for (size_t i = 0; i < n; i++)
		p[i] = (double)(i % 17) * 0.25 + 1;
	return p;
}

static double covariance(int n, int m)
{
	double *data = alloc((size_t)n * m), *cov = alloc((size_t)m * m), *mean = alloc(m);

	for (int j = 0; j < m; j++) {
		mean[j] = 0;
		for (int i = 0; i < n; i++)
			mean[j] += data[(size_t)i * m + j];
		mean[j] /= n;
	}
	for (int i = 0; i < n; i++)
		for (int j = 0; j < m; j++)
			data[(size_t)i * m + j] -= mean[j];
	for (int i = 0; i < m; i++)
		for (int j = i; j < m; j++) {
			double s = 0;
			for (int k = 0; k < n; k++)
				s += data[(size_t)k * m + i] * data[(size_t)k * m + j];
			cov[(size_t)i * m + j] = cov[(size_t)j * m + i] = s / (n - 1);
		}
	double r = cov[(size_t)(m / 2) * m + m / 3];
	free(data);
	free(cov);
	free(mean);
	return r;
}

static double mv(int n, int by_column)
{
	double *a = alloc((size_t)n * n), *x = alloc(n), *y = alloc(n);

	for (int rep = 0; rep < 3; rep++) {
		memset(y, 0, n * sizeof(*y));
		if (by_column)
			for (int j = 0; j < n; j++)
				for (int i = 0; i < n; i++)
					y[i] += a[(size_t)i * n + j] * x[j];
		else
			for (int i = 0; i < n; i++)
				for (int j = 0; j < n; j++)
					y[i] += a[(size_t)i * n + j] * x[j];
		x[rep % n] += y[n / 2] * 1e-9;
	}
	double r = y[n / 3];
	free(a);
	free(x);
	free(y);
	return r;
}

static double matmul(int n)
{
	double *a = alloc((size_t)n * n), *b = alloc((size_t)n * n), *c = alloc((size_t)n * n);

	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++) {
			double s = 0;
			for (int k = 0; k < n; k++)
				s += a[(size_t)i * n + k] * b[(size_t)k * n + j];
			c[(size_t)i * n + j] = s;
		}
	double r = c[(size_t)(n / 2) * n + n / 3];
	free(a);
	free(b);
	free(c);
	return r;
}

static double stencil(int n, int steps)
{
	double *u = alloc((size_t)n * n), *v = alloc((size_t)n * n);

	for (int t = 0; t < steps; t++) {
		for (int i = 1; i < n - 1; i++)
			for (int j = 1; j < n - 1; j++)
				v[(size_t)i * n + j] = 0.2 * (u[(size_t)i * n + j] + u[(size_t)(i - 1) * n + j] +
							       u[(size_t)(i + 1) * n + j] + u[(size_t)i * n + j - 1] +
							       u[(size_t)i * n + j + 1]);
		double *w = u;
		u = v;
		v = w;
	}
	double r = u[(size_t)(n / 2) * n + n / 3];
	free(u);
	free(v);
	return r;
}

static double triangle(int n)
{
	double *a = alloc((size_t)n * n);

	for (int i = n - 1; i >= 0; i--)
		for (int j = i + 1; j < n; j++) {
			double best = a[(size_t)i * n + j];
			for (int k = i + 1; k < j; k++) {
				double c = a[(size_t)i * n + k] + a[(size_t)k * n + j];
				if (c < best)
					best = c;
			}
			a[(size_t)i * n + j] = best + 1;
		}
	double r = a[n - 1];
	free(a);
	return r;
}

int main(int argc, char **argv)
{
	const char *k = argc > 1 ? argv[1] : "";
	int n = argc > 2 ? atoi(argv[2]) : 0, m = argc > 3 ? atoi(argv[3]) : 0;
	double r;

	if (!strcmp(k, "covariance") && n > 1 && m > 0)
		r = covariance(n, m);
	else if (!strcmp(k, "mvrow") && n > 0)
		r = mv(n, 0);
	else if (!strcmp(k, "mvcol") && n > 0)
		r = mv(n, 1);
	else if (!strcmp(k, "matmul") && n > 0)
		r = matmul(n);
	else if (!strcmp(k, "stencil") && n > 2 && m > 0)
		r = stencil(n, m);
	else if (!strcmp(k, "triangle") && n > 1)
		r = triangle(n);
	else {
		fprintf(stderr, "usage: kernels covariance N M | mvrow N | mvcol N | matmul N | "
				"stencil N STEPS | triangle N\n");
		return 2;
	}
	printf("%g\n", r);
	return 0;
}
