/* The locprof valgrind tool: registration, options, threads, fork, exec and
 * exit, allocation events from valgrind's malloc replacement. The user
 * never runs it by hand: `locprof record --backend valgrind` starts
 * valgrind with VALGRIND_LIB pointing at a directory holding this tool
 * (docs/valgrind.md). */
#include "vg-tool.h"

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
#include "pub_tool_replacemalloc.h"
#include "pub_tool_stacktrace.h"
#include "pub_tool_threadstate.h"
#include "pub_tool_vkiscnums.h"
#include "pub_tool_xarray.h"

struct lpvg_opts lpvg_o;
struct lpvg_proc lpvg_p;

static const HChar *clo_lines = "64";
static const HChar *clo_mode = "sample";
static const HChar *clo_rate = "1e-4";
static const HChar *clo_seed = "1";
static Long clo_flush_ms = 100;

static struct lpvg_thread **threads; /* by valgrind ThreadId */
static struct lpvg_thread *last_thread; /* the last to end, kept for BYE */

/* ---- options ----------------------------------------------------------------- */

/* A decimal number with an optional exponent ("1e-4", "0.0001",
 * "1.0000000000000001e-05" as locprof's %.17g writes): VG_(strtod) stops at
 * the exponent. The digits become an exact integer (up to 19 significant
 * digits) scaled once by a power of ten, so short inputs are exact to the
 * last bit. Returns False unless the whole string is a number. */
static Bool parse_double(const HChar *s, double *out)
{
	ULong mant = 0;
	Int exp10 = 0, digits = 0, e = 0;
	Bool any = False, neg_e = False;
	double v, p = 1, ten = 10;

	for (; *s >= '0' && *s <= '9'; s++, any = True) {
		if (digits < 19 && (mant || *s != '0'))
			mant = mant * 10 + (ULong)(*s - '0'), digits++;
		else if (mant)
			exp10++;
	}
	if (*s == '.') {
		for (s++; *s >= '0' && *s <= '9'; s++, any = True) {
			if (digits < 19 && (mant || *s != '0'))
				mant = mant * 10 + (ULong)(*s - '0'), digits++, exp10--;
			else if (!mant)
				exp10--;
		}
	}
	if (!any)
		return False;
	if (*s == 'e' || *s == 'E') {
		s++;
		if (*s == '-' || *s == '+')
			neg_e = *s++ == '-';
		if (*s < '0' || *s > '9')
			return False;
		for (; *s >= '0' && *s <= '9'; s++)
			if (e < 10000)
				e = e * 10 + (*s - '0');
		exp10 += neg_e ? -e : e;
	}
	if (*s)
		return False;
	v = (double)mant;
	for (Int k = exp10 < 0 ? -exp10 : exp10; k; k >>= 1, ten *= ten)
		if (k & 1)
			p *= ten;
	*out = exp10 < 0 ? v / p : v * p;
	return True;
}

static Bool parse_lines(const HChar *s)
{
	UInt n = 0;

	while (*s) {
		HChar *end;
		ULong v = VG_(strtoull10)(s, &end);
		if (end == s || v < 1 || (v & (v - 1)) || v > (1ull << 20) || n == LP_MAX_LINE_SIZES)
			return False;
		if (n && v <= lpvg_o.line_size[n - 1])
			return False;
		lpvg_o.line_size[n] = (UInt)v;
		lpvg_o.line_shift[n] = (UInt)VG_(log2_64)(v);
		n++;
		if (*end == ',')
			end++;
		else if (*end)
			return False;
		s = end;
	}
	lpvg_o.nlines = n;
	return n > 0;
}

static Bool process_option(const HChar *arg)
{
	const HChar *v;

	if VG_STR_CLO(arg, "--socket", lpvg_o.socket) {}
	else if VG_STR_CLO(arg, "--mode", clo_mode) {
		if (VG_(strcmp)(clo_mode, "sample") && VG_(strcmp)(clo_mode, "trace"))
			VG_(fmsg_bad_option)(arg, "the mode is 'sample' or 'trace'\n");
	}
	else if VG_STR_CLO(arg, "--rate", clo_rate) {
		double r = 0;
		if (!parse_double(clo_rate, &r) || !(r > 0 && r <= 1))
			VG_(fmsg_bad_option)(arg, "the rate is a number in (0, 1]\n");
	}
	else if VG_STR_CLO(arg, "--lines", clo_lines) {
		if (!parse_lines(clo_lines))
			VG_(fmsg_bad_option)(arg, "line sizes are 1 to 4 ascending powers of two "
						  "up to 1M, e.g. 64,128\n");
	}
	else if VG_STR_CLO(arg, "--seed", v) {
		HChar *end;
		(void)VG_(strtoull10)(v, &end);
		if (*end || end == v)
			VG_(fmsg_bad_option)(arg, "the seed is a non-negative integer\n");
		clo_seed = v;
	}
	else if VG_BINT_CLO(arg, "--flush-ms", clo_flush_ms, 1, 3600000) {}
	else if VG_BINT_CLO(arg, "--reserve-fds", lpvg_o.reserve_fds, 0, 1024) {}
	else if VG_BOOL_CLO(arg, "--selfcheck", lpvg_o.selfcheck) {}
	else
		return VG_(replacement_malloc_process_cmd_line_option)(arg);
	return True;
}

