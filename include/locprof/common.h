/* locprof/common.h - error codes, version, the reference record.
 *
 * The library never prints and never exits. Every function that can fail
 * returns 0 (or a non-negative count) on success and a negative LP_E* code
 * on failure; lp_errmsg() then gives a one-line, human-readable account of
 * the most recent failure in the calling thread ("line 12: bad address
 * 'zz'"), meant to be printed after the caller's own context.
 */
#ifndef LOCPROF_COMMON_H
#define LOCPROF_COMMON_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum lp_error {
	LP_OK = 0,
	LP_ENOMEM = -1,        /* out of memory */
	LP_EIO = -2,           /* a system call failed; errno-style detail in lp_errmsg() */
	LP_EFORMAT = -3,       /* not a file of the expected format (wrong magic) */
	LP_EVERSION = -4,      /* right format, unsupported version */
	LP_ECORRUPT = -5,      /* damaged content (checksum, impossible value) */
	LP_ETRUNCATED = -6,    /* input ends early; everything before was delivered */
	LP_EPARSE = -7,        /* malformed text input */
	LP_EINVAL = -8,        /* invalid argument or option value */
	LP_ELIMIT = -9,        /* a documented hard limit was reached */
	LP_EUNSUPPORTED = -10, /* not possible here (e.g. no PMU) */
};

/* Short description of an error code ("truncated input"). */
const char *lp_strerror(int err);

/* Detail of the last error raised in this thread, or lp_strerror() of it
 * when no detail was recorded. Valid until the next failing call. */
const char *lp_errmsg(void);

/* Version of the library, "MAJOR.MINOR.PATCH". */
const char *lp_version(void);

/* Output files are written as NAME.tmp.PID and renamed to NAME when
 * complete. lp_tmp_remove_all() unlinks the temporary files of the outputs
 * this process has open; it is async-signal-safe, for the handler of a
 * signal that ends the process. */
void lp_tmp_remove_all(void);

/* Other temporary paths (a socket, a directory, a link) that
 * lp_tmp_remove_all() removes too: files first, then directories, so a
 * directory tracked with its files goes as well. path must stay valid
 * until lp_tmp_untrack(); returns a slot, or -1 when the table is full (the
 * path is then only removed by its owner). */
int lp_tmp_track(char *path);
void lp_tmp_untrack(int slot);

/* Unlink the files NAME.tmp.PID in dir left by processes that no longer
 * exist (kill(PID, 0) fails with ESRCH) and whose NAME match accepts
 * (match NULL: every NAME). Returns how many were removed, or LP_EIO when
 * dir cannot be read. */
int lp_tmp_remove_stale(const char *dir, int (*match)(const char *name, void *ctx), void *ctx);

/* The kinds of record that travel in a reference stream. Allocation events
 * are interleaved with references so that later analyses can attribute
 * addresses to data objects. */
enum lp_ref_kind {
	LP_REF_READ = 0,
	LP_REF_WRITE = 1,
	LP_EV_ALLOC = 2, /* addr = block start, size = bytes, pc = call site */
	LP_EV_FREE = 3,  /* addr = block start, size = 0, pc = call site */
	/* One frame of the call stack of the allocation just before it in the
	 * stream (same thread): pc = a return address, addr and size 0. An
	 * allocation's frames follow it in a row, innermost first, from the
	 * caller of its call site's function up; at most
	 * LP_ALLOC_STACK_MAX - 1 (locprof/profile.h) are kept. */
	LP_EV_FRAME = 4,
};

/* Largest reference (load or store) a trace may hold, in bytes: readers
 * refuse a larger one, naming its line or record, since every analysis
 * walks each line a reference touches; writers split a larger one into
 * references of at most this size, aligned to it. Allocation events may
 * be of any size. */
#define LP_REF_SIZE_MAX ((uint64_t)1 << 20)

/* One reference (load or store) or allocation event. */
struct lp_ref {
	uint64_t addr;
	uint64_t pc;   /* 0 when unknown */
	uint64_t size; /* bytes accessed (>= 1 for references) */
	uint32_t tid;  /* thread, numbered from 0 in order of appearance */
	uint8_t kind;  /* enum lp_ref_kind */
};

static inline int lp_ref_is_access(const struct lp_ref *r)
{
	return r->kind <= LP_REF_WRITE;
}

#ifdef __cplusplus
}
#endif
#endif
