/* Histogram of n pseudo-random keys into a table of n / 4 counters, with
 * a skewed key distribution (half the keys in the first 1/16 of the
 * table), 3 passes: reads of the key array in order and increments at
 * random. Hold-out kernel: not used to develop any model.
 * usage: histogram [n]  (default 400000), or built with -DN=n */
#include "kernel.h"

#define PASSES 3

int main(int argc, char **argv)
{
	long n = kernel_size(argc, argv, 400000, 64);
	long buckets = n / 4;
	uint32_t *key = kernel_alloc(sizeof(uint32_t[n]));
	uint32_t *count = kernel_alloc(sizeof(uint32_t[buckets]));
	uint64_t st = 12345;
	double sum = 0;

	for (long i = 0; i < n; i++) {
		uint64_t r = kernel_rand(&st);
		key[i] = (uint32_t)(r & 1 ? (r >> 8) % (uint64_t)(buckets / 16) : (r >> 8) % (uint64_t)buckets);
	}
	for (int p = 0; p < PASSES; p++)
		for (long i = 0; i < n; i++)
			count[key[i]]++;
	for (long b = 0; b < buckets; b += 7)
		sum += count[b];
	kernel_done("histogram", n, sum);
	free(key), free(count);
	return 0;
}
