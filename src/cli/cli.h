/* The locprof command: shared declarations of the front end.
 *
 * Each subcommand lives in src/cli/cmd-<name>.c and defines
 *     const struct cli_command cmd_<name>;
 * declared below and listed, one line each, in main.c's table.
 * Data goes to stdout; messages to stderr as "locprof: error: ...". */
#ifndef LP_CLI_H
#define LP_CLI_H

#include <locprof/locprof.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>

/* Exit statuses, documented in the README. */
enum {
	CLI_OK = 0,
	CLI_ERROR = 1,   /* nothing useful was produced */
	CLI_USAGE = 2,   /* bad command line */
	CLI_PARTIAL = 3, /* input was damaged; output covers what was readable */
};

struct cli_command {
	const char *name;
	const char *summary; /* one line, for `locprof help` */
	const char *usage;   /* the whole help text */
	const char *alias;   /* another name that runs it (an older name kept
			      * so that scripts keep working), or NULL */
	int (*run)(int argc, char **argv); /* argv[0] is the command name */
};

/* The commands (main.c's table). */
extern const struct cli_command cmd_annotate, cmd_cc, cmd_convert, cmd_cxx, cmd_diff, cmd_dump,
	cmd_predict, cmd_record, cmd_report, cmd_reusedist, cmd_sample, cmd_simulate, cmd_stackdist,
	cmd_synth;

void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void cli_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void cli_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* One cache argument (lp_cache_arg_parse: SPEC, L1, L2, L3 or host) into
 * out[0..*n), at most cap: 0, or CLI_USAGE after "bad cache 'ARG': why". */
int cli_cache_arg(const struct cli_command *cmd, const char *arg, struct lp_named_cache *out, size_t cap,
		  size_t *n);

/* -o FILE for a command that prints its output: standard output goes to
 * FILE.tmp.PID (*tmp, malloc'ed; a signal that ends locprof removes it)
 * until cli_stdout_commit() renames it to FILE (keep) or removes it, so
 * that a failed run leaves no half file.
 * Both print the error and return -1 on failure. */
int cli_stdout_to(const char *path, char **tmp);
int cli_stdout_commit(const char *path, char *tmp, int keep);

