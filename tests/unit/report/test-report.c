/* The report module against hand-computed answers: the tables of a
 * profile (curves, named caches, hot pcs and data objects), the exact
 * curves and pc ranking of stack and reuse distances, and the host-cache
 * reader on a fake sysfs tree. */
#include "lp-test.h"

#include <locprof/report.h>
#include <locprof/sample.h>

#include <math.h>
#include <sys/stat.h>

/* ---- a profile with known answers ----------------------------------------
 * ROUNDS rounds in which stream A (pc 0xa00, heap block of site 0x400100)
 * sweeps 200 lines while stream B (pc 0xb00, a global, no block) toggles
 * between 2 lines, one access each in turn, every access sampled (rate 1).
 * A reuses a line after 399 references, 201 distinct lines (199 of A, 2 of
 * B); B after 3 references, 3 distinct lines. So an LRU cache of 64
 * lines (4K) misses every reuse of A and none of B, one of 512 lines (32K)
 * misses nothing. Cold misses are excluded: A's first round and B's first
 * two accesses, and the last round's samples dangle. */
enum { ROUNDS = 10, A_LINES = 200 };
#define A_BASE 0x100000u
#define B_BASE 0x900000u

/* second_pc: every fourth line of A is touched by pc 0xa10 (0: none) */
static struct lp_profile *streams(unsigned second_pc)
{
	struct lp_profile *p;
	struct lp_sampler *s;
	struct lp_ref alloc = { .addr = A_BASE, .pc = 0x400100, .size = A_LINES * 64, .kind = LP_EV_ALLOC };

	assert_int_equal(lp_profile_new(&p), 0);
	p->n_line_sizes = 1;
	p->line_sizes[0] = 64;
	p->rate = 1;
	p->seed = 7;
	assert_int_equal(lp_sampler_new(&s, p), 0);
	assert_int_equal(lp_sampler_feed(s, &alloc, 1), 0);
	for (int r = 0; r < ROUNDS; r++)
		for (int i = 0; i < A_LINES; i++) {
			struct lp_ref v[2] = {
				{ .addr = A_BASE + 64u * (unsigned)i, .pc = second_pc && i % 4 == 0 ? 0xa10 : 0xa00,
				  .size = 8 },
				{ .addr = B_BASE + 64u * (unsigned)(i % 2), .pc = 0xb00, .size = 8 },
			};
			assert_int_equal(lp_sampler_feed(s, v, 2), 0);
		}
	assert_int_equal(lp_sampler_finish(s), 0);
	lp_sampler_free(s);
	return p;
}

static struct lp_profile *two_streams(void)
{
	return streams(0);
}

/* A's reuses over all reuses: A reuses 200 lines in rounds 2..ROUNDS, B
 * all its accesses but the first two. */
static const double a_reuses = (double)A_LINES * (ROUNDS - 1);
static const double b_reuses = (double)A_LINES * ROUNDS - 2;

/* P(X >= k) for X ~ Binomial(n, p), summed term by term. */
static double binomial_ge(unsigned n, double p, unsigned k)
{
	double below = 0, term = pow(1 - p, n); /* P(X = 0) */

	for (unsigned i = 0; i < k; i++) {
		below += term;
		term *= (double)(n - i) / (double)(i + 1) * p / (1 - p);
	}
	return 1 - below;
}

