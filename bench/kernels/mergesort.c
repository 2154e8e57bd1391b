/* Top-down recursive merge sort of P pseudo-random doubles with one
 * scratch array, twice (the second time on reversed data): nested reuse
 * at every power-of-two scale. Hold-out kernel: not used to develop any
 * model.
 * usage: mergesort [P]  (default 100000), or built with -DN=P */
#include "kernel.h"

static void sort(double *a, double *tmp, long n)
{
	if (n < 2)
		return;
	long h = n / 2, i = 0, j = h, k = 0;
	sort(a, tmp, h);
	sort(a + h, tmp, n - h);
	while (i < h && j < n)
		tmp[k++] = a[i] <= a[j] ? a[i++] : a[j++];
	while (i < h)
		tmp[k++] = a[i++];
	while (j < n)
		tmp[k++] = a[j++];
	for (long m = 0; m < n; m++)
		a[m] = tmp[m];
}

int main(int argc, char **argv)
{
	long n = kernel_size(argc, argv, 100000, 2);
	double *a = kernel_alloc(sizeof(double[n])), *tmp = kernel_alloc(sizeof(double[n]));
	uint64_t st = 17;
	double sum = 0;

	for (long i = 0; i < n; i++)
		a[i] = (double)(kernel_rand(&st) % 1000000);
	sort(a, tmp, n);
	for (long i = 0; i < n / 2; i++) {
		double t = a[i];
		a[i] = a[n - 1 - i], a[n - 1 - i] = t;
	}
	sort(a, tmp, n);
	for (long i = 0; i < n; i += 101)
		sum += a[i] * (double)(i % 7);
	kernel_done("mergesort", n, sum);
	free(a), free(tmp);
	return 0;
}
