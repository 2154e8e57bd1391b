/* Programs with phases, for record --phases and report --timeline
 * (docs/commands/record.md, bench/phases.sh).
 *
 *   phases solver [ITERS]   an iterative solver alternating two kernels
 *                           with different working sets: a Jacobi sweep
 *                           over a 4 MiB grid, then dense updates of a
 *                           32 KiB block (default 20 iterations)
 *   phases steady [ITERS]   a set-up phase (a 16 MiB table filled in a
 *                           random order) then a long steady state: a
 *                           stencil over 256 KiB (default 100 steps)
 *
 * Each prints a checksum so that the work is not optimised away. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GRID (512 * 1024) /* doubles: 4 MiB */
#define BLOCK 64          /* 64 x 64 doubles: 32 KiB */

static double grid_a[GRID], grid_b[GRID];
static double blk[BLOCK][BLOCK], vec[BLOCK], acc[BLOCK];

/* Kernel 1: two Jacobi sweeps of a 1-D grid (streams 8 MiB). */
static void sweep(void)
{
	for (int s = 0; s < 2; s++) {
		double *in = s ? grid_b : grid_a, *out = s ? grid_a : grid_b;
		for (int i = 1; i < GRID - 1; i++)
			out[i] = 0.25 * in[i - 1] + 0.5 * in[i] + 0.25 * in[i + 1];
	}
}

/* Kernel 2: dense rank-1 updates and products of a block that fits in
 * a 32 KiB cache with room to spare for the vectors. */
static void dense(void)
{
	for (int r = 0; r < 4; r++) {
		for (int i = 0; i < BLOCK; i++) {
			double s = 0;
			for (int j = 0; j < BLOCK; j++)
				s += blk[i][j] * vec[j];
			acc[i] = s;
		}
		for (int i = 0; i < BLOCK; i++)
			for (int j = 0; j < BLOCK; j++)
				blk[i][j] = blk[i][j] * 0.999 + 1e-3 * acc[i] * vec[j];
		for (int j = 0; j < BLOCK; j++)
			vec[j] = acc[j] * 1e-3 + vec[j] * 0.5;
	}
}

static double solver(int iters)
{
	double sum = 0;

	for (int i = 0; i < GRID; i++)
		grid_a[i] = (double)(i % 97);
	for (int i = 0; i < BLOCK; i++) {
		vec[i] = 1.0 / (i + 1);
		for (int j = 0; j < BLOCK; j++)
			blk[i][j] = (double)((i * j) % 13) / 13;
	}
	for (int it = 0; it < iters; it++) {
		sweep();
		/* as many references as the sweep: each kernel is a phase of
		 * about 4 million references */
		for (int k = 0; k < 50; k++)
			dense();
	}
	for (int i = 0; i < GRID; i += 4096)
		sum += grid_a[i];
	for (int i = 0; i < BLOCK; i++)
		sum += vec[i];
	return sum;
}

#define TABLE (2 * 1024 * 1024) /* uint64_t: 16 MiB */
#define SMALL (32 * 1024)       /* doubles: 256 KiB */

static uint64_t table[TABLE];
static double small_a[SMALL], small_b[SMALL];

/* The set-up: a table filled in a random order (every write a miss of
 * any cache smaller than the table). */
static void setup(void)
{
	uint64_t x = 88172645463325252ull;

	for (int i = 0; i < 3 * TABLE; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		table[x & (TABLE - 1)] += x;
	}
}

static double steady(int iters)
{
	double sum = 0;

	setup();
	for (int i = 0; i < SMALL; i++)
		small_a[i] = (double)(table[i] % 1000);
	for (int it = 0; it < iters; it++) {
		double *in = it & 1 ? small_b : small_a, *out = it & 1 ? small_a : small_b;
		for (int rep = 0; rep < 8; rep++)
			for (int i = 2; i < SMALL - 2; i++)
				out[i] = (in[i - 2] + in[i - 1] + in[i] + in[i + 1] + in[i + 2]) * 0.2;
	}
	for (int i = 0; i < SMALL; i += 64)
		sum += small_a[i];
	return sum;
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "solver";
	int iters = argc > 2 ? atoi(argv[2]) : 0;

	if (!strcmp(what, "solver"))
		printf("%.6f\n", solver(iters > 0 ? iters : 20));
	else if (!strcmp(what, "steady"))
		printf("%.6f\n", steady(iters > 0 ? iters : 100));
	else {
		fprintf(stderr, "usage: phases solver|steady [ITERS]\n");
		return 2;
	}
	return 0;
}
