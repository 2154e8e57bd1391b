/* Regions of interest in the valgrind tool (docs/valgrind.md): the
 * markers of locprof/roi.h (a client request), record --start-at and
 * --stop-at (a call at the function's entry, vg-instr.c) and --skip N.
 * The semantics are the runtime's (src/rt/rt-roi.c): one state for the
 * process; a thread outside the region keeps its reference clock aside and
 * runs a countdown that brings it to the slow path every LPVG_ROI_CHECK
 * references, where it counts what it skipped and looks at the state; no
 * watch is checked and nothing is sampled outside. The thread that changes
 * the state follows at once, the others at their next slow path.
 *
 * Settings come from the environment `locprof record` gives the program
 * (src/lib/collect/protocol.h): LOCPROF_ROI, LOCPROF_ROI_START_AT,
 * LOCPROF_ROI_STOP_AT ("ADDR NAME": the entry's link-time address in the
 * main executable and the function's name as valgrind gives it; both must
 * match, so a library function at the same offset is not taken for it),
 * LOCPROF_ROI_SKIP. */
#include "vg-tool.h"
#include "vg-preload.h"

#include "pub_tool_debuginfo.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcproc.h"
#include "pub_tool_machine.h"

#define LPVG_ROI_CHECK 16384 /* as the runtime's ROI_CHECK */

Bool lpvg_roi_set;

static struct {
	Bool inside;
	ULong entries;
	ULong skip;
	struct {
		ULong addr;     /* link-time address; 0: none */
		HChar name[512];
	} fn[2];            /* [0] starts, [1] stops */
} roi;

/* ---- settings ------------------------------------------------------------- */

static void read_function(const HChar *var, UInt i)
{
	const HChar *s = VG_(getenv)(var);
	HChar *end;

	if (!s || !*s)
		return;
	roi.fn[i].addr = VG_(strtoull16)(s, &end);
	if (*end == ' ')
		end++;
	VG_(strncpy)(roi.fn[i].name, end, sizeof(roi.fn[i].name) - 1);
}

void lpvg_roi_init(void)
{
	const HChar *out = VG_(getenv)(LP_ENV_ROI), *skip = VG_(getenv)(LP_ENV_ROI_SKIP);

	const HChar *program = VG_(getenv)(LP_ENV_ROI_PROGRAM);
	HChar exe[4096];

	/* Another program, exec'd by the recorded one: not its region. The
	 * client's name is as valgrind was given it (no real path here), so
	 * the base names are compared; the function hooks also match the
	 * name and the address, so a program of the same name elsewhere
	 * gets no wrong hook. */
	if (program && *program) {
		const HChar *a, *b;
		VG_(client_fname)(exe, sizeof(exe), True);
		a = VG_(strrchr)(exe, '/');
		b = VG_(strrchr)(program, '/');
		if (VG_(strcmp)(a ? a + 1 : exe, b ? b + 1 : program))
			return;
	}
	roi.inside = !(out && !VG_(strcmp)(out, "outside"));
	roi.skip = skip ? VG_(strtoull10)(skip, NULL) : 0;
	read_function(LP_ENV_ROI_START_AT, 0);
	read_function(LP_ENV_ROI_STOP_AT, 1);
	if (lpvg_o.mode != LP_MODE_SAMPLE ||
	    (roi.inside && !roi.skip && !roi.fn[0].addr && !roi.fn[1].addr))
		return; /* the whole run */
	roi.entries = roi.inside;
	lpvg_roi_set = True;
}

/* 1 at the entry of the --start-at function, 2 of the --stop-at one. */
UInt lpvg_roi_at(Addr a)
{
	DiEpoch ep = VG_(current_DiEpoch)();

	for (UInt i = 0; i < 2; i++) {
		const DebugInfo *di;
		const HChar *name;
		if (!roi.fn[i].addr)
			continue;
		di = VG_(find_DebugInfo)(ep, a);
		if (!di || (ULong)(a - (Addr)VG_(DebugInfo_get_text_bias)(di)) != roi.fn[i].addr)
			continue;
		if (VG_(get_fnname_if_entry)(ep, a, &name) && !VG_(strcmp)(name, roi.fn[i].name))
			return i + 1;
	}
	return 0;
}

/* ---- per thread ------------------------------------------------------------ */

/* Look again after b >= 1 references; while the region is on they count
 * towards --skip. */
static void budget(struct lpvg_thread *t, Long *cdp)
{
	ULong b = LPVG_ROI_CHECK;

	t->roi_skip_phase = roi.inside && t->roi_skip_left;
	if (t->roi_skip_phase && t->roi_skip_left < b)
		b = t->roi_skip_left;
	t->epoch = b;
	*cdp = (Long)b;
}

