/* 0/1 knapsack by dynamic programming over one row of P + 1 capacities,
 * 64 items, each pass walking the row downwards and reading the entry
 * its weight below: two streams a varying distance apart.
 * Hold-out kernel: not used to develop any model.
 * usage: knapsack [P]  (default 40000), or built with -DN=P */
#include "kernel.h"

int main(int argc, char **argv)
{
	long p = kernel_size(argc, argv, 40000, 64);
	long *dp = kernel_alloc(sizeof(long) * (p + 1));
	uint64_t st = 17;

	for (int item = 0; item < 64; item++) {
		long wt = 1 + (long)(kernel_rand(&st) % (uint64_t)(p / 4)), val = 1 + (long)(kernel_rand(&st) % 1000);
		for (long c = p; c >= wt; c--) {
			long take = dp[c - wt] + val;
			if (take > dp[c])
				dp[c] = take;
		}
	}
	kernel_done("knapsack", p, (double)dp[p]);
	return 0;
}
