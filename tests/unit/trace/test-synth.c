/* Tests of the synthetic trace generator: reproducibility and the
 * defining property of every pattern, checked against independent
 * arithmetic or statistics with tolerances derived from the sample size. */
#include "lp-test.h"

#include <locprof/synth.h>
#include <math.h>

static struct lp_ref *generate(const struct lp_synth_params *p)
{
	struct lp_ref *v = calloc(p->count + 1, sizeof(*v));
	struct lp_synth *s;
	size_t n = 0, k;

	assert_int_equal(lp_synth_new(&s, p), 0);
	/* Odd batch sizes: the stream must not depend on them. */
	while ((k = lp_synth_fill(s, v + n, 1000 + n % 7)) > 0)
		n += k;
	assert_int_equal(n, p->count);
	assert_int_equal(lp_synth_fill(s, v, 10), 0);
	lp_synth_free(s);
	return v;
}

static void test_reproducible(void **state)
{
	for (int pat = LP_SYNTH_SEQ; pat <= LP_SYNTH_MIX; pat++) {
		struct lp_synth_params p;
		lp_synth_params_default(&p, (enum lp_synth_pattern)pat);
		p.count = 20000;
		p.phase_len = 1000;
		p.threads = 3;
		struct lp_ref *a = generate(&p), *b = generate(&p);
		assert_memory_equal(a, b, p.count * sizeof(*a));
		p.seed = 2;
		struct lp_ref *c = generate(&p);
		/* The kinds at least come from the seed. */
		assert_true(memcmp(a, c, p.count * sizeof(*a)) != 0);
		free(a);
		free(b);
		free(c);
	}
}

static void test_seq_and_strided(void **state)
{
	struct lp_synth_params p;

	lp_synth_params_default(&p, LP_SYNTH_SEQ);
	p.count = 5000;
	p.footprint = 1000; /* not a multiple of elem_size 8: 125 elements */
	struct lp_ref *v = generate(&p);
	for (uint64_t i = 0; i < p.count; i++) {
		assert_int_equal(v[i].addr, p.base + (i % 125) * 8);
		assert_int_equal(v[i].size, 8);
		assert_int_equal(v[i].pc, p.pc);
	}
	free(v);

	lp_synth_params_default(&p, LP_SYNTH_STRIDED);
	p.count = 5000;
	p.stride = 4160;
	p.footprint = 1 << 20;
	v = generate(&p);
	for (uint64_t i = 0; i < p.count; i++) {
		assert_int_equal(v[i].addr, p.base + (i * 4160) % (1 << 20));
		assert_int_equal(v[i].pc, p.pc + 16 * LP_SYNTH_STRIDED);
	}
	free(v);
}

static void test_cyclic_visits_lines_in_order(void **state)
{
	struct lp_synth_params p;

	lp_synth_params_default(&p, LP_SYNTH_CYCLIC);
	p.count = 10000;
	p.lines = 37;
	p.line_size = 128;
	struct lp_ref *v = generate(&p);
	for (uint64_t i = 0; i < p.count; i++)
		assert_int_equal((v[i].addr - p.base) / 128, i % 37);
	free(v);
}

static void test_uniform_covers_lines_evenly(void **state)
{
	enum { M = 256, PER = 1000 };
	struct lp_synth_params p;
	uint64_t count[M] = { 0 };
	double chi2 = 0, e = PER;

	lp_synth_params_default(&p, LP_SYNTH_UNIFORM);
	p.count = M * PER;
	p.lines = M;
	struct lp_ref *v = generate(&p);
	for (uint64_t i = 0; i < p.count; i++) {
		uint64_t line = (v[i].addr - p.base) / p.line_size;
		assert_true(line < M && (v[i].addr - p.base) % p.line_size == 0);
		count[line]++;
	}
	for (int k = 0; k < M; k++)
		chi2 += (count[k] - e) * (count[k] - e) / e;
	/* chi-square with 255 degrees of freedom: mean 255, sd sqrt(510);
	 * 6 sd above the mean essentially never happens by chance. */
	assert_true(chi2 < 255 + 6 * sqrt(510.0));
	assert_true(chi2 > 255 - 6 * sqrt(510.0));
	free(v);
}

