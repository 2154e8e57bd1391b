/* Internal header of the locprof valgrind tool (docs/valgrind.md).
 *
 * The tool runs inside valgrind: no libc, only the VG_(...) API of the
 * pub_tool_*.h headers and a few libcoregrind functions whose pub_core
 * headers Debian does not ship (declared below). It speaks the collector
 * protocol (src/lib/collect/protocol.h) to `locprof record`, one Unix-socket
 * connection per guest thread, exactly as the instrumentation runtime does.
 *
 * Files: vg-main.c (registration, threads, fork/exec/exit), vg-options.c
 * (options), vg-alloc.c (allocation events, malloc replacement),
 * vg-instr.c (IR instrumentation), vg-sample.c (the sampler and the trace
 * buffer: the slow paths the instrumented code calls), vg-phase.c (record
 * --phases), vg-roi.c (regions of interest), vg-conn.c (socket and
 * messages), vg-math.c (log/log1p/floor for rng.h without libm), vg-tls.c
 * (the threads' TLS blocks).
 *
 * The hot state of each thread lives in its guest state's first shadow area
 * (unused by this tool otherwise), which generated code reaches at a small
 * offset from the guest-state pointer it keeps in a register; so each
 * thread has its own without any switching. Layout (offsets within the
 * shadow area, LPVG_SH_*): the countdown, the thread's struct pointer, the
 * segment's address buffer.
 */
#ifndef LP_VG_TOOL_H
#define LP_VG_TOOL_H

#include "pub_tool_basics.h"
#include "pub_tool_vki.h"
#include "pub_tool_tooliface.h"
#include "libvex_guest_amd64.h"

#include "pub_tool_libcassert.h"

#include "collect/protocol.h"
#include "common/rng.h"
#define LP_WATCH_ASSERT(cond) tl_assert(cond)
#include "common/watch-core.h"
#include "collect/emit-core.h"
#include "collect/phase-sampler.h"

#include <locprof/common.h>

/* libcoregrind functions with no pub_tool declaration in 3.19. */
extern SysRes VG_(do_syscall)(UWord sysno, UWord a1, UWord a2, UWord a3, UWord a4, UWord a5,
			      UWord a6, UWord a7, UWord a8);
extern Int VG_(socket)(Int domain, Int type, Int protocol);
extern Int VG_(safe_fd)(Int oldfd);
extern Int VG_(fcntl)(Int fd, Int cmd, Addr arg);
extern Int VG_(fd_soft_limit);
extern Int VG_(fd_hard_limit);
extern void *VG_(get_ThreadState)(ThreadId tid); /* its guest state at a fixed offset */

#define LPVG_SEG_MAX 64       /* accesses per instrumented segment */
#define LPVG_FILTER_LOG2 24   /* slots of the watched-line filter */
#define LPVG_SAMPLE_CAP 4096  /* samples per SAMPLES message */
#define LPVG_TRACE_CAP 8192   /* references per REFS message */
#define LPVG_ALLOC_CAP 1024   /* allocation events per ALLOCS message */
#define LPVG_STACK_UP 12      /* frames sent above an allocation's call site (3 records) */
#define LPVG_CMDLINE_MAX 4096
#define LPVG_PEND_MAX 8       /* nested watched allocation calls per thread */
#define LPVG_NONE_ADDR (~0ULL) /* address slot of a guarded access not done */
#define LPVG_GAP_MAX (1ll << 38) /* longest gap between samples */
#define LPVG_FILTER_SAT 127   /* a filter count stops here: the top bit of every load stays clear */
#define LPVG_FILTER_NEAR 256  /* lines: filter loads at a root's line + up to this many */
#define LPVG_FILTER_PAD (LPVG_FILTER_NEAR + 8) /* filter bytes before and after: copies */

/* Offsets in the shadow area (guest state offset sizeof(VexGuestAMD64State)). */
#define LPVG_SH_CD 0          /* Long: references left before the next sampled one (< 0: due) */
#define LPVG_SH_THREAD 8      /* struct lpvg_thread * */
#define LPVG_SH_ABUF 16       /* ULong[LPVG_SEG_MAX]: the segment's addresses */
/* ULong: the thread's extra line accesses of the smallest line size (a
 * reference touching k such lines adds k - 1), summed by the generated
 * code at each segment's end (vg-instr.c, "Straddling references") */
#define LPVG_SH_EXTRA (LPVG_SH_ABUF + 8 * LPVG_SEG_MAX)
#define LPVG_GS ((Int)sizeof(VexGuestAMD64State)) /* where the shadow area starts */
/* --selfcheck=yes: the OR of the segment's filter loads and every access's
 * own address, in the second shadow area. */
#define LPVG_SH2_HIT (2 * LPVG_GS)
#define LPVG_SH2_ADDR (2 * LPVG_GS + 8)

