/* Matrix multiply three ways: the textbook i-j-k loop (strides down a
 * column of B), the loop-interchanged i-k-j (unit stride), and blocked.
 * usage: matmul [naive|interchange|blocked] [N]   (default naive 448) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "naive";
	int n = argc > 2 ? atoi(argv[2]) : 448, bs = 32;
	double *a = malloc(sizeof(double) * n * n), *b = malloc(sizeof(double) * n * n);
	double *c = calloc((size_t)n * n, sizeof(double)), sum = 0;

	for (int i = 0; i < n * n; i++) {
		a[i] = (i % 7) * 0.5;
		b[i] = (i % 5) * 0.25;
	}
	if (!strcmp(mode, "naive")) {
		for (int i = 0; i < n; i++)
			for (int j = 0; j < n; j++) {
				double s = 0;
				for (int k = 0; k < n; k++)
					s += a[i * n + k] * b[k * n + j];
				c[i * n + j] = s;
			}
	} else if (!strcmp(mode, "interchange")) {
		for (int i = 0; i < n; i++)
			for (int k = 0; k < n; k++) {
				double x = a[i * n + k];
				for (int j = 0; j < n; j++)
					c[i * n + j] += x * b[k * n + j];
			}
	} else if (!strcmp(mode, "blocked")) {
		for (int ii = 0; ii < n; ii += bs)
			for (int kk = 0; kk < n; kk += bs)
				for (int jj = 0; jj < n; jj += bs)
					for (int i = ii; i < ii + bs && i < n; i++)
						for (int k = kk; k < kk + bs && k < n; k++) {
							double x = a[i * n + k];
							for (int j = jj; j < jj + bs && j < n; j++)
								c[i * n + j] += x * b[k * n + j];
						}
	} else {
		fprintf(stderr, "usage: matmul [naive|interchange|blocked] [N]\n");
		return 2;
	}
	for (int i = 0; i < n * n; i++)
		sum += c[i];
	printf("matmul %s %d: checksum %.6g\n", mode, n, sum);
	free(a);
	free(b);
	free(c);
	return 0;
}
