/* A program with its own breakpoints: a SIGTRAP handler counts the int3
 * instructions it executes between memory references (the double trap's
 * int3 must not be taken for these, nor these for ours), and a raise()d
 * SIGTRAP. Prints "int3 N raised R sum S"; exits 0. */
#include <signal.h>
#include <stdio.h>
#include <string.h>

static volatile long traps, raised;
static long a[256];

static void on_trap(int sig, siginfo_t *si, void *uc)
{
	if (si->si_code == SI_KERNEL)
		traps++;
	else
		raised++;
}

int main(void)
{
	struct sigaction sa;
	long s = 0;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_trap;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGTRAP, &sa, NULL);
	for (int r = 0; r < 8; r++) {
		for (int i = 0; i < 256; i += 8) {
			s += a[i];
			a[i] = s;
			if (i % 64 == 0)
				__asm__ volatile("int3");
		}
	}
	raise(SIGTRAP);
	printf("int3 %ld raised %ld sum %ld\n", traps, raised, s);
	return 0;
}
