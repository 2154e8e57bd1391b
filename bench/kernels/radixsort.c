/* LSD radix sort of P pseudo-random 32-bit keys, 8 bits a pass, 4 passes
 * between two arrays: a counting read of the keys, then a scatter into
 * 256 write streams. Hold-out kernel: not used to develop any model.
 * usage: radixsort [P]  (default 200000), or built with -DN=P */
#include "kernel.h"

int main(int argc, char **argv)
{
	long n = kernel_size(argc, argv, 200000, 16);
	uint32_t *a = kernel_alloc(sizeof(uint32_t[n])), *b = kernel_alloc(sizeof(uint32_t[n]));
	uint64_t st = 11;
	double sum = 0;

	for (long i = 0; i < n; i++)
		a[i] = (uint32_t)kernel_rand(&st);
	for (int shift = 0; shift < 32; shift += 8) {
		long count[256] = { 0 }, at = 0;
		for (long i = 0; i < n; i++)
			count[(a[i] >> shift) & 255]++;
		for (int d = 0; d < 256; d++) {
			long c = count[d];
			count[d] = at;
			at += c;
		}
		for (long i = 0; i < n; i++)
			b[count[(a[i] >> shift) & 255]++] = a[i];
		uint32_t *t = a;
		a = b, b = t;
	}
	for (long i = 0; i < n; i += 97)
		sum += a[i];
	kernel_done("radixsort", n, sum);
	free(a), free(b);
	return 0;
}
