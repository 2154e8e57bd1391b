/* The model's numeric helpers against the plain libm forms they replace:
 * lp_log_factorial() (common/lgamma.c) is lgamma_r(x + 1) to the last bit,
 * inside its table, at its edges, beyond it and off whole numbers, from
 * several threads at once (the table is filled on first use); and
 * lp_exp_sums() (common/exp-sum.c) is the scalar sum of exp() within a few
 * ulps, weighted and not, for every length around its two-lane step and
 * for arguments from 0 to beyond exp()'s underflow. */
#include "lp-test.h"

#include "common/exp-sum.h"
#include "common/lgamma.h"
#include "common/rng.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>

static double plain_lgamma1(double x)
{
	int sign;
	return lgamma_r(x + 1, &sign);
}

static void *log_fact_worker(void *arg)
{
	long bad = 0;

	for (double x = (double)(intptr_t)arg; x < 70000; x += 7)
		bad += lp_log_factorial(x) != plain_lgamma1(x);
	return (void *)(intptr_t)bad;
}

static void test_log_factorial(void **state)
{
	static const double xs[] = { 0, 1, 2, 3, 10, 170, 171, 4095, 4096, 65534, 65535, 65536, 65537,
				     1e6, 1e12, 1e15, 0.5, 2.25, 4095.5, 1e-300, 70000.75 };
	pthread_t t[4];

	(void)state;
	/* first use from four threads at once */
	for (intptr_t i = 0; i < 4; i++)
		assert_int_equal(pthread_create(&t[i], NULL, log_fact_worker, (void *)i), 0);
	for (int i = 0; i < 4; i++) {
		void *bad;
		assert_int_equal(pthread_join(t[i], &bad), 0);
		assert_int_equal((intptr_t)bad, 0);
	}
	for (size_t i = 0; i < sizeof(xs) / sizeof(xs[0]); i++)
		assert_true(lp_log_factorial(xs[i]) == plain_lgamma1(xs[i]));
	assert_true(lp_log_factorial(0) == 0 && lp_log_factorial(1) == 0);
	assert_true(fabs(lp_log_factorial(10) - log(3628800.0)) < 1e-13);
}

static void scalar_sums(const double *k, const double *w, size_t n, double a, double *s, double *d)
{
	for (size_t i = 0; i < n; i++) {
		double e = exp(-k[i] * a), ww = w ? w[i] : 1;
		*s += ww * (1 - e);
		*d += ww * k[i] * e;
	}
}

static void test_exp_sums(void **state)
{
	struct lp_rng r;
	double k[67], w[67];

	(void)state;
	lp_rng_seed(&r, 5);
	for (int trial = 0; trial < 400; trial++) {
		size_t n = (size_t)trial % 67;
		double a = trial % 3 == 0 ? 1e-3 : trial % 3 == 1 ? 0.7 : 30;
		for (size_t i = 0; i < n; i++) {
			/* 0, tiny, ordinary, and far past underflow (e^-800 = 0) */
			int kind = (int)lp_rng_below(&r, 4);
			k[i] = kind == 0 ? 0 : kind == 1 ? 1e-9 * (double)lp_rng_below(&r, 1000)
				: kind == 2 ? (double)lp_rng_below(&r, 100000) / 1000 : 800 + (double)lp_rng_below(&r, 1000);
			w[i] = (double)lp_rng_below(&r, 1000) / 100;
		}
		for (int weighted = 0; weighted < 2; weighted++) {
			double s0 = 0.25, d0 = 0.5, s1 = 0.25, d1 = 0.5;
			scalar_sums(k, weighted ? w : NULL, n, a, &s0, &d0);
			lp_exp_sums(k, weighted ? w : NULL, n, a, &s1, &d1);
			assert_true(fabs(s1 - s0) <= 1e-14 * fmax(1, fabs(s0)));
			assert_true(fabs(d1 - d0) <= 1e-14 * fmax(1, fabs(d0)));
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_log_factorial),
		cmocka_unit_test(test_exp_sums),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
