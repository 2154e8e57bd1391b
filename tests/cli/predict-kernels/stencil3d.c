/* Jacobi 7-point stencil on an NN^3 grid, two sweeps. */
#include <stdio.h>
#include <stdlib.h>
#include "size.h"

int main(int argc, char **argv)
{
	SIZE_INIT(argc, argv);
	size_t m = (size_t)NN * NN * NN;
	double *a = malloc(sizeof(double) * m), *b = malloc(sizeof(double) * m), t = 0;
	for (size_t i = 0; i < m; i++)
		a[i] = (double)(i % 7), b[i] = 0;
	for (int it = 0; it < 2; it++) {
		for (int i = 1; i < NN - 1; i++)
			for (int j = 1; j < NN - 1; j++)
				for (int k = 1; k < NN - 1; k++) {
					size_t c = ((size_t)i * NN + j) * NN + k;
					b[c] = 0.5 * a[c] + (a[c - (size_t)NN * NN] + a[c + (size_t)NN * NN] + a[c - NN] +
							     a[c + NN] + a[c - 1] + a[c + 1]) / 12;
				}
		double *s = a;
		a = b;
		b = s;
	}
	for (size_t i = 0; i < m; i++)
		t += a[i];
	printf("%g\n", t);
	return 0;
}
