/* The `pmu` backend of locprof record: unmodified binaries run under the
 * ptrace sampler of src/pmu (docs/pmu.md): a counter source picks the
 * sampled references (hardware load/store counters, or single-stepping
 * with --counter step), watchpoints find their reuses. The sampler hands
 * every process image to the recorder (locprof/recorder.h), which writes the
 * same outputs as for the inst backend: one .lpp profile (or, in trace
 * mode with the step counter, one trace) per process image, named the
 * same way, each finished when its image ends. */
#include "cli-path.h"
#include "cli.h"
#include "record.h"

#include <locprof/pmu.h>
#include <locprof/recorder.h>

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

struct pmu_args {
	enum lp_pmu_watch_mech watch;
	unsigned emulate_skid;
	int skid_miss;
	enum lp_pmu_sample_start sample_start;
	int aslr, stats;
	int no_allocs;
	const char *compensate;
};

#define PMU_ALLOC_PRELOAD "liblocprof-pmu-alloc.so"


static volatile pid_t target_pid;

static void on_start(int pid)
{
	target_pid = pid;
}

/* INT, TERM, HUP sent by a process (kill: si_code <= 0) are passed on;
 * the terminal's (SI_KERNEL) reached the program's process group already. */
static void on_term(int sig, siginfo_t *info, void *ctx)
{
	pid_t p = target_pid;

	(void)ctx;
	if (p > 0 && info->si_code <= 0)
		kill(p, sig);
}

static void on_ignore(int sig)
{
	/* ^C and ^\ from the terminal reach the program too (same process
	 * group); locprof stays to write what the program leaves. A handler,
	 * not SIG_IGN: an ignored signal would stay ignored across exec. */
}

/* ---- options ---------------------------------------------------------- */

static const char *parse_args(const struct record_request *req, struct pmu_args *a)
{
	static char msg[256];

	memset(a, 0, sizeof(*a));
	a->watch = LP_PMU_WATCH_AUTO;
	for (unsigned i = 0; i < req->nbackend_opts; i++) {
		const char *x = req->backend_opts[i];
		uint64_t u;

		if (!strcmp(x, "watch=auto"))
			a->watch = LP_PMU_WATCH_AUTO;
		else if (!strcmp(x, "watch=dr"))
			a->watch = LP_PMU_WATCH_DR;
		else if (!strcmp(x, "watch=page"))
			a->watch = LP_PMU_WATCH_PAGE;
		else if (!strncmp(x, "emulate-skid=", 13) && cli_parse_u64(x + 13, &u) == 0 && u <= 1000)
			a->emulate_skid = (unsigned)u;
		else if (!strcmp(x, "sample-start=step"))
			a->sample_start = LP_PMU_START_STEP;
		else if (!strcmp(x, "sample-start=double-trap"))
			a->sample_start = LP_PMU_START_DOUBLE_TRAP;
		else if (!strcmp(x, "skid-miss"))
			a->skid_miss = 1;
		else if (!strcmp(x, "aslr"))
			a->aslr = 1;
		else if (!strcmp(x, "stats"))
			a->stats = 1;
		else if (!strcmp(x, "allocs=no"))
			a->no_allocs = 1;
		else if (!strcmp(x, "allocs=yes"))
			a->no_allocs = 0;
		else if (!strncmp(x, "compensate=", 11))
			a->compensate = x + 11;
		else {
			snprintf(msg, sizeof(msg),
				 "unknown -X '%s' for the pmu backend (watch=auto|dr|page, "
				 "sample-start=step|double-trap, emulate-skid=N, skid-miss, compensate=S,F,C,T, "
				 "allocs=yes|no, aslr, stats)", x);
			return msg;
		}
	}
	return NULL;
}

