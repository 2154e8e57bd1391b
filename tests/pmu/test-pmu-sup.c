/* Tests of the ptrace supervisor's primitives that the engine's
 * free-running loop relies on (src/pmu/supervisor.c), on real targets:
 *  - a system call injected at a syscall-entry stop runs, returns its own
 *    result, and the target's call then runs unchanged (it once skipped the
 *    target's call, which "returned" -ENOSYS, and lost its exit stop: a
 *    fork under --counter pmu-sw then failed and the target printed
 *    "child 0");
 *  - signals that stop an injected call: the engine's (s->owns) are
 *    dropped and noted, the target's reach the target (an overflow signal
 *    was once queued again to the target, which died of it);
 *  - PTRACE_INTERRUPT of a thread spinning in user mode stops it; a thread
 *    that stops for a reason of its own first keeps that stop (stashed,
 *    returned by the next wait).
 * Environment: TARGETS, the directory of the pmu-target-* programs. */
#include "lp-test.h"

#include <errno.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

#include "supervisor.h"

static char target_dir[4096];

static char *target(const char *name)
{
	static char path[4200];

	snprintf(path, sizeof(path), "%s/pmu-%s", target_dir, name);
	return path;
}

/* Ours: SIGUSR1 queued with value 42 (the stand-in for an overflow). */
static int owns_usr1(void *ctx, const siginfo_t *si)
{
	return si->si_signo == SIGUSR1 && si->si_code == SI_QUEUE && si->si_value.sival_int == 42;
}

/* Resume t (system-call stops on) until a stop of it that is a syscall
 * stop of call nr at entry (want_entry) or exit; the target's signals are
 * passed on. */
static void run_to_syscall(struct lp_pmu_sup *s, struct lp_pmu_thread *t, long nr, int want_entry)
{
	struct lp_pmu_ev ev;
	struct user_regs_struct r;
	int sig = 0;

	for (;;) {
		assert_int_equal(lp_pmu_sup_resume(t, LP_PMU_SYSCALLS, sig), 0);
		sig = 0;
		assert_int_equal(lp_pmu_sup_wait(s, t->tid, &ev, 0), 1);
		assert_int_not_equal(ev.kind, LP_PMU_EV_EXIT);
		if (ev.kind == LP_PMU_EV_SIGNAL) {
			sig = ev.sig;
			continue;
		}
		if (ev.kind != LP_PMU_EV_SYSCALL)
			continue;
		assert_int_equal(lp_pmu_sup_getregs(t, &r), 0);
		if ((long)r.orig_rax == nr && t->at_entry == want_entry)
			return;
	}
}

static int run_to_exit(struct lp_pmu_sup *s, struct lp_pmu_thread *t)
{
	struct lp_pmu_ev ev;
	int sig = 0;

	for (;;) {
		assert_int_equal(lp_pmu_sup_resume(t, LP_PMU_CONT, sig), 0);
		sig = 0;
		assert_int_equal(lp_pmu_sup_wait(s, t->tid, &ev, 0), 1);
		if (ev.kind == LP_PMU_EV_EXIT)
			return ev.status;
		if (ev.kind == LP_PMU_EV_SIGNAL)
			sig = ev.sig;
	}
}

static void test_inject_at_entry_and_exit(void **state)
{
	struct lp_pmu_sup s;
	char *argv[] = { target("target-sysent"), NULL };
	struct lp_pmu_thread *t;
	struct user_regs_struct before, r;
	const uint64_t none[6] = { 0 };
	union sigval v = { .sival_int = 42 };
	int64_t ret;
	pid_t pid;
	int status;

	memset(&s, 0, sizeof(s));
	s.owns = owns_usr1;
	assert_int_equal(lp_pmu_sup_spawn(&s, argv, 1), 0);
	t = s.t[0];
	pid = t->tid;

	/* First getpid, at its entry stop: the kernel is inside the call. */
	run_to_syscall(&s, t, SYS_getpid, 1);
	assert_int_equal(lp_pmu_sup_getregs(t, &before), 0);
	/* Queued now, delivered on the way back to user mode: inside our
	 * injection (the target's call is entered again from user mode). */
	assert_int_equal(sigqueue(pid, SIGUSR1, v), 0);
	assert_int_equal(kill(pid, SIGUSR2), 0);
	assert_int_equal(lp_pmu_sup_syscall(&s, t, SYS_getppid, none, &ret), 0);
	assert_int_equal(ret, getpid());
	/* Back at the same entry stop of the same call. */
	assert_true(t->at_entry);
	assert_int_equal(lp_pmu_sup_getregs(t, &r), 0);
	assert_int_equal(r.orig_rax, SYS_getpid);
	assert_int_equal(r.rip, before.rip);
	/* Ours was dropped and noted; the target's SIGUSR2 is queued again. */
	assert_true(t->notified);
	assert_int_equal(t->notified_si.si_signo, SIGUSR1);
	assert_int_equal(t->notified_si.si_value.sival_int, 42);
	t->notified = 0;

	/* Its exit stop comes, with the call's own result. */
	run_to_syscall(&s, t, SYS_getpid, 0);
	assert_int_equal(lp_pmu_sup_getregs(t, &r), 0);
	assert_int_equal((pid_t)r.rax, pid);
	/* An injection at an exit stop leaves the result alone. */
	assert_int_equal(lp_pmu_sup_syscall(&s, t, SYS_getppid, none, &ret), 0);
	assert_int_equal(ret, getpid());
	assert_int_equal(lp_pmu_sup_getregs(t, &r), 0);
	assert_int_equal((pid_t)r.rax, pid);

	/* The target saw getpid work twice and its SIGUSR2 handler ran once. */
	status = run_to_exit(&s, t);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 11);
	lp_pmu_sup_forget(&s, t);
	lp_pmu_sup_release(&s);
}

