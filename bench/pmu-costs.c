/* The costs of the pmu backend's mechanisms on this machine, the alpha and
 * beta of the thesis's Eq. 4.1 (C = alpha*n_s + beta*n_f):
 *   step      one PTRACE_SINGLESTEP round trip (alpha);
 *   fault     a false positive of a page-protection watchpoint: SIGSEGV
 *             stop, mprotect(open) injected, single-step, mprotect(close)
 *             injected, resume (beta);
 *   page-hit  a true hit: SIGSEGV stop, mprotect(open), step, resume;
 *   dr-hit    a debug-register trap: stop, read and clear DR6, resume;
 *   inject    one system call injected through ptrace.
 * Each is the mean over many iterations against a child that loops over
 * the access (its own loop costs nanoseconds, against microseconds for a
 * stop); the median of 7 interleaved rounds is printed.
 * usage: bench-pmu-costs [ITERATIONS]  (default 20000) */
#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile char *data;  /* two pages: [0] watched page, [4096] other page */
static uint8_t *gadget;      /* "syscall; int3" */

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* CPU seconds of this process and its reaped children: on a shared
 * machine the wall time of a ptrace round trip includes waiting for a
 * CPU, its CPU time does not. */
static double cpu(void)
{
	struct rusage a, b;

	getrusage(RUSAGE_SELF, &a);
	getrusage(RUSAGE_CHILDREN, &b);
	return (double)(a.ru_utime.tv_sec + a.ru_stime.tv_sec + b.ru_utime.tv_sec + b.ru_stime.tv_sec) +
	       (double)(a.ru_utime.tv_usec + a.ru_stime.tv_usec + b.ru_utime.tv_usec + b.ru_stime.tv_usec) * 1e-6;
}

