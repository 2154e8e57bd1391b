/* The hardware counter source: perf_event_open on the retired-load and
 * retired-store events of each target thread (encoded by libpfm4 for the
 * host's PMU), overflows notified as a signal to the target thread, which
 * the supervisor intercepts before the target sees it.
 *
 * Reviewed against perf_event_open(2) (man-pages 6.03) and the kernel's
 * overflow path; docs/pmu.md ("The pmu counter, reviewed") has the
 * reasoning and what changed. What is relied on:
 *  - pid = the target tid, cpu = -1: count that thread on any CPU. The
 *    tracer may: it passes the PTRACE_MODE_READ_REALCREDS check (or has
 *    CAP_PERFMON); perf_event_paranoid <= 2 allows user-mode counting.
 *  - exclude_kernel, exclude_hv: the program's own user-mode references.
 *  - pinned, each event its own group: an event is never multiplexed (its
 *    count would miss references: the clock must be exact). A pinned event
 *    that cannot get a counter goes into an error state where read()
 *    returns 0 bytes; that is reported, never taken for a count. The
 *    running and enabled times are read too and must agree.
 *  - sample_period (freq = 0): overflow after exactly that many events.
 *    PERF_EVENT_IOC_PERIOD takes effect at once since Linux 3.14 (it
 *    resets the period's remainder); before, one overflow late: the quirk
 *    of thesis §3.3.2.1. Either way the clock is read at every
 *    notification, never assumed, so a late period or an early
 *    notification only costs one more round.
 *  - notification: O_ASYNC + F_SETSIG (a real-time signal, so si_fd names
 *    the counter and si_code is POLL_IN/POLL_HUP) + F_SETOWN_EX with
 *    F_OWNER_TID (to the counted thread, not to any thread of its process:
 *    the BUGS section of the man page). PERF_EVENT_IOC_REFRESH with a huge
 *    count enables the event for that many overflows. One-shot refresh
 *    (REFRESH 1) is not used: an event disables itself after its last
 *    overflow and would stop counting, so the clock would lose the
 *    references the engine steps through after a notification.
 *  - inherit = 0: threads and children are attached one by one as ptrace
 *    reports them (before they run); inherited events could not be read
 *    per thread, and REFRESH is refused on them.
 *  - precise_ip = 0 (arbitrary skid): skid is compensated by stepping
 *    (§3.3.2.1). With --sample-start double-trap (config.precise, thesis
 *    §3.3.2.2) the events sample instead: precise_ip as high as the
 *    kernel accepts (3, then 2, then 1: perf_event_open fails with EINVAL
 *    or EOPNOTSUPP for a level the PMU cannot give), sample_type
 *    PERF_SAMPLE_IP | PERF_SAMPLE_TID, wakeup_events = 1 (a wakeup, so a
 *    signal, per record), a ring buffer of 1 + 2 pages read at every
 *    notification (perf-ring.c). The newest record's ip is the pc of the
 *    overflowing reference's instruction (PEBS: the "eventing IP" since
 *    Haswell at precise_ip >= 2; PERF_RECORD_MISC_EXACT_IP says so).
 *
 * One clock from many events: no x86 PMU counts loads and stores as one
 * event, and every thread has its own pair. With n events armed with
 * period floor(d/n) for a distance d to the early point, no overflow means
 * the sum is still below the point, and the first overflow proves it moved
 * by at least d/n: O(n log d) notifications reach the point without
 * overshooting it (lp_pmu_event_period).
 *
 * Compensation (§3.5): the tracer's single-steps, the page faults of
 * page-protection watchpoints, system calls and debug traps add counts
 * that are not references of the program; each kind is counted per thread
 * and subtracted at a per-host rate (-X compensate=S,F,C,T or
 * LOCPROF_PMU_COMPENSATE, default 1,1,1,1; docs/pmu.md says how to
 * calibrate them). */
#include "counter-pmu.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <perfmon/pfmlib_perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <locprof/common.h>
#include "common/error.h"

#define MAX_THREADS 256

/* Retired loads / stores, newest naming first; the first pair libpfm4
 * can encode for the host PMU is used. */
