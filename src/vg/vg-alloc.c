/* Allocation events of the program (docs/valgrind.md, "Allocations"): the
 * live heap blocks, their ALLOC and FREE events, the program's own malloc
 * watched through the preload (vg-preload.c), and valgrind's malloc
 * replacement (-X --allocs=replace). */
#include "vg-tool.h"
#include "vg-preload.h"

#include "pub_tool_clientstate.h"
#include "pub_tool_hashtable.h"
#include "pub_tool_libcassert.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcfile.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_libcproc.h"
#include "pub_tool_machine.h"
#include "pub_tool_mallocfree.h"
#include "pub_tool_options.h"
#include "pub_tool_debuginfo.h"
#include "pub_tool_execontext.h"
#include "pub_tool_transtab.h"
#include "pub_tool_oset.h"
#include "pub_tool_replacemalloc.h"
#include "pub_tool_stacktrace.h"
#include "pub_tool_threadstate.h"
#include "pub_tool_vkiscnums.h"
#include "pub_tool_xarray.h"


static ULong n_allocs, n_frees, n_bytes; /* the run's, for ALLOC_SUM */

/* ---- allocations ---------------------------------------------------------------
 * Valgrind's malloc replacement (vgpreload_locprof-amd64-linux.so) sends
 * every malloc, new, free... of the program here; blocks come from
 * valgrind's allocator, with no red zones. The call site is the return
 * address in the caller of malloc (frame 1 of the stack: frame 0 is the
 * replacement function), as the runtime's __builtin_return_address(0). */

/* The live blocks: which addresses are blocks of ours (for realloc, free
 * and malloc_usable_size), and for each its record: requested size,
 * allocation time (the allocating thread's line accesses before it,
 * event_clock()), call
 * site and thread, and whether its allocation event went out. In sample
 * mode the allocation events are sent lazily (docs/valgrind.md, "Touched
 * blocks only"): a block's ALLOC goes out, with its original time, when a
 * sample or a reuse first falls in it, and its FREE only if its ALLOC did;
 * so the block map must also answer "which live block holds this
 * address".
 *
 * The map: one u32 per 16-byte granule of the heap (blocks are 16-byte
 * aligned), 0 for "no block starts here", else the index of the block's
 * record in a pool; in leaves covering 1 MiB each (256 KiB), found through
 * a small table of chunks with a one-entry cache. Blocks allocated or
 * freed together have their entries together, so the map's cache misses
 * follow the program's own; the records are reused last-freed-first, so a
 * program that frees and allocates touches the same few records. (A
 * hashed table with the entries inline cost a cache miss per insertion
 * and per removal: 4% of lua's CPU time.) The block holding an address is
 * the nearest block start at or below it: a backward scan of at most
 * SMALL_MAX bytes' entries finds it for any block up to SMALL_MAX bytes;
 * larger blocks are also in an ordered set (valgrind's OSet) searched by
 * range when the scan finds no start. */
enum { BM_CHUNK_SHIFT = 20, BM_GRAN_SHIFT = 4, BM_LEAF = 1 << (BM_CHUNK_SHIFT - BM_GRAN_SHIFT),
       SMALL_MAX = 4096 };
struct bm_chunk {
	Addr key;   /* (address >> BM_CHUNK_SHIFT) + 1; 0: empty */
	UInt *leaf; /* BM_LEAF entries */
};
static struct bm_chunk *bm_tab;
static UWord bm_cap, bm_used;
static Addr bm_last_key;
static UInt *bm_last_leaf;

struct blk {
	ULong size;    /* requested bytes; on the free list: the next free index */
	ULong time;    /* allocating thread's line accesses before the allocation */
	ULong site;    /* call site */
	ExeContext *stack; /* its call stack (sample mode), NULL when none */
	UInt thread;   /* allocating thread's number */
	UInt emitted;  /* its ALLOC event was sent */
};
static struct blk *blks; /* blks[0] unused: index 0 means "none" */
static UInt blk_cap, blk_top, blk_free;

