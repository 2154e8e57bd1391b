/* The locprof runtime: slow paths, per-thread samplers, the connection to
 * the collector, thread/fork/exit/signal handling. Design: docs/runtime.md;
 * wire format: src/lib/collect/protocol.h.
 *
 * Each thread samples its own references (StatCache, seed §3): the hot path
 * counts down to the next sampled reference (geometric gaps, mean 1/rate);
 * a sampled reference puts a watch on its line for every configured line
 * size; the next reference of the same thread to a watched line completes
 * the sample with reuse distance = end - begin - 1 in references of that
 * thread: a private cache's view. Every sample also gets shared time and
 * what other threads did to its line (rt-share.c).
 *
 * Nothing here runs on the per-access path except through rt.h. Slow paths
 * may call libc (syscall wrappers, clock_gettime) but never malloc or stdio:
 * memory comes from mmap, so the runtime works inside the program's malloc.
 */
#include "rt-thread.h"

#include "collect/emit-core.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h> /* RUNNING_ON_VALGRIND: a client request, no library */
#else
#define RUNNING_ON_VALGRIND 0
#endif

/* Always-empty page counts, for threads with nothing to watch yet and for
 * the inert runtime (bss: its pages cost nothing). */
static uint32_t rt_zero_pages[LP_RT_PAGE_ENTRIES];

_Static_assert(LP_RT_MAX_LINES == LP_MAX_LINE_SIZES, "one limit on line sizes");

/* No straddle count until the runtime records (rt_process_init()). */
uint64_t lp_rt_straddle_mask = UINT64_MAX;
uint64_t lp_rt_straddle_slow = UINT64_MAX;
uint32_t lp_rt_line_shift0 = 63;
__thread uint64_t lp_rt_extra0 __attribute__((tls_model("initial-exec")));

/* The page counts start valid, so that no range query reads through NULL. */
__thread struct lp_rt_fast lp_rt_fast
	__attribute__((tls_model("initial-exec"))) = { .pages = rt_zero_pages };

enum {
	SAMPLE_CAP = 4096,  /* samples per SAMPLES message (160 KiB) */
	EVENT_CAP_TRACE = 8192, /* references per REFS message (320 KiB) */
	EVENT_CAP_ALLOC = 1024, /* allocation events per ALLOCS message */
	TABLE_MIN_LOG2 = 6, /* 64 watches */
	MAPS_CHUNK = 60000,
	CMDLINE_MAX = 4096,
	INERT_COUNTDOWN = INT64_MAX / 2,
};

static struct {
	int active;  /* LOCPROF_SOCKET was set and valid */
	int inited;  /* process settings read */
	int mode;
	int phases; /* record --phases (rt-phase.c) */
	double rate;
	uint32_t nlines;
	uint32_t line_size[LP_MAX_LINE_SIZES];
	uint32_t line_shift[LP_MAX_LINE_SIZES];
	uint64_t seed;
	uint64_t flush_ns;
	/* --samples N, or a fixed rate with a cap (LOCPROF_MAX_SAMPLES): the
	 * rate is rate / 2^level; level rises when the sampled references
	 * with a level >= it reach limit (docs/runtime.md). 0: no levels. */
	uint64_t target, limit;
	atomic_uint level;
	atomic_ullong level_count[64]; /* sampled references by their level */
	struct sockaddr_un addr;
	uint32_t pid, ppid;
	uint64_t nonce, start_ns;
	char cmdline[CMDLINE_MAX];
	uint32_t cmdline_len;
	atomic_uint nthreads;
	/* trace mode: the next record's number, one sequence for all threads
	 * (an atomic read-modify-write: its order agrees with the program's
	 * synchronisation, so the merged trace is a valid interleaving) */
	atomic_ullong trace_seq;
	_Atomic(struct lp_rt_thread *) threads;
	atomic_int finished;
	atomic_int maps_sent;
	atomic_int init_state; /* 0 not yet, 1 in progress, 2 done */
	pthread_key_t key;
	sigset_t ending; /* the signals that end the program, asynchronously */
} g;

struct lp_rt_thread *lp_rt_thread_list(void)
{
	return atomic_load(&g.threads);
}

uint32_t lp_rt_thread_count(void)
{
	return atomic_load_explicit(&g.nthreads, memory_order_relaxed);
}

/* ---- system helpers ------------------------------------------------------ */

void *lp_rt_sys_mmap(void *addr, uint64_t len, int prot, int flags, int fd, int64_t off)
{
	return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
}

int lp_rt_sys_munmap(void *addr, uint64_t len)
{
	return (int)syscall(SYS_munmap, addr, len);
}

