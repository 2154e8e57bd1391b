/* Choosing the sample sink for an output path. */
#include "collect/sink.h"

#include "common/error.h"

#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const struct lp_sample_sink_ops *lp_sample_sink_for_path(const char *path)
{
	/* .lpp profiles by default; the text sample list (readable, for
	 * debugging the runtime) for any other extension. */
	size_t n = strlen(path);

	if (n < 4 || strcmp(path + n - 4, ".lpp"))
		return &lp_sample_sink_text;
	return &lp_sample_sink_lpp;
}

/* The GNU build-id of the ELF file at path into out (at most cap bytes):
 * its length, or 0 when the file cannot be read or has none. Recorded
 * with each mapping so that a report can tell the file that ran from one
 * rebuilt at the same path since (src/lib/symbol/symbol.c). */
static size_t file_build_id(const char *path, uint8_t *out, size_t cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	const void *bits;
	ssize_t n = 0;
	Elf *elf;

	if (fd < 0)
		return 0;
	elf_version(EV_CURRENT);
	if ((elf = elf_begin(fd, ELF_C_READ_MMAP, NULL))) {
		n = dwelf_elf_gnu_build_id(elf, &bits);
		if (n > 0 && (size_t)n <= cap)
			memcpy(out, bits, (size_t)n);
		elf_end(elf);
	}
	close(fd);
	return n > 0 && (size_t)n <= cap ? (size_t)n : 0;
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
				uint8_t bid[LP_BUILD_ID_MAX];
				size_t blen = file_build_id(path, bid, sizeof(bid));

				err = lp_mappings_add(m, start, stop, off, path, bid, blen);
				if (err < 0)
					return err;
			}
		}
		p += n + 1;
	}
	return 0;
}
