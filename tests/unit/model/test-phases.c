/* Phase-guided profiles: the online classifier (common/phase-core.h)
 * against a slow recomputation of its choice, the phase split and the
 * phase-weighted model (model-timeline.c, report-timeline.c) against a
 * model built by hand from each phase's samples, a known answer that
 * unweighted pooling gets wrong, and the PHAS chunk's round trip. */
#include "lp-test.h"

#include <locprof/model.h>
#include <locprof/report.h>

#include "common/phase-core.h"
#include "common/rng.h"

#include <math.h>

/* An interval's signature: `ticks` pcs drawn from base + 4 * [0, npcs),
 * the first pc twice as likely as the others when skew. */
static void draw_sig(struct lp_phase_sig *s, struct lp_rng *rng, uint64_t base, unsigned npcs, int skew,
		     unsigned ticks)
{
	memset(s, 0, sizeof(*s));
	for (unsigned i = 0; i < ticks; i++) {
		unsigned k = (unsigned)lp_rng_below(rng, npcs + (skew ? 1 : 0));
		lp_phase_sig_add(s, base + 4 * (k >= npcs ? 0 : k));
	}
}

/* The slow reference: every distance recomputed in double from the
 * table before the call; the classifier must pick the nearest phase, and
 * start a new one exactly when none is within the threshold (room
 * left). */
static uint32_t checked_classify(struct lp_phase_table *t, const struct lp_phase_sig *s, double thr)
{
	double best = INFINITY;
	uint32_t arg = 0, n0 = t->n, got;

	for (uint32_t p = 0; p < t->n; p++) {
		double d = 0;
		for (int b = 0; b < LP_PHASE_BUCKETS; b++)
			d += fabs((double)s->count[b] / s->total - (double)t->centroid[p][b]);
		if (d < best) {
			best = d;
			arg = p;
		}
	}
	got = lp_phase_classify(t, s, thr);
	if (n0 == 0 || (best > thr && n0 < LP_PHASE_TABLE_MAX)) {
		assert_int_equal(got, n0);
		assert_int_equal(t->n, n0 + 1);
	} else {
		assert_int_equal(got, arg);
		assert_int_equal(t->n, n0);
	}
	return got;
}

static void test_classifier_known(void **state)
{
	struct lp_phase_table *t = calloc(1, sizeof(*t));
	struct lp_phase_sig s;
	struct lp_rng rng;
	uint32_t a = 0, b = 0;

	(void)state;
	lp_rng_seed(&rng, 7);
	/* two kernels of 6 pcs each, alternating in runs of 5 intervals */
	for (int rep = 0; rep < 10; rep++)
		for (int i = 0; i < 10; i++) {
			int second = i >= 5;
			draw_sig(&s, &rng, second ? 0x402000 : 0x401000, 6, 0, LP_PHASE_TICKS);
			uint32_t p = checked_classify(t, &s, LP_PHASE_THRESHOLD);
			if (rep == 0 && i == 0)
				a = p;
			if (rep == 0 && i == 5)
				b = p;
			assert_int_equal(p, second ? b : a);
		}
	assert_int_not_equal(a, b);
	assert_int_equal(t->n, 2);
	/* a third mix of code is a third phase */
	draw_sig(&s, &rng, 0x403000, 6, 0, LP_PHASE_TICKS);
	assert_int_equal(checked_classify(t, &s, LP_PHASE_THRESHOLD), 2);
	free(t);
}

/* Random mixes, random thresholds, a table filling up: the choice is
 * always the nearest phase, a new one only beyond the threshold. */
static void test_classifier_reference(void **state)
{
	struct lp_phase_table *t = calloc(1, sizeof(*t));
	struct lp_phase_sig s;
	struct lp_rng rng;

	(void)state;
	lp_rng_seed(&rng, 11);
	for (int round = 0; round < 20; round++) {
		double thr = 0.05 + lp_rng_double(&rng) * 1.5;
		memset(t, 0, sizeof(*t));
		for (int i = 0; i < 300; i++) {
			uint64_t base = 0x400000 + 0x1000 * lp_rng_below(&rng, 90);
			unsigned ticks = 1 + (unsigned)lp_rng_below(&rng, 2 * LP_PHASE_TICKS);
			draw_sig(&s, &rng, base, 1 + (unsigned)lp_rng_below(&rng, 40), (int)lp_rng_below(&rng, 2), ticks);
			checked_classify(t, &s, thr);
		}
		assert_true(t->n <= LP_PHASE_TABLE_MAX);
	}
	free(t);
}

/* Two phases alternating in intervals of 1000 line accesses, thread 0:
 * phase 7 (even intervals) has reuses of 1..50 lines, phase 3 (odd ones)
 * reuses of 10^4..10^5; the first two intervals of each are sampled at
 * rate 0.2, the later ones at 0.01. */
