/* Matrix-chain ordering by dynamic programming over a triangle: cost[i][j]
 * is the cheapest way to multiply matrices i..j, the minimum over k of
 * cost[i][k] + cost[k+1][j] + d[i] d[k+1] d[j+1], filled by increasing
 * chain length (a row walk and a column walk of the triangle per cell).
 * usage: chain [n]  (default 300), or built with -DN=n */
#include "kernel.h"

int main(int argc, char **argv)
{
	long n = kernel_size(argc, argv, 300, 2);
	double (*cost)[n] = kernel_alloc(sizeof(double[n][n]));
	double *d = kernel_alloc(sizeof(double[n + 1]));

	for (long i = 0; i <= n; i++)
		d[i] = 10 + (i * 37) % 91;
	for (long len = 1; len < n; len++)
		for (long i = 0; i + len < n; i++) {
			long j = i + len;
			double best = 1e300;

			for (long k = i; k < j; k++) {
				double c = cost[i][k] + cost[k + 1][j] + d[i] * d[k + 1] * d[j + 1];
				if (c < best)
					best = c;
			}
			cost[i][j] = best;
		}
	kernel_done("chain", n, cost[0][n - 1]);
	free(cost), free(d);
	return 0;
}
