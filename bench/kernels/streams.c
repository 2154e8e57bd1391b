/* Twelve arrays of P doubles, each allocated on its own (large blocks are
 * mapped whole pages, so they all start at the same offset in a page),
 * walked in lock step 4 times: out[i] = the sum of the other eleven at i.
 * The twelve lines in use at any moment lie at the same offset in their
 * pages, so in a cache of 4K ways they fall on one set: 12 lines against
 * 8 ways miss every time in LRU, where a fully-associative cache misses
 * once a line. Hold-out kernel: not used to develop any model.
 * usage: streams [P]  (default 40000), or built with -DN=P */
#include "kernel.h"

#define ARRAYS 12
#define REPS 4

int main(int argc, char **argv)
{
	long n = kernel_size(argc, argv, 40000, 64);
	double *a[ARRAYS], sum = 0;

	for (int k = 0; k < ARRAYS; k++) {
		a[k] = kernel_alloc(sizeof(double[n]));
		for (long i = 0; i < n; i++)
			a[k][i] = (double)((i + k) % 9);
	}
	for (int r = 0; r < REPS; r++)
		for (long i = 0; i < n; i++) {
			double s = 0;
			for (int k = 1; k < ARRAYS; k++)
				s += a[k][i];
			a[0][i] = s + r;
		}
	for (long i = 0; i < n; i += 11)
		sum += a[0][i];
	kernel_done("streams", n, sum);
	for (int k = 0; k < ARRAYS; k++)
		free(a[k]);
	return 0;
}
