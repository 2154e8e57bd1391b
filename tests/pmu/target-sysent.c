/* For the supervisor test (test-pmu-sup.c), which injects system calls at
 * the entry and exit stops of these getpid calls and queues signals
 * meanwhile: the target's calls must return what they would have, and its
 * SIGUSR2 must reach its handler once. Exit status 11 when all is well. */
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

static volatile int usr2;

static void on_usr2(int sig)
{
	usr2++;
}

int main(void)
{
	long pid, again;

	signal(SIGUSR2, on_usr2);
	pid = syscall(SYS_getpid);
	again = syscall(SYS_getpid);
	return pid == again && pid == getpid() ? 10 + usr2 : 1;
}
