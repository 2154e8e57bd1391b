/* The slow paths of the tool: the StatCache sampler (seed §2.3 and §4: a
 * countdown selects random references, a watchpoint on the selected line
 * catches its next touch, a reference counter gives the reuse distance) and
 * the trace buffer.
 *
 * The semantics are those of the instrumentation runtime (src/rt/rt-core.c),
 * so both backends give the same profile for the same reference stream and
 * seed: per-thread reference clocks counted from 0; the first sample of a
 * thread at reference number gap_1, the next gap_2 references later, gaps
 * drawn by lp_rng_geometric (mean 1/rate) from xoshiro256** seeded with
 * splitmix64(seed + thread number); a sampled reference watches its line for
 * every line size; the next reference of the same thread to a watched line
 * ends the sample with reuse distance end - begin - 1; a reference first
 * completes the watches of its lines, then may start a sample. A reference
 * is one load or store, whatever its size; one that touches k lines of a
 * line size is k line accesses of that size (docs/models.md, "What is
 * counted"): the sample clocks of a line size count the thread's line
 * accesses of that size (references plus the extra lines before them),
 * and a sampled reference watches every line it touches, each a sample.
 * The generated code counts the extra lines of the smallest line size
 * (LPVG_SH_EXTRA); the slow path counts those of the larger ones, and
 * the generated code calls it for every segment where a reference
 * straddles when there are larger ones.
 *
 * Generated code runs whole segments (vg-instr.c) and calls here at a
 * segment's end only if the countdown expired in it or the filter flagged
 * one of its addresses. The segment is then replayed in order from the
 * addresses it left in its shadow buffer, which gives exactly the per-reference
 * behaviour.
 *
 * Watches: an exact per-thread table (the watch-table core,
 * common/watch-core.h, as in the runtime) behind one filter shared by
 * all threads: a byte per slot, slot = (addr >> smallest line shift) mod
 * 2^LPVG_FILTER_LOG2, counting the watches on lines mapping there. A watch on
 * a larger line counts in each of its smallest-size sub-lines. A non-zero
 * byte only sends the segment to the exact table (another thread's watch,
 * or an alias 2^24 lines away, costs one lookup). A count that reached
 * LPVG_FILTER_SAT (127: the generated code's test needs the top bit of
 * every filter load clear) stays there (never decremented; a false
 * positive at worst).
 */
#include "vg-tool.h"

#include "pub_tool_libcassert.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcfile.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_libcproc.h"
#include "pub_tool_mallocfree.h"
#include "pub_tool_threadstate.h"

UChar lpvg_filter_mem[LPVG_FILTER_PAD + (1u << LPVG_FILTER_LOG2) + LPVG_FILTER_PAD];
UChar *lpvg_gsp;
struct lpvg_check lpvg_chk;

enum { TABLE_MIN_LOG2 = 6 }; /* 64 watches */

#define FILTER_MASK ((1ull << LPVG_FILTER_LOG2) - 1)

/* ---- filter ----------------------------------------------------------------- */

static void filter_add(const struct lp_watch *w, Int delta)
{
	UInt d = lpvg_o.line_shift[w->idx] - lpvg_o.line_shift[0];
	ULong n = 1ull << d, sub = w->line << d;

	for (ULong k = 0; k < n && k <= FILTER_MASK; k++) {
		Long j = (Long)((sub + k) & FILTER_MASK);
		UChar *c = &lpvg_filter[j];
		if (*c >= LPVG_FILTER_SAT)
			continue; /* saturated: stays set */
		if (delta > 0)
			(*c)++;
		else if (*c)
			(*c)--;
		/* the copies around the table, for loads near its ends */
		if (j < LPVG_FILTER_PAD)
			lpvg_filter[j + FILTER_MASK + 1] = *c;
		if (j > (Long)FILTER_MASK - LPVG_FILTER_PAD)
			lpvg_filter[j - (Long)FILTER_MASK - 1] = *c;
	}
}

void lpvg_filter_reset(void)
{
	VG_(memset)(lpvg_filter_mem, 0, sizeof(lpvg_filter_mem));
}

/* ---- exact watch table ----------------------------------------------------- */

static void table_remove(struct lpvg_thread *t, struct lp_watch *w)
{
	filter_add(w, -1);
	lp_watch_remove(&t->watches, w);
}

static void table_grow(struct lpvg_thread *t)
{
	struct lp_watch *old = t->watches.slot;
	UInt log2 = t->watches.log2 + 1;

	/* VG_(malloc) never returns NULL: it ends the run when out of memory */
	lp_watch_table_move(&t->watches, VG_(malloc)("lpvg.watches", lp_watch_table_bytes(log2)),
			    log2);
	VG_(free)(old);
}

