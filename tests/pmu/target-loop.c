/* Known pattern: a 32-byte stride over a small array, twice (the thesis's
 * skid example, Fig. 3.4), then a read-modify-write pass. */
#include <stdio.h>

static long a[64];

int main(void)
{
	long s = 0;

	for (int r = 0; r < 2; r++)
		for (int i = 0; i < 64; i += 4)
			s += a[i];
	for (int i = 0; i < 64; i++)
		a[i] += i;
	printf("loop %ld\n", s + a[63]);
	return 3;
}