static void die(const char *what)
{
	fprintf(stderr, "bench-pmu-costs: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* The child: touches data[off] forever. */
static void __attribute__((noreturn)) child(long off)
{
	ptrace(PTRACE_TRACEME, 0, 0, 0);
	raise(SIGSTOP);
	for (;;)
		data[off]++;
}

static pid_t start(long off)
{
	int st;
	pid_t pid = fork();

	if (pid < 0)
		die("fork");
	if (pid == 0)
		child(off);
	if (waitpid(pid, &st, 0) < 0 || !WIFSTOPPED(st))
		die("child did not stop");
	return pid;
}

static void finish(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

static int wait_stop(pid_t pid)
{
	int st;

	if (waitpid(pid, &st, 0) < 0 || !WIFSTOPPED(st)) {
		fprintf(stderr, "bench-pmu-costs: child stopped unexpectedly (status %#x)\n", st);
		exit(1);
	}
	return WSTOPSIG(st);
}

/* mprotect(page, 4096, prot) executed by the stopped child. */
static void inject_mprotect(pid_t pid, void *page, int prot)
{
	struct user_regs_struct saved, r;

	ptrace(PTRACE_GETREGS, pid, 0, &saved);
	r = saved;
	r.rip = (uint64_t)gadget;
	r.rax = SYS_mprotect;
	r.orig_rax = (uint64_t)-1;
	r.rdi = (uint64_t)page;
	r.rsi = 4096;
	r.rdx = (uint64_t)prot;
	ptrace(PTRACE_SETREGS, pid, 0, &r);
	ptrace(PTRACE_SINGLESTEP, pid, 0, 0);
	wait_stop(pid);
	ptrace(PTRACE_GETREGS, pid, 0, &r);
	if ((long)r.rax != 0) {
		fprintf(stderr, "bench-pmu-costs: injected mprotect failed: %ld\n", (long)r.rax);
		exit(1);
	}
	ptrace(PTRACE_SETREGS, pid, 0, &saved);
}

/* Each measure_*() runs m events against a fresh child and returns the
 * mean seconds per event. */
static double measure_step(long m)
{
	pid_t pid = start(4096);
	double t0 = now(), r;

	for (long i = 0; i < m; i++) {
		ptrace(PTRACE_SINGLESTEP, pid, 0, 0);
		wait_stop(pid);
	}
	r = (now() - t0) / (double)m;
	finish(pid);
	return r;
}

static double measure_inject(long m)
{
	pid_t pid = start(4096);
	double t0 = now(), r;

	for (long i = 0; i < m; i++)
		inject_mprotect(pid, (void *)(data + 4096), PROT_READ | PROT_WRITE);
	r = (now() - t0) / (double)m;
	finish(pid);
	return r;
}

/* beta: a false positive. The child writes to the protected page
 * (another line than the watched one, as far as costs go). */
static double measure_fault(long m)
{
	pid_t pid = start(64);
	double t0, r;

	inject_mprotect(pid, (void *)data, PROT_NONE);
	t0 = now();
	for (long i = 0; i < m; i++) {
		ptrace(PTRACE_CONT, pid, 0, 0);
		if (wait_stop(pid) != SIGSEGV) {
			fprintf(stderr, "bench-pmu-costs: expected SIGSEGV\n");
			exit(1);
		}
		inject_mprotect(pid, (void *)data, PROT_READ | PROT_WRITE);
		ptrace(PTRACE_SINGLESTEP, pid, 0, 0);
		wait_stop(pid);
		inject_mprotect(pid, (void *)data, PROT_NONE);
	}
	r = (now() - t0) / (double)m;
	finish(pid);
	return r;
}

/* A true hit: the watch goes away, the page stays open; re-arming for the
 * next iteration is done outside the timed part. */
static double measure_hit(long m)
{
	pid_t pid = start(64);
	double sum = 0;

	inject_mprotect(pid, (void *)data, PROT_NONE);
	for (long i = 0; i < m; i++) {
		double a = now();

		ptrace(PTRACE_CONT, pid, 0, 0);
		wait_stop(pid);
		inject_mprotect(pid, (void *)data, PROT_READ | PROT_WRITE);
		ptrace(PTRACE_SINGLESTEP, pid, 0, 0);
		wait_stop(pid);
		sum += now() - a;
		inject_mprotect(pid, (void *)data, PROT_NONE);
	}
	finish(pid);
	return sum / (double)m;
}

/* A debug-register hit: 8-byte read/write watch on the child's word. */
static double measure_dr(long m)
{
	pid_t pid = start(128);
	double t0, r;

	if (ptrace(PTRACE_POKEUSER, pid, offsetof(struct user, u_debugreg[0]), (void *)(data + 128)) < 0 ||
	    ptrace(PTRACE_POKEUSER, pid, offsetof(struct user, u_debugreg[7]),
		   (void *)(uintptr_t)(1 | (3 << 16) | (2 << 18))) < 0)
		die("debug registers");
	t0 = now();
	for (long i = 0; i < m; i++) {
		long dr6;

		ptrace(PTRACE_CONT, pid, 0, 0);
		wait_stop(pid);
		dr6 = ptrace(PTRACE_PEEKUSER, pid, offsetof(struct user, u_debugreg[6]), 0);
		if (!(dr6 & 1)) {
			fprintf(stderr, "bench-pmu-costs: expected a debug-register hit\n");
			exit(1);
		}
		ptrace(PTRACE_POKEUSER, pid, offsetof(struct user, u_debugreg[6]), 0);
	}
	r = (now() - t0) / (double)m;
	finish(pid);
	return r;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

#define ROUNDS 7

int main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], NULL, 0) : 20000, m;
	double (*const f[5])(long) = { measure_step, measure_fault, measure_hit, measure_dr, measure_inject };
	double v[5][ROUNDS], c[5][ROUNDS], med[5], cmed[5];

	data = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	gadget = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (data == MAP_FAILED || gadget == MAP_FAILED)
		die("mmap");
	memcpy(gadget, "\x0f\x05\xcc", 3);
	/* The machine is shared: the kinds take turns, ROUNDS times, and the
	 * median of each is kept, so a busy moment spoils one round of each
	 * rather than all of one kind. */
	m = n / ROUNDS > 0 ? n / ROUNDS : 1;
	for (int r = 0; r < ROUNDS; r++)
		for (int k = 0; k < 5; k++) {
			double c0 = cpu();

			v[k][r] = f[k](m);
			c[k][r] = (cpu() - c0) / (double)m; /* the child's setup is in, negligibly */
		}
	for (int k = 0; k < 5; k++) {
		qsort(v[k], ROUNDS, sizeof(double), cmp_double);
		qsort(c[k], ROUNDS, sizeof(double), cmp_double);
		med[k] = v[k][ROUNDS / 2];
		cmed[k] = c[k][ROUNDS / 2];
	}
	/* The CPU time of a page hit includes re-arming the watch (one
	 * injected call) that its wall time leaves out. */
	cmed[2] -= cmed[4];
	printf("# bench-pmu-costs, %ld iterations each (median of %d rounds), microseconds per event: "
	       "wall, then CPU (tracer + target)\n", m * ROUNDS, ROUNDS);
	printf("step (alpha)               %8.2f %8.2f\n", med[0] * 1e6, cmed[0] * 1e6);
	printf("false-positive fault (beta) %7.2f %8.2f\n", med[1] * 1e6, cmed[1] * 1e6);
	printf("true hit, page protection  %8.2f %8.2f\n", med[2] * 1e6, cmed[2] * 1e6);
	printf("true hit, debug register   %8.2f %8.2f\n", med[3] * 1e6, cmed[3] * 1e6);
	printf("injected system call       %8.2f %8.2f\n", med[4] * 1e6, cmed[4] * 1e6);
	return 0;
}
