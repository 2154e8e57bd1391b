/* Sorting strings as a command-line tool does: P short strings, each its
 * own malloc'd block, sorted by libc's qsort over an array of pointers
 * (strcmp through two indirections per comparison), then 2 P binary
 * searches for keys drawn from the same generator, half of them absent.
 * Hold-out kernel: not used to develop any model.
 * usage: strsort [P]  (default 50000), or built with -DN=P */
#include "kernel.h"
#include <string.h>

static int cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void make_key(uint64_t r, char *buf)
{
	/* 6 to 21 lower-case letters: a common prefix length of a few letters */
	int len = 6 + (int)(r % 16);

	r /= 16;
	for (int i = 0; i < len; i++) {
		buf[i] = (char)('a' + (r % 7) + (i & 3) * 4);
		r = r / 7 ^ (r << 13);
	}
	buf[len] = 0;
}

int main(int argc, char **argv)
{
	long p = kernel_size(argc, argv, 50000, 16), found = 0;
	char **v = kernel_alloc(sizeof(*v) * (size_t)p), buf[32];
	uint64_t st = 11, sum = 0;

	for (long i = 0; i < p; i++) {
		make_key(kernel_rand(&st), buf);
		v[i] = kernel_alloc(strlen(buf) + 1);
		strcpy(v[i], buf);
	}
	qsort(v, (size_t)p, sizeof(*v), cmp);
	st = 11;
	for (long q = 0; q < 2 * p; q++) {
		uint64_t r = kernel_rand(&st);
		make_key(q & 1 ? r ^ 0x5555 : r, buf);
		long lo = 0, hi = p - 1;
		while (lo <= hi) {
			long mid = (lo + hi) / 2;
			int c = strcmp(v[mid], buf);
			if (c == 0) {
				found++;
				sum += (uint64_t)mid;
				break;
			}
			if (c < 0)
				lo = mid + 1;
			else
				hi = mid - 1;
		}
	}
	kernel_done("strsort", p, (double)found + 1e-9 * (double)sum);
	return 0;
}
