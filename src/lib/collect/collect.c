/* The collector: receives the protocol of protocol.h from every thread of
 * every process of a recorded program and writes one output per process
 * image (pid + nonce), through a sample sink (sink.h) or a trace writer.
 *
 * One thread, poll() over the listening socket and the connections. Each
 * connection has a receive buffer that grows to the largest message
 * (LP_MSG_MAX); whole messages are handled as they complete, so memory does
 * not grow with the run. */
#include <locprof/recorder.h>
#include <locprof/trace.h>

#include <locprof/profile.h>

#include "collect/protocol.h"
#include "collect/recorder-state.h"
#include "collect/sink.h"
#include "common/array.h"
#include "common/error.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static int rec_env_add(struct lp_recorder *r, int i, const char *name, const char *value)
{
	size_t n = strlen(name) + strlen(value) + 2;

	r->env[i] = malloc(n);
	if (!r->env[i])
		return lp_seterr(LP_ENOMEM, "out of memory");
	snprintf(r->env[i], n, "%s=%s", name, value);
	return 0;
}

/* A fixed rate whose samples a cap may thin (lp_record_options.max_samples:
 * not with --samples, which thins anyway, nor with phases, whose rates
 * the runtime sets by phase). */
static int capped_rate(const struct lp_record_options *o)
{
	return o->max_samples && !o->target_samples && o->mode == LP_RECORD_SAMPLE && !o->phase_interval;
}

/* The region of interest's variables (protocol.h), from env[i] on. */
static int rec_env_region(struct lp_recorder *r, int *ip, const struct lp_record_options *o)
{
	char buf[32];
	int err = 0, i = *ip;

	if (!o->region || o->mode != LP_RECORD_SAMPLE)
		return 0;
	if (o->region_program)
		err = rec_env_add(r, i++, LP_ENV_ROI_PROGRAM, o->region_program);
	if (err >= 0 && o->region_outside)
		err = rec_env_add(r, i++, LP_ENV_ROI, "outside");
	if (err >= 0 && o->region_start_at)
		err = rec_env_add(r, i++, LP_ENV_ROI_START_AT, o->region_start_at);
	if (err >= 0 && o->region_stop_at)
		err = rec_env_add(r, i++, LP_ENV_ROI_STOP_AT, o->region_stop_at);
	if (err >= 0 && o->region_skip) {
		snprintf(buf, sizeof(buf), "%llu", (unsigned long long)o->region_skip);
		err = rec_env_add(r, i++, LP_ENV_ROI_SKIP, buf);
	}
	*ip = i;
	return err;
}

int lp_collect_recorder_alloc(struct lp_recorder **out, const struct lp_record_options *o,
			      char *lines, size_t lines_len)
{
	struct lp_recorder *r;

	if (!o->output || !o->nlines || o->nlines > LP_MAX_LINE_SIZES ||
	    (o->mode == LP_RECORD_SAMPLE && !(o->rate > 0.0 && o->rate <= 1.0)) ||
	    (o->mpi && (o->mpi_rank > INT32_MAX || (o->mpi_size && o->mpi_rank >= o->mpi_size))))
		return lp_seterr(LP_EINVAL, "bad recording options");
	lines[0] = 0;
	for (uint32_t k = 0; k < o->nlines; k++) {
		uint32_t v = o->line_size[k];
		if (!v || (v & (v - 1)) || (k && v <= o->line_size[k - 1]))
			return lp_seterr(LP_EINVAL, "line sizes must be ascending powers of two");
		snprintf(lines + strlen(lines), lines_len - strlen(lines), "%s%u", k ? "," : "", v);
	}
	r = calloc(1, sizeof(*r));
	if (!r)
		return lp_seterr(LP_ENOMEM, "out of memory");
	r->o = *o;
	r->listen_fd = -1;
	r->dir_slot = r->path_slot = -1;
	r->output = strdup(o->output);
	if (!r->output) {
		free(r);
		return lp_seterr(LP_ENOMEM, "out of memory");
	}
	r->o.output = r->output;
	*out = r;
	return 0;
}

/* The settings of record --phases, in the environment the runtime reads. */
static int rec_env_phases(struct lp_recorder *r, int *i, const struct lp_record_options *o)
{
	char buf[64];
	int err;

	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)o->phase_interval);
	if ((err = rec_env_add(r, (*i)++, LP_ENV_PHASES, buf)) < 0)
		return err;
	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)(o->phase_samples ? o->phase_samples : 4000));
	if ((err = rec_env_add(r, (*i)++, LP_ENV_PHASE_SAMPLES, buf)) < 0)
		return err;
	snprintf(buf, sizeof(buf), "%.17g", o->phase_rate >= 0 ? o->phase_rate : o->rate / 32);
	return rec_env_add(r, (*i)++, LP_ENV_PHASE_RATE, buf);
}