static void test_profile_curves_and_caches(void **state)
{
	struct lp_profile *p = two_streams();
	const uint64_t sizes[] = { 4096, 8192, 32768 };
	struct lp_report_cache caches[2] = {
		{ .label = "4K:0:64", .size = 4096, .ways = 0, .line = 64 },
		{ .label = "32K:8:64", .size = 32768, .ways = 8, .line = 64 },
	};
	struct lp_report_params pa = { .sizes = sizes, .nsizes = 3, .caches = caches, .ncaches = 2,
				       .policies = LP_REPORT_LRU | LP_REPORT_RANDOM };
	struct lp_report *r;
	const struct lp_curve *cv;
	const struct lp_report_cache *ca;
	const struct lp_report_pc *pcs;
	const struct lp_report_window *w;
	double expect = a_reuses / (a_reuses + b_reuses);

	(void)state;
	assert_int_equal(lp_report_new(&r, p, &pa), 0);
	assert_int_equal(lp_report_info(r)->line, 64);
	assert_int_equal(lp_report_info(r)->accesses, 2 * A_LINES * ROUNDS);
	assert_int_equal(lp_report_info(r)->at, 4096); /* the first named cache */
	assert_int_equal(lp_report_curves(r, &cv), 2);
	assert_string_equal(cv[0].name, "statstack");
	assert_string_equal(cv[1].name, "statcache");
	assert_int_equal(cv[0].n, 3);
	assert_int_equal(cv[0].size[1], 8192);
	assert_true(fabs(cv[0].ratio[0] - expect) < 1e-9);
	assert_true(fabs(cv[0].ratio[1] - expect) < 1e-9); /* 128 lines < 201 */
	assert_true(fabs(cv[0].ratio[2]) < 1e-9);
	/* random replacement misses some of A's reuses at 64 lines, fewer at
	 * 512 lines, and B's hardly ever */
	assert_true(cv[1].ratio[0] > 0.3 * expect && cv[1].ratio[0] <= expect + 1e-9);
	assert_true(cv[1].ratio[2] < cv[1].ratio[0]);
	assert_int_equal(lp_report_caches(r, &ca), 2);
	assert_string_equal(ca[0].label, "4K:0:64");
	assert_true(fabs(ca[0].lru - cv[0].ratio[0]) < 1e-12);
	assert_true(fabs(ca[0].random - cv[1].ratio[0]) < 1e-12);
	/* 32K in 64 sets of 8 ways: A's 200 contiguous lines (and B's 2) put
	 * at most 5 lines in a set, so nothing misses; random placement (the
	 * binomial model) would miss A's reuse when 8 or more of its 201
	 * distinct lines fell into its set */
	assert_true(fabs(ca[1].lru) < 1e-9);
	assert_true(expect * binomial_ge(201, 1.0 / 64, 8) > 0.001);
	assert_true(fabs(ca[1].random - cv[1].ratio[2]) < 1e-12);
	assert_int_equal(lp_report_pcs(r, &pcs), 0); /* top 0: no hot spots */
	assert_int_equal(lp_report_windows(r, &w), 0);
	lp_report_free(r);

	/* one policy: one curve; the default cache of the hot spots is 32K */
	pa = (struct lp_report_params){ .sizes = sizes, .nsizes = 3, .policies = LP_REPORT_RANDOM,
					.windows = 1 };
	assert_int_equal(lp_report_new(&r, p, &pa), 0);
	assert_int_equal(lp_report_curves(r, &cv), 1);
	assert_string_equal(cv[0].name, "statcache");
	assert_int_equal(lp_report_info(r)->at, 32768);
	assert_true(lp_report_windows(r, &w) >= 1);
	assert_int_equal(w[0].start, 0);
	assert_true(lp_report_info(r)->window_length > 0);
	lp_report_free(r);

	/* a line index the profile lacks */
	pa.line_index = 1;
	assert_int_equal(lp_report_new(&r, p, &pa), LP_EINVAL);
	assert_null(r);
	lp_profile_free(p);
}

static void test_profile_hot_spots(void **state)
{
	struct lp_profile *p = two_streams();
	struct lp_report_params pa = { .policies = LP_REPORT_LRU, .at = 4096, .top = 5 };
	const struct lp_report_pc *pcs;
	const struct lp_report_object *obj;
	struct lp_report *r;

	(void)state;
	assert_int_equal(lp_report_new(&r, p, &pa), 0);
	assert_string_equal(lp_report_info(r)->hot_policy, "LRU");
	/* every miss is A's: B has no row, as a pc without misses */
	assert_int_equal(lp_report_pcs(r, &pcs), 1);
	assert_int_equal(pcs[0].pc, 0xa00);
	assert_true(fabs(pcs[0].misses - a_reuses) < 1e-6);
	assert_true(fabs(pcs[0].share - 1) < 1e-12);
	assert_null(pcs[0].name); /* no symbols */
	assert_int_equal(lp_report_objects(r, &obj), 1);
	assert_string_equal(obj[0].name, "heap@0x400100");
	assert_true(fabs(obj[0].misses - a_reuses) < 1e-6);
	assert_int_equal(lp_report_info(r)->heap_blocks, 1);
	lp_report_free(r);

	/* at one line, B misses too: both pcs, B first (more reuses); B's
	 * accesses fall outside any block */
	pa.at = 64;
	assert_int_equal(lp_report_new(&r, p, &pa), 0);
	assert_int_equal(lp_report_pcs(r, &pcs), 2);
	assert_int_equal(pcs[0].pc, 0xb00);
	assert_int_equal(pcs[1].pc, 0xa00);
	assert_true(fabs(pcs[0].misses - b_reuses) < 1e-6);
	assert_true(fabs(pcs[1].misses - a_reuses) < 1e-6);
	assert_true(fabs(pcs[0].share + pcs[1].share - 1) < 1e-9);
	assert_true(fabs(pcs[1].share - a_reuses / (a_reuses + b_reuses)) < 1e-9);
	assert_int_equal(lp_report_objects(r, &obj), 2);
	assert_string_equal(obj[0].name, "(other)"); /* B's reuses outnumber A's */
	assert_true(fabs(obj[0].misses - b_reuses) < 1e-6);
	assert_string_equal(obj[1].name, "heap@0x400100");
	lp_report_free(r);

	/* top 1 keeps one row of each */
	pa.top = 1;
	assert_int_equal(lp_report_new(&r, p, &pa), 0);
	assert_int_equal(lp_report_pcs(r, &pcs), 1);
	assert_int_equal(lp_report_objects(r, &obj), 1);
	lp_report_free(r);
	lp_profile_free(p);
}

