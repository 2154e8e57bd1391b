/* bench-cputime OUT PROGRAM [ARGS...]: run PROGRAM, then write its CPU
 * time (user + system, seconds, its waited-for children included) and its
 * wall time to OUT as "cpu wall". Exits with PROGRAM's status. Used by
 * bench/overhead.sh: on a shared, loaded machine the program's own CPU
 * time moves much less than wall time, and run under `locprof record` it
 * leaves out the collector, which runs on another core. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	struct rusage ru;
	double t0, t1;
	FILE *out;
	pid_t pid;
	int st;

	if (argc < 3) {
		fprintf(stderr, "usage: bench-cputime OUT PROGRAM [ARGS...]\n");
		return 2;
	}
	t0 = now();
	pid = fork();
	if (pid < 0) {
		perror("bench-cputime: fork");
		return 1;
	}
	if (pid == 0) {
		execvp(argv[2], argv + 2);
		fprintf(stderr, "bench-cputime: cannot run %s: %s\n", argv[2], strerror(errno));
		_exit(127);
	}
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	t1 = now();
	getrusage(RUSAGE_CHILDREN, &ru);
	out = fopen(argv[1], "w");
	if (!out) {
		perror("bench-cputime: output");
		return 1;
	}
	fprintf(out, "%.6f %.6f\n",
		ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 + ru.ru_stime.tv_sec +
			ru.ru_stime.tv_usec * 1e-6,
		t1 - t0);
	fclose(out);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
