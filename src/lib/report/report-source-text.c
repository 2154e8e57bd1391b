/* The text of a source file named by the debug information, for annotating
 * it with its lines' misses. The file may have moved since the build (a
 * build tree on another machine, a container): each directory given is
 * tried with the path's tails, longest first (DIR/home/u/src/a.c,
 * DIR/u/src/a.c, DIR/src/a.c, DIR/a.c), before the path itself, so that
 * `--source-dir DIR` remaps a whole tree. */
#include <locprof/report.h>

#include "common/error.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Larger files are not sources anyone annotates by reading. */
#define SOURCE_MAX_BYTES (64u << 20)

struct lp_source_text_priv {
	struct lp_source_text pub;
	char *buf;
};

void lp_source_free(struct lp_source_text *t)
{
	struct lp_source_text_priv *p = (struct lp_source_text_priv *)t;

	if (!p)
		return;
	free(p->pub.path);
	free(p->pub.lines);
	free(p->buf);
	free(p);
}

static int regular_file(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* The first existing candidate, malloc'ed, or NULL. */
static char *find_source(const char *path, const char *const *dirs, size_t ndirs)
{
	for (size_t d = 0; d < ndirs; d++) {
		for (const char *tail = path; tail; tail = strchr(tail, '/')) {
			char *c;

			while (*tail == '/')
				tail++;
			if (!*tail)
				break;
			if (asprintf(&c, "%s/%s", dirs[d], tail) < 0)
				return NULL;
			if (regular_file(c))
				return c;
			free(c);
		}
	}
	return regular_file(path) ? strdup(path) : NULL;
}

/* Split buf (len bytes, NUL-terminated) into lines at '\n'; a last line
 * without a newline counts. */
static int split_lines(struct lp_source_text_priv *p, size_t len)
{
	size_t n = 0, cap = 0;

	for (size_t i = 0; i < len; i++)
		cap += p->buf[i] == '\n';
	if (!(p->pub.lines = malloc((cap + 1) * sizeof(*p->pub.lines))))
		return lp_seterr(LP_ENOMEM, "out of memory");
	for (char *s = p->buf; s < p->buf + len;) {
		char *nl = memchr(s, '\n', (size_t)(p->buf + len - s));

		if (nl) {
			*nl = '\0';
			if (nl > s && nl[-1] == '\r')
				nl[-1] = '\0';
		}
		p->pub.lines[n++] = s;
		s = nl ? nl + 1 : p->buf + len;
	}
	p->pub.n = n;
	return 0;
}

int lp_source_read(struct lp_source_text **out, const char *path, const char *const *dirs, size_t ndirs)
{
	struct lp_source_text_priv *p;
	struct stat st = { 0 };
	size_t len = 0;
	FILE *f = NULL;
	int err;

	*out = NULL;
	if (!(p = calloc(1, sizeof(*p))))
		return lp_seterr(LP_ENOMEM, "out of memory");
	if (!(p->pub.path = find_source(path, dirs, ndirs))) {
		err = lp_seterr(LP_EIO, "source file '%s' not found%s", path,
				ndirs ? " in the source directories nor at its path" : "");
		goto out_free;
	}
	if (!(f = fopen(p->pub.path, "rb"))) {
		err = lp_seterr(LP_EIO, "cannot open source file '%s': %s", p->pub.path, strerror(errno));
		goto out_free;
	}
	if (fstat(fileno(f), &st) < 0 || (uint64_t)st.st_size > SOURCE_MAX_BYTES) {
		err = st.st_size > SOURCE_MAX_BYTES
			      ? lp_seterr(LP_ELIMIT, "source file '%s' is larger than %u MiB", p->pub.path,
					  SOURCE_MAX_BYTES >> 20)
			      : lp_seterr(LP_EIO, "cannot read source file '%s': %s", p->pub.path, strerror(errno));
		goto out_close;
	}
	if (!(p->buf = malloc((size_t)st.st_size + 1))) {
		err = lp_seterr(LP_ENOMEM, "out of memory");
		goto out_close;
	}
	len = fread(p->buf, 1, (size_t)st.st_size, f);
	if (ferror(f)) {
		err = lp_seterr(LP_EIO, "cannot read source file '%s': %s", p->pub.path, strerror(errno));
		goto out_close;
	}
	p->buf[len] = '\0';
	if ((err = split_lines(p, len)) < 0)
		goto out_close;
	fclose(f);
	*out = &p->pub;
	return 0;
out_close:
	fclose(f);
out_free:
	lp_source_free(&p->pub);
	return err;
}