static const char *const event_names[][2] = {
	{ "MEM_INST_RETIRED:ALL_LOADS", "MEM_INST_RETIRED:ALL_STORES" },  /* Skylake and later */
	{ "MEM_UOPS_RETIRED:ALL_LOADS", "MEM_UOPS_RETIRED:ALL_STORES" },  /* Sandy Bridge - Broadwell */
	{ "MEM_INST_RETIRED:LOADS", "MEM_INST_RETIRED:STORES" },          /* Nehalem / Westmere (the thesis) */
	{ "LS_DISPATCH:LD_DISPATCH", "LS_DISPATCH:STORE_DISPATCH" },      /* AMD Zen (dispatched, not retired) */
};

struct pmu_thread {
	pid_t tid;
	int fd[2]; /* loads, stores */
	uint64_t notes[LP_PMU_NOTE_COUNT];
	struct lp_pmu_ring ring[2];  /* double trap: the events' sample records */
	struct lp_pmu_precise rec;   /* the newest record */
	int have_rec;
};

struct pmu_counter {
	struct lp_pmu_counter base;
	struct lp_pmu_sys sys;
	struct perf_event_attr attr[2];
	int sig;
	struct pmu_thread t[MAX_THREADS];
	int n;
	uint64_t dead; /* compensated references of detached threads */
	uint64_t at;
	int armed;
	double rate[LP_PMU_NOTE_COUNT];
	uint64_t unit; /* events per clock tick: 1 (pmu-sw: 1 ms of task clock) */
	int precise;   /* double trap: sampling events with rings */
	int min_level; /* lowest precise_ip to try: 1 on a PMU (0 is no PEBS), 0 for pmu-sw */
	int err;       /* first failure of the kernel interface, LP_E* */
};

/* ---- the pure parts ------------------------------------------------------ */

void lp_pmu_attr_init(struct perf_event_attr *a)
{
	a->size = sizeof(*a);
	a->disabled = 1;          /* enabled by IOC_REFRESH once set up */
	a->exclude_kernel = 1;
	a->exclude_hv = 1;
	a->exclude_user = 0;
	a->pinned = 1;
	a->exclusive = 0;
	a->inherit = 0;
	a->freq = 0;
	a->sample_period = LP_PMU_PERIOD_NEVER;
	a->sample_type = 0;       /* no ring buffer: the signal is all we use */
	a->wakeup_events = 1;
	a->precise_ip = 0;
	a->read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
	a->enable_on_exec = 0;
}

void lp_pmu_attr_precise(struct perf_event_attr *a, unsigned level)
{
	a->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID;
	a->precise_ip = level & 3;
	a->wakeup_events = 1;
	a->watermark = 0;
}

int lp_pmu_encode_events(struct perf_event_attr attr[2], const char *const **names)
{
	int ret = pfm_initialize();

	if (ret != PFM_SUCCESS)
		return lp_seterr(LP_EUNSUPPORTED, "no hardware performance counters (libpfm4: %s)",
				 pfm_strerror(ret));
	for (size_t i = 0; i < sizeof(event_names) / sizeof(event_names[0]); i++) {
		int ok = 1;

		for (int k = 0; k < 2 && ok; k++) {
			pfm_perf_encode_arg_t arg;

			memset(&arg, 0, sizeof(arg));
			memset(&attr[k], 0, sizeof(attr[k]));
			arg.attr = &attr[k];
			arg.size = sizeof(arg);
			ok = pfm_get_os_event_encoding(event_names[i][k], PFM_PLM3, PFM_OS_PERF_EVENT, &arg) ==
			     PFM_SUCCESS;
		}
		if (ok) {
			if (names)
				*names = event_names[i];
			return 0;
		}
	}
	return lp_seterr(LP_EUNSUPPORTED, "no retired load/store events on this PMU (libpfm4 knows "
			 "none of MEM_INST_RETIRED:ALL_LOADS and its equivalents)");
}

uint64_t lp_pmu_event_period(uint64_t now, uint64_t at, unsigned n_events)
{
	uint64_t d = at > now ? at - now : 0, p;

	if (!n_events)
		return LP_PMU_PERIOD_NEVER;
	p = d / n_events;
	return p ? p : 1;
}

uint64_t lp_pmu_compensated(uint64_t raw, const uint64_t notes[LP_PMU_NOTE_COUNT],
			    const double rate[LP_PMU_NOTE_COUNT])
{
	double comp = 0;

	for (int k = 0; k < LP_PMU_NOTE_COUNT; k++)
		comp += rate[k] * (double)notes[k];
	comp += 0.5; /* round to the nearest count */
	return comp >= (double)raw ? 0 : raw - (uint64_t)comp;
}

