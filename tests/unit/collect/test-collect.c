/* The collector through its public and sink interfaces: the .lpp sink fed
 * directly, the choice of sink, /proc/<pid>/maps parsing, and a recorder
 * fed the protocol's messages over its socket as a live backend would. */
#include "lp-test.h"

#include <locprof/profile.h>
#include <locprof/recorder.h>

#include "collect/protocol.h"
#include "collect/sink.h"

#include <sys/socket.h>
#include <sys/un.h>

static const char cmdline[] = "prog\0--arg"; /* NUL-separated argv */

static void test_sink_lpp(void **state)
{
	char *path = lp_test_path("sink.lpp");
	const struct lp_sample_sink_ops *ops = &lp_sample_sink_lpp;
	struct lp_collect_proc proc = { .pid = 42, .cmdline = cmdline, .cmdline_len = sizeof(cmdline),
					.nlines = 1, .line_size = { 64 }, .rate = 0.5, .seed = 3 };
	struct lp_msg_sample s[4] = {
		{ .begin = 10, .end = 15, .pc = 0x401000, .addr = 0x1000, .reuse_pc = 0x401010, .size = 8 },
		{ .begin = 20, .end = LP_SAMPLE_DANGLING, .pc = 0x401020, .addr = 0x2000, .size = 4,
		  .kind = LP_REF_WRITE },
		{ .begin = 30, .end = 31, .line_index = 3 }, /* no such line size: dropped */
		{ .begin = 40, .end = 40 },                   /* ends before it begins: dropped */
	};
	struct lp_ref ev[2] = {
		{ .addr = 0x1000, .size = 4096, .pc = 0x400100, .kind = LP_EV_ALLOC },
		{ .addr = 0x1000, .size = 8, .kind = LP_REF_READ }, /* not an event: ignored */
	};
	/* 100 references, 20 of them straddling two lines */
	struct lp_collect_summary sum = { .references = 100, .line_accesses = { 120 }, .samples = 2,
					  .dangling = 1, .threads = 1, .ended = 1 };
	struct lp_mappings maps = { 0 };
	struct lp_profile *p = NULL;
	void *st = NULL;

	(void)state;
	assert_int_equal(ops->open(&st, path, &proc), 0);
	assert_int_equal(ops->samples(st, s, 4), 0);
	assert_int_equal(ops->events(st, ev, 2), 0);
	assert_int_equal(ops->alloc_summary(st, LP_MSG_ALLOCS_TOUCHED, 7, 5, 1 << 20), 0);
	assert_int_equal(ops->thread(st, 0, 100), 0);
	assert_int_equal(ops->close(st, &sum, &maps), 0);

	assert_int_equal(lp_profile_read(&p, path), 0);
	assert_string_equal(p->command, "prog --arg");
	assert_string_equal(p->source, "inst");
	assert_int_equal(p->n_line_sizes, 1);
	assert_int_equal(p->line_sizes[0], 64);
	assert_true(p->rate == 0.5);
	assert_int_equal(p->references, 100);
	assert_int_equal(p->accesses[0], 120);
	assert_int_equal(p->n_samples, 2);
	assert_int_equal(p->samples[0].time, 10);
	assert_int_equal(p->samples[0].reuse, 4); /* end - begin - 1 */
	assert_int_equal(p->samples[0].reuse_pc, 0x401010);
	assert_int_equal(p->samples[1].reuse, LP_REUSE_DANGLING);
	assert_int_equal(p->samples[1].kind, LP_REF_WRITE);
	assert_int_equal(p->n_allocs, 1);
	assert_int_equal(p->allocs[0].pc, 0x400100);
	assert_int_equal(p->allocs[0].time, LP_TIME_UNKNOWN);
	assert_true(p->alloc_flags & LP_ALLOCS_TOUCHED);
	assert_true(p->alloc_flags & LP_ALLOCS_TOTALS);
	assert_int_equal(p->alloc_total, 7);
	lp_profile_free(p);

	/* an aborted sink leaves no file */
	free(path);
	path = lp_test_path("aborted.lpp");
	assert_int_equal(ops->open(&st, path, &proc), 0);
	assert_int_equal(ops->samples(st, s, 1), 0);
	ops->abort(st);
	assert_int_not_equal(access(path, F_OK), 0);
	free(path);
}

