/* The collector protocol: how a live backend inside the target (the
 * instrumentation runtime, the valgrind tool) hands its samples, references
 * and events to `locprof record`, which turns them into .lpp profiles and
 * .lpt traces with the library.
 *
 * Why a separate collector process rather than files written by the target:
 *  - everything already sent survives a crash or SIGKILL of the target;
 *  - the target needs no file-format or compression code (the valgrind tool
 *    cannot even use libc), and compression runs on another core.
 *
 * Transport: the collector listens on a Unix stream socket whose path is in
 * LOCPROF_SOCKET. Every thread of every process opens its own connection
 * on its first slow-path event (a forked child reconnects), so no sender
 * ever takes a lock and messages of any size never interleave. A connection
 * starts with a HELLO naming the process and thread. The collector writes
 * one profile or trace per process (named by pid for children).
 * All integers are little-endian, as on the only supported architecture.
 * This header is freestanding: the runtime and the valgrind tool include it.
 */
#ifndef LP_COLLECT_PROTOCOL_H
#define LP_COLLECT_PROTOCOL_H

#include <stdint.h>

#define LP_MSG_MAGIC 0x4d504cu /* "LPM" */
#define LP_MSG_VERSION 1
#define LP_MSG_MAX (1u << 20) /* largest message a collector accepts */

/* The environment variables carrying the socket path and the settings.
 * Absent LOCPROF_SOCKET, the runtime is inert and the program runs as if
 * uninstrumented (one predictable branch per access). */
#define LP_ENV_SOCKET "LOCPROF_SOCKET"
#define LP_ENV_MODE "LOCPROF_MODE"     /* "sample" (default) or "trace" */
#define LP_ENV_RATE "LOCPROF_RATE"     /* sampling rate, e.g. "1e-4" */
#define LP_ENV_LINES "LOCPROF_LINES"   /* line sizes, e.g. "64,128" */
#define LP_ENV_SEED "LOCPROF_SEED"     /* random seed */
#define LP_ENV_FLUSH "LOCPROF_FLUSH_MS" /* flush interval in milliseconds */

enum lp_msg_type {
	LP_MSG_HELLO = 1,   /* a process starts (or a child after fork) */
	LP_MSG_MAPS = 2,    /* a piece of /proc/self/maps text */
	LP_MSG_SAMPLES = 3, /* completed or dangling samples */
	LP_MSG_REFS = 4,    /* trace mode: references and allocation events */
	LP_MSG_THREAD = 5,  /* a thread ends: its reference count */
	LP_MSG_BYE = 6,     /* a process ends normally or by a signal */
	LP_MSG_ALLOCS = 7,  /* sample mode: allocation events */
};

struct lp_msg_header {
	uint32_t magic_version; /* LP_MSG_MAGIC << 8 | LP_MSG_VERSION */
	uint32_t type;
	uint32_t length; /* whole message, header included */
	uint32_t pid;
	uint32_t tid;    /* kernel thread id of the sender */
};

struct lp_msg_hello {
	struct lp_msg_header h;
	uint32_t ppid;
	uint32_t nlines;
	uint32_t line_size[4];
	double rate;
	uint64_t seed;
	uint32_t mode; /* 0 sample, 1 trace */
	uint32_t cmdline_len; /* bytes of NUL-separated argv that follow */
	/* char cmdline[cmdline_len]; truncated to fit the message */
};

/* One sample: begin/end are per-thread reference counts (the reference
 * clock). end == LP_SAMPLE_DANGLING when the line was not touched again
 * before the thread or process ended. */
#define LP_SAMPLE_DANGLING UINT64_MAX
struct lp_msg_sample {
	uint64_t begin, end;
	uint64_t pc, addr;
	uint32_t thread; /* runtime's thread number, 0 = main thread */
	uint8_t size, kind, line_index, pad;
};

struct lp_msg_samples {
	struct lp_msg_header h;
	uint32_t count, pad;
	/* struct lp_msg_sample samples[count]; */
};

/* Trace mode records: the fields of struct lp_ref, packed. */
struct lp_msg_ref {
	uint64_t addr, pc, size;
	uint32_t thread;
	uint32_t kind;
};

struct lp_msg_refs {
	struct lp_msg_header h;
	uint32_t count, pad;
	/* struct lp_msg_ref refs[count]; */
};

struct lp_msg_thread {
	struct lp_msg_header h;
	uint32_t thread, pad;
	uint64_t references;
};

struct lp_msg_bye {
	struct lp_msg_header h;
	int32_t status;  /* exit status, or -signal when killed by a signal */
	uint32_t pad;
	uint64_t references; /* all threads */
};


#endif
