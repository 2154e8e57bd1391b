/* For the supervisor test (test-pmu-sup.c): a thread that spins in user
 * mode (no system calls) while the main thread waits for it in
 * pthread_join (a futex wait). The test kills it (PTRACE_O_EXITKILL if
 * the test dies). */
#include <pthread.h>

volatile unsigned long spin_count;

static void *spin(void *arg)
{
	for (;;)
		spin_count++;
	return NULL;
}

int main(void)
{
	pthread_t th;

	pthread_create(&th, NULL, spin, NULL);
	pthread_join(th, NULL);
	return 3;
}
