/* locprof record: run a program and collect its samples (or its full
 * trace), one output per process. This file parses the options and picks
 * the backend (record.h); the backends run the program. */
#include "cli.h"
#include "record.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
	"usage: locprof record [options] [--] PROGRAM [ARGS...]\n"
	"\n"
	"Run PROGRAM and record its data locality: a sample of its references\n"
	"with their reuse distances (StatCache), or with --mode trace every\n"
	"reference. Every thread of every process is recorded; each process\n"
	"gets its own output: OUT for the first, and OUT's name with the pid\n"
	"inserted (prof.1234.lpp) for the others; under an MPI launcher (mpirun\n"
	"locprof record ...) each rank's OUT has the rank inserted\n"
	"(prof.rank3.lpp) and the rank recorded. PROGRAM's stdin, stdout and\n"
	"stderr are its own. An existing OUT is kept as OUT.old. A run that\n"
	"cannot give a profile (OUT cannot be created, PROGRAM is not\n"
	"instrumented) is refused before PROGRAM starts. INT, TERM and HUP sent\n"
	"to locprof are passed on to PROGRAM, and its profile is kept. A PROGRAM\n"
	"that marks a region of interest with locprof_start()/locprof_stop()\n"
	"(locprof/roi.h) is recorded only inside it (inst and valgrind backends).\n"
	"\n"
	"  -o, --output OUT    output (default locprof.lpp; trace mode locprof.lpt;\n"
	"                      - in trace mode: an .lpt stream on stdout, the\n"
	"                      program's stdout going to stderr). The name gives\n"
	"                      the format: NAME.lpp a profile, NAME.samples the\n"
	"                      text sample list; in trace mode .lpt or .txt\n"
	"  -m, --mode MODE     sample (default) or trace\n"
	"  -r, --rate R        sampling rate, the chance of each reference being\n"
	"                      sampled (default 1e-4)\n"
	"  -n, --samples N     aim at about N samples over the whole run instead\n"
	"                      of a fixed rate\n"
	"      --max-samples N inst backend, fixed rate: keep at most N samples per\n"
	"                      process, halving the rate online past them\n"
	"                      (default 2000000; 0: no cap)\n"
	"      --phases[=N]    phase-guided sampling (inst and valgrind backends):\n"
	"                      cut each thread's run into intervals of N references\n"
	"                      (default 1048576), classify them into phases by\n"
	"                      the code they run, sample a phase at the full\n"
	"                      rate until it has --phase-samples, then at\n"
	"                      --phase-rate; `report --timeline` shows them\n"
	"      --phase-samples N  sampled references per phase at the full rate\n"
	"                      (default 4000)\n"
	"      --phase-rate R  the rate in a phase that has them (default R/32;\n"
	"                      0: none)\n"
	"  -l, --line SIZES    line sizes in bytes, up to 4 (default 64; e.g. 64,128)\n"
	"  -s, --seed N        random seed (default 1): same seed, same samples\n"
	"      --flush-ms MS   the program sends its data at least this often\n"
	"                      (default 100): a SIGKILL loses at most that much\n"
	"  -b, --backend NAME  how references are seen:\n"
	"                        inst      built with `locprof cc` (default)\n"
	"                        valgrind  any binary, under valgrind\n"
	"                        pmu       any binary, ptrace + counters + watchpoints\n"
	"      --counter NAME  pmu backend: pmu (hardware counters, default) or\n"
	"                      step (single-stepping: exact, slow, runs anywhere)\n"
	"      --max-skid N    pmu backend: arm the trigger N memory instructions\n"
	"                      early and step to the exact sample (default 0)\n"
	"      --start-at FUNC the region of interest begins when FUNC is entered\n"
	"                      (inst and valgrind backends; FUNC in PROGRAM's\n"
	"                      symbols, C++ names demangled)\n"
	"      --stop-at FUNC  the region ends when FUNC is entered (it starts again\n"
	"                      at the next --start-at FUNC or locprof_start())\n"
	"      --skip N        leave out each thread's first N references of the\n"
	"                      region (inst and valgrind backends)\n"
	"      --whole-run     record the whole run even if PROGRAM marks a region\n"
	"                      with locprof_start() (locprof/roi.h)\n"
	"  -X OPT              an option passed to the backend as is (repeatable)\n"
	"  -q, --quiet         no summary on stderr\n"
	"  -h, --help          this help\n"
	"\n"
	"Exit status:\n"
	"  N        PROGRAM's exit status N (128+N if signal N killed it), every\n"
	"           output written\n"
	"  1        no profile: an output could not be created or written,\n"
	"           PROGRAM is not instrumented or ran no instrumented code, or\n"
	"           the backend failed (one line on stderr says which; PROGRAM\n"
	"           may itself exit 1: the summary line gives its status)\n"
	"  2        bad command line (PROGRAM not started)\n"
	"  127      PROGRAM not found or not executable\n"
	"\n"
	"See docs/commands/record.md.\n";