struct large { /* a block of more than SMALL_MAX bytes */
	Addr start;
	UInt idx;
};
static OSet *larges;
static Addr large_lo, large_hi; /* every large block ever was inside */
static Bool allocs_seen;        /* the malloc replacement is in use */


/* Allocation events with their time (sample mode), in one process-wide
 * buffer: valgrind runs one thread at a time, so the buffer's order is the
 * order of the events (a block's free after its allocation, whichever
 * threads send them). */
static struct lp_msg_alloc_t aev[LPVG_ALLOC_CAP];
static UInt naev;

static UWord bm_home(Addr key, UWord cap)
{
	return (UWord)(((ULong)key * 0x9e3779b97f4a7c15ull) >> 32) & (cap - 1);
}

static void bm_insert(struct bm_chunk *tab, UWord cap, Addr key, UInt *leaf)
{
	UWord i = bm_home(key, cap);

	while (tab[i].key)
		i = (i + 1) & (cap - 1);
	tab[i].key = key;
	tab[i].leaf = leaf;
}

/* The leaf of the chunk holding a; NULL if it has none and !create. */
static UInt *bm_leaf(Addr a, Bool create)
{
	Addr key = (a >> BM_CHUNK_SHIFT) + 1;
	UWord i;
	UInt *leaf;

	if (key == bm_last_key)
		return bm_last_leaf;
	for (i = bm_home(key, bm_cap); bm_tab[i].key; i = (i + 1) & (bm_cap - 1))
		if (bm_tab[i].key == key)
			goto found;
	if (!create)
		return NULL;
	if (2 * (bm_used + 1) > bm_cap) {
		struct bm_chunk *t = VG_(calloc)("lpvg.blockmap", 2 * bm_cap, sizeof(*t));
		for (UWord k = 0; k < bm_cap; k++)
			if (bm_tab[k].key)
				bm_insert(t, 2 * bm_cap, bm_tab[k].key, bm_tab[k].leaf);
		VG_(free)(bm_tab);
		bm_tab = t;
		bm_cap *= 2;
	}
	leaf = VG_(calloc)("lpvg.blockmap.leaf", BM_LEAF, sizeof(*leaf));
	bm_insert(bm_tab, bm_cap, key, leaf);
	bm_used++;
	bm_last_key = key;
	return bm_last_leaf = leaf;
found:
	bm_last_key = key;
	return bm_last_leaf = bm_tab[i].leaf;
}

static UWord bm_index(Addr a)
{
	return (a >> BM_GRAN_SHIFT) & (BM_LEAF - 1);
}

static UInt blk_new(void)
{
	UInt i;

	if (blk_free) {
		i = blk_free;
		blk_free = (UInt)blks[i].size;
		return i;
	}
	if (blk_top == blk_cap) {
		blk_cap = blk_cap ? 2 * blk_cap : 4096;
		tl_assert(blk_cap < (1u << 31));
		blks = VG_(realloc)("lpvg.blocks", blks, blk_cap * sizeof(*blks));
		if (!blk_top)
			blk_top = 1;
	}
	return blk_top++;
}

static Word large_cmp(const void *key, const void *elem)
{
	Addr a = *(const Addr *)key;
	const struct large *l = elem;

	if (a < l->start)
		return -1;
	return a - l->start < blks[l->idx].size ? 0 : 1;
}

static struct blk *block_add(Addr a, SizeT size, ULong time, ULong site, UInt thread)
{
	UInt *leaf = bm_leaf(a, True);
	UInt i = blk_new();
	struct blk *b = &blks[i];

	tl_assert((a & ((1 << BM_GRAN_SHIFT) - 1)) == 0);
	b->size = size;
	b->time = time;
	b->site = site;
	b->stack = NULL;
	b->thread = thread;
	b->emitted = 0;
	leaf[bm_index(a)] = i;
	if (size > SMALL_MAX) {
		struct large *l = VG_(OSetGen_AllocNode)(larges, sizeof(*l));
		l->start = a;
		l->idx = i;
		VG_(OSetGen_Insert)(larges, l);
		if (!large_hi || a < large_lo)
			large_lo = a;
		if (a + size > large_hi)
			large_hi = a + size;
	}
	return b;
}

