/* Regions of interest in the runtime (docs/runtime.md, "Regions of
 * interest"): the markers of locprof/roi.h, record --start-at/--stop-at
 * (breakpoints at function entries) and --skip N.
 *
 * The region is a process-wide state. A thread outside it keeps its
 * reference clock, countdown and line-access counts aside (struct
 * lp_rt_roi) and runs with a countdown that only brings it to the slow
 * path every ROI_CHECK references, where it counts what it skipped and
 * looks whether the region began again; watches are not checked and
 * nothing is sampled. Entering restores the clock where it stopped, so the
 * region's references are numbered as if the program ran them alone. The
 * thread that calls a marker (or hits a breakpoint) follows at once; the
 * others at their next slow-path event: within ROI_CHECK references when
 * outside, at their next sample (1/rate references on average) inside.
 *
 * --start-at/--stop-at: an int3 at the function's entry in the main
 * executable. Only the breakpoint that changes the state is armed (the
 * start one outside the region, the stop one inside), so a breakpoint is
 * hit once per change of state: its trap restores the instruction and
 * resumes there, with no single-stepping.
 */
#include "rt.h"

#include "collect/protocol.h"

#include <link.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

/* References a thread outside the region runs between two looks at the
 * process's state: one slow path per 16384 references costs about 0.3% of
 * an outside reference's time and bounds how late a thread follows. */
#define ROI_CHECK 16384u

int lp_rt_roi_set;

static struct {
	atomic_int inside;
	atomic_ullong entries;
	uint64_t skip;
	struct rt_roi_break {
		uint8_t *at;   /* the entry's address; NULL: none */
		uint8_t orig;  /* its first byte */
		int armed;
		int starts;    /* 1: entering the function starts the region */
	} bp[2];
	struct sigaction old_trap;
	const uint32_t *zero_pages;
} roi;

/* ---- per thread ------------------------------------------------------------ */

void lp_rt_roi_thread_init(struct lp_rt_roi *r, const uint32_t *pages)
{
	memset(r, 0, sizeof(*r));
	r->skip_left = roi.skip;
	r->pages = pages;
}

/* The next look at the state after b references (b >= 1): the b-th finds
 * the countdown at 0. While the region is on, those references count
 * towards --skip. */
static void roi_budget(struct lp_rt_fast *f, struct lp_rt_roi *r, int inside)
{
	uint64_t b = ROI_CHECK;

	r->skip_phase = inside && r->skip_left;
	if (r->skip_phase && r->skip_left < b)
		b = r->skip_left;
	f->countdown = b - 1;
	f->epoch = b - 1;
}

/* Put the thread's clock aside. With ref, the reference being handled
 * (already counted by the hot path, e0 its extra lines of the smallest
 * size) becomes the first one outside; the clock is then as it was before
 * it, and a sample that was due falls on the first reference back in. */
static void roi_leave(struct lp_rt_fast *f, struct lp_rt_roi *r, int ref, uint64_t e0, int inside)
{
	r->saved_countdown = f->countdown + (uint64_t)ref;
	r->saved_epoch = f->epoch;
	r->saved_extra0 = lp_rt_extra0 - (ref ? e0 : 0);
	memcpy(r->saved_extra, f->extra_lines, sizeof(r->saved_extra));
	r->outside = 1;
	r->skip_phase = inside && r->skip_left;
	f->pages = roi.zero_pages;
	f->countdown = 0;
	f->epoch = (uint64_t)ref; /* references outside so far */
}

static void roi_resume(struct lp_rt_fast *f, struct lp_rt_roi *r)
{
	f->countdown = r->saved_countdown;
	f->epoch = r->saved_epoch;
	lp_rt_extra0 = r->saved_extra0;
	memcpy(f->extra_lines, r->saved_extra, sizeof(r->saved_extra));
	f->pages = r->pages;
	r->outside = 0;
}

int lp_rt_roi_follow(struct lp_rt_fast *f, struct lp_rt_roi *r, int ref, uint64_t e0)
{
	int inside = atomic_load_explicit(&roi.inside, memory_order_relaxed);
	uint64_t n;

	if (!r->outside) {
		if (inside && !r->skip_left)
			return 0;
		roi_leave(f, r, ref, e0, inside);
	}
	n = f->epoch - f->countdown; /* outside since the last look, this reference included */
	r->skipped += n;
	if (r->skip_phase)
		r->skip_left -= n < r->skip_left ? n : r->skip_left;
	if (inside && !r->skip_left)
		roi_resume(f, r);
	else
		roi_budget(f, r, inside);
	return ref;
}

void lp_rt_roi_message(const struct lp_rt_fast *f, const struct lp_rt_roi *r, uint32_t thread,
		       struct lp_msg_region *m)
{
	m->thread = thread;
	m->pad = 0;
	m->skipped = r->skipped + (r->outside ? f->epoch - f->countdown : 0);
	m->entries = atomic_load(&roi.entries);
}

/* ---- the process's state ----------------------------------------------------- */

static void roi_change(int inside)
{
	int was = atomic_exchange(&roi.inside, inside);

	if (inside && !was)
		atomic_fetch_add(&roi.entries, 1);
}