int lp_recorder_new(struct lp_recorder **out, const struct lp_record_options *o)
{
	struct lp_recorder *r;
	struct sockaddr_un addr;
	char buf[64], lines[64];
	int err = 0, i = 0;

	if ((err = lp_collect_recorder_alloc(&r, o, lines, sizeof(lines))) < 0)
		return err;
	/* $TMPDIR when the socket's path still fits in sockaddr_un */
	const char *tmp = getenv("TMPDIR");
	if (!tmp || tmp[0] != '/' || strlen(tmp) > 40)
		tmp = "/tmp";
	snprintf(r->dir, sizeof(r->dir), "%s/locprof-rec.XXXXXX", tmp);
	if (!mkdtemp(r->dir)) {
		r->dir[0] = 0;
		err = lp_seterr_errno("cannot create a temporary directory");
		goto out_free;
	}
	r->dir_slot = lp_tmp_track(r->dir);
	snprintf(r->path, sizeof(r->path), "%s/sock", r->dir);
	r->path_slot = lp_tmp_track(r->path);
	r->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (r->listen_fd < 0) {
		err = lp_seterr_errno("socket");
		goto out_free;
	}
	memset(&addr, 0, sizeof(addr));
	addr.sun_family = AF_UNIX;
	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", r->path);
	if (bind(r->listen_fd, (struct sockaddr *)&addr, sizeof(addr)) < 0 ||
	    listen(r->listen_fd, 128) < 0) {
		err = lp_seterr_errno("cannot listen on %s", r->path);
		goto out_free;
	}
	if ((err = rec_env_add(r, i++, LP_ENV_SOCKET, r->path)) < 0 ||
	    (err = rec_env_add(r, i++, LP_ENV_MODE, o->mode == LP_RECORD_TRACE ? "trace" : "sample")) < 0)
		goto out_free;
	/* A fixed width (23 characters for any rate above 1e-100), so that
	 * the program's environment has the same size at every rate: under
	 * valgrind ld.so's and libc's start-up scan it, and their references,
	 * and which of them straddle lines, depend on where its strings lie
	 * (%.17g made "0.01" and "1.0000000000000001e-05": a profile of
	 * 130 765 references at 1e-2 and 130 766 at 1e-5). */
	snprintf(buf, sizeof(buf), "%.17e", o->rate);
	if ((err = rec_env_add(r, i++, LP_ENV_RATE, buf)) < 0 ||
	    (err = rec_env_add(r, i++, LP_ENV_LINES, lines)) < 0)
		goto out_free;
	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)o->seed);
	if ((err = rec_env_add(r, i++, LP_ENV_SEED, buf)) < 0)
		goto out_free;
	snprintf(buf, sizeof(buf), "%u", o->flush_ms ? o->flush_ms : 100);
	if ((err = rec_env_add(r, i++, LP_ENV_FLUSH, buf)) < 0)
		goto out_free;
	if (o->target_samples && o->mode == LP_RECORD_SAMPLE) {
		snprintf(buf, sizeof(buf), "%llu", (unsigned long long)o->target_samples);
		if ((err = rec_env_add(r, i++, LP_ENV_SAMPLES, buf)) < 0)
			goto out_free;
	} else if (capped_rate(o)) {
		snprintf(buf, sizeof(buf), "%llu", (unsigned long long)o->max_samples);
		if ((err = rec_env_add(r, i++, LP_ENV_MAX_SAMPLES, buf)) < 0)
			goto out_free;
	}
	if ((err = rec_env_region(r, &i, o)) < 0)
		goto out_free;
	if (o->phase_interval && o->mode == LP_RECORD_SAMPLE && (err = rec_env_phases(r, &i, o)) < 0)
		goto out_free;
	*out = r;
	return 0;
out_free:
	lp_recorder_free(r);
	return err;
}

char *const *lp_recorder_env(const struct lp_recorder *r)
{
	return r->env;
}

void lp_recorder_set_main_pid(struct lp_recorder *r, uint32_t pid)
{
	r->main_pid = pid;
}

uint64_t lp_recorder_connections(const struct lp_recorder *r)
{
	return r->accepted;
}

/* ---- processes and their outputs ------------------------------------------ */

static int name_taken(const struct lp_recorder *r, const char *path)
{
	for (size_t i = 0; i < r->nprocs; i++)
		if (r->procs[i]->out.path && !strcmp(r->procs[i]->out.path, path))
			return 1;
	return 0;
}

/* prof.lpp for the first process, prof.<pid>.lpp for the others (and
 * prof.<pid>-2.lpp for a second image of the same pid, after exec). */
static char *output_name(const struct lp_recorder *r, uint32_t pid)
{
	const char *o = r->o.output, *slash, *dot;
	size_t n = strlen(o) + 64, stem;
	char *p = malloc(n);

	if (!p)
		return NULL;
	if ((r->main_pid ? pid == r->main_pid : !r->nprocs) && !name_taken(r, o)) {
		snprintf(p, n, "%s", o);
		return p;
	}
	/* "-" (stdout) is the first process's; the others write files named
	 * as if OUT were the default */
	if (!strcmp(o, "-"))
		o = r->o.mode == LP_RECORD_TRACE ? "locprof.lpt" : "locprof.lpp";
	slash = strrchr(o, '/');
	dot = strrchr(o, '.');
	if (!dot || (slash && dot < slash) || dot == o || (slash && dot == slash + 1))
		dot = o + strlen(o);
	stem = (size_t)(dot - o);
	snprintf(p, n, "%.*s.%u%s", (int)stem, o, pid, dot);
	for (int k = 2; name_taken(r, p); k++)
		snprintf(p, n, "%.*s.%u-%d%s", (int)stem, o, pid, k, dot);
	return p;
}

int lp_collect_proc_fail(struct rec_proc *p, int err)
{
	if (!p->out.error)
		p->out.error = err;
	if (p->open) {
		if (p->trace)
			lp_trace_writer_abort(p->tw);
		else
			p->sink->abort(p->sink_state);
		p->open = 0;
	}
	return err;
}

