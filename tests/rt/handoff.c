/* Two threads hand a token back and forth N times: the first writes
 * slot[i % 8] and passes the turn, the second reads it and passes the turn
 * back. Every write happens before the read of the same round, and that
 * read before the next write, so a trace in a faithful order lists the
 * accesses to slot[] as W (thread 0), R (thread 1), W, R, ... Prints the
 * address range of slot[]. Usage: handoff N */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

static volatile long slot[8];
static int turn; /* accessed with __atomic builtins: 0 writer, 1 reader */
static long rounds;

static void wait_turn(int want)
{
	while (__atomic_load_n(&turn, __ATOMIC_ACQUIRE) != want)
		sched_yield();
}

static void *reader(void *arg)
{
	long sum = 0;

	for (long i = 0; i < rounds; i++) {
		wait_turn(1);
		sum += slot[i % 8];
		__atomic_store_n(&turn, 0, __ATOMIC_RELEASE);
	}
	*(long *)arg = sum;
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th;
	long sum = 0;

	rounds = argc > 1 ? atol(argv[1]) : 1000;
	printf("slot %p %p\n", (void *)slot, (void *)(slot + 8));
	fflush(stdout);
	if (pthread_create(&th, NULL, reader, &sum))
		return 1;
	for (long i = 0; i < rounds; i++) {
		wait_turn(0);
		slot[i % 8] = i;
		__atomic_store_n(&turn, 1, __ATOMIC_RELEASE);
	}
	pthread_join(th, NULL);
	return sum == rounds * (rounds - 1) / 2 ? 0 : 2;
}
