/* Tests of the exact module: every stack distance algorithm against a
 * brute-force reference, per access, on random, structured, edge-case and
 * adversarial inputs; reuse distances; histograms; the engine. */
#include "lp-test.h"

#include <locprof/exact.h>

#include "common/rng.h"
#include "exact/exact-internal.h"

static const char *const algos[] = { "fast", "naive", "markers", "bk", "avl", "prealloc" };
#define N_ALGOS (sizeof(algos) / sizeof(algos[0]))

/* ---- reference: brute force from the definitions ---------------------- */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Dense ids of lines, so that "distinct lines between" can use a stamp array. */
static uint32_t *dense_ids(const uint64_t *lines, size_t n, size_t *m)
{
	uint64_t *u = malloc((n + 1) * sizeof(*u));
	uint32_t *id = malloc((n + 1) * sizeof(*id));
	size_t k = 0;

	assert_non_null(u);
	assert_non_null(id);
	memcpy(u, lines, n * sizeof(*u));
	qsort(u, n, sizeof(*u), cmp_u64);
	for (size_t i = 0; i < n; i++)
		if (!k || u[k - 1] != u[i])
			u[k++] = u[i];
	for (size_t i = 0; i < n; i++) {
		uint64_t *p = bsearch(&lines[i], u, k, sizeof(*u), cmp_u64);
		id[i] = (uint32_t)(p - u);
	}
	free(u);
	*m = k;
	return id;
}

static void brute(const uint64_t *lines, size_t n, uint64_t *stack, uint64_t *reuse)
{
	size_t m;
	uint32_t *id = dense_ids(lines, n, &m);
	uint64_t *stamp = calloc(m + 1, sizeof(*stamp));

	assert_non_null(stamp);
	for (size_t i = 0; i < n; i++) {
		uint64_t distinct = 0;
		size_t j;
		int found = 0;

		for (j = i; j-- > 0;) {
			if (id[j] == id[i]) {
				found = 1;
				break;
			}
			if (stamp[id[j]] != i + 1) {
				stamp[id[j]] = i + 1;
				distinct++;
			}
		}
		stack[i] = found ? distinct : LP_DIST_COLD;
		reuse[i] = found ? i - j - 1 : LP_DIST_COLD;
	}
	free(stamp);
	free(id);
}

static uint64_t fast_min_slots; /* 0, or small to force compactions */
static const char *fast_isa;     /* NULL, or the variant of fast's loop to use */
static const char *const isas[] = { "generic", "popcnt", "avx2", "avx512" };
#define N_ISAS (sizeof(isas) / sizeof(isas[0]))

static void run_algo(const char *algo, enum lp_distance kind, const uint64_t *lines, size_t n,
		     uint64_t *dist)
{
	struct lp_exact_opts o = { .kind = kind, .algorithm = algo, .fast_min_slots = fast_min_slots,
				   .fast_isa = fast_isa };
	struct lp_distcalc *c;
	size_t done = 0;

	assert_int_equal(lp_distcalc_new(&c, &o), 0);
	/* uneven chunks, to exercise state carried across calls */
	for (size_t off = 0; off < n;) {
		size_t k = (off * 7 + 13) % 9000 + 1;

		if (k > n - off)
			k = n - off;
		assert_int_equal(lp_distcalc_run(c, lines + off, k, dist + off, &done), 0);
		assert_int_equal(done, k);
		off += k;
	}
	lp_distcalc_free(c);
}

