/* Sixteen arrays of 4096 doubles in one static block (32 KiB apart, a
 * multiple of any cache's way of up to 32 KiB), updated in lock step,
 * s[i] = the sum of the other fifteen, P / 4096 times: sixteen lines at
 * one offset of their arrays in use together. Hold-out kernel: not used
 * to develop any model.
 * usage: soa16 [P]  (default 400000: about 100 sweeps), or -DN=P */
#include "kernel.h"

#define LEN 4096
#define ARRAYS 16

static double field[ARRAYS][LEN];

int main(int argc, char **argv)
{
	long p = kernel_size(argc, argv, 400000, LEN);
	double sum = 0;

	for (int k = 0; k < ARRAYS; k++)
		for (long i = 0; i < LEN; i++)
			field[k][i] = (double)((i + k) % 7);
	for (long r = 0; r < p / LEN; r++)
		for (long i = 0; i < LEN; i++) {
			double s = 0;
			for (int k = 1; k < ARRAYS; k++)
				s += field[k][i];
			field[0][i] = s * 0.5 + (double)r;
		}
	for (long i = 0; i < LEN; i += 13)
		sum += field[0][i];
	kernel_done("soa16", p, sum);
	return 0;
}
