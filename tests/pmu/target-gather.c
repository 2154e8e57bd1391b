/* Gathers and scatters (AVX2, and AVX-512 where the CPU has it) over a
 * table spanning many pages, mixed with scalar accesses to the same lines:
 * samples of scalar references end at gather elements and the other way
 * round, so element addresses are checked against the page faults the
 * hardware raises (stats: decode_misses). */
#include <immintrin.h>
#include <stdio.h>

static int table[1 << 15] __attribute__((aligned(64)));

__attribute__((target("avx2"))) static long avx2(int r)
{
	__m256i idx = _mm256_setr_epi32(0, 1500, 3000, 4500, 6000, 7500, 9000, 10500);
	__m256i mask = _mm256_setr_epi32(-1, 0, -1, -1, 0, -1, -1, -1);
	__m256i v = _mm256_mask_i32gather_epi32(_mm256_setzero_si256(), table + r * 16, idx, mask, 4);
	int out[8];

	_mm256_storeu_si256((__m256i *)out, v);
	return out[0] + out[2] + out[7];
}

__attribute__((target("avx512f"))) static long avx512(int r)
{
	__m512i idx = _mm512_setr_epi32(0, 2000, 4000, 6000, 8000, 10000, 12000, 14000, 16000, 18000, 20000,
					22000, 24000, 26000, 28000, 30000);
	__m512i v = _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), 0x5aff, idx, table + r * 8, 4);

	_mm512_mask_i32scatter_epi32(table + 8 + r * 8, 0xf0f0, idx, _mm512_add_epi32(v, v), 4);
	return _mm512_reduce_add_epi32(v);
}

int main(void)
{
	long s = 0;
	int has2 = !!__builtin_cpu_supports("avx2"), has512 = !!__builtin_cpu_supports("avx512f");

	for (int i = 0; i < (1 << 15); i += 250)
		table[i] = i;
	for (int r = 0; r < 6; r++) {
		if (has2)
			s += avx2(r);
		if (has512)
			s += avx512(r);
		for (int i = 0; i < (1 << 15); i += 1500)
			s += table[i + r * 16];
	}
	printf("gather %d %d %ld\n", has2, has512, s);
	return 0;
}
