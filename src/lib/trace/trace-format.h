/* Internal: the table of function pointers every trace format provides.
 * One file per format (trace-<name>.c); register it in formats[] of
 * trace.c. Readers return records in batches so that the per-record cost of
 * the indirect call disappears. */
#ifndef LP_TRACE_FORMAT_H
#define LP_TRACE_FORMAT_H

#include <locprof/mapping.h>
#include <locprof/trace.h>
#include <stdbool.h>

struct lp_in;
struct lp_out;

struct lp_trace_format {
	const char *name;
	const char *const *extensions; /* NULL-terminated, with the dot */
	/* Does this input start like this format? head holds up to 64 bytes. */
	bool (*sniff)(const uint8_t *head, size_t len);

	/* Reading: open consumes the header; read fills buf like
	 * lp_trace_read(). The lp_in stays owned by the caller. */
	int (*reader_open)(struct lp_in *in, void **state);
	ssize_t (*read)(void *state, struct lp_ref *buf, size_t cap);
	void (*reader_free)(void *state);

	/* Writing: finish writes any trailer; it is called once before the
	 * output is closed, and not at all when writing is aborted. */
	int (*writer_open)(struct lp_out *out, void **state);
	int (*write)(void *state, const struct lp_ref *refs, size_t n);
	int (*finish)(void *state); /* NULL: nothing to write */
	void (*writer_free)(void *state);

	/* Optional (NULL: the format cannot carry mappings and ignores
	 * them). set_mappings is called at most once, before any write;
	 * mappings returns NULL when the trace carries none. */
	int (*set_mappings)(void *state, const struct lp_mappings *m);
	const struct lp_mappings *(*mappings)(void *state);
};

/* The value of hex digit c, or -1 if c is not one. */
static inline int lp_trace_hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c |= 0x20;
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* The error for a bad line of a text-like trace: LP_EPARSE with
 * "NAME: line N: WHAT 'TOKEN'", TOKEN being the text at `at` up to the
 * first character of `stop` (left out when empty). */
int lp_trace_bad_line(const char *name, uint64_t lineno, const char *what, const char *at,
		      const char *stop);

/* The error for a reference above LP_REF_SIZE_MAX bytes at line (or
 * record) n of input `name`: LP_ELIMIT, with the detail set. */
int lp_trace_too_large(const char *name, const char *unit, uint64_t n, uint64_t size);

extern const struct lp_trace_format lp_trace_format_lpt;
extern const struct lp_trace_format lp_trace_format_text;
extern const struct lp_trace_format lp_trace_format_lackey;

#endif
