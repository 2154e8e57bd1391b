/* The locprof valgrind tool: registration, the process image, threads,
 * fork, exec and exit. The user never runs it by hand: `locprof record
 * --backend valgrind` starts valgrind with VALGRIND_LIB pointing at a
 * directory holding this tool (docs/valgrind.md). Options: vg-options.c;
 * allocations: vg-alloc.c. */
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
#include "pub_tool_transtab.h"
#include "pub_tool_oset.h"
#include "pub_tool_replacemalloc.h"
#include "pub_tool_stacktrace.h"
#include "pub_tool_threadstate.h"
#include "pub_tool_vkiscnums.h"
#include "pub_tool_xarray.h"


struct lpvg_opts lpvg_o;
struct lpvg_proc lpvg_p;

static struct lpvg_thread **threads; /* by valgrind ThreadId */
static struct lpvg_thread *last_thread; /* the last to end, kept for BYE */

/* ---- process image ------------------------------------------------------------ */

static void read_cmdline(void)
{
	UInt n = 0;
	const HChar *exe = VG_(args_the_exename);

	/* The program's argv as the program sees it: argv[0] as given, then
	 * the arguments. */
	if (VG_(args_for_client) && VG_(sizeXA)(VG_(args_for_client)) >= 0) {
		const HChar *a0 = exe ? exe : "?";
		UInt l = VG_(strlen)(a0) + 1;
		if (l <= sizeof(lpvg_p.cmdline)) {
			VG_(memcpy)(lpvg_p.cmdline, a0, l);
			n = l;
		}
		for (Word i = 0; i < VG_(sizeXA)(VG_(args_for_client)); i++) {
			const HChar *arg = *(HChar **)VG_(indexXA)(VG_(args_for_client), i);
			l = VG_(strlen)(arg) + 1;
			if (n + l > sizeof(lpvg_p.cmdline))
				break;
			VG_(memcpy)(lpvg_p.cmdline + n, arg, l);
			n += l;
		}
	}
	lpvg_p.cmdline_len = n;
}

static void new_image(void)
{
	uint64_t x;

	lpvg_p.pid = (UInt)VG_(getpid)();
	lpvg_p.ppid = (UInt)VG_(getppid)();
	lpvg_p.start_ns = lpvg_now_ns(VKI_CLOCK_REALTIME);
	x = lpvg_p.start_ns ^ ((ULong)lpvg_p.pid << 32) ^ lpvg_now_ns(VKI_CLOCK_MONOTONIC);
	lpvg_p.nonce = lp_splitmix64(&x);
	lpvg_p.nthreads = 0;
	lpvg_p.refs_done = 0;
	lpvg_p.trace_seq = 0;
	lpvg_p.maps_sent = False;
	lpvg_p.exit_seen = False;
	lpvg_p.exit_status = 0;
}

static void post_clo_init(void)
{
	if (!lpvg_o.socket || !*lpvg_o.socket) {
		/* A child whose environment was cleared (env -i) under
		 * --trace-children, or a run by hand: nothing to send to, so run
		 * uninstrumented. */
		if (VG_(clo_verbosity) > 0)
			VG_(umsg)("locprof: no collector (LOCPROF_SOCKET unset): not recording; run "
				  "'locprof record --backend valgrind -- PROGRAM'\n");
		lpvg_o.inert = True;
		return;
	}
	lpvg_options_apply();
	lpvg_phase_init();
	lpvg_roi_init();
	/* Keep some descriptors above the program's limit for the per-thread
	 * connections (valgrind itself keeps only a dozen there). */
	if (lpvg_o.reserve_fds > 0 && VG_(fd_hard_limit) > 4 * lpvg_o.reserve_fds) {
		VG_(fd_hard_limit) -= lpvg_o.reserve_fds;
		VG_(fd_soft_limit) -= lpvg_o.reserve_fds;
	}
	threads = VG_(calloc)("lpvg.threads", VG_N_THREADS + 1, sizeof(*threads));
	read_cmdline();
	new_image();
	lpvg_filter_reset();
	lpvg_instr_init();
}

/* ---- threads ------------------------------------------------------------------ */

/* A thread's state, made when it first runs client code; its countdown and
 * pointer go into its shadow area (a new thread's shadow area starts as a
 * copy of its parent's, and a forked child's still names the parent's
 * state: both are overwritten here before any of their code runs). */
static void ensure_thread(ThreadId tid)
{
	struct lpvg_thread *t;

	if (tid > VG_N_THREADS || threads[tid])
		return;
	t = threads[tid] = lpvg_thread_new(tid);
	VG_(set_shadow_regs_area)(tid, 1, LPVG_SH_CD, sizeof(t->cd), (const UChar *)&t->cd);
	VG_(set_shadow_regs_area)(tid, 1, LPVG_SH_EXTRA, sizeof(t->extra[0]), (const UChar *)&t->extra[0]);
	VG_(set_shadow_regs_area)(tid, 1, LPVG_SH_THREAD, sizeof(t), (const UChar *)&t);
}

