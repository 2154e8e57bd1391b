/* Naive matrix product C += A B on N x N doubles, i-k-j order (gcc -O3
 * vectorises the j loop). usage: matmul [N] */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 120;
	double *a = malloc(sizeof(double) * n * n), *b = malloc(sizeof(double) * n * n),
	       *c = calloc((size_t)n * n, sizeof(double));

	if (!a || !b || !c)
		return 1;
	for (int i = 0; i < n * n; i++)
		a[i] = i % 5, b[i] = i % 3;
	for (int i = 0; i < n; i++)
		for (int k = 0; k < n; k++)
			for (int j = 0; j < n; j++)
				c[i * n + j] += a[i * n + k] * b[k * n + j];
	printf("%g\n", c[n + 1]);
	free(a);
	free(b);
	free(c);
	return 0;
}
