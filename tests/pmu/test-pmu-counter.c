/* Unit tests of the hardware counter source without a PMU: the attributes
 * it builds, libpfm4's encoding of the host's events, the period
 * arithmetic, the compensation and its rates, the recognition of overflow
 * signals, and the whole arm/overflow/re-arm protocol against a simulated
 * PMU (threads retiring loads and stores, events overflowing after their
 * period and reloading it, notifications arriving after a skid). */
#include "lp-test.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>

#include <locprof/common.h>

#include "common/rng.h"
#include "counter-pmu.h"

/* ---- pure parts --------------------------------------------------------- */

static void test_attr(void **state)
{
	struct perf_event_attr a;

	memset(&a, 0xff, sizeof(a)); /* whatever the encoder left */
	a.type = PERF_TYPE_RAW;
	a.config = 0x81d0;
	lp_pmu_attr_init(&a);
	assert_int_equal(a.type, PERF_TYPE_RAW);  /* the encoding is kept */
	assert_int_equal(a.config, 0x81d0);
	assert_int_equal(a.size, sizeof(a));
	assert_int_equal(a.exclude_kernel, 1);
	assert_int_equal(a.exclude_hv, 1);
	assert_int_equal(a.exclude_user, 0);
	assert_int_equal(a.pinned, 1);
	assert_int_equal(a.inherit, 0);
	assert_int_equal(a.freq, 0);
	assert_int_equal(a.precise_ip, 0);
	assert_int_equal(a.disabled, 1);
	assert_int_equal(a.sample_period, LP_PMU_PERIOD_NEVER);
	assert_true(a.sample_period < (1ULL << 63));
	assert_int_equal(a.read_format, PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING);
}

static void test_encode(void **state)
{
	struct perf_event_attr a[2];
	const char *const *names = NULL;

	/* libpfm4 identifies the CPU from CPUID: no PMU access needed. */
	if (lp_pmu_encode_events(a, &names) < 0) {
		print_message("libpfm4 knows no load/store events for this CPU (%s): skipped\n", lp_errmsg());
		skip();
	}
	assert_non_null(names);
	for (int k = 0; k < 2; k++) {
		assert_true(a[k].type == PERF_TYPE_RAW || a[k].type == PERF_TYPE_HARDWARE || a[k].type > PERF_TYPE_MAX);
		assert_true(a[k].config != 0);
		assert_int_equal(a[k].exclude_kernel, 1); /* PFM_PLM3: user only */
	}
	assert_true(a[0].config != a[1].config);
	print_message("events: %s (%#llx), %s (%#llx)\n", names[0], (unsigned long long)a[0].config, names[1],
		      (unsigned long long)a[1].config);
}

static void test_period(void **state)
{
	/* Far: the distance split over the events, rounded down. */
	assert_int_equal(lp_pmu_event_period(0, 1000, 2), 500);
	assert_int_equal(lp_pmu_event_period(100, 1100, 8), 125);
	assert_int_equal(lp_pmu_event_period(0, 1001, 2), 500);
	/* Near, at, or past the point: one event. */
	assert_int_equal(lp_pmu_event_period(0, 3, 8), 1);
	assert_int_equal(lp_pmu_event_period(50, 50, 2), 1);
	assert_int_equal(lp_pmu_event_period(60, 50, 2), 1);
	assert_int_equal(lp_pmu_event_period(0, 50, 0), LP_PMU_PERIOD_NEVER);
	/* The invariant, exhaustively on small values: n events each below
	 * the period cannot reach the point. */
	for (uint64_t d = 1; d < 200; d++)
		for (unsigned n = 1; n < 20; n++) {
			uint64_t p = lp_pmu_event_period(1000, 1000 + d, n);

			assert_true(p >= 1);
			if (d >= n)
				assert_true(n * (p - 1) < d);
			else
				assert_int_equal(p, 1);
		}
}