/* Valgrind runs one thread at a time, so a blocked thread's partial
 * buffer would hold back the collector's merge of the records by number
 * for as long as it is blocked: the running thread sends it. */
void lpvg_send_others_events(struct lpvg_thread *self)
{
	for (ThreadId i = 0; i <= VG_N_THREADS; i++)
		if (threads[i] && threads[i] != self && !threads[i]->dead && threads[i]->nevents)
			lpvg_send_events(threads[i]);
}

/* Where the guest state sits in valgrind's ThreadState (whose layout the
 * tool headers do not give): found once, as the offset at which the
 * shadow area holds the thread pointer just written there. */
static Int gs_off = -1;

static UChar *guest_state(ThreadId tid)
{
	UChar *ts = VG_(get_ThreadState)(tid);

	if (gs_off < 0) {
		struct lpvg_thread *t = threads[tid], *seen;
		Long cd;
		for (Int off = 0; off <= 256 && gs_off < 0; off += 8) {
			VG_(memcpy)(&seen, ts + off + LPVG_GS + LPVG_SH_THREAD, sizeof(seen));
			VG_(memcpy)(&cd, ts + off + LPVG_GS + LPVG_SH_CD, sizeof(cd));
			if (seen == t && t && cd == t->cd)
				gs_off = off;
		}
		if (gs_off < 0)
			VG_(tool_panic)("locprof: cannot find the guest state of a thread");
	}
	return ts + gs_off;
}

static void start_client_code(ThreadId tid, ULong blocks_done)
{
	if (lpvg_o.inert)
		return;
	ensure_thread(tid);
	lpvg_gsp = guest_state(tid);
	lpvg_tls_thread(threads[tid], lpvg_gsp);
}

/* The countdown of a thread that is not running, for everyone but the
 * generated code and the slow paths. */
static void stop_client_code(ThreadId tid, ULong blocks_done)
{
	struct lpvg_thread *t = tid <= VG_N_THREADS && threads ? threads[tid] : NULL;

	if (t) {
		VG_(get_shadow_regs_area)(tid, (UChar *)&t->cd, 1, LPVG_SH_CD, sizeof(t->cd));
		VG_(get_shadow_regs_area)(tid, (UChar *)&t->extra[0], 1, LPVG_SH_EXTRA, sizeof(t->extra[0]));
	}
}

static UInt live_threads(void)
{
	UInt n = 0;

	for (UInt i = 0; i <= VG_N_THREADS; i++)
		n += threads[i] && !threads[i]->dead;
	return n;
}

static void thread_exit(ThreadId tid)
{
	struct lpvg_thread *t = tid <= VG_N_THREADS ? threads[tid] : NULL;

	if (lpvg_o.inert || !t)
		return;
	threads[tid] = NULL;
	if (live_threads() == 0 && !last_thread) {
		/* The process's last thread: its connection carries the BYE. */
		lpvg_thread_finish(t);
		last_thread = t;
		return;
	}
	lpvg_thread_finish(t);
	lpvg_thread_free(t);
}

/* Every live thread's state, and the one kept for the BYE. */
static void for_each_thread(void (*f)(struct lpvg_thread *))
{
	for (UInt i = 0; i <= VG_N_THREADS; i++)
		if (threads[i])
			f(threads[i]);
	if (last_thread)
		f(last_thread);
}

/* The state of valgrind's thread tid, NULL if it has none (yet). */
struct lpvg_thread *lpvg_thread_of(ThreadId tid)
{
	return tid <= VG_N_THREADS && threads ? threads[tid] : NULL;
}

/* ---- fork, exec, exit ----------------------------------------------------------- */

/* A forked child is a new image: its own connections (the parent's belong
 * to the parent, which sends their data), empty watches, fresh clocks. */
static void atfork_child(ThreadId tid)
{
	if (lpvg_o.inert)
		return;
	for (UInt i = 0; i <= VG_N_THREADS; i++) {
		lpvg_thread_free(threads[i]);
		threads[i] = NULL;
	}
	lpvg_thread_free(last_thread);
	last_thread = NULL;
	lpvg_filter_reset();
	lpvg_allocs_atfork();
	lpvg_phase_atfork();
	new_image();
}

struct lpvg_thread *lpvg_any_connected(void)
{
	for (UInt i = 0; i <= VG_N_THREADS; i++)
		if (threads[i] && threads[i]->fd >= 0)
			return threads[i];
	return last_thread && last_thread->fd >= 0 ? last_thread : NULL;
}

