/* locprof record: what the command hands to a backend.
 *
 * cmd-record.c parses the options and picks a backend; each backend
 * (record-inst.c: programs built with `locprof cc`; record-valgrind.c:
 * unmodified binaries under valgrind; record-pmu.c: unmodified binaries
 * under ptrace with counters and watchpoints) runs the program and writes
 * the same outputs. A backend that is not linked into this build is simply
 * absent: its symbol is weak and cmd-record.c says so in one line.
 */
#ifndef LP_CLI_RECORD_H
#define LP_CLI_RECORD_H

#include <locprof/recorder.h>

#include <limits.h>
#include <stdint.h>

#define RECORD_MAX_BACKEND_OPTS 16

/* --max-samples by default: a profile of more samples adds nothing a user
 * can see (a ratio's sampling error is 0.07 points at 2 million), but its
 * memory and time do grow (report: about 700 bytes and 7 us a sample), and
 * a long run at a fixed rate would otherwise hold them all. */
#define RECORD_MAX_SAMPLES 2000000

struct record_request {
	struct lp_record_options opts; /* mode, rate, line sizes, seed, output */
	uint64_t target_samples;       /* --samples N: 0 = use opts.rate */
	uint64_t max_samples;          /* --max-samples N (inst backend): 0 = no cap */
	int max_samples_given;
	const char *counter;           /* --counter (pmu backend): NULL = default */
	uint32_t max_skid;             /* --max-skid (pmu backend) */
	const char *backend_opts[RECORD_MAX_BACKEND_OPTS]; /* -X OPT, verbatim */
	unsigned nbackend_opts;
	int quiet;
	/* the region of interest (record-region.c) */
	const char *start_at, *stop_at; /* --start-at, --stop-at FUNC */
	uint64_t skip;                  /* --skip N */
	int no_markers;                 /* --whole-run */
	char *const *argv;             /* PROGRAM ARGS..., NULL-terminated */
	char prog[PATH_MAX];           /* PROGRAM resolved as execvp would */
};

struct record_backend {
	const char *name;
	const char *summary;
	/* Check the request before anything runs: NULL if fine, else a
	 * message for a usage error. May be NULL. */
	const char *(*check)(const struct record_request *req);
	/* Check what the options cannot say before the program runs (is it
	 * instrumented?): CLI_OK, or an exit status after one error line.
	 * May be NULL. */
	int (*ready)(const struct record_request *req);
	/* Run the program and write the outputs; returns locprof's exit
	 * status (docs/commands/record.md, "Exit status"). */
	int (*run)(const struct record_request *req);
};

extern const struct record_backend record_backend_inst;
extern const struct record_backend record_backend_valgrind __attribute__((weak));
extern const struct record_backend record_backend_pmu __attribute__((weak));

/* The shared collector loop (record-collect.c): start the collector,
 * execute PATH with exec_argv and the collector's environment plus
 * extra_env (both NULL-terminated; extra_env may be NULL), pass
 * ^C/TERM/HUP on, wait for the program and for every connection to end,
 * finish the outputs and print the summary (unless quiet; nothing is
 * printed when nothing connected). *connections gets the number of
 * connections (one per instrumented thread), *ran whether the program
 * was executed at all. Returns locprof's exit
 * status: the program's, 128+N for signal N, 127 if it could not be
 * executed, CLI_ERROR if the collector failed (all reported). */
int record_with_collector(const struct record_request *req, const char *path,
			  char *const *exec_argv, char *const *extra_env, uint64_t *connections,
			  int *ran);

/* The one summary line per output, shared by every backend. exited: the
 * exit status wait() gave for x's process when x is the image of the
 * process locprof started and it exited normally, else -1 (an image with
 * no BYE then lost its connection, not its life). */
void record_print_output(const struct lp_record_output *x, const struct record_request *req, int exited);
/* After the outputs' lines: where a run left three profiles or more, or
 * another process's holds more references than the program's, a line
 * naming the profile with the most (nothing with -q). */
void record_busiest_output(const struct record_request *req, const struct lp_record_output *outs, size_t nout);

/* Valgrind's messages through a pipe that a thread drains to stderr,
 * keeping back valgrind 3.19's lines about clang's DWARF 5 and saying
 * how many at the end (record-vglog.c): start gives the pipe's write end
 * for --log-fd (-1: none, valgrind then writes to stderr itself); finish,
 * after the run, closes it, waits for the thread and says the count
 * (unless quiet). */
int record_vglog_start(void);
void record_vglog_finish(int quiet);

/* Resolve PROGRAM as execvp would; 0 or -1 with errno. */
int record_find_program(const char *prog, char *buf, size_t len);

/* record-prepare.c, before the program starts. Each returns CLI_OK or an
 * exit status after one error line. Check that OUT can be created in its
 * directory and clear the stale temporary files of killed recordings: */
int record_prepare_output(const struct record_request *req);
/* An existing OUT becomes OUT.old: */
int record_keep_old_output(const struct record_request *req);

/* record-region.c: the region of interest into req->opts (after
 * record_find_program): CLI_OK, or an exit status after one error line. */
int record_region_prepare(struct record_request *req, const char *backend);
/* The summary line of an output's region, when there is one. */
void record_region_print(const struct record_request *req, const struct lp_record_output *x);
/* record-mpi.c: under an MPI launcher, 1 and the rank and world size
 * (0: unknown) from its environment (OMPI_COMM_WORLD_RANK, PMI_RANK,
 * PMIX_RANK), else 0. */
int record_mpi_rank(uint32_t *rank, uint32_t *size);
/* OUT with the rank before its extension (prof.lpp -> prof.rank3.lpp);
 * malloc'd, NULL when out of memory. */
char *record_rank_output(const char *out, uint32_t rank);

/* Monotonic seconds. */
double record_now(void);

#endif