static void print_usage(void)
{
	VG_(printf)(
		"    --socket=PATH          the collector's socket [$LOCPROF_SOCKET]\n"
		"    --mode=sample|trace    StatCache samples or every reference [sample]\n"
		"    --rate=R               sampling rate in (0,1] [1e-4]\n"
		"    --lines=64,128         line sizes, up to 4 [64]\n"
		"    --seed=N               random seed [1]\n"
		"    --flush-ms=MS          send data at least this often [100]\n"
		"    --reserve-fds=N        descriptors kept from the program for the\n"
		"                           per-thread connections [64]\n"
		"  Normally started by 'locprof record --backend valgrind', which sets\n"
		"  all of these from its own options.\n");
}

static void print_debug_usage(void)
{
	VG_(printf)("    --selfcheck=yes        check the fast path at every segment (tests)\n");
}

/* Defaults from the environment `locprof record` gives every backend
 * (protocol.h), so that a child valgrind started by --trace-children gets
 * the same settings even when options were not repeated. */
static void env_defaults(void)
{
	HChar *s;

	if ((s = VG_(getenv)(LP_ENV_SOCKET)) && *s)
		lpvg_o.socket = s;
	if ((s = VG_(getenv)(LP_ENV_MODE)) && *s)
		clo_mode = s;
	if ((s = VG_(getenv)(LP_ENV_RATE)) && *s)
		clo_rate = s;
	if ((s = VG_(getenv)(LP_ENV_LINES)) && *s)
		clo_lines = s;
	if ((s = VG_(getenv)(LP_ENV_SEED)) && *s)
		clo_seed = s;
	if ((s = VG_(getenv)(LP_ENV_FLUSH)) && *s)
		clo_flush_ms = VG_(strtoll10)(s, NULL);
}

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
	lpvg_o.mode = VG_(strcmp)(clo_mode, "trace") ? LP_MODE_SAMPLE : LP_MODE_TRACE;
	if (!parse_double(clo_rate, &lpvg_o.rate) || !(lpvg_o.rate > 0 && lpvg_o.rate <= 1)) {
		VG_(fmsg)("locprof: bad sampling rate '%s' (0 < R <= 1)\n", clo_rate);
		VG_(exit)(1);
	}
	if (!parse_lines(clo_lines)) {
		VG_(fmsg)("locprof: bad line sizes '%s' (ascending powers of two up to 1M)\n",
			  clo_lines);
		VG_(exit)(1);
	}
	lpvg_o.seed = VG_(strtoull10)(clo_seed, NULL);
	lpvg_o.flush_ms = clo_flush_ms > 0 ? (UInt)clo_flush_ms : 100;
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
	VG_(set_shadow_regs_area)(tid, 1, LPVG_SH_THREAD, sizeof(t), (const UChar *)&t);
}

static void start_client_code(ThreadId tid, ULong blocks_done)
{
	if (!lpvg_o.inert)
		ensure_thread(tid);
}

/* The countdown of a thread that is not running, for everyone but the
 * generated code and the slow paths. */
static void stop_client_code(ThreadId tid, ULong blocks_done)
{
	struct lpvg_thread *t = tid <= VG_N_THREADS && threads ? threads[tid] : NULL;

	if (t)
		VG_(get_shadow_regs_area)(tid, (UChar *)&t->cd, 1, LPVG_SH_CD, sizeof(t->cd));
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
	new_image();
}

static struct lpvg_thread *any_connected(void)
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
 * dangling, every thread reports its count, and BYE says "exit 0"; if the
 * exec fails the threads go on and their later THREAD and BYE messages
 * (the collector keeps the last BYE) describe the real end. */