/* One memory access of a segment, fixed at instrumentation time. Its
 * address is abuf[slot] + off: accesses of a segment whose addresses are
 * the same IR value plus constants (push/pop, spills, fields of one
 * structure) share one slot; a constant address has slot LPVG_SLOT_ABS
 * and off = the address. A guarded access has a slot of its own (off 0)
 * that holds LPVG_NONE_ADDR when the access is not done. */
struct lpvg_acc {
	ULong pc;
	Long off;
	UShort size;   /* bytes (a dirty helper may touch up to 512+) */
	UChar kind;    /* LP_REF_READ / LP_REF_WRITE */
	UChar guarded; /* its slot may hold LPVG_NONE_ADDR */
	UChar slot;    /* index in abuf, LPVG_SLOT_REG + register, or LPVG_SLOT_ABS */
	Short dfm;     /* a string instruction's: plus dfm * (DF - 1) (DF: +1 or -1) */
};
#define LPVG_SLOT_ABS 0xff
/* slot LPVG_SLOT_REG + r: the root is guest integer register r (rax, rcx,
 * ... r15, from LPVG_REG0) at the segment's end: no store at all */
#define LPVG_SLOT_REG 0x80
#define LPVG_NREGS 16
#define LPVG_REG0 ((Int)offsetof(VexGuestAMD64State, guest_RAX))
#define LPVG_DF ((Int)offsetof(VexGuestAMD64State, guest_DFLAG))

/* A segment: the accesses between two possible exits of a superblock. The
 * generated code stores the base of each slot in abuf[slot] and, at the
 * end of the segment, subtracts the number of accesses done from the
 * countdown and calls the slow path if the result is <= 0 or the filter
 * saw a watched line. */
struct lpvg_seg {
	struct lpvg_seg *next; /* all segments of one superblock */
	UInt n;
	UInt nguarded;
	UInt nslots;
	UInt nshared;          /* accesses that reuse another's slot or are absolute */
	struct lpvg_acc acc[];
};

/* The address of access a of a segment, from the slots the code stored
 * or the guest register its root is in at the segment's end. */
static inline ULong lpvg_acc_addr(const struct lpvg_acc *a, const UChar *gsp)
{
	ULong base;

	if (a->slot == LPVG_SLOT_ABS)
		base = 0;
	else if (a->slot & LPVG_SLOT_REG)
		base = *(const ULong *)(gsp + LPVG_REG0 + 8 * (a->slot & ~LPVG_SLOT_REG));
	else
		base = ((const ULong *)(gsp + LPVG_GS + LPVG_SH_ABUF))[a->slot];
	if (a->dfm)
		base += (ULong)((Long)a->dfm * (*(const Long *)(gsp + LPVG_DF) - 1));
	return base + (ULong)a->off;
}

struct lpvg_thread {
	ThreadId vtid;   /* valgrind's id, reused after the thread ends */
	UInt number;     /* 0 = first thread of this process image */
	UInt ostid;      /* kernel thread id */
	Int fd;          /* connection, -1 if none or broken */
	Bool dead;
	Long cd;         /* copy of the shadow countdown, taken when it stops running */
	ULong epoch;     /* references so far = epoch - countdown; the next sampled one */
	ULong final_refs;
	/* Extra line accesses per line size (docs/valgrind.md, "Straddling
	 * references"): [0] a copy of the shadow's LPVG_SH_EXTRA (as cd of
	 * the countdown: taken when the thread stops running, and at its slow
	 * paths); the others counted by the slow paths. */
	ULong extra[LP_MAX_LINE_SIZES];
	Bool in_seg;     /* a slow path replays a segment: the count is seg_refs */
	ULong seg_refs;
	ULong slow_calls;
	struct lp_rng rng;

	struct lp_watch_table watches; /* live watches (tag unused) */

	/* watched allocation calls under way (vg-main.c, vg-preload.c) */
	struct lpvg_pend {
		ULong ra, sp, site, a1, a2, a3;
		struct _ExeContext *stack; /* the call stack at the entry */
		UInt kind;
	} pend[LPVG_PEND_MAX];
	UInt npend;
	ULong new_site, new_sp; /* operator new's call site, for its malloc */

	struct lp_msg_sample *samples;
	UInt nsamples;
	struct lp_msg_ref *events;
	UInt nevents, event_cap;

	Bool tls_sent; /* its TLS blocks (vg-tls.c) */

	/* region of interest (vg-roi.c): outside it, the clock put aside */
	Bool roi_outside, roi_skip_phase;
	ULong roi_saved_epoch;
	ULong roi_saved_extra[LP_MAX_LINE_SIZES];
	Long roi_saved_cd;
	ULong roi_skipped, roi_skip_left;

