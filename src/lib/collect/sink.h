/* Internal: where the recorder puts the samples of one process image.
 *
 * The collector (collect.c) knows the wire protocol, the in-process entry
 * (collect-direct.c) takes the pmu sampler's calls; a sample sink knows a
 * file format. A sink receives the samples and allocation events of one
 * process image as they arrive, then the summary and the mappings at the
 * end. Two sinks: the .lpp profile (sink-lpp.c) and the text sample list
 * (sink-text.c, docs/formats.md), chosen by the output's name in
 * lp_sample_sink_for_path() (sink.c). */
#ifndef LP_COLLECT_SINK_H
#define LP_COLLECT_SINK_H

#include "collect/protocol.h"

#include <locprof/common.h>
#include <locprof/mapping.h>
#include <stddef.h>

struct lp_collect_proc {
	uint32_t pid, ppid;
	uint64_t nonce;
	uint64_t start_ns;        /* CLOCK_REALTIME */
	const char *cmdline;      /* NUL-separated argv */
	size_t cmdline_len;
	uint32_t nlines;
	uint32_t line_size[LP_MAX_LINE_SIZES];
	double rate;
	uint64_t seed;
	uint32_t backend;         /* enum lp_msg_backend (HELLO) */
	const char *source;       /* the profile's source; NULL: named after backend */
	uint64_t window;          /* the profile's time window; 0: one, the whole run */
	int mpi;                  /* lp_record_options' mpi, mpi_rank, mpi_size */
	uint32_t mpi_rank, mpi_size;
};

struct lp_collect_summary {
	uint64_t references; /* all threads */
	/* line accesses per line size (HELLO's order): the references plus
	 * the extra lines of those that straddle lines */
	uint64_t line_accesses[LP_MAX_LINE_SIZES];
	uint64_t samples, dangling, allocs;
	uint32_t threads;
	int ended;           /* BYE received */
	int status;          /* exit status or -signal */
	int exec;            /* ended by execve (status 0) */
};

struct lp_sample_sink_ops {
	const char *name;
	int (*open)(void **state, const char *path, const struct lp_collect_proc *proc);
	int (*samples)(void *state, const struct lp_msg_sample *s, size_t n);
	int (*events)(void *state, const struct lp_ref *ev, size_t n); /* LP_EV_ALLOC/FREE */
	/* Events with their time (ALLOCS_T); NULL: given to events without it. */
	int (*timed_events)(void *state, const struct lp_msg_alloc_t *ev, size_t n);
	/* ALLOC_SUM (may be NULL): what the events are, the run's totals. */
	int (*alloc_summary)(void *state, uint32_t flags, uint64_t allocs, uint64_t frees,
			     uint64_t bytes);
	/* Write the end, rename into place, free the state. */
	/* One thread ended with this many references (may be NULL). */
	int (*thread)(void *state, uint32_t thread, uint64_t references);
	int (*close)(void *state, const struct lp_collect_summary *sum,
		     const struct lp_mappings *maps);
	void (*abort)(void *state);
};

extern const struct lp_sample_sink_ops lp_sample_sink_text;
extern const struct lp_sample_sink_ops lp_sample_sink_lpp;

/* The sink that writes path. */
const struct lp_sample_sink_ops *lp_sample_sink_for_path(const char *path);

/* Parse /proc/<pid>/maps text into mappings (executable, file-backed
 * ones only: what pcs can point into). */
int lp_collect_parse_maps(struct lp_mappings *m, const char *text, size_t len);

#endif