static struct lp_profile *phased_profile(uint64_t seed)
{
	struct lp_profile *p;
	struct lp_rng rng;
	const uint64_t len = 1000;

	lp_rng_seed(&rng, seed);
	assert_int_equal(lp_profile_new(&p), 0);
	p->n_line_sizes = 1;
	p->line_sizes[0] = 64;
	p->rate = 0.2;
	p->phase_interval = len;
	for (uint64_t k = 0; k < 40; k++) {
		int first = k < 4;
		struct lp_phase_interval iv = { .begin = { k * len }, .accesses = { len }, .references = len,
						.rate = first ? 0.2 : 0.01, .tid = 0, .phase = k % 2 ? 3 : 7 };
		assert_int_equal(lp_profile_add_interval(p, &iv), 0);
		for (uint64_t t = k * len; t < (k + 1) * len; t++) {
			if (lp_rng_double(&rng) >= iv.rate)
				continue;
			struct lp_sample s = { .time = t, .addr = 64 * t, .kind = LP_REF_READ };
			s.reuse = k % 2 ? 10000 + lp_rng_below(&rng, 90000) : 1 + lp_rng_below(&rng, 50);
			assert_int_equal(lp_profile_add_sample(p, &s), 0);
		}
	}
	p->accesses[0] = 40 * len;
	p->references = 40 * len;
	assert_int_equal(lp_profile_finish(p, 0), 0);
	return p;
}

/* The slow reference of lp_phases_expand(): for every interval, its
 * samples in the expansion counted by a scan of all of them; each interval
 * holds its own samples and, when sampled below its phase's top rate,
 * (top - rate) x its line accesses of copies (within one, the carry), each
 * a sample of the phase's top-rate intervals with the same reuse. */
static void check_expansion(const struct lp_profile *p, const struct lp_profile *e)
{
	double top[2] = { 0, 0 }, carry[2] = { 0, 0 };

	for (size_t j = 0; j < p->n_intervals; j++) {
		int k = p->intervals[j].phase == 3;
		if (p->intervals[j].rate > top[k])
			top[k] = p->intervals[j].rate;
	}
	for (size_t j = 0; j < p->n_intervals; j++) {
		const struct lp_phase_interval *iv = &p->intervals[j];
		int k = iv->phase == 3;
		size_t own = 0, all = 0;
		for (size_t i = 0; i < p->n_samples; i++)
			own += p->samples[i].time >= iv->begin[0] && p->samples[i].time < iv->begin[0] + iv->accesses[0];
		for (size_t i = 0; i < e->n_samples; i++) {
			const struct lp_sample *s = &e->samples[i];
			if (s->time < iv->begin[0] || s->time >= iv->begin[0] + iv->accesses[0])
				continue;
			all++;
			/* phase 7's reuses are below 51, phase 3's above 9999 */
			assert_true(k ? s->reuse >= 10000 : s->reuse <= 50);
		}
		double want = (top[k] - iv->rate) * (double)iv->accesses[0] + carry[k];
		carry[k] = want - floor(want);
		assert_int_equal(all, own + (size_t)floor(want));
	}
	for (size_t i = 1; i < e->n_samples; i++)
		assert_true(e->samples[i - 1].time <= e->samples[i].time);
}

/* By hand: each phase's samples by scanning the intervals, its StatStack
 * model in one window (the timeline's phase ratio). */
static double reference_phase_lru(const struct lp_profile *p, uint32_t id, double lines)
{
	struct lp_profile sub = *p;
	struct lp_statstack *ss;
	size_t m = 0;
	double r;

	sub.samples = malloc(p->n_samples * sizeof(*sub.samples));
	for (size_t i = 0; i < p->n_samples; i++)
		for (size_t j = 0; j < p->n_intervals; j++) {
			const struct lp_phase_interval *iv = &p->intervals[j];
			if (iv->phase == id && p->samples[i].time >= iv->begin[0] &&
			    p->samples[i].time < iv->begin[0] + iv->accesses[0])
				sub.samples[m++] = p->samples[i];
		}
	sub.n_samples = m;
	assert_int_equal(lp_statstack_new(&ss, &sub, 0, UINT64_MAX, 0), 0);
	r = lp_statstack_miss_ratio(ss, lines);
	lp_statstack_free(ss);
	free(sub.samples);
	return r;
}