static void check_zipf(double s, uint64_t m, uint64_t n)
{
	struct lp_synth_params p;
	uint64_t *count = calloc(m, sizeof(*count));
	double h = 0;

	lp_synth_params_default(&p, LP_SYNTH_ZIPF);
	p.count = n;
	p.lines = m;
	p.zipf_s = s;
	struct lp_ref *v = generate(&p);
	for (uint64_t i = 0; i < n; i++) {
		uint64_t line = (v[i].addr - p.base) / p.line_size;
		assert_true(line < m);
		count[line]++;
	}
	for (uint64_t k = 1; k <= m; k++)
		h += pow((double)k, -s);
	for (uint64_t k = 1; k <= m; k++) {
		double pk = pow((double)k, -s) / h, e = pk * (double)n;
		double sd = sqrt((double)n * pk * (1 - pk));
		/* Each count is binomial(n, pk): 6 sd covers it, for every
		 * rank, with overwhelming probability. */
		if (fabs((double)count[k - 1] - e) > 6 * sd + 1)
			fail_msg("s=%g rank %llu: %llu draws, expected %.1f +- %.1f", s,
				 (unsigned long long)k, (unsigned long long)count[k - 1], e, sd);
	}
	free(v);
	free(count);
}

static void test_zipf_follows_power_law(void **state)
{
	check_zipf(1.0, 100, 1000000);
	check_zipf(0.6, 1000, 1000000);
	check_zipf(2.5, 50, 500000);
}

static void test_write_ratio_and_threads(void **state)
{
	struct lp_synth_params p;
	uint64_t writes = 0;

	lp_synth_params_default(&p, LP_SYNTH_UNIFORM);
	p.count = 200000;
	p.write_ratio = 0.3;
	p.threads = 3;
	struct lp_ref *v = generate(&p);
	for (uint64_t i = 0; i < p.count; i++) {
		writes += v[i].kind == LP_REF_WRITE;
		assert_true(v[i].kind <= LP_REF_WRITE);
		assert_int_equal(v[i].tid, (i / 64) % 3);
	}
	double sd = sqrt(p.count * 0.3 * 0.7);
	assert_true(fabs((double)writes - 0.3 * p.count) < 6 * sd);
	free(v);

	p.write_ratio = 0;
	v = generate(&p);
	for (uint64_t i = 0; i < p.count; i++)
		assert_int_equal(v[i].kind, LP_REF_READ);
	free(v);
	p.write_ratio = 1;
	v = generate(&p);
	for (uint64_t i = 0; i < p.count; i++)
		assert_int_equal(v[i].kind, LP_REF_WRITE);
	free(v);
}

static void test_mix_phases(void **state)
{
	struct lp_synth_params p;
	int seen[5] = { 0 };

	lp_synth_params_default(&p, LP_SYNTH_MIX);
	p.count = 100000;
	p.phase_len = 1000;
	struct lp_ref *v = generate(&p);
	for (uint64_t i = 0; i < p.count; i++) {
		uint64_t j = (v[i].pc - p.pc) / 16;
		assert_true(j < 5 && (v[i].pc - p.pc) % 16 == 0);
		/* One pattern per phase, in its own region. */
		assert_int_equal(v[i].pc, v[i - i % 1000].pc);
		assert_int_equal((v[i].addr - p.base) >> 36, j);
		seen[j] = 1;
	}
	for (int j = 0; j < 5; j++)
		assert_true(seen[j]);
	free(v);
}

static void test_bad_parameters(void **state)
{
	struct lp_synth_params p;
	struct lp_synth *s;
	enum lp_synth_pattern pat;

	lp_synth_params_default(&p, LP_SYNTH_ZIPF);
	p.line_size = 48;
	assert_int_equal(lp_synth_new(&s, &p), LP_EINVAL);
	assert_non_null(strstr(lp_errmsg(), "power of two"));
	lp_synth_params_default(&p, LP_SYNTH_ZIPF);
	p.zipf_s = 0;
	assert_int_equal(lp_synth_new(&s, &p), LP_EINVAL);
	lp_synth_params_default(&p, LP_SYNTH_ZIPF);
	p.write_ratio = 1.5;
	assert_int_equal(lp_synth_new(&s, &p), LP_EINVAL);
	lp_synth_params_default(&p, LP_SYNTH_ZIPF);
	p.lines = 0;
	assert_int_equal(lp_synth_new(&s, &p), LP_EINVAL);
	assert_int_equal(lp_synth_pattern_parse("zipf", &pat), 0);
	assert_int_equal(pat, LP_SYNTH_ZIPF);
	assert_int_equal(lp_synth_pattern_parse("nope", &pat), LP_EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reproducible),
		cmocka_unit_test(test_seq_and_strided),
		cmocka_unit_test(test_cyclic_visits_lines_in_order),
		cmocka_unit_test(test_uniform_covers_lines_evenly),
		cmocka_unit_test(test_zipf_follows_power_law),
		cmocka_unit_test(test_write_ratio_and_threads),
		cmocka_unit_test(test_mix_phases),
		cmocka_unit_test(test_bad_parameters),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