struct rec_proc *lp_collect_proc_new(struct lp_recorder *r, const struct lp_collect_proc *info,
				     int trace)
{
	struct rec_proc *p = calloc(1, sizeof(*p));

	if (!p || LP_ARRAY_RESERVE(r->procs, r->procs_cap, r->nprocs + 1, 16, "processes") < 0) {
		free(p);
		return NULL;
	}
	p->info = *info;
	p->out.pid = info->pid;
	p->out.ppid = info->ppid;
	p->out.path = output_name(r, info->pid);
	p->cmdline = malloc(info->cmdline_len + 1);
	if (!p->out.path || !p->cmdline) {
		free(p->out.path);
		free(p->cmdline);
		free(p);
		return NULL;
	}
	memcpy(p->cmdline, info->cmdline, info->cmdline_len);
	p->cmdline[info->cmdline_len] = 0;
	p->info.cmdline = p->cmdline;
	if (p->info.nlines > LP_MAX_LINE_SIZES)
		p->info.nlines = LP_MAX_LINE_SIZES;
	p->trace = trace;
	p->out.rate = trace ? 0 : info->rate;
	r->procs[r->nprocs++] = p;
	return p;
}

int lp_collect_proc_open(struct lp_recorder *r, struct rec_proc *p)
{
	int err;

	if (p->trace) {
		/* a trace on stdout is a stream for another command: the compact
		 * binary format unless one is named */
		const char *fmt = r->o.trace_format;
		if (!fmt && !strcmp(p->out.path, "-"))
			fmt = "lpt";
		err = lp_trace_writer_open(&p->tw, p->out.path, fmt);
	} else {
		p->sink = lp_sample_sink_for_path(p->out.path);
		err = p->sink->open(&p->sink_state, p->out.path, &p->info);
	}
	if (err < 0)
		return p->out.error = err;
	p->open = 1;
	return 0;
}

static struct rec_proc *proc_get(struct lp_recorder *r, const struct lp_msg_hello *h,
				 const char *cmd, size_t cmd_len)
{
	struct lp_collect_proc info = {
		.pid = h->h.pid, .ppid = h->ppid, .nonce = h->nonce, .start_ns = h->start_ns,
		.cmdline = cmd, .cmdline_len = cmd_len, .nlines = h->nlines, .rate = h->rate,
		.seed = h->seed, .backend = h->backend, .window = LP_PROFILE_WINDOW_DEFAULT,
		.region = h->mode == LP_MODE_TRACE ? NULL : r->o.region,
		.mpi = r->o.mpi, .mpi_rank = r->o.mpi_rank, .mpi_size = r->o.mpi_size,
	};
	struct rec_proc *p;

	for (size_t i = 0; i < r->nprocs; i++) {
		p = r->procs[i];
		if (p->out.pid == h->h.pid && p->info.nonce == h->nonce)
			return p;
	}
	memcpy(info.line_size, h->line_size, sizeof(info.line_size));
	if (!(p = lp_collect_proc_new(r, &info, h->mode == LP_MODE_TRACE)))
		return NULL;
	if (!p->trace && (r->o.target_samples || capped_rate(&r->o))) {
		p->deferred = 1;
		p->capped = !r->o.target_samples;
	}
	else
		lp_collect_proc_open(r, p);
	return p;
}

/* Keep the held samples that survive the process's level. */
static void proc_thin(struct rec_proc *p)
{
	size_t k = 0;

	for (size_t i = 0; i < p->nheld; i++)
		if (p->held[i].level >= p->level)
			p->held[k++] = p->held[i];
	p->nheld = k;
}

static int proc_timed_events(struct rec_proc *p, const struct lp_msg_alloc_t *v, uint32_t n);

/* --samples: open the output at the final rate and hand it everything. */
static int proc_open_deferred(struct rec_proc *p)
{
	int err;

	p->deferred = 0;
	proc_thin(p);
	p->info.rate = ldexp(p->info.rate, -(int)p->level);
	p->out.rate = p->info.rate;
	p->out.capped = p->capped && p->level > 0;
	p->out.samples = p->nheld;
	p->out.dangling = 0;
	for (size_t i = 0; i < p->nheld; i++)
		p->out.dangling += p->held[i].end == LP_SAMPLE_DANGLING;
	p->sink = lp_sample_sink_for_path(p->out.path);
	err = p->sink->open(&p->sink_state, p->out.path, &p->info);
	if (err < 0)
		return p->out.error = err;
	p->open = 1;
	if (p->nheld && (err = p->sink->samples(p->sink_state, p->held, p->nheld)) < 0)
		return lp_collect_proc_fail(p, err);
	if (p->nheld_ev && (err = p->sink->events(p->sink_state, p->held_ev, p->nheld_ev)) < 0)
		return lp_collect_proc_fail(p, err);
	if (p->nheld_timed && (err = proc_timed_events(p, p->held_timed, (uint32_t)p->nheld_timed)) < 0)
		return err;
	free(p->held);
	free(p->held_ev);
	free(p->held_timed);
	p->held = NULL;
	p->held_ev = NULL;
	p->held_timed = NULL;
	p->nheld = p->nheld_ev = p->nheld_timed = 0;
	return 0;
}

static int proc_hold(void **v, size_t *n, size_t *cap, const void *add, size_t k, size_t size)
{
	int err;

	if (*n + k > *cap && (err = lp_array_grow(v, cap, *n + k, size, 1024, 0, "held records")) < 0)
		return err;
	memcpy((char *)*v + *n * size, add, k * size);
	*n += k;
	return 0;
}

static int proc_emit(void *ctx, const struct lp_ref *refs, size_t n);

