/* Error codes and the per-thread detail message behind lp_errmsg(). */
#include "common/error.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#ifndef LP_VERSION_STRING
#define LP_VERSION_STRING "0.0.0"
#endif

static _Thread_local char errmsg[512];
static _Thread_local int errmsg_code;

const char *lp_strerror(int err)
{
	switch (err) {
	case LP_OK: return "success";
	case LP_ENOMEM: return "out of memory";
	case LP_EIO: return "input/output error";
	case LP_EFORMAT: return "not a file of the expected format";
	case LP_EVERSION: return "unsupported format version";
	case LP_ECORRUPT: return "corrupt data";
	case LP_ETRUNCATED: return "truncated input";
	case LP_EPARSE: return "malformed input";
	case LP_EINVAL: return "invalid argument";
	case LP_ELIMIT: return "limit reached";
	case LP_EUNSUPPORTED: return "not supported here";
	}
	return "unknown error";
}

const char *lp_errmsg(void)
{
	return errmsg[0] ? errmsg : lp_strerror(errmsg_code);
}

const char *lp_version(void)
{
	return LP_VERSION_STRING;
}

int lp_seterr(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(errmsg, sizeof(errmsg), fmt, ap);
	va_end(ap);
	errmsg_code = err;
	return err;
}

int lp_seterr_errno(const char *fmt, ...)
{
	int saved = errno;
	int err = saved == ENOMEM ? LP_ENOMEM : LP_EIO;
	va_list ap;
	size_t len;

	va_start(ap, fmt);
	vsnprintf(errmsg, sizeof(errmsg), fmt, ap);
	va_end(ap);
	len = strlen(errmsg);
	snprintf(errmsg + len, sizeof(errmsg) - len, ": %s", strerror(saved));
	errmsg_code = err;
	errno = saved;
	return err;
}
