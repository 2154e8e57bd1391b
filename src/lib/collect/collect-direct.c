/* The recorder for backends that run inside locprof (locprof/recorder.h,
 * "backends inside locprof"): the pmu sampler observes the program by
 * ptrace from the locprof process, so its process images come as calls,
 * not over the socket. They go to the same outputs as the collector's
 * (collect.c): the same names, the same sample sinks (sink.h), the same
 * trace writer and summaries. */
#include <locprof/recorder.h>
#include <locprof/profile.h>
#include <locprof/trace.h>

#include "collect/recorder-state.h"
#include "collect/sink.h"
#include "common/error.h"

#include <stdlib.h>
#include <string.h>

/* Trace mode: references held in memory until the image ends or this many
 * have come, so that the trace's mappings include the libraries the
 * dynamic loader maps after exec (the .lpt header carries them). */
#define DIRECT_TRACE_HOLD (1u << 20)

int lp_recorder_new_direct(struct lp_recorder **out, const struct lp_record_options *o)
{
	char lines[64];

	return lp_collect_recorder_alloc(out, o, lines, sizeof(lines));
}

enum lp_record_mode lp_recorder_mode(const struct lp_recorder *r)
{
	return r->o.mode;
}

static struct rec_proc *image_of(struct lp_recorder *r, uint32_t id)
{
	/* Images are numbered in order of appearance: the index is the id. */
	if (id >= r->nprocs || !r->procs[id]->direct)
		return NULL;
	return r->procs[id];
}

int lp_recorder_image_begin(struct lp_recorder *r, const struct lp_record_image *img, uint32_t *id)
{
	struct lp_collect_proc info = {
		.pid = img->pid, .ppid = img->ppid, .nonce = r->nprocs, .start_ns = img->start_ns,
		.cmdline = img->cmdline, .cmdline_len = img->cmdline_len, .nlines = r->o.nlines,
		.rate = r->o.rate, .seed = r->o.seed, .source = img->source, .window = img->window,
		.mpi = r->o.mpi, .mpi_rank = r->o.mpi_rank, .mpi_size = r->o.mpi_size,
	};
	int trace = r->o.mode == LP_RECORD_TRACE;
	struct rec_proc *p;

	memcpy(info.line_size, r->o.line_size, sizeof(info.line_size));
	if (!(p = lp_collect_proc_new(r, &info, trace)))
		return lp_seterr(LP_ENOMEM, "out of memory");
	p->direct = 1;
	*id = (uint32_t)(r->nprocs - 1);
	return trace ? 0 : lp_collect_proc_open(r, p);
}

int lp_recorder_image_maps(struct lp_recorder *r, uint32_t id, const char *text, size_t len)
{
	struct rec_proc *p = image_of(r, id);
	struct lp_mappings now = { 0 };
	int err;

	if (!p)
		return lp_seterr(LP_EINVAL, "no image %u", id);
	if ((err = lp_collect_parse_maps(&now, text, len)) < 0)
		goto out;
	for (size_t i = 0; i < now.n && err >= 0; i++) {
		const struct lp_mapping *m = &now.v[i];
		int known = 0;

		for (size_t k = 0; k < p->direct_maps.n && !known; k++) {
			const struct lp_mapping *o = &p->direct_maps.v[k];
			known = o->start == m->start && o->end == m->end && o->file_offset == m->file_offset &&
				!strcmp(o->path, m->path);
		}
		if (!known)
			err = lp_mappings_add(&p->direct_maps, m->start, m->end, m->file_offset, m->path, m->build_id,
					      m->build_id_len);
	}
out:
	lp_mappings_release(&now);
	if (err < 0)
		lp_collect_proc_fail(p, err);
	return err;
}

int lp_recorder_image_samples(struct lp_recorder *r, uint32_t id, const struct lp_record_sample *s,
			      size_t n)
{
	struct rec_proc *p = image_of(r, id);
	int err;

	if (!p)
		return lp_seterr(LP_EINVAL, "no image %u", id);
	if (!p->open || p->trace)
		return p->out.error;
	for (size_t i = 0; i < n; i++) {
		struct lp_msg_sample m = {
			.begin = s[i].begin, .end = s[i].end, .pc = s[i].pc, .addr = s[i].addr,
			.reuse_pc = s[i].reuse_pc, .reuse_addr = s[i].reuse_addr, .thread = s[i].thread,
			.size = s[i].size > 255 ? 255 : (uint8_t)s[i].size, .kind = s[i].kind,
			.line_index = s[i].line_index,
		};

		if ((err = p->sink->samples(p->sink_state, &m, 1)) < 0)
			return lp_collect_proc_fail(p, err);
		p->out.samples++;
		p->out.dangling += m.end == LP_SAMPLE_DANGLING;
	}
	return 0;
}

