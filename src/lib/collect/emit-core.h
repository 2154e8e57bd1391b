/* What the runtime (src/rt) and the valgrind tool (src/vg) send to the
 * collector, written once: a completed watch as a sample message, and a
 * text file (/proc/self/maps) in pieces of whole lines.
 *
 * Freestanding like common/watch-core.h: header-only, static inline, no
 * libc call, no allocation (the valgrind tool links no libc; the runtime
 * may run inside the program's malloc). Include it after watch-core.h and
 * protocol.h. */
#ifndef LP_COLLECT_EMIT_CORE_H
#define LP_COLLECT_EMIT_CORE_H

#include "collect/protocol.h"
#include "common/watch-core.h"

#include <stdint.h>

/* The sample of watch w, ended at `end` (the thread's reference clock, or
 * LP_SAMPLE_DANGLING) by the access at reuse_pc touching reuse_addr in the
 * line (both 0 when dangling). */
static inline void lp_emit_sample(struct lp_msg_sample *s, const struct lp_watch *w, uint64_t end,
				  uint64_t reuse_pc, uint64_t reuse_addr, uint32_t thread, uint8_t level)
{
	s->begin = w->begin;
	s->end = end;
	s->pc = w->pc;
	s->addr = w->addr;
	s->reuse_pc = reuse_pc;
	s->reuse_addr = reuse_addr;
	s->thread = thread;
	s->size = w->size;
	s->kind = w->kind;
	s->line_index = w->idx;
	s->level = level;
	/* no shared time: a sender that has it sets these after the call */
	s->stime = 0;
	s->sreuse = s->sown = LP_SAMPLE_DANGLING;
	s->wpc = 0;
	s->stid = s->wtid = thread;
	s->coh = 0;
	s->flags = 0;
	for (int i = 0; i < 6; i++)
		s->pad[i] = 0;
	s->touched = s->writers = 0;
}

/* Reads a text file with read_some (up to `room` bytes at dst; 0 at its
 * end or on an error) into buf, which holds chunk + 4096 bytes, and hands
 * it to send_piece in pieces of whole lines (so that each piece parses on
 * its own: a line longer than the buffer is cut), the last one with
 * last = 1. */
static inline void lp_emit_lines(char *buf, uint64_t chunk, void *ctx,
				 int64_t (*read_some)(void *ctx, char *dst, uint64_t room),
				 void (*send_piece)(void *ctx, const char *text, uint64_t n, int last))
{
	uint64_t have = 0, cut;
	int eof = 0, last;

	do {
		while (!eof && have < chunk) {
			int64_t n = read_some(ctx, buf + have, chunk + 4096 - have);
			if (n <= 0)
				eof = 1;
			else
				have += (uint64_t)n;
		}
		cut = have;
		if (!eof) {
			while (cut > 0 && buf[cut - 1] != '\n')
				cut--;
			if (!cut)
				cut = have;
		}
		last = eof && cut == have;
		send_piece(ctx, buf, cut, last);
		for (uint64_t i = cut; i < have; i++) /* the partial line to the front */
			buf[i - cut] = buf[i];
		have -= cut;
	} while (!last);
}

#endif
