/* Multi-threaded kernel: each thread increments a counter of its own, N
 * times, first in an array of adjacent counters (packed_counters: every
 * thread's counter on one line, so each increment invalidates the other
 * threads' copies although no thread reads another's counter: false
 * sharing), then in the same array with each counter padded to a line of
 * its own (padded_counters: no sharing at all).
 * Usage: mt-counters [THREADS [INCREMENTS]] (default 4 100000) */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define MAX_THREADS 16

volatile long packed_counters[MAX_THREADS] __attribute__((aligned(64)));

struct padded {
	volatile long value;
	char pad[64 - sizeof(long)];
};
struct padded padded_counters[MAX_THREADS] __attribute__((aligned(64)));

static long increments;
static pthread_barrier_t start; /* the threads count at the same time */

static void *bump_packed(void *arg)
{
	long t = (long)arg;

	pthread_barrier_wait(&start);
	for (long i = 0; i < increments; i++)
		packed_counters[t]++;
	return NULL;
}

static void *bump_padded(void *arg)
{
	long t = (long)arg;

	pthread_barrier_wait(&start);
	for (long i = 0; i < increments; i++)
		padded_counters[t].value++;
	return NULL;
}

static void run(int threads, void *(*fn)(void *))
{
	pthread_t th[MAX_THREADS];

	pthread_barrier_init(&start, NULL, (unsigned)threads);
	for (long t = 0; t < threads; t++)
		pthread_create(&th[t], NULL, fn, (void *)t);
	for (int t = 0; t < threads; t++)
		pthread_join(th[t], NULL);
	pthread_barrier_destroy(&start);
}

int main(int argc, char **argv)
{
	int threads = argc > 1 ? atoi(argv[1]) : 4;
	long sum = 0;

	increments = argc > 2 ? atol(argv[2]) : 100000;
	if (threads < 1 || threads > MAX_THREADS)
		return 2;
	run(threads, bump_packed);
	run(threads, bump_padded);
	for (int t = 0; t < threads; t++)
		sum += packed_counters[t] + padded_counters[t].value;
	printf("%ld\n", sum);
	return sum == 2L * threads * increments ? 0 : 1;
}