/* Open the trace with the mappings known now and write what was held. */
static int trace_open(struct lp_recorder *r, struct rec_proc *p)
{
	int err;

	if ((err = lp_collect_proc_open(r, p)) < 0)
		return err;
	if ((err = lp_trace_writer_set_mappings(p->tw, &p->direct_maps)) < 0 ||
	    (err = lp_trace_write(p->tw, p->direct_held, p->n_direct_held)) < 0)
		return lp_collect_proc_fail(p, err);
	free(p->direct_held);
	p->direct_held = NULL;
	p->n_direct_held = 0;
	return 0;
}

static int trace_add(struct lp_recorder *r, struct rec_proc *p, const struct lp_ref *refs, size_t n)
{
	int err;

	if (p->open) {
		if ((err = lp_trace_write(p->tw, refs, n)) < 0)
			return lp_collect_proc_fail(p, err);
		return 0;
	}
	for (size_t i = 0; i < n; i++) {
		if (!p->direct_held && !(p->direct_held = malloc(DIRECT_TRACE_HOLD * sizeof(*refs))))
			return lp_collect_proc_fail(p, lp_seterr(LP_ENOMEM, "out of memory"));
		p->direct_held[p->n_direct_held++] = refs[i];
		if (p->n_direct_held == DIRECT_TRACE_HOLD) {
			if ((err = trace_open(r, p)) < 0)
				return err;
			return trace_add(r, p, refs + i + 1, n - i - 1);
		}
	}
	return 0;
}

int lp_recorder_image_refs(struct lp_recorder *r, uint32_t id, const struct lp_ref *refs, size_t n)
{
	struct rec_proc *p = image_of(r, id);

	if (!p)
		return lp_seterr(LP_EINVAL, "no image %u", id);
	if (!p->trace || p->out.error)
		return p->out.error;
	p->out.traced += n;
	return trace_add(r, p, refs, n);
}

/* To the sample sink, which takes the frames as the collector protocol
 * carries them: three to a record of kind LP_MSG_EV_FRAMES, after their
 * allocation, a 0 frame ending the stack. */
static int sink_events(struct rec_proc *p, const struct lp_ref *ev, size_t n)
{
	struct lp_ref v[64];
	size_t k = 0, i = 0;
	int err;

	while (i < n) {
		/* an allocation and its frame records in one call: the sink
		 * closes the open stack at the end of each */
		if (ev[i].kind != LP_EV_FRAME && k + 1 + LP_ALLOC_STACK_MAX / 3 + 1 > sizeof(v) / sizeof(v[0])) {
			if ((err = p->sink->events(p->sink_state, v, k)) < 0)
				return lp_collect_proc_fail(p, err);
			k = 0;
		}
		if (ev[i].kind != LP_EV_FRAME) {
			v[k++] = ev[i++];
			continue;
		}
		uint64_t f[3] = { 0, 0, 0 };
		if (k == sizeof(v) / sizeof(v[0])) { /* more frames than a stack keeps */
			i++;
			continue;
		}
		for (unsigned j = 0; j < 3 && i < n && ev[i].kind == LP_EV_FRAME; j++)
			f[j] = ev[i++].pc;
		v[k++] = (struct lp_ref){ .addr = f[0], .pc = f[1], .size = f[2], .tid = ev[i - 1].tid,
					  .kind = LP_MSG_EV_FRAMES };
	}
	if (k && (err = p->sink->events(p->sink_state, v, k)) < 0)
		return lp_collect_proc_fail(p, err);
	return 0;
}

int lp_recorder_image_events(struct lp_recorder *r, uint32_t id, const struct lp_ref *ev, size_t n)
{
	struct rec_proc *p = image_of(r, id);

	if (!p)
		return lp_seterr(LP_EINVAL, "no image %u", id);
	if (p->out.error)
		return p->out.error;
	for (size_t i = 0; i < n; i++)
		p->out.allocs += ev[i].kind == LP_EV_ALLOC;
	if (p->trace)
		return trace_add(r, p, ev, n);
	return p->open ? sink_events(p, ev, n) : 0;
}

int lp_recorder_image_end(struct lp_recorder *r, uint32_t id, const struct lp_record_image_end *end)
{
	struct rec_proc *p = image_of(r, id);
	int err = 0;

	if (!p)
		return lp_seterr(LP_EINVAL, "no image %u", id);
	p->out.ended = 1;
	p->out.exec = end->exec;
	p->out.status = end->exec ? 0 : end->status;
	p->out.threads = end->threads;
	p->bye_refs = end->references;
	p->bye_refs_valid = 1;
	if (end->threads) {
		if (!(p->trefs = calloc(end->threads, sizeof(*p->trefs))))
			return lp_collect_proc_fail(p, lp_seterr(LP_ENOMEM, "out of memory"));
		memcpy(p->trefs, end->thread_refs, end->threads * sizeof(*p->trefs));
		p->ntrefs = end->threads;
		p->trefs_cap = end->threads;
	}
	if (p->trace && !p->open && !p->out.error)
		err = trace_open(r, p);
	if (err >= 0)
		err = lp_collect_proc_close(p);
	free(p->direct_held);
	p->direct_held = NULL;
	p->n_direct_held = 0;
	return err;
}