static ULong total_refs(void)
{
	ULong n = lpvg_p.refs_done;

	for (UInt i = 0; i <= VG_N_THREADS; i++)
		if (threads[i] && !threads[i]->dead)
			n += lpvg_thread_refs(threads[i]);
	return n;
}

/* Before an execve: this image may end here. Its live watches become
 * dangling, every thread reports its count, and BYE says "exec" (as the
 * inst runtime's does); if the exec fails the threads go on and their
 * later THREAD and BYE messages (the collector keeps the last BYE)
 * describe the real end. */
static void checkpoint_thread(struct lpvg_thread *t)
{
	if (t->dead)
		return;
	t->final_refs = lpvg_thread_refs(t);
	lpvg_watches_dangle(t, False); /* before_exec resets the whole filter */
	lpvg_phase_close(t, t->final_refs);
	lpvg_thread_flush(t);
	lpvg_send_thread_end(t);
}

static void before_exec(void)
{
	struct lpvg_thread *t;

	for_each_thread(checkpoint_thread);
	lpvg_filter_reset();
	t = lpvg_any_connected();
	if (t) {
		lpvg_send_maps(t, LP_MAPS_EXIT);
		lpvg_send_alloc_summary(t);
		lpvg_send_bye(t, 0, LP_BYE_EXEC, total_refs());
	}
}

static void pre_syscall(ThreadId tid, UInt sysno, UWord *args, UInt nargs)
{
	if (lpvg_o.inert)
		return;
	if (sysno == __NR_exit_group || (sysno == __NR_exit && live_threads() <= 1)) {
		lpvg_p.exit_seen = True;
		lpvg_p.exit_status = (Int)(args[0] & 0xff);
	} else if (sysno == __NR_execve || sysno == __NR_execveat) {
		before_exec();
	}
}

static void post_syscall(ThreadId tid, UInt sysno, UWord *args, UInt nargs, SysRes res)
{
}

static void fini(Int exitcode)
{
	struct lpvg_thread *t;
	ULong refs;

	if (lpvg_o.inert)
		return;
	if (lpvg_o.selfcheck)
		VG_(printf)("locprof-selfcheck: %llu segments, %llu accesses, %llu sharing a slot, "
			    "%llu wrong addresses, %llu missed calls\n", lpvg_chk.segs, lpvg_chk.accs,
			    lpvg_chk.shared, lpvg_chk.bad_addr, lpvg_chk.missed);
	if (VG_(clo_verbosity) > 1) {
		ULong calls = last_thread ? last_thread->slow_calls : 0;
		for (UInt i = 0; i <= VG_N_THREADS; i++)
			if (threads[i])
				calls += threads[i]->slow_calls;
		ULong allocs, frees;
		lpvg_alloc_counts(&allocs, &frees);
		VG_(umsg)("locprof: %llu slow-path calls, %llu allocations, %llu frees\n", calls, allocs,
			  frees);
	}
	for (UInt i = 0; i <= VG_N_THREADS; i++)
		if (threads[i])
			lpvg_thread_finish(threads[i]);
	refs = lpvg_p.refs_done;
	t = lpvg_any_connected();
	if (t) {
		lpvg_send_maps(t, LP_MAPS_EXIT);
		lpvg_send_alloc_summary(t);
		/* Valgrind tells a tool neither the exit status nor a fatal
		 * signal: the status comes from the exit_group call. Without one
		 * the program was killed by a signal; no BYE then, and the
		 * output says the process did not end normally (all its data is
		 * sent all the same). */
		if (lpvg_p.exit_seen)
			lpvg_send_bye(t, lpvg_p.exit_status, LP_BYE_EXIT, refs);
	}
	for (UInt i = 0; i <= VG_N_THREADS; i++) {
		lpvg_thread_free(threads[i]);
		threads[i] = NULL;
	}
	lpvg_thread_free(last_thread);
	last_thread = NULL;
}

/* ---- registration ---------------------------------------------------------------- */

static void pre_clo_init(void)
{
	VG_(details_name)("locprof");
	VG_(details_version)(NULL);
	VG_(details_description)("data-locality sampler and tracer");
	VG_(details_copyright_author)("locprof authors");
	VG_(details_bug_reports_to)("the locprof issue tracker");
	VG_(details_avg_translation_sizeB)(400);
	VG_(basic_tool_funcs)(post_clo_init, lpvg_instrument, fini);
	VG_(needs_superblock_discards)(lpvg_discard_sb);
	VG_(needs_syscall_wrapper)(pre_syscall, post_syscall);
	VG_(track_start_client_code)(start_client_code);
	VG_(track_stop_client_code)(stop_client_code);
	VG_(track_pre_thread_ll_exit)(thread_exit);
	VG_(atfork)(NULL, NULL, atfork_child);
	lpvg_options_register();
	lpvg_allocs_register();
}

VG_DETERMINE_INTERFACE_VERSION(pre_clo_init)
