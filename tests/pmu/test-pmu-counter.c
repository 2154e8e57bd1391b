/* Unit tests of the hardware counter source without a PMU: the attributes
 * it builds, libpfm4's encoding of the host's events, the period
 * arithmetic, the compensation and its rates, the recognition of overflow
 * signals, and the whole arm/overflow/re-arm protocol against a simulated
 * PMU (threads retiring loads and stores, events overflowing after their
 * period and reloading it, notifications arriving after a skid). The
 * double trap's parts: the ring-buffer reader on synthetic buffers
 * (wrap-around, lost and throttle records, partial and damaged records),
 * the precise_ip fallback and the record of a notification. */
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

/* ---- the ring buffer (double trap) --------------------------------------- */

#define RSIZE 256

struct fake_ring {
	struct perf_event_mmap_page meta;
	unsigned char data[RSIZE];
	struct lp_pmu_ring r;
	uint64_t head; /* where the next record goes (published with publish) */
};

static void fr_init(struct fake_ring *f, uint64_t start)
{
	memset(f, 0, sizeof(*f));
	f->r.meta = &f->meta;
	f->r.data = f->data;
	f->r.size = RSIZE;
	f->meta.data_head = f->meta.data_tail = f->head = start;
}

/* Write bytes at ring offset off, across the end. */
static void fr_put(struct fake_ring *f, uint64_t off, const void *p, size_t len)
{
	for (size_t i = 0; i < len; i++)
		f->data[(off + i) % RSIZE] = ((const unsigned char *)p)[i];
}

static void fr_record(struct fake_ring *f, uint32_t type, uint16_t misc, const void *body, uint16_t body_len)
{
	struct perf_event_header h = { type, misc, (uint16_t)(sizeof(h) + body_len) };

	fr_put(f, f->head, &h, sizeof(h));
	fr_put(f, f->head + sizeof(h), body, body_len);
	f->head += h.size;
}

static void fr_sample(struct fake_ring *f, uint64_t ip, uint32_t pid, uint32_t tid, uint16_t misc)
{
	unsigned char b[16];

	memcpy(b, &ip, 8);
	memcpy(b + 8, &pid, 4);
	memcpy(b + 12, &tid, 4);
	fr_record(f, PERF_RECORD_SAMPLE, misc, b, 16);
}

static void fr_publish(struct fake_ring *f)
{
	f->meta.data_head = f->head;
}

static void test_ring_samples(void **state)
{
	static struct fake_ring f;
	struct lp_pmu_ring_read rd;

	/* One sample, then two (the newest wins), then none. */
	fr_init(&f, 0);
	fr_sample(&f, 0x401000, 10, 11, 0);
	fr_publish(&f);
	memset(&rd, 0, sizeof(rd));
	assert_int_equal(lp_pmu_ring_drain(&f.r, &rd), 1);
	assert_true(rd.have);
	assert_int_equal(rd.ip, 0x401000);
	assert_int_equal(rd.pid, 10);
	assert_int_equal(rd.tid, 11);
	assert_false(rd.exact);
	assert_int_equal(f.meta.data_tail, f.head); /* the space is given back */
	fr_sample(&f, 0x402000, 10, 11, 0);
	fr_sample(&f, 0x403000, 10, 12, PERF_RECORD_MISC_EXACT_IP | PERF_RECORD_MISC_USER);
	fr_publish(&f);
	memset(&rd, 0, sizeof(rd));
	assert_int_equal(lp_pmu_ring_drain(&f.r, &rd), 2);
	assert_int_equal(rd.ip, 0x403000);
	assert_int_equal(rd.tid, 12);
	assert_true(rd.exact);
	assert_int_equal(rd.exact_samples, 1);
	memset(&rd, 0, sizeof(rd));
	assert_int_equal(lp_pmu_ring_drain(&f.r, &rd), 0);
	assert_false(rd.have);
}

static void test_ring_wrap(void **state)
{
	static struct fake_ring f;
	struct lp_pmu_ring_read rd;

	/* Every start offset near the end: the header, the ip or the tid
	 * is split by the end of the area; positions run far past 2^8 (the
	 * kernel's head and tail only grow). */
	for (uint64_t start = 5 * RSIZE - 40; start < 5 * RSIZE + 8; start += 8) {
		fr_init(&f, start);
		for (int i = 0; i < 3; i++)
			fr_sample(&f, 0xabc000 + (uint64_t)i, 7, 8 + (uint32_t)i, 0);
		fr_publish(&f);
		memset(&rd, 0, sizeof(rd));
		assert_int_equal(lp_pmu_ring_drain(&f.r, &rd), 3);
		assert_int_equal(rd.ip, 0xabc002);
		assert_int_equal(rd.tid, 10);
		assert_int_equal(f.meta.data_tail, start + 3 * 24);
		assert_false(rd.damaged);
	}
	/* A full buffer (head - tail == size) is read whole. */
	fr_init(&f, 3 * RSIZE - 16);
	for (int i = 0; i < RSIZE / 32; i++)
		fr_sample(&f, 0x500000 + (uint64_t)i, 1, 1, 0), fr_record(&f, PERF_RECORD_THROTTLE, 0, "\0\0\0\0\0\0\0\0", 0);
	fr_publish(&f);
	assert_int_equal(f.head - f.meta.data_tail, RSIZE);
	memset(&rd, 0, sizeof(rd));
	assert_int_equal(lp_pmu_ring_drain(&f.r, &rd), RSIZE / 32);
	assert_int_equal(rd.ip, 0x500000 + RSIZE / 32 - 1);
	assert_int_equal(rd.throttled, RSIZE / 32);
}