void *lp_rt_alloc(uint64_t bytes)
{
	void *p = lp_rt_sys_mmap(NULL, bytes, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

void lp_rt_free(void *p, uint64_t bytes)
{
	if (p)
		lp_rt_sys_munmap(p, bytes);
}

uint64_t lp_rt_now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint32_t rt_log2(uint64_t x)
{
	return 63 - (uint32_t)__builtin_clzll(x);
}

/* ---- settings -------------------------------------------------------------- */

static void rt_read_cmdline(void)
{
	int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	ssize_t n;

	g.cmdline_len = 0;
	if (fd < 0)
		return;
	while (g.cmdline_len < sizeof(g.cmdline)) {
		n = read(fd, g.cmdline + g.cmdline_len, sizeof(g.cmdline) - g.cmdline_len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		g.cmdline_len += (uint32_t)n;
	}
	close(fd);
}

static void rt_new_image(void)
{
	uint64_t x;

	g.pid = (uint32_t)getpid();
	g.ppid = (uint32_t)getppid();
	g.start_ns = lp_rt_now_ns(CLOCK_REALTIME);
	x = g.start_ns ^ ((uint64_t)g.pid << 32) ^ lp_rt_now_ns(CLOCK_MONOTONIC);
	g.nonce = lp_splitmix64(&x);
	atomic_store(&g.nthreads, 0);
	atomic_store(&g.trace_seq, 0);
	atomic_store(&g.threads, NULL);
	atomic_store(&g.finished, 0);
	atomic_store(&g.maps_sent, 0);
	atomic_store(&g.level, 0);
	lp_rt_phase_reset();
	for (int i = 0; i < 64; i++)
		atomic_store(&g.level_count[i], 0);
}

static int rt_parse_lines(const char *s)
{
	uint32_t n = 0;

	while (s && *s) {
		char *end;
		unsigned long v = strtoul(s, &end, 10);
		if (end == s || v < 1 || (v & (v - 1)) || v > (1ul << 20) || n == LP_MAX_LINE_SIZES)
			return -1;
		if (n && v <= g.line_size[n - 1])
			return -1;
		g.line_size[n] = (uint32_t)v;
		g.line_shift[n] = rt_log2(v);
		n++;
		s = *end == ',' ? end + 1 : end;
		if (*end && *end != ',')
			return -1;
	}
	if (!n) {
		g.line_size[0] = 64;
		g.line_shift[0] = 6;
		n = 1;
	}
	g.nlines = n;
	return 0;
}

static void rt_fatal_signal(int sig);
static void rt_on_exit(int status, void *arg);
static void rt_thread_key_destroy(void *arg);
static void rt_atfork_child(void);

/* Once per process image, from our constructor: not earlier, because ld.so
 * calls the program's malloc (ours) before libc has set up environ. Events
 * before it are not recorded. */
static void rt_process_init(void)
{
	int expect = 0;
	const char *sock, *s;

	if (!atomic_compare_exchange_strong(&g.init_state, &expect, 1)) {
		while (atomic_load(&g.init_state) != 2)
			;
		return;
	}
	sock = getenv(LP_ENV_SOCKET);
	/* Under valgrind (record --backend valgrind, or a program run under
	 * valgrind by hand) locprof's valgrind tool does the recording: the
	 * runtime stays inert, as when the program is not recorded. */
	if (sock && *sock && strlen(sock) < sizeof(g.addr.sun_path) && !RUNNING_ON_VALGRIND) {
		g.addr.sun_family = AF_UNIX;
		strcpy(g.addr.sun_path, sock);
		s = getenv(LP_ENV_MODE);
		g.mode = s && !strcmp(s, "trace") ? LP_MODE_TRACE : LP_MODE_SAMPLE;
		s = getenv(LP_ENV_RATE);
		g.rate = s ? strtod(s, NULL) : 1e-4;
		if (!(g.rate > 0.0 && g.rate <= 1.0))
			g.rate = 1e-4;
		s = getenv(LP_ENV_SEED);
		g.seed = s ? strtoull(s, NULL, 0) : 1;
		s = getenv(LP_ENV_FLUSH);
		g.flush_ns = (s ? strtoull(s, NULL, 10) : 100) * 1000000ull;
		if (!g.flush_ns)
			g.flush_ns = 100000000ull;
		s = getenv(LP_ENV_SAMPLES);
		g.target = s ? strtoull(s, NULL, 10) : 0;
		/* Halve at sqrt(2) N: what is kept at the end lies between
		 * N / sqrt(2) and sqrt(2) N. */
		g.limit = g.target ? (uint64_t)ceil(g.target * M_SQRT2) : 0;
		/* A cap at a fixed rate: the same thinning, from the rate
		 * asked, once the cap is reached (none is kept beyond it). */
		s = getenv(LP_ENV_MAX_SAMPLES);
		if (!g.target && s && strtoull(s, NULL, 10))
			g.limit = strtoull(s, NULL, 10);
		g.phases = g.mode == LP_MODE_SAMPLE && !g.limit && lp_rt_phase_setup(g.rate, LP_MAX_LINE_SIZES);
		if (rt_parse_lines(getenv(LP_ENV_LINES)) == 0 &&
		    pthread_key_create(&g.key, rt_thread_key_destroy) == 0) {
			static const int sigs[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT,
						    SIGINT, SIGTERM, SIGHUP, SIGQUIT };
			struct sigaction sa;

			rt_read_cmdline();
			rt_new_image();
			sigemptyset(&g.ending);
			for (unsigned i = 5; i < sizeof(sigs) / sizeof(sigs[0]); i++)
				sigaddset(&g.ending, sigs[i]); /* SIGINT onwards */
			memset(&sa, 0, sizeof(sa));
			sa.sa_handler = rt_fatal_signal;
			sa.sa_flags = SA_NODEFER | SA_RESTART;
			sigemptyset(&sa.sa_mask);
			for (unsigned i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
				struct sigaction old;
				/* Leave alone signals the program (or a shell) set to
				 * be ignored or handled before we ran. */
				if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_DFL)
					sigaction(sigs[i], &sa, NULL);
			}
			on_exit(rt_on_exit, NULL);
			pthread_atfork(NULL, NULL, rt_atfork_child);
			lp_rt_straddle_mask = g.line_size[0] - 1; /* ascending: the smallest */
			lp_rt_straddle_slow = g.nlines > 1 ? lp_rt_straddle_mask : UINT64_MAX;
			lp_rt_line_shift0 = g.line_shift[0];
			lp_rt_roi_init(rt_zero_pages);
			lp_rt_share_reset();
			g.active = 1;
		}
	}
	g.inited = 1;
	atomic_store(&g.init_state, 2);
}

__attribute__((constructor(101))) static void rt_constructor(void)
{
	lp_rt_shadow_map(); /* done by .preinit_array unless that was not linked */
	lp_rt_fast.in_rt++;
	rt_process_init();
	lp_rt_fast.in_rt--;
}

/* ---- sending ------------------------------------------------------------- */

static void rt_header(struct lp_msg_header *h, uint32_t type, uint64_t length,
		      const struct lp_rt_thread *t)
{
	h->magic_version = LP_MSG_MAGIC_VERSION;
	h->type = type;
	h->length = (uint32_t)length;
	h->pid = g.pid;
	h->tid = t->tid;
	h->reserved = 0;
}

static int rt_hello(struct lp_rt_thread *t);

/* The thread's connection, ready for a message: made again, with its
 * HELLO, when the program closed or reused its descriptor
 * (docs/runtime.md, "The connection"). 0 when there is none. */
static int rt_conn_ready(struct lp_rt_thread *t)
{
	if (lp_rt_conn_ours(&t->conn))
		return 1;
	return !t->conn.broken && lp_rt_conn_open(&t->conn, &g.addr) == 0 && rt_hello(t) == 0;
}

/* One message in two parts, whole: on a descriptor the program took away
 * mid-message the collector drops the part it got with that connection,
 * and the message goes again on a new one (twice at most, so that a
 * program closing descriptors in a loop cannot hold the thread here).
 * The signals that end the program wait until it is whole: their handler
 * sends this thread's last messages on the same connection, and one sent
 * into the middle of another made the collector drop the whole profile as
 * corrupt (3 kills in 90 on a loaded machine). Two sigprocmask calls per
 * message of up to 4096 samples cost nothing measurable. */
static void rt_send2(struct lp_rt_thread *t, const void *a, uint64_t alen, const void *b,
		     uint64_t blen)
{
	sigset_t old;
	int st = LP_RT_CONN_GONE;

	if (t->conn.broken)
		return;
	pthread_sigmask(SIG_BLOCK, &g.ending, &old);
	for (int k = 0; k < 2 && st == LP_RT_CONN_GONE && rt_conn_ready(t); k++) {
		struct iovec iov[2] = { { (void *)a, alen }, { (void *)b, blen } };
		st = lp_rt_conn_send(&t->conn, iov, blen ? 2 : 1);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

static void rt_send_samples(struct lp_rt_thread *t)
{
	struct lp_msg_samples m;
	uint64_t bytes = (uint64_t)t->nsamples * sizeof(struct lp_msg_sample);

	if (!t->nsamples)
		return;
	rt_header(&m.h, LP_MSG_SAMPLES, sizeof(m) + bytes, t);
	m.count = t->nsamples;
	m.level = atomic_load(&g.level);
	rt_send2(t, &m, sizeof(m), t->samples, bytes);
	t->nsamples = 0;
}

/* The thread's ended phase intervals (record --phases). */
static void rt_send_phases(struct lp_rt_thread *t)
{
	struct lp_msg_phases m;
	uint64_t bytes = (uint64_t)t->ph.nout * sizeof(struct lp_msg_phase);

	if (!t->ph.nout)
		return;
	rt_header(&m.h, LP_MSG_PHASES, sizeof(m) + bytes, t);
	m.count = t->ph.nout;
	m.pad = 0;
	m.interval = lp_rt_phase_interval();
	rt_send2(t, &m, sizeof(m), t->ph.out, bytes);
	t->ph.nout = 0;
}

static void rt_send_events(struct lp_rt_thread *t)
{
	struct lp_msg_refs m;
	uint64_t bytes = (uint64_t)t->nevents * sizeof(struct lp_msg_ref);

	if (!t->nevents)
		return;
	rt_header(&m.h, g.mode == LP_MODE_TRACE ? LP_MSG_REFS : LP_MSG_ALLOCS, sizeof(m) + bytes, t);
	m.count = t->nevents;
	m.pad = 0;
	rt_send2(t, &m, sizeof(m), t->events, bytes);
	t->nevents = 0;
}

struct rt_maps_sender {
	struct lp_rt_thread *t;
	uint32_t when;
	int fd;
};

static int64_t rt_maps_read(void *ctx, char *dst, uint64_t room)
{
	struct rt_maps_sender *ms = ctx;
	ssize_t n;

	if (ms->fd < 0)
		return 0;
	do
		n = read(ms->fd, dst, room);
	while (n < 0 && errno == EINTR);
	return n;
}

static void rt_maps_piece(void *ctx, const char *text, uint64_t n, int last)
{
	struct rt_maps_sender *ms = ctx;
	struct lp_msg_maps m;

	rt_header(&m.h, LP_MSG_MAPS, sizeof(m) + n, ms->t);
	m.when = ms->when;
	m.last = (uint32_t)last;
	rt_send2(ms->t, &m, sizeof(m), text, n);
}

static void rt_send_maps(struct lp_rt_thread *t, uint32_t when)
{
	char *buf = lp_rt_alloc(MAPS_CHUNK + 4096);
	struct rt_maps_sender ms = { .t = t, .when = when };

	if (!buf)
		return;
	ms.fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	lp_emit_lines(buf, MAPS_CHUNK, &ms, rt_maps_read, rt_maps_piece);
	if (ms.fd >= 0)
		close(ms.fd);
	lp_rt_free(buf, MAPS_CHUNK + 4096);
}

/* The first message of each of the thread's connections: the collector
 * adds a second one of the same process and thread to the same output,
 * the thread's counts going on (collect.c). */
static int rt_hello(struct lp_rt_thread *t)
{
	struct {
		struct lp_msg_hello m;
		char cmd[CMDLINE_MAX];
	} hello;
	struct iovec iov;

	memset(&hello.m, 0, sizeof(hello.m));
	rt_header(&hello.m.h, LP_MSG_HELLO, sizeof(hello.m) + g.cmdline_len, t);
	hello.m.ppid = g.ppid;
	hello.m.thread = t->number;
	hello.m.nonce = g.nonce;
	hello.m.mode = (uint32_t)g.mode;
	hello.m.nlines = g.nlines;
	memcpy(hello.m.line_size, g.line_size, sizeof(g.line_size));
	hello.m.rate = g.rate;
	hello.m.seed = g.seed;
	hello.m.start_ns = g.start_ns;
	hello.m.cmdline_len = g.cmdline_len;
	memcpy(hello.cmd, g.cmdline, g.cmdline_len);
	iov = (struct iovec){ &hello, sizeof(hello.m) + g.cmdline_len };
	return lp_rt_conn_send(&t->conn, &iov, 1);
}

/* The thread's first connection, at its start (sending would make it
 * anyway; made here, the collector knows the thread before its process
 * can end). */
static void rt_connect(struct lp_rt_thread *t)
{
	sigset_t old;

	pthread_sigmask(SIG_BLOCK, &g.ending, &old);
	rt_conn_ready(t);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

uint32_t lp_rt_line_shift(unsigned idx)
{
	return g.line_shift[idx];
}

static void rt_send_thread_refs(struct lp_rt_thread *t, int running);

/* The sample of watch w, with its shared time o (NULL: none) begun at
 * shared clock sbegin. */
static void rt_emit(struct lp_rt_thread *t, const struct lp_watch *w, uint64_t end,
		    uint64_t reuse_pc, uint64_t reuse_addr, const struct lp_share_out *o, uint64_t sbegin)
{
	struct lp_msg_sample *m;

	if (t->nsamples == SAMPLE_CAP) {
		/* the count goes with every batch, before it: a run killed
		 * between the two never has samples later than its count */
		rt_send_thread_refs(t, 1);
		rt_send_samples(t);
	}
	m = &t->samples[t->nsamples];
	lp_emit_sample(m, w, end, reuse_pc, reuse_addr, t->number, (uint8_t)w->tag);
	if (o) {
		m->stime = sbegin;
		m->sreuse = o->sreuse;
		m->sown = o->sown;
		m->wpc = o->wpc;
		m->stid = o->stid;
		m->wtid = o->wtid;
		m->coh = o->coh;
		m->touched = o->tmask;
		m->writers = o->wtmask;
		m->flags = LP_MSG_SAMPLE_SHARED;
	}
	t->nsamples++; /* after the record: a signal-time flush sends a whole prefix */
}

/* Complete the samples whose line this reference touches: every line of
 * [addr, last] of every line size. The reference's first line is line
 * access now + ex[i] (ex: extra line accesses before it), the next one
 * after. */

static void rt_check_watches(struct lp_rt_thread *t, uint64_t addr, uint64_t last, uint32_t kind,
			     uint64_t pc, uint64_t now, const uint64_t *ex)
{
	for (uint32_t i = 0; i < g.nlines; i++) {
		uint32_t sh = g.line_shift[i];
		uint64_t first = addr >> sh, snow = 0;
		for (uint64_t l = first; l <= last >> sh; l++) {
			struct lp_watch *w = lp_watch_find(&t->watches, l, i);
			uint64_t own = now + ex[i] + (l - first), sbegin = 0;
			struct lp_share_out o;
			int have = lp_rt_share_access(t, w, l, i, sh, addr, last, kind, pc, own, l - first, &snow,
						      &o, &sbegin);
			if (w) {
				/* the reference's own address in its first
				 * line, the line's start in a later one */
				rt_emit(t, w, own, pc, l == first ? addr : l << sh, have ? &o : NULL, sbegin);
				lp_rt_watch_remove(t, w);
			}
		}
	}
}

/* The extra line accesses of a reference touching [addr, last], of the
 * line sizes but the smallest (counted inline: lp_rt_extra0). */
static void rt_count_extra(struct lp_rt_fast *f, uint64_t addr, uint64_t last)
{
	for (uint32_t i = 1; i < g.nlines; i++)
		f->extra_lines[i] += (last >> g.line_shift[i]) - (addr >> g.line_shift[i]);
}

/* 1 when no live watch (of any thread) may cover a byte of [addr, last]. */
int lp_rt_range_unwatched(uint64_t addr, uint64_t last)
{
	for (uint64_t gr = addr >> LP_RT_GRANULE_SHIFT; gr <= last >> LP_RT_GRANULE_SHIFT; gr++)
		if (gr >= LP_RT_SHADOW_BYTES || *(const uint8_t *)(uintptr_t)(LP_RT_SHADOW + gr))
			return 0;
	return 1;
}

/* --samples N: the level of a sampled reference is the level its gap was
 * drawn at plus a geometric number of halvings (P(>= j more) = 2^-j), so
 * that it survives to final level L with probability rate / 2^L whatever
 * the level was then. Returns -1 if it cannot survive the current level
 * (then it is not watched at all), else the level. */
static int rt_sample_level(struct lp_rt_thread *t)
{
	uint32_t level, cur;
	uint64_t ge = 0;

	if (!g.limit)
		return 0;
	level = t->gap_level + (uint32_t)__builtin_ctzll(lp_rng_next(&t->rng) | (1ull << 62));
	if (level > 63)
		level = 63;
	cur = atomic_load(&g.level);
	if (level < cur)
		return -1;
	atomic_fetch_add(&g.level_count[level], 1);
	/* Raise the process's level while 2N sampled references would
	 * survive it; each step halves the rate and the survivors. */
	for (uint32_t l = cur; l < 64; l++)
		ge += atomic_load(&g.level_count[l]);
	while (ge >= g.limit && cur < 62) {
		ge -= atomic_load(&g.level_count[cur]);
		if (atomic_compare_exchange_strong(&g.level, &cur, cur + 1))
			cur++;
		else
			break; /* another thread raised it */
	}
	return level < atomic_load(&g.level) ? -1 : (int)level;
}

/* A sampled reference watches every line it touches, of every line size:
 * each is a sample (a line access), so that every line access is sampled
 * with its reference's probability, the second line of a straddling
 * reference as much as the first (docs/runtime.md). */
static void rt_start_sample(struct lp_rt_thread *t, uint64_t addr, uint32_t size, uint32_t kind,
			    uint64_t pc, uint64_t now, const uint64_t *ex)
{
	uint64_t last = addr + (size ? size - 1 : 0);
	int level = rt_sample_level(t);

	if (level < 0)
		return;
	for (uint32_t i = 0; i < g.nlines; i++) {
		uint64_t first = addr >> g.line_shift[i];
		uint64_t snow = lp_rt_thread_count() <= 1 ? now + ex[i] : lp_rt_shared_now(t, i, now + ex[i]);
		for (uint64_t l = first; l <= last >> g.line_shift[i]; l++) {
			struct lp_watch *w;

			if (lp_watch_table_must_grow(&t->watches) && lp_rt_table_grow(t) < 0)
				return; /* out of memory: sample fewer, stay correct */
			w = lp_watch_insert(&t->watches, l, i);
			w->begin = now + ex[i] + (l - first);
			w->pc = pc;
			w->addr = l == addr >> g.line_shift[i] ? addr : l << g.line_shift[i];
			w->size = size > 255 ? 255 : (uint8_t)size;
			w->kind = (uint8_t)(kind | (first == last >> g.line_shift[i] ? LP_MSG_PART_WHOLE
						    : l == first			   ? LP_MSG_PART_FIRST
											   : LP_MSG_PART_NEXT)
							   << LP_MSG_PART_SHIFT);
			w->tag = (uint32_t)level;
			lp_rt_share_begin(t, w, snow + (l - first));
			lp_rt_shadow_add(w, 1);
			lp_rt_coarse_add(t, w, 1);
		}
	}
}

/* ---- threads ------------------------------------------------------------- */

static void rt_make_inert(struct lp_rt_fast *f)
{
	f->countdown = INERT_COUNTDOWN;
	f->epoch = INERT_COUNTDOWN;
	f->pages = rt_zero_pages;
}

static void rt_thread_unmap(struct lp_rt_thread *t)
{
	if (t->watches.slot)
		lp_rt_free(t->watches.slot, lp_watch_table_bytes(t->watches.log2));
	lp_rt_free(t->pages, PAGE_ENTRIES * sizeof(uint32_t));
	lp_rt_free(t->regions, REGION_ENTRIES * sizeof(uint32_t));
	lp_rt_free(t->samples, SAMPLE_CAP * sizeof(struct lp_msg_sample));
	lp_rt_free(t->events, (uint64_t)t->event_cap * sizeof(struct lp_msg_ref));
	t->watches.slot = NULL;
	t->pages = NULL;
	t->regions = NULL;
	t->samples = NULL;
	t->events = NULL;
}

/* After reference number now (0-based; now = -1 before the first one),
 * draw the gap to the next sample: reference now + gap will find the
 * countdown at 0. */
static void rt_set_gap(struct lp_rt_fast *f, struct lp_rt_thread *t, uint64_t now)
{
	uint64_t gap = 1;

	if (g.mode != LP_MODE_TRACE) {
		t->gap_level = g.limit ? atomic_load(&g.level) : 0;
		gap = lp_rng_geometric(&t->rng, g.phases ? lp_rt_phase_tick_rate()
							     : ldexp(g.rate, -(int)t->gap_level));
	}

	if (gap > INERT_COUNTDOWN)
		gap = INERT_COUNTDOWN;
	lp_rt_clock_write_begin(t);
	f->countdown = gap - 1;
	f->epoch = now + gap; /* references so far: epoch - countdown = now + 1 */
	lp_rt_clock_write_end(t);
}

static inline void rt_push_event(struct lp_rt_thread *t, uint64_t addr, uint64_t size, uint32_t kind, uint64_t pc);

static struct lp_rt_thread *rt_thread_init(struct lp_rt_fast *f)
{
	struct lp_rt_tls tls[LP_RT_TLS_MAX];
	struct lp_rt_thread *t;
	uint64_t x;

	if (!g.active || atomic_load(&g.finished))
		return NULL;
	t = lp_rt_alloc(sizeof(*t));
	if (!t)
		return NULL;
	t->number = atomic_fetch_add(&g.nthreads, 1);
	t->tid = (uint32_t)gettid();
	t->fast = f;
	t->conn.fd = -1;
	lp_rt_roi_thread_init(&t->roi, t->pages);
	x = g.seed + t->number;
	lp_rng_seed(&t->rng, lp_splitmix64(&x));
	t->watches.slot = lp_rt_alloc(lp_watch_table_bytes(TABLE_MIN_LOG2));
	if (t->watches.slot)
		lp_watch_table_init(&t->watches, t->watches.slot, TABLE_MIN_LOG2);
	t->pages = lp_rt_alloc(PAGE_ENTRIES * sizeof(uint32_t));
	t->regions = lp_rt_alloc(REGION_ENTRIES * sizeof(uint32_t));
	t->samples = lp_rt_alloc(SAMPLE_CAP * sizeof(struct lp_msg_sample));
	t->event_cap = g.mode == LP_MODE_TRACE ? EVENT_CAP_TRACE : EVENT_CAP_ALLOC;
	t->events = lp_rt_alloc((uint64_t)t->event_cap * sizeof(struct lp_msg_ref));
	if (!t->watches.slot || !t->pages || !t->regions || !t->samples || !t->events) {
		rt_thread_unmap(t);
		lp_rt_free(t, sizeof(*t));
		return NULL;
	}
	rt_connect(t);
	for (unsigned i = 0, n = lp_rt_tls_segments(tls, LP_RT_TLS_MAX); i < n; i++)
		rt_push_event(t, tls[i].start, tls[i].size, LP_MSG_EV_TLS, tls[i].image);
	t->next_flush_ns = lp_rt_now_ns(CLOCK_MONOTONIC_COARSE) + g.flush_ns;
	if (atomic_exchange(&g.maps_sent, 1) == 0)
		rt_send_maps(t, LP_MAPS_START);
	f->t = t;
	f->pages = t->pages;
	t->extra0 = &lp_rt_extra0;
	f->countdown = 0; /* no reference yet: the first one draws the gap */
	f->epoch = 0;
	pthread_setspecific(g.key, t);
	t->next = atomic_load(&g.threads);
	while (!atomic_compare_exchange_weak(&g.threads, &t->next, t))
		;
	return t;
}

static uint64_t rt_thread_refs(const struct lp_rt_thread *t)
{
	if (t->dead)
		return t->final_refs;
	if (t->roi.outside)
		return t->roi.saved_epoch - t->roi.saved_countdown;
	return t->fast->epoch - t->fast->countdown;
}

/* Outside a region of interest: the counts put aside. */
static uint64_t rt_thread_extra(const struct lp_rt_thread *t, uint32_t i)
{
	if (t->dead)
		return t->final_extra[i];
	if (t->roi.outside)
		return i ? t->roi.saved_extra[i] : t->roi.saved_extra0;
	return i ? t->fast->extra_lines[i] : *t->extra0;
}

/* The THREAD message: the count so far with each flush (running), so that
 * a killed process keeps it up to the last flush, or the final count. */
static void rt_send_thread_refs(struct lp_rt_thread *t, int running)
{
	struct lp_msg_thread m;

	rt_header(&m.h, LP_MSG_THREAD, sizeof(m), t);
	m.thread = t->number;
	m.running = (uint32_t)running;
	m.references = running ? rt_thread_refs(t) : t->final_refs;
	for (uint32_t i = 0; i < LP_MAX_LINE_SIZES; i++)
		m.extra_lines[i] = i < g.nlines ? rt_thread_extra(t, i) : 0;
	if (lp_rt_roi_set) { /* REGION first: a final THREAD ends the thread's counts */
		struct lp_msg_region rm;
		rt_header(&rm.h, LP_MSG_REGION, sizeof(rm), t);
		lp_rt_roi_message(t->fast, &t->roi, t->number, &rm);
		rt_send2(t, &rm, sizeof(rm), NULL, 0);
	}
	rt_send2(t, &m, sizeof(m), NULL, 0);
}

/* Send everything of a thread that is ending (or whose process is): live
 * watches as dangling samples, buffers, the THREAD message. */
static void rt_thread_finish(struct lp_rt_thread *t)
{
	if (t->dead)
		return;
	t->final_refs = rt_thread_refs(t);
	for (uint32_t i = 0; i < g.nlines; i++)
		t->final_extra[i] = rt_thread_extra(t, i);
	if (g.mode == LP_MODE_SAMPLE) {
		struct lp_watch *w;
		uint64_t pos = 0;
		int locked = lp_rt_share_lock_exit();
		while ((w = lp_watch_table_next(&t->watches, &pos))) {
			struct lp_share_out o;
			uint64_t sbegin = 0;
			int have = lp_rt_share_dangle(t, w, locked, &o, &sbegin);
			rt_emit(t, w, LP_SAMPLE_DANGLING, 0, 0, have ? &o : NULL, sbegin);
		}
		if (locked)
			lp_rt_share_unlock();
		rt_send_samples(t);
	}
	if (g.phases) {
		lp_rt_phase_close(&t->ph, t->number, t->final_refs, t->final_extra);
		rt_send_phases(t);
	}
	lp_rt_shadow_drop(t);
	rt_send_events(t);
	rt_send_thread_refs(t, 0);
	t->dead = 1;
}

static void rt_thread_key_destroy(void *arg)
{
	struct lp_rt_thread *t = arg;
	struct lp_rt_fast *f = &lp_rt_fast;
	int expect = 0;

	f->in_rt++;
	while (!atomic_compare_exchange_weak(&t->busy, &expect, 1))
		expect = 0;
	if (!t->dead) {
		rt_thread_finish(t);
		lp_rt_conn_close(&t->conn);
	}
	rt_make_inert(f);
	atomic_store(&t->busy, 0);
	f->in_rt--;
	/* The state itself stays mapped: the exit flusher may still walk it. */
}

/* Take the thread's slow-path state. Returns NULL when the runtime is (or
 * just became) inert for this thread. */
static struct lp_rt_thread *rt_enter(struct lp_rt_fast *f)
{
	struct lp_rt_thread *t = f->t;
	int expect = 0;

	if (!t) {
		t = rt_thread_init(f);
		if (!t)
			return NULL;
	}
	while (!atomic_compare_exchange_weak(&t->busy, &expect, 1))
		expect = 0;
	if (t->dead) {
		atomic_store(&t->busy, 0);
		return NULL;
	}
	return t;
}

/* Trace mode: send the buffers of the other threads that are not in
 * their slow path (blocked, say, or waiting in a join), so that the
 * collector, which writes records in the order of their numbers, never
 * waits long for an idle thread's old records. A thread found busy is
 * skipped: it sends its own. */
static void rt_send_idle_events(struct lp_rt_thread *self)
{
	if (g.mode != LP_MODE_TRACE)
		return;
	for (struct lp_rt_thread *t = atomic_load(&g.threads); t; t = t->next) {
		int expect = 0;

		if (t == self || !t->nevents ||
		    !atomic_compare_exchange_strong(&t->busy, &expect, 1))
			continue;
		if (!t->dead && t->events)
			rt_send_events(t);
		atomic_store_explicit(&t->busy, 0, memory_order_release);
	}
}

static void rt_leave(struct lp_rt_thread *t)
{
	uint64_t now;

	/* The flush clock is read every 64 slow-path events only: in trace mode
	 * every reference takes the slow path. */
	if ((++t->slow_calls & 63) == 0 &&
	    (now = lp_rt_now_ns(CLOCK_MONOTONIC_COARSE)) >= t->next_flush_ns) {
		rt_send_thread_refs(t, 1); /* first: see rt_emit() */
		rt_send_samples(t);
		rt_send_events(t);
		rt_send_phases(t);
		rt_send_idle_events(t);
		t->next_flush_ns = now + g.flush_ns;
	}
	/* A release store unlocks (a plain mov on x86): the sequentially
	 * consistent store was an xchg, a locked instruction on every slow
	 * path, 9% of a run at rate 1e-3 (perf, matmul interchange). The
	 * taker's compare-and-swap in rt_enter or the exit flusher orders the
	 * rest. */
	atomic_store_explicit(&t->busy, 0, memory_order_release);
}

/* A reference (trace mode) or an allocation event into the buffer.
 * Inlined: in trace mode every reference comes here. */
static inline __attribute__((always_inline)) void
rt_push_event(struct lp_rt_thread *t, uint64_t addr, uint64_t size, uint32_t kind, uint64_t pc)
{
	struct lp_msg_ref *r;

	if (t->nevents == t->event_cap) {
		rt_send_events(t);
		rt_send_idle_events(t);
	}
	r = &t->events[t->nevents];
	r->addr = addr;
	r->pc = pc;
	r->size = size;
	r->thread = t->number;
	r->kind = kind;
	r->seq = g.mode == LP_MODE_TRACE ? atomic_fetch_add_explicit(&g.trace_seq, 1, memory_order_relaxed) : 0;
	t->nevents++; /* after the record: a signal-time flush sends a whole prefix */
}

/* The line-access clocks before this reference: the extra line accesses
 * so far, less this reference's of the smallest size (counted inline
 * before the call, e0). */
static void rt_extra_before(const struct lp_rt_fast *f, uint64_t e0, uint64_t *ex)
{
	memcpy(ex, f->extra_lines, LP_MAX_LINE_SIZES * sizeof(*ex));
	ex[0] = lp_rt_extra0 - e0;
}

/* A reference arrives here with the countdown already decremented and
 * its extra line accesses of the smallest size counted: it expired if the
 * countdown was 0 (now UINT64_MAX), else the map says a line of it may be
 * watched, or it straddles lines of the smallest size and larger ones are
 * recorded too. Its number is epoch - countdown - 1. */
void lp_rt_slow(uint64_t addr, uint32_t size, uint32_t kind, uint64_t pc)
{
	struct lp_rt_fast *f = &lp_rt_fast;
	struct lp_rt_thread *t;
	int expired = (int64_t)f->countdown < 0;
	uint64_t now, last = addr + (size ? size - 1 : 0);
	uint64_t e0 = (last >> lp_rt_line_shift0) - (addr >> lp_rt_line_shift0);
	uint64_t ex[LP_MAX_LINE_SIZES]; /* extra line accesses before this reference */
	/* lines of the larger sizes to count here */
	int straddles = (addr ^ last) > lp_rt_straddle_slow;

	if (!pc) /* inlined snippet: the call site is the access itself */
		pc = (uint64_t)__builtin_return_address(0);
	rt_extra_before(f, e0, ex);
	if (straddles && !expired && !f->in_rt && f->t) {
		/* A straddling reference of a running thread: its extra line
		 * accesses, and done unless a watch may cover one of its
		 * lines (the common case: a call and a few instructions). */
		rt_count_extra(f, addr, last);
		if (lp_rt_range_unwatched(addr, last))
			return;
		straddles = 0; /* counted */
	}
	if (f->in_rt) {
		/* A signal handler interrupted the runtime: postpone a due
		 * sample by one reference, keeping the clock right. */
		if (expired) {
			f->epoch -= f->countdown;
			f->countdown = 0;
		}
		if (straddles)
			rt_count_extra(f, addr, last);
		return;
	}
	if (!atomic_load(&g.init_state)) {
		/* Before our constructor: try again at the next reference. */
		f->countdown = 0;
		f->epoch = 0;
		lp_rt_extra0 = 0;
		f->pages = rt_zero_pages;
		return;
	}
	f->in_rt++;
	t = rt_enter(f);
	if (t && !t->clock_started) {
		/* The thread's first reference: start its clock before it,
		 * then count this one as the hot path would have. */
		t->clock_started = 1;
		rt_set_gap(f, t, UINT64_MAX);
		lp_rt_clock_write_begin(t);
		expired = f->countdown == 0;
		f->countdown--;
		memset(f->extra_lines, 0, sizeof(f->extra_lines));
		lp_rt_extra0 = e0;
		lp_rt_clock_write_end(t);
		rt_extra_before(f, e0, ex);
	}
	if (!t) {
		rt_make_inert(f);
		f->in_rt--;
		return;
	}
	if (lp_rt_roi_set && lp_rt_roi_follow(f, &t->roi, 1, e0)) {
		rt_leave(t); /* outside the region: no watch checked, nothing sampled */
		f->in_rt--;
		return;
	}
	if (straddles)
		rt_count_extra(f, addr, last);
	now = f->epoch - f->countdown - 1;
	if (!expired) {
		rt_check_watches(t, addr, last, kind, pc, now, ex);
	} else if (g.mode == LP_MODE_TRACE) {
		rt_push_event(t, addr, size, kind, pc);
		rt_set_gap(f, t, now);
	} else {
		if (t->watches.live || !lp_rt_range_unwatched(addr, last))
			rt_check_watches(t, addr, last, kind, pc, now, ex);
		/* with phases every expiry is a tick, a sample by chance */
		if (!g.phases || lp_rt_phase_tick(&t->ph, &t->rng, t->number, pc, now, ex))
			rt_start_sample(t, addr, size, kind, pc, now, ex);
		if (t->ph.nout >= LP_PHASE_OUT / 2)
			rt_send_phases(t);
		rt_set_gap(f, t, now);
	}
	rt_leave(t);
	f->in_rt--;
}

int lp_rt_alloc_wanted(void)
{
	return !lp_rt_fast.in_rt && g.inited && g.active;
}

/* An allocation event and its frame records, in one message. */
static void rt_push_alloc(struct lp_rt_thread *t, uint64_t addr, uint64_t size, uint32_t kind, uint64_t pc,
			  const uint64_t *up, unsigned nup)
{
	unsigned recs = (nup + 2) / 3;
	struct lp_msg_ref *r;

	if (t->nevents + 1 + recs > t->event_cap)
		rt_send_events(t);
	r = &t->events[t->nevents];
	/* sample mode: the event's time in seq (protocol.h), on the clock
	 * its thread's samples count (line accesses of the smallest line
	 * size: references and the extra lines of straddling ones) */
	r[0] = (struct lp_msg_ref){ .addr = addr, .pc = pc, .size = size, .thread = t->number, .kind = kind,
				    .seq = g.mode == LP_MODE_TRACE ? 0 : rt_thread_refs(t) + rt_thread_extra(t, 0) + 1 };
	for (unsigned i = 0; i < recs; i++) {
		uint64_t f[3] = { 0, 0, 0 };
		for (unsigned k = 0; k < 3 && 3 * i + k < nup; k++)
			f[k] = up[3 * i + k];
		r[1 + i] = (struct lp_msg_ref){ .addr = f[0], .pc = f[1], .size = f[2], .thread = t->number,
						.kind = LP_MSG_EV_FRAMES };
	}
	t->nevents += 1 + recs; /* after the records: a signal-time flush sends whole events */
}

/* A marker or breakpoint changed the region: this thread follows now (or
 * at its first reference, when its clock has not started). */
void lp_rt_roi_apply(void)
{
	struct lp_rt_fast *f = &lp_rt_fast;
	struct lp_rt_thread *t = f->t;

	if (!g.active || f->in_rt || !t || !t->clock_started)
		return;
	f->in_rt++;
	if ((t = rt_enter(f))) {
		lp_rt_roi_follow(f, &t->roi, 0, 0);
		rt_leave(t);
	}
	f->in_rt--;
}

void lp_rt_alloc_event(uint64_t addr, uint64_t size, uint32_t kind, uint64_t pc, const uint64_t *up,
		       unsigned nup)
{
	struct lp_rt_fast *f = &lp_rt_fast;
	struct lp_rt_thread *t;

	if (f->in_rt || !g.inited || !g.active)
		return;
	f->in_rt++;
	t = rt_enter(f);
	if (!t) {
		if (!f->t)
			rt_make_inert(f);
		f->in_rt--;
		return;
	}
	rt_push_alloc(t, addr, size, kind, pc, up, nup > LP_RT_STACK_UP ? LP_RT_STACK_UP : nup);
	rt_leave(t);
	f->in_rt--;
}

/* ---- process end, fork, signals ---------------------------------------- */

void lp_rt_process_finish(int status, int how)
{
	struct lp_rt_fast *f = &lp_rt_fast;
	struct lp_rt_thread *self, *t;
	struct lp_msg_bye bye;
	uint64_t total = 0;
	int interrupted;

	/* A vfork child (or a clone without atfork handlers) shares or copied
	 * the parent's state: it must not end the parent's image. */
	if (!g.inited || !g.active || (uint32_t)getpid() != g.pid || atomic_exchange(&g.finished, 1))
		return;
	interrupted = f->in_rt; /* a signal arrived inside the runtime */
	f->in_rt++;
	self = f->t;
	if (!self && !interrupted) {
		atomic_store(&g.finished, 0);
		self = rt_thread_init(f);
		atomic_store(&g.finished, 1);
	}
	for (t = atomic_load(&g.threads); t; t = t->next) {
		int expect = 0;
		if (t != self || !interrupted) {
			/* Wait a little for a thread inside its slow path (it may be
			 * blocked sending); past that its latest data is lost. */
			uint64_t deadline = lp_rt_now_ns(CLOCK_MONOTONIC) + 50000000ull;
			while (!atomic_compare_exchange_weak(&t->busy, &expect, 1)) {
				expect = 0;
				if (lp_rt_now_ns(CLOCK_MONOTONIC) > deadline)
					break;
			}
			if (expect)
				continue;
		}
		if (t != self)
			rt_thread_finish(t);
		total += rt_thread_refs(t);
		if (t != self)
			atomic_store(&t->busy, 0);
	}
	if (self) {
		if (!self->dead) {
			rt_thread_finish(self);
			rt_send_maps(self, LP_MAPS_EXIT);
		}
		rt_header(&bye.h, LP_MSG_BYE, sizeof(bye), self);
		bye.status = how == LP_BYE_SIGNAL ? -status : how == LP_BYE_EXEC ? 0 : status;
		bye.how = (uint32_t)how;
		bye.references = total;
		rt_send2(self, &bye, sizeof(bye), NULL, 0);
		if (!interrupted)
			atomic_store(&self->busy, 0);
	}
	rt_make_inert(f);
	f->in_rt--;
}

static void rt_on_exit(int status, void *arg)
{
	lp_rt_process_finish(status, LP_BYE_EXIT);
}

static void rt_fatal_signal(int sig)
{
	struct sigaction sa;
	int saved = errno;

	lp_rt_process_finish(sig, LP_BYE_SIGNAL);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);
	errno = saved;
	/* SA_NODEFER: the signal is not blocked here, so this kills at once
	 * with the default action (core dump where that is the default). */
	raise(sig);
}

/* A forked child starts afresh: its own connections (the parent's sockets
 * are closed, so the collector sees the parent's ends), an empty state, and
 * the parent's unsent buffers and watches are dropped (the parent sends
 * them). Only the forking thread exists in the child. */
static void rt_atfork_child(void)
{
	struct lp_rt_thread *t = atomic_load(&g.threads), *next;
	struct lp_rt_fast *f = &lp_rt_fast;

	if (!g.active)
		return;
	for (; t; t = next) {
		next = t->next;
		lp_rt_conn_close(&t->conn);
		lp_rt_shadow_drop(t);
		rt_thread_unmap(t);
		lp_rt_free(t, sizeof(*t));
	}
	rt_new_image();
	lp_rt_share_reset();
	pthread_setspecific(g.key, NULL);
	f->t = NULL;
	f->countdown = 0; /* the next reference re-initialises this thread */
	f->epoch = 0;
	memset(f->extra_lines, 0, sizeof(f->extra_lines));
	lp_rt_extra0 = 0;
	f->pages = rt_zero_pages;
}
