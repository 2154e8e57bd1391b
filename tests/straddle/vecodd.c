/* Straddle pattern: 16- and 32-byte vector loads and stores at odd offsets
 * (the vectorised loops of -O2/-O3 on misaligned arrays), mixed with
 * aligned scalar accesses. usage: vecodd [N] [PASSES] */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef double v2 __attribute__((vector_size(16), aligned(1)));
typedef float v8 __attribute__((vector_size(32), aligned(1)));

int main(int argc, char **argv)
{
	size_t n = argc > 1 ? strtoul(argv[1], NULL, 0) : 20000;
	int passes = argc > 2 ? atoi(argv[2]) : 20;
	char *a = aligned_alloc(64, n * 32 + 128), *b = aligned_alloc(64, n * 32 + 128);
	double acc = 0;

	if (!a || !b)
		return 1;
	memset(a, 0, n * 32 + 128);
	memset(b, 0, n * 32 + 128);
	for (int p = 0; p < passes; p++) {
		for (size_t i = 0; i + 1 < n; i++) {
			v2 x = *(volatile v2 *)(a + 16 * i + 8); /* 16 bytes at offset 8 mod 16 */
			*(volatile v2 *)(b + 16 * i + 3) = x;    /* odd offset */
		}
		for (size_t i = 0; i + 1 < n / 2; i++) {
			v8 y = *(volatile v8 *)(a + 32 * i + 17);
			acc += y[0] + ((volatile double *)b)[i];
		}
	}
	printf("%g\n", acc);
	free(a);
	free(b);
	return 0;
}