/* The .lpp sink takes an allocation's call stack from the frame records
 * after it: equal stacks stored once, a 0 ending one, frames past
 * LP_ALLOC_STACK_MAX dropped, records without an allocation before them
 * (a batch that starts with them) ignored, TLS segments kept. */
static void test_sink_lpp_stacks(void **state)
{
	char *path = lp_test_path("stacks.lpp");
	const struct lp_sample_sink_ops *ops = &lp_sample_sink_lpp;
	struct lp_collect_proc proc = { .pid = 42, .cmdline = cmdline, .cmdline_len = sizeof(cmdline),
					.nlines = 1, .line_size = { 64 }, .rate = 0.5, .seed = 3 };
	const uint8_t F = LP_MSG_EV_FRAMES;
	struct lp_ref ev[] = {
		{ .addr = 0x1000, .size = 64, .pc = 0x400100, .kind = LP_EV_ALLOC },
		{ .addr = 0x400200, .pc = 0x400300, .size = 0, .kind = F }, /* two callers, then the end */
		{ .addr = 0x400999, .kind = F },                            /* after the end: ignored */
		{ .addr = 0x2000, .size = 64, .pc = 0x400100, .kind = LP_EV_ALLOC },
		{ .addr = 0x400200, .pc = 0x400300, .kind = F },             /* the same stack */
		{ .addr = 0x1000, .kind = LP_EV_FREE },
		{ .addr = 0x3000, .size = 64, .pc = 0x400500, .kind = LP_EV_ALLOC }, /* no stack */
		{ .addr = 0x4000, .size = 64, .pc = 0x400600, .kind = LP_EV_ALLOC },
		{ .addr = 1, .pc = 2, .size = 3, .kind = F }, { .addr = 4, .pc = 5, .size = 6, .kind = F },
		{ .addr = 7, .pc = 8, .size = 9, .kind = F }, { .addr = 10, .pc = 11, .size = 12, .kind = F },
		{ .addr = 13, .pc = 14, .size = 15, .kind = F }, /* 1 + 15 frames: the last ones dropped */
		{ .addr = 0x7f0000001000, .size = 4096, .pc = 0x401000, .tid = 1, .kind = LP_MSG_EV_TLS },
	};
	struct lp_ref orphan[] = { { .addr = 0x400200, .kind = F } };
	struct lp_collect_summary sum = { .references = 100, .line_accesses = { 100 }, .threads = 1, .ended = 1 };
	struct lp_mappings maps = { 0 };
	const struct lp_alloc_stack *st;
	struct lp_profile *p = NULL;
	void *sink = NULL;

	(void)state;
	assert_int_equal(ops->open(&sink, path, &proc), 0);
	assert_int_equal(ops->events(sink, ev, sizeof(ev) / sizeof(ev[0])), 0);
	assert_int_equal(ops->events(sink, orphan, 1), 0);
	assert_int_equal(ops->close(sink, &sum, &maps), 0);
	assert_int_equal(lp_profile_read(&p, path), 0);
	assert_int_equal(p->n_allocs, 5);
	assert_int_equal(p->n_stacks, 2);
	assert_int_equal(p->allocs[0].stack, 1);
	assert_int_equal(p->allocs[1].stack, 1);
	st = lp_profile_event_stack(p, &p->allocs[0]);
	assert_true(st && st->n == 3 && st->frames[0] == 0x400100 && st->frames[1] == 0x400200 &&
		    st->frames[2] == 0x400300);
	assert_int_equal(p->allocs[2].kind, LP_EV_FREE);
	assert_int_equal(p->allocs[3].stack, 0);
	st = lp_profile_event_stack(p, &p->allocs[4]);
	assert_true(st && st->n == LP_ALLOC_STACK_MAX && st->frames[0] == 0x400600 && st->frames[1] == 1 &&
		    st->frames[LP_ALLOC_STACK_MAX - 1] == LP_ALLOC_STACK_MAX - 1);
	assert_int_equal(p->n_tls, 1);
	assert_true(p->tls[0].start == 0x7f0000001000 && p->tls[0].size == 4096 && p->tls[0].image == 0x401000 &&
		    p->tls[0].tid == 1);
	lp_profile_free(p);
	free(path);
}

