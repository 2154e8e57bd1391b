/* The text sample list (docs/formats.md, "Text sample list"): the samples
 * of one process, one per line, with the run's parameters, allocation
 * events, mappings and totals as '#' lines. Human-readable and trivially
 * parsed; the stand-in until the .lpp profile writer exists. */
#include "collect/sink.h"

#include "common/error.h"
#include "common/io.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct text_sink {
	struct lp_out *out;
	uint32_t line_size[LP_MAX_LINE_SIZES];
	uint32_t nlines;
};

static int text_open(void **state, const char *path, const struct lp_collect_proc *proc)
{
	struct text_sink *s = calloc(1, sizeof(*s));
	int err;

	if (!s)
		return lp_seterr(LP_ENOMEM, "out of memory");
	err = lp_out_open(&s->out, path);
	if (err < 0) {
		free(s);
		return err;
	}
	memcpy(s->line_size, proc->line_size, sizeof(s->line_size));
	s->nlines = proc->nlines;
	lp_out_printf(s->out, "# locprof samples v0\n# pid %u ppid %u\n# command", proc->pid,
		      proc->ppid);
	for (size_t i = 0; i < proc->cmdline_len;) {
		const char *arg = proc->cmdline + i;
		size_t n = strnlen(arg, proc->cmdline_len - i);
		lp_out_printf(s->out, " %.*s", (int)n, arg);
		i += n + 1;
	}
	lp_out_printf(s->out, "\n# start %llu.%09llu\n# rate %.17g seed %llu\n# line_sizes",
		      (unsigned long long)(proc->start_ns / 1000000000ull),
		      (unsigned long long)(proc->start_ns % 1000000000ull), proc->rate,
		      (unsigned long long)proc->seed);
	for (uint32_t i = 0; i < proc->nlines; i++)
		lp_out_printf(s->out, "%s%u", i ? "," : " ", proc->line_size[i]);
	err = lp_out_printf(s->out, "\n# thread begin end|dangling pc addr size kind line_size\n");
	if (err < 0) {
		lp_out_abort(s->out);
		free(s);
		return err;
	}
	*state = s;
	return 0;
}

static int text_samples(void *state, const struct lp_msg_sample *v, size_t n)
{
	struct text_sink *s = state;

	for (size_t i = 0; i < n; i++) {
		char *p = lp_out_reserve(s->out, 160);
		uint32_t ls = v[i].line_index < s->nlines ? s->line_size[v[i].line_index] : 0;
		int len;

		if (!p)
			return lp_seterr(LP_ENOMEM, "out of memory");
		if (v[i].end == LP_SAMPLE_DANGLING)
			len = snprintf(p, 160, "%u %llu dangling 0x%llx 0x%llx %u %c %u\n", v[i].thread,
				       (unsigned long long)v[i].begin, (unsigned long long)v[i].pc,
				       (unsigned long long)v[i].addr, v[i].size,
				       (v[i].kind & LP_MSG_KIND_MASK) == LP_REF_WRITE ? 'W' : 'R', ls);
		else
			len = snprintf(p, 160, "%u %llu %llu 0x%llx 0x%llx %u %c %u\n", v[i].thread,
				       (unsigned long long)v[i].begin, (unsigned long long)v[i].end,
				       (unsigned long long)v[i].pc, (unsigned long long)v[i].addr,
				       v[i].size, (v[i].kind & LP_MSG_KIND_MASK) == LP_REF_WRITE ? 'W' : 'R', ls);
		lp_out_commit(s->out, (size_t)len);
	}
	return 0;
}

static int text_events(void *state, const struct lp_ref *ev, size_t n)
{
	struct text_sink *s = state;
	int err = 0;

	for (size_t i = 0; i < n && err >= 0; i++) {
		if (ev[i].kind == LP_MSG_EV_FRAMES || ev[i].kind == LP_MSG_EV_TLS) /* not in this format */
			continue;
		if (ev[i].kind == LP_EV_ALLOC)
			err = lp_out_printf(s->out, "# alloc %u 0x%llx %llu 0x%llx\n", ev[i].tid,
					    (unsigned long long)ev[i].addr,
					    (unsigned long long)ev[i].size,
					    (unsigned long long)ev[i].pc);
		else
			err = lp_out_printf(s->out, "# free %u 0x%llx %llu 0x%llx\n", ev[i].tid,
					    (unsigned long long)ev[i].addr,
					    (unsigned long long)ev[i].size,
					    (unsigned long long)ev[i].pc);
	}
	return err < 0 ? err : 0;
}

static int text_close(void *state, const struct lp_collect_summary *sum,
		      const struct lp_mappings *maps)
{
	struct text_sink *s = state;
	int err;

	for (size_t i = 0; i < maps->n; i++)
		lp_out_printf(s->out, "# map 0x%llx-0x%llx 0x%llx %s\n",
			      (unsigned long long)maps->v[i].start,
			      (unsigned long long)maps->v[i].end,
			      (unsigned long long)maps->v[i].file_offset, maps->v[i].path);
	lp_out_printf(s->out,
		      "# references %llu threads %u samples %llu dangling %llu allocs %llu\n",
		      (unsigned long long)sum->references, sum->threads,
		      (unsigned long long)sum->samples, (unsigned long long)sum->dangling,
		      (unsigned long long)sum->allocs);
	if (sum->ended && sum->exec)
		err = lp_out_printf(s->out, "# end exec\n");
	else if (sum->ended)
		err = lp_out_printf(s->out, "# end %s %d\n", sum->status < 0 ? "signal" : "exit",
				    sum->status < 0 ? -sum->status : sum->status);
	else
		err = lp_out_printf(s->out, "# end unknown\n");
	if (err < 0) {
		lp_out_abort(s->out);
		free(s);
		return err;
	}
	err = lp_out_close(s->out);
	free(s);
	return err;
}

static void text_abort(void *state)
{
	struct text_sink *s = state;

	if (!s)
		return;
	lp_out_abort(s->out);
	free(s);
}

const struct lp_sample_sink_ops lp_sample_sink_text = {
	.name = "text",
	.open = text_open,
	.samples = text_samples,
	.events = text_events,
	.close = text_close,
	.abort = text_abort,
};
