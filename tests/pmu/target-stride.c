/* The thesis's skid example (§3.3.1, Figs. 3.4 and 3.5), made exact: one
 * load instruction walks an array with a 32-byte stride, so with 64-byte
 * lines its references alternate between a reuse at distance 0 (the next
 * reference, same line) and a long one (the next pass). The loop is
 * written in assembly so that this load is the only memory instruction of
 * the loop at any optimisation level: every reference of the walk has the
 * same pc. Usage: pmu-target-stride [PASSES [BYTES]] */
#include <stdio.h>
#include <stdlib.h>

static char buf[1 << 20] __attribute__((aligned(64)));

int main(int argc, char **argv)
{
	long passes = argc > 1 ? atol(argv[1]) : 4;
	long bytes = argc > 2 ? atol(argv[2]) : 8192;
	long sum = 0;

	if (bytes < 64 || bytes > (long)sizeof(buf))
		bytes = 8192;
	for (long p = 0; p < passes; p++) {
		long n = bytes / 32;
		char *q = buf;

		__asm__ volatile("1:\n\t"
				 "addq (%[q]), %[s]\n\t"
				 "addq $32, %[q]\n\t"
				 "decq %[n]\n\t"
				 "jnz 1b\n"
				 : [s] "+r"(sum), [q] "+r"(q), [n] "+r"(n)
				 :
				 : "cc", "memory");
	}
	printf("stride %ld\n", sum);
	return 0;
}
