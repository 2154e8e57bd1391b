/* Internal: the trace-mode merge of a process's threads' records into
 * one stream in the order they happened (merge.c). */
#ifndef LP_COLLECT_MERGE_H
#define LP_COLLECT_MERGE_H

#include <locprof/common.h>

#include "collect/protocol.h"

#include <stddef.h>
#include <stdint.h>

/* Records held at most: past this the merge stops waiting for a missing
 * number (a record lost with its thread) and goes on from the smallest
 * one it holds. 4 Mi records of 40 bytes. */
#define LP_MERGE_HOLD_MAX (UINT64_C(1) << 22)

struct lp_merge_run {
	struct lp_msg_ref *v;
	size_t n, pos;
};

struct lp_merge {
	uint64_t next;     /* the number due */
	uint64_t held;     /* records waiting */
	uint64_t skipped;  /* numbers given up as lost */
	struct lp_merge_run *heap; /* min-heap by the number of each run's next record */
	size_t nheap, capheap;
	struct lp_ref *out;
	size_t nout;
};

typedef int (*lp_merge_emit_fn)(void *ctx, const struct lp_ref *refs, size_t n);

/* Take a batch of one thread's records (increasing seq) and hand every
 * record now due to emit, in order; the others are copied and wait. */
int lp_merge_add(struct lp_merge *m, const struct lp_msg_ref *v, size_t n, lp_merge_emit_fn emit, void *ctx);
/* Hand every record that is due to emit, in order; with all, every record
 * held (the process has ended: numbers still missing are lost). */
int lp_merge_drain(struct lp_merge *m, int all, lp_merge_emit_fn emit, void *ctx);
void lp_merge_release(struct lp_merge *m);

#endif