static void test_compensation(void **state)
{
	uint64_t notes[LP_PMU_NOTE_COUNT] = { 10, 3, 2, 1 };
	double rate[LP_PMU_NOTE_COUNT];

	assert_int_equal(lp_pmu_parse_rates(NULL, rate), 0);
	assert_true(rate[0] == 1.0 && rate[3] == 1.0);
	assert_int_equal(lp_pmu_compensated(1000, notes, rate), 1000 - 16);
	assert_int_equal(lp_pmu_parse_rates("1,2,0.5,0", rate), 0);
	assert_true(rate[1] == 2.0 && rate[2] == 0.5 && rate[3] == 0.0);
	assert_int_equal(lp_pmu_compensated(1000, notes, rate), 1000 - (10 + 6 + 1 + 0));
	/* Never below zero. */
	assert_int_equal(lp_pmu_compensated(5, notes, rate), 0);
	/* Rounded to the nearest count. */
	assert_int_equal(lp_pmu_parse_rates("0.4,0,0,0", rate), 0);
	assert_int_equal(lp_pmu_compensated(100, notes, rate), 96);
	/* Bad input is refused and leaves the defaults. */
	assert_int_equal(lp_pmu_parse_rates("1,2,3", rate), LP_EINVAL);
	assert_int_equal(lp_pmu_parse_rates("1,2,3,4,5", rate), LP_EINVAL);
	assert_int_equal(lp_pmu_parse_rates("1,-2,3,4", rate), LP_EINVAL);
	assert_int_equal(lp_pmu_parse_rates("a,b,c,d", rate), LP_EINVAL);
	assert_true(rate[0] == 1.0 && rate[1] == 1.0);
}

static void test_is_overflow(void **state)
{
	int fds[2] = { 7, 9 };
	siginfo_t si;

	memset(&si, 0, sizeof(si));
	si.si_signo = SIGRTMIN + 3;
	si.si_code = POLL_IN;
	si.si_fd = 9;
	assert_true(lp_pmu_is_overflow(&si, SIGRTMIN + 3, fds, 2));
	si.si_code = POLL_HUP;
	assert_true(lp_pmu_is_overflow(&si, SIGRTMIN + 3, fds, 2));
	si.si_fd = 8; /* another fd */
	assert_false(lp_pmu_is_overflow(&si, SIGRTMIN + 3, fds, 2));
	si.si_fd = 9;
	si.si_code = SI_TKILL; /* the target sending itself the same signal */
	assert_false(lp_pmu_is_overflow(&si, SIGRTMIN + 3, fds, 2));
	si.si_code = POLL_IN;
	assert_false(lp_pmu_is_overflow(&si, SIGRTMIN + 4, fds, 2));
	assert_false(lp_pmu_is_overflow(NULL, SIGRTMIN + 3, fds, 2));
}

/* ---- a simulated PMU ------------------------------------------------------ */

#define SIM_EVENTS 64
#define SIM_QUEUE 256

struct sim_event {
	int open;
	pid_t tid;
	uint64_t count, period, left;
};

struct sim_note {
	int fd;
	pid_t tid;
	uint64_t due; /* delivered once the thread has made this many more references */
};

struct sim {
	struct sim_event ev[SIM_EVENTS];
	struct sim_note q[SIM_QUEUE];
	int nq;
	int sets, fail_read;
};

static int sim_open(void *ctx, const struct perf_event_attr *a, pid_t tid, int sig)
{
	struct sim *s = ctx;

	assert_int_equal(a->pinned, 1);
	for (int i = 0; i < SIM_EVENTS; i++)
		if (!s->ev[i].open) {
			s->ev[i] = (struct sim_event){ 1, tid, 0, a->sample_period, a->sample_period };
			return 100 + i;
		}
	return -EMFILE;
}

static int sim_set_period(void *ctx, int fd, uint64_t period)
{
	struct sim *s = ctx;

	s->sets++;
	/* Since Linux 3.14: effective at once, from the current count. */
	s->ev[fd - 100].period = s->ev[fd - 100].left = period;
	return 0;
}

static int sim_read(void *ctx, int fd, uint64_t *count)
{
	struct sim *s = ctx;

	if (s->fail_read)
		return -EIO;
	*count = s->ev[fd - 100].count;
	return 0;
}

static void sim_close(void *ctx, int fd)
{
	((struct sim *)ctx)->ev[fd - 100].open = 0;
}

