/* Internal: buffered file input and output shared by every file format.
 *
 * lp_in reads a file or stdin ("-") with look-ahead (so a format can be
 * recognised from a pipe) and line reading. lp_out writes a file under a
 * temporary name in the same directory and renames it on a successful close,
 * so that no reader ever sees a half-written file under the real name; "-"
 * writes stdout directly. */
#ifndef LP_COMMON_IO_H
#define LP_COMMON_IO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct lp_in;
struct lp_out;

int lp_in_open(struct lp_in **out, const char *path);
void lp_in_free(struct lp_in *in);
const char *lp_in_name(const struct lp_in *in);

/* Make up to want bytes available without consuming them; *p points at
 * them. Returns how many are available (less than want only at the end of
 * the input), or a negative LP_E* code. */
ssize_t lp_in_peek(struct lp_in *in, const uint8_t **p, size_t want);

/* Consume n bytes that lp_in_peek() made available (n <= what it returned),
 * for formats that decode straight from the buffer instead of copying. */
void lp_in_consume(struct lp_in *in, size_t n);

/* Read exactly n bytes unless the input ends first. Returns the count read
 * or a negative LP_E* code. */
ssize_t lp_in_read(struct lp_in *in, void *dst, size_t n);

/* Next line without its newline (and without a trailing '\r'),
 * NUL-terminated, valid until the next call. Returns 1 and sets *line, 0 at
 * the end of the input (*line = NULL), or a negative LP_E* code. A last line
 * without a newline is still returned. */
ssize_t lp_in_getline(struct lp_in *in, char **line);

/* Bytes consumed so far. */
uint64_t lp_in_offset(const struct lp_in *in);

int lp_out_open(struct lp_out **out, const char *path);
int lp_out_write(struct lp_out *o, const void *src, size_t n);
/* Room for at least n bytes at the end of the buffer; commit what was used
 * with lp_out_commit(). For formatting straight into the buffer. */
char *lp_out_reserve(struct lp_out *o, size_t n);
void lp_out_commit(struct lp_out *o, size_t used);
int lp_out_printf(struct lp_out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
uint64_t lp_out_offset(const struct lp_out *o);
const char *lp_out_name(const struct lp_out *o);
/* Flush, close and rename into place; frees o. On failure the temporary
 * file is removed. */
int lp_out_close(struct lp_out *o);
/* Remove the temporary file and free o. */
void lp_out_abort(struct lp_out *o);

#endif
