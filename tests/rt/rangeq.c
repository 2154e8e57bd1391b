/* The runtime's range query, lp_rt_range_watched(), against a slow
 * reference (tests/cli/test-loop-version.sh). Run under `locprof record
 * --rate 1`, every reference is sampled, so each line touched once below
 * stays watched. Touches LINES random lines of a 64 MiB region once, then
 * asks about random ranges of the region: the query must say 1 whenever a
 * touched line (of line size LINE_SIZE, the largest recorded) meets the
 * range, and should say 0 mostly otherwise (other watches can alias in its
 * coarse maps). Prints "violations V hits H exact E of Z".
 * Usage: rangeq LINES RANGES LINE_SIZE */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

int lp_rt_range_watched(uint64_t lo, uint64_t hi);

#define REGION (64ul << 20)

static uint64_t rng = 88172645463325252ull;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

int main(int argc, char **argv)
{
	long nlines = atol(argv[1]), nranges = atol(argv[2]), ls = atol(argv[3]);
	volatile char *r = mmap(NULL, REGION, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t *line = calloc((size_t)nlines, sizeof(*line));
	long viol = 0, hits = 0, exact = 0, zero = 0;

	if (r == MAP_FAILED || !line)
		return 1;
	for (long i = 0; i < nlines; i++) {
		uint64_t k;
		int dup;
		do { /* each line once: a second touch would end its watch */
			k = next() % (REGION / (uint64_t)ls);
			dup = 0;
			for (long j = 0; j < i; j++)
				dup |= line[j] == k;
		} while (dup);
		line[i] = k;
		r[k * (uint64_t)ls + next() % (uint64_t)ls] = 1;
	}
	for (long q = 0; q < nranges; q++) {
		uint64_t len = 1 + next() % (q & 1 ? 4096 : 1ul << 18);
		uint64_t lo = next() % (REGION - len), hi = lo + len;
		int want = 0, got;
		for (long j = 0; j < nlines; j++)
			want |= line[j] * (uint64_t)ls < hi && (line[j] + 1) * (uint64_t)ls > lo;
		got = lp_rt_range_watched((uint64_t)r + lo, (uint64_t)r + hi);
		if (want) {
			hits++;
			viol += !got;
		} else {
			zero++;
			exact += !got;
		}
	}
	printf("violations %ld hits %ld exact %ld of %ld\n", viol, hits, exact, zero);
	return 0;
}
