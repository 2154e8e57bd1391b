/* Known reuse patterns for the watchpoints: two watched lines on one page,
 * an access straddling two lines, stack reuse, and a line reused by a
 * system call (read() into a buffer the program wrote before). */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static char page[4096] __attribute__((aligned(4096)));

int main(void)
{
	int fds[2];
	volatile long sum = 0;
	char stack[256];

	for (int r = 0; r < 3; r++) {
		/* Lines 0 and 32 of one page, alternately. */
		page[0] += 1;
		page[2048] += 1;
		/* 8 bytes across the boundary of lines 1 and 2 (offset 124). */
		sum += *(volatile long *)(page + 124);
		*(volatile long *)(page + 188) = r;
	}
	for (int i = 0; i < 256; i += 16)
		stack[i] = (char)i;
	for (int i = 0; i < 256; i += 16)
		sum += stack[i];
	/* Sixteen lines of a buffer are written, then refilled by the kernel,
	 * then read: the last user access of each line before read() is
	 * reused by the system call. */
	static char msg[1024] = "kernel!";
	for (int i = 0; i < 1024; i += 64)
		page[1024 + i] = 'a';
	if (pipe(fds) < 0 || write(fds[1], msg, 1024) != 1024 || read(fds[0], page + 1024, 1024) != 1024)
		return 1;
	sum += page[1024] + page[1030];
	printf("patterns %ld %.7s\n", (long)sum, page + 1024);
	return 0;
}
