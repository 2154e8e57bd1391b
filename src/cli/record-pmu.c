/* The `pmu` backend of locprof record: unmodified binaries run under the
 * ptrace sampler of src/pmu (docs/pmu.md): a counter source picks the
 * sampled references (hardware load/store counters, or single-stepping
 * with --counter step), watchpoints find their reuses. It writes the same
 * outputs as the inst backend: one .lpp profile (or, in trace mode with the
 * step counter, one trace) per process image, named the same way.
 *
 * The engine runs inside this process, so outputs are built here: each
 * image's profile is written when that image ends (exit, crash, kill, or
 * exec into another program), so a target that dies keeps its samples.
 * Clocks are per image (the references of its threads, like a profile of
 * that process alone); unlike the inst backend, a line reused by another
 * thread of the same process ends a sample (a shared-cache view). */
#include "cli.h"
#include "record.h"

#include <locprof/profile.h>
#include <locprof/trace.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pmu-sampler.h"

/* Trace mode: references kept in memory until the image ends or this many
 * have come, so that the trace's mappings include the libraries the
 * dynamic loader maps after exec (the .lpt header carries them). */
#define TRACE_HOLD (1u << 20)

struct pmu_args {
	enum lp_pmu_watch_mech watch;
	unsigned emulate_skid;
	int skid_miss;
	enum lp_pmu_sample_start sample_start;
	int aslr, stats;
	const char *compensate;
};

struct image_out {
	uint32_t id;
	struct lp_record_output out;
	int exec;
	struct lp_profile *prof;     /* sample mode */
	struct lp_trace_writer *tw;  /* trace mode, once opened */
	struct lp_ref *hold;         /* trace mode, before that */
	size_t n_hold;
	struct lp_mappings maps;
	char *command;
	int64_t date;
	int finished;
};

struct pmu_rec {
	const struct record_request *req;
	struct image_out **v;
	size_t n, cap;
	int failed;                  /* an output could not be built or written */
};