static void emit(struct lpvg_thread *t, const struct lp_watch *w, ULong end, ULong reuse_pc, ULong reuse_addr)
{
	if (t->nsamples == LPVG_SAMPLE_CAP) {
		/* the count goes with every batch, before it: a run killed
		 * between the two never has samples later than its count (a
		 * collector slow to read blocked the second send, and the
		 * profile of a killed run came out partial) */
		lpvg_send_thread_running(t);
		lpvg_send_samples(t);
	}
	/* level 0: a fixed rate, never thinned */
	lp_emit_sample(&t->samples[t->nsamples++], w, end, reuse_pc, reuse_addr, t->number, 0);
}

/* The last byte of a reference (clamped where it would wrap). */
static ULong last_byte(ULong addr, ULong size)
{
	ULong last = addr + (size ? size - 1 : 0);

	return last < addr ? ~0ull : last;
}

/* Whether the filter has a watch on a line (smallest size) of the
 * reference: then the exact table decides. */
static Bool filtered(ULong addr, ULong size)
{
	UInt sh = lpvg_o.line_shift[0];

	for (ULong l = addr >> sh; l <= last_byte(addr, size) >> sh; l++)
		if (lpvg_filter[l & FILTER_MASK])
			return True;
	return False;
}

/* The reference ends the samples of the lines it touches: line l of size
 * i at its line-access clock now + ex[i] + (l - its first line). */
static void check_watches(struct lpvg_thread *t, ULong addr, ULong size, ULong pc, ULong now,
			  const ULong *ex)
{
	Bool touched = False;
	ULong last = last_byte(addr, size);

	for (UInt i = 0; i < lpvg_o.nlines; i++) {
		UInt sh = lpvg_o.line_shift[i];
		for (ULong l = addr >> sh; l <= last >> sh; l++) {
			struct lp_watch *w = lp_watch_find(&t->watches, l, i);
			if (w) {
				/* the reference's own address in its first
				 * line, the line's start in a later one */
				emit(t, w, now + ex[i] + (l - (addr >> sh)), pc, l == addr >> sh ? addr : l << sh);
				table_remove(t, w);
				touched = True;
			}
		}
	}
	if (touched && !lpvg_o.alloc_all)
		lpvg_touch(addr);
}

/* A sampled reference watches every line it touches, of every line size:
 * each is a sample (a line access, its part of the reference in the kind
 * byte), so that every line access is sampled with its reference's
 * probability, the second line of a straddling reference as much as the
 * first (as the runtime, src/rt/rt-core.c). */
static void start_sample(struct lpvg_thread *t, ULong addr, UInt size, UInt kind, ULong pc,
			 ULong now, const ULong *ex)
{
	ULong last = last_byte(addr, size);

	for (UInt i = 0; i < lpvg_o.nlines; i++) {
		UInt sh = lpvg_o.line_shift[i];
		ULong first = addr >> sh;
		for (ULong l = first; l <= last >> sh; l++) {
			struct lp_watch *w;
			UInt part = first == last >> sh ? LP_MSG_PART_WHOLE
				    : l == first	   ? LP_MSG_PART_FIRST
							   : LP_MSG_PART_NEXT;

			if (lp_watch_table_must_grow(&t->watches))
				table_grow(t);
			w = lp_watch_insert(&t->watches, l, i);
			w->begin = now + ex[i] + (l - first);
			w->pc = pc;
			w->addr = l == first ? addr : l << sh;
			w->size = size > 255 ? 255 : (UChar)size;
			w->kind = (UChar)(kind | part << LP_MSG_PART_SHIFT);
			w->tag = 0;
			filter_add(w, +1);
		}
	}
	/* the sampled access's block gets its allocation event now */
	if (!lpvg_o.alloc_all)
		lpvg_touch(addr);
}

/* ---- threads ------------------------------------------------------------ */

static ULong next_gap(struct lpvg_thread *t)
{
	ULong gap = lp_rng_geometric(&t->rng, lpvg_o.gap_rate);

	return gap > (ULong)LPVG_GAP_MAX ? (ULong)LPVG_GAP_MAX : gap;
}

struct lpvg_thread *lpvg_thread_new(ThreadId vtid)
{
	struct lpvg_thread *t = VG_(calloc)("lpvg.thread", 1, sizeof(*t));
	uint64_t x;
	ULong gap;

