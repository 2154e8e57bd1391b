/* The .lpp sink: turns the samples a live backend sends into a profile
 * (locprof/profile.h) and writes it when the process's last connection
 * closes. The collector is a separate process, so a SIGKILL of the target
 * loses only what the runtime had not flushed yet; holding the profile in
 * memory here until the end costs nothing in safety.
 *
 * The clock of a live profile (sample times, reuse distances) counts
 * references (loads and stores) of the sampled thread, as the runtime
 * does; its line accesses per line size are counted apart (THREAD's
 * extra_lines: a reference touching k lines is k line accesses), as in a
 * trace-driven profile (docs/models.md, "What is counted"). */
#include "collect/sink.h"

#include <locprof/profile.h>

#include "common/error.h"

_Static_assert(LP_MSG_PART_WHOLE == LP_PART_WHOLE && LP_MSG_PART_FIRST == LP_PART_FIRST &&
		       LP_MSG_PART_NEXT == LP_PART_NEXT,
	       "the protocol's sample parts are the profile's");

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct lpp_sink {
	struct lp_profile *p;
	char *path;
	struct lp_stack_builder *stacks;
};

static int lpp_open(void **state, const char *path, const struct lp_collect_proc *proc)
{
	struct lpp_sink *s = calloc(1, sizeof(*s));
	char host[256] = "";
	char *cmd = NULL;
	int err = LP_ENOMEM;

	if (!s || !(s->path = strdup(path)))
		goto out_free;
	if ((err = lp_stack_builder_new(&s->stacks)) < 0)
		goto out_free;
	err = lp_profile_new(&s->p);
	if (err < 0)
		goto out_free;
	/* argv arrives NUL-separated: join it with spaces. */
	if (!(cmd = malloc(proc->cmdline_len + 1)))
		goto out_profile;
	memcpy(cmd, proc->cmdline, proc->cmdline_len);
	cmd[proc->cmdline_len] = '\0';
	for (size_t i = 0; i + 1 < proc->cmdline_len; i++)
		if (!cmd[i])
			cmd[i] = ' ';
	gethostname(host, sizeof(host) - 1);
	if (lp_profile_set_str(&s->p->command, cmd) < 0 || lp_profile_set_str(&s->p->host, host) < 0 ||
	    lp_profile_set_str(&s->p->source,
			       proc->source ? proc->source
			       : proc->backend == LP_BACKEND_VALGRIND ? "valgrind" : "inst") < 0)
		goto out_profile;
	free(cmd);
	cmd = NULL;
	s->p->date = (int64_t)(proc->start_ns / 1000000000ull);
	s->p->n_line_sizes = proc->nlines < LP_PROFILE_MAX_LINE_SIZES ? proc->nlines
								   : LP_PROFILE_MAX_LINE_SIZES;
	memcpy(s->p->line_sizes, proc->line_size, s->p->n_line_sizes * sizeof(uint32_t));
	if (proc->region && lp_profile_set_str(&s->p->region, proc->region) < 0)
		goto out_profile;
	s->p->rate = proc->rate;
	s->p->seed = proc->seed;
	if (proc->mpi) {
		s->p->mpi_rank = (int32_t)proc->mpi_rank;
		s->p->mpi_size = proc->mpi_size;
	}
	/* 0: the models see the run as one window */
	s->p->window = proc->window;
	*state = s;
	return 0;

out_profile:
	free(cmd);
	lp_profile_free(s->p);
out_free:
	if (s) {
		lp_stack_builder_free(s->stacks);
		free(s->path);
	}
	free(s);
	return lp_seterr(err, "cannot start the profile '%s': %s", path, lp_strerror(err));
}