static volatile pid_t target_pid;

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
		else if (!strncmp(x, "compensate=", 11))
			a->compensate = x + 11;
		else {
			snprintf(msg, sizeof(msg),
				 "unknown -X '%s' for the pmu backend (watch=auto|dr|page, "
				 "sample-start=step|double-trap, emulate-skid=N, skid-miss, compensate=S,F,C,T, "
				 "aslr, stats)", x);
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

/* ---- outputs ------------------------------------------------------------ */

/* OUT for the program started, OUT's stem.<pid>.ext for every other image,
 * stem.<pid>-2.ext for a second one of that pid (as the inst backend). */
static char *output_name(struct pmu_rec *r, uint32_t id, uint32_t pid)
{
	const char *o = r->req->opts.output, *slash = strrchr(o, '/'), *dot = strrchr(o, '.');
	size_t n = strlen(o) + 48, stem;
	char *p = malloc(n);
	int taken;

	if (!p)
		return NULL;
	if (id == 0) {
		snprintf(p, n, "%s", o);
		return p;
	}
	if (!dot || (slash && dot < slash) || dot == o || (slash && dot == slash + 1))
		dot = o + strlen(o);
	stem = (size_t)(dot - o);
	snprintf(p, n, "%.*s.%u%s", (int)stem, o, pid, dot);
	for (int k = 2;; k++) {
		taken = 0;
		for (size_t i = 0; i < r->n && !taken; i++)
			taken = r->v[i]->out.path && !strcmp(r->v[i]->out.path, p);
		if (!taken)
			break;
		snprintf(p, n, "%.*s.%u-%d%s", (int)stem, o, pid, k, dot);
	}
	return p;
}

static struct image_out *find(struct pmu_rec *r, uint32_t id)
{
	/* Images are numbered in order of appearance: the index is the id. */
	return id < r->n ? r->v[id] : NULL;
}

static void fail(struct pmu_rec *r, struct image_out *im, int err)
{
	if (im && !im->out.error)
		im->out.error = err;
	r->failed = 1;
}

/* The program's argv, joined with spaces. */
static char *read_cmdline(int pid)
{
	char path[64], *buf = NULL;
	size_t len = 0, cap = 0;
	FILE *f;
	int c;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", pid);
	if (!(f = fopen(path, "re")))
		return strdup("");
	while ((c = getc(f)) != EOF) {
		if (len + 2 > cap) {
			char *b = realloc(buf, cap = cap ? 2 * cap : 256);

			if (!b)
				break;
			buf = b;
		}
		buf[len++] = c ? (char)c : ' ';
	}
	fclose(f);
	if (!buf)
		return strdup("");
	while (len && buf[len - 1] == ' ')
		len--;
	buf[len] = 0;
	return buf;
}

static void on_image(void *ctx, const struct lp_pmu_image *img)
{
	struct pmu_rec *r = ctx;
	const struct lp_record_options *o = &r->req->opts;
	struct image_out *im;
	char host[256] = "";

	if (img->id == 0)
		target_pid = img->pid;
	if (r->n == r->cap) {
		size_t cap = r->cap ? 2 * r->cap : 8;
		struct image_out **v = realloc(r->v, cap * sizeof(*v));

		if (!v) {
			fail(r, NULL, LP_ENOMEM);
			return;
		}
		r->v = v;
		r->cap = cap;
	}
	if (img->id != r->n || !(im = calloc(1, sizeof(*im)))) {
		fail(r, NULL, LP_ENOMEM);
		return;
	}
	r->v[r->n++] = im;
	im->id = img->id;
	im->exec = 0;
	im->out.pid = (uint32_t)img->pid;
	im->out.rate = r->req->opts.rate;
	im->out.ppid = (uint32_t)img->ppid;
	im->out.path = output_name(r, img->id, (uint32_t)img->pid);
	im->command = read_cmdline(img->pid);
	im->date = (int64_t)time(NULL);
	if (!im->out.path || !im->command) {
		fail(r, im, LP_ENOMEM);
		return;
	}
	if (o->mode == LP_RECORD_TRACE)
		return;
	gethostname(host, sizeof(host) - 1);
	if (lp_profile_new(&im->prof) < 0 || lp_profile_set_str(&im->prof->command, im->command) < 0 ||
	    lp_profile_set_str(&im->prof->host, host) < 0 || lp_profile_set_str(&im->prof->source, "pmu") < 0) {
		fail(r, im, LP_ENOMEM);
		return;
	}
	im->prof->date = im->date;
	im->prof->n_line_sizes = o->nlines;
	memcpy(im->prof->line_sizes, o->line_size, o->nlines * sizeof(uint32_t));
	im->prof->rate = o->rate;
	im->prof->seed = o->seed;
}

/* Add the executable file mappings of /proc/PID/maps not yet known. */
static void on_maps(void *ctx, uint32_t id, int pid)
{
	struct pmu_rec *r = ctx;
	struct image_out *im = find(r, id);
	char path[64], line[4096 + 256];
	FILE *f;

	if (!im)
		return;
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	if (!(f = fopen(path, "re")))
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long start, end, off;
		char perms[8] = "", file[4096] = "";
		int known = 0;

		/* start-end perms offset dev inode path */
		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %4095[^\n]", &start, &end, perms, &off, file) < 5 ||
		    perms[2] != 'x' || file[0] != '/')
			continue;
		for (size_t i = 0; i < im->maps.n && !known; i++)
			known = im->maps.v[i].start == start && im->maps.v[i].end == end &&
				im->maps.v[i].file_offset == off && !strcmp(im->maps.v[i].path, file);
		if (!known && lp_mappings_add(&im->maps, start, end, off, file, NULL, 0) < 0)
			fail(r, im, LP_ENOMEM);
	}
	fclose(f);
}

