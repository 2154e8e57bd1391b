/* Covariance matrix of n variables over n observations (data n x n,
 * observations in rows): centre each column, then cov[i][j] for j >= i as
 * a dot product of columns i and j (two column walks).
 * usage: covariance [n]  (default 200), or built with -DN=n */
#include "kernel.h"

int main(int argc, char **argv)
{
	long n = kernel_size(argc, argv, 200, 2);
	double (*data)[n] = kernel_alloc(sizeof(double[n][n]));
	double (*cov)[n] = kernel_alloc(sizeof(double[n][n]));
	double *mean = kernel_alloc(sizeof(double[n]));
	double sum = 0;

	for (long k = 0; k < n; k++)
		for (long j = 0; j < n; j++)
			data[k][j] = (double)((k * j + 3 * k) % 17) / 4;
	for (long j = 0; j < n; j++) {
		for (long k = 0; k < n; k++)
			mean[j] += data[k][j];
		mean[j] /= n;
	}
	for (long k = 0; k < n; k++)
		for (long j = 0; j < n; j++)
			data[k][j] -= mean[j];
	for (long i = 0; i < n; i++)
		for (long j = i; j < n; j++) {
			double s = 0;
			for (long k = 0; k < n; k++)
				s += data[k][i] * data[k][j];
			cov[i][j] = cov[j][i] = s / (n - 1);
		}
	for (long i = 0; i < n; i++)
		sum += cov[i][(i * 5) % n];
	kernel_done("covariance", n, sum);
	free(data), free(cov), free(mean);
	return 0;
}
