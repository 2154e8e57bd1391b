/* Shared by the libFuzzer harnesses of tests/fuzz: the readers take a
 * path, so each input is written to an in-memory file (memfd) and read
 * back through /proc/self/fd/N, without touching the disk. */
#ifndef LP_FUZZ_UTIL_H
#define LP_FUZZ_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The path of a file holding data[0, size); valid until the next call. */
static inline const char *fuzz_file(const uint8_t *data, size_t size)
{
	static int fd = -1;
	static char path[64];

	if (fd < 0) {
		if ((fd = memfd_create("locprof-fuzz", 0)) < 0) {
			perror("memfd_create");
			abort();
		}
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	if (ftruncate(fd, 0) < 0 || (size && pwrite(fd, data, size, 0) != (ssize_t)size)) {
		perror("fuzz input");
		abort();
	}
	return path;
}

/* data as a NUL-terminated string (for the parsers of text given in
 * memory); free() it. */
static inline char *fuzz_string(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (!s)
		abort();
	for (size_t i = 0; i < size; i++)
		s[i] = data[i] ? (char)data[i] : ' ';
	s[size] = '\0';
	return s;
}

#endif
