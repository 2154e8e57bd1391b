/* Multi-threaded kernel: each thread sweeps an array of its own, R times.
 * No line is shared: a multi-threaded simulation finds no coherence miss,
 * and each thread's private-cache misses are those of its array alone.
 * Usage: mt-disjoint [THREADS [ELEMENTS [ROUNDS]]] (default 4 4096 4) */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static long elements, rounds;

static void *sweep(void *arg)
{
	double *a = malloc((size_t)elements * sizeof(*a)), *sum = arg;

	if (!a)
		return NULL;
	for (long i = 0; i < elements; i++)
		a[i] = (double)i;
	for (long r = 0; r < rounds; r++)
		for (long i = 0; i < elements; i++)
			*sum += a[i] * 0.5;
	free(a);
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = argc > 1 ? atoi(argv[1]) : 4;
	pthread_t th[64];
	double sums[64][8] = { { 0 } }; /* a line apart: the sums are not shared */
	double total = 0;

	elements = argc > 2 ? atol(argv[2]) : 4096;
	rounds = argc > 3 ? atol(argv[3]) : 4;
	if (threads < 1 || threads > 64)
		return 2;
	for (int t = 0; t < threads; t++)
		pthread_create(&th[t], NULL, sweep, sums[t]);
	for (int t = 0; t < threads; t++) {
		pthread_join(th[t], NULL);
		total += sums[t][0];
	}
	printf("%.0f\n", total);
	return 0;
}