/* Per thread: the one thread's references (exact), its samples (every
 * access, at rate 1) and its misses in each named cache: at 4K fully
 * associative, A's reuses, as the hot pcs say. */
static void test_profile_threads(void **state)
{
	struct lp_profile *p = two_streams();
	struct lp_report_cache caches[2] = { { .label = "4K:0:64", .size = 4096, .ways = 0, .line = 64 },
					     { .label = "32K:8:64", .size = 32768, .ways = 8, .line = 64 } };
	struct lp_report_params pa = { .policies = LP_REPORT_LRU, .caches = caches, .ncaches = 2, .threads = 1 };
	const struct lp_report_thread *t;
	const struct lp_report_cache *c;
	struct lp_report *r;

	(void)state;
	assert_int_equal(lp_report_new(&r, p, &pa), 0);
	assert_int_equal(lp_report_thread_caches(r, &c), 2);
	assert_string_equal(c[1].label, "32K:8:64");
	assert_int_equal(lp_report_threads(r, &t), 1);
	assert_int_equal(t[0].tid, 0);
	assert_int_equal(t[0].references, 2 * A_LINES * ROUNDS);
	assert_int_equal(t[0].samples, p->n_samples);
	assert_true(fabs(t[0].accesses - (double)p->n_samples) < 1e-9);
	assert_true(fabs(t[0].misses[0] - a_reuses) < 1e-6);
	/* 32K in 64 sets of 8 ways: A's 201 distinct lines are contiguous, at
	 * most 4 a set, so its reuses hit (the placement model, as the named
	 * cache's ratio; the binomial model would give
	 * a_reuses * binomial_ge(201, 1.0 / 64, 8)) */
	assert_true(t[0].misses[1] < 1e-6 * a_reuses);
	lp_report_free(r);

	/* without named caches: the hot spots' cache */
	pa.ncaches = 0;
	pa.at = 4096;
	assert_int_equal(lp_report_new(&r, p, &pa), 0);
	assert_int_equal(lp_report_thread_caches(r, &c), 1);
	assert_string_equal(c[0].label, "4K:full:64");
	assert_int_equal(lp_report_threads(r, &t), 1);
	assert_true(fabs(t[0].misses[0] - a_reuses) < 1e-6);
	lp_report_free(r);
	lp_profile_free(p);
}

/* A profile against itself: every difference 0; the hot spots are the
 * report's, a function without misses in either run left out. */