void lp_rt_roi_mark(int what)
{
	if (!lp_rt_roi_set)
		return; /* not recorded, or recorded whole */
	roi_change(what != 0);
	lp_rt_roi_apply();
}

/* ---- breakpoints ---------------------------------------------------------------- */

static int roi_poke(uint8_t *at, uint8_t byte)
{
	long page = sysconf(_SC_PAGESIZE);
	void *p = (void *)((uintptr_t)at & ~(uintptr_t)(page - 1));

	if (mprotect(p, (size_t)page, PROT_READ | PROT_WRITE | PROT_EXEC) < 0)
		return -1;
	*(volatile uint8_t *)at = byte;
	__builtin___clear_cache((char *)at, (char *)at + 1);
	return mprotect(p, (size_t)page, PROT_READ | PROT_EXEC);
}

static void roi_arm(struct rt_roi_break *b, int on)
{
	if (!b->at || b->armed == on)
		return;
	if (roi_poke(b->at, on ? 0xcc : b->orig) == 0)
		b->armed = on;
}

/* Arm the breakpoint that would change the current state. */
static void roi_arm_for(int inside)
{
	for (int i = 0; i < 2; i++)
		roi_arm(&roi.bp[i], roi.bp[i].starts != inside);
}

static void roi_trap(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;
	uint8_t *at = (uint8_t *)uc->uc_mcontext.gregs[REG_RIP] - 1;

	for (int i = 0; i < 2; i++) {
		struct rt_roi_break *b = &roi.bp[i];
		if (!b->at || at != b->at)
			continue;
		/* Ours (or one another thread just disarmed): run the
		 * function's first instruction as it is. */
		uc->uc_mcontext.gregs[REG_RIP] = (greg_t)at;
		if (b->armed) {
			roi_change(b->starts);
			roi_arm_for(b->starts);
			lp_rt_roi_apply();
		}
		return;
	}
	/* Not ours: what the program (or the default) would have done. */
	if (roi.old_trap.sa_flags & SA_SIGINFO && roi.old_trap.sa_sigaction) {
		roi.old_trap.sa_sigaction(sig, si, ctx);
	} else if (roi.old_trap.sa_handler != SIG_IGN && roi.old_trap.sa_handler != SIG_DFL) {
		roi.old_trap.sa_handler(sig);
	} else if (roi.old_trap.sa_handler == SIG_DFL) {
		signal(sig, SIG_DFL);
		raise(sig);
	}
}

static int roi_main_bias(struct dl_phdr_info *info, size_t size, void *data)
{
	*(uintptr_t *)data = (uintptr_t)info->dlpi_addr;
	return 1; /* the first object is the main executable */
}

/* "ADDR NAME": ADDR the function's link-time address in the executable. */
static uint8_t *roi_function(const char *env, uintptr_t bias)
{
	const char *s = getenv(env);
	char *end;
	unsigned long long a;

	if (!s || !*s)
		return NULL;
	a = strtoull(s, &end, 16);
	return end == s || !a ? NULL : (uint8_t *)(bias + (uintptr_t)a);
}

static void roi_breakpoints(int inside)
{
	uintptr_t bias = 0;
	struct sigaction sa;

	dl_iterate_phdr(roi_main_bias, &bias);
	roi.bp[0].at = roi_function(LP_ENV_ROI_START_AT, bias);
	roi.bp[0].starts = 1;
	roi.bp[1].at = roi_function(LP_ENV_ROI_STOP_AT, bias);
	roi.bp[1].starts = 0;
	if (!roi.bp[0].at && !roi.bp[1].at)
		return;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = roi_trap;
	sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGTRAP, &sa, &roi.old_trap) < 0)
		return;
	for (int i = 0; i < 2; i++)
		if (roi.bp[i].at)
			roi.bp[i].orig = *roi.bp[i].at;
	roi_arm_for(inside);
}

void lp_rt_roi_init(const uint32_t *zero_pages)
{
	const char *out = getenv(LP_ENV_ROI), *skip = getenv(LP_ENV_ROI_SKIP);
	const char *start = getenv(LP_ENV_ROI_START_AT), *stop = getenv(LP_ENV_ROI_STOP_AT);
	const char *program = getenv(LP_ENV_ROI_PROGRAM);
	int inside = !(out && !strcmp(out, "outside"));
	char exe[4096];
	ssize_t n;

	/* Another program, exec'd by the recorded one: its addresses and
	 * markers are not the ones the region was set for. */
	if (program && *program) {
		n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		if (n <= 0 || (exe[n] = 0, strcmp(exe, program)))
			return;
	}
	roi.zero_pages = zero_pages;
	roi.skip = skip ? strtoull(skip, NULL, 10) : 0;
	if (inside && !roi.skip && !(start && *start) && !(stop && *stop))
		return; /* the whole run */
	atomic_store(&roi.inside, inside);
	atomic_store(&roi.entries, (unsigned long long)inside);
	roi_breakpoints(inside);
	lp_rt_roi_set = 1;
}
