/* record --phases in the valgrind tool (docs/valgrind.md, "Phases";
 * Vestberg §2.5 and §5.3): the runtime's online phase detection and
 * phase-guided sampling, with the same policy (collect/phase-sampler.h),
 * the same classifier (common/phase-core.h) and the same PHASES records.
 *
 * The sampler's countdown runs at the tick rate (lpvg_o.gap_rate): each
 * expiry gives the interval's signature its pc and is a sample with the
 * interval's keep chance (vg-sample.c asks lpvg_phase_tick). Valgrind
 * runs one thread at a time, so the process's phase table needs no lock.
 * A thread's line-access clock is its reference clock here (the tool
 * counts no extra lines), so every record's extra line accesses are 0.
 *
 * pcs are hashed at their link-time address in the main executable: the
 * load bias of the executable valgrind runs, found among its debug
 * informations by name at the first tick (they are read before the
 * program's first instruction); 0 when none matches (a script run by its
 * interpreter), as for an executable that is not position-independent. */
#include "vg-tool.h"

#include "pub_tool_clientstate.h"
#include "pub_tool_debuginfo.h"
#include "pub_tool_libcbase.h"

Bool lpvg_phases;

static struct lp_phase_policy pol;
static Bool bias_known;
static const uint64_t no_extra[LP_MAX_LINE_SIZES];

void lpvg_phase_init(void)
{
	double low;

	lpvg_o.gap_rate = lpvg_o.rate;
	lpvg_phases = False;
	if (lpvg_o.mode != LP_MODE_SAMPLE || lpvg_o.phase_interval < LP_PHASE_TICKS)
		return;
	low = lpvg_o.phase_rate >= 0 ? lpvg_o.phase_rate : lpvg_o.rate / 32;
	lp_phase_policy_init(&pol, lpvg_o.rate, low, lpvg_o.phase_samples ? lpvg_o.phase_samples : 4000,
			     lpvg_o.phase_threshold, lpvg_o.phase_interval, lpvg_o.nlines, 0);
	lpvg_o.gap_rate = pol.tick_rate;
	lpvg_phases = True;
}

/* A forked child is a new image: its phases start afresh (the runtime's
 * rule), at the parent's load bias. */
void lpvg_phase_atfork(void)
{
	if (lpvg_phases)
		lp_phase_policy_reset(&pol);
}

static const HChar *base_name(const HChar *path)
{
	const HChar *s = VG_(strrchr)(path, '/');

	return s ? s + 1 : path;
}

static ULong main_bias(void)
{
	const HChar *exe = VG_(args_the_exename);
	const DebugInfo *di;

	if (!exe)
		return 0;
	for (di = VG_(next_DebugInfo)(NULL); di; di = VG_(next_DebugInfo)(di)) {
		const HChar *f = VG_(DebugInfo_get_filename)(di);
		if (f && VG_(DebugInfo_get_text_size)(di) && !VG_(strcmp)(base_name(f), base_name(exe)))
			return (ULong)VG_(DebugInfo_get_text_bias)(di);
	}
	return 0;
}

Bool lpvg_phase_tick(struct lpvg_thread *t, ULong pc, ULong now)
{
	if (!bias_known) {
		pol.bias = main_bias();
		bias_known = True;
	}
	if (lp_phase_due(&pol, &t->ph, now)) {
		lp_phase_end(&pol, &t->ph, t->number, now, no_extra);
		if (t->ph.nout >= LP_PHASE_OUT / 2)
			lpvg_send_phases(t);
	}
	return lp_phase_take(&pol, &t->ph, &t->rng, pc) != 0;
}

void lpvg_phase_close(struct lpvg_thread *t, ULong refs)
{
	if (!lpvg_phases)
		return;
	if (lp_phase_closing(&pol, &t->ph, refs))
		lp_phase_end(&pol, &t->ph, t->number, refs, no_extra);
	lpvg_send_phases(t);
}
