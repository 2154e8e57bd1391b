/* Known answers for how far from a size report looks for a cliff of its
 * curves (report-slack.c): a run whose long reuses are few, so that their
 * stack distance is known to 10-15 % only, and a cache just larger than
 * the run's footprint. */
#include "lp-test.h"

#include <locprof/report.h>
#include <locprof/sample.h>

#include <math.h>
#include <stdio.h>

#define LINES 1000 /* the footprint: every pass reads all of them */
#define PASSES 6
#define TOUCHES 15 /* accesses to a line in a row, in each pass */

/* PASSES sweeps over LINES lines, each line read TOUCHES times in a row:
 * the only reuses that leave a line are the sweeps', whose stack distance
 * is LINES - 1 exactly, one line access in TOUCHES. Sampled with seed
 * `seed` at a rate that leaves about 1 000 samples (about 60 of the long
 * reuses), as a kernel recorded at 1e-3. */
static struct lp_profile *sweeps(uint64_t seed)
{
	struct lp_profile *p;
	struct lp_sampler *s;
	struct lp_ref ref = { .size = 8 };

	assert_int_equal(lp_profile_new(&p), 0);
	p->n_line_sizes = 1;
	p->line_sizes[0] = 64;
	p->rate = 1000.0 / (PASSES * LINES * TOUCHES);
	p->seed = seed;
	assert_int_equal(lp_sampler_new(&s, p), 0);
	for (int pass = 0; pass < PASSES; pass++)
		for (uint64_t line = 0; line < LINES; line++)
			for (int k = 0; k < TOUCHES; k++) {
				ref.addr = 0x100000 + 64 * line + 8 * (k % 8);
				assert_int_equal(lp_sampler_feed(s, &ref, 1), 0);
			}
	assert_int_equal(lp_sampler_finish(s), 0);
	lp_sampler_free(s);
	return p;
}

/* At 1 024 lines (64K), 2.4 % above the footprint, every reuse hits: the
 * exact ratio is 0. A seed whose estimate of the sweeps' distance is more
 * than 2.4 % high puts all of them above 64K (5.6 %, the long reuses'
 * share): that estimate must say that a cliff lies within its error and
 * its interval reach 0. At 900 lines all of them miss: an estimate of 0
 * must be flagged and reach the share (within 1.5 points: a seed whose
 * distances are low has a low share too). At 4K the cliff is far, and no
 * seed flags it. 26 of the 80 estimates are on the wrong side; with the
 * slack fixed at 15 % (report before it read the slack from the sampling
 * error) 4 of them were not flagged: seed 1 at 64K, 0.0689 [0.0534,
 * 0.0862]. */
static void test_cliff_beyond_fixed_slack(void **state)
{
	const uint64_t sizes[] = { 4096, 900 * 64, 1024 * 64 };
	const double share = (double)(PASSES - 1) * LINES / ((double)PASSES * LINES * TOUCHES - LINES);
	int high = 0, missed = 0, far_flagged = 0;

	(void)state;
	for (uint64_t seed = 1; seed <= 40; seed++) {
		struct lp_profile *p = sweeps(seed);
		struct lp_report_params pa = { .sizes = sizes, .nsizes = 3, .policies = LP_REPORT_LRU,
					       .resamples = LP_INTERVAL_RESAMPLES, .seed = 1 };
		struct lp_report *r;
		const struct lp_curve *cv;

		assert_int_equal(lp_report_new(&r, p, &pa), 0);
		assert_int_equal(lp_report_curves(r, &cv), 1);
		const struct lp_interval *iv = cv[0].iv;
		if (cv[0].ratio[2] > 0.02) {
			high++;
			if (!(iv[2].lo <= 0.005 && iv[2].cliff)) {
				missed++;
				print_message("seed %d: 64K %.4f [%.4f, %.4f]%s\n", (int)seed, cv[0].ratio[2], iv[2].lo,
					      iv[2].hi, iv[2].cliff ? " cliff" : "");
			}
		}
		/* at 900 lines, below the footprint: the interval reaches the
		 * long reuses' share */
		if (cv[0].ratio[1] < share - 0.02) {
			high++;
			if (!(iv[1].hi >= share - 0.015 && iv[1].cliff)) {
				missed++;
				print_message("seed %d: 900 lines %.4f [%.4f, %.4f]\n", (int)seed, cv[0].ratio[1],
					      iv[1].lo, iv[1].hi);
			}
		}
		far_flagged += iv[0].cliff;
		lp_report_free(r);
		lp_profile_free(p);
	}
	print_message("%d estimates of 80 on the wrong side of the cliff; %d of them not flagged\n", high, missed);
	assert_true(high >= 5); /* the case is there to be caught */
	assert_int_equal(missed, 0);
	assert_int_equal(far_flagged, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cliff_beyond_fixed_slack),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