static void test_profile_diff(void **state)
{
	struct lp_profile *p = two_streams();
	uint64_t sizes[3] = { 4096, 8192, 32768 };
	struct lp_report_params pa = { .policies = LP_REPORT_LRU | LP_REPORT_RANDOM, .sizes = sizes, .nsizes = 3,
				       .at = 4096, .top = 100 };
	const struct lp_diff_curve *cv;
	const struct lp_diff_spot *sp;
	const struct lp_curve *rc;
	struct lp_report *a, *b;
	struct lp_report_diff *d;

	(void)state;
	assert_int_equal(lp_report_new(&a, p, &pa), 0);
	assert_int_equal(lp_report_new(&b, p, &pa), 0);
	assert_int_equal(lp_report_diff_new(&d, a, b), 0);
	assert_int_equal(lp_report_diff_curves(d, &cv), 2);
	assert_int_equal(lp_report_curves(a, &rc), 2);
	for (size_t k = 0; k < 2; k++) {
		assert_string_equal(cv[k].name, rc[k].name);
		assert_int_equal(cv[k].n, 3);
		for (size_t i = 0; i < 3; i++) {
			assert_int_equal(cv[k].points[i].size, sizes[i]);
			assert_true(cv[k].points[i].a == rc[k].ratio[i] && cv[k].points[i].b == rc[k].ratio[i]);
			assert_true(cv[k].points[i].delta == 0);
		}
	}
	assert_int_equal(lp_report_diff_spots(d, LP_DIFF_LINE, &sp), 0); /* no symbols */
	assert_int_equal(lp_report_diff_spots(d, LP_DIFF_FUNCTION, &sp), 1);
	assert_string_equal(sp[0].name, "0xa00");
	assert_true(fabs(sp[0].misses_a - a_reuses) < 1e-6 && sp[0].misses_b == sp[0].misses_a);
	assert_true(sp[0].delta == 0);
	assert_int_equal(lp_report_diff_spots(d, LP_DIFF_OBJECT, &sp), 1);
	assert_string_equal(sp[0].name, "heap@0x400100");
	lp_report_diff_free(d);
	lp_report_free(b);

	/* other sizes: refused */
	pa.nsizes = 2;
	assert_int_equal(lp_report_new(&b, p, &pa), 0);
	assert_int_equal(lp_report_diff_new(&d, a, b), LP_EINVAL);
	assert_null(d);
	lp_report_free(b);
	lp_report_free(a);
	lp_profile_free(p);
}

/* ---- the pcs of each data object ------------------------------------------
 * As two_streams(), but A's lines are swept by two pcs: 0xa10 touches every
 * fourth line, 0xa00 the others. At 4K every reuse of A misses: 0xa00 has
 * 3/4 of the heap block's misses, 0xa10 1/4. At one line B misses too, on
 * (other), and pc 0xb00 is the only pc of that object. */
static struct lp_profile *two_pcs_one_block(void)
{
	return streams(1);
}

static void test_profile_pairs(void **state)
{
	struct lp_profile *p = two_pcs_one_block();
	struct lp_report_params pa = { .policies = LP_REPORT_LRU, .at = 4096, .top = 5 };
	const struct lp_report_object *obj;
	const struct lp_report_pair *pr;
	struct lp_report *r;

	(void)state;
	assert_int_equal(lp_report_new(&r, p, &pa), 0);
	assert_int_equal(lp_report_objects(r, &obj), 1);
	assert_int_equal(lp_report_pairs(r, &pr), 2);
	assert_int_equal(pr[0].object, 0);
	assert_int_equal(pr[0].pc, 0xa00);
	assert_true(fabs(pr[0].misses - a_reuses * 3 / 4) < 1e-6);
	assert_true(fabs(pr[0].share - 0.75) < 1e-9);
	assert_int_equal(pr[1].object, 0);
	assert_int_equal(pr[1].pc, 0xa10);
	assert_true(fabs(pr[1].share - 0.25) < 1e-9);
	assert_null(pr[1].name); /* no symbols */
	lp_report_free(r);

	/* two objects, each with its pcs, in the objects' order; top 1 keeps
	 * one pc of each */
	pa.at = 64;
	pa.top = 1;
	assert_int_equal(lp_report_new(&r, p, &pa), 0);
	assert_int_equal(lp_report_objects(r, &obj), 1);
	assert_string_equal(obj[0].name, "(other)");
	assert_int_equal(lp_report_pairs(r, &pr), 1);
	assert_int_equal(pr[0].pc, 0xb00);
	assert_true(fabs(pr[0].share - 1) < 1e-9);
	lp_report_free(r);
	pa.top = 5;
	assert_int_equal(lp_report_new(&r, p, &pa), 0);
	assert_int_equal(lp_report_objects(r, &obj), 2);
	assert_int_equal(lp_report_pairs(r, &pr), 3);
	assert_int_equal(pr[0].object, 0);
	assert_int_equal(pr[0].pc, 0xb00);
	assert_true(fabs(pr[0].misses - obj[0].misses) < 1e-6);
	assert_int_equal(pr[1].object, 1);
	assert_int_equal(pr[2].object, 1);
	assert_true(fabs(pr[1].misses + pr[2].misses - obj[1].misses) < 1e-6);
	lp_report_free(r);
	lp_profile_free(p);
}

