/* The 95% interval of a hot row's misses (lp_report_count_interval()):
 * known values (Garwood's exact Poisson interval for whole samples), its
 * coverage on simulated Poisson sampling of rows whose accesses miss with
 * various probabilities, against the true count, and the sampled hot
 * spots' rows against the function on their own sums. */
#include "lp-test.h"

#include <locprof/report.h>

#include <math.h>

static void test_known_values(void **state)
{
	double lo, hi;

	(void)state;
	lp_report_count_interval(0, 0, 100, &lo, &hi); /* no sample: [0, 3.689] samples */
	assert_true(lo == 0 && fabs(hi - 368.9) < 0.1);
	lp_report_count_interval(100, 100 * 100, 100, &lo, &hi); /* one whole sample */
	assert_true(fabs(lo - 2.532) < 0.01 && fabs(hi - 557.16) < 0.05);
	lp_report_count_interval(1300, 13 * 100 * 100, 100, &lo, &hi);
	assert_true(fabs(lo - 692.18) < 0.05 && fabs(hi - 2223.04) < 0.05);
	lp_report_count_interval(1234.5, 77, 0, &lo, &hi); /* exact count */
	assert_true(lo == 1234.5 && hi == 1234.5);
	/* half the samples' weight in each of twice as many samples: narrower
	 * relative to the same sum, never outside it */
	lp_report_count_interval(1300, 26 * 50 * 50, 100, &lo, &hi);
	assert_true(lo > 692.18 && lo < 1300 && hi > 1300 && hi < 2223.04);
	/* a row of millions of samples (where GSL's inverse gives up): the
	 * normal interval, Y +- 1.96 sqrt(V) */
	for (double n = 1e3; n <= 1e9; n *= 10) {
		double y = n * 0.7, v = n * 0.7 * 0.7;

		lp_report_count_interval(y, v, 1, &lo, &hi);
		assert_true(isfinite(lo) && isfinite(hi));
		assert_true(fabs((y - lo) / (1.96 * sqrt(v)) - 1) < 0.05 && fabs((hi - y) / (1.96 * sqrt(v)) - 1) < 0.05);
	}
	/* averaged copies of a phase-guided profile can make 2 Y^2 / V < 2 */
	lp_report_count_interval(100, 3 * 100 * 100, 300, &lo, &hi);
	assert_true(isfinite(lo) && isfinite(hi) && lo >= 0 && lo <= 100 && hi > 100);
}

static uint64_t rng = 88172645463325252ull;

static double uniform(void)
{
	rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
	return (double)(rng >> 11) / 9007199254740992.0;
}

/* p of access i of a row: every access misses (kind 0), uniform in
 * [0, 1) (1), or mostly 0.05 with one access in ten at 1 (2). */
static double miss_prob(int kind, size_t i)
{
	if (kind == 0)
		return 1;
	if (kind == 1)
		return (double)((i * 2654435761u) % 1000) / 1000;
	return i % 10 == 0 ? 1 : 0.05;
}

/* The share of trials whose interval holds the row's true misses: n
 * accesses, each sampled with probability rate (the sampler's geometric
 * gaps are a Bernoulli draw per access). */
static double coverage(int kind, size_t n, double rate, int trials)
{
	double truth = 0, w = 1 / rate;
	int inside = 0;

	for (size_t i = 0; i < n; i++)
		truth += miss_prob(kind, i);
	for (int t = 0; t < trials; t++) {
		double sum = 0, sq = 0, lo, hi;

		for (size_t i = 0; i < n; i++)
			if (uniform() < rate) {
				double y = miss_prob(kind, i) * w;
				sum += y;
				sq += y * y;
			}
		lp_report_count_interval(sum, sq, w, &lo, &hi);
		inside += lo <= truth && truth <= hi;
	}
	return (double)inside / trials;
}

static void test_coverage(void **state)
{
	const double rate = 0.05;
	const double expected[] = { 0.5, 3, 12, 60 }; /* samples in the row */

	(void)state;
	for (int kind = 0; kind < 3; kind++)
		for (size_t e = 0; e < sizeof(expected) / sizeof(*expected); e++) {
			size_t n = (size_t)(expected[e] / rate);
			double c = coverage(kind, n, rate, 3000);

			print_message("kind %d, %zu accesses, %g samples expected: coverage %.3f\n", kind, n,
				      expected[e], c);
			assert_true(c >= 0.93);
			/* not trivially wide where there are samples enough */
			if (kind == 0 && expected[e] >= 12)
				assert_true(c <= 0.985);
		}
}

/* Sampled hot spots: each row's interval is the function's on the row's
 * own sums (every charge one sample of weight 1/rate). */
static void test_sampled_hotspots(void **state)
{
	const double w = 1000;
	double sum[5] = { 0 }, sq[5] = { 0 };
	const struct lp_source_function *f;
	struct lp_hotspots *h;
	size_t n;

	(void)state;
	assert_int_equal(lp_hotspots_new_sampled(&h, NULL, w, 1), 0);
	for (int i = 0; i < 200; i++) {
		int pc = 1 + i % 5;
		double m = w * miss_prob(1, (size_t)i);

		assert_int_equal(lp_hotspots_add(h, (uint64_t)pc * 0x10, w, m), 0);
		sum[pc - 1] += m;
		sq[pc - 1] += m * m;
	}
	assert_int_equal(lp_hotspots_finish(h), 0);
	n = lp_hotspots_functions(h, &f);
	assert_int_equal(n, 5);
	for (size_t i = 0; i < n; i++) {
		int pc = (int)strtol(f[i].function, NULL, 16) / 0x10;
		double lo, hi;

		lp_report_count_interval(sum[pc - 1], sq[pc - 1], w, &lo, &hi);
		assert_true(fabs(f[i].misses - sum[pc - 1]) < 1e-6 && fabs(f[i].misses_sq - sq[pc - 1]) < 1e-3);
		assert_true(fabs(f[i].misses_lo - lo) < 1e-6 && fabs(f[i].misses_hi - hi) < 1e-6);
		assert_true(f[i].misses_lo < f[i].misses && f[i].misses < f[i].misses_hi);
	}
	lp_hotspots_free(h);
	/* exact hot spots: the interval is the count */
	assert_int_equal(lp_hotspots_new(&h, NULL), 0);
	assert_int_equal(lp_hotspots_add(h, 0x10, 5, 3), 0);
	assert_int_equal(lp_hotspots_finish(h), 0);
	n = lp_hotspots_functions(h, &f);
	assert_true(n == 1 && f[0].misses_lo == 3 && f[0].misses_hi == 3);
	lp_hotspots_free(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_known_values),
		cmocka_unit_test(test_coverage),
		cmocka_unit_test(test_sampled_hotspots),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