static int lpp_samples(void *state, const struct lp_msg_sample *v, size_t n)
{
	struct lpp_sink *s = state;

	for (size_t i = 0; i < n; i++) {
		struct lp_sample smp = {
			.time = v[i].begin,
			.pc = v[i].pc,
			.addr = v[i].addr,
			/* reuse distance = EndTime - BeginTime - 1 (StatCache §3) */
			.reuse = v[i].end == LP_SAMPLE_DANGLING ? LP_REUSE_DANGLING
								: v[i].end - v[i].begin - 1,
			.reuse_pc = v[i].reuse_pc,
			.reuse_addr = v[i].end == LP_SAMPLE_DANGLING ? 0 : v[i].reuse_addr,
			.tid = v[i].thread,
			.kind = v[i].kind & LP_MSG_KIND_MASK,
			.line_idx = v[i].line_index,
			.part = (uint8_t)(v[i].kind >> LP_MSG_PART_SHIFT),
		};
		if (v[i].flags & LP_MSG_SAMPLE_SHARED) {
			if (v[i].coh > LP_COH_UNUSED || v[i].stime >= LP_PROFILE_CLOCK_MAX)
				continue; /* impossible record */
			smp.stime = v[i].stime;
			smp.sreuse = v[i].sreuse;
			smp.sown = v[i].sown;
			smp.wpc = v[i].wpc;
			smp.stid = v[i].stid;
			smp.wtid = v[i].wtid;
			smp.coh = v[i].coh;
			smp.touched = v[i].touched;
			smp.writers = v[i].writers;
			s->p->shared = 1;
			s->p->masks = 1;
		}
		if (smp.line_idx >= s->p->n_line_sizes || smp.part > LP_PART_NEXT || (v[i].end != LP_SAMPLE_DANGLING && v[i].end <= v[i].begin))
			continue; /* impossible record: a damaged or foreign sender */
		int err = lp_profile_add_sample(s->p, &smp);
		if (err < 0)
			return err;
	}
	return 0;
}

/* Allocation events arrive in the order each thread made them (threads
 * interleave by flush), each allocation followed by its call stack's
 * frame records in the same message. Here without their times (a trace
 * recording's, or held for --samples): data-object attribution then goes
 * by address. */
static int lpp_events(void *state, const struct lp_ref *ev, size_t n)
{
	struct lpp_sink *s = state;
	int err;

	for (size_t i = 0; i < n; i++) {
		if (ev[i].kind == LP_MSG_EV_FRAMES) {
			uint64_t f[3] = { ev[i].addr, ev[i].pc, ev[i].size };
			lp_stack_builder_frames(s->stacks, f, 3);
			continue;
		}
		if ((err = lp_stack_builder_end(s->stacks, s->p)) < 0)
			return err;
		if (ev[i].kind == LP_MSG_EV_TLS) {
			struct lp_tls_block b = { ev[i].addr, ev[i].size, ev[i].pc, ev[i].tid };
			if ((err = lp_profile_add_tls(s->p, &b)) < 0)
				return err;
			continue;
		}
		if (ev[i].kind != LP_EV_ALLOC && ev[i].kind != LP_EV_FREE)
			continue;
		struct lp_alloc_event e = {
			.time = LP_TIME_UNKNOWN, .addr = ev[i].addr,
			.size = ev[i].size, .pc = ev[i].pc,
			.tid = ev[i].tid, .kind = ev[i].kind,
		};
		if ((err = lp_profile_add_alloc(s->p, &e)) < 0)
			return err;
		if (e.kind == LP_EV_ALLOC)
			lp_stack_builder_begin(s->stacks, s->p->n_allocs - 1, e.pc);
	}
	return lp_stack_builder_end(s->stacks, s->p);
}

/* The events of the valgrind tool and of the runtime in sample mode carry
 * the allocating thread's clock (its samples' clock), and the runtime's
 * its TLS segments. */
static int lpp_timed_events(void *state, const struct lp_msg_alloc_t *ev, size_t n)
{
	struct lpp_sink *s = state;
	int err;

	for (size_t i = 0; i < n; i++) {
		if (ev[i].kind == LP_MSG_EV_FRAMES) {
			uint64_t f[4] = { ev[i].time, ev[i].addr, ev[i].pc, ev[i].size };
			lp_stack_builder_frames(s->stacks, f, 4);
			continue;
		}
		if ((err = lp_stack_builder_end(s->stacks, s->p)) < 0)
			return err;
		if (ev[i].kind == LP_MSG_EV_TLS) {
			struct lp_tls_block b = { ev[i].addr, ev[i].size, ev[i].pc, ev[i].thread };
			if ((err = lp_profile_add_tls(s->p, &b)) < 0)
				return err;
			continue;
		}
		if (ev[i].kind != LP_EV_ALLOC && ev[i].kind != LP_EV_FREE)
			continue;
		struct lp_alloc_event e = {
			.time = ev[i].time, .addr = ev[i].addr,
			.size = ev[i].size, .pc = ev[i].pc,
			.tid = ev[i].thread, .kind = (uint8_t)ev[i].kind,
		};
		if ((err = lp_profile_add_alloc(s->p, &e)) < 0)
			return err;
		if (e.kind == LP_EV_ALLOC)
			lp_stack_builder_begin(s->stacks, s->p->n_allocs - 1, e.pc);
	}
	s->p->alloc_flags |= LP_ALLOCS_THREAD_CLOCK;
	return lp_stack_builder_end(s->stacks, s->p);
}

