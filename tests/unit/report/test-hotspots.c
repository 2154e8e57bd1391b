/* The grouping of misses by source line and function (lp_hotspots)
 * against a slow reference, and the reading of source files to annotate
 * (lp_source_read): remapping directories, line splitting, missing files.
 * Without symbols every pc is its own function, named by its address, and
 * there are no lines: the line grouping is checked end to end with real
 * debug information in tests/cli/test-annotate.sh. */
#include "lp-test.h"

#include <locprof/report.h>

#include <inttypes.h>
#include <math.h>
#include <sys/stat.h>

enum { NPCS = 37, NCHARGES = 2000 };

static void test_hotspots_functions(void **state)
{
	double ref_acc[NPCS] = { 0 }, ref_miss[NPCS] = { 0 }, total_acc = 0, total_miss = 0;
	const struct lp_source_function *f;
	const struct lp_source_line *l;
	const struct lp_source_file *files;
	struct lp_hotspots *h;
	uint64_t x = 12345;
	double acc, miss, shares = 0;
	size_t n;

	(void)state;
	assert_int_equal(lp_hotspots_new(&h, NULL), 0);
	for (int i = 0; i < NCHARGES; i++) {
		int pc;
		double a, m;

		x = x * 6364136223846793005ull + 1442695040888963407ull;
		pc = (int)((x >> 33) % NPCS); /* pc index 0 is pc 0: the totals only */
		a = (double)((x >> 20) % 7);
		m = (double)((x >> 40) % 5) * 0.5;
		assert_int_equal(lp_hotspots_add(h, (uint64_t)pc * 0x10, a, m), 0);
		ref_acc[pc] += a;
		ref_miss[pc] += m;
		total_acc += a;
		total_miss += m;
	}
	assert_int_equal(lp_hotspots_finish(h), 0);
	assert_int_equal(lp_hotspots_finish(h), LP_EINVAL); /* once */
	lp_hotspots_totals(h, &acc, &miss);
	assert_true(fabs(acc - total_acc) < 1e-9 && fabs(miss - total_miss) < 1e-9);
	assert_int_equal(lp_hotspots_lines(h, &l), 0);
	assert_int_equal(lp_hotspots_files(h, &files), 0);
	n = lp_hotspots_functions(h, &f);
	assert_int_equal(n, NPCS - 1);
	for (size_t i = 0; i < n; i++) {
		unsigned long long pc = strtoull(f[i].function, NULL, 16);
		size_t k = (size_t)(pc / 0x10);
		char want[32];

		snprintf(want, sizeof(want), "%#llx", pc);
		assert_string_equal(f[i].function, want);
		assert_string_equal(f[i].label, want);
		assert_null(f[i].caller);
		assert_true(k > 0 && k < NPCS);
		assert_true(fabs(f[i].accesses - ref_acc[k]) < 1e-9);
		assert_true(fabs(f[i].misses - ref_miss[k]) < 1e-9);
		assert_true(fabs(f[i].share - ref_miss[k] / total_miss) < 1e-12);
		if (i)
			assert_true(f[i - 1].misses > f[i].misses ||
				    (f[i - 1].misses == f[i].misses && f[i - 1].accesses >= f[i].accesses));
		shares += f[i].share;
	}
	assert_true(fabs(shares + ref_miss[0] / total_miss - 1) < 1e-9);
	lp_hotspots_free(h);
	lp_hotspots_free(NULL);
}

static void test_source_read(void **state)
{
	char *dir = lp_test_path("src"), *tree, *file, *moved, *crlf;
	const char *dirs[2];
	struct lp_source_text *t;

	(void)state;
	assert_int_equal(asprintf(&tree, "%s/old/build/proj", dir), (int)strlen(dir) + 15);
	assert_int_equal(asprintf(&file, "%s/a.c", tree), (int)strlen(tree) + 4);
	assert_int_equal(mkdir(dir, 0700), 0);
	assert_int_equal(asprintf(&moved, "%s/new", dir), (int)strlen(dir) + 4);
	assert_int_equal(mkdir(moved, 0700), 0);
	{
		char *p;
		assert_int_equal(asprintf(&p, "%s/proj", moved), (int)strlen(moved) + 5);
		assert_int_equal(mkdir(p, 0700), 0);
		free(p);
		assert_int_equal(asprintf(&p, "%s/proj/a.c", moved), (int)strlen(moved) + 9);
		lp_test_write_file(p, "int x;\n\nint y; /* last, no newline */", 37);
		free(p);
	}

	/* the path itself is gone: not found, with or without dirs */
	assert_int_equal(lp_source_read(&t, file, NULL, 0), LP_EIO);
	assert_null(t);
	assert_non_null(strstr(lp_errmsg(), "not found"));
	dirs[0] = dir; /* no tail of the path under it */
	assert_int_equal(lp_source_read(&t, "/nowhere/x/a.c", dirs, 1), LP_EIO);

	/* DIR + a tail of the path: .../new + proj/a.c */
	dirs[0] = "/nonexistent-dir";
	dirs[1] = moved;
	assert_int_equal(lp_source_read(&t, file, dirs, 2), 0);
	assert_non_null(strstr(t->path, "/new/proj/a.c"));
	assert_int_equal(t->n, 3);
	assert_string_equal(t->lines[0], "int x;");
	assert_string_equal(t->lines[1], "");
	assert_string_equal(t->lines[2], "int y; /* last, no newline */");
	lp_source_free(t);

	/* the path itself, CRLF line ends, a final newline */
	assert_int_equal(asprintf(&crlf, "%s/crlf.c", dir), (int)strlen(dir) + 7);
	lp_test_write_file(crlf, "a\r\nb\r\n", 6);
	assert_int_equal(lp_source_read(&t, crlf, NULL, 0), 0);
	assert_string_equal(t->path, crlf);
	assert_int_equal(t->n, 2);
	assert_string_equal(t->lines[0], "a");
	assert_string_equal(t->lines[1], "b");
	lp_source_free(t);
	/* an empty file has no lines; a directory is no source */
	lp_test_write_file(crlf, "", 0);
	assert_int_equal(lp_source_read(&t, crlf, NULL, 0), 0);
	assert_int_equal(t->n, 0);
	lp_source_free(t);
	assert_int_equal(lp_source_read(&t, dir, NULL, 0), LP_EIO);
	lp_source_free(NULL);
	free(crlf);
	free(moved);
	free(file);
	free(tree);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hotspots_functions),
		cmocka_unit_test(test_source_read),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