/* Print "locprof: error: <msg>" and a pointer to the help; returns CLI_USAGE. */
int cli_usage_error(const struct cli_command *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Print the command's usage to stdout; returns CLI_OK. */
int cli_print_usage(const struct cli_command *cmd);

/* getopt_long with locprof's conventions: every command accepts -h/--help
 * (returns 'h'); an unknown option, or one without its value, returns '?'
 * and cli_getopt_error() says which, for the command's usage error (one
 * line). Resets getopt state on the first call for a new argv. */
int cli_getopt(int argc, char **argv, const char *shortopts, const struct option *longopts);
const char *cli_getopt_error(void);

/* Threads a command's parallel work may use by default: the CPUs this
 * process may run on (its affinity mask), at most CLI_MAX_DEFAULT_JOBS. */
enum { CLI_MAX_DEFAULT_JOBS = 8 };
unsigned cli_default_jobs(void);
/* A profile of few samples (under CLI_FEW_SAMPLES), for the words that
 * report's text and HTML print under the curves: *points, how far a share
 * of the samples can be from the truth at worst (95 %, in points); *rate,
 * the power of ten that gives CLI_ENOUGH_SAMPLES or more of the run's
 * line accesses; *expect, the samples it gives. 0 when there are enough. */
#define CLI_FEW_SAMPLES 1000
#define CLI_ENOUGH_SAMPLES 2000.0
int cli_few_samples(size_t samples, uint64_t accesses, double *points, double *rate, double *expect);

/* Numbers. Each returns 0, or -1 after printing nothing (callers report
 * the option name). Sizes accept suffixes K, M, G, T (powers of 1024, with
 * or without "iB"/"B"), e.g. "32K", "1.5MiB", "4096". */
int cli_parse_u64(const char *s, uint64_t *out);
int cli_parse_double(const char *s, double *out);
int cli_parse_size(const char *s, uint64_t *out);
/* A list of sizes: "32K,64K,1M" or a range of powers of two "4K..64M",
 * or both mixed ("4K..1M,48K"). The result is sorted and deduplicated;
 * free() it. */
int cli_parse_size_list(const char *s, uint64_t **out, size_t *n);
/* Human form of a size in bytes: "32K", "1.5M", "4096" -> "4K". */
const char *cli_format_size(uint64_t bytes, char *buf, size_t len);

/* Print s to stdout as a JSON string literal, quoted and escaped. */
void cli_json_string(const char *s);
/* printf for JSON output (cli-json.c): a non-finite value of a
 * floating-point conversion (unknown: a profile without samples) is
 * written as null; cli_tprintf, for text, as "n/a" in the same width. */
void cli_jprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void cli_tprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* s as a CSV field: itself, or quoted (inner quotes doubled, cut to fit
 * len) in buf when it holds a comma or a quote. */
const char *cli_csv_field(const char *s, char *buf, size_t len);

/* After a trace read returned err < 0: print one line and return the exit
 * status. Truncation and corruption are warnings (the results so far are
 * kept, CLI_PARTIAL); anything else is an error. */
int cli_trace_read_failed(int err, const struct lp_trace_reader *r);

/* A --cache argument of report, annotate and diff (cli-cache.c): what
 * cli_cache_arg() takes, ASSOC 0 also meaning full, LRU only, appended to
 * caches[*n] (at most cap) as named caches. 0, or CLI_USAGE after the
 * usage error. */
struct lp_report_cache;
int cli_report_cache_option(const struct cli_command *cmd, const char *arg, struct lp_report_cache *caches,
			    size_t cap, size_t *n);
/* A --policy argument: lru, random or both (LP_REPORT_*); 0 or CLI_USAGE. */
int cli_report_policy_option(const struct cli_command *cmd, const char *arg, unsigned *policies);

/* A profile read and its report computed (cli-report.c), for report,
 * annotate and diff. */
struct lp_report_params;
struct cli_report {
	const char *path;
	struct lp_profile *p;
	struct lp_symbols *syms; /* from its mappings, once something names pcs */
	int syms_tried;          /* syms was loaded, or could not be */
	struct lp_report *r;
	int status; /* CLI_OK, or CLI_PARTIAL for a damaged profile */
};
/* Read the profile at path and compute the report of pa for its line size
 * `line` (0: the first), symbolised when pa.top or pa.share (pa.line_index
 * and pa.syms are set here). Prints the warnings and errors; returns
 * l->status, or CLI_ERROR. cli_report_release() in every case. */
int cli_report_load(struct cli_report *l, const char *path, uint64_t line, struct lp_report_params pa);
/* l->syms, loaded from the profile's mappings on the first call (with its
 * warnings), for what names pcs besides the report (the time view's top
 * functions); NULL when the profile has no mappings or they cannot be read. */
struct lp_symbols *cli_report_symbols(struct cli_report *l);
void cli_report_release(struct cli_report *l);
/* --alloc-fn NAME (report, annotate, diff): a function of the program to
 * look through when naming heap blocks, as through malloc (a glob, kept
 * for every profile the command loads). 0, or the usage status. */
int cli_alloc_fn_option(const struct cli_command *cmd, const char *name);
/* The --alloc-fn names given, told to s (lp_symbols_alloc_wrappers()). */
int cli_tell_alloc_fns(struct lp_symbols *s);
/* 1 when s is a name ending in suffix (more than the suffix, not a
 * directory's: "dir/.lpp" is not). cli-util.c */
int cli_has_suffix(const char *s, const char *suffix);

/* Several profiles (the ranks of an MPI job) and their reports: v sorted
 * by MPI rank (profiles without one last, by path), and r the report of
 * them all (lp_report_merge(), keeping top hot rows), or v[0]'s for one
 * profile. Loaded with cli_reports_load(), which returns the worst status
 * (CLI_OK, CLI_PARTIAL) or CLI_ERROR; cli_reports_release() in every
 * case. */
struct cli_reports {
	struct cli_report *v;
	size_t n;
	struct lp_report *merged;
	const struct lp_report *r;
	int status;
};
/* A usage error (one line) when one profile is named twice among paths:
 * it would be summed twice. */
int cli_profiles_distinct(const struct cli_command *cmd, char *const *paths, size_t n);
int cli_reports_load(struct cli_reports *rs, char *const *paths, size_t n, uint64_t line,
		     struct lp_report_params pa);
void cli_reports_release(struct cli_reports *rs);
/* "rank 3 of 4", "rank 3" (size unknown) or "no MPI rank", in buf. */
const char *cli_rank_label(const struct lp_profile *p, char *buf, size_t len);

/* Warn about a profile that was read: one without samples, or whose
 * windows are longer than it asks (a run of more than
 * LP_PROFILE_MAX_WINDOWS windows, or counts a damaged file made up: the
 * time views then have a coarser grain). cli-profile.c */
struct lp_profile;
void cli_warn_profile(const struct lp_profile *p, const char *path);

/* From now on a signal that ends locprof removes the temporary files of the
 * outputs being written (SIGKILL excepted: the next command writing the
 * same output clears those). Called once, by main(). cli-temporaries.c */
void cli_remove_temporaries_on_exit(void);

/* The hot spots' source-line and function tables: CSV (header and rows)
 * and JSON (one array). cli-hotspots.c */
struct lp_source_line;
struct lp_source_function;
void cli_csv_source_lines(const struct lp_source_line *l, size_t n);
void cli_csv_source_functions(const struct lp_source_function *f, size_t n);
void cli_json_source_lines(const struct lp_source_line *l, size_t n);
void cli_json_source_functions(const struct lp_source_function *f, size_t n);

/* report --shared: the threads-and-caches tables (cli-report-share.c). */
struct lp_report;
/* report --shared's tables; intervals: the report has them (--resamples;
 * the CSV always gives both ends, each the ratio without resamples) */
void cli_text_share(const struct lp_report *r, int intervals, uint64_t top);
/* report --threads in text (report-threads.c). */
void cli_text_threads(const struct lp_report *r);
void cli_csv_share(const struct lp_report *r);
void cli_json_share(const struct lp_report *r, int intervals);
/* report's text: a ratio with the half-width of its interval (iv NULL:
 * none), and the line that says a cliff lies within sampling error (and
 * why; setassoc: the ratio of a set-associative cache). */
void cli_text_ratio(double ratio, const struct lp_interval *iv);
void cli_text_cliff(const char *where, const char *policy, const struct lp_interval *iv, int setassoc);
/* report's JSON: the fields of an interval of a ratio of acc accesses */
void cli_json_interval(const struct lp_interval *iv, double acc);

#endif
