/* Choosing the sample sink for an output path. */
#include "collect/sink.h"

#include "common/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const struct lp_sample_sink_ops *lp_sample_sink_for_path(const char *path)
{
	/* .lpp profiles by default; the text sample list (readable, for
	 * debugging the runtime) for any other extension. */
	size_t n = strlen(path);

	if (n < 4 || strcmp(path + n - 4, ".lpp"))
		return &lp_sample_sink_text;
	return &lp_sample_sink_lpp;
}

int lp_collect_parse_maps(struct lp_mappings *m, const char *text, size_t len)
{
	const char *p = text, *end = text + len;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		char line[4096 + 256], perms[8] = "", path[4096] = "";
		unsigned long long start, stop, off;
		int err;

		if (n < sizeof(line)) {
			memcpy(line, p, n);
			line[n] = 0;
			/* start-end perms offset dev inode path */
			if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %4095[^\n]", &start, &stop, perms,
				   &off, path) >= 4 &&
			    perms[2] == 'x' && path[0] == '/') {
				err = lp_mappings_add(m, start, stop, off, path, NULL, 0);
				if (err < 0)
					return err;
			}
		}
		p += n + 1;
	}
	return 0;
}
