/* A known reference pattern for the valgrind backend's tests: R cycles over
 * K distinct 64-byte lines, one load per line per cycle, so every load of
 * the cycle after the first has reuse distance exactly K-1 (K-1 other
 * references in between) and the buffer gets exactly K*R references.
 * Built with -O2: the loop keeps its counters in registers, so the volatile
 * loads are its only memory references. Prints the buffer's range.
 *
 * With a third argument "fields", each line is read three times per cycle,
 * at offsets 0, 24 and 56 from one base register (as the fields of a
 * structure, which the tool's instrumentation groups under one address
 * slot): the next touch of the line after a load at 0 or 24 comes at once
 * (reuse distance 0), after a load at 56 3K-3 references later.
 *
 * With "strings", each cycle runs string instructions over the first K
 * lines: rep stosb and rep movsb forward, then the same backward (the
 * direction flag set), and rep stosq: loops that VEX unrolls with an exit
 * per iteration, which the tool keeps in one segment (its self-check runs
 * on them in tests/cli/test-valgrind.sh). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LINE 64

static char buf[4096 * LINE] __attribute__((aligned(LINE)));

int main(int argc, char **argv)
{
	int k = argc > 1 ? atoi(argv[1]) : 100, r = argc > 2 ? atoi(argv[2]) : 200;
	volatile char *p = buf;
	unsigned sum = 0;

	if (k < 1 || k > 4096 || r < 1)
		return 2;
	if (argc > 3 && !strcmp(argv[3], "strings")) {
		for (int c = 0; c < r; c++) {
			unsigned long h = (unsigned long)k * LINE / 2, n = h;
			char *d = buf, *s = buf + h;
			__asm__ volatile("rep stosb" : "+D"(d), "+c"(n) : "a"(c) : "memory");
			n = h, d = buf, s = buf + h;
			__asm__ volatile("rep movsb" : "+D"(d), "+S"(s), "+c"(n) : : "memory");
			n = h, d = buf + h - 1, s = buf + 2 * h - 1;
			__asm__ volatile("std; rep movsb; cld" : "+D"(d), "+S"(s), "+c"(n) : : "memory");
			n = h, d = buf + 2 * h - 1;
			__asm__ volatile("std; rep stosb; cld" : "+D"(d), "+c"(n) : "a"(c + 1) : "memory");
			n = h / 8, d = buf + h;
			__asm__ volatile("rep stosq" : "+D"(d), "+c"(n) : "a"((long)c) : "memory");
			sum += p[c % (2 * h)];
		}
	} else if (argc > 3 && !strcmp(argv[3], "fields")) {
		for (int c = 0; c < r; c++)
			for (int i = 0; i < k; i++) {
				volatile char *q = p + (long)i * LINE;
				sum += q[0];
				sum += q[24];
				sum += q[56];
			}
	} else {
		for (int c = 0; c < r; c++)
			for (int i = 0; i < k; i++)
				sum += p[(long)i * LINE];
	}
	printf("buf %p %p sum %u\n", (void *)buf, (void *)(buf + (long)k * LINE), sum);
	return 0;
}