	t->vtid = vtid;
	t->number = lpvg_p.nthreads++;
	t->ostid = (UInt)VG_(gettid)();
	t->fd = -1;
	x = lpvg_o.seed + t->number;
	lp_rng_seed(&t->rng, lp_splitmix64(&x));
	lp_watch_table_init(&t->watches,
			    VG_(malloc)("lpvg.watches", lp_watch_table_bytes(TABLE_MIN_LOG2)),
			    TABLE_MIN_LOG2);
	t->samples = VG_(malloc)("lpvg.samples", LPVG_SAMPLE_CAP * sizeof(*t->samples));
	t->event_cap = lpvg_o.mode == LP_MODE_TRACE ? LPVG_TRACE_CAP : LPVG_ALLOC_CAP;
	t->events = VG_(malloc)("lpvg.events", t->event_cap * sizeof(*t->events));
	/* References so far = epoch - countdown = 0. In sample mode the first
	 * sample is reference number gap (the runtime's first reference only
	 * starts the clock and draws the same gap): the countdown goes below 0
	 * when that reference is done; in trace mode it is unused. */
	gap = lpvg_o.mode == LP_MODE_TRACE ? (ULong)LPVG_GAP_MAX : next_gap(t);
	t->epoch = gap;
	t->cd = (Long)gap;
	lpvg_roi_thread_init(t);
	lpvg_connect(t);
	if (!lpvg_p.maps_sent) {
		lpvg_p.maps_sent = True;
		lpvg_send_maps(t, LP_MAPS_START);
	}
	return t;
}

ULong lpvg_thread_refs(const struct lpvg_thread *t)
{
	if (t->dead)
		return t->final_refs;
	if (t->in_seg)
		return t->seg_refs;
	return lpvg_roi_clock(t, t->cd);
}

/* Extra line accesses of line size i so far (outside a region of
 * interest: at the region's last exit). */
ULong lpvg_thread_extra(const struct lpvg_thread *t, UInt i)
{
	return t->roi_outside ? t->roi_saved_extra[i] : t->extra[i];
}

void lpvg_thread_flush(struct lpvg_thread *t)
{
	/* allocations first: a sample's block is sent before the sample */
	lpvg_allocs_flush(t);
	lpvg_send_samples(t);
	lpvg_send_events(t);
	lpvg_send_region(t);
}

/* Every live watch of t becomes a dangling sample (sample mode) and is
 * forgotten; with unfilter, the filter forgets it too (else the caller
 * resets the whole filter). */
void lpvg_watches_dangle(struct lpvg_thread *t, Bool unfilter)
{
	struct lp_watch *w;
	uint64_t pos = 0;

	while ((w = lp_watch_table_next(&t->watches, &pos))) {
		if (lpvg_o.mode == LP_MODE_SAMPLE)
			emit(t, w, LP_SAMPLE_DANGLING, 0, 0);
		if (unfilter)
			filter_add(w, -1);
	}
	lp_watch_table_clear(&t->watches);
}

/* Live watches become dangling samples; everything is sent; the filter
 * forgets this thread's watches. The connection stays open (for BYE). */
void lpvg_thread_finish(struct lpvg_thread *t)
{
	if (t->dead)
		return;
	t->final_refs = lpvg_thread_refs(t);
	lpvg_watches_dangle(t, True);
	lpvg_phase_close(t, t->final_refs);
	lpvg_thread_flush(t);
	lpvg_send_thread_end(t);
	lpvg_p.refs_done += t->final_refs;
	t->dead = True;
}

void lpvg_thread_free(struct lpvg_thread *t)
{
	if (!t)
		return;
	if (t->fd >= 0)
		VG_(close)(t->fd);
	VG_(free)(t->watches.slot);
	VG_(free)(t->samples);
	VG_(free)(t->events);
	VG_(free)(t);
}

/* Every 64 slow calls, look at the clock: the collector gets the data at
 * least every flush_ms (a SIGKILL loses at most that much). */
static void maybe_flush(struct lpvg_thread *t)
{
	static ULong next_ns;
	ULong now;

	if ((++t->slow_calls & 63) != 0)
		return;
	now = lpvg_now_ns(VKI_CLOCK_MONOTONIC);
	if (now < next_ns)
		return;
	/* the count first, as with each batch (emit()) */
	lpvg_send_thread_running(t);
	lpvg_thread_flush(t);
	if (lpvg_o.mode == LP_MODE_TRACE)
		lpvg_send_others_events(t);
	next_ns = now + (ULong)lpvg_o.flush_ms * 1000000ull;
}

/* ---- the slow paths --------------------------------------------------------- */

/* The extra line accesses of the accesses done in segment s, per line
 * size, into e. */
