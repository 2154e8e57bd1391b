/* Tests of the text trace format and of the trace registry. */
#include "lp-test.h"

#include <locprof/trace.h>

static ssize_t read_all(const char *path, const char *fmt, struct lp_ref *buf, size_t cap, int *err)
{
	struct lp_trace_reader *r;
	ssize_t n = 0, total = 0;

	*err = lp_trace_reader_open(&r, path, fmt);
	if (*err < 0)
		return 0;
	while ((size_t)total < cap && (n = lp_trace_read(r, buf + total, cap - (size_t)total)) > 0)
		total += n;
	/* One more read must report the end (0) or an error. */
	if ((size_t)total == cap) {
		struct lp_ref extra;
		n = lp_trace_read(r, &extra, 1);
		assert_true(n <= 0);
	}
	*err = (int)n;
	lp_trace_reader_free(r);
	return total;
}

static void test_parse_fields(void **state)
{
	char *path = lp_test_path("a.txt");
	const char *text = "# a comment\n\nR 0x7ffc1a2b 8 0x401136\n  W 10 4   # inline\n"
			   "A 0x1000 4096 0x4444 2\nS 0 0 0x401200 2\nF 0x1000 0\nR 0xffffffffffffffff 1 0 3\n";
	struct lp_ref refs[8];
	int err;

	lp_test_write_file(path, text, strlen(text));
	assert_int_equal(read_all(path, NULL, refs, 8, &err), 6);
	assert_int_equal(err, 0);
	assert_true(refs[0].kind == LP_REF_READ && refs[0].addr == 0x7ffc1a2b && refs[0].size == 8 &&
		    refs[0].pc == 0x401136 && refs[0].tid == 0);
	assert_true(refs[1].kind == LP_REF_WRITE && refs[1].addr == 0x10 && refs[1].size == 4 && refs[1].pc == 0);
	assert_true(refs[2].kind == LP_EV_ALLOC && refs[2].size == 4096 && refs[2].pc == 0x4444 && refs[2].tid == 2);
	assert_true(refs[3].kind == LP_EV_FRAME && refs[3].addr == 0 && refs[3].size == 0 &&
		    refs[3].pc == 0x401200 && refs[3].tid == 2);
	assert_true(refs[4].kind == LP_EV_FREE && refs[4].addr == 0x1000);
	assert_true(refs[5].addr == UINT64_MAX && refs[5].tid == 3);
	free(path);
}

static void test_malformed_line_reports_line_number(void **state)
{
	static const struct { const char *text; const char *msg; } cases[] = {
		{ "R 0x10 8\nR 0x1g 8\n", "line 2: bad address '0x1g'" },
		{ "R 0x10 8\n\nQ 1 1\n", "line 3: unknown kind (expected R, W, A, F or S) 'Q'" },
		{ "A 0x10 8 0x1\nS 0x10 0 0x2\n", "line 2: a frame (S) has address and size 0" },
		{ "R 0x10\n", "line 1: missing size" },
		{ "R 0x10 0\n", "line 1: size 0 for a reference" },
		{ "R 0x10 8 0x1 2 junk\n", "line 1: unexpected text 'junk'" },
		{ "R 0x1ffffffffffffffff 8\n", "line 1: bad address '0x1ffffffffffffffff'" },
	};
	char *path = lp_test_path("bad.txt");
	struct lp_ref refs[8];
	int err;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		lp_test_write_file(path, cases[i].text, strlen(cases[i].text));
		read_all(path, "text", refs, 8, &err);
		assert_int_equal(err, LP_EPARSE);
		assert_non_null(strstr(lp_errmsg(), cases[i].msg));
	}
	free(path);
}

/* A reference above LP_REF_SIZE_MAX is refused, naming its line, after
 * the records before it; an allocation may be of any size. */
static void test_reference_size_limit(void **state)
{
	char *path = lp_test_path("big.txt");
	const char *text = "R 0x10 1048576\nA 0x10 18446744073709551615\n# c\nW 0x10 1048577\n";
	struct lp_ref refs[8];
	int err;

	lp_test_write_file(path, text, strlen(text));
	assert_int_equal(read_all(path, NULL, refs, 8, &err), 2);
	assert_int_equal(err, LP_ELIMIT);
	assert_non_null(strstr(lp_errmsg(), "line 4: a reference of 1048577 bytes (at most 1048576)"));
	free(path);
}

static void test_round_trip(void **state)
{
	char *path = lp_test_path("rt.trace");
	struct lp_trace_writer *w;
	struct lp_ref in[100], out[100];
	int err;

	for (int i = 0; i < 100; i++)
		in[i] = (struct lp_ref){ .addr = (uint64_t)i * 0x9e3779b97f4a7c15ULL, .pc = (uint64_t)i * 3,
					 .size = 1 + (uint64_t)i % 16, .tid = (uint32_t)(i % 3),
					 .kind = (uint8_t)(i % 5) };
	for (int i = 0; i < 100; i++)
		if (in[i].kind == LP_EV_FRAME)
			in[i].addr = in[i].size = 0;
	assert_int_equal(lp_trace_writer_open(&w, path, NULL), 0);
	assert_int_equal(lp_trace_write(w, in, 100), 0);
	assert_int_equal(lp_trace_writer_close(w), 0);
	assert_int_equal(read_all(path, NULL, out, 100, &err), 100);
	assert_int_equal(err, 0);
	for (int i = 0; i < 100; i++)
		assert_memory_equal(&in[i], &out[i], offsetof(struct lp_ref, kind) + 1);
	free(path);
}

static void test_unknown_format_names(void **state)
{
	struct lp_trace_reader *r;
	struct lp_trace_writer *w;

	assert_int_equal(lp_trace_reader_open(&r, "/dev/null", "bogus"), LP_EINVAL);
	assert_non_null(strstr(lp_errmsg(), "unknown trace format 'bogus'"));
	assert_int_equal(lp_trace_writer_open(&w, "/tmp/x.unknownext", NULL), LP_EINVAL);
	assert_string_equal(lp_trace_format_for_path("dir.v2/file.txt"), "text");
	assert_null(lp_trace_format_for_path("dir.txt/file"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_fields),
		cmocka_unit_test(test_malformed_line_reports_line_number),
		cmocka_unit_test(test_reference_size_limit),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_unknown_format_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
