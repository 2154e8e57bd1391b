/* LU decomposition without pivoting of a diagonally dominant NN x NN
 * matrix of doubles, in place (k, i, j order). */
#include <stdio.h>
#include <stdlib.h>
#include "size.h"

int main(int argc, char **argv)
{
	SIZE_INIT(argc, argv);
	double *a = malloc(sizeof(double) * (size_t)NN * NN), t = 0;
	for (int i = 0; i < NN; i++)
		for (int j = 0; j < NN; j++)
			a[(size_t)i * NN + j] = i == j ? 2.0 * NN : (double)((i + 2 * j) % 7) / 7;
	for (int k = 0; k < NN; k++)
		for (int i = k + 1; i < NN; i++) {
			double l = a[(size_t)i * NN + k] /= a[(size_t)k * NN + k];
			for (int j = k + 1; j < NN; j++)
				a[(size_t)i * NN + j] -= l * a[(size_t)k * NN + j];
		}
	for (size_t i = 0; i < (size_t)NN * NN; i++)
		t += a[i];
	printf("%g\n", t);
	return 0;
}