static void test_ring_lost_throttle(void **state)
{
	static struct fake_ring f;
	struct lp_pmu_ring_read rd;
	uint64_t lost[2] = { 99, 5 }, thr[3] = { 1, 2, 3 }, other = 0;

	fr_init(&f, RSIZE - 8);
	fr_sample(&f, 0x1111, 1, 2, 0);
	fr_record(&f, PERF_RECORD_LOST, 0, lost, sizeof(lost));
	fr_record(&f, PERF_RECORD_THROTTLE, 0, thr, sizeof(thr));
	fr_record(&f, PERF_RECORD_UNTHROTTLE, 0, thr, sizeof(thr));
	fr_record(&f, PERF_RECORD_COMM, 0, &other, sizeof(other));
	fr_record(&f, PERF_RECORD_LOST, 0, lost, sizeof(lost));
	fr_publish(&f);
	memset(&rd, 0, sizeof(rd));
	assert_int_equal(lp_pmu_ring_drain(&f.r, &rd), 1);
	assert_int_equal(rd.ip, 0x1111);
	assert_int_equal(rd.lost, 10);
	assert_int_equal(rd.throttled, 1);
	assert_int_equal(rd.unthrottled, 1);
	assert_int_equal(rd.other, 1);
	assert_false(rd.damaged);
	assert_int_equal(f.meta.data_tail, f.head);
}

static void test_ring_partial_damaged(void **state)
{
	static struct fake_ring f;
	struct lp_pmu_ring_read rd;
	struct perf_event_header h;
	uint64_t start;

	/* Published data that ends inside a record (only its header, or
	 * half its body): nothing is read past the complete records, the
	 * tail stays at the partial one, and it is read once complete. */
	for (unsigned cut = 1; cut < 24; cut++) {
		fr_init(&f, 2 * RSIZE - 12);
		fr_sample(&f, 0x2222, 1, 2, 0);
		start = f.head;
		fr_sample(&f, 0x3333, 1, 2, 0);
		f.meta.data_head = start + cut;
		memset(&rd, 0, sizeof(rd));
		assert_int_equal(lp_pmu_ring_drain(&f.r, &rd), 1);
		assert_int_equal(rd.ip, 0x2222);
		assert_int_equal(f.meta.data_tail, start);
		assert_false(rd.damaged);
		fr_publish(&f);
		memset(&rd, 0, sizeof(rd));
		assert_int_equal(lp_pmu_ring_drain(&f.r, &rd), 1);
		assert_int_equal(rd.ip, 0x3333);
		assert_int_equal(f.meta.data_tail, f.head);
	}
	/* Impossible sizes: 0 (would never advance), below the header, not
	 * a multiple of 8, larger than the buffer: the rest is skipped. */
	const uint16_t bad[] = { 0, 4, 12, RSIZE + 8 };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		fr_init(&f, 40);
		fr_sample(&f, 0x4444, 1, 2, 0);
		h = (struct perf_event_header){ PERF_RECORD_SAMPLE, 0, bad[i] };
		fr_put(&f, f.head, &h, sizeof(h));
		f.head += 64;
		fr_publish(&f);
		memset(&rd, 0, sizeof(rd));
		assert_int_equal(lp_pmu_ring_drain(&f.r, &rd), 1);
		assert_int_equal(rd.ip, 0x4444);
		assert_true(rd.damaged);
		assert_int_equal(f.meta.data_tail, f.head);
	}
	/* A sample record too short for ip and tid. */
	fr_init(&f, 0);
	fr_record(&f, PERF_RECORD_SAMPLE, 0, "\1\2\3\4\5\6\7\10", 8);
	fr_publish(&f);
	memset(&rd, 0, sizeof(rd));
	assert_int_equal(lp_pmu_ring_drain(&f.r, &rd), 0);
	assert_true(rd.damaged);
	/* More published than the buffer holds. */
	fr_init(&f, 0);
	f.meta.data_head = RSIZE + 8;
	memset(&rd, 0, sizeof(rd));
	assert_int_equal(lp_pmu_ring_drain(&f.r, &rd), 0);
	assert_true(rd.damaged);
	assert_int_equal(f.meta.data_tail, RSIZE + 8);
}