static const char *check(const struct record_request *req)
{
	static char msg[256];
	struct pmu_args a;
	const char *why;
	size_t n;

	if (req->counter && strcmp(req->counter, "pmu") && strcmp(req->counter, "step")) {
		snprintf(msg, sizeof(msg), "unknown --counter '%s' (pmu, step)", req->counter);
		return msg;
	}
	if ((why = parse_args(req, &a)))
		return why;
	if (req->target_samples)
		return "--samples is not supported by the pmu backend (the run's length is not known "
		       "in advance); use --rate";
	if (req->max_samples_given && req->max_samples)
		return "--max-samples is not supported by the pmu backend (it keeps every sample of its rate)";
	if (req->opts.mode == LP_RECORD_TRACE && (!req->counter || strcmp(req->counter, "step")))
		return "--mode trace with the pmu backend needs --counter step (hardware counters "
		       "only sample; they cannot see every reference)";
	if (a.emulate_skid && (!req->counter || strcmp(req->counter, "step")))
		return "-X emulate-skid is for --counter step";
	if (a.skid_miss && (!req->counter || strcmp(req->counter, "step") || !a.emulate_skid))
		return "-X skid-miss is for --counter step with -X emulate-skid=N (its bound)";
	for (uint32_t i = 0; i < req->opts.nlines; i++)
		if (req->opts.line_size[i] < 8 || req->opts.line_size[i] > 4096) {
			snprintf(msg, sizeof(msg), "the pmu backend watches lines of 8 to 4096 bytes, not %u",
				 req->opts.line_size[i]);
			return msg;
		}
	n = strlen(req->opts.output);
	if (req->opts.mode == LP_RECORD_SAMPLE && (n < 4 || strcmp(req->opts.output + n - 4, ".lpp")))
		return "the pmu backend writes .lpp profiles: name the output FILE.lpp";
	return NULL;
}

static void print_stats(const struct lp_pmu_stats *st)
{
	cli_note("pmu: refs %llu steps %llu skid_steps %llu samples %llu missed %llu no_slot %llu "
		 "unwatchable %llu undecoded %llu decode_misses %llu partial %llu page_hits %llu dr_hits %llu same_hits %llu "
		 "syscall_hits %llu dangling %llu false_faults %llu target_signals %llu injected %llu "
		 "watches_max %llu world_stops %llu held_checks %llu stale_faults %llu exposed %llu allocs %llu "
		 "alloc_frames %llu",
		 (unsigned long long)st->refs, (unsigned long long)st->steps,
		 (unsigned long long)st->skid_steps, (unsigned long long)st->samples,
		 (unsigned long long)st->missed, (unsigned long long)st->no_slot,
		 (unsigned long long)st->unwatchable, (unsigned long long)st->undecoded,
		 (unsigned long long)st->decode_misses, (unsigned long long)st->partial,
		 (unsigned long long)st->page_hits, (unsigned long long)st->dr_hits,
		 (unsigned long long)st->same_hits, (unsigned long long)st->syscall_hits,
		 (unsigned long long)st->dangling, (unsigned long long)st->false_faults,
		 (unsigned long long)st->target_signals, (unsigned long long)st->injected,
		 (unsigned long long)st->watches_max, (unsigned long long)st->world_stops,
		 (unsigned long long)st->held_checks, (unsigned long long)st->stale_faults,
		 (unsigned long long)st->exposed, (unsigned long long)st->allocs,
		 (unsigned long long)st->alloc_frames);
	if (st->precise_ip >= 0 && (st->dt_inserted || st->ring_samples || st->dt_norecord))
		cli_note("pmu double trap: precise_ip %d inserted %llu hits %llu replaced %llu norecord %llu "
			 "nomem %llu stale %llu stepped %llu forks %llu ring_samples %llu ring_lost %llu ring_throttled %llu "
			 "ring_damaged %llu", st->precise_ip, (unsigned long long)st->dt_inserted,
			 (unsigned long long)st->dt_hits, (unsigned long long)st->dt_replaced,
			 (unsigned long long)st->dt_norecord, (unsigned long long)st->dt_nomem,
			 (unsigned long long)st->dt_stale, (unsigned long long)st->dt_stepped,
			 (unsigned long long)st->dt_forks,
			 (unsigned long long)st->ring_samples, (unsigned long long)st->ring_lost,
			 (unsigned long long)st->ring_throttled, (unsigned long long)st->ring_damaged);
}

/* Did an output fail to be written (reported with the summaries)? */
static int output_failed(const struct lp_record_output *outs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (outs[i].error)
			return 1;
	return 0;
}

