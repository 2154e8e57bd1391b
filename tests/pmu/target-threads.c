/* Threads and a forked child are followed; exit status passes through. */
#include <pthread.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

static long data[2][32];

static void *work(void *arg)
{
	long *d = arg;

	for (int r = 0; r < 2; r++)
		for (int i = 0; i < 32; i += 2)
			d[i] += i;
	return NULL;
}

int main(void)
{
	pthread_t th;
	int st = 0;
	pid_t pid;

	pthread_create(&th, NULL, work, data[1]);
	work(data[0]);
	pthread_join(th, NULL);
	pid = fork();
	if (pid == 0) {
		data[0][0] = 7;
		_exit(5);
	}
	waitpid(pid, &st, 0);
	printf("threads %ld %ld child %d\n", data[0][30], data[1][30], WEXITSTATUS(st));
	fflush(stdout);
	return 4;
}