static void test_sink_choice_and_maps(void **state)
{
	static const char text[] =
		"00400000-00401000 r--p 00000000 08:01 123 /usr/bin/prog\n"
		"00401000-00402000 r-xp 00001000 08:01 123 /usr/bin/prog\n"
		"7f0000000000-7f0000001000 r-xp 00000000 00:00 0 \n"          /* anonymous */
		"7f0000100000-7f0000180000 r-xp 00002000 08:01 456 /lib/libc.so.6\n"
		"7ffc00000000-7ffc00001000 r-xp 00000000 00:00 0 [vdso]\n";
	struct lp_mappings m = { 0 };

	(void)state;
	assert_ptr_equal(lp_sample_sink_for_path("out.lpp"), &lp_sample_sink_lpp);
	assert_ptr_equal(lp_sample_sink_for_path("dir.lpp/out.txt"), &lp_sample_sink_text);
	assert_ptr_equal(lp_sample_sink_for_path("lpp"), &lp_sample_sink_text);
	assert_int_equal(lp_collect_parse_maps(&m, text, sizeof(text) - 1), 0);
	/* executable and file-backed only */
	assert_int_equal(m.n, 2);
	assert_int_equal(m.v[0].start, 0x401000);
	assert_int_equal(m.v[0].file_offset, 0x1000);
	assert_string_equal(m.v[0].path, "/usr/bin/prog");
	assert_string_equal(m.v[1].path, "/lib/libc.so.6");
	lp_mappings_release(&m);
}

/* ---- a recorder fed over its socket --------------------------------------- */

static void header(struct lp_msg_header *h, uint32_t type, size_t length)
{
	*h = (struct lp_msg_header){ .magic_version = LP_MSG_MAGIC_VERSION, .type = type,
				     .length = (uint32_t)length, .pid = 4242, .tid = 4242 };
}

static void send_all(int fd, const void *buf, size_t n)
{
	assert_int_equal(send(fd, buf, n, 0), (ssize_t)n);
}

static int connect_to(const struct lp_recorder *r)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	const char *path = NULL;
	int fd;

	for (char *const *e = lp_recorder_env(r); *e; e++)
		if (!strncmp(*e, LP_ENV_SOCKET "=", strlen(LP_ENV_SOCKET) + 1))
			path = *e + strlen(LP_ENV_SOCKET) + 1;
	assert_non_null(path);
	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_true(fd >= 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&addr, sizeof(addr)), 0);
	return fd;
}

/* The HELLO of process pid 0 (the test's), thread 0, rate 0.25. */
struct test_hello {
	struct lp_msg_hello m;
	char cmd[sizeof(cmdline)];
};

static struct test_hello test_hello(void)
{
	struct test_hello h = { .m = { .ppid = 1, .nonce = 99, .mode = LP_MODE_SAMPLE, .nlines = 1,
				       .line_size = { 64 }, .rate = 0.25, .seed = 5, .backend = LP_BACKEND_INST,
				       .cmdline_len = sizeof(cmdline) } };

	memcpy(h.cmd, cmdline, sizeof(cmdline));
	header(&h.m.h, LP_MSG_HELLO, sizeof(h));
	return h;
}