int lp_collect_proc_close(struct rec_proc *p)
{
	struct lp_collect_summary sum;
	struct lp_mappings maps = { 0 };
	int err, w;

	if (p->deferred && !p->out.error && (err = proc_open_deferred(p)) < 0)
		return err;
	if (!p->open)
		return p->out.error;
	p->out.references = p->bye_refs_valid && p->bye_refs > p->thread_refs ? p->bye_refs
									       : p->thread_refs;
	if (p->trace) {
		/* the records still held: numbers never received are lost */
		if ((err = lp_merge_drain(&p->merge, 1, proc_emit, p)) < 0)
			return lp_collect_proc_fail(p, err);
		err = lp_trace_writer_close(p->tw);
		p->open = 0;
		if (err < 0)
			p->out.error = err;
		return err;
	}
	/* The exit snapshot has everything mapped at the end; the start one
	 * stands in when the process was killed. An in-process backend has
	 * handed its mappings over as they appeared. */
	w = p->maps_done[1] ? 1 : 0;
	err = p->direct ? 0 : lp_collect_parse_maps(&maps, p->maps[w] ? p->maps[w] : "", p->maps_len[w]);
	if (err < 0) {
		lp_mappings_release(&maps);
		return lp_collect_proc_fail(p, err);
	}
	memset(&sum, 0, sizeof(sum));
	sum.references = p->out.references;
	for (uint32_t i = 0; i < LP_MAX_LINE_SIZES; i++)
		sum.line_accesses[i] = p->out.references + p->thread_extra[i];
	sum.samples = p->out.samples;
	sum.dangling = p->out.dangling;
	if (p->have_asum) {
		/* the run's allocations, not the events sent (touched blocks) */
		p->out.allocs = p->asum_allocs;
		if (p->sink->alloc_summary &&
		    (err = p->sink->alloc_summary(p->sink_state, p->asum_flags, p->asum_allocs,
						  p->asum_frees, p->asum_bytes)) < 0) {
			lp_mappings_release(&maps);
			return lp_collect_proc_fail(p, err);
		}
	}
	sum.allocs = p->out.allocs;
	sum.threads = p->out.threads;
	sum.ended = p->out.ended;
	sum.status = p->out.status;
	sum.exec = p->out.exec;
	sum.region = p->out.region = p->region;
	sum.region_skipped = p->out.region_skipped = p->region_skipped;
	sum.region_entries = p->out.region_entries = p->region_entries;
	for (uint32_t t = 0; t < p->ntrefs && p->sink->thread && err >= 0; t++)
		err = p->sink->thread(p->sink_state, t, p->trefs[t]);
	if (err < 0) {
		lp_mappings_release(&maps);
		return lp_collect_proc_fail(p, err);
	}
	err = p->sink->close(p->sink_state, &sum, p->direct ? &p->direct_maps : &maps);
	p->open = 0;
	lp_mappings_release(&maps);
	if (err < 0)
		p->out.error = err;
	return err;
}

/* Room for n converted records in p->conv (at least one). */
static struct lp_ref *proc_conv_reserve(struct rec_proc *p, size_t n)
{
	if (!n)
		n = 1;
	if (LP_ARRAY_RESERVE(p->conv, p->conv_cap, n, 1024, "references") < 0)
		return NULL;
	return p->conv;
}

/* Wire records (struct lp_msg_ref) to struct lp_ref. */
static struct lp_ref *proc_convert(struct rec_proc *p, const struct lp_msg_ref *m, size_t n)
{
	if (!proc_conv_reserve(p, n))
		return NULL;
	for (size_t i = 0; i < n; i++) {
		p->conv[i].addr = m[i].addr;
		p->conv[i].pc = m[i].pc;
		p->conv[i].size = m[i].size;
		p->conv[i].tid = m[i].thread;
		p->conv[i].kind = (uint8_t)m[i].kind;
	}
	return p->conv;
}

/* To the trace: an allocation's frame records (three frames each in the
 * protocol) become one LP_EV_FRAME record per frame; the TLS segments are
 * left out (the trace format has none). */
static int trace_events(struct rec_proc *p, const struct lp_ref *refs, uint32_t n)
{
	uint32_t i = 0;
	int err;

	while (i < n) {
		uint32_t j = i;
		while (j < n && refs[j].kind != LP_MSG_EV_FRAMES && refs[j].kind != LP_MSG_EV_TLS)
			j++;
		if (j > i && (err = lp_trace_write(p->tw, refs + i, j - i)) < 0)
			return err;
		if (j < n && refs[j].kind == LP_MSG_EV_FRAMES) {
			const uint64_t f[3] = { refs[j].addr, refs[j].pc, refs[j].size };
			struct lp_ref fr[3];
			uint32_t k = 0;

			while (k < 3 && f[k]) {
				fr[k] = (struct lp_ref){ .pc = f[k], .tid = refs[j].tid, .kind = LP_EV_FRAME };
				k++;
			}
			if (k && (err = lp_trace_write(p->tw, fr, k)) < 0)
				return err;
		}
		i = j + 1;
	}
	return 0;
}

/* References or allocation events, in order: held while the process's
 * output is deferred, else to the trace or the sink. */
static int proc_events(struct rec_proc *p, const struct lp_ref *refs, uint32_t n)
{
	int err;

	if (p->deferred)
		return proc_hold((void **)&p->held_ev, &p->nheld_ev, &p->held_ev_cap, refs, n,
				 sizeof(*refs));
	if (!p->open)
		return 0;
	err = p->trace ? trace_events(p, refs, n) : p->sink->events(p->sink_state, refs, n);
	if (err < 0)
		lp_collect_proc_fail(p, err);
	return 0;
}

/* ---- messages --------------------------------------------------------------
 * One function per message type. Each checks the length it was given (a
 * whole message, header included) before it reads a field. */

/* The HELLO of a connection. A process's thread may say it on several
 * connections, one after the other (the program closed or reused the
 * runtime's descriptor, docs/runtime.md, "The connection"): the same
 * output, the same thread, its counts going on. */
