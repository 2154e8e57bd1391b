/* Watched pages that the program unmaps: a page an argument of munmap
 * points into is opened for the call, and must not be protected again
 * once it is gone (that failed with ENOMEM), and its samples dangle. */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

int main(void)
{
	long sum = 0;

	for (int r = 0; r < 8; r++) {
		char *p = mmap(NULL, 3 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED)
			return 1;
		for (int i = 0; i < 3 * 4096; i += 256)
			p[i] = (char)(i + r);
		for (int i = 0; i < 3 * 4096; i += 512)
			sum += p[i];
		munmap(p + 4096, 4096); /* the middle page: splits the mapping */
		sum += p[0] + p[8192];
		munmap(p, 3 * 4096);
	}
	printf("munmap %ld\n", sum);
	return 0;
}
