/* locprof/recorder.h - collecting profiles and traces from live programs.
 *
 * The recorder is the collector side of the protocol in
 * src/lib/collect/protocol.h (docs/formats.md, "Collector protocol"): it
 * listens on a Unix socket in a private temporary directory, the caller
 * starts the program with lp_recorder_env() in its environment, and
 * lp_recorder_poll() receives what every thread of every process of the
 * program sends. Each process image gets one output: a sample profile in
 * sample mode, a reference trace in trace mode. The library prints nothing:
 * lp_recorder_outputs() says what was written. Backends that run inside
 * locprof use lp_recorder_new_direct() and the lp_recorder_image_*() calls
 * below instead of the socket.
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
	/* Sample mode at a fixed rate (target_samples 0, no phases): 0, or
	 * keep at most this many sampled references per process: past it the
	 * runtime halves the rate online, and the samples kept, as for
	 * target_samples (lp_record_output.capped says it did). Only a
	 * runtime that thins by levels honours it (the inst backend's). */
	uint64_t max_samples;
	/* Sample mode: the region of interest (docs/commands/record.md),
	 * given to the program in lp_recorder_env(). region: what it is, in
	 * words, for the profile; NULL: the whole run, and the rest unused.
	 * region_outside: the run begins outside the region (markers,
	 * --start-at). region_start_at/stop_at: NULL, or the function whose
	 * entry starts/stops the region in the main executable, as "ADDR
	 * NAME": its link-time address in hex and its name as valgrind
	 * gives it (demangled, with parameters). region_skip: each thread's
	 * first N references in the region are left out. region_program:
	 * the program's real path; the settings apply to its images only
	 * (a program it execs is recorded whole). The strings must outlive
	 * the recorder. */
	const char *region;
	const char *region_program;
	int region_outside;
	const char *region_start_at, *region_stop_at;
	uint64_t region_skip;
	/* Sample mode, inst backend: phase-guided sampling (record --phases;
	 * docs/runtime.md, "Phase detection"). phase_interval: references per
	 * interval, 0 = off; phase_samples: sampled references per phase at
	 * the full rate (0: 4000); phase_rate: the rate in a phase that has
	 * them (< 0: rate / 32). */
	uint64_t phase_interval;
	uint64_t phase_samples;
	double phase_rate;
	/* mpi: 1 for an MPI rank, whose rank and world size (0: unknown) go
	 * into every profile of the recording (lp_profile.mpi_rank, mpi_size) */
	int mpi;
	uint32_t mpi_rank, mpi_size;
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
	int capped;           /* max_samples lowered the rate to `rate` */
	int region;              /* the image recorded a region of interest: */
	uint64_t region_skipped; /* references outside it */
	uint64_t region_entries; /* times it was entered */
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

/* ---- backends inside locprof ----------------------------------------------
 * A backend that observes the program from the locprof process itself (the
 * pmu sampler: ptrace) hands each process image to the recorder directly,
 * with no socket, and gets the same outputs: names, profiles or traces,
 * summaries. A recorder made by lp_recorder_new_direct() takes only these
 * calls (and lp_recorder_outputs/finish/free); images are numbered 0, 1,
 * ... in the order they begin, the first one gets the output name itself. */

struct lp_mappings;

/* One process image: the program started, a forked child, or the program
 * an exec started. */
struct lp_record_image {
	uint32_t pid, ppid;
	const char *cmdline;     /* NUL-separated argv */
	size_t cmdline_len;
	uint64_t start_ns;       /* CLOCK_REALTIME */
	const char *source;      /* the profile's source, e.g. "pmu" */
	uint64_t window;         /* the profile's time window; 0: one, the whole run */
};

/* A sampled reference. Times count the references of the image's threads:
 * begin those before the sampled one, end those before the one that next
 * touched its line (end > begin), or LP_RECORD_DANGLING. */
#define LP_RECORD_DANGLING UINT64_MAX
struct lp_record_sample {
	uint64_t begin, end;
	uint64_t pc, addr;
	uint64_t reuse_pc;       /* pc of the reusing access; 0 when dangling */
	uint64_t reuse_addr;     /* the address it touched in the line; 0 when
				  * dangling or unknown (the pmu backend's
				  * breakpoints do not say) */
	uint32_t thread;         /* the image's thread number, 0 = first */
	uint32_t size;           /* bytes accessed */
	uint8_t kind;            /* LP_REF_READ or LP_REF_WRITE */
	uint8_t line_index;      /* index into lp_record_options.line_size */
};

/* How an image ended. */
struct lp_record_image_end {
	uint64_t references;         /* all its threads' */
	uint32_t threads;            /* threads it had, over its life */
	const uint64_t *thread_refs; /* references of each, [threads] */
	int status;                  /* exit status, or -signal */
	int exec;                    /* it ended by execve (status 0) */
};

int lp_recorder_new_direct(struct lp_recorder **out, const struct lp_record_options *o);

/* The recorder's mode: what its images take (samples or references). */
enum lp_record_mode lp_recorder_mode(const struct lp_recorder *r);

/* A new image; *id gets its number. Its output opens now (sample mode) or
 * with its first 2^20 references or its end (trace mode: by then the
 * mappings the dynamic loader adds are known, and the trace's header
 * carries them). */
int lp_recorder_image_begin(struct lp_recorder *r, const struct lp_record_image *img, uint32_t *id);

/* /proc/PID/maps text (len bytes): its executable file mappings that the
 * image does not have yet are added, for symbolising pcs later. */
int lp_recorder_image_maps(struct lp_recorder *r, uint32_t id, const char *text, size_t len);

int lp_recorder_image_samples(struct lp_recorder *r, uint32_t id, const struct lp_record_sample *s,
			      size_t n);

/* Trace mode: references in clock order (tid: the image's thread number). */
int lp_recorder_image_refs(struct lp_recorder *r, uint32_t id, const struct lp_ref *refs, size_t n);

/* Allocation events (LP_EV_ALLOC, LP_EV_FREE; tid: the image's thread
 * number), each allocation followed by the LP_EV_FRAME records of its
 * call stack. Sample mode: into the profile's events and stack table
 * (times unknown); trace mode: into the reference stream, after the
 * references handed so far. */
int lp_recorder_image_events(struct lp_recorder *r, uint32_t id, const struct lp_ref *ev, size_t n);

/* The image ended: its output is finished and renamed into place now, so
 * the outputs of images that ended survive a crash of the rest. */
int lp_recorder_image_end(struct lp_recorder *r, uint32_t id, const struct lp_record_image_end *end);

#ifdef __cplusplus
}
#endif
#endif
