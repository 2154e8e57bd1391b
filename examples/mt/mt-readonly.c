/* Multi-threaded kernel: threads look up a table that main filled before
 * starting them and that nobody writes afterwards. Lines are shared but
 * only read: copies coexist in every core's cache, no coherence miss. The
 * lookups are a pseudo-random walk over the table, so the misses depend
 * on the table's size against the caches.
 * Usage: mt-readonly [THREADS [ENTRIES [LOOKUPS]]] (default 4 8192 20000) */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static long entries, lookups;
static unsigned *table;

struct job {
	unsigned seed;
	unsigned long sum;
	char pad[56]; /* each job on a line of its own */
};

static void *lookup(void *arg)
{
	struct job *j = arg;
	unsigned x = j->seed;
	unsigned long sum = 0;

	for (long i = 0; i < lookups; i++) {
		x = x * 1103515245u + 12345u;
		sum += table[(x >> 8) % (unsigned long)entries];
	}
	j->sum = sum;
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = argc > 1 ? atoi(argv[1]) : 4;
	pthread_t th[64];
	static struct job jobs[64] __attribute__((aligned(64)));
	unsigned long total = 0;

	entries = argc > 2 ? atol(argv[2]) : 8192;
	lookups = argc > 3 ? atol(argv[3]) : 20000;
	if (threads < 1 || threads > 64 || entries < 1 || !(table = malloc((size_t)entries * sizeof(*table))))
		return 2;
	for (long i = 0; i < entries; i++)
		table[i] = (unsigned)(i * 2654435761u);
	for (int t = 0; t < threads; t++) {
		jobs[t].seed = (unsigned)t * 7919u + 1;
		pthread_create(&th[t], NULL, lookup, &jobs[t]);
	}
	for (int t = 0; t < threads; t++) {
		pthread_join(th[t], NULL);
		total += jobs[t].sum;
	}
	printf("%lu\n", total);
	free(table);
	return 0;
}