/* One thread's whole conversation: HELLO, SAMPLES, ALLOCS, THREAD, BYE. */
static void send_run(int fd)
{
	struct test_hello hello = test_hello();
	struct {
		struct lp_msg_samples m;
		struct lp_msg_sample s[3];
	} samples = { .m = { .count = 3 },
		      .s = { { .begin = 1, .end = 9, .pc = 0x10, .addr = 0x1000, .reuse_pc = 0x11, .size = 8 },
			     { .begin = 2, .end = 4, .pc = 0x20, .addr = 0x1040, .reuse_pc = 0x21, .size = 8 },
			     { .begin = 5, .end = LP_SAMPLE_DANGLING, .pc = 0x30, .addr = 0x2000, .size = 8 } } };
	struct {
		struct lp_msg_refs m;
		struct lp_msg_ref ev[1];
	} allocs = { .m = { .count = 1 }, .ev = { { .addr = 0x1000, .pc = 0x400100, .size = 128,
						     .kind = LP_EV_ALLOC } } };
	struct lp_msg_thread thread = { .thread = 0, .references = 12 };
	struct lp_msg_bye bye = { .status = 3, .how = LP_BYE_EXIT, .references = 12 };

	header(&samples.m.h, LP_MSG_SAMPLES, sizeof(samples));
	header(&allocs.m.h, LP_MSG_ALLOCS, sizeof(allocs));
	header(&thread.h, LP_MSG_THREAD, sizeof(thread));
	header(&bye.h, LP_MSG_BYE, sizeof(bye));
	send_all(fd, &hello, sizeof(hello));
	/* a message split across writes is put back together */
	send_all(fd, &samples, 30);
	send_all(fd, (const char *)&samples + 30, sizeof(samples) - 30);
	send_all(fd, &allocs, sizeof(allocs));
	send_all(fd, &thread, sizeof(thread));
	send_all(fd, &bye, sizeof(bye));
}

/* Poll until a connection came and all are closed. */
static void drain(struct lp_recorder *r)
{
	for (int i = 0; i < 200; i++) {
		int open = lp_recorder_poll(r, 50);
		assert_true(open >= 0);
		if (lp_recorder_connections(r) && !open)
			return;
	}
	fail_msg("the recorder did not see the connection close");
}

static void test_recorder(void **state)
{
	char *path = lp_test_path("rec.lpp");
	struct lp_record_options o = { .mode = LP_RECORD_SAMPLE, .rate = 0.25, .line_size = { 64 },
				       .nlines = 1, .seed = 5, .output = path };
	const struct lp_record_output *out;
	struct lp_recorder *r;
	struct lp_profile *p;
	int fd;

	(void)state;
	assert_int_equal(lp_recorder_new(&r, &o), 0);
	fd = connect_to(r);
	send_run(fd);
	close(fd);
	drain(r);
	assert_int_equal(lp_recorder_finish(r), 0);
	assert_int_equal(lp_recorder_outputs(r, &out), 1);
	assert_string_equal(out[0].path, path);
	assert_int_equal(out[0].pid, 4242);
	assert_int_equal(out[0].ppid, 1);
	assert_int_equal(out[0].samples, 3);
	assert_int_equal(out[0].dangling, 1);
	assert_int_equal(out[0].allocs, 1);
	assert_int_equal(out[0].threads, 1);
	assert_int_equal(out[0].references, 12);
	assert_true(out[0].ended);
	assert_int_equal(out[0].status, 3);
	assert_int_equal(out[0].error, 0);
	lp_recorder_free(r);

	assert_int_equal(lp_profile_read(&p, path), 0);
	assert_string_equal(p->command, "prog --arg");
	assert_int_equal(p->n_samples, 3);
	assert_int_equal(p->references, 12);
	assert_int_equal(p->n_allocs, 1);
	/* sorted by time: the sample at 1 reuses after 7 references */
	assert_int_equal(p->samples[0].time, 1);
	assert_int_equal(p->samples[0].reuse, 7);
	assert_int_equal(p->samples[1].reuse, 1);
	assert_int_equal(p->samples[2].reuse, LP_REUSE_DANGLING);
	lp_profile_free(p);
	free(path);
}

/* A connection that speaks before its HELLO is dropped; the recorder goes
 * on and writes nothing for it. */