/* ---- exact distances -------------------------------------------------------
 * Three rounds of: pc 0x10 touches line i (0..3), pc 0x20 touches line 100.
 * Stack distances: 0x10's reuses 4 (three sweep lines and line 100), 0x20's
 * 1; reuse distances 7 and 1. */
static struct lp_exact *sweep_exact(enum lp_distance kind)
{
	struct lp_exact_config cfg = { .kind = kind, .per_pc = 1 };
	struct lp_exact *e;

	assert_int_equal(lp_exact_new(&e, &cfg), 0);
	for (int r = 0; r < 3; r++)
		for (unsigned i = 0; i < 4; i++) {
			struct lp_ref v[2] = { { .addr = 64 * i, .pc = 0x10, .size = 8 },
					       { .addr = 64 * 100, .pc = 0x20, .size = 8 } };
			assert_int_equal(lp_exact_feed(e, v, 2), 0);
		}
	return e;
}

static void test_dist_curve(void **state)
{
	struct lp_exact *e = sweep_exact(LP_DIST_STACK);
	const uint64_t extra[] = { 320, 64 };
	struct lp_dist_point *pt;
	size_t n;

	(void)state;
	/* footprint 5 lines: 64, 128, 256, 512 bytes, and 320 (5 lines) */
	assert_int_equal(lp_dist_curve(e, 0, LP_DIST_STACK, extra, 2, &pt, &n), 0);
	assert_int_equal(n, 5);
	const uint64_t xs[] = { 64, 128, 256, 320, 512 };
	/* misses: 5 cold always; 0x20's 5 reuses at sd 1 miss 1 line; 0x10's
	 * 8 reuses at sd 4 miss up to 4 lines */
	const double misses[] = { 24, 13, 13, 5, 5 };
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(pt[i].x, xs[i]);
		assert_int_equal(pt[i].threshold, xs[i] / 64);
		assert_true(pt[i].exact);
		assert_true(fabs(pt[i].misses - misses[i]) < 1e-9);
		assert_true(fabs(pt[i].misses_nocold - (misses[i] - 5)) < 1e-9);
		assert_true(fabs(pt[i].ratio - misses[i] / 24) < 1e-12);
		assert_true(fabs(pt[i].ratio_nocold - (misses[i] - 5) / 19) < 1e-12);
	}
	free(pt);
	lp_exact_free(e);

	/* reuse distances: 0, 1, 2, 4, 8 (past the largest, 7) */
	e = sweep_exact(LP_DIST_REUSE);
	assert_int_equal(lp_dist_curve(e, 0, LP_DIST_REUSE, NULL, 0, &pt, &n), 0);
	assert_int_equal(n, 5);
	const double ge[] = { 24, 24, 13, 13, 5 };
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(pt[i].x, i ? UINT64_C(1) << (i - 1) : 0);
		assert_int_equal(pt[i].threshold, pt[i].x);
		assert_true(fabs(pt[i].misses - ge[i]) < 1e-9);
	}
	free(pt);
	lp_exact_free(e);
}

