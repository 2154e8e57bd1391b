/* Known answers for the intervals of model outputs (model-interval.c) and
 * their use by the report: resampling, coverage of a proportion, the
 * cliff flag, and the time of a report with intervals. */
#include "lp-test.h"

#include <locprof/model.h>
#include <locprof/report.h>
#include <locprof/sample.h>

#include "common/error.h"
#include "common/rng.h"

#include <math.h>
#include <string.h>
#include <time.h>

/* A profile of n samples at times 0, 10, 20, ...: a share p of them with
 * reuse distance 1000, the others 1. */
static struct lp_profile *bernoulli_profile(size_t n, double p, uint64_t seed)
{
	struct lp_profile *prof;
	struct lp_rng rng;

	lp_rng_seed(&rng, seed);
	assert_int_equal(lp_profile_new(&prof), 0);
	prof->n_line_sizes = 1;
	prof->line_sizes[0] = 64;
	prof->rate = 0.1;
	for (size_t i = 0; i < n; i++) {
		struct lp_sample s = { .time = 10 * i, .addr = 64 * i,
				       .reuse = lp_rng_double(&rng) < p ? 1000 : 1 };
		assert_int_equal(lp_profile_add_sample(prof, &s), 0);
	}
	prof->accesses[0] = 10 * n + 2000;
	assert_int_equal(lp_profile_finish(prof, 0), 0);
	return prof;
}

/* The share of long reuses: a proportion, whose sd is known. */
static int long_share(const struct lp_profile *p, void *ctx, double *out)
{
	size_t first, n, k = 0;

	(void)ctx;
	lp_profile_line_samples(p, 0, &first, &n);
	for (size_t i = 0; i < n; i++)
		k += p->samples[first + i].reuse > 100;
	out[0] = n ? (double)k / (double)n : NAN;
	return 0;
}

/* A model with a cliff: 60 % misses while long reuses are a minority,
 * 5 % once they are the majority (a cache size at the knife edge). */
static int cliff_model(const struct lp_profile *p, void *ctx, double *out)
{
	double share;

	long_share(p, ctx, &share);
	out[0] = share < 0.5 ? 0.6 : 0.05;
	return 0;
}

static void test_resample(void **state)
{
	struct lp_profile *p = bernoulli_profile(5000, 0.3, 1), r, r2;
	size_t total = 0;

	(void)state;
	for (uint64_t seed = 1; seed <= 20; seed++) {
		assert_int_equal(lp_profile_resample(&r, p, 0, seed), 0);
		total += r.n_samples;
		/* time order kept, every sample one of the profile's */
		for (size_t i = 0; i < r.n_samples; i++) {
			assert_true(i == 0 || r.samples[i - 1].time <= r.samples[i].time);
			size_t j = r.samples[i].time / 10;
			assert_memory_equal(&r.samples[i], &p->samples[j], sizeof(r.samples[i]));
		}
		assert_int_equal(lp_profile_resample(&r2, p, 0, seed), 0);
		assert_int_equal(r2.n_samples, r.n_samples); /* same seed, same resample */
		assert_memory_equal(r2.samples, r.samples, r.n_samples * sizeof(*r.samples));
		lp_profile_resample_release(&r2);
		lp_profile_resample_release(&r);
	}
	/* Poisson(1) multiplicities: the size is n on average (sd sqrt(n)
	 * per resample, sqrt(20 n) over 20) */
	assert_true(fabs((double)total - 20 * 5000.0) < 5 * sqrt(20 * 5000.0));
	lp_profile_free(p);
}

/* Over 200 profiles of 400 samples with a true share of 0.3, the
 * interval of the estimated share holds 0.3 in at least 90 % of them
 * (nominal 95 %, a little more with the range of the resamples), and its
 * half-width is about 1.96 sd of a binomial proportion. */
static void test_coverage_of_a_proportion(void **state)
{
	const size_t n = 400, runs = 200;
	const double p0 = 0.3, sd = sqrt(p0 * (1 - p0) / n);
	struct lp_interval_params ip = { .li = 0, .resamples = 0, .seed = 5 }; /* the default */
	size_t covered = 0;
	double width = 0;

	(void)state;
	for (size_t k = 0; k < runs; k++) {
		struct lp_profile *p = bernoulli_profile(n, p0, 100 + k);
		struct lp_interval iv;
		double est;
		long_share(p, NULL, &est);
		assert_int_equal(lp_model_intervals(p, &ip, long_share, NULL, &est, 1, &iv), 0);
		assert_true(iv.lo <= est && est <= iv.hi);
		assert_false(iv.cliff);
		covered += iv.lo <= p0 && p0 <= iv.hi;
		width += (iv.hi - iv.lo) / 2;
		lp_profile_free(p);
	}
	width /= runs;
	print_message("coverage %zu/%zu, mean half-width %.4f (%.3f sd = %.4f)\n", covered, runs, width,
		      LP_INTERVAL_Z, LP_INTERVAL_Z * sd);
	assert_true(covered >= runs * 90 / 100);
	assert_true(width > 2.1 * sd && width < 3.0 * sd); /* 90 %: 1.97 sd */
}

