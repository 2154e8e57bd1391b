/* Floyd-Warshall all-pairs shortest paths on a dense n x n distance matrix
 * of a random graph: for each k, the whole matrix is relaxed through row k.
 * usage: floyd [n]  (default 200), or built with -DN=n */
#include "kernel.h"

int main(int argc, char **argv)
{
	long n = kernel_size(argc, argv, 200, 2);
	double (*dist)[n] = kernel_alloc(sizeof(double[n][n]));
	uint64_t seed = 11;
	double sum = 0;

	for (long i = 0; i < n; i++)
		for (long j = 0; j < n; j++)
			dist[i][j] = i == j ? 0 : kernel_rand(&seed) % 8 ? 1e9 : (double)(1 + kernel_rand(&seed) % 100);
	for (long k = 0; k < n; k++)
		for (long i = 0; i < n; i++) {
			double dik = dist[i][k];
			for (long j = 0; j < n; j++)
				if (dik + dist[k][j] < dist[i][j])
					dist[i][j] = dik + dist[k][j];
		}
	for (long i = 0; i < n; i++)
		sum += dist[i][(i * 3 + 1) % n] < 1e9 ? dist[i][(i * 3 + 1) % n] : 0;
	kernel_done("floyd", n, sum);
	free(dist);
	return 0;
}