static int lpp_alloc_summary(void *state, uint32_t flags, uint64_t allocs, uint64_t frees,
			     uint64_t bytes)
{
	struct lpp_sink *s = state;

	s->p->alloc_flags = (s->p->alloc_flags & LP_ALLOCS_THREAD_CLOCK) | LP_ALLOCS_TOTALS |
			    (flags & LP_MSG_ALLOCS_TOUCHED ? LP_ALLOCS_TOUCHED : 0) |
			    (flags & LP_MSG_ALLOCS_THREAD_CLOCK ? LP_ALLOCS_THREAD_CLOCK : 0);
	s->p->alloc_total = allocs;
	s->p->free_total = frees;
	s->p->alloc_bytes = bytes;
	return 0;
}

static int lpp_phases(void *state, const struct lp_msg_phase *v, size_t n, uint64_t interval)
{
	struct lpp_sink *s = state;

	s->p->phase_interval = interval;
	for (size_t i = 0; i < n; i++) {
		struct lp_phase_interval iv = { .references = v[i].references, .rate = v[i].rate,
						.tid = v[i].thread, .phase = v[i].phase };
		for (uint32_t li = 0; li < s->p->n_line_sizes && li < LP_MAX_LINE_SIZES; li++) {
			iv.begin[li] = v[i].begin[li];
			iv.accesses[li] = v[i].accesses[li];
		}
		if (iv.phase >= LP_PHASE_MAX || !(iv.rate >= 0 && iv.rate <= 1))
			continue; /* impossible record: a damaged or foreign sender */
		int err = lp_profile_add_interval(s->p, &iv);
		if (err < 0)
			return err;
	}
	return 0;
}

static void lpp_free(struct lpp_sink *s)
{
	lp_stack_builder_free(s->stacks);
	lp_profile_free(s->p);
	free(s->path);
	free(s);
}

static int lpp_thread(void *state, uint32_t thread, uint64_t references)
{
	struct lpp_sink *s = state;

	return lp_profile_set_thread_refs(s->p, thread, references);
}

static int lpp_close(void *state, const struct lp_collect_summary *sum,
		     const struct lp_mappings *maps)
{
	struct lpp_sink *s = state;
	int err = 0;

	s->p->references = sum->references;
	if (!sum->region) {
		/* an image the region was not for (another program exec'd) */
		free(s->p->region);
		s->p->region = NULL;
	}
	s->p->region_skipped = sum->region_skipped;
	s->p->region_entries = sum->region_entries;
	for (uint32_t i = 0; i < s->p->n_line_sizes && i < LP_MAX_LINE_SIZES; i++)
		s->p->accesses[i] = sum->line_accesses[i];
	for (size_t i = 0; i < maps->n && err >= 0; i++)
		err = lp_mappings_add(&s->p->mappings, maps->v[i].start, maps->v[i].end,
				      maps->v[i].file_offset, maps->v[i].path, maps->v[i].build_id,
				      maps->v[i].build_id_len);
	if (err >= 0)
		err = lp_profile_finish(s->p, 0);
	if (err >= 0)
		err = lp_profile_write(s->p, s->path);
	lpp_free(s);
	return err;
}

static void lpp_abort(void *state)
{
	lpp_free(state);
}

const struct lp_sample_sink_ops lp_sample_sink_lpp = {
	.name = "lpp",
	.open = lpp_open,
	.samples = lpp_samples,
	.events = lpp_events,
	.timed_events = lpp_timed_events,
	.alloc_summary = lpp_alloc_summary,
	.phases = lpp_phases,
	.thread = lpp_thread,
	.close = lpp_close,
	.abort = lpp_abort,
};
