/* locprof/recorder.h - collecting profiles and traces from live programs.
 *
 * The recorder is the collector side of the protocol in
 * src/lib/collect/protocol.h (docs/formats.md, "Collector protocol"): it
 * listens on a Unix socket in a private temporary directory, the caller
 * starts the program with lp_recorder_env() in its environment, and
 * lp_recorder_poll() receives what every thread of every process of the
 * program sends. Each process image gets one output: a sample profile in
 * sample mode, a reference trace in trace mode. The library prints nothing:
 * lp_recorder_outputs() says what was written.
 */
#ifndef LOCPROF_RECORDER_H
#define LOCPROF_RECORDER_H

#include <locprof/common.h>

#ifdef __cplusplus
extern "C" {
#endif

enum lp_record_mode { LP_RECORD_SAMPLE = 0, LP_RECORD_TRACE = 1 };

struct lp_record_options {
	enum lp_record_mode mode;
	double rate;            /* sample mode: probability of sampling a reference */
	uint32_t line_size[4];  /* ascending powers of two */
	uint32_t nlines;        /* 1..4 */
	uint64_t seed;
	uint32_t flush_ms;      /* the target sends at least this often */
	const char *output;     /* first process; others get <stem>.<pid><ext> */
	const char *trace_format; /* trace mode: NULL = by extension */
	/* Sample mode: 0, or aim at about this many sampled references per
	 * process over the whole run. rate is then the starting rate; the
	 * runtime halves it (and the samples kept) whenever 2N would be kept,
	 * and each output's final rate is in lp_record_output.rate. */
	uint64_t target_samples;
};

/* What one process image produced. */
struct lp_record_output {
	uint32_t pid, ppid;
	char *path;
	uint64_t samples;     /* sample mode: all samples, dangling included */
	uint64_t dangling;
	uint64_t references;  /* sum over the threads' reference counts */
	uint64_t traced;      /* trace mode: references written */
	uint64_t allocs;      /* allocation events */
	uint32_t threads;
	int ended;            /* a BYE arrived (otherwise killed or cut short) */
	int status;           /* from the BYE: exit status, or -signal */
	int exec;             /* the image ended by execve (status 0) */
	int error;            /* 0, or the LP_E* code that stopped this output */
	double rate;          /* sample mode: the sampling rate of the samples kept */
};

struct lp_recorder;

int lp_recorder_new(struct lp_recorder **out, const struct lp_record_options *o);

/* "NAME=value" strings to add to the program's environment, NULL-terminated;
 * owned by the recorder. */
char *const *lp_recorder_env(const struct lp_recorder *r);

/* The pid of the program started: its first image gets the output name
 * itself, every other process <stem>.<pid><ext>. Without this call the
 * first process to connect gets it. */
void lp_recorder_set_main_pid(struct lp_recorder *r, uint32_t pid);

/* Wait up to timeout_ms for connections and messages and handle them.
 * Returns the number of open connections, or a negative LP_E* code. */
int lp_recorder_poll(struct lp_recorder *r, int timeout_ms);

/* Connections accepted so far (0: the program never ran instrumented code). */
uint64_t lp_recorder_connections(const struct lp_recorder *r);

/* Finish every output (close files, rename them into place). Returns 0 or
 * the first error; the outputs say which failed. */
int lp_recorder_finish(struct lp_recorder *r);

/* The outputs, in order of first contact. Valid until lp_recorder_free(). */
size_t lp_recorder_outputs(const struct lp_recorder *r, const struct lp_record_output **out);

/* Remove the temporary files (NAME.tmp.PID) that recordings to output
 * killed before they could clean up left in output's directory: those of
 * output and of the names its other processes get, whose PID no longer
 * exists. Returns how many were removed, or a negative LP_E* code. */
int lp_recorder_remove_stale(const char *output);

/* Close the socket, remove the temporary directory, abort unfinished
 * outputs, free. Accepts NULL. */
void lp_recorder_free(struct lp_recorder *r);

#ifdef __cplusplus
}
#endif
#endif
