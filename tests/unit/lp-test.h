/* Shared helpers for the cmocka unit tests. */
#ifndef LP_TEST_H
#define LP_TEST_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <locprof/sample.h>

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char lp_test_dir[64];
static pid_t lp_test_dir_owner; /* a forked child that exits leaves it */

static inline int lp_test_remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	return remove(path);
}

/* The temporary directory goes when the test program exits
 * (LOCPROF_TEST_KEEP=1 keeps it, to look at what a failing test wrote). */
static inline void lp_test_remove_dir(void)
{
	if (lp_test_dir[0] && getpid() == lp_test_dir_owner && !getenv("LOCPROF_TEST_KEEP"))
		nftw(lp_test_dir, lp_test_remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* A fresh path in a per-test temporary directory; free() it. */
static inline char *lp_test_path(const char *name)
{
	char *p;

	if (!lp_test_dir[0]) {
		snprintf(lp_test_dir, sizeof(lp_test_dir), "/tmp/locprof-test-XXXXXX");
		if (!mkdtemp(lp_test_dir))
			abort();
		lp_test_dir_owner = getpid();
		atexit(lp_test_remove_dir);
	}
	const char *dir = lp_test_dir;
	if (asprintf(&p, "%s/%s", dir, name) < 0)
		abort();
	return p;
}

/* Write a string to a file, for hand-made inputs. */
static inline void lp_test_write_file(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

/* refs[0, n) through the trace sampler (lp_sampler) at rate and seed,
 * for nsizes line sizes sizes[] (one of 64 bytes when nsizes is 0): a
 * finished profile; lp_profile_free() it. */
static inline struct lp_profile *lp_test_sample(const struct lp_ref *refs, size_t n, double rate,
						uint64_t seed, const uint32_t *sizes, unsigned nsizes)
{
	struct lp_profile *p;
	struct lp_sampler *s;

	assert_int_equal(lp_profile_new(&p), 0);
	p->n_line_sizes = nsizes ? nsizes : 1;
	for (unsigned i = 0; i < p->n_line_sizes; i++)
		p->line_sizes[i] = nsizes ? sizes[i] : 64;
	p->rate = rate;
	p->seed = seed;
	assert_int_equal(lp_sampler_new(&s, p), 0);
	assert_int_equal(lp_sampler_feed(s, refs, n), 0);
	assert_int_equal(lp_sampler_finish(s), 0);
	lp_sampler_free(s);
	return p;
}

#endif
