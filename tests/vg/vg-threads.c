/* Two threads and a forked child, each touching its own array: one output
 * per process, one connection per thread. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static void *work(void *arg)
{
	volatile long *a = calloc(50000, sizeof(long));
	long s = 0;

	for (int r = 0; r < 10; r++)
		for (int i = 0; i < 50000; i++)
			s += a[i] += i;
	free((void *)a);
	return (void *)s;
}

int main(void)
{
	pthread_t t;
	void *res;
	pid_t pid;
	int st;

	pthread_create(&t, NULL, work, NULL);
	work(NULL);
	pthread_join(t, &res);
	pid = fork();
	if (pid == 0) {
		work(NULL);
		_exit(7);
	}
	waitpid(pid, &st, 0);
	printf("child %d\n", WEXITSTATUS(st));
	return 0;
}
