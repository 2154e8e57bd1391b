/* Known answers for the per-reference miss ratio (model-refs.c). */
#include "lp-test.h"

#include <locprof/model.h>

#include <math.h>

/* A profile of R references and A line accesses, with the samples' parts
 * given (line size 64). */
static struct lp_profile *profile(uint64_t refs, uint64_t acc, const uint8_t *parts, size_t n)
{
	struct lp_profile *p;

	assert_int_equal(lp_profile_new(&p), 0);
	p->n_line_sizes = 1;
	p->line_sizes[0] = 64;
	p->references = refs;
	p->accesses[0] = acc;
	for (size_t i = 0; i < n; i++) {
		struct lp_sample s = { .time = i, .reuse = 1, .part = parts[i] };
		assert_int_equal(lp_profile_add_sample(p, &s), 0);
	}
	assert_int_equal(lp_profile_finish(p, 0), 0);
	return p;
}

static void test_ref_miss_ratio(void **state)
{
	/* An unaligned walk: every reference straddles; the first lines hit
	 * (the previous reference brought them in), the next lines miss. Line
	 * ratio 0.5, no overlap: one miss per reference. */
	static const uint8_t walk[] = { LP_PART_FIRST, LP_PART_NEXT, LP_PART_FIRST, LP_PART_NEXT };
	static const double walk_p[] = { 0, 1, 0, 1 };
	/* Random unaligned accesses: both lines miss, full overlap. */
	static const double both_p[] = { 1, 1, 1, 1 };
	/* Half the references straddle (R = 4, A = 6); single-line ones miss
	 * with probability 0.5, straddling first lines 1, next lines 0.5:
	 * overlap min(1, 0.5) per extra line. */
	static const uint8_t mix[] = { LP_PART_WHOLE, LP_PART_WHOLE, LP_PART_FIRST, LP_PART_NEXT };
	static const double mix_p[] = { 0.5, 0.5, 1, 0.5 };
	static const uint8_t unknown[] = { 0, 0, 0, 0 };
	struct lp_profile *p;
	(void)state;

	p = profile(1000, 2000, walk, 4);
	assert_true(fabs(lp_ref_miss_ratio(p, 0, walk_p, 0.5) - 1.0) < 1e-12);
	assert_true(fabs(lp_ref_miss_ratio(p, 0, both_p, 1.0) - 1.0) < 1e-12);
	lp_profile_free(p);

	p = profile(4, 6, mix, 4);
	/* line misses 0.625 * 6 = 3.75, overlap 2 * 0.5 = 1: 2.75 / 4 */
	assert_true(fabs(lp_ref_miss_ratio(p, 0, mix_p, 0.625) - 2.75 / 4) < 1e-12);
	lp_profile_free(p);

	/* No straddling reference: the line ratio. Parts unknown (version-1
	 * profiles): both means are the line ratio, so is the result. */
	p = profile(6, 6, mix, 4);
	assert_true(fabs(lp_ref_miss_ratio(p, 0, mix_p, 0.3) - 0.3) < 1e-12);
	lp_profile_free(p);
	p = profile(1000, 2000, unknown, 4);
	assert_true(fabs(lp_ref_miss_ratio(p, 0, walk_p, 0.5) - 0.5) < 1e-12);
	lp_profile_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ref_miss_ratio),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
