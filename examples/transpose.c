/* Out-of-place matrix transpose, B = A^T, of an N x N matrix of doubles,
 * REPS times: A is read along rows, B written down columns (a stride of N
 * doubles), the textbook case of poor spatial locality and of TLB misses
 * once a column spans more pages than the TLB holds.
 * usage: transpose [N] [REPS]   (default 1024 4) */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1024, reps = argc > 2 ? atoi(argv[2]) : 4;
	double *a, *b, sum = 0;

	if (n < 1 || reps < 1) {
		fprintf(stderr, "usage: transpose [N] [REPS]\n");
		return 2;
	}
	a = malloc(sizeof(double) * n * n);
	b = malloc(sizeof(double) * n * n);
	if (!a || !b)
		return 1;
	for (int i = 0; i < n * n; i++)
		a[i] = (i % 11) * 0.5;
	for (int r = 0; r < reps; r++) {
		for (int i = 0; i < n; i++)
			for (int j = 0; j < n; j++)
				b[j * n + i] = a[i * n + j] + r;
		double *t = a; /* transpose back and forth */
		a = b;
		b = t;
	}
	for (int i = 0; i < n * n; i++)
		sum += a[i];
	printf("transpose %d x %d, %d reps: checksum %.6g\n", n, n, reps, sum);
	free(a);
	free(b);
	return 0;
}