static int run(int argc, char **argv);

const struct cli_command cmd_record = {
	.name = "record",
	.summary = "run a program and record its reuse-distance samples or trace",
	.usage = usage,
	.run = run,
};

/* Every backend this build knows; a weak one not linked in is NULL. */
static const struct record_backend *find_backend(const char *name, int *known)
{
	const struct record_backend *all[] = { &record_backend_inst, &record_backend_valgrind,
					       &record_backend_pmu };
	static const char *const names[] = { "inst", "valgrind", "pmu" };

	*known = 0;
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		if (strcmp(name, names[i]))
			continue;
		*known = 1;
		return all[i];
	}
	return NULL;
}

static int parse_lines(const char *arg, struct lp_record_options *o)
{
	uint64_t *v;
	size_t n;

	if (cli_parse_size_list(arg, &v, &n) < 0 || !n || n > 4)
		return cli_usage_error(&cmd_record, "bad --line '%s' (1 to 4 sizes)", arg);
	for (size_t i = 0; i < n; i++) {
		if (v[i] < 1 || v[i] > (1u << 20) || (v[i] & (v[i] - 1))) {
			free(v);
			return cli_usage_error(&cmd_record, "line sizes must be powers of two up to 1M: '%s'",
					       arg);
		}
		o->line_size[i] = (uint32_t)v[i];
	}
	o->nlines = (uint32_t)n;
	free(v);
	return CLI_OK;
}

/* The output's format comes from its name; a name that says none is an
 * error rather than a guess (a profile named "prof" would surprise). */
static int check_output_name(const struct record_request *req)
{
	const char *out = req->opts.output;

	if (!strcmp(out, "-"))
		return CLI_OK;
	if (req->opts.mode == LP_RECORD_TRACE) {
		if (lp_trace_format_for_path(out))
			return CLI_OK;
		return cli_usage_error(&cmd_record, "cannot tell the trace format of '%s' (known: %s)",
				       out, lp_trace_format_names());
	}
	if (cli_has_suffix(out, ".lpp") || cli_has_suffix(out, ".samples"))
		return CLI_OK;
	return cli_usage_error(&cmd_record,
			       "cannot tell the output format of '%s': name it NAME.lpp (a profile) "
			       "or NAME.samples (the text sample list)", out);
}

/* record --phases: sample mode at a fixed rate, inst or valgrind backend
 * (the pmu sampler has no countdown on every reference to tick with). */
static int check_phases(const struct record_request *req, const char *backend_name)
{
	const struct lp_record_options *o = &req->opts;

	if (!o->phase_interval) {
		if (o->phase_samples || o->phase_rate >= 0)
			return cli_usage_error(&cmd_record, "--phase-samples and --phase-rate need --phases");
		return CLI_OK;
	}
	if (o->mode != LP_RECORD_SAMPLE || req->target_samples)
		return cli_usage_error(&cmd_record, "--phases is for sample mode at a fixed rate (not --samples, not --mode trace)");
	if (strcmp(backend_name, "inst") && strcmp(backend_name, "valgrind"))
		return cli_usage_error(&cmd_record, "--phases is for the inst and valgrind backends, not %s",
				       backend_name);
	if (o->phase_rate > o->rate)
		return cli_usage_error(&cmd_record, "--phase-rate must not exceed --rate");
	return CLI_OK;
}

enum { OPT_FLUSH = 256, OPT_COUNTER, OPT_MAX_SKID, OPT_START_AT, OPT_STOP_AT, OPT_SKIP,
       OPT_WHOLE_RUN, OPT_PHASES, OPT_PHASE_SAMPLES, OPT_PHASE_RATE, OPT_MAX_SAMPLES };

/* --phases[=N], --phase-samples N, --phase-rate R. */
static int parse_phase_option(int c, const char *arg, struct lp_record_options *o)
{
	if (c == OPT_PHASES) {
		o->phase_interval = 1u << 20;
		if (arg && (cli_parse_u64(arg, &o->phase_interval) < 0 || o->phase_interval < 4096))
			return cli_usage_error(&cmd_record, "bad --phases '%s' (references per interval, >= 4096)",
					       arg);
	} else if (c == OPT_PHASE_SAMPLES) {
		if (cli_parse_u64(arg, &o->phase_samples) < 0 || !o->phase_samples)
			return cli_usage_error(&cmd_record, "bad --phase-samples '%s' (a count >= 1)", arg);
	} else if (cli_parse_double(arg, &o->phase_rate) < 0 || !(o->phase_rate >= 0 && o->phase_rate <= 1)) {
		return cli_usage_error(&cmd_record, "bad --phase-rate '%s' (0 <= R <= 1)", arg);
	}
	return CLI_OK;
}

