/* Multi-threaded kernel: a producer and a consumer share a bounded ring
 * of items under a mutex and two condition variables. Every item is
 * written by the producer and then read by the consumer on another core:
 * true sharing, line after line of the ring, and the ring's head and tail
 * bounce between the two.
 * Usage: mt-queue [ITEMS [SLOTS]] (default 20000 256) */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

struct item {
	long value, square;
};

static struct {
	pthread_mutex_t lock;
	pthread_cond_t not_empty, not_full;
	struct item *ring;
	long slots, head, tail; /* head: next to take, tail: next to fill */
} q = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0, 0 };

static long items;

static void *producer(void *arg)
{
	for (long i = 0; i < items; i++) {
		pthread_mutex_lock(&q.lock);
		while (q.tail - q.head == q.slots)
			pthread_cond_wait(&q.not_full, &q.lock);
		q.ring[q.tail % q.slots] = (struct item){ i, i * i };
		q.tail++;
		pthread_cond_signal(&q.not_empty);
		pthread_mutex_unlock(&q.lock);
	}
	return arg;
}

static void *consumer(void *arg)
{
	long *sum = arg;

	for (long i = 0; i < items; i++) {
		struct item it;
		pthread_mutex_lock(&q.lock);
		while (q.tail == q.head)
			pthread_cond_wait(&q.not_empty, &q.lock);
		it = q.ring[q.head % q.slots];
		q.head++;
		pthread_cond_signal(&q.not_full);
		pthread_mutex_unlock(&q.lock);
		*sum += it.square - it.value;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t p, c;
	long sum = 0;

	items = argc > 1 ? atol(argv[1]) : 20000;
	q.slots = argc > 2 ? atol(argv[2]) : 256;
	if (q.slots < 1 || !(q.ring = calloc((size_t)q.slots, sizeof(*q.ring))))
		return 2;
	pthread_create(&c, NULL, consumer, &sum);
	pthread_create(&p, NULL, producer, NULL);
	pthread_join(p, NULL);
	pthread_join(c, NULL);
	printf("%ld\n", sum);
	free(q.ring);
	return 0;
}