static void test_phase_weighted_model(void **state)
{
	struct lp_profile *p = phased_profile(5);
	struct lp_phases *ph;
	struct lp_report *r;
	const struct lp_curve *cv;
	uint64_t sizes[] = { 4096, 65536, 1u << 20, 16u << 20 };
	struct lp_report_params pa = { .sizes = sizes, .nsizes = 4, .policies = LP_REPORT_LRU };

	(void)state;
	assert_int_equal(lp_phases_new(&ph, p, 0), 0);
	assert_int_equal(lp_phases_count(ph), 2);
	assert_int_equal(lp_phases_info(ph, 0)->id, 7); /* order of first appearance */
	assert_int_equal(lp_phases_info(ph, 0)->intervals, 20);
	assert_int_equal(lp_phases_info(ph, 1)->accesses, 20000);
	assert_true(fabs(lp_phases_info(ph, 0)->weight - 0.5) < 1e-12);
	assert_int_equal(lp_phases_unphased(ph), 0);
	assert_int_equal(lp_phases_info(ph, 0)->samples + lp_phases_info(ph, 1)->samples, p->n_samples);
	struct lp_profile e;
	assert_int_equal(lp_phases_expand(ph, &e), 0);
	check_expansion(p, &e);
	lp_profile_resample_release(&e);
	lp_phases_free(ph);

	assert_int_equal(lp_report_new(&r, p, &pa), 0);
	assert_int_equal(lp_report_curves(r, &cv), 1);
	assert_int_equal(lp_report_info(r)->recorded, p->n_samples);
	assert_int_equal(lp_report_info(r)->phases, 2);
	assert_true(lp_report_info(r)->samples > 3 * p->n_samples);
	/* the known answer: half the run misses any cache below 10^4
	 * lines; pooled samples would say about one in nine (phase 3's
	 * share of the samples) */
	assert_true(fabs(cv[0].ratio[0] - 0.5) < 0.02);
	assert_true(cv[0].ratio[3] < 0.01);
	lp_report_free(r);
	lp_profile_free(p);
}

static void test_timeline(void **state)
{
	struct lp_profile *p = phased_profile(9);
	struct lp_report_cache c[2] = { { .label = "4K", .size = 4096, .ways = 0, .line = 64 },
					{ .label = "64M", .size = 64u << 20, .ways = 0, .line = 64 } };
	struct lp_timeline_params pa = { .caches = c, .ncaches = 2, .policy = LP_REPORT_LRU, .top = 2 };
	struct lp_timeline *t;
	const struct lp_timeline_row *r;
	const struct lp_timeline_phase *ph;

	(void)state;
	assert_int_equal(lp_timeline_new(&t, p, &pa), 0);
	assert_int_equal(lp_timeline_rows(t, &r), 40);
	assert_int_equal(lp_timeline_phases(t, &ph), 2);
	for (size_t i = 0; i < 40; i++) {
		assert_int_equal(r[i].start, 1000 * i);
		assert_int_equal(ph[r[i].phase].info.id, i % 2 ? 3 : 7);
		/* phase 3 misses 4K, phase 7 hits it */
		assert_true(i % 2 ? r[i].ratio[0] > 0.95 : r[i].ratio[0] < 0.05);
	}
	for (size_t k = 0; k < 2; k++)
		assert_true(fabs(ph[k].ratio[0] - reference_phase_lru(p, ph[k].info.id, 64)) < 1e-9);
	assert_true(fabs(lp_timeline_run(t)[0] - 0.5) < 0.03);
	char *svg = lp_test_path("timeline.svg");
	assert_int_equal(lp_timeline_svg(t, svg, "test"), 0);
	free(svg);
	lp_timeline_free(t);
	lp_profile_free(p);
}

static void test_roundtrip(void **state)
{
	struct lp_profile *p = phased_profile(3), *q;
	char *path = lp_test_path("phases.lpp"), *plain = lp_test_path("plain.lpp");
	unsigned char hdr[16];
	FILE *f;

	(void)state;
	assert_int_equal(lp_profile_write(p, path), 0);
	assert_int_equal(lp_profile_read(&q, path), 0);
	assert_int_equal(q->n_intervals, p->n_intervals);
	assert_int_equal(q->phase_interval, 1000);
	assert_memory_equal(q->intervals, p->intervals, p->n_intervals * sizeof(*p->intervals));
	f = fopen(path, "rb");
	assert_int_equal(fread(hdr, 1, 16, f), 16);
	fclose(f);
	assert_int_equal(hdr[8], LP_PROFILE_VERSION);
	lp_profile_free(q);
	/* without intervals: none read back */
	free(p->intervals);
	p->intervals = NULL;
	p->n_intervals = p->cap_intervals = 0;
	assert_int_equal(lp_profile_write(p, plain), 0);
	assert_int_equal(lp_profile_read(&q, plain), 0);
	assert_int_equal(q->n_intervals, 0);
	lp_profile_free(q);
	/* a phase id out of range is refused */
	struct lp_phase_interval bad = { .phase = LP_PHASE_MAX, .rate = 0.5 };
	assert_int_equal(lp_profile_add_interval(p, &bad), LP_EINVAL);
	lp_profile_free(p);
	free(path);
	free(plain);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_classifier_known),
		cmocka_unit_test(test_classifier_reference),
		cmocka_unit_test(test_phase_weighted_model),
		cmocka_unit_test(test_timeline),
		cmocka_unit_test(test_roundtrip),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