/* A rare event: a share of 0.5 % of 300 samples is 0 in a fifth of the
 * runs, where every resample agrees on 0; the binomial floor must still
 * reach the true share (the Wilson interval: p +- 1.96 sd has no width
 * at 0, and held 0.005 in about three runs of four). */
static void test_coverage_near_zero(void **state)
{
	const size_t n = 300, runs = 200;
	struct lp_interval_params ip = { .li = 0, .resamples = 0, .seed = 5 };
	size_t covered = 0, zeros = 0;

	(void)state;
	for (size_t k = 0; k < runs; k++) {
		struct lp_profile *p = bernoulli_profile(n, 0.005, 500 + k);
		struct lp_interval iv;
		double est;

		long_share(p, NULL, &est);
		assert_int_equal(lp_model_intervals(p, &ip, long_share, NULL, &est, 1, &iv), 0);
		zeros += est == 0;
		covered += iv.lo <= 0.005 && 0.005 <= iv.hi;
		assert_true(iv.hi < 0.06); /* not trivially wide */
		lp_profile_free(p);
	}
	print_message("share 0.005 of %zu: %zu runs of %zu gave 0; coverage %zu\n", n, zeros, runs, covered);
	assert_true(zeros >= runs / 10);
	assert_true(covered >= runs * 93 / 100);
}

/* At the knife edge the resamples land on both sides: the interval spans
 * both levels and is called a cliff; away from it, neither. */
static void test_cliff(void **state)
{
	struct lp_interval_params ip = { .li = 0, .resamples = 0, .seed = 3 };
	struct lp_profile *edge = bernoulli_profile(2000, 0.5, 7), *far = bernoulli_profile(2000, 0.2, 7);
	struct lp_interval iv;
	double est;

	(void)state;
	cliff_model(edge, NULL, &est);
	assert_int_equal(lp_model_intervals(edge, &ip, cliff_model, NULL, &est, 1, &iv), 0);
	assert_true(iv.cliff);
	assert_true(iv.lo <= 0.05 && iv.hi >= 0.6);
	assert_true(iv.below == 0.05 && iv.above == 0.6);
	cliff_model(far, NULL, &est);
	assert_int_equal(lp_model_intervals(far, &ip, cliff_model, NULL, &est, 1, &iv), 0);
	assert_false(iv.cliff);
	/* every resample agrees: the interval is the binomial floor, the
	 * normal interval of 0.6 of 2 000 united with Wilson's */
	double z = LP_INTERVAL_Z, n = 2000, c = (0.6 + z * z / (2 * n)) / (1 + z * z / n);
	double h = z / (1 + z * z / n) * sqrt(0.6 * 0.4 / n + z * z / (4 * n * n)), w = z * sqrt(0.6 * 0.4 / n);
	assert_true(fabs(iv.lo - fmin(c - h, 0.6 - w)) < 1e-9 && fabs(iv.hi - fmax(c + h, 0.6 + w)) < 1e-9);
	assert_true(isnan(iv.below));
	lp_profile_free(edge);
	lp_profile_free(far);
}

/* A model that fails on some resamples (those of an odd number of
 * samples), with a message of its own. */
static int odd_fails(const struct lp_profile *p, void *ctx, double *out)
{
	size_t first, n;

	lp_profile_line_samples(p, 0, &first, &n);
	if (n % 2)
		return lp_seterr(LP_EINVAL, "odd resample of %zu samples", n);
	return long_share(p, ctx, out);
}

/* Field by field (a NAN equals a NAN), padding aside. */
static void assert_same_interval(const struct lp_interval *a, const struct lp_interval *b)
{
	assert_memory_equal(&a->lo, &b->lo, sizeof(a->lo));
	assert_memory_equal(&a->hi, &b->hi, sizeof(a->hi));
	assert_memory_equal(&a->below, &b->below, sizeof(a->below));
	assert_memory_equal(&a->above, &b->above, sizeof(a->above));
	assert_int_equal(a->cliff, b->cliff);
	assert_int_equal(a->steep, b->steep);
}

/* Resamples evaluated on several threads give the same intervals as one
 * at a time, and a failure on any thread comes back to the caller with
 * its message. */
static void test_jobs(void **state)
{
	struct lp_profile *p = bernoulli_profile(3001, 0.4, 11);
	struct lp_interval one, many;
	double est[2];

	(void)state;
	long_share(p, NULL, &est[0]);
	est[1] = est[0];
	for (unsigned jobs = 0; jobs <= 9; jobs += 3) {
		struct lp_interval_params ip = { .li = 0, .resamples = 12, .seed = 8, .jobs = jobs };
		assert_int_equal(lp_model_intervals(p, &ip, long_share, NULL, est, 1, jobs ? &many : &one), 0);
		if (jobs)
			assert_same_interval(&one, &many);
		ip.resamples = 40;
		assert_int_equal(lp_model_intervals(p, &ip, odd_fails, NULL, est, 1, &many), LP_EINVAL);
		assert_non_null(strstr(lp_errmsg(), "odd resample of"));
	}
	lp_profile_free(p);
}

