/* Matrix-vector products y = A x, row order, repeated four times. */
#include <stdio.h>
#include <stdlib.h>
#include "size.h"

int main(int argc, char **argv)
{
	SIZE_INIT(argc, argv);
	double *a = malloc(sizeof(double) * (size_t)NN * NN), *x = malloc(sizeof(double) * NN);
	double *y = malloc(sizeof(double) * NN), t = 0;
	for (size_t i = 0; i < (size_t)NN * NN; i++)
		a[i] = (double)(i % 9);
	for (int i = 0; i < NN; i++)
		x[i] = i % 4, y[i] = 0;
	for (int r = 0; r < 4; r++)
		for (int i = 0; i < NN; i++) {
			double s = 0;
			for (int j = 0; j < NN; j++)
				s += a[(size_t)i * NN + j] * x[j];
			y[i] += s;
		}
	for (int i = 0; i < NN; i++)
		t += y[i];
	printf("%g\n", t);
	return 0;
}
