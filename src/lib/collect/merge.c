/* The trace-mode merge: every record of a process carries its number in
 * one process-wide sequence (taken when it happened), but the threads send
 * their records in batches, each on its own connection, so batches arrive
 * interleaved in any order. Each batch is a run of increasing numbers; the
 * runs wait in a min-heap keyed by the number of their next record, and a
 * record is written when its number is the one due. A thread's partial
 * batch is sent within the flush interval by any running thread of the
 * process (docs/runtime.md), which bounds the wait. */
#include "collect/merge.h"

#include "common/array.h"
#include "common/error.h"

#include <stdlib.h>
#include <string.h>

enum { OUT_CAP = 4096 };

static uint64_t head(const struct lp_merge *m, size_t i)
{
	return m->heap[i].v[m->heap[i].pos].seq;
}

static void sift_down(struct lp_merge *m, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, min = i;
		struct lp_merge_run t;

		if (l < m->nheap && head(m, l) < head(m, min))
			min = l;
		if (r < m->nheap && head(m, r) < head(m, min))
			min = r;
		if (min == i)
			return;
		t = m->heap[i];
		m->heap[i] = m->heap[min];
		m->heap[min] = t;
		i = min;
	}
}

static void sift_up(struct lp_merge *m, size_t i)
{
	while (i && head(m, (i - 1) / 2) > head(m, i)) {
		struct lp_merge_run t = m->heap[i];
		m->heap[i] = m->heap[(i - 1) / 2];
		m->heap[(i - 1) / 2] = t;
		i = (i - 1) / 2;
	}
}

static int flush_out(struct lp_merge *m, lp_merge_emit_fn emit, void *ctx)
{
	int err = m->nout ? emit(ctx, m->out, m->nout) : 0;

	m->nout = 0;
	return err;
}

/* Record r into the output buffer, handing a full one to emit. */
static int put(struct lp_merge *m, const struct lp_msg_ref *r, lp_merge_emit_fn emit, void *ctx)
{
	int err;

	if (m->nout == OUT_CAP && (err = flush_out(m, emit, ctx)) < 0)
		return err;
	m->out[m->nout++] = (struct lp_ref){ .addr = r->addr, .pc = r->pc, .size = r->size, .tid = r->thread,
					     .kind = (uint8_t)r->kind };
	if (r->seq >= m->next)
		m->next = r->seq + 1;
	return 0;
}

int lp_merge_add(struct lp_merge *m, const struct lp_msg_ref *v, size_t n, lp_merge_emit_fn emit, void *ctx)
{
	struct lp_msg_ref *copy;
	size_t k = 0;
	int err;

	if (!m->out && !(m->out = malloc(OUT_CAP * sizeof(*m->out))))
		return lp_seterr(LP_ENOMEM, "out of memory");
	/* Nothing waiting: the records due go out at once, uncopied (a
	 * single thread's trace never waits). */
	while (!m->nheap && k < n && v[k].seq == m->next)
		if ((err = put(m, &v[k++], emit, ctx)) < 0)
			return err;
	if (k < n) {
		if (LP_ARRAY_RESERVE(m->heap, m->capheap, m->nheap + 1, 16, "record batches") < 0 ||
		    !(copy = malloc((n - k) * sizeof(*copy))))
			return lp_seterr(LP_ENOMEM, "out of memory");
		memcpy(copy, v + k, (n - k) * sizeof(*copy));
		m->heap[m->nheap] = (struct lp_merge_run){ .v = copy, .n = n - k };
		sift_up(m, m->nheap++);
		m->held += n - k;
	}
	return lp_merge_drain(m, 0, emit, ctx);
}

int lp_merge_drain(struct lp_merge *m, int all, lp_merge_emit_fn emit, void *ctx)
{
	int err;

	if (!m->out && !(m->out = malloc(OUT_CAP * sizeof(*m->out))))
		return lp_seterr(LP_ENOMEM, "out of memory");
	while (m->nheap) {
		struct lp_merge_run *run = &m->heap[0];
		uint64_t seq = run->v[run->pos].seq;

		if (seq > m->next) {
			if (!all && m->held <= LP_MERGE_HOLD_MAX)
				break;
			m->skipped += all ? 0 : seq - m->next;
			m->next = seq;
		}
		/* the run's records that are due, in a row: no other run
		 * holds these numbers */
		do {
			if ((err = put(m, &run->v[run->pos++], emit, ctx)) < 0)
				return err;
			m->held--;
		} while (run->pos < run->n && run->v[run->pos].seq <= m->next);
		if (run->pos == run->n) {
			free(run->v);
			m->heap[0] = m->heap[--m->nheap];
		}
		if (m->nheap)
			sift_down(m, 0);
	}
	return flush_out(m, emit, ctx);
}

void lp_merge_release(struct lp_merge *m)
{
	for (size_t i = 0; i < m->nheap; i++)
		free(m->heap[i].v);
	free(m->heap);
	free(m->out);
	memset(m, 0, sizeof(*m));
}
