/* Known pattern: R rounds of a cyclic sweep over K lines of 64 bytes, one
 * 1-byte load per line. Every sample that is not dangling has reuse
 * distance exactly K-1; a trace holds exactly K*R 1-byte loads.
 * usage: cyclic K R [mode]   mode: exit (default), segv, abort, fork,
 * threads, spin (sweep until killed; writes its pid to argv[4]), exec and
 * execlp (sweep, then run itself again in mode exit: two images), vfork
 * (a vfork child that fails to exec and _exits, then the parent sweeps),
 * shared (four threads sweep the same lines at once: each one's watches
 * are in granules the others touch, a false positive for them) */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static long K, R;

static long sweep(volatile char *a, long rounds)
{
	long s = 0;
	for (long r = 0; r < rounds; r++)
		for (long i = 0; i < K; i++)
			s += a[i * 64];
	return s;
}

static volatile char *shared_lines;

static void *shared_main(void *arg)
{
	*(long *)arg = sweep(shared_lines, R);
	return NULL;
}

static void *thread_main(void *arg)
{
	volatile char *a = aligned_alloc(64, (size_t)K * 64);
	memset((char *)a, 1, (size_t)K * 64);
	*(long *)arg = sweep(a, R);
	return NULL;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 3 ? argv[3] : "exit";
	volatile char *a;
	long s;

	if (argc < 3)
		return 2;
	K = atol(argv[1]);
	R = atol(argv[2]);
	a = aligned_alloc(64, (size_t)K * 64);
	memset((char *)a, 1, (size_t)K * 64); /* libc: not instrumented */
	if (!strcmp(mode, "threads")) {
		pthread_t t[4];
		long res[4];
		for (int i = 0; i < 4; i++)
			pthread_create(&t[i], NULL, thread_main, &res[i]);
		for (int i = 0; i < 4; i++)
			pthread_join(t[i], NULL);
		printf("%ld\n", res[0] + res[1] + res[2] + res[3]);
		return 0;
	}
	if (!strcmp(mode, "shared")) {
		pthread_t t[4];
		long res[4];
		shared_lines = a;
		for (int i = 0; i < 4; i++)
			pthread_create(&t[i], NULL, shared_main, &res[i]);
		for (int i = 0; i < 4; i++)
			pthread_join(t[i], NULL);
		printf("%ld\n", res[0] + res[1] + res[2] + res[3]);
		return 0;
	}
	if (!strcmp(mode, "fork")) {
		pid_t pid = fork();
		int st;
		s = sweep(a, R);
		if (pid == 0)
			_exit(0);
		waitpid(pid, &st, 0);
		printf("%ld\n", s);
		return 0;
	}
	if (!strcmp(mode, "spin")) {
		FILE *f = fopen(argv[4], "w");
		fprintf(f, "%d\n", (int)getpid());
		fclose(f);
		for (;;)
			sweep(a, R);
	}
	if (!strcmp(mode, "vfork")) {
		pid_t pid = vfork();
		int st;
		if (pid == 0) {
			execl("/nonexistent/locprof-test", "x", (char *)NULL);
			_exit(0);
		}
		waitpid(pid, &st, 0);
	}
	s = sweep(a, R);
	printf("%ld\n", s);
	fflush(stdout);
	if (!strcmp(mode, "exec") || !strcmp(mode, "exec2")) {
		char *args[] = { argv[0], argv[1], argv[2], mode[4] ? "exec" : "exit", NULL };
		execv(argv[0], args);
		return 1;
	}
	if (!strcmp(mode, "execlp")) {
		execlp(argv[0], argv[0], argv[1], argv[2], "exit", (char *)NULL);
		return 1;
	}
	if (!strcmp(mode, "segv"))
		*(volatile int *)(long)(s - s) = 1;
	if (!strcmp(mode, "abort"))
		abort();
	return 0;
}