static int on_hello(struct lp_recorder *r, struct conn *c, const uint8_t *msg, size_t len)
{
	struct lp_msg_hello hello;
	struct rec_proc *p;
	int err;

	if (len < sizeof(hello) || c->proc)
		return lp_seterr(LP_ECORRUPT, "bad HELLO");
	memcpy(&hello, msg, sizeof(hello));
	if (hello.thread >= (1u << 20))
		return lp_seterr(LP_ECORRUPT, "bad HELLO thread %u", hello.thread);
	if (hello.cmdline_len > len - sizeof(hello))
		hello.cmdline_len = (uint32_t)(len - sizeof(hello));
	p = proc_get(r, &hello, (const char *)msg + sizeof(hello), hello.cmdline_len);
	if (!p)
		return lp_seterr(LP_ENOMEM, "out of memory");
	if (hello.thread >= p->nthreads) {
		if ((err = LP_ARRAY_RESERVE(p->threads, p->threads_cap, (size_t)hello.thread + 1, 16,
					    "threads")) < 0)
			return err;
		memset(p->threads + p->nthreads, 0, (hello.thread + 1 - p->nthreads) * sizeof(*p->threads));
		p->nthreads = hello.thread + 1;
	}
	c->proc = p;
	c->thread = hello.thread;
	p->conns++;
	if (!p->threads[hello.thread].known) {
		p->threads[hello.thread].known = 1;
		p->out.threads++;
	}
	return 0;
}

static int on_maps(struct rec_proc *p, const uint8_t *msg, size_t len)
{
	struct lp_msg_maps m;
	size_t n = len - sizeof(m);
	char *v;
	int err;

	if (len < sizeof(m))
		return lp_seterr(LP_ECORRUPT, "bad MAPS");
	memcpy(&m, msg, sizeof(m));
	if (m.when > 1)
		return lp_seterr(LP_ECORRUPT, "bad MAPS");
	if (p->maps_done[m.when]) { /* a new snapshot replaces the old one */
		p->maps_len[m.when] = 0;
		p->maps_done[m.when] = 0;
	}
	if ((err = LP_ARRAY_RESERVE(p->maps[m.when], p->maps_cap[m.when], p->maps_len[m.when] + n + 1, 4096,
				    "the mappings")) < 0)
		return err;
	v = p->maps[m.when];
	memcpy(v + p->maps_len[m.when], msg + sizeof(m), n);
	p->maps_len[m.when] += n;
	v[p->maps_len[m.when]] = 0;
	p->maps_done[m.when] = m.last != 0;
	if (p->trace && p->open && m.when == LP_MAPS_START && p->maps_done[m.when]) {
		/* a trace carries the start snapshot (sent before any
		 * reference), so that its pcs can be symbolised */
		struct lp_mappings maps = { 0 };
		int e = lp_collect_parse_maps(&maps, p->maps[m.when], p->maps_len[m.when]);

		if (e >= 0)
			e = lp_trace_writer_set_mappings(p->tw, &maps);
		lp_mappings_release(&maps);
		if (e < 0)
			return lp_collect_proc_fail(p, e);
	}
	return 0;
}

static int on_samples(struct rec_proc *p, const uint8_t *msg, size_t len)
{
	struct lp_msg_samples m;
	const struct lp_msg_sample *s = (const void *)(msg + sizeof(m));
	int err;

	if (len < sizeof(m))
		return lp_seterr(LP_ECORRUPT, "bad SAMPLES");
	memcpy(&m, msg, sizeof(m));
	if ((uint64_t)m.count * sizeof(*s) != len - sizeof(m))
		return lp_seterr(LP_ECORRUPT, "bad SAMPLES length");
	if (p->deferred) {
		if (m.level > p->level && m.level < 64) {
			p->level = m.level;
			proc_thin(p);
		}
		for (uint32_t i = 0; i < m.count; i++)
			if (s[i].level >= p->level &&
			    (err = proc_hold((void **)&p->held, &p->nheld, &p->held_cap, &s[i], 1,
					     sizeof(*s))) < 0)
				return err;
		return 0;
	}
	p->out.samples += m.count;
	for (uint32_t i = 0; i < m.count; i++)
		p->out.dangling += s[i].end == LP_SAMPLE_DANGLING;
	if (p->open && !p->trace && (err = p->sink->samples(p->sink_state, s, m.count)) < 0)
		lp_collect_proc_fail(p, err);
	return 0;
}

static int proc_emit(void *ctx, const struct lp_ref *refs, size_t n)
{
	return proc_events(ctx, refs, (uint32_t)n);
}

/* Allocation events with their times (the runtime's ALLOCS in sample
 * mode, the valgrind tool's ALLOCS_T): held with the samples while the
 * output waits (--samples, a capped rate), else to the sink's timed
 * events; a sink without them gets the events without their times or
 * call stacks (four frames a record do not fit the three of an lp_ref
 * frame record). */
static int proc_timed_events(struct rec_proc *p, const struct lp_msg_alloc_t *v, uint32_t n)
{
	struct lp_ref *refs;
	uint64_t k = 0;
	int err;

	if (p->deferred)
		return proc_hold((void **)&p->held_timed, &p->nheld_timed, &p->held_timed_cap, v, n, sizeof(*v));
	if (!p->open || p->trace)
		return 0;
	if (p->sink->timed_events) {
		if ((err = p->sink->timed_events(p->sink_state, v, n)) < 0)
			lp_collect_proc_fail(p, err);
		return 0;
	}
	if (!(refs = proc_conv_reserve(p, n)))
		return lp_seterr(LP_ENOMEM, "out of memory");
	for (uint32_t i = 0; i < n; i++)
		if (v[i].kind != LP_MSG_EV_FRAMES)
			refs[k++] = (struct lp_ref){ .addr = v[i].addr, .pc = v[i].pc, .size = v[i].size,
						     .tid = v[i].thread, .kind = (uint8_t)v[i].kind };
	return proc_events(p, refs, (uint32_t)k);
}

