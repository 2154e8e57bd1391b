/* The trace registry: picks a format by name, extension or content, and
 * wraps the format's functions in the public reader and writer objects. */
#include "trace/trace-format.h"
#include "common/error.h"
#include "common/io.h"

#include <stdlib.h>
#include <string.h>

static const struct lp_trace_format *const formats[] = {
	&lp_trace_format_lpt,
	&lp_trace_format_text,
	&lp_trace_format_lackey,
};
#define NFORMATS (sizeof(formats) / sizeof(formats[0]))

struct lp_trace_reader {
	const struct lp_trace_format *fmt;
	struct lp_in *in;
	void *state;
	uint64_t count;
	int sticky_err; /* once damaged, stay damaged */
};

struct lp_trace_writer {
	const struct lp_trace_format *fmt;
	struct lp_out *out;
	void *state;
	bool wrote;        /* records or mappings went out already */
	bool set_mappings; /* lp_trace_writer_set_mappings() was called */
	uint64_t count;    /* records written */
};

static const struct lp_trace_format *by_name(const char *name)
{
	for (size_t i = 0; i < NFORMATS; i++)
		if (!strcmp(formats[i]->name, name))
			return formats[i];
	return NULL;
}

static const struct lp_trace_format *by_path(const char *path)
{
	const char *dot = strrchr(path, '.');
	const char *slash = strrchr(path, '/');

	if (!dot || (slash && dot < slash))
		return NULL;
	for (size_t i = 0; i < NFORMATS; i++)
		for (const char *const *e = formats[i]->extensions; *e; e++)
			if (!strcmp(dot, *e))
				return formats[i];
	return NULL;
}

const char *lp_trace_format_for_path(const char *path)
{
	const struct lp_trace_format *f = by_path(path);
	return f ? f->name : NULL;
}

int lp_trace_format_known(const char *name)
{
	return by_name(name) != NULL;
}

const char *lp_trace_format_names(void)
{
	static char names[128];

	if (!names[0])
		for (size_t i = 0; i < NFORMATS; i++) {
			if (i)
				strcat(names, ", ");
			strcat(names, formats[i]->name);
		}
	return names;
}

static int choose_reader_format(const struct lp_trace_format **out, struct lp_in *in,
				const char *path, const char *format)
{
	const uint8_t *head;
	ssize_t n;

	if (format) {
		if (!(*out = by_name(format)))
			return lp_seterr(LP_EINVAL, "unknown trace format '%s' (known: %s)",
					 format, lp_trace_format_names());
		return 0;
	}
	if ((*out = by_path(path)))
		return 0;
	n = lp_in_peek(in, &head, 64);
	if (n < 0)
		return (int)n;
	for (size_t i = 0; i < NFORMATS; i++)
		if (formats[i]->sniff(head, (size_t)n)) {
			*out = formats[i];
			return 0;
		}
	if (n >= 8 && !memcmp(head, "LOCPROFP", 8))
		return lp_seterr(LP_EFORMAT, "'%s' is a locprof profile, not a trace: 'locprof report' reads it",
				 lp_in_name(in));
	return lp_seterr(LP_EFORMAT, "'%s': cannot tell the trace format; name it with --from (%s)",
			 lp_in_name(in), lp_trace_format_names());
}

int lp_trace_reader_open(struct lp_trace_reader **out, const char *path, const char *format)
{
	struct lp_trace_reader *r = calloc(1, sizeof(*r));
	int err;

	if (!r)
		return LP_ENOMEM;
	err = lp_in_open(&r->in, path);
	if (err < 0)
		goto out_free;
	err = choose_reader_format(&r->fmt, r->in, path, format);
	if (err < 0)
		goto out_in;
	err = r->fmt->reader_open(r->in, &r->state);
	if (err < 0)
		goto out_in;
	*out = r;
	return 0;

out_in:
	lp_in_free(r->in);
out_free:
	free(r);
	return err;
}

ssize_t lp_trace_read(struct lp_trace_reader *r, struct lp_ref *buf, size_t cap)
{
	ssize_t n;

	if (r->sticky_err)
		return r->sticky_err;
	if (cap == 0)
		return lp_seterr(LP_EINVAL, "lp_trace_read: empty buffer");
	n = r->fmt->read(r->state, buf, cap);
	if (n > 0)
		r->count += (uint64_t)n;
	else if (n < 0)
		r->sticky_err = (int)n;
	return n;
}

