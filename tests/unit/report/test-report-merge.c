/* lp_report_merge, the report of several profiles (the ranks of an MPI
 * job), against the sums computed here from each rank's own report: line
 * accesses and references summed, each ratio the ranks' weighted by their
 * line accesses, hot pcs, objects, source lines and threads summed by key;
 * and the refusals. */
#include "lp-test.h"

#include <locprof/report.h>
#include <locprof/sample.h>

#include <math.h>

/* ROUNDS rounds over `lines` lines of a heap block (pc 0xa00, site
 * 0x400100) and 2 lines of a global (pc 0xb00), one access each in turn,
 * every access sampled; thread tid. A rank with 200 lines misses 4K (64
 * lines) on every reuse of the block; one with 20 lines never does. */
static struct lp_profile *rank_profile(unsigned lines, unsigned rounds, uint32_t tid, uint32_t line)
{
	struct lp_profile *p;
	struct lp_sampler *s;
	struct lp_ref alloc = { .addr = 0x100000, .pc = 0x400100, .size = lines * 64u, .kind = LP_EV_ALLOC };

	assert_int_equal(lp_profile_new(&p), 0);
	p->n_line_sizes = 1;
	p->line_sizes[0] = line;
	p->rate = 1;
	p->seed = 7;
	assert_int_equal(lp_sampler_new(&s, p), 0);
	assert_int_equal(lp_sampler_feed(s, &alloc, 1), 0);
	for (unsigned r = 0; r < rounds; r++)
		for (unsigned i = 0; i < lines; i++) {
			struct lp_ref v[2] = {
				{ .addr = 0x100000 + 64u * i, .pc = 0xa00, .size = 8, .tid = tid },
				{ .addr = 0x900000 + 64u * (i % 2), .pc = 0xb00, .size = 8, .tid = tid },
			};
			assert_int_equal(lp_sampler_feed(s, v, 2), 0);
		}
	assert_int_equal(lp_sampler_finish(s), 0);
	lp_sampler_free(s);
	return p;
}

static const uint64_t sizes[] = { 2048, 4096, 32768 };
static struct lp_report_cache caches[] = { { .label = "4K:4:64", .size = 4096, .ways = 4, .line = 64 } };

static struct lp_report *report(const struct lp_profile *p)
{
	struct lp_report_params pa = { .sizes = sizes, .nsizes = 3, .caches = caches, .ncaches = 1,
				       .policies = LP_REPORT_LRU | LP_REPORT_RANDOM, .top = 10, .threads = 1,
				       .resamples = 4, .seed = 1 };
	struct lp_report *r;

	assert_int_equal(lp_report_new(&r, p, &pa), 0);
	return r;
}

static const struct lp_report_pc *find_pc(const struct lp_report *r, uint64_t pc)
{
	const struct lp_report_pc *v;
	size_t n = lp_report_pcs(r, &v);

	for (size_t i = 0; i < n; i++)
		if (v[i].pc == pc)
			return &v[i];
	return NULL;
}