/* The clock aside, and the extra line counts (those of the smallest
 * line size go on in the shadow outside: put back on return); the
 * countdown cdp is whole (no sample overdue). live: the thread is the one
 * running (its shadow at lpvg_gsp), else one not started yet (no count). */
static void leave(struct lpvg_thread *t, Long *cdp, Bool live)
{
	t->roi_saved_epoch = t->epoch;
	t->roi_saved_cd = *cdp;
	if (live)
		t->extra[0] = *lpvg_extra0();
	VG_(memcpy)(t->roi_saved_extra, t->extra, sizeof(t->extra));
	t->roi_outside = True;
	budget(t, cdp);
}

/* Back in, with e references of the region already done: counted, their
 * watches not checked; a sample due among them falls on the next one. */
static void resume(struct lpvg_thread *t, Long *cdp, ULong e)
{
	t->roi_outside = False;
	t->epoch = t->roi_saved_epoch;
	/* the extra lines of the e references are not counted (rare: a
	 * --skip that ends inside a segment) */
	VG_(memcpy)(t->extra, t->roi_saved_extra, sizeof(t->extra));
	*lpvg_extra0() = t->extra[0];
	if ((ULong)t->roi_saved_cd >= e) {
		*cdp = t->roi_saved_cd - (Long)e;
	} else {
		t->epoch = t->roi_saved_epoch - (ULong)t->roi_saved_cd + e;
		*cdp = 0;
	}
}

/* An outside thread at a look: count, and maybe come back in. */
static void follow_outside(struct lpvg_thread *t, Long *cdp)
{
	ULong n = t->epoch - (ULong)*cdp, e = 0;

	if (t->roi_skip_phase && n > t->roi_skip_left)
		e = n - t->roi_skip_left; /* the region began inside the segment */
	t->roi_skipped += n - e;
	if (t->roi_skip_phase)
		t->roi_skip_left -= n - e;
	if (roi.inside && !t->roi_skip_left)
		resume(t, cdp, e);
	else
		budget(t, cdp);
}

void lpvg_roi_thread_init(struct lpvg_thread *t)
{
	Long cd = t->cd;

	t->roi_skip_left = roi.skip;
	if (lpvg_roi_set && (!roi.inside || t->roi_skip_left)) {
		leave(t, &cd, False);
		t->cd = cd;
	}
}

Bool lpvg_roi_segment(struct lpvg_thread *t, Long *cdp)
{
	if (!t->roi_outside)
		return False;
	follow_outside(t, cdp);
	return True;
}

void lpvg_roi_after_segment(struct lpvg_thread *t, Long *cdp)
{
	if (!t->roi_outside && !roi.inside)
		leave(t, cdp, True);
}

ULong lpvg_roi_clock(const struct lpvg_thread *t, Long cd)
{
	return t->roi_outside ? t->roi_saved_epoch - (ULong)t->roi_saved_cd : t->epoch - (ULong)cd;
}

ULong lpvg_roi_skipped(const struct lpvg_thread *t, Long cd)
{
	return t->roi_skipped + (t->roi_outside ? t->epoch - (ULong)cd : 0);
}

ULong lpvg_roi_entries(void)
{
	return roi.entries;
}

/* ---- changes of state ----------------------------------------------------------- */

/* The running thread follows now (its countdown at cdp). */
static void change(struct lpvg_thread *t, Long *cdp, Bool inside)
{
	if (inside && !roi.inside)
		roi.entries++;
	roi.inside = inside;
	if (!t || t->dead)
		return;
	if (t->roi_outside)
		follow_outside(t, cdp);
	else if (!inside)
		leave(t, cdp, True);
}

/* The entry of a --start-at (what 1) or --stop-at (2) function; the
 * segment before it is counted. */
VG_REGPARM(2) void lpvg_roi_hook(UChar *gsp, UWord what)
{
	struct lpvg_thread *t = *(struct lpvg_thread **)(gsp + LPVG_GS + LPVG_SH_THREAD);

	change(t, (Long *)(gsp + LPVG_GS + LPVG_SH_CD), what == 1);
}

/* locprof_start() (arg 1) and locprof_stop() (arg 0) of locprof/roi.h. */
Bool lpvg_roi_request(ThreadId tid, UWord *args, UWord *ret)
{
	struct lpvg_thread *t;
	Long cd;

	if (args[0] != LPVG_REQ_ROI)
		return False;
	*ret = 0;
	if (lpvg_o.inert || !lpvg_roi_set)
		return True;
	t = lpvg_thread_of(tid);
	VG_(get_shadow_regs_area)(tid, (UChar *)&cd, 1, LPVG_SH_CD, sizeof(cd));
	change(t, &cd, args[1] != 0);
	VG_(set_shadow_regs_area)(tid, 1, LPVG_SH_CD, sizeof(cd), (const UChar *)&cd);
	if (t)
		t->cd = cd;
	return True;
}
