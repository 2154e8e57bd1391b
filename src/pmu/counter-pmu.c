/* The hardware counter source: perf_event_open on the retired-load and
 * retired-store events of each target thread (encoded by libpfm4 for the
 * host's PMU), overflow notified as a signal to the target thread, which
 * the supervisor intercepts before the target sees it.
 *
 * perf_event_open(2) details relied on:
 *  - pid = the target tid, cpu = -1: count that thread on any CPU; the
 *    tracer may open it because it may ptrace the thread;
 *  - exclude_kernel/exclude_hv: only the target's own user-mode references;
 *  - the overflow signal: O_ASYNC + F_SETSIG (so si_fd names the counter)
 *    + F_SETOWN_EX(F_OWNER_TID) so it goes to the counted thread, which
 *    stops in signal-delivery-stop where the supervisor swallows it;
 *  - PERF_EVENT_IOC_REFRESH 1: one overflow is notified, then the event
 *    disables itself; we re-arm explicitly with IOC_PERIOD + IOC_RESET +
 *    IOC_REFRESH, so a period change is never "one overflow late" (the
 *    quirk of thesis §3.3.2.1 with IOC_PERIOD on a running event).
 *
 * One clock from two events: no x86 PMU counts loads and stores as one
 * event, so both are armed with half the remaining distance d: the first to
 * overflow proves the sum advanced by at least d/2 and at most d (the other
 * stayed below d/2). Repeating halves the distance until the engine's
 * early point is reached: O(log period) overflows per sample, and the
 * notification is never later than the point plus skid. An early
 * notification (§3.3.2.1) is harmless: the clock is read, not assumed.
 *
 * Compensation (§3.5): the tracer's single-steps, the page faults of
 * page-protection watchpoints, system calls and debug traps add counts
 * that are not references of the program; each kind is subtracted at a
 * per-host rate (LOCPROF_PMU_COMPENSATE="step,fault,syscall,trap", default
 * 1,1,1,1, to be calibrated on the host as docs/pmu.md describes). */
#include "counter.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
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
	uint64_t base; /* counts of threads that exited, kept in the clock */
};

struct pmu_counter {
	struct lp_pmu_counter base;
	struct perf_event_attr attr[2];
	int sig;
	struct pmu_thread t[MAX_THREADS];
	int n;
	uint64_t dead; /* references of exited threads */
	uint64_t at;
	int armed;
	uint64_t notes[LP_PMU_NOTE_COUNT];
	double rate[LP_PMU_NOTE_COUNT];
};

static long lp_perf_event_open(struct perf_event_attr *a, pid_t pid, int cpu, int group, unsigned long flags)
{
	return syscall(SYS_perf_event_open, a, pid, cpu, group, flags);
}

static int probe_pmu(void)
{
	struct perf_event_attr a;
	long fd;

	/* The plainest hardware event: if this fails, no PMU is exposed. */
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_HARDWARE;
	a.config = PERF_COUNT_HW_INSTRUCTIONS;
	a.disabled = 1;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	fd = lp_perf_event_open(&a, 0, -1, -1, 0);
	if (fd < 0)
		return lp_seterr(LP_EUNSUPPORTED,
				 "no hardware performance counters (perf_event_open: %s)", strerror(errno));
	close((int)fd);
	return 0;
}

static int encode(struct pmu_counter *p)
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
			memset(&p->attr[k], 0, sizeof(p->attr[k]));
			arg.attr = &p->attr[k];
			arg.size = sizeof(arg);
			ok = pfm_get_os_event_encoding(event_names[i][k], PFM_PLM3, PFM_OS_PERF_EVENT,
						       &arg) == PFM_SUCCESS;
		}
		if (ok)
			return 0;
	}
	return lp_seterr(LP_EUNSUPPORTED, "no retired load/store events on this PMU (libpfm4 knows "
			 "none of MEM_INST_RETIRED:ALL_LOADS and its equivalents)");
}

static void parse_rates(struct pmu_counter *p)
{
	const char *s = getenv("LOCPROF_PMU_COMPENSATE");

	for (int k = 0; k < LP_PMU_NOTE_COUNT; k++)
		p->rate[k] = 1.0;
	if (s)
		sscanf(s, "%lf,%lf,%lf,%lf", &p->rate[0], &p->rate[1], &p->rate[2], &p->rate[3]);
}

static int pmu_create(const struct lp_pmu_counter_config *cfg, struct lp_pmu_counter **out)
{
	struct pmu_counter *p;
	int err;

	*out = NULL;
	if ((err = probe_pmu()) < 0)
		return err;
	p = calloc(1, sizeof(*p));
	if (!p)
		return lp_seterr(LP_ENOMEM, "out of memory");
	p->base.ops = &lp_pmu_counter_pmu;
	p->sig = cfg->overflow_signal ? cfg->overflow_signal : SIGRTMIN + 3;
	if ((err = encode(p)) < 0) {
		free(p);
		return err;
	}
	for (int k = 0; k < 2; k++) {
		struct perf_event_attr *a = &p->attr[k];

		a->size = sizeof(*a);
		a->disabled = 1;
		a->exclude_kernel = 1;
		a->exclude_hv = 1;
		a->sample_period = 1ULL << 62; /* set for real by arm() */
		a->wakeup_events = 1;
		a->precise_ip = 0; /* skid is compensated by stepping, not PEBS (§3.3.2.2) */
	}
	parse_rates(p);
	*out = &p->base;
	return 0;
}