/* The record of the live block starting at a, or NULL. */
static struct blk *block_find(Addr a)
{
	UInt *leaf;
	UInt i;

	if (!a || (a & ((1 << BM_GRAN_SHIFT) - 1)) || !(leaf = bm_leaf(a, False)))
		return NULL;
	i = leaf[bm_index(a)];
	return i ? &blks[i] : NULL;
}

static void block_remove(Addr a, struct blk *b)
{
	UInt *leaf = bm_leaf(a, False);
	UInt i = (UInt)(b - blks);

	if (b->size > SMALL_MAX)
		VG_(OSetGen_FreeNode)(larges, VG_(OSetGen_Remove)(larges, &a));
	leaf[bm_index(a)] = 0;
	b->size = blk_free;
	blk_free = i;
}

/* The live block holding address a: its start, or 0. */
static Addr block_holding(Addr a, struct blk **out)
{
	Addr g = a & ~(Addr)((1 << BM_GRAN_SHIFT) - 1), stop;
	UInt *leaf = bm_leaf(g, False);
	struct large *l;

	stop = g >= SMALL_MAX ? g - SMALL_MAX : 0;
	/* no leaf: no block starts in a's MiB; only a large one can hold it.
	 * The entries from g down to stop, one leaf at a time (a tight loop:
	 * a sample in a large block scans all 256). */
	while (leaf) {
		UWord k = bm_index(g), lo;
		Addr base = g - ((Addr)k << BM_GRAN_SHIFT), low = stop > base ? stop : base;
		lo = (low - base) >> BM_GRAN_SHIFT;
		while (k > lo && !leaf[k])
			k--;
		if (leaf[k]) {
			UInt i = leaf[k];
			g = base + ((Addr)k << BM_GRAN_SHIFT);
			if (a - g < blks[i].size) {
				*out = &blks[i];
				return g;
			}
			return 0; /* the nearest start: no other block can hold a */
		}
		if (low == stop || low < (1 << BM_GRAN_SHIFT))
			break;
		g = low - (1 << BM_GRAN_SHIFT);
		leaf = bm_leaf(g, False);
	}
	if (a < large_lo || a >= large_hi)
		return 0;
	l = VG_(OSetGen_LookupWithCmp)(larges, &a, large_cmp);
	if (!l)
		return 0;
	*out = &blks[l->idx];
	return l->start;
}

static void blocks_init(void)
{
	bm_cap = 64;
	bm_tab = VG_(calloc)("lpvg.blockmap", bm_cap, sizeof(*bm_tab));
	larges = VG_(OSetGen_Create)(offsetof(struct large, start), NULL, VG_(malloc),
				     "lpvg.blockmap.large", VG_(free));
}

/* ---- allocation events ---------------------------------------------------------- */

/* Send the buffered events. */
void lpvg_allocs_flush(struct lpvg_thread *self)
{
	struct lpvg_thread *t;

	if (!naev)
		return;
	/* One connection while it lasts (the first thread's), so that the
	 * collector reads the batches in the order they were sent; the
	 * calling thread's when it is the last (already out of the table). */
	t = lpvg_any_connected();
	if (!t && self && self->fd >= 0)
		t = self;
	if (t)
		lpvg_send_allocs_t(t, aev, naev);
	naev = 0;
}

static void aev_push(ULong time, Addr a, ULong size, ULong pc, UInt thread,
		     UInt kind)
{
	struct lp_msg_alloc_t *e;

	if (naev == LPVG_ALLOC_CAP)
		lpvg_allocs_flush(NULL);
	e = &aev[naev++];
	e->time = time;
	e->addr = a;
	e->pc = pc;
	e->size = size;
	e->thread = thread;
	e->kind = kind;
}

