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

/* #{y in [0, x) : y mod 2^kp >= t}, t <= 2^kp. */
static uint64_t rt_at_or_above(uint64_t x, unsigned kp, uint64_t t)
{
	uint64_t r = x & ((1ull << kp) - 1);

	return (x >> kp) * ((1ull << kp) - t) + (r > t ? r - t : 0);
}

/* The same count as the floor sums when the step is 2^ks, at most a line
 * (2^kl), and the size at most a line: the addresses' offsets in their
 * line then cycle through 2^(kl - ks) values (a0 mod step plus j step),
 * and those at phases j >= t straddle, one extra line each. Shifts and
 * masks only: the floor sums' divisions, strip after strip, were most of
 * what counting straddles cost the vectorised `stencil 1024 150`
 * (docs/runtime.md, "Loop versioning"). */
static uint64_t rt_strip_pow2(uint64_t a0, unsigned ks, uint64_t size, uint64_t n, unsigned kl)
{
	unsigned kp = kl - ks;
	uint64_t s = 1ull << ks, L = 1ull << kl;
	uint64_t r0 = a0 & (s - 1), j0 = (a0 & (L - 1)) >> ks, t;

	/* r0 + j s + size - 1 >= L  <=>  j >= ceil((L - size + 1 - r0) / s) */
	t = (L - size + s - r0) >> ks;
	if (t >= 1ull << kp)
		return 0;
	return rt_at_or_above(j0 + (n & ((1ull << kp) - 1)), kp, t) - rt_at_or_above(j0, kp, t) +
	       (n >> kp) * ((1ull << kp) - t);
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
	if (s && !(s & (s - 1)) && s <= L && size <= L) {
		lp_rt_extra0 += rt_strip_pow2(a0, (unsigned)__builtin_ctzll(s), size, n, lp_rt_line_shift0);
		return;
	}
	/* lines of the last byte less lines of the first, over the strip */
	lp_rt_extra0 += rt_floor_sum(n, L, s, a0 + size - 1) - rt_floor_sum(n, L, s, a0);
}
