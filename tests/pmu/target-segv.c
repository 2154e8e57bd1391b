/* A program that relies on its own SIGSEGV handler with mprotect: the
 * supervisor must deliver this fault and never one of its own. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static char *area;
static volatile int faults;

static void on_segv(int sig, siginfo_t *si, void *uc)
{
	faults++;
	mprotect(area, 4096, PROT_READ | PROT_WRITE);
}

int main(void)
{
	struct sigaction sa;
	long sum = 0;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_segv;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGSEGV, &sa, NULL);
	area = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	for (int r = 0; r < 3; r++) {
		for (int i = 0; i < 8192; i += 512)
			area[i] = (char)(i + r);
		mprotect(area, 4096, PROT_READ);
		area[64] = 1; /* faults: the handler opens the page */
		for (int i = 0; i < 8192; i += 512)
			sum += area[i];
	}
	printf("segv faults=%d sum=%ld\n", faults, sum);
	/* For the test: the line of the store that faults. */
	fprintf(stderr, "faulting line %p\n", (void *)(area + 64));
	return faults == 3 ? 0 : 1;
}