/* The runtime's ALLOCS in sample mode, their times in seq (protocol.h),
 * as the valgrind tool's ALLOCS_T: each frame record's three frames
 * repacked four to a record. NULL when out of memory. */
static struct lp_msg_alloc_t *timed_from_refs(struct rec_proc *p, const struct lp_msg_ref *v, uint32_t n,
					      uint32_t *out_n)
{
	struct lp_msg_alloc_t *t;
	uint32_t k = 0;

	if (LP_ARRAY_RESERVE(p->timed, p->timed_cap, (size_t)n + 1, 256, "allocation events") < 0)
		return NULL;
	t = p->timed;
	for (uint32_t i = 0; i < n;) {
		uint64_t f[3 * 64];
		uint32_t nf = 0;

		if (v[i].kind != LP_MSG_EV_FRAMES) {
			t[k++] = (struct lp_msg_alloc_t){ .time = v[i].seq ? v[i].seq - 1 : LP_TIME_UNKNOWN,
							  .addr = v[i].addr, .pc = v[i].pc, .size = v[i].size,
							  .thread = v[i].thread, .kind = v[i].kind };
			i++;
			continue;
		}
		for (; i < n && v[i].kind == LP_MSG_EV_FRAMES; i++)
			if (nf + 3 <= sizeof(f) / sizeof(f[0])) {
				f[nf++] = v[i].addr;
				f[nf++] = v[i].pc;
				f[nf++] = v[i].size;
			}
		for (uint32_t j = 0; j < nf; j += 4) /* fewer records than came: it fits */
			t[k++] = (struct lp_msg_alloc_t){ .time = f[j], .addr = j + 1 < nf ? f[j + 1] : 0,
							  .pc = j + 2 < nf ? f[j + 2] : 0,
							  .size = j + 3 < nf ? f[j + 3] : 0, .kind = LP_MSG_EV_FRAMES };
	}
	*out_n = k;
	return t;
}

/* REFS (trace mode) and ALLOCS (allocation events: with their times in
 * sample mode, to the sink's timed events where it has them). */
static int on_refs(struct rec_proc *p, const uint8_t *msg, size_t len)
{
	struct lp_msg_refs m;
	const struct lp_msg_ref *v = (const void *)(msg + sizeof(m));
	struct lp_ref *refs;

	if (len < sizeof(m))
		return lp_seterr(LP_ECORRUPT, "bad REFS");
	memcpy(&m, msg, sizeof(m));
	if ((uint64_t)m.count * sizeof(*v) != len - sizeof(m))
		return lp_seterr(LP_ECORRUPT, "bad REFS length");
	for (uint32_t i = 0; i < m.count; i++) {
		if (v[i].kind == LP_EV_ALLOC)
			p->out.allocs++;
		else if (v[i].kind <= LP_REF_WRITE)
			p->out.traced++;
	}
	if (m.h.type == LP_MSG_REFS && p->trace)
		return lp_merge_add(&p->merge, v, m.count, proc_emit, p);
	if (m.h.type == LP_MSG_ALLOCS && !p->trace) {
		struct lp_msg_alloc_t *t;
		uint32_t k;
		if (!(t = timed_from_refs(p, v, m.count, &k)))
			return lp_seterr(LP_ENOMEM, "out of memory");
		return proc_timed_events(p, t, k);
	}
	if (!(refs = proc_convert(p, v, m.count)))
		return lp_seterr(LP_ENOMEM, "out of memory");
	return proc_events(p, refs, m.count);
}

/* Allocation events with their time (the valgrind tool's sample mode). */
static int on_allocs_t(struct rec_proc *p, const uint8_t *msg, size_t len)
{
	struct lp_msg_allocs_t m;
	const struct lp_msg_alloc_t *v = (const void *)(msg + sizeof(m));

	if (len < sizeof(m))
		return lp_seterr(LP_ECORRUPT, "bad ALLOCS_T");
	memcpy(&m, msg, sizeof(m));
	if ((uint64_t)m.count * sizeof(*v) != len - sizeof(m))
		return lp_seterr(LP_ECORRUPT, "bad ALLOCS_T length");
	for (uint32_t i = 0; i < m.count; i++)
		p->out.allocs += v[i].kind == LP_EV_ALLOC;
	return proc_timed_events(p, v, m.count);
}

/* Phase intervals (record --phases; never with --samples, so never
 * deferred). */
static int on_phases(struct rec_proc *p, const uint8_t *msg, size_t len)
{
	struct lp_msg_phases m;
	const struct lp_msg_phase *v = (const void *)(msg + sizeof(m));
	int err;

	if (len < sizeof(m))
		return lp_seterr(LP_ECORRUPT, "bad PHASES");
	memcpy(&m, msg, sizeof(m));
	if ((uint64_t)m.count * sizeof(*v) != len - sizeof(m))
		return lp_seterr(LP_ECORRUPT, "bad PHASES length");
	if (p->open && !p->deferred && !p->trace && p->sink->phases &&
	    (err = p->sink->phases(p->sink_state, v, m.count, m.interval)) < 0)
		lp_collect_proc_fail(p, err);
	return 0;
}

static int on_alloc_sum(struct rec_proc *p, const uint8_t *msg, size_t len)
{
	struct lp_msg_alloc_sum m;

	if (len < sizeof(m))
		return lp_seterr(LP_ECORRUPT, "bad ALLOC_SUM");
	memcpy(&m, msg, sizeof(m));
	p->have_asum = 1;
	p->asum_flags = m.flags;
	p->asum_allocs = m.allocs;
	p->asum_frees = m.frees;
	p->asum_bytes = m.bytes;
	return 0;
}