static void check_all(const uint64_t *lines, size_t n, int with_naive_only_small)
{
	uint64_t *bs = malloc((n + 1) * sizeof(*bs)), *br = malloc((n + 1) * sizeof(*br));
	uint64_t *d = malloc((n + 1) * sizeof(*d));

	assert_non_null(bs);
	assert_non_null(br);
	assert_non_null(d);
	brute(lines, n, bs, br);
	for (size_t a = 0; a < N_ALGOS; a++) {
		run_algo(algos[a], LP_DIST_STACK, lines, n, d);
		for (size_t i = 0; i < n; i++) {
			if (d[i] != bs[i])
				fail_msg("%s: access %zu (line %#llx): got %llu, want %llu", algos[a], i,
					 (unsigned long long)lines[i], (unsigned long long)d[i],
					 (unsigned long long)bs[i]);
		}
	}
	/* fast again with the smallest time capacity: a compaction every few
	 * hundred accesses, with M crossing the capacity both ways; and with
	 * each variant of its inner loop this CPU can run */
	for (size_t v = 0; v < N_ISAS; v++) {
		if (!lp_exact_fast_isa(isas[v]))
			continue;
		fast_isa = isas[v];
		for (int small = 0; small < 2; small++) {
			fast_min_slots = small ? 512 : 0;
			run_algo("fast", LP_DIST_STACK, lines, n, d);
			for (size_t i = 0; i < n; i++)
				if (d[i] != bs[i])
					fail_msg("fast (%s, min slots %llu): access %zu: got %llu, want %llu",
						 isas[v], (unsigned long long)fast_min_slots, i,
						 (unsigned long long)d[i], (unsigned long long)bs[i]);
		}
	}
	fast_isa = NULL;
	fast_min_slots = 0;
	run_algo(NULL, LP_DIST_REUSE, lines, n, d);
	for (size_t i = 0; i < n; i++)
		if (d[i] != br[i])
			fail_msg("reuse: access %zu: got %llu, want %llu", i, (unsigned long long)d[i],
				 (unsigned long long)br[i]);
	free(bs);
	free(br);
	free(d);
	(void)with_naive_only_small;
}

/* ---- generators ------------------------------------------------------- */

enum pattern { UNIFORM, ZIPF, SEQUENTIAL, CYCLIC, STRIDED, MIXED, N_PATTERNS };

static double *zipf_cdf(size_t m, double s)
{
	double *cdf = malloc(m * sizeof(*cdf)), sum = 0;

	assert_non_null(cdf);
	for (size_t k = 0; k < m; k++)
		cdf[k] = (sum += 1.0 / pow((double)(k + 1), s));
	for (size_t k = 0; k < m; k++)
		cdf[k] /= sum;
	return cdf;
}