/* Under MPI: the rank in the profile and in the output's name
 * (*rank_output, to free), and in the seed: ranks that run the same code
 * on the same seed would sample the same references, and the job's
 * samples would be copies of one rank's (its intervals as wide as one
 * rank's). Threads take seed + thread number, so the rank moves the seed
 * by a large odd multiple (2^64 / golden ratio), not by 1. */
static int apply_mpi_rank(struct lp_record_options *o, char **rank_output)
{
	if (!record_mpi_rank(&o->mpi_rank, &o->mpi_size))
		return CLI_OK;
	o->mpi = 1;
	o->seed += (uint64_t)o->mpi_rank * 0x9e3779b97f4a7c15ull;
	if (!strcmp(o->output, "-") && o->mpi_size != 1)
		return cli_usage_error(&cmd_record, "-o - under MPI: the ranks' traces would interleave on "
				       "one stdout; name a file (prof.lpt: prof.rank<R>.lpt)");
	if (strcmp(o->output, "-") && !(o->output = *rank_output = record_rank_output(o->output, o->mpi_rank))) {
		cli_error("out of memory");
		return CLI_ERROR;
	}
	return CLI_OK;
}

/* OUT by default, and whether "-o -" can be. */
static int default_output(struct record_request *req, const struct record_backend *backend)
{
	if (!req->opts.output)
		req->opts.output = req->opts.mode == LP_RECORD_TRACE ? "locprof.lpt" : "locprof.lpp";
	if (!strcmp(req->opts.output, "-") && (req->opts.mode != LP_RECORD_TRACE || backend == &record_backend_pmu))
		return cli_usage_error(&cmd_record, "-o - (stdout) is for --mode trace with the inst or valgrind backend");
	return CLI_OK;
}

/* The options that choose how many samples: usage errors. */
static int check_sampling(struct record_request *req, int rate_given, const char *backend_name)
{
	if (rate_given && req->target_samples)
		return cli_usage_error(&cmd_record, "--rate and --samples exclude each other");
	if (req->max_samples_given && req->target_samples)
		return cli_usage_error(&cmd_record, "--max-samples is for a fixed rate (--samples sets the count itself)");
	if (req->target_samples && req->opts.mode == LP_RECORD_TRACE)
		return cli_usage_error(&cmd_record, "--samples is for sample mode");
	return check_phases(req, backend_name);
}