/* Thread tid retires one load (kind 0) or store (kind 1): its event
 * counts it, overflows at the end of its period (then reloads it) and
 * queues a notification that arrives after skid more references. */
static void sim_ref(struct sim *s, pid_t tid, int kind, uint64_t skid)
{
	int seen = 0;

	for (int i = 0; i < SIM_EVENTS; i++) {
		struct sim_event *v = &s->ev[i];

		if (!v->open || v->tid != tid || seen++ != kind)
			continue;
		v->count++;
		if (--v->left == 0) {
			v->left = v->period;
			assert_true(s->nq < SIM_QUEUE);
			s->q[s->nq++] = (struct sim_note){ 100 + i, tid, skid };
		}
		return;
	}
}

static const struct lp_pmu_sys sim_sys = { sim_open, sim_set_period, sim_read, sim_close, NULL, NULL };

static struct lp_pmu_counter *sim_counter(struct sim *s)
{
	struct lp_pmu_sys sys = sim_sys;
	struct lp_pmu_counter_config cfg = { .overflow_signal = SIGRTMIN + 3, .compensate = "1,1,1,1" };
	struct perf_event_attr attr[2];
	struct lp_pmu_counter *c;

	memset(s, 0, sizeof(*s));
	memset(attr, 0, sizeof(attr));
	attr[0].type = attr[1].type = PERF_TYPE_RAW;
	attr[0].config = 1;
	attr[1].config = 2;
	sys.ctx = s;
	assert_int_equal(lp_pmu_counter_pmu_new(&cfg, &sys, attr, &c), 0);
	return c;
}

/* Run nthreads threads in random order until the counter says the armed
 * point is reached; returns the true clock then and counts notifications.
 * Notifications of one thread arrive after it made `skid` more references
 * (0: at once); the others keep running meanwhile, as on real hardware. */
static uint64_t sim_run(struct sim *s, struct lp_pmu_counter *c, struct lp_rng *rng, int nthreads, uint64_t *clock,
			uint64_t skid, int *notes)
{
	for (;;) {
		pid_t tid = 1000 + (pid_t)lp_rng_below(rng, (uint64_t)nthreads);

		sim_ref(s, tid, (int)lp_rng_below(rng, 2), skid);
		++*clock;
		for (int i = 0; i < s->nq; i++) {
			siginfo_t si;
			int r;

			if (s->q[i].tid != tid)
				continue;
			if (s->q[i].due) {
				s->q[i].due--;
				continue;
			}
			memset(&si, 0, sizeof(si));
			si.si_signo = SIGRTMIN + 3;
			si.si_code = POLL_IN;
			si.si_fd = s->q[i].fd;
			s->q[i--] = s->q[--s->nq];
			++*notes;
			assert_int_equal(c->ops->time(c), *clock); /* exact without notes */
			r = c->ops->pending(c, tid, &si);
			assert_true(r == 0 || r == 1);
			if (r == 1)
				return *clock;
		}
	}
}

static void test_protocol(void **state)
{
	struct sim s;
	struct lp_rng rng;

	lp_rng_seed(&rng, 42);
	for (int nthreads = 1; nthreads <= 4; nthreads++) {
		for (uint64_t skid = 0; skid <= 6; skid += 3) {
			struct lp_pmu_counter *c = sim_counter(&s);
			uint64_t clock = 0;

			for (int t = 0; t < nthreads; t++)
				assert_int_equal(c->ops->attach(c, 1000 + t), 0);
			for (int round = 0; round < 100; round++) {
				uint64_t d = 1 + lp_rng_below(&rng, round % 2 ? 50 : 100000);
				uint64_t at = clock + d, got;
				int notes = 0, bound;

				assert_int_equal(c->ops->arm(c, at), 0);
				got = sim_run(&s, c, &rng, nthreads, &clock, skid, &notes);
				/* Never reported before the point. */
				assert_true(got >= at);
				/* One thread: late only by its own skid (a notification
				 * arrives at most `skid` references after an overflow
				 * that came no later than the point). */
				if (nthreads == 1)
					assert_true(got <= at + skid);
				/* Delivered at once: exactly at the point, however
				 * many threads share the distance. */
				if (!skid)
					assert_true(got == at);
				/* O(n log d) notifications: the distance shrinks by a
				 * factor (1 - 1/n) or more per round. */
				bound = 2 * nthreads * (int)(1 + log2((double)d + 1)) * 3 + 2 * nthreads + 4;
				assert_true(notes <= bound);
				/* Reached: no more overflows (stale notifications
				 * queued before are dropped by pending: not armed). */
				s.nq = 0;
				for (int k = 0; k < 1000; k++) {
					sim_ref(&s, 1000 + k % nthreads, k & 1, 0);
					clock++;
				}
				assert_int_equal(s.nq, 0);
			}
			/* A queued notification once reached is ours but ignored. */
			{
				siginfo_t si;

				memset(&si, 0, sizeof(si));
				si.si_signo = SIGRTMIN + 3;
				si.si_code = POLL_IN;
				si.si_fd = 100;
				assert_true(c->ops->owns(c, &si));
				assert_int_equal(c->ops->pending(c, 1000, &si), 0);
				si.si_fd = 99;
				assert_false(c->ops->owns(c, &si));
				assert_int_equal(c->ops->pending(c, 1000, &si), -1);
			}
			c->ops->destroy(c);
		}
	}
}

