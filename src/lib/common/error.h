/* Internal: recording the detail of an error for lp_errmsg(). */
#ifndef LP_COMMON_ERROR_H
#define LP_COMMON_ERROR_H

#include <locprof/common.h>

/* Record a formatted detail for err and return err, so that failure sites
 * read `return lp_seterr(LP_EPARSE, "line %lu: ...", n);`. */
int lp_seterr(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Record strerror(errno) after a prefix; returns LP_EIO (LP_ENOMEM for ENOMEM). */
int lp_seterr_errno(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