/* A thread's reference count: running ones (with each flush) replace each
 * other, the final one (running = 0) ends the thread's count. */
static int on_thread(struct rec_proc *p, struct conn *c, const uint8_t *msg, size_t len)
{
	struct rec_thread *th = &p->threads[c->thread];
	struct lp_msg_thread m;

	if (len < sizeof(m))
		return lp_seterr(LP_ECORRUPT, "bad THREAD");
	memcpy(&m, msg, sizeof(m));
	if (!th->done) {
		/* add the change since the thread's last count */
		uint64_t delta = m.references - th->refs;
		th->refs = m.references;
		p->thread_refs += delta;
		for (uint32_t i = 0; i < LP_MAX_LINE_SIZES; i++) {
			p->thread_extra[i] += m.extra_lines[i] - th->extra[i];
			th->extra[i] = m.extra_lines[i];
		}
		if (m.thread >= p->ntrefs && m.thread < (1u << 20)) {
			int err = LP_ARRAY_RESERVE(p->trefs, p->trefs_cap, (size_t)m.thread + 1, 16,
						   "thread counts");
			if (err < 0)
				return err;
			memset(p->trefs + p->ntrefs, 0, (m.thread + 1 - p->ntrefs) * sizeof(*p->trefs));
			p->ntrefs = m.thread + 1;
		}
		if (m.thread < p->ntrefs)
			p->trefs[m.thread] += delta;
	}
	if (!m.running)
		th->done = 1;
	return 0;
}

/* REGION: like THREAD's counts, the change since the thread's last. */
static int on_region(struct rec_proc *p, struct conn *c, const uint8_t *msg, size_t len)
{
	struct rec_thread *th = &p->threads[c->thread];
	struct lp_msg_region m;

	if (len < sizeof(m))
		return lp_seterr(LP_ECORRUPT, "bad REGION");
	memcpy(&m, msg, sizeof(m));
	p->region = 1;
	if (!th->done) {
		p->region_skipped += m.skipped - th->region_skipped;
		th->region_skipped = m.skipped;
	}
	if (m.entries > p->region_entries)
		p->region_entries = m.entries;
	return 0;
}

static int on_bye(struct rec_proc *p, const uint8_t *msg, size_t len)
{
	struct lp_msg_bye m;

	if (len < sizeof(m))
		return lp_seterr(LP_ECORRUPT, "bad BYE");
	memcpy(&m, msg, sizeof(m));
	p->out.ended = 1;
	p->out.exec = m.how == LP_BYE_EXEC;
	p->out.status = p->out.exec ? 0 : m.status;
	p->bye_refs = m.references;
	p->bye_refs_valid = 1;
	return 0;
}

static int handle_message(struct lp_recorder *r, struct conn *c, const uint8_t *msg, size_t len)
{
	struct lp_msg_header h;
	struct rec_proc *p = c->proc;

	memcpy(&h, msg, sizeof(h));
	if (h.type == LP_MSG_HELLO)
		return on_hello(r, c, msg, len);
	if (!p)
		return lp_seterr(LP_ECORRUPT, "message before HELLO");
	switch (h.type) {
	case LP_MSG_MAPS:
		return on_maps(p, msg, len);
	case LP_MSG_SAMPLES:
		return on_samples(p, msg, len);
	case LP_MSG_REFS:
	case LP_MSG_ALLOCS:
		return on_refs(p, msg, len);
	case LP_MSG_ALLOCS_T:
		return on_allocs_t(p, msg, len);
	case LP_MSG_ALLOC_SUM:
		return on_alloc_sum(p, msg, len);
	case LP_MSG_PHASES:
		return on_phases(p, msg, len);
	case LP_MSG_THREAD:
		return on_thread(p, c, msg, len);
	case LP_MSG_BYE:
		return on_bye(p, msg, len);
	case LP_MSG_REGION:
		return on_region(p, c, msg, len);
	default:
		return lp_seterr(LP_ECORRUPT, "unknown message type %u", h.type);
	}
}

/* Handle the whole messages in the buffer; keep a partial one. */
static int conn_process(struct lp_recorder *r, struct conn *c)
{
	size_t off = 0;
	int err = 0;

	while (c->len - off >= sizeof(struct lp_msg_header)) {
		struct lp_msg_header h;
		if ((uintptr_t)(c->buf + off) & 7) {
			/* After a text message of odd length: realign, so that
			 * records are read in place (rare: HELLO, MAPS). */
			memmove(c->buf, c->buf + off, c->len - off);
			c->len -= off;
			off = 0;
		}
		memcpy(&h, c->buf + off, sizeof(h));
		if (h.magic_version != LP_MSG_MAGIC_VERSION)
			return lp_seterr(h.magic_version >> 8 == LP_MSG_MAGIC ? LP_EVERSION : LP_EFORMAT,
					 "bad message header from pid %u", h.pid);
		if (h.length < sizeof(h) || h.length > LP_MSG_MAX)
			return lp_seterr(LP_ECORRUPT, "bad message length %u", h.length);
		if (c->len - off < h.length)
			break;
		err = handle_message(r, c, c->buf + off, h.length);
		if (err < 0)
			return err;
		off += h.length;
	}
	memmove(c->buf, c->buf + off, c->len - off);
	c->len -= off;
	return 0;
}

/* Could a connection of this process still be unannounced? Every thread
 * connects before its process says BYE, but the collector may not have
 * accepted it or read its HELLO yet. */
static int conns_unknown(const struct lp_recorder *r, size_t except)
{
	struct pollfd pfd = { .fd = r->listen_fd, .events = POLLIN };

	for (size_t i = 0; i < r->nconns; i++)
		if (i != except && !r->conns[i].proc)
			return 1;
	return poll(&pfd, 1, 0) > 0;
}