	struct lp_phase_thread ph; /* record --phases (vg-phase.c) */
};

struct lpvg_opts {
	const HChar *socket;
	Int mode;                 /* LP_MODE_SAMPLE / LP_MODE_TRACE */
	double rate;
	double gap_rate;          /* the countdown's: the rate, or the tick rate of --phases */
	UInt nlines;
	UInt line_size[LP_MAX_LINE_SIZES];
	UInt line_shift[LP_MAX_LINE_SIZES];
	ULong seed;
	UInt flush_ms;
	Int reserve_fds;          /* extra fds kept out of the client's reach */
	Bool inert;               /* no collector: run uninstrumented */
	Bool selfcheck;           /* test: check the fast path against every address */
	Bool alloc_all;           /* --alloc-events=all: every block's events, not the touched ones' */
	/* record --phases, from the environment (protocol.h): references per
	 * interval (0: off), sampled references per phase at the full rate,
	 * the rate after (< 0: rate / 32), the classifier's threshold */
	ULong phase_interval, phase_samples;
	double phase_rate, phase_threshold;
};

extern struct lpvg_opts lpvg_o;

/* The watched-line filter, read by generated code: one byte per slot,
 * lpvg_filter[0 .. 2^LPVG_FILTER_LOG2), with LPVG_FILTER_PAD bytes before
 * and after it that copy the last and the first slots, so that a load of
 * up to 8 bytes at any slot + k, |k| <= LPVG_FILTER_NEAR, reads slots
 * (slot + k ...) mod 2^LPVG_FILTER_LOG2. */
extern UChar lpvg_filter_mem[LPVG_FILTER_PAD + (1u << LPVG_FILTER_LOG2) + LPVG_FILTER_PAD];
#define lpvg_filter (lpvg_filter_mem + LPVG_FILTER_PAD)

/* --selfcheck counters (vg-sample.c). */
struct lpvg_check {
	ULong segs, accs, shared, bad_addr, missed;
};
extern struct lpvg_check lpvg_chk;

/* Process image. */
struct lpvg_proc {
	UInt pid, ppid;
	ULong nonce, start_ns;
	HChar cmdline[LPVG_CMDLINE_MAX];
	UInt cmdline_len;
	UInt nthreads;            /* numbers handed out */
	ULong refs_done;          /* references of threads already finished */
	ULong trace_seq;          /* trace mode: the next record's number, all threads */
	Bool maps_sent;
	Bool connected_any;
	Bool exit_seen;
	Int exit_status;
};
extern struct lpvg_proc lpvg_p;

/* vg-instr.c */
IRSB *lpvg_instrument(VgCallbackClosure *closure, IRSB *sb, const VexGuestLayout *layout,
		      const VexGuestExtents *vge, const VexArchInfo *archinfo, IRType gWordTy,
		      IRType hWordTy);
void lpvg_discard_sb(Addr orig_addr, VexGuestExtents vge);
void lpvg_instr_init(void);
/* vg-omp.c: the superblock at a is about to be instrumented; the first
 * one of an OpenMP runtime warns about spin-waiting (once). */
void lpvg_omp_check(Addr a);
/* The preload (vg-preload.c), once registered: its return function and
 * text, and the watched functions' entries. */
extern Addr lpvg_marker, lpvg_pre_lo, lpvg_pre_hi;
UInt lpvg_hook_kind(Addr a);

/* vg-sample.c */
/* The guest state of the thread running client code (vg-main.c sets it
 * whenever one starts), for the slow paths the generated code calls:
 * passing it as an argument cost two host instructions per segment. */
extern UChar *lpvg_gsp;
VG_REGPARM(1) void lpvg_seg_sample(struct lpvg_seg *s);
VG_REGPARM(1) void lpvg_seg_trace(struct lpvg_seg *s);
VG_REGPARM(1) void lpvg_seg_check(struct lpvg_seg *s);
VG_REGPARM(1) void lpvg_seg_exit(struct lpvg_seg *s);
struct lpvg_thread *lpvg_thread_new(ThreadId vtid);
void lpvg_thread_finish(struct lpvg_thread *t);
void lpvg_thread_free(struct lpvg_thread *t);
void lpvg_thread_flush(struct lpvg_thread *t);
/* Trace mode: send every other live thread's buffered records (vg-main.c). */
void lpvg_send_others_events(struct lpvg_thread *self);
void lpvg_watches_dangle(struct lpvg_thread *t, Bool unfilter);
ULong lpvg_thread_refs(const struct lpvg_thread *t);
ULong lpvg_thread_extra(const struct lpvg_thread *t, UInt i);
/* The extra line accesses of a reference of size bytes at addr, of the
 * line size of index i. */