uint64_t lp_trace_reader_count(const struct lp_trace_reader *r)
{
	return r->count;
}

const char *lp_trace_reader_format(const struct lp_trace_reader *r)
{
	return r->fmt->name;
}

const struct lp_mappings *lp_trace_reader_mappings(const struct lp_trace_reader *r)
{
	static const struct lp_mappings none;
	const struct lp_mappings *m = r->fmt->mappings ? r->fmt->mappings(r->state) : NULL;

	return m ? m : &none;
}

void lp_trace_reader_free(struct lp_trace_reader *r)
{
	if (!r)
		return;
	r->fmt->reader_free(r->state);
	lp_in_free(r->in);
	free(r);
}

int lp_trace_writer_open(struct lp_trace_writer **out, const char *path, const char *format)
{
	struct lp_trace_writer *w = calloc(1, sizeof(*w));
	int err;

	if (!w)
		return LP_ENOMEM;
	if (format)
		w->fmt = by_name(format);
	else if (!(w->fmt = by_path(path)) && !strcmp(path, "-"))
		w->fmt = by_name("text");
	if (!w->fmt) {
		err = format ? lp_seterr(LP_EINVAL, "unknown trace format '%s' (known: %s)",
					 format, lp_trace_format_names())
			     : lp_seterr(LP_EINVAL, "'%s': cannot tell the trace format from the "
					 "name; name it with --to (%s)", path, lp_trace_format_names());
		goto out_free;
	}
	err = lp_out_open(&w->out, path);
	if (err < 0)
		goto out_free;
	err = w->fmt->writer_open(w->out, &w->state);
	if (err < 0)
		goto out_out;
	*out = w;
	return 0;

out_out:
	lp_out_abort(w->out);
out_free:
	free(w);
	return err;
}

int lp_trace_writer_set_mappings(struct lp_trace_writer *w, const struct lp_mappings *m)
{
	if (w->wrote || w->set_mappings)
		return lp_seterr(LP_EINVAL, "'%s': mappings must be set once, before the first "
				 "record", lp_out_name(w->out));
	w->set_mappings = true;
	return w->fmt->set_mappings ? w->fmt->set_mappings(w->state, m) : 0;
}

int lp_trace_bad_line(const char *name, uint64_t lineno, const char *what, const char *at,
		      const char *stop)
{
	char tok[40];
	size_t n = strcspn(at, stop);

	if (n >= sizeof(tok))
		n = sizeof(tok) - 1;
	memcpy(tok, at, n);
	tok[n] = '\0';
	return lp_seterr(LP_EPARSE, "%s: line %llu: %s%s%s%s", name, (unsigned long long)lineno, what,
			 *tok ? " '" : "", tok, *tok ? "'" : "");
}

int lp_trace_too_large(const char *name, const char *unit, uint64_t n, uint64_t size)
{
	return lp_seterr(LP_ELIMIT, "%s: %s %llu: a reference of %llu bytes (at most %llu)", name,
			 unit, (unsigned long long)n, (unsigned long long)size,
			 (unsigned long long)LP_REF_SIZE_MAX);
}

int lp_trace_write(struct lp_trace_writer *w, const struct lp_ref *refs, size_t n)
{
	if (!n)
		return 0;
	/* what a reader would refuse is not written (a compare and a rarely
	 * taken branch per record) */
	for (size_t i = 0; i < n; i++)
		if (refs[i].size > LP_REF_SIZE_MAX && lp_ref_is_access(&refs[i]))
			return lp_trace_too_large(lp_out_name(w->out), "record", w->count + i + 1,
						  refs[i].size);
	w->wrote = true;
	w->count += n;
	return w->fmt->write(w->state, refs, n);
}

int lp_trace_writer_close(struct lp_trace_writer *w)
{
	int err, err2;

	if (!w)
		return 0;
	err = w->fmt->finish ? w->fmt->finish(w->state) : 0;
	w->fmt->writer_free(w->state);
	if (err < 0) {
		lp_out_abort(w->out);
	} else {
		err2 = lp_out_close(w->out);
		if (err2 < 0)
			err = err2;
	}
	free(w);
	return err;
}

void lp_trace_writer_abort(struct lp_trace_writer *w)
{
	if (!w)
		return;
	w->fmt->writer_free(w->state);
	lp_out_abort(w->out);
	free(w);
}