static void segment_extra(const struct lpvg_seg *s, const UChar *gsp, ULong *e)
{
	VG_(memset)(e, 0, LP_MAX_LINE_SIZES * sizeof(*e));
	for (UInt i = 0; i < s->n; i++) {
		ULong addr = lpvg_acc_addr(&s->acc[i], gsp);
		if (s->acc[i].guarded && addr == LPVG_NONE_ADDR)
			continue;
		for (UInt k = 0; k < lpvg_o.nlines; k++)
			e[k] += lpvg_extra_lines(addr, s->acc[i].size, lpvg_o.line_shift[k]);
	}
}

/* Sample mode. The countdown in the shadow area already has this segment's
 * references subtracted, and its extra line count (smallest line size)
 * this segment's extra lines added. */
VG_REGPARM(1) void lpvg_seg_sample(struct lpvg_seg *s)
{
	UChar *gsp = lpvg_gsp;
	UChar *sh = gsp + LPVG_GS;
	Long *cdp = (Long *)(sh + LPVG_SH_CD);
	struct lpvg_thread *t = *(struct lpvg_thread **)(sh + LPVG_SH_THREAD);
	const ULong *abuf = (const ULong *)(sh + LPVG_SH_ABUF);
	ULong done = s->n, refs, now;
	ULong ex[LP_MAX_LINE_SIZES], seg[LP_MAX_LINE_SIZES]; /* extra lines before the reference, of the segment */

	if (!t || t->dead) {
		*cdp = LPVG_GAP_MAX;
		return;
	}
	if (lpvg_roi_set && lpvg_roi_segment(t, cdp)) {
		t->cd = *cdp;
		maybe_flush(t);
		return; /* outside the region of interest */
	}
	if (s->nguarded)
		for (UInt i = 0; i < s->n; i++)
			done -= s->acc[i].guarded && abuf[s->acc[i].slot] == LPVG_NONE_ADDR;
	refs = t->epoch - (ULong)*cdp; /* this segment included */
	now = refs - done; /* number of its first reference */
	/* the thread's counts, this segment included, for THREAD messages
	 * sent while it is replayed; the clocks before it */
	segment_extra(s, gsp, seg);
	t->extra[0] = *lpvg_extra0();
	for (UInt k = 1; k < lpvg_o.nlines; k++)
		t->extra[k] += seg[k];
	for (UInt k = 0; k < lpvg_o.nlines; k++)
		ex[k] = t->extra[k] - seg[k];
	t->seg_refs = refs;
	t->in_seg = True;
	for (UInt i = 0; i < s->n; i++) {
		const struct lpvg_acc *a = &s->acc[i];
		ULong addr = lpvg_acc_addr(a, gsp);
		if (a->guarded && addr == LPVG_NONE_ADDR)
			continue;
		/* a zero filter byte: no watch on that line in any thread */
		if (t->watches.live && filtered(addr, a->size))
			check_watches(t, addr, a->size, a->pc, now, ex);
		if (now == t->epoch) { /* the countdown ends here: sample it */
			/* with --phases every expiry is a tick, a sample by chance */
			if (!lpvg_phases || lpvg_phase_tick(t, a->pc, now))
				start_sample(t, addr, a->size, a->kind, a->pc, now, ex);
			t->epoch += next_gap(t);
		}
		now++;
		for (UInt k = 0; k < lpvg_o.nlines; k++)
			ex[k] += lpvg_extra_lines(addr, a->size, lpvg_o.line_shift[k]);
	}
	t->in_seg = False;
	*cdp = (Long)(t->epoch - refs);
	if (lpvg_roi_set)
		lpvg_roi_after_segment(t, cdp);
	t->cd = *cdp;
	maybe_flush(t);
}

/* A reference (trace mode) or an allocation event into the buffer. */
static void push_event(struct lpvg_thread *t, ULong addr, ULong size, UInt kind, ULong pc)
{
	struct lp_msg_ref *r;

	if (t->nevents == t->event_cap) {
		lpvg_send_events(t);
		if (lpvg_o.mode == LP_MODE_TRACE)
			lpvg_send_others_events(t);
	}
	r = &t->events[t->nevents++];
	r->addr = addr;
	r->pc = pc;
	r->size = size;
	r->thread = t->number;
	r->kind = kind;
	r->seq = lpvg_o.mode == LP_MODE_TRACE ? lpvg_p.trace_seq++ : 0;
}