static inline ULong lpvg_extra_lines(ULong addr, ULong size, UInt shift)
{
	ULong last = addr + (size ? size - 1 : 0);

	if (last < addr)
		last = ~0ull; /* wraps: clamp, as the trace readers do */
	return (last >> shift) - (addr >> shift);
}
/* The running thread's extra line accesses of the smallest line size so
 * far, in its shadow area (lpvg_gsp: the thread running client code). */
static inline ULong *lpvg_extra0(void)
{
	return (ULong *)(lpvg_gsp + LPVG_GS + LPVG_SH_EXTRA);
}
void lpvg_event(struct lpvg_thread *t, ULong addr, ULong size, UInt kind, ULong pc);
void lpvg_filter_reset(void);

/* vg-main.c: the threads */
struct lpvg_thread *lpvg_thread_of(ThreadId tid);
struct lpvg_thread *lpvg_any_connected(void);

/* vg-roi.c: the region of interest */
extern Bool lpvg_roi_set; /* False: the whole run, and none of these is called */
void lpvg_roi_init(void);
void lpvg_roi_thread_init(struct lpvg_thread *t);
UInt lpvg_roi_at(Addr a);
VG_REGPARM(2) void lpvg_roi_hook(UChar *gsp, UWord what);
Bool lpvg_roi_request(ThreadId tid, UWord *args, UWord *ret);
/* At a slow path, before its segment: True when the thread is outside
 * (the segment counted as skipped, nothing else to do). After it: leave
 * if the region ended. */
Bool lpvg_roi_segment(struct lpvg_thread *t, Long *cdp);
void lpvg_roi_after_segment(struct lpvg_thread *t, Long *cdp);
/* The thread's reference clock (its countdown cd), skipped references. */
ULong lpvg_roi_clock(const struct lpvg_thread *t, Long cd);
ULong lpvg_roi_skipped(const struct lpvg_thread *t, Long cd);
ULong lpvg_roi_entries(void);
void lpvg_send_region(struct lpvg_thread *t);

/* vg-phase.c: record --phases (collect/phase-sampler.h) */
extern Bool lpvg_phases; /* False: none of these is called but init */
void lpvg_phase_init(void);
void lpvg_phase_atfork(void);
/* A countdown expiry at reference now of t, at pc: ends the interval when
 * it is due, counts the pc; True when the reference is sampled. */
Bool lpvg_phase_tick(struct lpvg_thread *t, ULong pc, ULong now);
/* t ends (or its image may, at an exec) after refs references: its last
 * interval gets a record, and the records are sent. */
void lpvg_phase_close(struct lpvg_thread *t, ULong refs);

/* vg-tls.c: the static TLS blocks the preload registered; a thread's
 * (gsp: its guest state), once per thread. */
struct lpvg_hooks;
void lpvg_tls_register(const struct lpvg_hooks *h);
void lpvg_tls_thread(struct lpvg_thread *t, const UChar *gsp);

/* vg-options.c */
void lpvg_options_register(void);
void lpvg_options_apply(void);

/* vg-alloc.c: allocation events (sample mode) */
void lpvg_touch(ULong addr);
VG_REGPARM(1) void lpvg_ret_hook(UChar *gsp);
VG_REGPARM(2) void lpvg_entry_hook(UChar *gsp, UWord kind);
void lpvg_allocs_flush(struct lpvg_thread *self);
void lpvg_allocs_register(void);
void lpvg_allocs_atfork(void);
void lpvg_send_alloc_summary(struct lpvg_thread *t);
void lpvg_alloc_counts(ULong *allocs, ULong *frees);

/* vg-conn.c */
void lpvg_connect(struct lpvg_thread *t);
void lpvg_send2(struct lpvg_thread *t, const void *a, ULong alen, const void *b, ULong blen);
void lpvg_header(struct lp_msg_header *h, UInt type, ULong length, const struct lpvg_thread *t);
void lpvg_send_samples(struct lpvg_thread *t);
void lpvg_send_events(struct lpvg_thread *t);
void lpvg_send_allocs_t(struct lpvg_thread *t, const struct lp_msg_alloc_t *v, UInt n);
void lpvg_send_alloc_sum(struct lpvg_thread *t, UInt flags, ULong allocs, ULong frees, ULong bytes);
void lpvg_send_maps(struct lpvg_thread *t, UInt when);
void lpvg_send_thread_end(struct lpvg_thread *t);
void lpvg_send_phases(struct lpvg_thread *t);
/* THREAD running = 1: the counts so far (t->cd and t->extra[] current) */
void lpvg_send_thread_running(struct lpvg_thread *t);
void lpvg_send_bye(struct lpvg_thread *t, Int status, UInt how, ULong refs);
ULong lpvg_now_ns(Int clk);

/* vg-math.c: what rng.h needs from libm. */
double log(double x);
double log1p(double x);
double floor(double x);

#endif