static void test_dist_pcs(void **state)
{
	struct lp_exact *e = sweep_exact(LP_DIST_STACK);
	struct lp_dist_pc *r;
	size_t n;

	(void)state;
	assert_int_equal(lp_dist_rank_point(LP_DIST_STACK, NULL, 0), 32768);
	assert_int_equal(lp_dist_rank_point(LP_DIST_REUSE, NULL, 0), 1024);
	const uint64_t first[] = { 640, 64 };
	assert_int_equal(lp_dist_rank_point(LP_DIST_STACK, first, 2), 640);
	/* 2 lines: 0x10 misses all 12 (4 cold, 8 at sd 4), 0x20 its cold one */
	assert_int_equal(lp_dist_pcs(e, 0, LP_DIST_STACK, 128, &r, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(r[0].pc, 0x10);
	assert_int_equal(r[0].accesses, 12);
	assert_int_equal(r[0].cold, 4);
	assert_true(fabs(r[0].misses - 12) < 1e-9);
	assert_int_equal(r[1].pc, 0x20);
	assert_true(fabs(r[1].misses - 1) < 1e-9);
	uint64_t pc;
	assert_non_null(lp_exact_pc_hist(e, 0, r[1].index, &pc));
	assert_int_equal(pc, 0x20);
	free(r);
	/* 1 line: both miss every access; equal misses rank by pc */
	assert_int_equal(lp_dist_pcs(e, 0, LP_DIST_STACK, 64, &r, &n), 0);
	assert_int_equal(r[0].pc, 0x10);
	assert_true(fabs(r[1].misses - 12) < 1e-9);
	free(r);
	/* 8 lines: only cold misses; 0x10 has more */
	assert_int_equal(lp_dist_pcs(e, 0, LP_DIST_STACK, 512, &r, &n), 0);
	assert_int_equal(r[0].pc, 0x10);
	assert_true(fabs(r[0].misses - 4) < 1e-9);
	assert_true(fabs(r[1].misses - 1) < 1e-9);
	free(r);
	lp_exact_free(e);
}

/* ---- host caches ---------------------------------------------------------- */

static void put(const char *root, int index, const char *file, const char *text)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/devices/system/cpu/cpu0/cache/index%d", root, index);
	for (char *s = path + strlen(root) + 1; (s = strchr(s, '/')); s++) {
		*s = '\0';
		mkdir(path, 0755);
		*s = '/';
	}
	mkdir(path, 0755);
	snprintf(path + strlen(path), sizeof(path) - strlen(path), "/%s", file);
	lp_test_write_file(path, text, strlen(text));
}

static void put_cache(const char *root, int index, const char *level, const char *type, const char *size,
		      const char *ways, const char *line)
{
	put(root, index, "level", level);
	put(root, index, "type", type);
	if (size)
		put(root, index, "size", size);
	put(root, index, "ways_of_associativity", ways);
	put(root, index, "coherency_line_size", line);
}

static void test_host_caches(void **state)
{
	char *root = lp_test_path("sysfs");
	struct lp_host_cache c[8];
	size_t n;

	(void)state;
	assert_int_equal(mkdir(root, 0755), 0);
	/* no cache directory at all: none, and no error */
	assert_int_equal(lp_host_caches(root, c, 8, &n), 0);
	assert_int_equal(n, 0);
	put_cache(root, 0, "1\n", "Data\n", "48K\n", "12\n", "64\n");
	put_cache(root, 1, "1\n", "Instruction\n", "32K\n", "8\n", "64\n");
	put_cache(root, 2, "2\n", "Unified\n", "2048K\n", "16\n", "64\n");
	put_cache(root, 3, "2\n", "Unified\n", NULL, "16\n", "64\n"); /* no size: skipped */
	put_cache(root, 4, "3\n", "Unified\n", "32M\n", "0\n", "128\n");
	put_cache(root, 5, "4\n", "Unified\n", "12x\n", "8\n", "64\n"); /* bad size: skipped */
	/* index6 missing: index7 is not read */
	put_cache(root, 7, "4\n", "Unified\n", "64M\n", "8\n", "64\n");
	assert_int_equal(lp_host_caches(root, c, 8, &n), 0);
	assert_int_equal(n, 3);
	assert_int_equal(c[0].level, 1);
	assert_string_equal(c[0].type, "Data");
	assert_string_equal(c[0].name, "L1 48K");
	assert_int_equal(c[0].size, 48 * 1024);
	assert_int_equal(c[0].ways, 12);
	assert_int_equal(c[0].line, 64);
	assert_string_equal(c[1].name, "L2 2048K");
	assert_int_equal(c[1].size, 2048 * 1024);
	assert_int_equal(c[2].level, 3);
	assert_int_equal(c[2].size, 32u << 20);
	assert_int_equal(c[2].ways, 0); /* fully associative */
	assert_int_equal(c[2].line, 128);
	/* the capacity bounds the count */
	assert_int_equal(lp_host_caches(root, c, 1, &n), 0);
	assert_int_equal(n, 1);
	assert_string_equal(c[0].name, "L1 48K");

	/* the cache arguments of every command: SPEC, L1..L3 and host */
	struct lp_named_cache nc[8];
	assert_int_equal(lp_cache_arg_parse("32K:8:64", root, nc, 8, &n), 0);
	assert_int_equal(n, 1);
	assert_string_equal(nc[0].name, "32K:8:64");
	assert_int_equal(nc[0].spec.assoc, 8);
	assert_int_equal(lp_cache_arg_parse("L2", root, nc, 8, &n), 0);
	assert_int_equal(n, 1);
	assert_string_equal(nc[0].name, "L2 2048K");
	assert_int_equal(nc[0].spec.size, 2048 * 1024);
	assert_int_equal(nc[0].spec.assoc, 16);
	assert_string_equal(nc[0].spec.policy, "lru");
	assert_int_equal(lp_cache_arg_parse("L3", root, nc, 8, &n), 0);
	assert_int_equal(nc[0].spec.assoc, 0); /* fully associative */
	assert_int_equal(lp_cache_arg_parse("host", root, nc, 8, &n), 0);
	assert_int_equal(n, 3);
	assert_string_equal(nc[2].name, "L3 32M");
	assert_int_equal(lp_cache_arg_parse("host", root, nc, 2, &n), LP_ELIMIT);
	assert_int_equal(lp_cache_arg_parse("32K:3:64", root, nc, 8, &n), LP_EINVAL);
	assert_non_null(strstr(lp_errmsg(), "not a multiple of assoc x line"));
	assert_int_equal(lp_cache_arg_parse("32K:8", root, nc, 8, &n), LP_EINVAL);
	assert_non_null(strstr(lp_errmsg(), "is not SIZE:ASSOC:LINE[:POLICY]"));
	/* a level the machine lacks, and a machine without the directory */
	free(root);
	root = lp_test_path("sysfs-l1");
	assert_int_equal(mkdir(root, 0755), 0);
	put_cache(root, 0, "1\n", "Data\n", "48K\n", "12\n", "64\n");
	assert_int_equal(lp_cache_arg_parse("L3", root, nc, 8, &n), LP_EINVAL);
	assert_string_equal(lp_errmsg(), "this machine has no L3 data cache");
	free(root);
	root = lp_test_path("nosysfs");
	assert_int_equal(lp_cache_arg_parse("L1", root, nc, 8, &n), LP_EINVAL);
	assert_non_null(strstr(lp_errmsg(), "cannot read this machine's caches"));
	free(root);
}

/* A's reuses all have a stack distance of 201 lines (12 864 bytes): the
 * LRU curve drops from A's share to 0 there. A size 4.5% below that
 * cliff is flagged (the curve drops within 15% of it, a drop no resample
 * needs to show), its interval covering both sides; sizes far from it
 * are not. */
static void test_steep_curve_flagged(void **state)
{
	struct lp_profile *p = two_streams();
	const uint64_t sizes[] = { 4096, 192 * 64, 32768 };
	struct lp_report_params pa = { .sizes = sizes, .nsizes = 3, .policies = LP_REPORT_LRU, .resamples = 8,
				       .seed = 1 };
	struct lp_report *r, *m;
	const struct lp_curve *cv;
	double expect = a_reuses / (a_reuses + b_reuses);

	(void)state;
	assert_int_equal(lp_report_new(&r, p, &pa), 0);
	assert_int_equal(lp_report_curves(r, &cv), 1);
	assert_non_null(cv[0].iv);
	assert_true(fabs(cv[0].ratio[1] - expect) < 0.01);
	assert_true(cv[0].iv[1].cliff);
	assert_true(cv[0].iv[1].steep);
	assert_true(cv[0].iv[1].lo < 0.01 && cv[0].iv[1].hi > expect - 0.01);
	assert_true(cv[0].iv[1].below < 0.01 && cv[0].iv[1].above > expect - 0.01);
	assert_false(cv[0].iv[0].cliff);
	assert_false(cv[0].iv[2].cliff);
	/* the report of two ranks keeps the flag and the reason */
	struct lp_report *both[2] = { r, r };
	assert_int_equal(lp_report_merge(&m, both, 2, 0), 0);
	assert_int_equal(lp_report_curves(m, &cv), 1);
	assert_true(cv[0].iv[1].cliff && cv[0].iv[1].steep);
	assert_false(cv[0].iv[0].cliff);
	lp_report_free(m);
	lp_report_free(r);
	lp_profile_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_profile_curves_and_caches),
		cmocka_unit_test(test_steep_curve_flagged),
		cmocka_unit_test(test_profile_hot_spots),
		cmocka_unit_test(test_profile_pairs),
		cmocka_unit_test(test_profile_threads),
		cmocka_unit_test(test_profile_diff),
		cmocka_unit_test(test_dist_curve),
		cmocka_unit_test(test_dist_pcs),
		cmocka_unit_test(test_host_caches),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
