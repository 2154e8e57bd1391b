/* Naive dense matrix multiply C = A B of NN x NN doubles (i, j, k order). */
#include <stdio.h>
#include <stdlib.h>
#include "size.h"

int main(int argc, char **argv)
{
	SIZE_INIT(argc, argv);
	size_t m = (size_t)NN * NN;
	double *a = malloc(sizeof(double) * m), *b = malloc(sizeof(double) * m), *c = malloc(sizeof(double) * m);
	double t = 0;
	for (size_t i = 0; i < m; i++)
		a[i] = (double)(i % 3), b[i] = (double)(i % 5);
	for (int i = 0; i < NN; i++)
		for (int j = 0; j < NN; j++) {
			double s = 0;
			for (int k = 0; k < NN; k++)
				s += a[(size_t)i * NN + k] * b[(size_t)k * NN + j];
			c[(size_t)i * NN + j] = s;
		}
	for (size_t i = 0; i < m; i++)
		t += c[i];
	printf("%g\n", t);
	return 0;
}
