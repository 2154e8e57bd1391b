/* Internal: the recorder's state (locprof/recorder.h), shared by the
 * collector of the socket protocol (collect.c) and the in-process entry of
 * backends that run inside locprof (collect-direct.c). One rec_proc per
 * process image: its output (a sample sink or a trace writer), its name and
 * the summary lp_recorder_outputs() reports. */
#ifndef LP_COLLECT_RECORDER_STATE_H
#define LP_COLLECT_RECORDER_STATE_H

#include <locprof/mapping.h>
#include <locprof/recorder.h>
#include <locprof/trace.h>

#include "collect/merge.h"
#include "collect/protocol.h"
#include "collect/sink.h"

#include <poll.h>
#include <stddef.h>
#include <stdint.h>

/* A thread's counts so far (THREAD and REGION messages: each sends its
 * running total), kept by thread number across its connections: a thread
 * whose descriptor the program closed connects again and goes on. */
struct rec_thread {
	int known;    /* a HELLO named it */
	int done;     /* its final count came */
	uint64_t refs;
	uint64_t extra[LP_MAX_LINE_SIZES];
	uint64_t region_skipped;
};

struct rec_proc {
	struct lp_record_output out; /* public part */
	struct lp_collect_proc info;
	char *cmdline;
	int trace;
	const struct lp_sample_sink_ops *sink;
	void *sink_state;
	struct lp_trace_writer *tw;
	int open; /* output open */
	char *maps[2]; /* start / exit snapshot text */
	size_t maps_len[2], maps_cap[2];
	int maps_done[2];
	uint32_t conns; /* open connections */
	struct rec_thread *threads; /* by thread number (HELLO) */
	size_t nthreads, threads_cap;
	int bye_refs_valid;
	uint64_t bye_refs, thread_refs;
	uint64_t thread_extra[LP_MAX_LINE_SIZES]; /* extra line accesses, from THREAD */
	uint64_t *trefs; /* references per thread number, from THREAD */
	uint32_t ntrefs;
	size_t trefs_cap;
	struct lp_merge merge; /* trace mode: the threads' records in order */
	struct lp_ref *conv; /* conversion buffer */
	size_t conv_cap;
	struct lp_msg_alloc_t *timed; /* the runtime's ALLOCS with their times */
	size_t timed_cap;
	struct lp_msg_alloc_t *held_timed; /* timed events held while deferred */
	size_t nheld_timed, held_timed_cap;
	/* --samples, or a fixed rate with a cap (lp_record_options
	 * max_samples; `capped` then): the output is opened at the end, at
	 * the final rate; until then the samples that may survive and the
	 * events wait here. */
	int deferred, capped;
	uint32_t level; /* highest thinning level the process reported */
	struct lp_msg_sample *held;
	size_t nheld, held_cap;
	struct lp_ref *held_ev;
	size_t nheld_ev, held_ev_cap;
	/* In-process backends (collect-direct.c): the mappings handed over,
	 * and in trace mode the references held until the output opens. */
	int direct;
	struct lp_mappings direct_maps;
	struct lp_ref *direct_held;
	size_t n_direct_held;
	/* ALLOC_SUM: the last one, handed to the sink at the end */
	int have_asum;
	uint32_t asum_flags;
	uint64_t asum_allocs, asum_frees, asum_bytes;
	/* REGION: one came; references outside the region, entries */
	int region;
	uint64_t region_skipped, region_entries;
};

struct conn {
	int fd;
	struct rec_proc *proc; /* after HELLO */
	uint32_t thread;       /* its index in proc->threads */
	uint8_t *buf;
	size_t len, cap;
};

struct lp_recorder {
	struct lp_record_options o;
	char *output;
	char dir[64];
	char path[96];
	int dir_slot, path_slot; /* lp_tmp_track(): a fatal signal removes them */
	int listen_fd;
	char *env[24]; /* NAME=value strings, NULL-terminated */
	struct conn *conns;
	size_t nconns, conns_cap;
	struct pollfd *pfds;
	size_t pfds_cap;
	struct rec_proc **procs;
	size_t nprocs, procs_cap;
	struct lp_record_output *outs;
	size_t outs_cap;
	uint64_t accepted;
	uint32_t main_pid;
	int failed;
};

/* A recorder without its socket: options checked and copied, lines gets
 * the line sizes as "64,128". */
int lp_collect_recorder_alloc(struct lp_recorder **out, const struct lp_record_options *o,
			      char *lines, size_t lines_len);

/* A new image of r (not yet open): named, its summary started, appended
 * to r's images. info's strings are copied. NULL when out of memory. */
struct rec_proc *lp_collect_proc_new(struct lp_recorder *r, const struct lp_collect_proc *info,
				     int trace);

/* Open p's output: the trace writer, or the sample sink its name chooses.
 * An error is kept in p->out.error and returned. */
int lp_collect_proc_open(struct lp_recorder *r, struct rec_proc *p);

/* Finish p's output (write its end, rename it into place). */
int lp_collect_proc_close(struct rec_proc *p);

/* p's output failed with err: keep the first error, abort the output. */
int lp_collect_proc_fail(struct rec_proc *p, int err);

#endif
