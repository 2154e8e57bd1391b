/* Breadth-first search over a random graph in compressed sparse row form:
 * n vertices, each with 4 edges to its ring neighbours and 4 to random
 * vertices (undirected: both directions stored), searched from 4 sources.
 * Frontier reads are sequential, the visited checks irregular.
 * usage: bfs [n]  (default 131072), or built with -DN=n */
#include "kernel.h"

#define RANDOM_EDGES 4
#define SOURCES 4

int main(int argc, char **argv)
{
	long n = kernel_size(argc, argv, 131072, 16);
	long m = 2 * n * (2 + RANDOM_EDGES);		/* directed edges */
	long *from = kernel_alloc(sizeof(long[m])), *to = kernel_alloc(sizeof(long[m]));
	long *start = kernel_alloc(sizeof(long[n + 1])), *adj = kernel_alloc(sizeof(long[m]));
	long *level = kernel_alloc(sizeof(long[n])), *queue = kernel_alloc(sizeof(long[n]));
	uint64_t seed = 42;
	long e = 0;
	double sum = 0;

	for (long v = 0; v < n; v++) {
		long w[2 + RANDOM_EDGES] = {(v + 1) % n, (v + 2) % n};

		for (int r = 0; r < RANDOM_EDGES; r++)
			w[2 + r] = (long)(kernel_rand(&seed) % (uint64_t)n);
		for (int r = 0; r < 2 + RANDOM_EDGES; r++) {
			from[e] = v, to[e++] = w[r];
			from[e] = w[r], to[e++] = v;
		}
	}
	for (long i = 0; i < m; i++)	/* counting sort of the edges by source */
		start[from[i] + 1]++;
	for (long v = 0; v < n; v++)
		start[v + 1] += start[v];
	for (long i = 0; i < m; i++)
		adj[start[from[i]] + level[from[i]]++] = to[i];
	for (int s = 0; s < SOURCES; s++) {
		long head = 0, tail = 0;

		for (long v = 0; v < n; v++)
			level[v] = -1;
		queue[tail++] = (long)(kernel_rand(&seed) % (uint64_t)n);
		level[queue[0]] = 0;
		while (head < tail) {
			long v = queue[head++];

			for (long i = start[v]; i < start[v + 1]; i++)
				if (level[adj[i]] < 0) {
					level[adj[i]] = level[v] + 1;
					queue[tail++] = adj[i];
				}
		}
		for (long v = 0; v < n; v += 97)
			sum += level[v];
	}
	kernel_done("bfs", n, sum);
	free(from), free(to), free(start), free(adj), free(level), free(queue);
	return 0;
}