/* ---- call stacks ------------------------------------------------------------
 * Each allocation's call stack, by valgrind's unwinder (CFI), kept as an
 * ExeContext (valgrind stores each distinct stack once), and sent after
 * the block's ALLOC event as frame records (protocol.h). */

/* The call stack now. */
static ExeContext *stack_now(ThreadId tid)
{
	return VG_(record_ExeContext)(tid, 0);
}

struct stack_up {
	Addr ips[LPVG_STACK_UP + 4];
	UInt n;
};

static void stack_ip(UInt n, DiEpoch ep, Addr ip, void *opaque)
{
	struct stack_up *u = opaque;

	(void)ep;
	if (u->n < LPVG_STACK_UP + 4)
		u->ips[u->n++] = ip;
}

/* The callers above block b's call site into up (at most LPVG_STACK_UP):
 * the stack's first frames are the allocation function's (ips[0], and
 * operator new's under its malloc), up to the call site. */
static UInt stack_above(const struct blk *b, Addr *up)
{
	struct stack_up u = { .n = 0 };
	UInt i = 1, n = 0;

	if (b->stack)
		VG_(apply_ExeContext)(stack_ip, &u, b->stack);
	while (i < u.n && i < 4 && u.ips[i] != b->site)
		i++;
	if (i >= u.n || i >= 4)
		return 0; /* the site is not among the first frames: no stack */
	for (i++; i < u.n && n < LPVG_STACK_UP; i++)
		up[n++] = u.ips[i];
	return n;
}

/* The block's ALLOC event, then its callers above its call site. */
static void aev_push_alloc(const struct blk *b, Addr start)
{
	Addr up[LPVG_STACK_UP];
	UInt n = stack_above(b, up), recs = (n + 3) / 4;

	if (naev + 1 + recs > LPVG_ALLOC_CAP)
		lpvg_allocs_flush(NULL);
	aev_push(b->time, start, b->size, b->site, b->thread, LP_EV_ALLOC);
	for (UInt r = 0; r < recs; r++) {
		ULong f[4] = { 0, 0, 0, 0 };
		for (UInt k = 0; k < 4 && 4 * r + k < n; k++)
			f[k] = up[4 * r + k];
		aev_push(f[0], (Addr)f[1], f[3], f[2], b->thread, LP_MSG_EV_FRAMES);
	}
}

/* Trace mode: the ALLOC event among the references, then its frames as
 * the runtime sends them (three a record, protocol.h). */
static void trace_push_alloc(struct lpvg_thread *t, const struct blk *b, Addr start)
{
	Addr up[LPVG_STACK_UP];
	UInt n = stack_above(b, up);

	lpvg_event(t, (ULong)start, b->size, LP_EV_ALLOC, b->site);
	for (UInt r = 0; 3 * r < n; r++) {
		ULong f[3] = { 0, 0, 0 };
		for (UInt k = 0; k < 3 && 3 * r + k < n; k++)
			f[k] = up[3 * r + k];
		lpvg_event(t, f[0], f[2], LP_MSG_EV_FRAMES, f[1]);
	}
}

/* A sample or a reuse touched address a (thread t's slow path): the
 * allocation of the block holding it goes out now if it has not yet. */
void lpvg_touch(ULong a)
{
	struct blk *b = NULL;
	Addr start = block_holding((Addr)a, &b);

	if (!start || b->emitted)
		return;
	b->emitted = 1;
	aev_push_alloc(b, start);
}

/* The process's counts and what its events are (cumulative; the
 * collector keeps the last). */
void lpvg_send_alloc_summary(struct lpvg_thread *t)
{
	if (!t || lpvg_o.mode != LP_MODE_SAMPLE || !allocs_seen)
		return;
	lpvg_allocs_flush(t);
	lpvg_send_alloc_sum(t, (lpvg_o.alloc_all ? 0 : LP_MSG_ALLOCS_TOUCHED) | LP_MSG_ALLOCS_THREAD_CLOCK,
			    n_allocs, n_frees, n_bytes);
}