static void test_threads_and_notes(void **state)
{
	struct sim s;
	struct lp_pmu_counter *c = sim_counter(&s);

	assert_int_equal(c->ops->attach(c, 1), 0);
	assert_int_equal(c->ops->attach(c, 2), 0);
	for (int i = 0; i < 100; i++)
		sim_ref(&s, 1, i & 1, 0);
	for (int i = 0; i < 40; i++)
		sim_ref(&s, 2, 0, 0);
	assert_int_equal(c->ops->time(c), 140);
	assert_int_equal(c->ops->thread_time(c, 1), 100);
	assert_int_equal(c->ops->thread_time(c, 2), 40);
	/* The tracer's steps and faults on thread 1 are subtracted there. */
	c->ops->note(c, 1, LP_PMU_NOTE_STEP);
	c->ops->note(c, 1, LP_PMU_NOTE_FAULT);
	assert_int_equal(c->ops->thread_time(c, 1), 98);
	assert_int_equal(c->ops->thread_time(c, 2), 40);
	assert_int_equal(c->ops->time(c), 138);
	/* A thread that goes keeps its count in the clock. */
	c->ops->detach(c, 2);
	assert_int_equal(c->ops->time(c), 138);
	assert_int_equal(c->ops->thread_time(c, 2), 0);
	/* Attaching while armed re-arms with the new share. */
	assert_int_equal(c->ops->arm(c, 138 + 1000), 0);
	assert_int_equal(s.ev[0].period, 500);
	assert_int_equal(c->ops->attach(c, 3), 0);
	assert_int_equal(s.ev[0].period, 250);
	/* A counter that cannot be read is an error, never a count of 0. */
	assert_int_equal(c->ops->status(c), 0);
	s.fail_read = 1;
	c->ops->time(c);
	assert_int_equal(c->ops->status(c), LP_EIO);
	c->ops->destroy(c);
}

static void test_no_pmu(void **state)
{
	struct lp_pmu_counter_config cfg = { 0 };
	struct lp_pmu_counter *c = NULL;
	int fd = open("/proc/sys/kernel/perf_event_paranoid", O_RDONLY);
	int err;

	if (fd >= 0)
		close(fd);
	err = lp_pmu_counter_pmu.create(&cfg, &c);
	if (err == 0) {
		print_message("this machine has a PMU: the no-PMU message is not tested\n");
		c->ops->destroy(c);
		skip();
	}
	assert_int_equal(err, LP_EUNSUPPORTED);
	assert_null(c);
	assert_non_null(strstr(lp_errmsg(), "no hardware performance counters"));
	assert_null(strchr(lp_errmsg(), '\n'));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_attr),
		cmocka_unit_test(test_encode),
		cmocka_unit_test(test_period),
		cmocka_unit_test(test_compensation),
		cmocka_unit_test(test_is_overflow),
		cmocka_unit_test(test_protocol),
		cmocka_unit_test(test_threads_and_notes),
		cmocka_unit_test(test_no_pmu),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
