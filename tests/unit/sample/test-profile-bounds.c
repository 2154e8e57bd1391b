/* Hostile profiles and traces: what the .lpp reader and the sampler
 * allocate and loop over is bounded by the input's own size, whatever its
 * counts, times and thread ids say (docs/formats.md). */
#include "lp-test.h"

#include <locprof/model.h>
#include <locprof/profile.h>
#include <locprof/sample.h>

#include "model/model-internal.h"
#include "sample/profile-chunk.h"

/* A small profile of one line size with the given counts; written to a
 * fresh path, whose name is returned (free() it). */
static char *write_profile(const char *name, uint64_t accesses, uint64_t window,
			   const struct lp_sample *s, size_t n)
{
	struct lp_profile *p;
	char *path = lp_test_path(name);

	assert_int_equal(lp_profile_new(&p), 0);
	p->n_line_sizes = 1;
	p->line_sizes[0] = 64;
	p->rate = 0.01;
	p->window = window;
	assert_int_equal(lp_profile_finish(p, 0), 0);
	/* the writer does not judge the samples and counts; the reader must */
	for (size_t i = 0; i < n; i++)
		assert_int_equal(lp_profile_add_sample(p, &s[i]), 0);
	p->accesses[0] = accesses;
	assert_int_equal(lp_profile_write(p, path), 0);
	lp_profile_free(p);
	return path;
}

static void test_window_length(void **state)
{
	assert_int_equal(lp_profile_window_length(0, 0), 1);
	assert_int_equal(lp_profile_window_length(10, 3), 3);
	assert_int_equal(lp_profile_window_count(10, 3), 4);
	assert_int_equal(lp_profile_window_length(10, 0), 10);
	assert_int_equal(lp_profile_window_length(10, 99), 10);
	assert_int_equal(lp_profile_window_count(10, 10), 1);
	/* lengthened: never more than the maximum, even at the top of the
	 * range where total + len - 1 would wrap */
	const uint64_t totals[] = { (uint64_t)LP_PROFILE_MAX_WINDOWS + 1, LP_PROFILE_CLOCK_MAX,
				    UINT64_MAX };
	for (size_t i = 0; i < 3; i++) {
		uint64_t len = lp_profile_window_length(totals[i], 1);
		assert_true(lp_profile_window_count(totals[i], len) <= LP_PROFILE_MAX_WINDOWS);
		assert_true(lp_profile_window_count(totals[i], len - 1) > LP_PROFILE_MAX_WINDOWS);
	}
}

/* Counts at the clock's limit and a window of one access: a 200-byte
 * file, read into at most LP_PROFILE_MAX_WINDOWS windows, and the models
 * over it stay as bounded. */
static void test_huge_counts_bounded(void **state)
{
	struct lp_sample s[2] = {
		{ .time = 5, .reuse = 3, .addr = 0x1000 },
		{ .time = LP_PROFILE_CLOCK_MAX - 10, .reuse = 2, .addr = 0x2000 },
	};
	char *path = write_profile("huge.lpp", LP_PROFILE_CLOCK_MAX, 1, s, 2);
	struct lp_profile *q;
	struct lp_statstack *ss;
	struct lp_statcache *sc;
	uint64_t *bounds;
	size_t np;

	assert_int_equal(lp_profile_read(&q, path), 0);
	assert_true(q->windows[0].n <= LP_PROFILE_MAX_WINDOWS);
	assert_true(q->windows[0].length >= LP_PROFILE_CLOCK_MAX / LP_PROFILE_MAX_WINDOWS);
	assert_int_equal(lp_statstack_new(&ss, q, 0, 1, 0), 0);
	assert_true(lp_statstack_nwindows(ss) <= LP_PROFILE_MAX_WINDOWS);
	assert_int_equal(lp_statcache_new(&sc, q, 0, 1, 0), 0);
	assert_true(lp_statcache_nwindows(sc) <= 2 * LP_PROFILE_MAX_WINDOWS);
	lp_statcache_free(sc);
	lp_statstack_free(ss);
	/* the phases of a run near 2^64 accesses, asked in windows of one */
	assert_int_equal(lp_model_phases(q->samples, q->n_samples, UINT64_MAX, 1, &bounds, &np), 0);
	assert_true(np >= 1 && np <= LP_PROFILE_MAX_WINDOWS);
	assert_true(bounds[0] == 0 && bounds[np] == UINT64_MAX);
	free(bounds);
	lp_profile_free(q);
	free(path);
}

/* Values past the clock's limit are damage: the chunk is refused. */
static void test_clock_limit(void **state)
{
	struct lp_sample late = { .time = UINT64_MAX, .reuse = LP_REUSE_DANGLING };
	struct lp_sample far = { .time = 10, .reuse = LP_PROFILE_CLOCK_MAX - 10 };
	struct lp_sample ok = { .time = 10, .reuse = LP_PROFILE_CLOCK_MAX - 11 };
	struct lp_profile *q;
	char *path;

	path = write_profile("late.lpp", 100, 0, &late, 1);
	assert_int_equal(lp_profile_read(&q, path), LP_ECORRUPT);
	assert_non_null(strstr(lp_errmsg(), "malformed chunk 'SMPL'"));
	assert_int_equal(q->n_samples, 0);
	lp_profile_free(q);
	free(path);

	path = write_profile("far.lpp", 100, 0, &far, 1);
	assert_int_equal(lp_profile_read(&q, path), LP_ECORRUPT);
	lp_profile_free(q);
	free(path);

	path = write_profile("ok.lpp", 100, 0, &ok, 1);
	assert_int_equal(lp_profile_read(&q, path), 0);
	assert_int_equal(q->n_samples, 1);
	lp_profile_free(q);
	free(path);

	path = write_profile("counts.lpp", LP_PROFILE_CLOCK_MAX + 1, 0, NULL, 0);
	assert_int_equal(lp_profile_read(&q, path), LP_ECORRUPT);
	assert_non_null(strstr(lp_errmsg(), "malformed chunk 'CNTS'"));
	assert_int_equal(q->accesses[0], 0);
	assert_int_equal(q->windows[0].n, 1);
	lp_profile_free(q);
	free(path);
}

