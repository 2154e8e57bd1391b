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
 * the access; the child's own loop time is measured alone and subtracted.
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

int main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], NULL, 0) : 20000;
	double t0, step, fault, hit, dr, inj;
	pid_t pid;

	data = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	gadget = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (data == MAP_FAILED || gadget == MAP_FAILED)
		die("mmap");
	memcpy(gadget, "\x0f\x05\xcc", 3);

	/* alpha: one single-step. */
	pid = start(4096);
	t0 = now();
	for (long i = 0; i < n; i++) {
		ptrace(PTRACE_SINGLESTEP, pid, 0, 0);
		wait_stop(pid);
	}
	step = (now() - t0) / (double)n;

	/* One injected system call. */
	t0 = now();
	for (long i = 0; i < n; i++)
		inject_mprotect(pid, (void *)(data + 4096), PROT_READ | PROT_WRITE);
	inj = (now() - t0) / (double)n;
	finish(pid);

	/* beta: false positive. The child writes to the protected page
	 * (another line than the watched one, as far as costs go). */
	pid = start(64);
	inject_mprotect(pid, (void *)data, PROT_NONE);
	t0 = now();
	for (long i = 0; i < n; i++) {
		ptrace(PTRACE_CONT, pid, 0, 0);
		if (wait_stop(pid) != SIGSEGV) {
			fprintf(stderr, "bench-pmu-costs: expected SIGSEGV\n");
			return 1;
		}
		inject_mprotect(pid, (void *)data, PROT_READ | PROT_WRITE);
		ptrace(PTRACE_SINGLESTEP, pid, 0, 0);
		wait_stop(pid);
		inject_mprotect(pid, (void *)data, PROT_NONE);
	}
	fault = (now() - t0) / (double)n;

	/* True hit: the watch goes away, the page stays open; re-arming for
	 * the next iteration is done outside the timed part. */
	hit = 0;
	for (long i = 0; i < n; i++) {
		double a = now();

		ptrace(PTRACE_CONT, pid, 0, 0);
		wait_stop(pid);
		inject_mprotect(pid, (void *)data, PROT_READ | PROT_WRITE);
		ptrace(PTRACE_SINGLESTEP, pid, 0, 0);
		wait_stop(pid);
		hit += now() - a;
		inject_mprotect(pid, (void *)data, PROT_NONE);
	}
	hit /= (double)n;
	finish(pid);

	/* Debug register: 8-byte read/write watch on the child's word. */
	pid = start(128);
	if (ptrace(PTRACE_POKEUSER, pid, offsetof(struct user, u_debugreg[0]), (void *)(data + 128)) < 0 ||
	    ptrace(PTRACE_POKEUSER, pid, offsetof(struct user, u_debugreg[7]),
		   (void *)(uintptr_t)(1 | (3 << 16) | (2 << 18))) < 0)
		die("debug registers");
	t0 = now();
	for (long i = 0; i < n; i++) {
		long dr6;

		ptrace(PTRACE_CONT, pid, 0, 0);
		wait_stop(pid);
		dr6 = ptrace(PTRACE_PEEKUSER, pid, offsetof(struct user, u_debugreg[6]), 0);
		if (!(dr6 & 1)) {
			fprintf(stderr, "bench-pmu-costs: expected a debug-register hit\n");
			return 1;
		}
		ptrace(PTRACE_POKEUSER, pid, offsetof(struct user, u_debugreg[6]), 0);
	}
	dr = (now() - t0) / (double)n;
	finish(pid);

	printf("# bench-pmu-costs, %ld iterations each, microseconds per event\n", n);
	printf("step (alpha)               %8.2f\n", step * 1e6);
	printf("false-positive fault (beta) %7.2f\n", fault * 1e6);
	printf("true hit, page protection  %8.2f\n", hit * 1e6);
	printf("true hit, debug register   %8.2f\n", dr * 1e6);
	printf("injected system call       %8.2f\n", inj * 1e6);
	return 0;
}