static void test_merge_two_ranks(void **state)
{
	struct lp_profile *p[2] = { rank_profile(200, 10, 0, 64), rank_profile(20, 40, 1, 64) };
	struct lp_report *r[2] = { report(p[0]), report(p[1]) }, *m;
	const struct lp_report_info *in[2] = { lp_report_info(r[0]), lp_report_info(r[1]) }, *mi;
	double acc[2] = { (double)in[0]->accesses, (double)in[1]->accesses };
	const struct lp_curve *cv[3];
	const struct lp_report_cache *ca[3];
	const struct lp_report_thread *th;
	const struct lp_report_object *obj;
	double am, mm, a0, m0, a1, m1;

	(void)state;
	assert_int_equal(lp_report_merge(&m, r, 2, 10), 0);
	mi = lp_report_info(m);
	assert_int_equal(mi->accesses, in[0]->accesses + in[1]->accesses);
	assert_int_equal(mi->references, in[0]->references + in[1]->references);
	assert_int_equal(mi->samples, in[0]->samples + in[1]->samples);
	assert_int_equal(mi->heap_blocks, 2);
	lp_report_curves(r[0], &cv[0]);
	lp_report_curves(r[1], &cv[1]);
	assert_int_equal(lp_report_curves(m, &cv[2]), 2);
	for (int k = 0; k < 2; k++)
		for (size_t i = 0; i < 3; i++) {
			double want = (cv[0][k].ratio[i] * acc[0] + cv[1][k].ratio[i] * acc[1]) / (acc[0] + acc[1]);
			double lo = (cv[0][k].iv[i].lo * acc[0] + cv[1][k].iv[i].lo * acc[1]) / (acc[0] + acc[1]);
			assert_int_equal(cv[2][k].size[i], sizes[i]);
			assert_true(fabs(cv[2][k].ratio[i] - want) < 1e-12);
			assert_true(fabs(cv[2][k].iv[i].lo - lo) < 1e-12);
		}
	/* at 4K LRU: rank 0 misses its block's reuses, rank 1 nothing */
	assert_true(cv[0][0].ratio[1] > 0.4 && cv[1][0].ratio[1] < 1e-9);
	lp_report_caches(r[0], &ca[0]);
	lp_report_caches(r[1], &ca[1]);
	assert_int_equal(lp_report_caches(m, &ca[2]), 1);
	assert_string_equal(ca[2][0].label, "4K:4:64");
	assert_true(fabs(ca[2][0].lru - (ca[0][0].lru * acc[0] + ca[1][0].lru * acc[1]) / (acc[0] + acc[1])) < 1e-12);
	/* the hot pc: rank 0's misses alone (rank 1 has none), its share of
	 * the job's misses */
	assert_non_null(find_pc(m, 0xa00));
	assert_true(fabs(find_pc(m, 0xa00)->misses - find_pc(r[0], 0xa00)->misses) < 1e-6);
	assert_true(fabs(find_pc(m, 0xa00)->share - 1.0) < 1e-9);
	assert_int_equal(lp_report_objects(m, &obj), 1);
	assert_true(fabs(obj[0].misses - find_pc(r[0], 0xa00)->misses) < 1e-6);
	/* threads by number: rank 0's thread 0, rank 1's thread 1 */
	assert_int_equal(lp_report_threads(m, &th), 2);
	assert_int_equal(th[0].tid, 0);
	assert_int_equal(th[1].tid, 1);
	assert_int_equal(th[0].references, in[0]->references);
	assert_int_equal(th[1].references, in[1]->references);
	/* source lines and functions: the totals summed */
	lp_hotspots_totals(lp_report_hotspots(r[0]), &a0, &m0);
	lp_hotspots_totals(lp_report_hotspots(r[1]), &a1, &m1);
	lp_hotspots_totals(lp_report_hotspots(m), &am, &mm);
	assert_true(fabs(am - a0 - a1) < 1e-6 && fabs(mm - m0 - m1) < 1e-6);
	lp_report_free(m);
	for (int i = 0; i < 2; i++) {
		lp_report_free(r[i]);
		lp_profile_free(p[i]);
	}
}

/* A rank with itself: the same ratios, every count and miss twice. */
static void test_merge_same_twice(void **state)
{
	struct lp_profile *p = rank_profile(200, 10, 0, 64);
	struct lp_report *r = report(p), *parts[2] = { r, r }, *m;
	const struct lp_curve *a, *b;
	const struct lp_report_thread *ta, *tb;
	const struct lp_source_function *fa, *fb;
	size_t nfa, nfb;

	(void)state;
	assert_int_equal(lp_report_merge(&m, parts, 2, 10), 0);
	lp_report_curves(r, &a);
	lp_report_curves(m, &b);
	for (int k = 0; k < 2; k++)
		for (size_t i = 0; i < 3; i++)
			assert_true(fabs(a[k].ratio[i] - b[k].ratio[i]) < 1e-12);
	assert_true(fabs(find_pc(m, 0xa00)->misses - 2 * find_pc(r, 0xa00)->misses) < 1e-6);
	assert_true(fabs(find_pc(m, 0xa00)->share - find_pc(r, 0xa00)->share) < 1e-9);
	lp_report_threads(r, &ta);
	assert_int_equal(lp_report_threads(m, &tb), 1);
	assert_int_equal(tb[0].references, 2 * ta[0].references);
	assert_true(fabs(tb[0].misses[0] - 2 * ta[0].misses[0]) < 1e-6);
	nfa = lp_hotspots_functions(lp_report_hotspots(r), &fa);
	nfb = lp_hotspots_functions(lp_report_hotspots(m), &fb);
	assert_int_equal(nfa, nfb);
	for (size_t i = 0; i < nfa; i++) {
		assert_string_equal(fa[i].label, fb[i].label);
		assert_true(fabs(fb[i].misses - 2 * fa[i].misses) < 1e-6);
		assert_true(fabs(fb[i].share - fa[i].share) < 1e-9);
	}
	lp_report_free(m);
	lp_report_free(r);
	lp_profile_free(p);
}

static void test_merge_refused(void **state)
{
	struct lp_profile *p64 = rank_profile(20, 4, 0, 64), *p128 = rank_profile(20, 4, 0, 128);
	struct lp_report *r[2] = { report(p64), report(p128) }, *m = (struct lp_report *)1;

	(void)state;
	assert_int_equal(lp_report_merge(&m, r, 2, 10), LP_EINVAL);
	assert_null(m);
	assert_int_equal(lp_report_merge(&m, r, 0, 10), LP_EINVAL);
	assert_null(m);
	lp_report_free(r[0]);
	lp_report_free(r[1]);
	lp_profile_free(p64);
	lp_profile_free(p128);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_merge_two_ranks),
		cmocka_unit_test(test_merge_same_twice),
		cmocka_unit_test(test_merge_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
