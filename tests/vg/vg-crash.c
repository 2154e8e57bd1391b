/* Does some work, then dies of SIGSEGV: the profile must survive. */
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
	static long a[100000];
	volatile long *p = a, *null = NULL;
	long s = 0;

	for (int r = 0; r < 20; r++)
		for (int i = 0; i < 100000; i++)
			s += p[i] += i;
	printf("%ld\n", s);
	fflush(stdout);
	return (int)*null;
}
