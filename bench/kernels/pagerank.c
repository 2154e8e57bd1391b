/* PageRank by pulling over in-edges of a graph in CSR form: P vertices,
 * 8 edges each, targets skewed towards low vertex numbers (a few vertices
 * are in-neighbours of many), 5 iterations. Reads of the rank array are
 * gathers with a hot head and a long cold tail.
 * Hold-out kernel: not used to develop any model.
 * usage: pagerank [P]  (default 50000), or built with -DN=P */
#include "kernel.h"

#define DEG 8

int main(int argc, char **argv)
{
	long p = kernel_size(argc, argv, 50000, 64);
	long m = p * DEG;
	int *src = kernel_alloc(sizeof(int) * m), *dst = kernel_alloc(sizeof(int) * m);
	int *start = kernel_alloc(sizeof(int) * (p + 1)), *in = kernel_alloc(sizeof(int) * m);
	int *outdeg = kernel_alloc(sizeof(int) * p), *fill = kernel_alloc(sizeof(int) * p);
	double *rank = kernel_alloc(sizeof(double) * p), *next = kernel_alloc(sizeof(double) * p);
	uint64_t st = 11;

	for (long e = 0; e < m; e++) {
		double u = (double)(kernel_rand(&st) >> 11) / 9007199254740992.0;
		src[e] = (int)(kernel_rand(&st) % (uint64_t)p);
		dst[e] = (int)((double)p * u * u * u);
		outdeg[src[e]]++;
		start[dst[e] + 1]++;
	}
	for (long v = 0; v < p; v++)
		start[v + 1] += start[v];
	for (long e = 0; e < m; e++)
		in[start[dst[e]] + fill[dst[e]]++] = src[e];
	for (long v = 0; v < p; v++)
		rank[v] = 1.0 / (double)p;
	for (int it = 0; it < 5; it++) {
		for (long v = 0; v < p; v++) {
			double s = 0;
			for (int k = start[v]; k < start[v + 1]; k++)
				s += rank[in[k]] / (double)outdeg[in[k]];
			next[v] = 0.15 / (double)p + 0.85 * s;
		}
		double *t = rank;
		rank = next;
		next = t;
	}
	double sum = 0;
	for (long v = 0; v < p; v++)
		sum += rank[v] * (double)(v % 7);
	kernel_done("pagerank", p, sum);
	return 0;
}