static int run(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "mode", required_argument, NULL, 'm' },
		{ "rate", required_argument, NULL, 'r' },
		{ "samples", required_argument, NULL, 'n' },
		{ "max-samples", required_argument, NULL, OPT_MAX_SAMPLES },
		{ "line", required_argument, NULL, 'l' },
		{ "seed", required_argument, NULL, 's' },
		{ "flush-ms", required_argument, NULL, OPT_FLUSH },
		{ "backend", required_argument, NULL, 'b' },
		{ "counter", required_argument, NULL, OPT_COUNTER },
		{ "max-skid", required_argument, NULL, OPT_MAX_SKID },
		{ "start-at", required_argument, NULL, OPT_START_AT },
		{ "stop-at", required_argument, NULL, OPT_STOP_AT },
		{ "skip", required_argument, NULL, OPT_SKIP },
		{ "whole-run", no_argument, NULL, OPT_WHOLE_RUN },
		{ "phases", optional_argument, NULL, OPT_PHASES },
		{ "phase-samples", required_argument, NULL, OPT_PHASE_SAMPLES },
		{ "phase-rate", required_argument, NULL, OPT_PHASE_RATE },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	static struct record_request req;
	const struct record_backend *backend;
	const char *backend_name = "inst", *why;
	char *rank_output = NULL; /* -o with the MPI rank in its name */
	int c, known, st, rate_given = 0;
	uint64_t u;

	memset(&req, 0, sizeof(req));
	req.max_samples = RECORD_MAX_SAMPLES;
	req.opts = (struct lp_record_options){ .mode = LP_RECORD_SAMPLE, .rate = 1e-4, .seed = 1,
					       .flush_ms = 100, .nlines = 1, .line_size = { 64 },
					       .phase_rate = -1 };
	while ((c = cli_getopt(argc, argv, "+o:m:r:n:l:s:b:X:qh", opts)) != -1) {
		switch (c) {
		case 'o': req.opts.output = optarg; break;
		case 'm':
			if (!strcmp(optarg, "sample"))
				req.opts.mode = LP_RECORD_SAMPLE;
			else if (!strcmp(optarg, "trace"))
				req.opts.mode = LP_RECORD_TRACE;
			else
				return cli_usage_error(&cmd_record, "unknown mode '%s' (sample, trace)", optarg);
			break;
		case 'r':
			if (cli_parse_double(optarg, &req.opts.rate) < 0 ||
			    !(req.opts.rate > 0 && req.opts.rate <= 1))
				return cli_usage_error(&cmd_record, "bad --rate '%s' (0 < R <= 1)", optarg);
			rate_given = 1;
			break;
		case 'n':
			if (cli_parse_u64(optarg, &req.target_samples) < 0 || !req.target_samples)
				return cli_usage_error(&cmd_record, "bad --samples '%s' (a count >= 1)", optarg);
			break;
		case OPT_MAX_SAMPLES:
			if (cli_parse_u64(optarg, &req.max_samples) < 0)
				return cli_usage_error(&cmd_record, "bad --max-samples '%s' (a count, 0: no cap)", optarg);
			req.max_samples_given = 1;
			break;
		case 'l':
			if (parse_lines(optarg, &req.opts) != CLI_OK)
				return CLI_USAGE;
			break;
		case 's':
			if (cli_parse_u64(optarg, &req.opts.seed) < 0)
				return cli_usage_error(&cmd_record, "bad --seed '%s'", optarg);
			break;
		case OPT_FLUSH:
			if (cli_parse_u64(optarg, &u) < 0 || !u || u > 3600000)
				return cli_usage_error(&cmd_record, "bad --flush-ms '%s'", optarg);
			req.opts.flush_ms = (uint32_t)u;
			break;
		case OPT_PHASES: case OPT_PHASE_SAMPLES: case OPT_PHASE_RATE:
			if (parse_phase_option(c, optarg, &req.opts) != CLI_OK)
				return CLI_USAGE;
			break;
		case 'b': backend_name = optarg; break;
		case OPT_COUNTER: req.counter = optarg; break;
		case OPT_MAX_SKID:
			if (cli_parse_u64(optarg, &u) < 0 || u > 1000)
				return cli_usage_error(&cmd_record, "bad --max-skid '%s' (0 to 1000)", optarg);
			req.max_skid = (uint32_t)u;
			break;
		case OPT_START_AT: req.start_at = optarg; break;
		case OPT_STOP_AT: req.stop_at = optarg; break;
		case OPT_SKIP:
			if (cli_parse_u64(optarg, &req.skip) < 0 || !req.skip)
				return cli_usage_error(&cmd_record, "bad --skip '%s' (a count of references >= 1)",
						       optarg);
			break;
		case OPT_WHOLE_RUN: req.no_markers = 1; break;
		case 'X':
			if (req.nbackend_opts == RECORD_MAX_BACKEND_OPTS)
				return cli_usage_error(&cmd_record, "at most %d -X options",
						       RECORD_MAX_BACKEND_OPTS);
			req.backend_opts[req.nbackend_opts++] = optarg;
			break;
		case 'q': req.quiet = 1; break;
		case 'h': return cli_print_usage(&cmd_record);
		default: return cli_usage_error(&cmd_record, "%s", cli_getopt_error());
		}
	}
	if ((st = check_sampling(&req, rate_given, backend_name)) != CLI_OK)
		return st;
	backend = find_backend(backend_name, &known);
	if (!known)
		return cli_usage_error(&cmd_record, "unknown backend '%s' (inst, valgrind, pmu)",
				       backend_name);
	if (!backend) {
		cli_error("backend '%s' is not available in this build", backend_name);
		return CLI_ERROR;
	}
	if (optind >= argc)
		return cli_usage_error(&cmd_record, "no program to run");
	if ((st = default_output(&req, backend)) != CLI_OK || (st = apply_mpi_rank(&req.opts, &rank_output)) != CLI_OK)
		return st;
	if (check_output_name(&req) != CLI_OK)
		goto out_usage;
	req.argv = argv + optind;
	if (backend->check && (why = backend->check(&req))) {
		cli_usage_error(&cmd_record, "%s", why);
		goto out_usage;
	}
	if (record_find_program(argv[optind], req.prog, sizeof(req.prog)) < 0) {
		cli_error("cannot run '%s': %s", argv[optind], strerror(errno ? errno : ENOENT));
		st = 127;
		goto out;
	}
	/* Everything that can refuse the run does so before the program
	 * starts: a program that ran without a profile to show for it has
	 * had its effects for nothing. */
	if ((st = record_region_prepare(&req, backend_name)) != CLI_OK ||
	    (st = record_prepare_output(&req)) != CLI_OK ||
	    (backend->ready && (st = backend->ready(&req)) != CLI_OK) ||
	    (st = record_keep_old_output(&req)) != CLI_OK)
		goto out;
	st = backend->run(&req);
out:
	free(rank_output);
	return st;
out_usage:
	free(rank_output);
	return CLI_USAGE;
}