static void pmu_destroy(struct lp_pmu_counter *c)
{
	struct pmu_counter *p = (struct pmu_counter *)c;

	if (!p)
		return;
	for (int i = 0; i < p->n; i++)
		for (int k = 0; k < 2; k++)
			if (p->t[i].fd[k] >= 0)
				close(p->t[i].fd[k]);
	free(p);
}

static int pmu_attach(struct lp_pmu_counter *c, pid_t tid)
{
	struct pmu_counter *p = (struct pmu_counter *)c;
	struct pmu_thread *t;

	if (p->n == MAX_THREADS)
		return lp_seterr(LP_ELIMIT, "more than %d threads to count", MAX_THREADS);
	t = &p->t[p->n];
	t->tid = tid;
	t->fd[0] = t->fd[1] = -1;
	for (int k = 0; k < 2; k++) {
		struct f_owner_ex own = { F_OWNER_TID, tid };
		long fd = lp_perf_event_open(&p->attr[k], tid, -1, -1, PERF_FLAG_FD_CLOEXEC);

		if (fd < 0)
			goto out_errno;
		t->fd[k] = (int)fd;
		if (fcntl(t->fd[k], F_SETFL, O_ASYNC | O_NONBLOCK) < 0 ||
		    fcntl(t->fd[k], F_SETSIG, p->sig) < 0 ||
		    fcntl(t->fd[k], F_SETOWN_EX, &own) < 0)
			goto out_errno;
	}
	p->n++;
	return p->armed ? c->ops->arm(c, p->at) : 0;
out_errno:
	{
		int err = lp_seterr_errno("perf_event_open on thread %d", (int)tid);

		for (int k = 0; k < 2; k++)
			if (t->fd[k] >= 0)
				close(t->fd[k]);
		return err;
	}
}

static uint64_t read_fd(int fd)
{
	uint64_t v = 0;

	if (fd < 0 || read(fd, &v, sizeof(v)) != sizeof(v))
		return 0;
	return v;
}

static void pmu_detach(struct lp_pmu_counter *c, pid_t tid)
{
	struct pmu_counter *p = (struct pmu_counter *)c;

	for (int i = 0; i < p->n; i++) {
		if (p->t[i].tid != tid)
			continue;
		for (int k = 0; k < 2; k++) {
			p->dead += read_fd(p->t[i].fd[k]);
			close(p->t[i].fd[k]);
		}
		p->t[i] = p->t[--p->n];
		return;
	}
}

static uint64_t pmu_time(struct lp_pmu_counter *c)
{
	struct pmu_counter *p = (struct pmu_counter *)c;
	uint64_t sum = p->dead;
	double comp = 0;

	for (int i = 0; i < p->n; i++)
		sum += read_fd(p->t[i].fd[0]) + read_fd(p->t[i].fd[1]);
	for (int k = 0; k < LP_PMU_NOTE_COUNT; k++)
		comp += p->rate[k] * (double)p->notes[k];
	return comp >= (double)sum ? 0 : sum - (uint64_t)comp;
}

static int pmu_arm(struct lp_pmu_counter *c, uint64_t at)
{
	struct pmu_counter *p = (struct pmu_counter *)c;
	uint64_t now = pmu_time(c), half;

	p->at = at;
	p->armed = 1;
	half = at > now ? (at - now + 1) / 2 : 1;
	for (int i = 0; i < p->n; i++) {
		for (int k = 0; k < 2; k++) {
			int fd = p->t[i].fd[k];

			/* The count itself is never reset: it is the clock. The
			 * period is the distance to the next overflow, from now. */
			if (ioctl(fd, PERF_EVENT_IOC_DISABLE, 0) < 0 ||
			    ioctl(fd, PERF_EVENT_IOC_PERIOD, &half) < 0 ||
			    ioctl(fd, PERF_EVENT_IOC_REFRESH, 1) < 0)
				return lp_seterr_errno("arming the counters of thread %d", (int)p->t[i].tid);
		}
	}
	return 0;
}

static void pmu_retired(struct lp_pmu_counter *c, pid_t tid, unsigned refs)
{
	/* The hardware counts by itself; a step is compensated through note(). */
}

static int pmu_pending(struct lp_pmu_counter *c, pid_t tid, const siginfo_t *si)
{
	struct pmu_counter *p = (struct pmu_counter *)c;
	int ours = 0;

	if (!si || si->si_signo != p->sig)
		return -1;
	for (int i = 0; i < p->n; i++)
		for (int k = 0; k < 2; k++)
			ours |= p->t[i].fd[k] == si->si_fd;
	if (!ours)
		return -1;
	if (!p->armed)
		return 0;
	if (pmu_time(c) >= p->at) {
		p->armed = 0;
		return 1;
	}
	pmu_arm(c, p->at);
	return 0;
}

static void pmu_note(struct lp_pmu_counter *c, pid_t tid, enum lp_pmu_note what)
{
	((struct pmu_counter *)c)->notes[what]++;
}

const struct lp_pmu_counter_ops lp_pmu_counter_pmu = {
	.name = "pmu",
	.stepping = 0,
	.create = pmu_create,
	.destroy = pmu_destroy,
	.attach = pmu_attach,
	.detach = pmu_detach,
	.arm = pmu_arm,
	.time = pmu_time,
	.retired = pmu_retired,
	.pending = pmu_pending,
	.note = pmu_note,
};
