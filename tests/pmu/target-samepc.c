/* Two threads run the same loop, each over a page of its own (one
 * increment per 64-byte line), for the free-running double trap under
 * pmu-sw: a watch on a line of one thread's page makes that thread fault
 * at the loop's memory instruction on every other line, while the other
 * thread's timer samples put breakpoints on that same instruction. Once a
 * breakpoint went in on the instruction of a fault not yet handled, and
 * the engine single-stepped the int3 as if it were the instruction: the
 * thread went on one byte into it. Here that byte decodes to an invalid
 * instruction (incl (%rdi) is ff 07; 07 alone is invalid in 64-bit mode),
 * so such a run dies of SIGILL or prints wrong counts. */
#include <pthread.h>
#include <stdio.h>

#define REPS 2000000

static int pages[2][1024] __attribute__((aligned(4096)));

static void *sweep(void *arg)
{
	int *p = arg;

	for (long r = 0; r < REPS; r++)
		__asm__ volatile("mov %0, %%rdi\n\t"
				 "mov $64, %%ecx\n"
				 "1:\tincl (%%rdi)\n\t"
				 "add $64, %%rdi\n\t"
				 "dec %%ecx\n\t"
				 "jnz 1b"
				 :
				 : "r"(p)
				 : "rdi", "rcx", "memory", "cc");
	return NULL;
}

int main(void)
{
	pthread_t th;
	long sum[2] = { 0, 0 };

	pthread_create(&th, NULL, sweep, pages[1]);
	sweep(pages[0]);
	pthread_join(th, NULL);
	for (int k = 0; k < 2; k++)
		for (int i = 0; i < 1024; i++)
			sum[k] += pages[k][i];
	printf("samepc %ld %ld\n", sum[0], sum[1]);
	return 0;
}