static void test_recorder_bad_sender(void **state)
{
	char *path = lp_test_path("bad.lpp");
	struct lp_record_options o = { .mode = LP_RECORD_SAMPLE, .rate = 0.25, .line_size = { 64 },
				       .nlines = 1, .output = path };
	struct lp_msg_bye bye = { .how = LP_BYE_EXIT };
	const struct lp_record_output *out;
	struct lp_recorder *r;
	int fd;

	(void)state;
	assert_int_equal(lp_recorder_new(&r, &o), 0);
	fd = connect_to(r);
	header(&bye.h, LP_MSG_BYE, sizeof(bye));
	send_all(fd, &bye, sizeof(bye));
	close(fd);
	for (int i = 0; i < 20 && !lp_recorder_connections(r); i++)
		lp_recorder_poll(r, 50);
	for (int i = 0; i < 20 && lp_recorder_poll(r, 50) > 0; i++)
		;
	lp_recorder_finish(r);
	assert_int_equal(lp_recorder_outputs(r, &out), 0);
	assert_int_not_equal(access(path, F_OK), 0);
	lp_recorder_free(r);
	free(path);
}

/* A thread whose descriptor the program closed connects again
 * (docs/runtime.md, "The connection"): the second connection's HELLO
 * names the same process and thread, so one output, one thread, its
 * counts going on (12 references, not 10 + 12); the message cut off at
 * the first connection's end is dropped with it. */
static void test_recorder_reconnect(void **state)
{
	char *path = lp_test_path("again.lpp");
	struct lp_record_options o = { .mode = LP_RECORD_SAMPLE, .rate = 0.25, .line_size = { 64 },
				       .nlines = 1, .seed = 5, .output = path };
	struct test_hello hello = test_hello();
	struct {
		struct lp_msg_samples m;
		struct lp_msg_sample s[2];
	} samples = { .m = { .count = 2 },
		      .s = { { .begin = 1, .end = 9, .pc = 0x10, .addr = 0x1000, .size = 8 },
			     { .begin = 5, .end = LP_SAMPLE_DANGLING, .pc = 0x30, .addr = 0x2000, .size = 8 } } };
	struct lp_msg_thread running = { .thread = 0, .references = 10, .running = 1 };
	struct lp_msg_thread final = { .thread = 0, .references = 12 };
	struct lp_msg_bye bye = { .status = 0, .how = LP_BYE_EXIT, .references = 12 };
	const struct lp_record_output *out;
	struct lp_recorder *r;
	int fd;

	(void)state;
	header(&samples.m.h, LP_MSG_SAMPLES, sizeof(samples));
	header(&running.h, LP_MSG_THREAD, sizeof(running));
	header(&final.h, LP_MSG_THREAD, sizeof(final));
	header(&bye.h, LP_MSG_BYE, sizeof(bye));
	assert_int_equal(lp_recorder_new(&r, &o), 0);
	fd = connect_to(r);
	send_all(fd, &hello, sizeof(hello));
	send_all(fd, &running, sizeof(running));
	send_all(fd, &samples, 40); /* cut off: the descriptor went */
	close(fd);
	drain(r);
	fd = connect_to(r);
	send_all(fd, &hello, sizeof(hello));
	send_all(fd, &samples, sizeof(samples));
	send_all(fd, &final, sizeof(final));
	send_all(fd, &bye, sizeof(bye));
	close(fd);
	for (int i = 0; i < 200 && (lp_recorder_connections(r) < 2 || lp_recorder_poll(r, 50) > 0); i++)
		lp_recorder_poll(r, 0);
	assert_int_equal(lp_recorder_finish(r), 0);
	assert_int_equal(lp_recorder_outputs(r, &out), 1);
	assert_int_equal(out[0].threads, 1);
	assert_int_equal(out[0].samples, 2);
	assert_int_equal(out[0].references, 12);
	assert_true(out[0].ended);
	assert_int_equal(out[0].error, 0);
	lp_recorder_free(r);
	free(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sink_lpp),
		cmocka_unit_test(test_sink_lpp_stacks),
		cmocka_unit_test(test_sink_choice_and_maps),
		cmocka_unit_test(test_recorder),
		cmocka_unit_test(test_recorder_bad_sender),
		cmocka_unit_test(test_recorder_reconnect),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