static void conn_close(struct lp_recorder *r, size_t i)
{
	struct conn *c = &r->conns[i];

	close(c->fd);
	free(c->buf);
	/* This process is complete: write its output now, unless a connection
	 * not yet identified may be one of its threads (then at the end). */
	if (c->proc && c->proc->conns && --c->proc->conns == 0 && c->proc->out.ended &&
	    !conns_unknown(r, i))
		lp_collect_proc_close(c->proc);
	r->conns[i] = r->conns[--r->nconns];
}

/* Read what is there. Returns 1 at end of stream, 0, or an error. */
static int conn_read(struct lp_recorder *r, struct conn *c)
{
	for (;;) {
		ssize_t n;
		if (c->cap - c->len < 65536) {
			size_t cap = c->cap ? c->cap * 2 : 262144;
			uint8_t *b;
			if (cap > 2 * (size_t)LP_MSG_MAX + 65536 && c->cap)
				cap = c->cap; /* full: process first */
			if (cap != c->cap) {
				b = realloc(c->buf, cap);
				if (!b)
					return lp_seterr(LP_ENOMEM, "out of memory");
				c->buf = b;
				c->cap = cap;
			}
		}
		n = read(c->fd, c->buf + c->len, c->cap - c->len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (n < 0)
			return 1; /* reset by a killed sender: what arrived counts */
		if (n == 0)
			return 1;
		c->len += (size_t)n;
		if (conn_process(r, c) < 0)
			return -1;
	}
}

int lp_recorder_poll(struct lp_recorder *r, int timeout_ms)
{
	size_t n = r->nconns;
	int err = LP_ARRAY_RESERVE(r->pfds, r->pfds_cap, n + 1, 16, "connections");

	if (err < 0)
		return err;
	r->pfds[0].fd = r->listen_fd;
	r->pfds[0].events = POLLIN;
	for (size_t i = 0; i < n; i++) {
		r->pfds[i + 1].fd = r->conns[i].fd;
		r->pfds[i + 1].events = POLLIN;
		r->pfds[i + 1].revents = 0;
	}
	if (poll(r->pfds, n + 1, timeout_ms) < 0) {
		if (errno == EINTR)
			return (int)r->nconns;
		return lp_seterr_errno("poll");
	}
	/* Connections in the order they were accepted, so that of two images
	 * of one pid (exec) the older says HELLO first and gets its name;
	 * then the ended ones, from the end (closing swaps with the last). */
	for (size_t i = 0; i < n; i++) {
		r->pfds[i + 1].events = 0; /* reused as "ended" below */
		if (!r->pfds[i + 1].revents)
			continue;
		int st = conn_read(r, &r->conns[i]);
		if (st != 0) {
			/* A protocol error ends this connection, not the recording. */
			if (st < 0 && r->conns[i].proc)
				r->conns[i].proc->out.error = LP_ECORRUPT;
			r->pfds[i + 1].events = 1;
		}
	}
	for (size_t i = n; i-- > 0;)
		if (r->pfds[i + 1].events)
			conn_close(r, i);
	if (r->pfds[0].revents & POLLIN) {
		for (;;) {
			int fd = accept4(r->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
			if (fd < 0)
				break;
			err = LP_ARRAY_RESERVE(r->conns, r->conns_cap, r->nconns + 1, 16, "connections");
			if (err < 0) {
				close(fd);
				return err;
			}
			memset(&r->conns[r->nconns], 0, sizeof(struct conn));
			r->conns[r->nconns++].fd = fd;
			r->accepted++;
		}
	}
	return (int)r->nconns;
}

int lp_recorder_finish(struct lp_recorder *r)
{
	int first = 0;

	while (r->nconns)
		conn_close(r, r->nconns - 1);
	for (size_t i = 0; i < r->nprocs; i++) {
		int err = lp_collect_proc_close(r->procs[i]);
		if (err < 0 && !first)
			first = err;
	}
	return first;
}

size_t lp_recorder_outputs(const struct lp_recorder *r, const struct lp_record_output **out)
{
	struct lp_recorder *w = (struct lp_recorder *)r;

	if (LP_ARRAY_RESERVE(w->outs, w->outs_cap, r->nprocs + 1, 16, "outputs") < 0) {
		*out = NULL;
		return 0;
	}
	for (size_t i = 0; i < r->nprocs; i++)
		w->outs[i] = r->procs[i]->out;
	*out = w->outs;
	return r->nprocs;
}

void lp_recorder_free(struct lp_recorder *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->nconns; i++) {
		close(r->conns[i].fd);
		free(r->conns[i].buf);
	}
	for (size_t i = 0; i < r->nprocs; i++) {
		struct rec_proc *p = r->procs[i];
		lp_collect_proc_fail(p, p->out.error);
		free(p->out.path);
		free(p->cmdline);
		free(p->maps[0]);
		free(p->maps[1]);
		free(p->conv);
		free(p->timed);
		lp_merge_release(&p->merge);
		free(p->held);
		free(p->held_ev);
		free(p->held_timed);
		free(p->trefs);
		free(p->threads);
		lp_mappings_release(&p->direct_maps);
		free(p->direct_held);
		free(p);
	}
	free(r->procs);
	free(r->conns);
	free(r->pfds);
	free(r->outs);
	if (r->listen_fd >= 0)
		close(r->listen_fd);
	lp_tmp_untrack(r->path_slot);
	lp_tmp_untrack(r->dir_slot);
	if (r->path[0])
		unlink(r->path);
	if (r->dir[0])
		rmdir(r->dir);
	for (size_t i = 0; i < sizeof(r->env) / sizeof(r->env[0]); i++)
		free(r->env[i]);
	free(r->output);
	free(r);
}
