/* Reading a whole trace for the trace harnesses, through the sampler. */
#ifndef LP_FUZZ_TRACE_H
#define LP_FUZZ_TRACE_H

#include <locprof/profile.h>
#include <locprof/sample.h>
#include <locprof/trace.h>

#include <stdlib.h>

static inline void fuzz_read_trace(const char *format, const char *path)
{
	struct lp_trace_reader *r;
	struct lp_sampler *s = NULL;
	struct lp_profile *p = NULL;
	struct lp_ref buf[256];
	ssize_t n;

	if (lp_trace_reader_open(&r, path, format) < 0)
		return;
	if (lp_profile_new(&p) == 0) {
		p->n_line_sizes = 2;
		p->line_sizes[0] = 64;
		p->line_sizes[1] = 4096;
		p->rate = 0.05;
		p->seed = 1;
		if (lp_sampler_new(&s, p) < 0)
			s = NULL;
	}
	while ((n = lp_trace_read(r, buf, sizeof(buf) / sizeof(buf[0]))) > 0) {
		/* (an .lpt may carry references of size 0: it round-trips
		 * every lp_ref; the text formats refuse them) */
		for (ssize_t i = 0; i < n; i++)
			if (buf[i].kind > LP_EV_FRAME ||
			    (lp_ref_is_access(&buf[i]) && buf[i].size > LP_REF_SIZE_MAX))
				abort();
		if (s && lp_sampler_feed(s, buf, (size_t)n) < 0)
			abort(); /* only memory could fail */
	}
	if (s && lp_sampler_finish(s) < 0)
		abort();
	lp_sampler_free(s);
	lp_profile_free(p);
	lp_trace_reader_free(r);
}

#endif
