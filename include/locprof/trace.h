/* locprof/trace.h - reading and writing reference traces.
 *
 * Three formats, chosen by name or by file extension, and for input also
 * by content when reading a pipe:
 *   "lpt"    locprof's own compressed binary format (.lpt; docs/formats.md)
 *   "text"   one reference per line: "R 0x7ffc1a2b 8 0x401136" (.txt, .trace)
 *   "lackey" valgrind --tool=lackey --trace-mem=yes output (.lackey)
 * The path "-" means stdin or stdout. Readers and writers stream: memory use
 * does not grow with the trace.
 */
#ifndef LOCPROF_TRACE_H
#define LOCPROF_TRACE_H

#include <locprof/common.h>
#include <locprof/mapping.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

struct lp_trace_reader;
struct lp_trace_writer;

/* Name of the format for a file name ("lpt", "text", "lackey"), or NULL when
 * the extension is not known. */
const char *lp_trace_format_for_path(const char *path);

/* Nonzero if name is a known format. */
int lp_trace_format_known(const char *name);

/* Comma-separated list of format names, for messages. */
const char *lp_trace_format_names(void);

/* Open a trace for reading. format may be NULL: then the extension decides,
 * and failing that the first bytes of the content. */
int lp_trace_reader_open(struct lp_trace_reader **out, const char *path,
			 const char *format);

/* Read up to cap records into buf. Returns the number read (> 0), 0 at the
 * end of the trace, or a negative LP_E* code. After LP_ETRUNCATED or
 * LP_ECORRUPT every record before the damage has already been returned;
 * the caller may keep its results and should warn. */
ssize_t lp_trace_read(struct lp_trace_reader *r, struct lp_ref *buf, size_t cap);

/* Records delivered so far. */
uint64_t lp_trace_reader_count(const struct lp_trace_reader *r);

/* Name of the format being read. */
const char *lp_trace_reader_format(const struct lp_trace_reader *r);

/* The executable mappings the trace carries (an empty list when it has
 * none, or when its format cannot carry them: text, lackey). Valid until
 * lp_trace_reader_free(). */
const struct lp_mappings *lp_trace_reader_mappings(const struct lp_trace_reader *r);

void lp_trace_reader_free(struct lp_trace_reader *r);

/* Open a trace for writing. format may be NULL (decided by extension).
 * A file is written under a temporary name and only renamed to path by a
 * successful lp_trace_writer_close(), so an interrupted run never leaves a
 * half-written file under the real name. */
int lp_trace_writer_open(struct lp_trace_writer **out, const char *path,
			 const char *format);

/* Record the executable mappings of the traced process in the trace, so
 * that its pcs can be symbolised later. Must come before the first
 * lp_trace_write() (LP_EINVAL otherwise, or when called twice). Formats
 * that cannot carry mappings (text, lackey) accept and ignore them. */
int lp_trace_writer_set_mappings(struct lp_trace_writer *w, const struct lp_mappings *m);

/* Append records. A reference (load or store) of more than LP_REF_SIZE_MAX
 * bytes is refused with LP_ELIMIT, before any of the batch is written, as
 * every reader would refuse it. */
int lp_trace_write(struct lp_trace_writer *w, const struct lp_ref *refs, size_t n);

/* Finish the trace (trailer, flush, rename) and free the writer. On failure
 * the temporary file is removed. */
int lp_trace_writer_close(struct lp_trace_writer *w);

/* Discard a trace being written: remove the temporary file, free. */
void lp_trace_writer_abort(struct lp_trace_writer *w);

#ifdef __cplusplus
}
#endif
#endif
