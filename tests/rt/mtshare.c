/* Threads and shared lines, for the shared-time and coherence samples:
 *   mtshare MODE THREADS ITERS
 * false:    each thread adds to its own counter; the counters are adjacent
 *           longs of one array (false sharing)
 * padded:   the same counters, one 64-byte line each
 * true:     every thread adds to the same counters under a lock (true sharing)
 * table:    every thread reads a shared read-only table of 64 KiB
 * disjoint: each thread sweeps its own array of 64 KiB */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAXT = 16, TABLE = 8192 };

static const char *mode;
static long iters;
static volatile long counters[MAXT];
static struct {
	volatile long v;
	char pad[64 - sizeof(long)];
} padded[MAXT] __attribute__((aligned(64)));
static long table[TABLE];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t start; /* all threads begin together: they overlap */

static __attribute__((noinline)) void add_false(int id)
{
	for (long i = 0; i < iters; i++)
		counters[id] += i;
}

static __attribute__((noinline)) void add_padded(int id)
{
	for (long i = 0; i < iters; i++)
		padded[id].v += i;
}

static __attribute__((noinline)) void add_true(int id)
{
	for (long i = 0; i < iters / 16; i++) {
		pthread_mutex_lock(&lock);
		for (int k = 0; k < 4; k++)
			counters[k] += id;
		pthread_mutex_unlock(&lock);
	}
}

static __attribute__((noinline)) long read_table(long n, const long *t)
{
	long s = 0;
	for (long r = 0; r < n; r++)
		for (long i = 0; i < TABLE; i += 8)
			s += t[i];
	return s;
}

static void *run(void *arg)
{
	int id = (int)(long)arg;
	long s = 0;

	pthread_barrier_wait(&start);
	if (!strcmp(mode, "false")) {
		add_false(id);
	} else if (!strcmp(mode, "padded")) {
		add_padded(id);
	} else if (!strcmp(mode, "true")) {
		add_true(id);
	} else if (!strcmp(mode, "table")) {
		s = read_table(iters / 1024, table);
	} else {
		long *mine = calloc(TABLE, sizeof(long));
		s = read_table(iters / 1024, mine);
		free(mine);
	}
	return (void *)s;
}

int main(int argc, char **argv)
{
	pthread_t th[MAXT];
	int n = argc > 2 ? atoi(argv[2]) : 2;

	if (argc < 4 || n < 1 || n > MAXT) {
		fprintf(stderr, "usage: mtshare false|padded|true|table|disjoint THREADS ITERS\n");
		return 2;
	}
	mode = argv[1];
	iters = atol(argv[3]);
	for (int i = 0; i < TABLE; i++)
		table[i] = i;
	pthread_barrier_init(&start, NULL, (unsigned)n);
	for (int i = 0; i < n; i++)
		pthread_create(&th[i], NULL, run, (void *)(long)i);
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	printf("%ld %ld\n", counters[0], padded[0].v);
	return 0;
}