static char proc_state(pid_t tid)
{
	char path[64], buf[512], *rp;
	FILE *f;
	char st = '?';

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)tid);
	f = fopen(path, "r");
	if (!f)
		return st;
	if (fgets(buf, sizeof(buf), f) && (rp = strrchr(buf, ')')))
		st = rp[2];
	fclose(f);
	return st;
}

static unsigned long long proc_utime(pid_t tid)
{
	char path[64], buf[1024], *rp;
	unsigned long long ut = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)tid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (fgets(buf, sizeof(buf), f) && (rp = strrchr(buf, ')')))
		sscanf(rp + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu", &ut);
	fclose(f);
	return ut;
}

static void test_interrupt(void **state)
{
	struct lp_pmu_sup s;
	char *argv[] = { target("target-spin"), NULL };
	struct lp_pmu_thread *main_t, *spin_t = NULL;
	struct lp_pmu_ev ev;
	unsigned long long ut;
	int r;

	memset(&s, 0, sizeof(s));
	assert_int_equal(lp_pmu_sup_spawn(&s, argv, 1), 0);
	main_t = s.t[0];
	/* Run until the spinning thread exists, then let both run. */
	assert_int_equal(lp_pmu_sup_resume(main_t, LP_PMU_SYSCALLS, 0), 0);
	while (!spin_t) {
		assert_int_equal(lp_pmu_sup_wait(&s, -1, &ev, 0), 1);
		assert_int_not_equal(ev.kind, LP_PMU_EV_EXIT);
		if (ev.kind == LP_PMU_EV_CLONE) {
			spin_t = ev.child;
			assert_int_equal(lp_pmu_sup_resume(spin_t, LP_PMU_SYSCALLS, 0), 0);
		}
		assert_int_equal(lp_pmu_sup_resume(ev.t, LP_PMU_SYSCALLS,
						   ev.kind == LP_PMU_EV_SIGNAL ? ev.sig : 0), 0);
	}
	/* Let the main thread reach pthread_join's futex wait and the other
	 * one spin (it makes no system calls from then on). */
	for (int i = 0; i < 200; i++) {
		while ((r = lp_pmu_sup_wait(&s, -1, &ev, 1)) == 1) {
			assert_int_not_equal(ev.kind, LP_PMU_EV_EXIT);
			assert_int_equal(lp_pmu_sup_resume(ev.t, LP_PMU_SYSCALLS,
							   ev.kind == LP_PMU_EV_SIGNAL ? ev.sig : 0), 0);
		}
		assert_int_equal(r, 0);
		nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
	}

	/* The spinning thread stops in our interrupt's stop, and stays. */
	r = lp_pmu_sup_interrupt(&s, spin_t);
	assert_int_equal(r, 1);
	assert_int_equal(spin_t->state, LP_PMU_T_STOPPED);
	assert_int_equal(spin_t->stashed, 0);
	ut = proc_utime(spin_t->tid);
	nanosleep(&(struct timespec){ 0, 50000000 }, NULL);
	assert_int_equal(proc_state(spin_t->tid), 't');
	assert_true(proc_utime(spin_t->tid) == ut);
	assert_int_equal(lp_pmu_sup_resume(spin_t, LP_PMU_SYSCALLS, 0), 0);

	/* The main thread, blocked in its futex wait with system-call stops
	 * on, stops for a reason of its own (the call's exit stop, to be
	 * restarted): stashed, and the next wait returns it. */
	r = lp_pmu_sup_interrupt(&s, main_t);
	assert_int_equal(r, 0);
	assert_int_equal(main_t->stashed, 1);
	assert_int_equal(lp_pmu_sup_wait(&s, -1, &ev, 1), 1);
	assert_ptr_equal(ev.t, main_t);
	assert_int_equal(ev.kind, LP_PMU_EV_SYSCALL);
	assert_false(main_t->at_entry);
	assert_int_equal(main_t->stashed, 0);
	lp_pmu_sup_release(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_inject_at_entry_and_exit),
		cmocka_unit_test(test_interrupt),
	};
	const char *d = getenv("TARGETS");

	snprintf(target_dir, sizeof(target_dir), "%s", d ? d : ".");
	signal(SIGUSR1, SIG_IGN); /* sigqueue to the target, never to us */
	return cmocka_run_group_tests(tests, NULL, NULL);
}