/* A forked child: its heap is the parent's, its clocks start at 0 and
 * its profile has none of the parent's events. Inherited blocks become
 * blocks of the child's first thread allocated at time 0 (before its
 * first reference), not yet sent. The buffer's events are the parent's. */
void lpvg_allocs_atfork(void)
{
	for (UInt i = 1; i < blk_top; i++) {
		blks[i].time = 0;
		blks[i].thread = 0;
		blks[i].emitted = 0;
	}
	naev = 0;
	n_allocs = n_frees = n_bytes = 0;
}

/* The call site by valgrind's unwinder (CFI): slow, a few hundred ns a
 * call, which doubled the time of allocation-heavy programs (lua). */
static ULong call_site_slow(ThreadId tid, Addr *sps)
{
	Addr ips[2];
	UInt n = VG_(get_StackTrace)(tid, ips, 2, sps, NULL, 0);

	if (n < 2)
		sps[1] = 0;
	return n >= 2 ? (ULong)ips[1] : n ? (ULong)ips[0] : 0;
}

/* The request comes from a few fixed places in the replacement functions,
 * each with a fixed frame: the return address into the program sits at a
 * fixed offset from the stack pointer there. So: unwind once per place,
 * remember where the return address was (checked: it reads back as what
 * the unwinder said, up to the unwinder's -1 that points into the call),
 * then read it from the stack. Same call sites as the unwinder gives. */
enum { SITE_CACHE = 64 };
static struct site_cache {
	Addr ip;     /* 0: empty */
	Word off;    /* return address at SP + off */
	Word delta;  /* call site = return address + delta */
} site_cache[SITE_CACHE];

static ULong call_site(ThreadId tid)
{
	Addr ip = VG_(get_IP)(tid), sp = VG_(get_SP)(tid), sps[2];
	struct site_cache *c = &site_cache[(ip >> 2) % SITE_CACHE];
	ULong site;

	if (c->ip == ip && ip)
		return (ULong)(*(const Addr *)(sp + c->off) + c->delta);
	site = call_site_slow(tid, sps);
	if (sps[1] > sp && sps[1] - sp <= 4096 && sps[0] == sp) {
		Addr ra = *(const Addr *)(sps[1] - 8);
		Word delta = (Word)(site - ra);
		if (delta == 0 || delta == -1) {
			c->ip = ip;
			c->off = (Word)(sps[1] - 8 - sp);
			c->delta = delta;
		}
	}
	return site;
}

/* An event's time on the clock its thread's samples count: the line
 * accesses of the smallest line size, its references so far (countdown
 * cd) and the extra lines of those that straddle two (extra0, both in the
 * thread's guest state). References alone drift behind that clock by
 * every straddle of the run, and a block freed and another allocated at
 * its address would swap places for the accesses in between. */
static ULong event_clock(const struct lpvg_thread *t, Long cd, ULong extra0)
{
	return lpvg_roi_clock(t, cd) + (t->roi_outside ? t->roi_saved_extra[0] : extra0);
}

/* Its countdown and extra lines are in its guest state, current while the
 * scheduler serves the client request. */
static ULong thread_now(ThreadId tid, const struct lpvg_thread *t)
{
	Long cd;
	ULong extra0;

	VG_(get_shadow_regs_area)(tid, (UChar *)&cd, 1, LPVG_SH_CD, sizeof(cd));
	VG_(get_shadow_regs_area)(tid, (UChar *)&extra0, 1, LPVG_SH_EXTRA, sizeof(extra0));
	return event_clock(t, cd, extra0);
}

/* A block of n bytes at p, allocated by thread t (NULL: unknown) after
 * `time` of its references. */