int lp_pmu_parse_rates(const char *s, double rate[LP_PMU_NOTE_COUNT])
{
	double v[LP_PMU_NOTE_COUNT];
	const char *p = s;

	for (int k = 0; k < LP_PMU_NOTE_COUNT; k++)
		rate[k] = 1.0;
	if (!s || !*s)
		return 0;
	for (int k = 0; k < LP_PMU_NOTE_COUNT; k++) {
		char *end;

		v[k] = strtod(p, &end);
		if (end == p || !(v[k] >= 0) || v[k] > 1e6 || (*end != (k + 1 < LP_PMU_NOTE_COUNT ? ',' : '\0')))
			return lp_seterr(LP_EINVAL, "bad compensation rates '%s' (four numbers >= 0: "
					 "step,fault,syscall,trap)", s);
		p = end + 1;
	}
	memcpy(rate, v, sizeof(v));
	return 0;
}

int lp_pmu_is_overflow(const siginfo_t *si, int sig, const int *fds, int n_fds)
{
	if (!si || si->si_signo != sig || (si->si_code != POLL_IN && si->si_code != POLL_HUP))
		return 0;
	for (int i = 0; i < n_fds; i++)
		if (fds[i] >= 0 && fds[i] == si->si_fd)
			return 1;
	return 0;
}

/* ---- the real kernel interface ------------------------------------------ */