static void checkpoint_thread(struct lpvg_thread *t)
{
	if (t->dead)
		return;
	t->final_refs = lpvg_thread_refs(t);
	for (ULong i = 0; i < t->table_cap; i++) {
		if (t->table[i].used && lpvg_o.mode == LP_MODE_SAMPLE) {
			struct lp_msg_sample *s;
			if (t->nsamples == LPVG_SAMPLE_CAP)
				lpvg_send_samples(t);
			s = &t->samples[t->nsamples++];
			s->begin = t->table[i].begin;
			s->end = LP_SAMPLE_DANGLING;
			s->pc = t->table[i].pc;
			s->addr = t->table[i].addr;
			s->reuse_pc = 0;
			s->thread = t->number;
			s->size = t->table[i].size;
			s->kind = t->table[i].kind;
			s->line_index = t->table[i].idx;
			s->level = 0; /* fixed rate: never thinned */
		}
		t->table[i].used = 0;
	}
	t->live = 0;
	lpvg_thread_flush(t);
	lpvg_send_thread_end(t);
}

static void before_exec(void)
{
	struct lpvg_thread *t;

	for_each_thread(checkpoint_thread);
	lpvg_filter_reset();
	t = any_connected();
	if (t) {
		lpvg_send_maps(t, LP_MAPS_EXIT);
		lpvg_send_bye(t, 0, LP_BYE_EXIT, total_refs());
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
	for (UInt i = 0; i <= VG_N_THREADS; i++)
		if (threads[i])
			lpvg_thread_finish(threads[i]);
	refs = lpvg_p.refs_done;
	t = any_connected();
	if (t) {
		lpvg_send_maps(t, LP_MAPS_EXIT);
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

/* ---- allocations ---------------------------------------------------------------
 * Valgrind's malloc replacement (vgpreload_locprof-amd64-linux.so) sends
 * every malloc, new, free... of the program here; blocks come from
 * valgrind's allocator, with no red zones. The call site is the return
 * address in the caller of malloc (frame 1 of the stack: frame 0 is the
 * replacement function), as the runtime's __builtin_return_address(0). */

/* The live blocks, for realloc, free and malloc_usable_size: which
 * addresses are blocks of ours, and their requested sizes. Valgrind's
 * arena knows each block's usable size (the request rounded up, in the
 * header just before the block); the requested size is that minus a small
 * slack. So: one byte per 16-byte granule of the heap (blocks are 16-byte
 * aligned), 0 for "no block starts here", else 1 + the slack (255: the
 * slack is in a side table, for the rare slack of 254 or more), in 64 KiB leaves
 * covering 1 MiB each, found through a small table of chunks with a
 * one-entry cache. Blocks allocated or freed together have their bytes
 * together, so the map's cache misses follow the program's own. Valgrind's
 * VG_(HT_*) table (a VG_(malloc)'d node per block, chains) and then a
 * hashed table with the entries inline cost one cache miss per insertion
 * and per removal: 8% and 4% of the CPU time of lua (`perf` on
 * `bench.lua 3`), most of the cost of the allocation events. */
enum { BM_CHUNK_SHIFT = 20, BM_GRAN_SHIFT = 4,
       BM_LEAF = 1 << (BM_CHUNK_SHIFT - BM_GRAN_SHIFT), BM_BIG = 255 };
struct bm_chunk {
	Addr key;    /* (address >> BM_CHUNK_SHIFT) + 1; 0: empty */
	UChar *leaf; /* BM_LEAF bytes */
};
static struct bm_chunk *bm_tab;
static UWord bm_cap, bm_used;
static Addr bm_last_key;
static UChar *bm_last_leaf;
struct bm_big { /* a block with a slack of BM_BIG - 1 or more */
	struct bm_big *next;
	UWord key;
	SizeT slack;
};
static VgHashTable *bm_bigs;

static UWord bm_home(Addr key, UWord cap)
{
	return (UWord)(((ULong)key * 0x9e3779b97f4a7c15ull) >> 32) & (cap - 1);
}

static void bm_insert(struct bm_chunk *tab, UWord cap, Addr key, UChar *leaf)
{
	UWord i = bm_home(key, cap);

	while (tab[i].key)
		i = (i + 1) & (cap - 1);
	tab[i].key = key;
	tab[i].leaf = leaf;
}

/* The leaf of the chunk holding a; NULL if it has none and !create. */
static UChar *bm_leaf(Addr a, Bool create)
{
	Addr key = (a >> BM_CHUNK_SHIFT) + 1;
	UWord i;
	UChar *leaf;

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
	leaf = VG_(calloc)("lpvg.blockmap.leaf", BM_LEAF, 1);
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

static void block_add(Addr a, SizeT size)
{
	SizeT slack = VG_(cli_malloc_usable_size)((void *)a) - size;
	UChar *leaf = bm_leaf(a, True);

	tl_assert((a & ((1 << BM_GRAN_SHIFT) - 1)) == 0);
	if (slack < BM_BIG - 1) {
		leaf[bm_index(a)] = (UChar)(slack + 1);
	} else {
		struct bm_big *b = VG_(malloc)("lpvg.blockmap.big", sizeof(*b));
		b->key = a;
		b->slack = slack;
		VG_(HT_add_node)(bm_bigs, b);
		leaf[bm_index(a)] = BM_BIG;
	}
}

/* Whether a is a live block of ours; if so, its requested size. */
static Bool block_find(Addr a, SizeT *size)
{
	UChar *leaf;
	SizeT slack;
	UChar v;

	if (!a || (a & ((1 << BM_GRAN_SHIFT) - 1)) || !(leaf = bm_leaf(a, False)))
		return False;
	v = leaf[bm_index(a)];
	if (!v)
		return False;
	if (v == BM_BIG)
		slack = ((struct bm_big *)VG_(HT_lookup)(bm_bigs, a))->slack;
	else
		slack = v - 1u;
	*size = VG_(cli_malloc_usable_size)((void *)a) - slack;
	return True;
}

static void block_remove(Addr a)
{
	UChar *leaf = bm_leaf(a, False);

	if (leaf[bm_index(a)] == BM_BIG)
		VG_(free)(VG_(HT_remove)(bm_bigs, a));
	leaf[bm_index(a)] = 0;
}

static void blocks_init(void)
{
	bm_cap = 64;
	bm_tab = VG_(calloc)("lpvg.blockmap", bm_cap, sizeof(*bm_tab));
	bm_bigs = VG_(HT_construct)("lpvg.blockmap.big");
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

static struct lpvg_thread *thread_of(ThreadId tid)
{
	return tid <= VG_N_THREADS ? threads[tid] : NULL;
}

static void *alloc_block(ThreadId tid, SizeT n, SizeT align, Bool zero)
{
	void *p;

	if ((Long)n < 0)
		return NULL;
	p = VG_(cli_malloc)(align, n);
	if (!p)
		return NULL;
	if (zero)
		VG_(memset)(p, 0, n);
	block_add((Addr)p, n);
	if (!lpvg_o.inert)
		lpvg_event(thread_of(tid), (ULong)p, n, LP_EV_ALLOC, call_site(tid));
	return p;
}

static void free_block(ThreadId tid, void *p)
{
	SizeT size;

	if (!p)
		return;
	if (!block_find((Addr)p, &size))
		return; /* not ours: ignore, as glibc would crash instead */
	block_remove((Addr)p);
	VG_(cli_free)(p);
	if (!lpvg_o.inert)
		lpvg_event(thread_of(tid), (ULong)p, 0, LP_EV_FREE, call_site(tid));
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
	SizeT osize;
	void *p;

	if (!old)
		return lp_malloc(tid, n);
	if (!block_find((Addr)old, &osize))
		return NULL;
	p = alloc_block(tid, n, VG_(clo_alignment), False);
	if (!p)
		return NULL; /* the old block stays */
	VG_(memcpy)(p, old, osize < n ? osize : n);
	free_block(tid, old);
	return p;
}

static SizeT lp_usable_size(ThreadId tid, void *p)
{
	SizeT size;

	return block_find((Addr)p, &size) ? size : 0;
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
	VG_(needs_command_line_options)(process_option, print_usage, print_debug_usage);
	VG_(needs_superblock_discards)(lpvg_discard_sb);
	VG_(needs_syscall_wrapper)(pre_syscall, post_syscall);
	VG_(track_start_client_code)(start_client_code);
	VG_(track_stop_client_code)(stop_client_code);
	VG_(track_pre_thread_ll_exit)(thread_exit);
	VG_(atfork)(NULL, NULL, atfork_child);
	lpvg_o.reserve_fds = 64;
	env_defaults();
	blocks_init();
	/* The replacement is used only if vgpreload_locprof-amd64-linux.so
	 * is in the tool directory: `locprof record -X --allocs=no` leaves it
	 * out, and the program then runs glibc's malloc (traced like any
	 * other code) and reports no allocations. */
	VG_(needs_malloc_replacement)(lp_malloc, lp_malloc, lp_new_aligned, lp_malloc,
				      lp_new_aligned, lp_memalign, lp_calloc, lp_free, lp_free,
				      lp_delete_aligned, lp_free, lp_delete_aligned, lp_realloc,
				      lp_usable_size, 0);
}

VG_DETERMINE_INTERFACE_VERSION(pre_clo_init)
