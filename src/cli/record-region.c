/* locprof record: the region of interest (docs/commands/record.md,
 * "Regions of interest"). Before the run it reads from the program's ELF
 * file whether the program marks its region (locprof/roi.h) and where the
 * functions of --start-at and --stop-at begin, and turns all of it into
 * the recorder's options (the recorder tells the program) and the words
 * the profile keeps. */
#include "cli.h"
#include "record.h"

#include <locprof/symbol.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct {
	char program[PATH_MAX];
	char start[700], stop[700];
	char words[1200];
} region;

/* "ADDR NAME" for a --start-at/--stop-at function (locprof/recorder.h):
 * NAME as valgrind names it, demangled with its parameters. */
static int function_spec(const struct record_request *req, const char *opt, const char *func,
			 char *out, size_t len)
{
	struct lp_binary_function fn;

	if (lp_binary_function(req->prog, func, &fn) < 0) {
		cli_error("%s %s: %s", opt, func, lp_errmsg());
		return CLI_USAGE;
	}
	snprintf(out, len, "%llx %s", (unsigned long long)fn.addr, fn.display);
	return CLI_OK;
}

static void add_words(const char *fmt, const char *a)
{
	size_t n = strlen(region.words);

	snprintf(region.words + n, sizeof(region.words) - n, fmt, n ? ", " : "", a);
}

int record_region_prepare(struct record_request *req, const char *backend)
{
	int marks = 0, st;
	char num[32];

	if (req->no_markers && (req->start_at || req->stop_at))
		return cli_usage_error(&cmd_record, "--whole-run and --start-at/--stop-at exclude each other");
	if (req->start_at && req->stop_at && !strcmp(req->start_at, req->stop_at))
		return cli_usage_error(&cmd_record, "--start-at and --stop-at name the same function");
	if ((req->start_at || req->stop_at || req->skip) && !strcmp(backend, "pmu"))
		return cli_usage_error(&cmd_record,
				       "--start-at, --stop-at and --skip are for the inst and valgrind backends");
	if (!req->no_markers)
		marks = lp_binary_marks_region(req->prog) == 1;
	if (marks && !strcmp(backend, "pmu")) {
		if (!req->quiet)
			cli_note("the pmu backend does not see locprof_start()/locprof_stop(): "
				 "recording the whole run");
		return CLI_OK;
	}
	if (!marks && !req->start_at && !req->stop_at && !req->skip)
		return CLI_OK; /* the whole run */
	if (req->opts.mode == LP_RECORD_TRACE)
		return cli_usage_error(&cmd_record, "a region of interest is for sample mode");
	region.words[0] = 0;
	if (marks)
		add_words("%s%s", "locprof_start/locprof_stop");
	if (req->start_at) {
		if ((st = function_spec(req, "--start-at", req->start_at, region.start,
					sizeof(region.start))) != CLI_OK)
			return st;
		req->opts.region_start_at = region.start;
		add_words("%sfrom %s", req->start_at);
	}
	if (req->stop_at) {
		if ((st = function_spec(req, "--stop-at", req->stop_at, region.stop,
					sizeof(region.stop))) != CLI_OK)
			return st;
		req->opts.region_stop_at = region.stop;
		add_words("%still %s", req->stop_at);
	}
	req->opts.region_outside = marks || req->start_at;
	if (realpath(req->prog, region.program))
		req->opts.region_program = region.program;
	if (req->skip) {
		snprintf(num, sizeof(num), "%llu", (unsigned long long)req->skip);
		add_words("%sskip %s references", num);
		req->opts.region_skip = req->skip;
	}
	req->opts.region = region.words;
	return CLI_OK;
}

void record_region_print(const struct record_request *req, const struct lp_record_output *x)
{
	if (!req->opts.region || !x->region || x->error)
		return;
	cli_note("%s: region (%s) entered %llu time%s, %llu references outside it left out",
		 strcmp(x->path, "-") ? x->path : "<stdout>", req->opts.region,
		 (unsigned long long)x->region_entries, x->region_entries == 1 ? "" : "s",
		 (unsigned long long)x->region_skipped);
}
