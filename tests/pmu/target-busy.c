/* Busy for a while (about 0.2 s natively) in two threads and a forked
 * child, so that the software-clock stand-in of the pmu counter (ticks of
 * 1 ms of task time) has overflows to deliver and samples to take. */
#include <pthread.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

static long a[2][1 << 14];

static void *work(void *arg)
{
	long *v = arg, s = 0;

	for (int r = 0; r < 6000; r++)
		for (int i = 0; i < (1 << 14); i += 8)
			s += v[i]++;
	return (void *)s;
}

int main(void)
{
	pthread_t th;
	void *r1;
	long r0;
	int st = 0;
	pid_t pid;

	pthread_create(&th, NULL, work, a[1]);
	r0 = (long)work(a[0]);
	pthread_join(th, &r1);
	pid = fork();
	if (pid == 0)
		_exit((int)((long)work(a[0]) & 7) + 1);
	waitpid(pid, &st, 0);
	printf("busy %ld %ld child %d\n", r0, (long)r1, WEXITSTATUS(st));
	return 6;
}