static void on_alloc(struct lpvg_thread *t, ULong time, Addr p, SizeT n, ULong site, ExeContext *stack)
{
	UInt thread = 0;
	struct blk *b;

	if (p & ((1 << BM_GRAN_SHIFT) - 1))
		return; /* not a heap block as malloc makes them: not tracked */
	allocs_seen = True;
	if (t && !t->dead)
		thread = t->number;
	else
		time = ~0ull; /* unknown */
	if ((b = block_find(p))) /* its free was missed: the old block ends */
		block_remove(p, b);
	b = block_add(p, n, time, site, thread);
	b->stack = stack;
	n_allocs++;
	n_bytes += n;
	if (lpvg_o.mode == LP_MODE_TRACE) {
		trace_push_alloc(t, b, p);
	} else if (lpvg_o.alloc_all && t && !t->dead) {
		b->emitted = 1;
		aev_push_alloc(b, p);
	}
}

/* The free of p by thread t; False if p is no live block. */
static Bool on_free(struct lpvg_thread *t, ULong time, Addr p, ULong site)
{
	struct blk *b = block_find(p);
	Bool emitted;

	if (!b)
		return False;
	emitted = b->emitted;
	block_remove(p, b);
	n_frees++;
	if (lpvg_o.mode == LP_MODE_TRACE)
		lpvg_event(t, (ULong)p, 0, LP_EV_FREE, site);
	else if (emitted && t && !t->dead)
		aev_push(time, p, 0, site, t->number, LP_EV_FREE);
	return True;
}

/* ---- the program's own malloc, watched (vg-preload.c) ------------------------ */

static Addr hook_addr[LPVG_HOOKS_MAX];
static UInt hook_kinds[LPVG_HOOKS_MAX], nhooks;
static Addr hook_tramp;

UInt lpvg_hook_kind(Addr a)
{
	for (UInt i = 0; i < nhooks; i++)
		if (hook_addr[i] == a)
			return hook_kinds[i];
	return LPVG_H_NONE;
}

static ULong shadow_time(const UChar *gsp, const struct lpvg_thread *t)
{
	return lpvg_o.mode == LP_MODE_SAMPLE ? event_clock(t, *(const Long *)(gsp + LPVG_GS + LPVG_SH_CD),
							   *(const ULong *)(gsp + LPVG_GS + LPVG_SH_EXTRA))
					     : ~0ull;
}

/* The first instruction of a watched function (the segment before it is
 * counted, so the countdown is the exact time). */
VG_REGPARM(2) void lpvg_entry_hook(UChar *gsp, UWord kind)
{
	const VexGuestAMD64State *g = (const VexGuestAMD64State *)gsp;
	struct lpvg_thread *t = *(struct lpvg_thread **)(gsp + LPVG_GS + LPVG_SH_THREAD);
	ULong sp = g->guest_RSP, ra;
	struct lpvg_pend *pd;

	if (!t || t->dead)
		return;
	ra = *(const ULong *)sp;
	if (kind == LPVG_H_NEW) {
		t->new_site = ra - 1;
		t->new_sp = sp;
		return;
	}
	/* inside a watched call (realloc's malloc, memalign's...): a little
	 * deeper on the same stack. A call elsewhere (a signal handler on its
	 * own stack, or after a longjmp out of one that interrupted malloc,
	 * whose pending call never returns) is a call of its own. */
	if (t->npend && sp < t->pend[t->npend - 1].sp && t->pend[t->npend - 1].sp - sp < 4096)
		return;
	if (kind == LPVG_H_FREE) {
		on_free(t, shadow_time(gsp, t), (Addr)g->guest_RDI, ra - 1);
		return;
	}
	if (t->npend == LPVG_PEND_MAX)
		return; /* not watched: lost */
	pd = &t->pend[t->npend++];
	pd->ra = ra;
	pd->sp = sp;
	/* operator new's malloc: the site of the new */
	pd->site = t->new_sp > sp && t->new_sp - sp < 1024 ? t->new_site : ra - 1;
	t->new_sp = 0;
	pd->stack = stack_now(VG_(get_running_tid)());
	pd->a1 = g->guest_RDI;
	pd->a2 = g->guest_RSI;
	pd->a3 = g->guest_RDX;
	pd->kind = (UInt)kind;
	*(ULong *)sp = hook_tramp; /* it returns to the trampoline */
}