static int run(const struct record_request *req)
{
	struct lp_pmu_options o = LP_PMU_OPTIONS_DEFAULT;
	struct lp_recorder *rec = NULL;
	const struct lp_record_output *outs;
	struct lp_pmu_stats st;
	struct pmu_args a;
	struct sigaction sa, old_int, old_quit, old_term, old_hup;
	char preload[4096];
	double t0, t1;
	int err, status = 0, rc;
	size_t nout;

	parse_args(req, &a); /* checked by check() */
	o.counter = req->counter ? req->counter : "pmu";
	o.period = 1.0 / req->opts.rate;
	o.seed = req->opts.seed;
	o.max_skid = req->max_skid;
	o.emulate_skid = a.emulate_skid;
	o.skid_miss = a.skid_miss;
	o.sample_start = a.sample_start;
	if (o.max_skid < o.emulate_skid)
		o.max_skid = o.emulate_skid;
	o.n_lines = req->opts.nlines;
	for (uint32_t i = 0; i < req->opts.nlines; i++)
		o.line_sizes[i] = req->opts.line_size[i];
	o.watch = a.watch;
	o.no_aslr = !a.aslr;
	o.compensate = a.compensate;
	o.on_start = on_start;
	/* The allocation interposer (docs/pmu.md, "Allocations"), found as
	 * the runtime of `locprof cc` is. */
	if (!a.no_allocs) {
		size_t n;

		if (cli_own_dir(CLI_OWN_RUNTIME, "LOCPROF_RT_DIR", PMU_ALLOC_PRELOAD, preload, sizeof(preload)) == 0 &&
		    (n = strlen(preload)) + sizeof("/" PMU_ALLOC_PRELOAD) <= sizeof(preload)) {
			memcpy(preload + n, "/" PMU_ALLOC_PRELOAD, sizeof("/" PMU_ALLOC_PRELOAD));
			o.alloc_preload = preload;
		} else if (!req->quiet) {
			cli_note("no %s beside locprof (set LOCPROF_RT_DIR): the profile has no allocation "
				 "events", PMU_ALLOC_PRELOAD);
		}
	}
	if (lp_recorder_new_direct(&rec, &req->opts) < 0) {
		cli_error("cannot start the recorder: %s", lp_errmsg());
		return CLI_ERROR;
	}

	memset(&sa, 0, sizeof(sa));
	sa.sa_flags = SA_RESTART; /* the engine's waits go on */
	sa.sa_handler = on_ignore;
	sigaction(SIGQUIT, &sa, &old_quit);
	sa.sa_flags |= SA_SIGINFO;
	sa.sa_sigaction = on_term;
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	sigaction(SIGHUP, &sa, &old_hup);
	fflush(NULL);
	t0 = record_now();
	err = lp_pmu_record(&o, rec, req->argv, &st, &status);
	t1 = record_now();
	target_pid = 0;
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGQUIT, &old_quit, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	sigaction(SIGHUP, &old_hup, NULL);
	nout = lp_recorder_outputs(rec, &outs);

	if (err == LP_EUNSUPPORTED && !nout && o.sample_start == LP_PMU_START_DOUBLE_TRAP &&
	    strstr(lp_errmsg(), "precise sampling")) {
		/* A PMU, but no PEBS (or not Intel): the double trap cannot run. */
		cli_error("%s; -X sample-start=step (the default) works without it", lp_errmsg());
		rc = CLI_ERROR;
		goto out;
	}
	if (err == LP_EUNSUPPORTED && !nout) {
		/* Nothing ran: no PMU here (the one-line answer the issue asks). */
		cli_error("%s; use --counter step (exact, slow), --backend inst (programs built with "
			  "'locprof cc') or --backend valgrind", lp_errmsg());
		rc = CLI_ERROR;
		goto out;
	}
	if (err == LP_EINVAL && !nout) {
		cli_error("%s", lp_errmsg()); /* "cannot run 'x' (not found or not executable)" */
		rc = 127;
		goto out;
	}
	if (err < 0 && !nout) {
		cli_error("cannot run '%s' under the pmu backend: %s", req->argv[0], lp_errmsg());
		rc = CLI_ERROR;
		goto out;
	}
	if (err < 0)
		cli_error("pmu backend: %s (outputs keep what was collected)", lp_errmsg());
	for (size_t i = 0; i < nout && !req->quiet; i++)
		record_print_output(&outs[i], req, -1);
	record_busiest_output(req, outs, nout);
	if (!req->quiet)
		cli_note("run time %.3f s", t1 - t0);
	if (a.stats)
		print_stats(&st);
	/* As the inst backend: an output that was not written (reported
	 * above) makes it locprof's failure; otherwise the program's status. */
	if (err < 0 || output_failed(outs, nout) || !nout)
		rc = CLI_ERROR; /* an output not written */
	else if (WIFSIGNALED(status))
		rc = 128 + WTERMSIG(status);
	else
		rc = WIFEXITED(status) ? WEXITSTATUS(status) : CLI_ERROR;
out:
	/* Every image's output was finished when the image ended; one that
	 * never ended (the engine stopped) is dropped. */
	lp_recorder_free(rec);
	return rc;
}

const struct record_backend record_backend_pmu = {
	.name = "pmu",
	.summary = "any binary, under ptrace with load/store counters and watchpoints",
	.check = check,
	.run = run,
};