static uint64_t zipf_draw(struct lp_rng *r, const double *cdf, size_t m)
{
	double u = lp_rng_double(r);
	size_t lo = 0, hi = m - 1;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (cdf[mid] < u)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void generate(enum pattern p, struct lp_rng *r, uint64_t *lines, size_t n, size_t m)
{
	double *cdf = p == ZIPF || p == MIXED ? zipf_cdf(m, 1.0) : NULL;
	/* scatter line numbers so hash tables and trees see irregular keys */
	uint64_t base = lp_rng_next(r) >> 1;

	for (size_t i = 0; i < n; i++) {
		enum pattern q = p == MIXED ? (enum pattern)((i / 97) % 5) : p;
		uint64_t x;

		switch (q) {
		case UNIFORM: x = lp_rng_below(r, m); break;
		case ZIPF: x = zipf_draw(r, cdf, m); break;
		case SEQUENTIAL: x = i; break;
		case CYCLIC: x = i % m; break;
		default: x = (i * 17) % m * 4096; break;
		}
		lines[i] = q == SEQUENTIAL || q == CYCLIC ? base + x : x * 0x9e3779b97f4a7c15ULL;
	}
	free(cdf);
}

static void test_random_patterns(void **state)
{
	static const size_t ms[] = { 1, 7, 100, 1000 };
	struct lp_rng r;
	size_t n = 6000;
	uint64_t *lines = malloc(n * sizeof(*lines));

	lp_rng_seed(&r, 42);
	for (int p = 0; p < N_PATTERNS; p++)
		for (size_t k = 0; k < sizeof(ms) / sizeof(ms[0]); k++) {
			generate((enum pattern)p, &r, lines, n, ms[k]);
			check_all(lines, n, 0);
		}
	free(lines);
}

static void test_edge_cases(void **state)
{
	uint64_t one[1] = { 5 }, same[50], top[8] = { UINT64_MAX, 0, UINT64_MAX - 1, UINT64_MAX, 0,
						      UINT64_MAX - 1, 1, UINT64_MAX };

	check_all(one, 0, 0);
	check_all(one, 1, 0);
	for (int i = 0; i < 50; i++)
		same[i] = 0x1234;
	check_all(same, 50, 0);
	check_all(top, 8, 0);
}

static void test_cyclic_known_answer(void **state)
{
	enum { K = 300, N = 3000 };
	uint64_t lines[N], d[N];

	for (size_t i = 0; i < N; i++)
		lines[i] = i % K;
	for (size_t a = 0; a < N_ALGOS; a++) {
		run_algo(algos[a], LP_DIST_STACK, lines, N, d);
		for (size_t i = 0; i < N; i++)
			assert_int_equal(d[i], i < K ? LP_DIST_COLD : K - 1);
	}
	run_algo(NULL, LP_DIST_REUSE, lines, N, d);
	for (size_t i = 0; i < N; i++)
		assert_int_equal(d[i], i < K ? LP_DIST_COLD : K - 1);
}

/* Long traces only the O(log) algorithms can afford, checked against each
 * other (avl and bk share no code with fast): many compactions, hash table
 * growth, M crossing powers of two. */
static void test_fast_adversarial(void **state)
{
	size_t n = 2500000;
	uint64_t *lines = malloc(n * sizeof(*lines));
	uint64_t *d0 = malloc(n * sizeof(*d0)), *d1 = malloc(n * sizeof(*d1));
	struct lp_rng r;
	uint64_t fresh = 1;

	assert_true(lines && d0 && d1);
	lp_rng_seed(&r, 7);
	for (size_t i = 0; i < n; i++) {
		/* phases: a growing set (new lines at a falling rate, M passes
		 * 2^17, 2^18, 2^19), a hot set, and far reuses */
		uint64_t u = lp_rng_below(&r, 100);

		if (u < 25 && fresh < 600000)
			lines[i] = (fresh++) * 64;
		else if (u < 70)
			lines[i] = lp_rng_below(&r, 64) * 64;
		else
			lines[i] = (lp_rng_below(&r, fresh - 1) + 1) * 64;
	}
	run_algo("avl", LP_DIST_STACK, lines, n, d0);
	/* every variant of fast's loop; the many compactions of a small
	 * capacity with the best one only (compaction is shared code, and
	 * check_all runs every variant with a small capacity) */
	for (size_t v = 0; v < N_ISAS; v++) {
		if (!lp_exact_fast_isa(isas[v]))
			continue;
		fast_isa = isas[v];
		run_algo("fast", LP_DIST_STACK, lines, n, d1);
		assert_memory_equal(d0, d1, n * sizeof(*d0));
	}
	fast_isa = NULL;
	fast_min_slots = 4096;
	run_algo("fast", LP_DIST_STACK, lines, n, d1);
	fast_min_slots = 0;
	assert_memory_equal(d0, d1, n * sizeof(*d0));
	run_algo("bk", LP_DIST_STACK, lines, n, d1);
	assert_memory_equal(d0, d1, n * sizeof(*d0));
	run_algo("prealloc", LP_DIST_STACK, lines, n, d1);
	assert_memory_equal(d0, d1, n * sizeof(*d0));
	free(lines);
	free(d0);
	free(d1);
}

static void test_prealloc_limit(void **state)
{
	struct lp_exact_opts o = { .kind = LP_DIST_STACK, .algorithm = "prealloc", .prealloc_n = 100 };
	struct lp_distcalc *c;
	uint64_t lines[150], d[150];
	size_t done = 0;

	for (int i = 0; i < 150; i++)
		lines[i] = (uint64_t)i % 10;
	assert_int_equal(lp_distcalc_new(&c, &o), 0);
	assert_int_equal(lp_distcalc_run(c, lines, 150, d, &done), LP_ELIMIT);
	assert_int_equal(done, 100);
	assert_non_null(strstr(lp_errmsg(), "100"));
	assert_non_null(strstr(lp_errmsg(), "--prealloc-n"));
	assert_int_equal(d[99], 9);
	lp_distcalc_free(c);
}

/* fast's bucket table: lines chosen so that all of them hash to the last
 * bucket of the initial table (1024 buckets), so the chain overflows bucket
 * after bucket and wraps around to bucket 0; also the line UINT64_MAX,
 * kept beside the table. Checked against the brute force with every
 * variant of fast's loop, in batches small enough that the table keeps
 * its initial size. */
static void test_fast_bucket_chains(void **state)
{
	enum { K = 37, N = 3000 };
	struct lp_xbtab t;
	uint64_t keys[K], lines[N], bs[N], br[N], d[N];
	size_t k = 0;
	struct lp_rng r;

	assert_int_equal(lp_xbtab_init(&t, 1024), 0);
	for (uint64_t x = 1; k < K - 1; x++)
		if (lp_xbtab_bucket(&t, x) == 1023)
			keys[k++] = x;
	keys[k++] = UINT64_MAX;
	lp_xbtab_release(&t);
	lp_rng_seed(&r, 11);
	for (size_t i = 0; i < N; i++)
		lines[i] = i < 2 * K ? keys[i % K] : keys[lp_rng_below(&r, K)];
	brute(lines, N, bs, br);
	for (size_t v = 0; v < N_ISAS; v++) {
		struct lp_exact_opts o = { .kind = LP_DIST_STACK, .fast_isa = isas[v] };
		struct lp_distcalc *c;
		size_t done;

		if (!lp_exact_fast_isa(isas[v]))
			continue;
		assert_int_equal(lp_distcalc_new(&c, &o), 0);
		for (size_t off = 0; off < N; off += 100)
			assert_int_equal(lp_distcalc_run(c, lines + off, 100, d + off, &done), 0);
		lp_distcalc_free(c);
		for (size_t i = 0; i < N; i++)
			if (d[i] != bs[i])
				fail_msg("fast (%s): access %zu: got %llu, want %llu", isas[v], i,
					 (unsigned long long)d[i], (unsigned long long)bs[i]);
	}
}

static void test_fast_isa_names(void **state)
{
	struct lp_exact_opts o = { .kind = LP_DIST_STACK, .fast_isa = "sse9" };
	struct lp_distcalc *c;

	assert_string_equal(lp_exact_fast_isa("generic"), "generic");
	assert_non_null(lp_exact_fast_isa(NULL));
	assert_null(lp_exact_fast_isa("sse9"));
	assert_int_equal(lp_distcalc_new(&c, &o), LP_EINVAL);
	assert_non_null(strstr(lp_errmsg(), "sse9"));
}

static void test_unknown_algorithm(void **state)
{
	struct lp_exact_opts o = { .kind = LP_DIST_STACK, .algorithm = "nosuch" };
	struct lp_distcalc *c;

	assert_int_equal(lp_distcalc_new(&c, &o), LP_EINVAL);
	assert_null(c);
	assert_non_null(strstr(lp_errmsg(), "nosuch"));
	assert_true(lp_exact_algorithm_known("avl"));
	assert_false(lp_exact_algorithm_known("nosuch"));
}

/* ---- histograms ------------------------------------------------------- */

static void test_hist_bins(void **state)
{
	uint64_t lo, hi, prev_hi = 0;

	for (size_t b = 0; b < LP_HIST_NBINS; b++) {
		lp_hist_bin_range(b, &lo, &hi);
		if (b)
			assert_int_equal(lo, prev_hi + 1);
		assert_true(hi >= lo);
		assert_int_equal(lp_hist_bin_of(lo), b);
		assert_int_equal(lp_hist_bin_of(hi), b);
		prev_hi = hi;
	}
	assert_true(prev_hi == UINT64_MAX);
	for (uint64_t c = 0; c < 256; c++)
		assert_true(lp_hist_is_boundary(c));
	assert_true(lp_hist_is_boundary(384));
	assert_true(lp_hist_is_boundary(49152));
	assert_true(lp_hist_is_boundary(3 << 20));
	assert_false(lp_hist_is_boundary(257));
	assert_false(lp_hist_is_boundary(1000001));
}

static void test_hist_counts(void **state)
{
	struct lp_hist *h;
	struct lp_rng r;
	enum { N = 20000 };
	uint64_t *d = malloc(N * sizeof(*d));

	assert_int_equal(lp_hist_new(&h), 0);
	lp_rng_seed(&r, 3);
	for (size_t i = 0; i < N; i++) {
		d[i] = i % 50 == 0 ? LP_DIST_COLD : lp_rng_below(&r, 1 + lp_rng_below(&r, 5000000));
		assert_int_equal(lp_hist_add(h, d[i], 1), 0);
	}
	for (uint64_t c = 0; c < 6000000; c = c < 600 ? c + 1 : c + c / 7 + 1) {
		uint64_t want = 0, cold = 0;

		for (size_t i = 0; i < N; i++) {
			cold += d[i] == LP_DIST_COLD;
			want += d[i] != LP_DIST_COLD && d[i] >= c;
		}
		if (lp_hist_is_boundary(c)) {
			assert_true(lp_hist_count_ge(h, c) == (double)want);
			assert_true(lp_hist_misses(h, c) == (double)(want + cold));
		} else {
			/* interpolated: between the counts at the bin's ends */
			uint64_t lo, hi;
			double got = lp_hist_count_ge(h, c);

			lp_hist_bin_range(lp_hist_bin_of(c), &lo, &hi);
			assert_true(got <= lp_hist_count_ge(h, lo) + 1e-9);
			assert_true(got >= lp_hist_count_ge(h, hi + 1) - 1e-9);
		}
	}
	assert_int_equal(lp_hist_cold(h), N / 50);
	lp_hist_free(h);
	lp_hist_free(NULL);
	free(d);
}

/* ---- the engine ------------------------------------------------------- */

static void make_refs(struct lp_ref *refs, size_t n, uint64_t seed)
{
	struct lp_rng r;

	lp_rng_seed(&r, seed);
	for (size_t i = 0; i < n; i++) {
		memset(&refs[i], 0, sizeof(refs[i]));
		refs[i].addr = 0x10000 + lp_rng_below(&r, 1 << 16);
		refs[i].size = 1 + lp_rng_below(&r, 16) * (i % 11 == 0 ? 40 : 1);
		refs[i].kind = i % 13 == 0 ? LP_EV_ALLOC : (uint8_t)(i & 1);
		refs[i].pc = 0x400000 + lp_rng_below(&r, 300) * 4; /* > 64: the pc map rehashes */
	}
	refs[n - 1].addr = UINT64_MAX - 3; /* straddles the top */
	refs[n - 1].size = 64;
	refs[n - 1].kind = LP_REF_READ;
}

static void hist_equal(const struct lp_hist *a, const struct lp_hist *b)
{
	assert_int_equal(lp_hist_cold(a), lp_hist_cold(b));
	assert_int_equal(lp_hist_finite(a), lp_hist_finite(b));
	assert_int_equal(lp_hist_nbins(a), lp_hist_nbins(b));
	for (size_t k = 0; k < lp_hist_nbins(a); k++)
		assert_int_equal(lp_hist_bin_count(a, k), lp_hist_bin_count(b, k));
}

static void test_engine_multi_line_sizes(void **state)
{
	static const uint64_t sizes[] = { 1, 64, 256, 4096 };
	enum { N = 20000 };
	struct lp_ref *refs = malloc(N * sizeof(*refs));
	struct lp_exact *all, *one;

	make_refs(refs, N, 11);
	for (int kind = 0; kind < 2; kind++) {
		struct lp_exact_config cfg = { .kind = (enum lp_distance)kind, .line_sizes = sizes,
					       .n_line_sizes = 4, .per_pc = 1 };

		assert_int_equal(lp_exact_new(&all, &cfg), 0);
		for (size_t off = 0; off < N; off += 1000)
			assert_int_equal(lp_exact_feed(all, refs + off, 1000), 0);
		for (size_t i = 0; i < 4; i++) {
			struct lp_exact_config c1 = { .kind = (enum lp_distance)kind, .line_sizes = &sizes[i],
						      .n_line_sizes = 1, .algorithm = "avl" };
			struct lp_hist *sum;

			assert_int_equal(lp_exact_new(&one, &c1), 0);
			assert_int_equal(lp_exact_feed(one, refs, N), 0);
			hist_equal(lp_exact_hist(all, i), lp_exact_hist(one, 0));
			assert_int_equal(lp_exact_line_accesses(all, i), lp_exact_line_accesses(one, 0));
			/* per-pc histograms add up to the whole */
			assert_int_equal(lp_hist_new(&sum), 0);
			for (size_t k = 0; k < lp_exact_pc_count(all, i); k++)
				assert_int_equal(lp_hist_merge(sum, lp_exact_pc_hist(all, i, k, NULL)), 0);
			hist_equal(sum, lp_exact_hist(all, i));
			lp_hist_free(sum);
			lp_exact_free(one);
		}
		assert_int_equal(lp_exact_references(all), N - (N + 12) / 13);
		lp_exact_free(all);
	}
	free(refs);
}

static void test_engine_straddle(void **state)
{
	/* 8 bytes at 60 with 64-byte lines touch lines 0 and 1; then line 0
	 * again has stack distance 1 (line 1 between), reuse distance 1. */
	struct lp_ref refs[3] = {
		{ .addr = 60, .size = 8, .kind = LP_REF_READ },
		{ .addr = 0, .size = 1, .kind = LP_REF_WRITE },
		{ .addr = UINT64_MAX - 1, .size = 100, .kind = LP_REF_READ },
	};
	static const uint64_t line = 64, one = 1;
	struct lp_exact_config cfg = { .line_sizes = &line, .n_line_sizes = 1 };
	struct lp_exact *e;

	assert_int_equal(lp_exact_new(&e, &cfg), 0);
	assert_int_equal(lp_exact_feed(e, refs, 3), 0);
	assert_int_equal(lp_exact_line_accesses(e, 0), 4);
	assert_int_equal(lp_exact_distinct_lines(e, 0), 3);
	assert_int_equal(lp_hist_bin_count(lp_exact_hist(e, 0), 1), 1);
	lp_exact_free(e);
	/* line size 1: the top access touches UINT64_MAX-1 and UINT64_MAX */
	cfg.line_sizes = &one;
	assert_int_equal(lp_exact_new(&e, &cfg), 0);
	assert_int_equal(lp_exact_feed(e, refs, 3), 0);
	assert_int_equal(lp_exact_line_accesses(e, 0), 8 + 1 + 2);
	lp_exact_free(e);
	cfg.line_sizes = (const uint64_t[]){ 48 };
	assert_int_equal(lp_exact_new(&e, &cfg), LP_EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_random_patterns),
		cmocka_unit_test(test_edge_cases),
		cmocka_unit_test(test_cyclic_known_answer),
		cmocka_unit_test(test_fast_adversarial),
		cmocka_unit_test(test_prealloc_limit),
		cmocka_unit_test(test_unknown_algorithm),
		cmocka_unit_test(test_fast_bucket_chains),
		cmocka_unit_test(test_fast_isa_names),
		cmocka_unit_test(test_hist_bins),
		cmocka_unit_test(test_hist_counts),
		cmocka_unit_test(test_engine_multi_line_sizes),
		cmocka_unit_test(test_engine_straddle),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