/* locprof_vg_ret(result, slot): a watched call returned (through the
 * trampoline); its real return address goes into the slot. */
VG_REGPARM(1) void lpvg_ret_hook(UChar *gsp)
{
	const VexGuestAMD64State *g = (const VexGuestAMD64State *)gsp;
	struct lpvg_thread *t = *(struct lpvg_thread **)(gsp + LPVG_GS + LPVG_SH_THREAD);
	ULong r = g->guest_RDI, time, n;
	struct lpvg_pend pd;

	if (!t || !t->npend)
		VG_(tool_panic)("locprof: a watched allocation returned, but none was under way");
	pd = t->pend[--t->npend];
	*(ULong *)g->guest_RSI = pd.ra;
	if (t->dead)
		return;
	time = shadow_time(gsp, t);
	switch (pd.kind) {
	case LPVG_H_ALLOC1:
		if (r)
			on_alloc(t, time, (Addr)r, pd.a1, pd.site, pd.stack);
		break;
	case LPVG_H_ALLOC2:
		if (r)
			on_alloc(t, time, (Addr)r, pd.a2, pd.site, pd.stack);
		break;
	case LPVG_H_CALLOC:
		if (r && !__builtin_mul_overflow(pd.a1, pd.a2, &n))
			on_alloc(t, time, (Addr)r, n, pd.site, pd.stack);
		break;
	case LPVG_H_REALLOC:
	case LPVG_H_REALLOCARRAY: {
		/* the old block ends (realloc(p, 0) frees it), the new one starts
		 * (at the same address when resized in place) */
		Bool ovf = pd.kind == LPVG_H_REALLOCARRAY ? __builtin_mul_overflow(pd.a2, pd.a3, &n)
							  : (n = pd.a2, False);
		if (pd.a1 && (r || (n == 0 && !ovf)))
			on_free(t, time, (Addr)pd.a1, pd.site);
		if (r)
			on_alloc(t, time, (Addr)r, n, pd.site, pd.stack);
		break;
	}
	case LPVG_H_POSIX_MEMALIGN:
		if ((Int)r == 0)
			on_alloc(t, time, (Addr) * (const ULong *)pd.a1, pd.a3, pd.site, pd.stack);
		break;
	}
}

/* The preload registers the functions to watch: from now on its own code
 * is translated without reference tracing, its return function and the
 * entries of the watched ones call the hooks (translations made before
 * are dropped). */
static Bool client_request(ThreadId tid, UWord *args, UWord *ret)
{
	const struct lpvg_hooks *h = (const struct lpvg_hooks *)args[1];
	DebugInfo *di;

	if (args[0] == LPVG_REQ_ROI)
		return lpvg_roi_request(tid, args, ret);
	if (args[0] != LPVG_REQ_REGISTER)
		return False;
	*ret = 0;
	if (lpvg_o.inert || lpvg_marker || !h)
		return True;
	lpvg_tls_register(h);
	lpvg_tls_thread(lpvg_thread_of(tid), lpvg_gsp);
	di = VG_(find_DebugInfo)(VG_(current_DiEpoch)(), (Addr)h->ret_fn);
	if (!di || !VG_(DebugInfo_get_text_size)(di))
		return True; /* no events: the program runs as with --allocs=no */
	lpvg_pre_lo = VG_(DebugInfo_get_text_avma)(di);
	lpvg_pre_hi = lpvg_pre_lo + VG_(DebugInfo_get_text_size)(di);
	lpvg_marker = (Addr)h->ret_fn;
	hook_tramp = (Addr)h->tramp;
	VG_(discard_translations_safely)(lpvg_pre_lo, lpvg_pre_hi - lpvg_pre_lo, "locprof");
	for (UWord i = 0; i < h->n && i < LPVG_HOOKS_MAX; i++) {
		if (!h->addr[i] || h->kind[i] == LPVG_H_NONE || h->kind[i] > LPVG_H_NEW)
			continue;
		hook_addr[nhooks] = (Addr)h->addr[i];
		hook_kinds[nhooks++] = (UInt)h->kind[i];
		VG_(discard_translations_safely)((Addr)h->addr[i], 1, "locprof");
	}
	*ret = 1;
	return True;
}

