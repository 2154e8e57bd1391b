/* The one-pass working-set graph equals separate simulations, exactly. */
#include "lp-test.h"

#include <locprof/sim.h>

#include "common/rng.h"

static void compare(const uint64_t *sizes, size_t k, uint64_t line, const struct lp_ref *refs,
		    size_t n, uint64_t seed)
{
	struct lp_graph *g;
	static const char *pols[] = { "lru", "fifo", "random" };

	assert_int_equal(lp_graph_new(&g, sizes, k, line, LP_GRAPH_LRU | LP_GRAPH_FIFO | LP_GRAPH_RANDOM, seed), 0);
	/* in two pieces, to cross a call boundary */
	assert_int_equal(lp_graph_refs(g, refs, n / 3), 0);
	assert_int_equal(lp_graph_refs(g, refs + n / 3, n - n / 3), 0);
	assert_int_equal(lp_graph_sizes(g), k);
	uint64_t prev = 0;
	for (size_t i = 0; i < k; i++) {
		struct lp_graph_point pt;
		lp_graph_point(g, i, &pt);
		assert_true(pt.size > prev);
		prev = pt.size;
		for (int p = 0; p < 3; p++) {
			struct lp_cache_spec spec = { .size = pt.size, .assoc = 0, .line = line };
			struct lp_sim *s;
			struct lp_level_stats st;
			uint64_t got = p == 0 ? pt.lru_misses : p == 1 ? pt.fifo_misses : pt.random_misses;
			uint64_t got_ref = p == 0 ? pt.lru_ref_misses : p == 1 ? pt.fifo_ref_misses : pt.random_ref_misses;

			strcpy(spec.policy, pols[p]);
			assert_int_equal(lp_sim_new(&s, &spec, 1, seed, 0), 0);
			assert_int_equal(lp_sim_refs(s, refs, n), 0);
			lp_sim_level_stats(s, 0, &st);
			assert_int_equal(st.accesses, pt.accesses);
			if (st.misses != got)
				fail_msg("size %llu %s: graph %llu misses, separate run %llu",
					 (unsigned long long)pt.size, pols[p], (unsigned long long)got,
					 (unsigned long long)st.misses);
			/* per reference: the same as the hierarchy's count */
			assert_int_equal(pt.ref_accesses, lp_sim_ref_accesses(s));
			if (st.ref_misses != got_ref)
				fail_msg("size %llu %s: graph %llu misses per reference, separate run %llu",
					 (unsigned long long)pt.size, pols[p], (unsigned long long)got_ref,
					 (unsigned long long)st.ref_misses);
			lp_sim_free(s);
		}
		assert_true(pt.cold <= pt.lru_misses);
	}
	lp_graph_free(g);
}

static struct lp_ref *make_refs(size_t n, uint64_t span, uint64_t seed)
{
	struct lp_ref *r = calloc(n, sizeof(*r));
	struct lp_rng rng;
	uint64_t sweep = 0;

	lp_rng_seed(&rng, seed);
	for (size_t i = 0; i < n; i++) {
		uint64_t k = lp_rng_below(&rng, 8);
		r[i].kind = (uint8_t)(k & 1);
		r[i].size = 1 + lp_rng_below(&rng, 8);
		if (k < 3)
			r[i].addr = lp_rng_below(&rng, span / 16);
		else if (k < 6)
			r[i].addr = (sweep += 24) % span;
		else
			r[i].addr = lp_rng_below(&rng, span);
		r[i].addr += 0x400000;
	}
	return r;
}

static void test_graph_equals_separate_runs(void **state)
{
	uint64_t pow2[] = { 1024, 2048, 4096, 8192, 16384, 32768, 65536 };
	uint64_t odd[] = { 192 * 64, 64, 3 * 1024, 5000 * 16 / 16 * 16, 100 * 64 };
	struct lp_ref *refs;

	refs = make_refs(40000, 96 * 1024, 3);
	compare(pow2, 7, 64, refs, 40000, 11);
	compare(odd, 5, 16, refs, 40000, 12);
	free(refs);
	refs = make_refs(20000, 8 * 1024, 4);
	compare(pow2, 4, 1, refs, 20000, 13);
	uint64_t one[] = { 4096 };
	compare(one, 1, 4096, refs, 20000, 14);
	free(refs);
}

static void test_graph_refuses(void **state)
{
	struct lp_graph *g;
	uint64_t bad[] = { 4096, 100 }, dup[] = { 4096, 4096 };

	assert_int_equal(lp_graph_new(&g, bad, 2, 64, LP_GRAPH_LRU, 0), LP_EINVAL);
	assert_non_null(strstr(lp_errmsg(), "cache size 100 is not a positive multiple of the line size 64"));
	assert_int_equal(lp_graph_new(&g, dup, 2, 64, LP_GRAPH_LRU, 0), LP_EINVAL);
	assert_non_null(strstr(lp_errmsg(), "given twice"));
	assert_int_equal(lp_graph_new(&g, dup, 1, 48, LP_GRAPH_LRU, 0), LP_EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_graph_equals_separate_runs),
		cmocka_unit_test(test_graph_refuses),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
