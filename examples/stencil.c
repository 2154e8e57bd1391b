/* A 5-point Jacobi stencil on an N x N grid, STEPS sweeps, two grids.
 * usage: stencil [N] [STEPS]   (default 1024 40) */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1024, steps = argc > 2 ? atoi(argv[2]) : 40;
	double *u = calloc((size_t)n * n, sizeof(double)), *v = calloc((size_t)n * n, sizeof(double));
	double sum = 0;

	for (int i = 0; i < n; i++)
		u[i] = v[i] = 1.0; /* a hot top edge */
	for (int s = 0; s < steps; s++) {
		for (int i = 1; i < n - 1; i++)
			for (int j = 1; j < n - 1; j++)
				v[i * n + j] = 0.25 * (u[(i - 1) * n + j] + u[(i + 1) * n + j] +
						       u[i * n + j - 1] + u[i * n + j + 1]);
		double *t = u;
		u = v;
		v = t;
	}
	for (int i = 0; i < n * n; i++)
		sum += u[i];
	printf("stencil %d x %d, %d steps: checksum %.6g\n", n, n, steps, sum);
	free(u);
	free(v);
	return 0;
}
