/* MemSpy time sampling: exact bookkeeping of known and unknown references,
 * Equation 1's bounds, and the degenerate cases that must equal a full run. */
#include "lp-test.h"

#include <locprof/sim.h>

#include "common/rng.h"

#include <math.h>

/* References with phases: a hot loop over a small array, sweeps over a
 * big one, random probes; sizes 4 or 8 bytes, some straddling lines. */
static struct lp_ref *make_refs(size_t n, uint64_t seed)
{
	struct lp_ref *r = calloc(n, sizeof(*r));
	struct lp_rng rng;
	uint64_t sweep = 0;

	lp_rng_seed(&rng, seed);
	for (size_t i = 0; i < n; i++) {
		uint64_t phase = (i / 5000) % 3, k = lp_rng_below(&rng, 10);
		r[i].kind = (uint8_t)(k & 1);
		r[i].size = k < 8 ? 8 : 4;
		if (phase == 0 || k < 3)
			r[i].addr = 0x10000 + lp_rng_below(&rng, 6 * 1024) + (k == 9 ? 61 : 0);
		else if (phase == 1)
			r[i].addr = 0x100000 + (sweep += 8) % (256 * 1024);
		else
			r[i].addr = 0x200000 + lp_rng_below(&rng, 64 * 1024);
		if (lp_rng_below(&rng, 50) == 0)
			r[i].kind = LP_EV_ALLOC;
	}
	return r;
}

static void run(const char *spec, uint64_t len, uint64_t interval, int randlen, uint64_t seed,
		const struct lp_ref *refs, size_t n, struct lp_memspy_result *res)
{
	struct lp_memspy_params p = { .sample_length = len, .sample_interval = interval,
				      .random_lengths = randlen, .seed = seed };
	struct lp_memspy *m;

	assert_int_equal(lp_cache_spec_parse(&p.cache, spec), 0);
	assert_int_equal(lp_memspy_new(&m, &p), 0);
	for (size_t off = 0; off < n; off += 777)
		assert_int_equal(lp_memspy_refs(m, refs + off, n - off < 777 ? n - off : 777), 0);
	lp_memspy_result(m, res);
	lp_memspy_free(m);
}

static void check_exact_bookkeeping(const struct lp_memspy_result *r)
{
	/* known hits are real hits and known misses real misses, so the real
	 * misses during samples are the known misses plus the unknown
	 * references that really missed */
	double unknown_misses = r->true_mu * (double)r->unknown;
	assert_int_equal(r->known_hits + r->known_misses + r->unknown, r->sample_accesses);
	assert_true(fabs((double)r->known_misses + unknown_misses - (double)r->sample_misses) < 0.5);
	assert_true(r->m_mu0 <= r->true_miss_ratio_samples + 1e-12);
	assert_true(r->true_miss_ratio_samples <= r->m_mu1 + 1e-12);
	assert_true(fabs(r->true_miss_ratio_samples - r->m_mu05) <= r->bound + 1e-12);
}

static void test_one_sample_covering_the_trace_is_the_full_run(void **state)
{
	enum { N = 30000 };
	struct lp_ref *refs = make_refs(N, 1);
	struct lp_memspy_result r;
	const char *specs[] = { "4K:1:16", "16K:4:32", "2K:full:64", "8K:1:64:random" };

	for (int i = 0; i < 4; i++) {
		run(specs[i], 1u << 30, 1u << 30, 0, 1, refs, N, &r);
		assert_int_equal(r.samples, 1);
		assert_int_equal(r.sample_accesses, r.accesses);
		/* a cold cache: every unknown reference is a cold miss */
		assert_true(r.true_mu == 1.0);
		assert_true(r.m_mu1 == r.true_miss_ratio);
		assert_int_equal(r.known_misses + r.unknown, r.misses);
		check_exact_bookkeeping(&r);
	}
	free(refs);
}

static void test_ratio_one_covers_everything(void **state)
{
	enum { N = 40000 };
	struct lp_ref *refs = make_refs(N, 2);
	struct lp_memspy_result r;

	run("4K:1:16", 3000, 3000, 0, 1, refs, N, &r);
	assert_true(r.samples >= N * 0.95 / 3000);
	assert_int_equal(r.sample_accesses, r.accesses);
	assert_int_equal(r.sample_misses, r.misses);
	assert_true(r.true_miss_ratio_samples == r.true_miss_ratio);
	assert_true(r.unknown > 0 && r.unknown <= r.samples * r.lines);
	check_exact_bookkeeping(&r);
	free(refs);
}

static void test_bounds_always_hold(void **state)
{
	enum { N = 30000 };
	const char *specs[] = { "2K:1:16", "8K:1:32", "4K:2:64", "8K:8:32", "1K:full:32", "16K:4:16" };

	for (uint64_t seed = 1; seed <= 12; seed++) {
		struct lp_ref *refs = make_refs(N, seed + 100);
		for (int i = 0; i < 6; i++) {
			struct lp_memspy_result r;
			uint64_t len = 500 + 300 * seed;
			run(specs[i], len, len * (1 + seed % 10), (int)(seed & 1), seed, refs, N, &r);
			assert_true(r.samples > 0);
			check_exact_bookkeeping(&r);
			if (r.generations) {
				assert_true(r.wood_mu >= 0 && r.wood_mu <= 1);
				assert_true(r.wood_touched_mu >= 0 && r.wood_touched_mu <= 1);
				assert_true(r.m_wood >= r.m_mu0 - 1e-12 && r.m_wood <= r.m_mu1 + 1e-12);
			}
		}
		free(refs);
	}
}

static void test_sampling_ratio(void **state)
{
	enum { N = 100000 };
	struct lp_ref *refs = make_refs(N, 3);
	struct lp_memspy_result r;
	uint64_t accesses = 0;

	for (size_t i = 0; i < N; i++)
		accesses += refs[i].kind <= LP_REF_WRITE;
	run("4K:1:16", 1000, 10000, 0, 1, refs, N, &r);
	assert_int_equal(r.references, accesses);
	assert_int_equal(r.samples, (accesses + 9999) / 10000);
	assert_true(r.sampled_references <= r.samples * 1000);
	assert_true(r.sampled_references >= (r.samples - 1) * 1000);
	run("4K:1:16", 1000, 10000, 1, 7, refs, N, &r);
	assert_true(fabs((double)r.sampled_references / (double)r.references - 0.1) < 0.03);
	free(refs);
}

static void test_refusals(void **state)
{
	struct lp_memspy_params p = { .sample_length = 10, .sample_interval = 100 };
	struct lp_memspy *m;

	assert_int_equal(lp_cache_spec_parse(&p.cache, "4K:4:64:fifo"), 0);
	assert_int_equal(lp_memspy_new(&m, &p), LP_EINVAL);
	assert_non_null(strstr(lp_errmsg(), "sampling needs LRU replacement or a direct-mapped cache"));
	assert_int_equal(lp_cache_spec_parse(&p.cache, "4K:4:64"), 0);
	p.sample_interval = 5;
	assert_int_equal(lp_memspy_new(&m, &p), LP_EINVAL);
	assert_non_null(strstr(lp_errmsg(), "shorter than the sample length"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_sample_covering_the_trace_is_the_full_run),
		cmocka_unit_test(test_ratio_one_covers_everything),
		cmocka_unit_test(test_bounds_always_hold),
		cmocka_unit_test(test_sampling_ratio),
		cmocka_unit_test(test_refusals),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
