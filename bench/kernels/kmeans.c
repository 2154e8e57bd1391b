/* k-means clustering (Lloyd's algorithm) of n points in 8 dimensions into
 * 16 clusters, 4 iterations: every point against every centre, then the
 * centres recomputed. A data-mining kernel: points stream, centres stay hot.
 * usage: kmeans [n]  (default 20000), or built with -DN=n */
#include "kernel.h"

#define DIM 8
#define K 16
#define ITERS 4

int main(int argc, char **argv)
{
	long n = kernel_size(argc, argv, 20000, K);
	double (*pt)[DIM] = kernel_alloc(sizeof(double[n][DIM]));
	double (*centre)[DIM] = kernel_alloc(sizeof(double[K][DIM]));
	double (*acc)[DIM] = kernel_alloc(sizeof(double[K][DIM]));
	long *member = kernel_alloc(sizeof(long[n])), count[K];
	uint64_t seed = 3;
	double sum = 0;

	for (long i = 0; i < n; i++)
		for (int d = 0; d < DIM; d++)
			pt[i][d] = (double)(kernel_rand(&seed) % 1000) / 100 + (double)(i % K);
	for (int c = 0; c < K; c++)
		for (int d = 0; d < DIM; d++)
			centre[c][d] = pt[c * (n / K)][d];
	for (int it = 0; it < ITERS; it++) {
		for (long i = 0; i < n; i++) {
			double best = 1e300;
			for (int c = 0; c < K; c++) {
				double dist = 0;
				for (int d = 0; d < DIM; d++)
					dist += (pt[i][d] - centre[c][d]) * (pt[i][d] - centre[c][d]);
				if (dist < best)
					best = dist, member[i] = c;
			}
		}
		for (int c = 0; c < K; c++) {
			count[c] = 0;
			for (int d = 0; d < DIM; d++)
				acc[c][d] = 0;
		}
		for (long i = 0; i < n; i++) {
			count[member[i]]++;
			for (int d = 0; d < DIM; d++)
				acc[member[i]][d] += pt[i][d];
		}
		for (int c = 0; c < K; c++)
			for (int d = 0; d < DIM; d++)
				centre[c][d] = count[c] ? acc[c][d] / count[c] : centre[c][d];
	}
	for (int c = 0; c < K; c++)
		sum += centre[c][c % DIM];
	kernel_done("kmeans", n, sum);
	free(pt), free(centre), free(acc), free(member);
	return 0;
}
