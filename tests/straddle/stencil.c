/* A 2-D five-point stencil (Jacobi sweeps) on N x N doubles; gcc -O3
 * vectorises it with unaligned vector accesses. usage: stencil [N] [STEPS] */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 300, steps = argc > 2 ? atoi(argv[2]) : 10;
	double *a = malloc(sizeof(double) * n * n), *b = malloc(sizeof(double) * n * n), *t;

	if (!a || !b)
		return 1;
	for (int i = 0; i < n * n; i++)
		a[i] = b[i] = i % 7;
	for (int s = 0; s < steps; s++) {
		for (int i = 1; i < n - 1; i++)
			for (int j = 1; j < n - 1; j++)
				b[i * n + j] = 0.2 * (a[i * n + j] + a[(i - 1) * n + j] + a[(i + 1) * n + j] +
						      a[i * n + j - 1] + a[i * n + j + 1]);
		t = a, a = b, b = t;
	}
	printf("%g\n", a[(n / 2) * n + n / 2]);
	free(a);
	free(b);
	return 0;
}
