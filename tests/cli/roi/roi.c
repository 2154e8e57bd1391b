/* A program with a set-up phase, a kernel and a tail, for the tests of
 * regions of interest (test-roi.sh, test-roi-valgrind.sh). Built three ways:
 *   -DROI_MARKED       locprof_start() and locprof_stop() around the kernel
 *   -DROI_KERNEL_ONLY  the kernel alone: what the region must look like
 *   neither            set-up, kernel and tail, unmarked (--start-at kernel
 *                      --stop-at tail, --skip)
 * The set-up reads 8 MiB at random, the kernel sweeps 24 KiB, the tail reads
 * the 8 MiB in order: the whole run's working-set graph is far from the
 * kernel's. Usage: roi [SWEEPS] (default 40; below 0: no kernel, which
 * gives the references of the program around it). */
#include <locprof/roi.h>

#include <stdio.h>
#include <stdlib.h>

#define BIG (1 << 20) /* doubles of set-up data: 8 MiB */
#define K 3072        /* doubles of the kernel: 24 KiB */

static double big[BIG];
static double a[K];

__attribute__((noinline)) double setup(void)
{
	unsigned long x = 88172645463325252ul;
	double s = 0;

	for (long i = 0; i < BIG; i++)
		big[i] = (double)(i & 255);
	for (long i = 0; i < BIG; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		s += big[x & (BIG - 1)];
	}
	return s;
}

__attribute__((noinline)) double kernel(int sweeps)
{
	double s = 0;

	for (long i = 0; i < K; i++)
		a[i] = (double)i;
	for (int r = 0; r < sweeps; r++)
		for (long i = 0; i < K; i++)
			a[i] = a[i] * 0.5 + (double)r;
	for (long i = 0; i < K; i++)
		s += a[i];
	return s;
}

__attribute__((noinline)) double tail(void)
{
	double s = 0;

	for (long i = 0; i < BIG; i++)
		s += big[i];
	return s;
}

int main(int argc, char **argv)
{
	int sweeps = argc > 1 ? atoi(argv[1]) : 40;
	double s = 0;

#ifndef ROI_KERNEL_ONLY
	s += setup();
#endif
#ifdef ROI_MARKED
	locprof_start();
#endif
	if (sweeps >= 0)
		s += kernel(sweeps);
#ifdef ROI_MARKED
	locprof_stop();
#endif
#ifndef ROI_KERNEL_ONLY
	s += tail();
#endif
	printf("%.1f\n", s);
	return 0;
}
