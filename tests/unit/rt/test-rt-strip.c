/* The runtime's closed-form straddle count of a versioned loop's strip
 * (src/rt/rt-strip.c: a power-of-two step by shifts and masks, any other
 * by floor sums) against the slow reference: every reference of the
 * strip, its extra lines counted one by one. */
#include "lp-test.h"

#include "../../../src/rt/rt-strip.c"

#include "common/rng.h"

uint32_t lp_rt_line_shift0 = 63;
__thread uint64_t lp_rt_extra0;

static uint64_t slow_extra(uint64_t a0, int64_t step, uint64_t size, uint64_t n, unsigned shift)
{
	uint64_t e = 0;

	for (uint64_t i = 0; i < n; i++) {
		uint64_t a = a0 + (uint64_t)step * i;
		e += ((a + size - 1) >> shift) - (a >> shift);
	}
	return e;
}

static uint64_t fast_extra(uint64_t a0, int64_t step, uint64_t size, uint64_t n, unsigned shift)
{
	lp_rt_line_shift0 = shift;
	lp_rt_extra0 = 0;
	lp_rt_strip_extra(a0, step, size, n);
	return lp_rt_extra0;
}

/* Unaligned vector loads of a stencil's rows, stepping by their size or
 * by a power of two, at every offset of a line: the shifts' path. */
static void test_power_of_two_steps(void **state)
{
	static const uint64_t sizes[] = { 1, 2, 4, 8, 16, 32, 64, 3, 12 };
	static const int64_t steps[] = { 1, 2, 4, 8, 16, 32, 64, -8, -16, -64 };

	for (unsigned shift = 4; shift <= 7; shift++)
		for (size_t si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++)
			for (size_t st = 0; st < sizeof(steps) / sizeof(steps[0]); st++)
				for (uint64_t a0 = 0x10000; a0 < 0x10000 + 160; a0++)
					for (uint64_t n = 0; n < 70; n += 7) {
						uint64_t size = sizes[si];
						if (size > (1ull << shift))
							continue;
						assert_int_equal(fast_extra(a0, steps[st], size, n, shift),
								 slow_extra(a0, steps[st], size, n, shift));
					}
}

/* Random strips: any step (odd ones and ones beyond a line take the
 * floor sums), sizes up to two lines. */
static void test_random_strips(void **state)
{
	struct lp_rng rng;

	lp_rng_seed(&rng, 7);
	for (int k = 0; k < 200000; k++) {
		unsigned shift = 4 + (unsigned)lp_rng_below(&rng, 4);
		uint64_t a0 = (1ull << 30) + lp_rng_below(&rng, 1 << 20);
		int64_t step = (int64_t)lp_rng_below(&rng, 300) - 150;
		uint64_t size = 1 + lp_rng_below(&rng, 2ull << shift);
		uint64_t n = lp_rng_below(&rng, 400);
		if (k % 2)
			step = (lp_rng_below(&rng, 2) ? 1 : -1) * (int64_t)(1ull << lp_rng_below(&rng, 9));
		assert_int_equal(fast_extra(a0, step, size, n, shift), slow_extra(a0, step, size, n, shift));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_power_of_two_steps),
		cmocka_unit_test(test_random_strips),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