/* The report's curves and named caches all get intervals that hold their
 * estimates. The CPU time of a report of a 20 000-sample profile with
 * intervals and four named caches is printed in the log; its goal lives in
 * bench/, not here (no timed assertions in tests). */
static void test_report_intervals(void **state)
{
	const size_t n = 5000000;
	struct lp_profile *p;
	struct lp_sampler *s;
	struct lp_rng rng;
	struct lp_ref ref = { .size = 8 };
	uint64_t sizes[15];
	struct lp_report_cache caches[4] = {
		{ .label = "32K:8:64", .size = 32768, .ways = 8, .line = 64 },
		{ .label = "256K:8:64", .size = 262144, .ways = 8, .line = 64 },
		{ .label = "1M:16:64", .size = 1 << 20, .ways = 16, .line = 64 },
		{ .label = "8M:16:64", .size = 8 << 20, .ways = 16, .line = 64 },
	};
	struct lp_report *r;
	const struct lp_curve *cv;
	const struct lp_report_cache *ca;
	struct timespec a, b;

	(void)state;
	assert_int_equal(lp_profile_new(&p), 0);
	p->n_line_sizes = 1;
	p->line_sizes[0] = 64;
	p->rate = 20000.0 / (double)n;
	p->seed = 4;
	assert_int_equal(lp_sampler_new(&s, p), 0);
	lp_rng_seed(&rng, 9);
	for (size_t i = 0; i < n; i++) {
		ref.addr = 64 * (lp_rng_double(&rng) < 0.5 ? lp_rng_below(&rng, 1000) : lp_rng_below(&rng, 100000));
		assert_int_equal(lp_sampler_feed(s, &ref, 1), 0);
	}
	assert_int_equal(lp_sampler_finish(s), 0);
	lp_sampler_free(s);
	for (int i = 0; i < 15; i++)
		sizes[i] = (uint64_t)4096 << i;
	struct lp_report_params pa = { .sizes = sizes, .nsizes = 15, .caches = caches, .ncaches = 4,
				       .policies = LP_REPORT_LRU | LP_REPORT_RANDOM,
				       .fill = LP_STATCACHE_FILL_AUTO, .resamples = LP_INTERVAL_RESAMPLES, .seed = 1 };
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
	assert_int_equal(lp_report_new(&r, p, &pa), 0);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
	double ms = (b.tv_sec - a.tv_sec) * 1e3 + (b.tv_nsec - a.tv_nsec) / 1e6;
	print_message("%zu samples, 15 sizes, 4 caches, %d resamples: %.1f ms of CPU\n", p->n_samples,
		      LP_INTERVAL_RESAMPLES, ms);
	assert_int_equal(lp_report_curves(r, &cv), 2);
	for (int k = 0; k < 2; k++)
		for (size_t i = 0; i < cv[k].n; i++) {
			assert_non_null(cv[k].iv);
			assert_true(cv[k].iv[i].lo <= cv[k].ratio[i] && cv[k].ratio[i] <= cv[k].iv[i].hi);
			assert_true(cv[k].iv[i].lo >= 0 && cv[k].iv[i].hi <= 1);
		}
	/* half the accesses go to 1 000 lines: at 32K (512 lines) a ratio
	 * of 20 000 samples has a visible interval */
	assert_true(cv[0].iv[3].hi > cv[0].iv[3].lo);
	assert_int_equal(lp_report_caches(r, &ca), 4);
	for (int i = 0; i < 4; i++) {
		assert_true(ca[i].lru_iv.lo <= ca[i].lru && ca[i].lru <= ca[i].lru_iv.hi);
		assert_true(ca[i].random_iv.lo <= ca[i].random && ca[i].random <= ca[i].random_iv.hi);
	}
	/* on four threads: the same report */
	struct lp_report *r4;
	const struct lp_curve *cv4;
	const struct lp_report_cache *ca4;
	pa.jobs = 4;
	assert_int_equal(lp_report_new(&r4, p, &pa), 0);
	assert_int_equal(lp_report_curves(r4, &cv4), 2);
	for (int k = 0; k < 2; k++)
		for (size_t i = 0; i < cv[k].n; i++)
			assert_same_interval(&cv[k].iv[i], &cv4[k].iv[i]);
	assert_int_equal(lp_report_caches(r4, &ca4), 4);
	for (int i = 0; i < 4; i++) {
		assert_same_interval(&ca[i].lru_iv, &ca4[i].lru_iv);
		assert_same_interval(&ca[i].random_iv, &ca4[i].random_iv);
	}
	lp_report_free(r4);
	lp_report_free(r);
	lp_profile_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_resample),
		cmocka_unit_test(test_coverage_of_a_proportion),
		cmocka_unit_test(test_coverage_near_zero),
		cmocka_unit_test(test_cliff),
		cmocka_unit_test(test_jobs),
		cmocka_unit_test(test_report_intervals),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