static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;

	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	*len = (size_t)ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc(*len + 64);
	assert_int_equal(fread(buf, 1, *len, f), *len);
	fclose(f);
	return buf;
}

/* Two profiles concatenated: the first is read, and the rest is not
 * dropped in silence. A damaged META leaves nothing to use. */
static void test_after_end_and_bad_meta(void **state)
{
	struct lp_sample s = { .time = 1, .reuse = 2 };
	char *path = write_profile("one.lpp", 100, 0, &s, 1), *two = lp_test_path("two.lpp");
	struct lp_profile *q;
	size_t len;
	uint8_t *buf = slurp(path, &len), *cat = malloc(2 * len);

	memcpy(cat, buf, len);
	memcpy(cat + len, buf, len);
	lp_test_write_file(two, cat, 2 * len);
	assert_int_equal(lp_profile_read(&q, two), LP_ECORRUPT);
	assert_non_null(strstr(lp_errmsg(), "data after the end chunk"));
	assert_non_null(q);
	assert_int_equal(q->n_samples, 1);
	lp_profile_free(q);

	/* META's first line size (after the file header, the chunk header
	 * and the count) set to 0, its checksum made good again */
	uint8_t *meta = buf + 16;
	uint32_t plen = meta[4] | meta[5] << 8 | (uint32_t)meta[6] << 16 | (uint32_t)meta[7] << 24;
	memset(meta + 12 + 4, 0, 4);
	lp_chunk_seal(meta, LP_CHUNK_META, plen);
	lp_test_write_file(two, buf, len);
	assert_int_equal(lp_profile_read(&q, two), LP_ECORRUPT);
	assert_non_null(strstr(lp_errmsg(), "malformed chunk 'META'"));
	assert_null(q);
	free(cat);
	free(buf);
	free(path);
	free(two);
}

/* Thread ids of any size are numbered densely in order of appearance:
 * no table as large as the largest id. */
static void test_sampler_sparse_threads(void **state)
{
	struct lp_ref refs[] = {
		{ .addr = 0x1000, .size = 8, .tid = 4000000000u },
		{ .addr = 0x2000, .size = 8, .tid = 200000000 },
		{ .addr = 0x1000, .size = 8, .tid = 4000000000u },
		{ .addr = 0x3000, .size = 64, .tid = 7, .kind = LP_EV_ALLOC },
		{ .addr = 0x2000, .size = 8, .tid = UINT32_MAX },
	};
	struct lp_profile *p;
	struct lp_sampler *s;

	assert_int_equal(lp_profile_new(&p), 0);
	p->n_line_sizes = 1;
	p->line_sizes[0] = 64;
	p->rate = 1;
	assert_int_equal(lp_sampler_new(&s, p), 0);
	assert_int_equal(lp_sampler_feed(s, refs, 5), 0);
	assert_int_equal(lp_sampler_finish(s), 0);
	lp_sampler_free(s);
	assert_int_equal(p->n_threads, 4);
	assert_int_equal(p->thread_refs[0], 2);
	assert_int_equal(p->thread_refs[1], 1);
	assert_int_equal(p->thread_refs[2], 0); /* tid 7: an allocation only */
	assert_int_equal(p->thread_refs[3], 1);
	assert_int_equal(p->n_allocs, 1);
	assert_int_equal(p->allocs[0].tid, 2);
	assert_int_equal(p->n_samples, 4);
	for (size_t i = 0; i < p->n_samples; i++)
		assert_true(p->samples[i].tid < 4 && p->samples[i].tid != 2);
	lp_profile_free(p);
}

/* A profile without samples: the models have nothing to offset into. */
static void test_models_without_samples(void **state)
{
	char *path = write_profile("none.lpp", 0, 0, NULL, 0);
	struct lp_profile *q;
	struct lp_statstack *ss;
	struct lp_statcache *sc;

	assert_int_equal(lp_profile_read(&q, path), 0);
	assert_null(q->samples);
	assert_int_equal(lp_statstack_new(&ss, q, 0, 0, 0), 0);
	assert_int_equal(lp_statcache_new(&sc, q, 0, 0, 0), 0);
	lp_statcache_free(sc);
	lp_statstack_free(ss);
	lp_profile_free(q);
	free(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_window_length),
		cmocka_unit_test(test_huge_counts_bounded),
		cmocka_unit_test(test_clock_limit),
		cmocka_unit_test(test_after_end_and_bad_meta),
		cmocka_unit_test(test_sampler_sparse_threads),
		cmocka_unit_test(test_models_without_samples),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