/* Trace mode: every reference of the segment, in order. */
VG_REGPARM(1) void lpvg_seg_trace(struct lpvg_seg *s)
{
	UChar *gsp = lpvg_gsp;
	UChar *sh = gsp + LPVG_GS;
	Long *cdp = (Long *)(sh + LPVG_SH_CD);
	struct lpvg_thread *t = *(struct lpvg_thread **)(sh + LPVG_SH_THREAD);
	ULong done = 0;

	if (!t || t->dead)
		return;
	for (UInt i = 0; i < s->n; i++) {
		const struct lpvg_acc *a = &s->acc[i];
		ULong addr = lpvg_acc_addr(a, gsp);
		if (a->guarded && addr == LPVG_NONE_ADDR)
			continue;
		push_event(t, addr, a->size, a->kind, a->pc);
		done++;
	}
	/* The countdown is the reference clock here too (never expires). */
	*cdp -= (Long)done;
	maybe_flush(t);
}

/* --selfcheck=yes: called at the end of every segment. The generated code
 * also stored each access's own address (LPVG_SH2_ADDR); check that the
 * address rebuilt from the slots is that one, and that the fast path's
 * test (countdown < 0) holds whenever the slow path is needed: the
 * countdown expired in the segment, or one of its lines has a watch (a
 * non-zero filter byte). Then do what the fast path would have done. */
VG_REGPARM(1) void lpvg_seg_check(struct lpvg_seg *s)
{
	UChar *gsp = lpvg_gsp;
	UChar *sh = gsp + LPVG_GS;
	const ULong *own = (const ULong *)(gsp + LPVG_SH2_ADDR);
	Long raw = *(Long *)(sh + LPVG_SH_CD);
	Bool need = lpvg_o.mode == LP_MODE_SAMPLE && raw < 0, hit = False;

	lpvg_chk.segs++;
	lpvg_chk.accs += s->n;
	lpvg_chk.shared += s->nshared;
	for (UInt i = 0; i < s->n; i++) {
		const struct lpvg_acc *a = &s->acc[i];
		ULong addr = lpvg_acc_addr(a, gsp);
		if (addr != own[i])
			lpvg_chk.bad_addr++;
		if (a->guarded && addr == LPVG_NONE_ADDR)
			continue;
		if (filtered(addr, a->size))
			need = True;
		/* larger line sizes to count */
		if (lpvg_o.nlines > 1 && lpvg_extra_lines(addr, a->size, lpvg_o.line_shift[0]))
			need = True;
	}
	/* what the generated code decided: the countdown, or its filter loads */
	hit = *(const ULong *)(gsp + LPVG_SH2_HIT) != 0;
	if (lpvg_o.mode == LP_MODE_TRACE) {
		lpvg_seg_trace(s);
		return;
	}
	if (need && !(raw < 0 || hit))
		lpvg_chk.missed++;
	if (raw < 0 || hit)
		lpvg_seg_sample(s);
}

/* A loop exit was taken (vg-instr.c: a repeated string instruction ran
 * out): the accesses of its segment before it (none guarded) happened, and
 * the generated code has not counted them. Count them (references and
 * extra line accesses), and do what the end of a segment does: the slow
 * path if the countdown expired, a line has a watch (the filter, read
 * here), or an access straddles lines and larger line sizes are recorded. */
VG_REGPARM(1) void lpvg_seg_exit(struct lpvg_seg *s)
{
	UChar *gsp = lpvg_gsp;
	Long *cdp = (Long *)(gsp + LPVG_GS + LPVG_SH_CD);
	Bool due = False;

	if (lpvg_o.selfcheck) {
		const ULong *own = (const ULong *)(gsp + LPVG_SH2_ADDR);
		lpvg_chk.segs++;
		lpvg_chk.accs += s->n;
		lpvg_chk.shared += s->nshared;
		for (UInt i = 0; i < s->n; i++)
			if (lpvg_acc_addr(&s->acc[i], gsp) != own[i])
				lpvg_chk.bad_addr++;
	}
	if (lpvg_o.mode == LP_MODE_TRACE) {
		lpvg_seg_trace(s);
		return;
	}
	*cdp -= (Long)s->n;
	due = *cdp < 0;
	for (UInt i = 0; i < s->n; i++) {
		ULong addr = lpvg_acc_addr(&s->acc[i], gsp);
		ULong e = lpvg_extra_lines(addr, s->acc[i].size, lpvg_o.line_shift[0]);
		*lpvg_extra0() += e;
		due |= (e && lpvg_o.nlines > 1) || filtered(addr, s->acc[i].size);
	}
	if (due)
		lpvg_seg_sample(s);
}

/* An allocation event, in the thread's stream (trace mode: between the
 * references around it). */
void lpvg_event(struct lpvg_thread *t, ULong addr, ULong size, UInt kind, ULong pc)
{
	if (t && !t->dead)
		push_event(t, addr, size, kind, pc);
}
