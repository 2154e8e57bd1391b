/* Tests of the common module: errors, buffered I/O, the random generator. */
#include "lp-test.h"

#include "common/error.h"
#include "common/io.h"
#include "common/rng.h"

#include <math.h>
#include <sys/stat.h>
#include <sys/wait.h>

static void test_errmsg(void **state)
{
	assert_int_equal(lp_seterr(LP_EPARSE, "line %d: bad", 7), LP_EPARSE);
	assert_string_equal(lp_errmsg(), "line 7: bad");
	assert_string_equal(lp_strerror(LP_ETRUNCATED), "truncated input");
	assert_string_equal(lp_strerror(12345), "unknown error");
}

static void test_getline_long_lines_and_no_final_newline(void **state)
{
	char *path = lp_test_path("lines.txt");
	size_t big = (3u << 20) + 17; /* longer than the 1 MiB buffer */
	char *data = malloc(big + 64);
	struct lp_in *in;
	char *line;

	memset(data, 'x', big);
	memcpy(data + big, "\r\nsecond\nthird", 14);
	lp_test_write_file(path, data, big + 14);
	assert_int_equal(lp_in_open(&in, path), 0);
	assert_int_equal(lp_in_getline(in, &line), 1);
	assert_int_equal(strlen(line), big);
	assert_int_equal(lp_in_getline(in, &line), 1);
	assert_string_equal(line, "second");
	assert_int_equal(lp_in_getline(in, &line), 1);
	assert_string_equal(line, "third");
	assert_int_equal(lp_in_getline(in, &line), 0);
	assert_null(line);
	lp_in_free(in);
	free(data);
	free(path);
}

static void test_peek_then_read(void **state)
{
	char *path = lp_test_path("peek.bin");
	const uint8_t *p;
	char buf[16];
	struct lp_in *in;

	lp_test_write_file(path, "abcdef", 6);
	assert_int_equal(lp_in_open(&in, path), 0);
	assert_int_equal(lp_in_peek(in, &p, 64), 6);
	assert_memory_equal(p, "abcdef", 6);
	assert_int_equal(lp_in_read(in, buf, 4), 4);
	assert_memory_equal(buf, "abcd", 4);
	assert_int_equal(lp_in_read(in, buf, 16), 2);
	assert_int_equal(lp_in_offset(in), 6);
	lp_in_free(in);
	free(path);
}

static void test_missing_file_message(void **state)
{
	struct lp_in *in;

	assert_int_equal(lp_in_open(&in, "/nonexistent/x.lpt"), LP_EIO);
	assert_string_equal(lp_errmsg(), "cannot open '/nonexistent/x.lpt': No such file or directory");
}

static void test_out_is_atomic(void **state)
{
	char *path = lp_test_path("atomic.txt");
	struct lp_out *o;
	struct stat st;

	unlink(path);
	assert_int_equal(lp_out_open(&o, path), 0);
	assert_int_equal(lp_out_printf(o, "hello %d\n", 42), 0);
	assert_int_equal(stat(path, &st), -1); /* not under the real name yet */
	lp_out_abort(o);
	assert_int_equal(stat(path, &st), -1);

	assert_int_equal(lp_out_open(&o, path), 0);
	assert_int_equal(lp_out_printf(o, "hello %d\n", 42), 0);
	assert_int_equal(lp_out_close(o), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_size, 9);
	free(path);
}

/* A pid that no longer exists: a child's, after it was reaped. */
static pid_t dead_pid(void)
{
	pid_t pid = fork();

	if (pid == 0)
		_exit(0);
	assert_true(pid > 0);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
	return pid;
}

static int only_a(const char *name, void *ctx)
{
	(void)ctx;
	return !strcmp(name, "a.lpp");
}

static void test_tmp_files_removed(void **state)
{
	char *out = lp_test_path("t.lpp"), *dir = strdup(out), name[64], path[600];
	pid_t dead = dead_pid();
	const char *const names[] = { "a.lpp.tmp.%d", "b.lpp.tmp.%d", "a.lpp.tmp.%dx", "a.lpp.tmp.%d" };
	pid_t pids[] = { dead, dead, dead, getpid() };
	struct lp_out *o;
	struct stat st;

	*strrchr(dir, '/') = 0;
	/* An open output's temporary file goes with lp_tmp_remove_all(). */
	assert_int_equal(lp_out_open(&o, out), 0);
	assert_int_equal(lp_out_printf(o, "x"), 0);
	snprintf(path, sizeof(path), "%s.tmp.%d", out, (int)getpid());
	assert_int_equal(stat(path, &st), 0);
	lp_tmp_remove_all();
	assert_int_not_equal(stat(path, &st), 0);
	lp_out_abort(o);

	/* Stale ones: only NAME.tmp.PID of a dead PID whose NAME matches. */
	for (size_t i = 0; i < 4; i++) {
		snprintf(name, sizeof(name), names[i], (int)pids[i]);
		snprintf(path, sizeof(path), "%s/%s", dir, name);
		lp_test_write_file(path, "x", 1);
	}
	assert_int_equal(lp_tmp_remove_stale(dir, only_a, NULL), 1);
	for (size_t i = 0; i < 4; i++) {
		snprintf(name, sizeof(name), names[i], (int)pids[i]);
		snprintf(path, sizeof(path), "%s/%s", dir, name);
		assert_int_equal(stat(path, &st) == 0, i != 0);
		unlink(path);
	}
	assert_int_equal(lp_tmp_remove_stale("/nonexistent-dir", NULL, NULL), LP_EIO);
	free(dir);
	free(out);
}

static void test_rng_reproducible_and_geometric_mean(void **state)
{
	struct lp_rng a, b;
	double sum = 0;
	const int n = 200000;
	const double p = 0.01;

	lp_rng_seed(&a, 42);
	lp_rng_seed(&b, 42);
	for (int i = 0; i < 100; i++)
		assert_true(lp_rng_next(&a) == lp_rng_next(&b));
	for (int i = 0; i < n; i++) {
		uint64_t g = lp_rng_geometric(&a, p);
		assert_true(g >= 1);
		sum += (double)g;
	}
	/* mean 1/p = 100, sd of the mean = sqrt((1-p)/p^2 / n) ~ 0.22 */
	assert_true(fabs(sum / n - 100.0) < 5 * 0.23);
	for (int i = 0; i < 1000; i++)
		assert_true(lp_rng_below(&a, 7) < 7);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_errmsg),
		cmocka_unit_test(test_getline_long_lines_and_no_final_newline),
		cmocka_unit_test(test_peek_then_read),
		cmocka_unit_test(test_missing_file_message),
		cmocka_unit_test(test_out_is_atomic),
		cmocka_unit_test(test_tmp_files_removed),
		cmocka_unit_test(test_rng_reproducible_and_geometric_mean),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
