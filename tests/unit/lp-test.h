/* Shared helpers for the cmocka unit tests. */
#ifndef LP_TEST_H
#define LP_TEST_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A fresh path in a per-test temporary directory; free() it. */
static inline char *lp_test_path(const char *name)
{
	static char dir[64];
	char *p;

	if (!dir[0]) {
		snprintf(dir, sizeof(dir), "/tmp/locprof-test-XXXXXX");
		if (!mkdtemp(dir))
			abort();
	}
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

#endif
