/* Tests of the valgrind lackey trace format. */
#include "lp-test.h"

#include <locprof/trace.h>

/* The data file sits next to this source (CMake compiles it by its
 * absolute path): tests/data/ relative to tests/unit/trace/. */
static void data_path(char *buf, size_t len, const char *name)
{
	const char *file = __FILE__, *cut = strstr(file, "tests/unit/trace/");

	snprintf(buf, len, "%.*stests/data/%s", cut ? (int)(cut - file) : 0, file, name);
}

static size_t read_all(const char *path, const char *fmt, struct lp_ref *buf, size_t cap,
		       size_t batch, int *err)
{
	struct lp_trace_reader *r;
	size_t total = 0;
	ssize_t n = 0;

	*err = lp_trace_reader_open(&r, path, fmt);
	if (*err < 0)
		return 0;
	while (total < cap &&
	       (n = lp_trace_read(r, buf + total, cap - total < batch ? cap - total : batch)) > 0)
		total += (size_t)n;
	if (total == cap)
		n = lp_trace_read(r, buf, 1);
	*err = (int)n;
	lp_trace_reader_free(r);
	return total;
}

static void test_parse_lines(void **state)
{
	char *path = lp_test_path("a.lackey");
	const char *text = "==12== Lackey, an example Valgrind tool\n"
			   "==12== \n"
			   " S 1fff000708,8\n"     /* before any instruction: pc 0 */
			   "I  0401ab70,3\n"
			   " L 1ffefffc40,8\n"
			   " M 0060104c,4\n"
			   "I  0401ab73,5\n"
			   "I  0401ab78,2\n"
			   " L ffffffffffffffff,16\n"
			   "==12== Exit code: 0\n";
	struct lp_ref out[8];
	int err;

	lp_test_write_file(path, text, strlen(text));
	/* Batches of one record split the M line across calls. */
	for (size_t batch = 1; batch <= 8; batch += 7) {
		assert_int_equal(read_all(path, NULL, out, 8, batch, &err), 5);
		assert_int_equal(err, 0);
		assert_true(out[0].kind == LP_REF_WRITE && out[0].addr == 0x1fff000708 && out[0].size == 8 &&
			    out[0].pc == 0);
		assert_true(out[1].kind == LP_REF_READ && out[1].addr == 0x1ffefffc40 && out[1].pc == 0x0401ab70);
		assert_true(out[2].kind == LP_REF_READ && out[2].addr == 0x60104c && out[2].size == 4 &&
			    out[2].pc == 0x401ab70);
		assert_true(out[3].kind == LP_REF_WRITE && out[3].addr == 0x60104c && out[3].size == 4 &&
			    out[3].pc == 0x401ab70);
		assert_true(out[4].addr == UINT64_MAX && out[4].size == 16 && out[4].pc == 0x401ab78);
	}
	free(path);
}

static void test_malformed_lines(void **state)
{
	static const struct { const char *text; const char *msg; } cases[] = {
		{ "I  0401ab70,3\n L 1g,8\n", "line 2: bad address '1g,8'" },
		{ " L 10,8\n\n X 10,8\n", "line 3: not a lackey line (expected I, L, S or M)" },
		{ " L 10\n", "line 1: bad address" },
		{ " S 10,\n", "line 1: missing size" },
		{ " S 10,0\n", "line 1: size 0 for a reference" },
		{ " L 10,8 junk\n", "line 1: unexpected text 'junk'" },
		{ " L 1ffffffffffffffff,8\n", "line 1: bad address" },
		{ "R 0x10 8\n", "line 1: not a lackey line" },
	};
	char *path = lp_test_path("bad.lackey");
	struct lp_ref out[8];
	int err;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		lp_test_write_file(path, cases[i].text, strlen(cases[i].text));
		read_all(path, NULL, out, 8, 8, &err);
		assert_int_equal(err, LP_EPARSE);
		if (!strstr(lp_errmsg(), cases[i].msg))
			fail_msg("case %zu: '%s' lacks '%s'", i, lp_errmsg(), cases[i].msg);
	}
	free(path);
}

static void test_real_trace_excerpt(void **state)
{
	char path[512];
	struct lp_ref out[400];
	int err;
	FILE *f;
	char line[256];
	size_t want = 0;

	data_path(path, sizeof(path), "true-excerpt.lackey");
	/* Count the data lines independently: L and S one record, M two. */
	assert_non_null(f = fopen(path, "r"));
	while (fgets(line, sizeof(line), f))
		if (line[0] == ' ')
			want += line[1] == 'M' ? 2 : 1;
	fclose(f);
	assert_true(want >= 30);
	assert_int_equal(read_all(path, NULL, out, 400, 64, &err), want);
	assert_int_equal(err, 0);
	for (size_t i = 0; i < want; i++)
		assert_true(out[i].pc >= 0x4000000 && out[i].pc < 0x5000000 && out[i].size >= 1);
}

static void test_reference_size_limit(void **state)
{
	char *path = lp_test_path("big.lackey");
	const char *text = " L 10,1048576\nI  0401ab70,3\n M 10,1048577\n";
	struct lp_ref out[8];
	int err;

	lp_test_write_file(path, text, strlen(text));
	assert_int_equal(read_all(path, NULL, out, 8, 8, &err), 1);
	assert_int_equal(err, LP_ELIMIT);
	assert_non_null(strstr(lp_errmsg(), "line 3: a reference of 1048577 bytes (at most 1048576)"));
	free(path);
}

static void test_write_then_read(void **state)
{
	char *path = lp_test_path("w.lackey");
	struct lp_trace_writer *w;
	struct lp_ref in[6] = {
		{ .addr = 0x10, .size = 8, .pc = 0, .kind = LP_REF_READ },
		{ .addr = 0x20, .size = 4, .pc = 0x401000, .kind = LP_REF_WRITE },
		{ .addr = 0x30, .size = 64, .pc = 0x401000, .kind = LP_EV_ALLOC }, /* dropped */
		{ .addr = UINT64_MAX, .size = LP_REF_SIZE_MAX, .pc = 0x401000, .kind = LP_REF_READ },
		{ .addr = 0x40, .size = 1, .pc = UINT64_MAX, .tid = 3, .kind = LP_REF_READ },
		{ .addr = 0x50, .size = 2, .pc = 0, .kind = LP_REF_WRITE },
	}, out[8];
	int err;
	const size_t kept[] = { 0, 1, 3, 4, 5 };

	assert_int_equal(lp_trace_writer_open(&w, path, NULL), 0);
	assert_int_equal(lp_trace_write(w, in, 6), 0);
	assert_int_equal(lp_trace_writer_close(w), 0);
	assert_int_equal(read_all(path, NULL, out, 8, 8, &err), 5);
	assert_int_equal(err, 0);
	for (size_t i = 0; i < 5; i++) {
		const struct lp_ref *a = &in[kept[i]], *b = &out[i];
		assert_true(a->addr == b->addr && a->size == b->size && a->pc == b->pc && a->kind == b->kind);
		assert_int_equal(b->tid, 0); /* lackey has no threads */
	}
	free(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_lines),
		cmocka_unit_test(test_malformed_lines),
		cmocka_unit_test(test_real_trace_excerpt),
		cmocka_unit_test(test_reference_size_limit),
		cmocka_unit_test(test_write_then_read),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