/* A PMU that takes precise_ip up to max_level, with one synthetic ring
 * per event. */
struct psim {
	int max_level, opened, last_level;
	struct fake_ring ring[4];
};

static int psim_open(void *ctx, const struct perf_event_attr *a, pid_t tid, int sig)
{
	struct psim *s = ctx;

	assert_int_equal(a->sample_type, PERF_SAMPLE_IP | PERF_SAMPLE_TID);
	assert_int_equal(a->wakeup_events, 1);
	if ((int)a->precise_ip > s->max_level)
		return -EOPNOTSUPP;
	s->last_level = (int)a->precise_ip;
	assert_true(s->opened < 4);
	return 100 + s->opened++;
}

static int psim_map(void *ctx, int fd, struct lp_pmu_ring *r)
{
	struct psim *s = ctx;

	fr_init(&s->ring[fd - 100], 0);
	*r = s->ring[fd - 100].r;
	return 0;
}

static int psim_set_period(void *ctx, int fd, uint64_t period)
{
	return 0;
}

static int psim_read(void *ctx, int fd, uint64_t *count)
{
	*count = 1000;
	return 0;
}

static void psim_close(void *ctx, int fd)
{
}

static void test_precise_levels(void **state)
{
	static struct psim s;
	struct lp_pmu_sys sys = { psim_open, psim_set_period, psim_read, psim_close, &s, psim_map };
	struct lp_pmu_counter_config cfg = { .overflow_signal = SIGRTMIN + 3, .compensate = "0,0,0,0", .precise = 1 };
	struct perf_event_attr attr[2];
	struct lp_pmu_counter *c;
	struct lp_pmu_precise rec;
	siginfo_t si;

	memset(attr, 0, sizeof(attr));
	for (int max = 3; max >= 1; max--) {
		memset(&s, 0, sizeof(s));
		s.max_level = max;
		assert_int_equal(lp_pmu_counter_pmu_new(&cfg, &sys, attr, &c), 0);
		assert_int_equal(c->precise_ip, -1);
		assert_int_equal(c->ops->attach(c, 1000), 0);
		assert_int_equal(c->precise_ip, max); /* the highest the kernel takes */
		assert_int_equal(c->ops->attach(c, 1001), 0);
		assert_int_equal(s.last_level, max);  /* the same for every thread */
		/* The store event of thread 1001 overflows: its record is the
		 * notification's precise pc, kind write. */
		fr_sample(&s.ring[1], 0x4000aa, 1000, 1000, 0); /* loads of 1000: not this thread's */
		fr_publish(&s.ring[1]);
		fr_sample(&s.ring[3], 0x4000bb, 1000, 1001, PERF_RECORD_MISC_EXACT_IP);
		fr_publish(&s.ring[3]);
		assert_int_equal(c->ops->arm(c, 10), 0);
		memset(&si, 0, sizeof(si));
		si.si_signo = SIGRTMIN + 3;
		si.si_code = POLL_IN;
		si.si_fd = 103;
		assert_int_equal(c->ops->pending(c, 1001, &si), 1);
		assert_int_equal(c->ops->precise(c, 1001, &rec), 1);
		assert_int_equal(rec.pc, 0x4000bb);
		assert_int_equal(rec.tid, 1001);
		assert_int_equal(rec.kind, LP_REF_WRITE);
		assert_true(rec.exact);
		assert_int_equal(c->ops->precise(c, 1001, &rec), 0); /* consumed */
		assert_int_equal(c->ring_samples, 1);
		c->ops->destroy(c);
	}
	/* No precise sampling at all (no PEBS, or not Intel): one line that
	 * names the levels tried. */
	memset(&s, 0, sizeof(s));
	s.max_level = 0;
	assert_int_equal(lp_pmu_counter_pmu_new(&cfg, &sys, attr, &c), 0);
	assert_int_equal(c->ops->attach(c, 1000), LP_EUNSUPPORTED);
	assert_non_null(strstr(lp_errmsg(), "no precise sampling (PEBS)"));
	assert_non_null(strstr(lp_errmsg(), "precise_ip 3, 2, 1"));
	assert_null(strchr(lp_errmsg(), '\n'));
	c->ops->destroy(c);
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
		cmocka_unit_test(test_ring_samples),
		cmocka_unit_test(test_ring_wrap),
		cmocka_unit_test(test_ring_lost_throttle),
		cmocka_unit_test(test_ring_partial_damaged),
		cmocka_unit_test(test_precise_levels),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
