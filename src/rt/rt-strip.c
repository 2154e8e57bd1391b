/* The extra line accesses of a strip of references that may straddle
 * lines, in closed form: what a versioned loop's fast copy adds to the
 * thread's lp_rt_extra0 once per strip (rt.h). */
#include "rt.h"

#include <stdint.h>

/* sum over i in [0, n) of floor((a i + b) / m), mod 2^64 (the
 * Euclid-like reduction: O(log) steps). */
static uint64_t rt_floor_sum(uint64_t n, uint64_t m, uint64_t a, uint64_t b)
{
	uint64_t ans = 0;

	while (n) {
		if (a >= m) {
			ans += (n % 2 ? (n - 1) / 2 * n : n / 2 * (n - 1)) * (a / m);
			a %= m;
		}
		if (b >= m) {
			ans += n * (b / m);
			b %= m;
		}
		uint64_t y = a * n + b;
		if (y < m)
			break;
		n = y / m;
		b = y % m;
		y = m, m = a, a = y;
	}
	return ans;
}

void lp_rt_strip_extra(uint64_t a0, int64_t step, uint64_t size, uint64_t n)
{
	uint64_t L = 1ull << lp_rt_line_shift0, s;

	if (!n || !size || lp_rt_line_shift0 >= 63)
		return;
	/* aligned to its size, stepping by multiples of it: none straddles
	 * (the usual vectorised loop; the floor sums' divisions cost a
	 * vectorised matmul 2x at rate 1e-4) */
	if (!(size & (size - 1)) && size <= L && !(((uint64_t)step | a0) & (size - 1)))
		return;
	if (step < 0) { /* the same addresses, walked up */
		a0 += (uint64_t)step * (n - 1);
		step = -step;
	}
	s = (uint64_t)step;
	/* lines of the last byte less lines of the first, over the strip */
	lp_rt_extra0 += rt_floor_sum(n, L, s, a0 + size - 1) - rt_floor_sum(n, L, s, a0);
}