static void on_sample(void *ctx, const struct lp_pmu_sample *s)
{
	struct pmu_rec *r = ctx;
	struct image_out *im = find(r, s->image);
	struct lp_sample x;

	if (!im || !im->prof || im->out.error)
		return;
	memset(&x, 0, sizeof(x));
	/* The engine's clock is 1-based (the value after the reference); a
	 * profile's time counts the references before it. */
	x.time = s->ibegin - 1;
	x.pc = s->pc;
	x.addr = s->addr;
	/* Eq. 3.4. A hardware clock that is not exact (compensation off by
	 * a few counts) can put the end at or before the begin: the reuse
	 * was then as short as it gets. */
	x.reuse = s->dangling ? LP_REUSE_DANGLING : s->iend > s->ibegin ? s->iend - s->ibegin - 1 : 0;
	x.reuse_pc = s->dangling ? 0 : s->end_pc;
	x.tid = s->itid;
	x.kind = s->kind;
	x.line_idx = s->line_idx;
	if (lp_profile_add_sample(im->prof, &x) < 0) {
		fail(r, im, LP_ENOMEM);
		return;
	}
	im->out.samples++;
	im->out.dangling += s->dangling;
}

static int trace_open(struct image_out *im)
{
	int err;

	if ((err = lp_trace_writer_open(&im->tw, im->out.path, NULL)) < 0)
		return err;
	if ((err = lp_trace_writer_set_mappings(im->tw, &im->maps)) < 0 ||
	    (err = lp_trace_write(im->tw, im->hold, im->n_hold)) < 0) {
		lp_trace_writer_abort(im->tw);
		im->tw = NULL;
		return err;
	}
	im->n_hold = 0;
	return 0;
}

static void on_ref(void *ctx, uint64_t when, uint32_t image, uint32_t itid, const struct lp_ref *ref)
{
	struct pmu_rec *r = ctx;
	struct image_out *im = find(r, image);
	struct lp_ref x = *ref;
	int err;

	if (!im || im->out.error)
		return;
	x.tid = itid;
	im->out.traced++;
	if (im->tw) {
		if ((err = lp_trace_write(im->tw, &x, 1)) < 0)
			fail(r, im, err);
		return;
	}
	if (!im->hold && !(im->hold = malloc(TRACE_HOLD * sizeof(*im->hold)))) {
		fail(r, im, LP_ENOMEM);
		return;
	}
	im->hold[im->n_hold++] = x;
	if (im->n_hold == TRACE_HOLD && (err = trace_open(im)) < 0)
		fail(r, im, err);
}

static void on_image_end(void *ctx, const struct lp_pmu_image_end *end)
{
	struct pmu_rec *r = ctx;
	struct image_out *im = find(r, end->id);
	int err = 0;

	if (!im)
		return;
	im->finished = 1;
	im->exec = end->exec;
	im->out.exec = end->exec;
	im->out.references = end->refs;
	im->out.threads = end->threads;
	im->out.ended = 1;
	if (end->exited)
		im->out.status = WIFSIGNALED(end->status) ? -WTERMSIG(end->status) : WEXITSTATUS(end->status);
	if (im->out.error)
		goto out;
	if (im->prof) {
		struct lp_profile *p = im->prof;

		p->references = end->refs;
		for (uint32_t i = 0; i < p->n_line_sizes; i++)
			p->accesses[i] = end->refs;
		for (uint32_t t = 0; t < end->threads && err >= 0; t++)
			err = lp_profile_set_thread_refs(p, t, end->thread_refs[t]);
		for (size_t i = 0; i < im->maps.n && err >= 0; i++)
			err = lp_mappings_add(&p->mappings, im->maps.v[i].start, im->maps.v[i].end,
					      im->maps.v[i].file_offset, im->maps.v[i].path, NULL, 0);
		if (err >= 0)
			err = lp_profile_finish(p, 0);
		if (err >= 0)
			err = lp_profile_write(p, im->out.path);
	} else {
		if (!im->tw)
			err = trace_open(im);
		if (err >= 0) {
			err = lp_trace_writer_close(im->tw);
			im->tw = NULL;
		}
	}
	if (err < 0)
		fail(r, im, err);
out:
	lp_profile_free(im->prof);
	im->prof = NULL;
	if (im->tw)
		lp_trace_writer_abort(im->tw);
	im->tw = NULL;
	free(im->hold);
	im->hold = NULL;
}