static int sys_open(void *ctx, const struct perf_event_attr *a, pid_t tid, int sig)
{
	struct perf_event_attr attr = *a;
	struct f_owner_ex own = { F_OWNER_TID, tid };
	long fd = syscall(SYS_perf_event_open, &attr, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
	int e;

	if (fd < 0)
		return -errno;
	if (fcntl((int)fd, F_SETFL, O_ASYNC | O_NONBLOCK) < 0 || fcntl((int)fd, F_SETSIG, sig) < 0 ||
	    fcntl((int)fd, F_SETOWN_EX, &own) < 0 || ioctl((int)fd, PERF_EVENT_IOC_REFRESH, INT_MAX / 2) < 0) {
		e = -errno;
		close((int)fd);
		return e;
	}
	return (int)fd;
}

static int sys_set_period(void *ctx, int fd, uint64_t period)
{
	return ioctl(fd, PERF_EVENT_IOC_PERIOD, &period) < 0 ? -errno : 0;
}

static int sys_read(void *ctx, int fd, uint64_t *count)
{
	uint64_t v[3]; /* value, time enabled, time running */
	ssize_t n = read(fd, v, sizeof(v));

	if (n < 0)
		return -errno;
	/* A pinned event that cannot be on the PMU goes into an error state
	 * where read returns end-of-file (perf_event_open(2), "pinned"). The
	 * enabled and running times are not compared: read for a thread
	 * being switched in or out can see them a few ns apart (seen with the
	 * software clock of pmu-sw, once in 80 runs, while the thread had
	 * never been off the counter). */
	if (n != (ssize_t)sizeof(v))
		return -EIO;
	*count = v[0];
	return 0;
}

static void sys_close(void *ctx, int fd)
{
	close(fd);
}

static int sys_map(void *ctx, int fd, struct lp_pmu_ring *r)
{
	return lp_pmu_ring_map(r, fd, 1);
}

static const struct lp_pmu_sys real_sys = { sys_open, sys_set_period, sys_read, sys_close, NULL, sys_map };

/* ---- the counter source ------------------------------------------------ */

static int fail(struct pmu_counter *p, int errnum, const char *what, pid_t tid)
{
	if (!p->err) {
		if (errnum == -EIO)
			p->err = lp_seterr(LP_EIO, "%s thread %d: the counter was not on the PMU all the time "
					   "(another user of the PMU? the count would miss references)", what, (int)tid);
		else
			p->err = lp_seterr(LP_EIO, "%s thread %d: %s", what, (int)tid, strerror(-errnum));
	}
	return p->err;
}

static struct pmu_thread *find_thread(struct pmu_counter *p, pid_t tid)
{
	for (int i = 0; i < p->n; i++)
		if (p->t[i].tid == tid)
			return &p->t[i];
	return NULL;
}

static uint64_t raw_of(struct pmu_counter *p, struct pmu_thread *t)
{
	uint64_t sum = 0, v;
	int r;

	for (int k = 0; k < 2; k++) {
		if ((r = p->sys.read(p->sys.ctx, t->fd[k], &v)) < 0) {
			fail(p, r, "reading the counters of", t->tid);
			continue;
		}
		sum += v / p->unit;
	}
	return sum;
}

static uint64_t time_of(struct pmu_counter *p, struct pmu_thread *t)
{
	return lp_pmu_compensated(raw_of(p, t), t->notes, p->rate);
}

static uint64_t pmu_time(struct lp_pmu_counter *c)
{
	struct pmu_counter *p = (struct pmu_counter *)c;
	uint64_t sum = p->dead;

	for (int i = 0; i < p->n; i++)
		sum += time_of(p, &p->t[i]);
	return sum;
}

static uint64_t pmu_thread_time(struct lp_pmu_counter *c, pid_t tid)
{
	struct pmu_counter *p = (struct pmu_counter *)c;
	struct pmu_thread *t = find_thread(p, tid);

	return t ? time_of(p, t) : 0;
}

static int set_all(struct pmu_counter *p, uint64_t period)
{
	int r;

	if (period < LP_PMU_PERIOD_NEVER / p->unit)
		period *= p->unit;
	for (int i = 0; i < p->n; i++)
		for (int k = 0; k < 2; k++)
			if ((r = p->sys.set_period(p->sys.ctx, p->t[i].fd[k], period)) < 0)
				return fail(p, r, "setting the period of", p->t[i].tid);
	return 0;
}

/* Re-arm every event for the distance left to p->at. */
static int rearm(struct pmu_counter *p)
{
	return set_all(p, lp_pmu_event_period(pmu_time(&p->base), p->at, 2u * (unsigned)p->n));
}

static int pmu_arm(struct lp_pmu_counter *c, uint64_t at)
{
	struct pmu_counter *p = (struct pmu_counter *)c;

	p->at = at;
	p->armed = 1;
	return rearm(p);
}

static int reached(struct pmu_counter *p)
{
	p->armed = 0;
	return set_all(p, LP_PMU_PERIOD_NEVER);
}

static void close_event(struct pmu_counter *p, struct pmu_thread *t, int k)
{
	lp_pmu_ring_unmap(&t->ring[k]);
	if (t->fd[k] >= 0)
		p->sys.close(p->sys.ctx, t->fd[k]);
	t->fd[k] = -1;
}

/* Open event k for tid at the highest precise_ip the kernel accepts (the
 * first thread decides; the others get the same level). fd or LP_E*. */
static int open_precise(struct pmu_counter *p, int k, pid_t tid)
{
	int first = p->base.precise_ip < 0, r = -EINVAL;
	char tried[32] = "";

	for (int level = first ? 3 : p->base.precise_ip; level >= (first ? p->min_level : p->base.precise_ip); level--) {
		struct perf_event_attr a = p->attr[k];

		lp_pmu_attr_precise(&a, (unsigned)level);
		if ((r = p->sys.open(p->sys.ctx, &a, tid, p->sig)) >= 0) {
			p->base.precise_ip = level;
			return r;
		}
		snprintf(tried + strlen(tried), sizeof(tried) - strlen(tried), "%s%d", *tried ? ", " : "", level);
		if (r != -EINVAL && r != -EOPNOTSUPP && r != -ENOENT)
			break; /* not a matter of the level */
	}
	if (first)
		return lp_seterr(LP_EUNSUPPORTED, "no precise sampling (PEBS) on this PMU for the load/store "
				 "events (perf_event_open with precise_ip %s: %s)", tried, strerror(-r));
	return lp_seterr(LP_EIO, "perf_event_open on thread %d at precise_ip %d: %s", (int)tid,
			 p->base.precise_ip, strerror(-r));
}

/* Read the rings of t; the newest sample (of the event that signalled,
 * fd, when it has one) is t's record. */
static void drain(struct pmu_counter *p, struct pmu_thread *t, int fd)
{
	for (int pass = 0; pass < 2; pass++) {
		for (int k = 0; k < 2; k++) {
			struct lp_pmu_ring_read rd;

			if (!t->ring[k].meta || (pass == 0) == (t->fd[k] == fd))
				continue; /* the signalling event last, so that it wins */
			memset(&rd, 0, sizeof(rd));
			lp_pmu_ring_drain(&t->ring[k], &rd);
			p->base.ring_samples += rd.samples;
			p->base.ring_lost += rd.lost;
			p->base.ring_throttled += rd.throttled;
			p->base.ring_damaged += (uint64_t)rd.damaged;
			if (rd.have) {
				t->rec = (struct lp_pmu_precise){ .pc = rd.ip, .time = 0, .tid = (pid_t)rd.tid,
								  .kind = (uint8_t)(k == 1 ? LP_REF_WRITE : LP_REF_READ),
								  .exact = rd.exact };
				t->have_rec = 1;
			}
		}
	}
}

static int pmu_attach(struct lp_pmu_counter *c, pid_t tid)
{
	struct pmu_counter *p = (struct pmu_counter *)c;
	struct pmu_thread *t;
	int r;

	if (p->n == MAX_THREADS)
		return lp_seterr(LP_ELIMIT, "more than %d threads to count", MAX_THREADS);
	t = &p->t[p->n];
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	t->fd[0] = t->fd[1] = -1;
	for (int k = 0; k < 2; k++) {
		r = p->precise ? open_precise(p, k, tid) : p->sys.open(p->sys.ctx, &p->attr[k], tid, p->sig);
		if (r < 0) {
			for (int j = 0; j < k; j++)
				close_event(p, t, j);
			if (p->precise)
				return r; /* LP_E*, message set */
			return lp_seterr(LP_EIO, "perf_event_open on thread %d: %s", (int)tid, strerror(-r));
		}
		t->fd[k] = r;
		if (p->precise && p->sys.map && (r = p->sys.map(p->sys.ctx, t->fd[k], &t->ring[k])) < 0) {
			for (int j = 0; j <= k; j++)
				close_event(p, t, j);
			return r;
		}
	}
	p->n++;
	/* One more pair shares the distance: every period shrinks. */
	return p->armed ? rearm(p) : 0;
}

static void pmu_detach(struct lp_pmu_counter *c, pid_t tid)
{
	struct pmu_counter *p = (struct pmu_counter *)c;
	struct pmu_thread *t = find_thread(p, tid);

	if (!t)
		return;
	/* An exited thread's events keep their final count. */
	p->dead += time_of(p, t);
	for (int k = 0; k < 2; k++)
		close_event(p, t, k);
	*t = p->t[--p->n];
}

static void pmu_retired(struct lp_pmu_counter *c, pid_t tid, unsigned refs, uint64_t pc, uint64_t writes,
			const uint64_t *addrs)
{
	/* The hardware counts by itself; a step is compensated through note(). */
}

static int pmu_owns(struct lp_pmu_counter *c, const siginfo_t *si)
{
	struct pmu_counter *p = (struct pmu_counter *)c;

	for (int i = 0; i < p->n; i++)
		if (lp_pmu_is_overflow(si, p->sig, p->t[i].fd, 2))
			return 1;
	return 0;
}

static int pmu_pending(struct lp_pmu_counter *c, pid_t tid, const siginfo_t *si)
{
	struct pmu_counter *p = (struct pmu_counter *)c;

	if (si && !pmu_owns(c, si))
		return -1;
	if (p->precise) {
		struct pmu_thread *t = find_thread(p, tid);

		if (t)
			drain(p, t, si ? si->si_fd : -1);
	}
	if (!p->armed)
		return 0; /* a notification queued before the point was reached */
	if (pmu_time(c) >= p->at) {
		reached(p);
		return 1;
	}
	if (si)
		rearm(p); /* early (§3.3.2.1), or the first of several rounds */
	return 0;
}

static void pmu_note(struct lp_pmu_counter *c, pid_t tid, enum lp_pmu_note what)
{
	struct pmu_thread *t = find_thread((struct pmu_counter *)c, tid);

	if (t)
		t->notes[what]++;
}

static int pmu_status(struct lp_pmu_counter *c)
{
	return ((struct pmu_counter *)c)->err;
}

static int pmu_precise(struct lp_pmu_counter *c, pid_t tid, struct lp_pmu_precise *out)
{
	struct pmu_thread *t = find_thread((struct pmu_counter *)c, tid);

	if (!t || !t->have_rec)
		return 0;
	*out = t->rec;
	t->have_rec = 0;
	return 1;
}

static void pmu_destroy(struct lp_pmu_counter *c)
{
	struct pmu_counter *p = (struct pmu_counter *)c;

	if (!p)
		return;
	for (int i = 0; i < p->n; i++)
		for (int k = 0; k < 2; k++)
			close_event(p, &p->t[i], k);
	free(p);
}

int lp_pmu_counter_pmu_new(const struct lp_pmu_counter_config *cfg, const struct lp_pmu_sys *sys,
			   const struct perf_event_attr attr[2], struct lp_pmu_counter **out)
{
	struct pmu_counter *p;
	const char *rates = cfg->compensate ? cfg->compensate : getenv("LOCPROF_PMU_COMPENSATE");
	int err;

	*out = NULL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return lp_seterr(LP_ENOMEM, "out of memory");
	if ((err = lp_pmu_parse_rates(rates, p->rate)) < 0) {
		free(p);
		return err;
	}
	p->base.ops = &lp_pmu_counter_pmu;
	p->base.precise_ip = -1;
	p->precise = cfg->precise;
	p->min_level = 1;
	p->unit = 1;
	p->sys = *sys;
	p->sig = cfg->overflow_signal ? cfg->overflow_signal : SIGRTMIN + 3;
	for (int k = 0; k < 2; k++) {
		p->attr[k] = attr[k];
		lp_pmu_attr_init(&p->attr[k]);
	}
	*out = &p->base;
	return 0;
}

/* Is a PMU there at all? The plainest hardware event tells. */
static int probe_pmu(void)
{
	struct perf_event_attr a;
	long fd;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_HARDWARE;
	a.config = PERF_COUNT_HW_INSTRUCTIONS;
	a.disabled = 1;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	fd = syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return lp_seterr(LP_EUNSUPPORTED, "no hardware performance counters (perf_event_open: %s)",
				 strerror(errno));
	close((int)fd);
	return 0;
}

static int pmu_create(const struct lp_pmu_counter_config *cfg, struct lp_pmu_counter **out)
{
	struct perf_event_attr attr[2];
	int err;

	*out = NULL;
	if ((err = probe_pmu()) < 0 || (err = lp_pmu_encode_events(attr, NULL)) < 0)
		return err;
	return lp_pmu_counter_pmu_new(cfg, &real_sys, attr, out);
}

/* A stand-in for tests on machines without a PMU: the same source over
 * the same kernel interface (perf_event_open, the overflow signal, the
 * ioctls, ptrace interception), with the task's software clock in
 * milliseconds instead of its loads and stores. Its "references" are
 * milliseconds, so its samples mean nothing; it exists so that the
 * free-running half of the engine runs somewhere. */
static int pmu_sw_create(const struct lp_pmu_counter_config *cfg, struct lp_pmu_counter **out)
{
	struct perf_event_attr attr[2];

	struct lp_pmu_counter_config c = *cfg;
	int err;

	memset(attr, 0, sizeof(attr));
	for (int k = 0; k < 2; k++) {
		attr[k].type = PERF_TYPE_SOFTWARE;
		attr[k].config = PERF_COUNT_SW_TASK_CLOCK;
	}
	c.compensate = "0,0,0,0";
	if ((err = lp_pmu_counter_pmu_new(&c, &real_sys, attr, out)) < 0)
		return err;
	(*out)->ops = &lp_pmu_counter_pmu_sw;
	/* Ticks of 1 ms: a single-step (tens of microseconds of task time)
	 * rarely moves the clock, so the engine finds sample points at
	 * memory instructions and the watchpoint paths run too. */
	((struct pmu_counter *)*out)->unit = 1000000;
	/* Its "precise" pc is where the timer interrupted the thread (any
	 * instruction, often not a memory one): precise_ip 0 is accepted. */
	((struct pmu_counter *)*out)->min_level = 0;
	return 0;
}

/* The two sources differ only in how their counters are created. */
#define PMU_COUNTER_OPS(NAME, CREATE)        \
	{                                     \
		.name = NAME,                 \
		.stepping = 0,                \
		.create = CREATE,             \
		.destroy = pmu_destroy,       \
		.attach = pmu_attach,         \
		.detach = pmu_detach,         \
		.arm = pmu_arm,               \
		.time = pmu_time,             \
		.thread_time = pmu_thread_time, \
		.retired = pmu_retired,       \
		.pending = pmu_pending,       \
		.owns = pmu_owns,             \
		.note = pmu_note,             \
		.status = pmu_status,         \
		.precise = pmu_precise,       \
	}

const struct lp_pmu_counter_ops lp_pmu_counter_pmu_sw = PMU_COUNTER_OPS("pmu-sw", pmu_sw_create);
const struct lp_pmu_counter_ops lp_pmu_counter_pmu = PMU_COUNTER_OPS("pmu", pmu_create);