/* -X --allocs=replace: valgrind's replacement (client requests). */
static void *alloc_block(ThreadId tid, SizeT n, SizeT align, Bool zero)
{
	struct lpvg_thread *t;
	ULong time = ~0ull;
	void *p;

	if ((Long)n < 0)
		return NULL;
	p = VG_(cli_malloc)(align, n);
	if (!p)
		return NULL;
	if (zero)
		VG_(memset)(p, 0, n);
	if (lpvg_o.inert) {
		block_add((Addr)p, n, time, 0, 0);
		return p;
	}
	t = lpvg_thread_of(tid);
	if (t && !t->dead && lpvg_o.mode == LP_MODE_SAMPLE)
		time = thread_now(tid, t);
	on_alloc(t, time, (Addr)p, n, call_site(tid), stack_now(tid));
	return p;
}

static void free_block(ThreadId tid, void *p)
{
	struct lpvg_thread *t;
	struct blk *b;

	if (!p)
		return;
	if (lpvg_o.inert) {
		if ((b = block_find((Addr)p))) {
			block_remove((Addr)p, b);
			VG_(cli_free)(p);
		}
		return;
	}
	t = lpvg_thread_of(tid);
	/* not ours: ignore, as glibc would crash instead */
	if (on_free(t, t && !t->dead ? thread_now(tid, t) : ~0ull, (Addr)p, call_site(tid)))
		VG_(cli_free)(p);
}

static void *lp_malloc(ThreadId tid, SizeT n)
{
	return alloc_block(tid, n, VG_(clo_alignment), False);
}

static void *lp_new_aligned(ThreadId tid, SizeT n, SizeT align)
{
	return alloc_block(tid, n, align, False);
}

static void *lp_memalign(ThreadId tid, SizeT align, SizeT n)
{
	return alloc_block(tid, n, align, False);
}

static void *lp_calloc(ThreadId tid, SizeT m, SizeT size)
{
	if (size && m > ~(SizeT)0 / size)
		return NULL;
	return alloc_block(tid, m * size, VG_(clo_alignment), True);
}

static void lp_free(ThreadId tid, void *p)
{
	free_block(tid, p);
}

static void lp_delete_aligned(ThreadId tid, void *p, SizeT align)
{
	free_block(tid, p);
}

static void *lp_realloc(ThreadId tid, void *old, SizeT n)
{
	struct blk *b;
	SizeT osize;
	void *p;

	if (!old)
		return lp_malloc(tid, n);
	if (!(b = block_find((Addr)old)))
		return NULL;
	osize = b->size;
	p = alloc_block(tid, n, VG_(clo_alignment), False);
	if (!p)
		return NULL; /* the old block stays */
	VG_(memcpy)(p, old, osize < n ? osize : n);
	free_block(tid, old);
	return p;
}

static SizeT lp_usable_size(ThreadId tid, void *p)
{
	struct blk *b = block_find((Addr)p);

	return b ? b->size : 0;
}

void lpvg_alloc_counts(ULong *allocs, ULong *frees)
{
	*allocs = n_allocs;
	*frees = n_frees;
}

void lpvg_allocs_register(void)
{
	blocks_init();
	VG_(needs_client_requests)(client_request);
	/* The replacement is used only if vgpreload_locprof-amd64-linux.so
	 * is in the tool directory: `locprof record -X --allocs=no` leaves it
	 * out, and the program then runs glibc's malloc (traced like any
	 * other code) and reports no allocations. */
	VG_(needs_malloc_replacement)(lp_malloc, lp_malloc, lp_new_aligned, lp_malloc,
				      lp_new_aligned, lp_memalign, lp_calloc, lp_free, lp_free,
				      lp_delete_aligned, lp_free, lp_delete_aligned, lp_realloc,
				      lp_usable_size, 0);
}