static void print_output(const struct image_out *im, enum lp_record_mode mode)
{
	record_print_output(&im->out, mode);
}

static void print_stats(const struct lp_pmu_stats *st)
{
	cli_note("pmu: refs %llu steps %llu skid_steps %llu samples %llu missed %llu no_slot %llu "
		 "unwatchable %llu undecoded %llu decode_misses %llu partial %llu page_hits %llu dr_hits %llu same_hits %llu "
		 "syscall_hits %llu dangling %llu false_faults %llu target_signals %llu injected %llu "
		 "watches_max %llu world_stops %llu held_checks %llu stale_faults %llu exposed %llu",
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
		 (unsigned long long)st->exposed);
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

static int run(const struct record_request *req)
{
	struct lp_pmu_options o = LP_PMU_OPTIONS_DEFAULT;
	struct pmu_rec r = { .req = req };
	struct lp_pmu_stats st;
	struct pmu_args a;
	struct sigaction sa, old_int, old_quit, old_term, old_hup;
	double t0, t1;
	int err, status = 0, rc;

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
	o.ctx = &r;
	o.on_image = on_image;
	o.on_image_end = on_image_end;
	o.on_maps = on_maps;
	if (req->opts.mode == LP_RECORD_TRACE)
		o.on_ref = on_ref;
	else
		o.on_sample = on_sample;

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
	err = lp_pmu_run(&o, req->argv, &st, &status);
	t1 = record_now();
	target_pid = 0;
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGQUIT, &old_quit, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	sigaction(SIGHUP, &old_hup, NULL);

	if (err == LP_EUNSUPPORTED && !r.n && o.sample_start == LP_PMU_START_DOUBLE_TRAP &&
	    strstr(lp_errmsg(), "precise sampling")) {
		/* A PMU, but no PEBS (or not Intel): the double trap cannot run. */
		cli_error("%s; -X sample-start=step (the default) works without it", lp_errmsg());
		rc = CLI_ERROR;
		goto out;
	}
	if (err == LP_EUNSUPPORTED && !r.n) {
		/* Nothing ran: no PMU here (the one-line answer the issue asks). */
		cli_error("%s; use --counter step (exact, slow), --backend inst (programs built with "
			  "'locprof cc') or --backend valgrind", lp_errmsg());
		rc = CLI_ERROR;
		goto out;
	}
	if (err == LP_EINVAL && !r.n) {
		cli_error("%s", lp_errmsg()); /* "cannot run 'x' (not found or not executable)" */
		rc = 127;
		goto out;
	}
	if (err < 0 && !r.n) {
		cli_error("cannot run '%s' under the pmu backend: %s", req->argv[0], lp_errmsg());
		rc = CLI_ERROR;
		goto out;
	}
	if (err < 0)
		cli_error("pmu backend: %s (outputs keep what was collected)", lp_errmsg());
	for (size_t i = 0; i < r.n && !req->quiet; i++)
		print_output(r.v[i], req->opts.mode);
	if (!req->quiet)
		cli_note("run time %.3f s", t1 - t0);
	if (a.stats)
		print_stats(&st);
	/* As the inst backend: an output that was not written (reported
	 * above) makes it locprof's failure; otherwise the program's status. */
	if (err < 0 || r.failed || !r.n)
		rc = CLI_ERROR; /* an output not written */
	else if (WIFSIGNALED(status))
		rc = 128 + WTERMSIG(status);
	else
		rc = WIFEXITED(status) ? WEXITSTATUS(status) : CLI_ERROR;
out:
	for (size_t i = 0; i < r.n; i++) {
		lp_mappings_release(&r.v[i]->maps);
		free(r.v[i]->out.path);
		free(r.v[i]->command);
		free(r.v[i]);
	}
	free(r.v);
	return rc;
}

const struct record_backend record_backend_pmu = {
	.name = "pmu",
	.summary = "any binary, under ptrace with load/store counters and watchpoints",
	.check = check,
	.run = run,
};
