/* The recorder's in-process entry (locprof/recorder.h, "backends inside
 * locprof"; src/lib/collect/collect-direct.c): images handed over by calls
 * give the outputs the collector gives, read back with the library's own
 * readers: names, metadata, samples and reuse distances, per-thread
 * counts, mappings (new ones only), dangling samples, traces held until
 * the image ends. */
#include "lp-test.h"

#include <locprof/profile.h>
#include <locprof/recorder.h>
#include <locprof/trace.h>

#define MAPS_TEXT                                                                                 \
	"00400000-00401000 r--p 00000000 08:01 11 /bin/prog\n"                                    \
	"00401000-00480000 r-xp 00001000 08:01 11 /bin/prog\n"                                    \
	"7f0000000000-7f0000001000 rw-p 00000000 00:00 0 \n"
#define MAPS_MORE MAPS_TEXT "7f1000000000-7f1000100000 r-xp 00002000 08:01 12 /lib/libc.so.6\n"

static struct lp_record_options options(const char *out, enum lp_record_mode mode)
{
	struct lp_record_options o = { .mode = mode, .rate = 0.5, .nlines = 2, .seed = 7, .output = out };

	o.line_size[0] = 64;
	o.line_size[1] = 128;
	return o;
}

static struct lp_record_image image(uint32_t pid)
{
	static const char cmd[] = "prog\0-n\0003";
	struct lp_record_image img = { .pid = pid, .ppid = 1, .cmdline = cmd, .cmdline_len = sizeof(cmd) - 1,
				       .start_ns = 1700000000ull * 1000000000ull, .source = "pmu" };
	return img;
}

static void test_samples(void **state)
{
	char *out = lp_test_path("direct.lpp"), *child = lp_test_path("direct.99.lpp");
	struct lp_record_options o = options(out, LP_RECORD_SAMPLE);
	struct lp_recorder *r;
	struct lp_record_image img = image(42);
	const struct lp_record_sample s[] = {
		{ .begin = 10, .end = 15, .pc = 0x401000, .addr = 0x1000, .reuse_pc = 0x401010, .thread = 0,
		  .size = 8, .kind = LP_REF_READ, .line_index = 0 },
		{ .begin = 3, .end = LP_RECORD_DANGLING, .pc = 0x401004, .addr = 0x2000, .thread = 1,
		  .size = 4, .kind = LP_REF_WRITE, .line_index = 1 },
	};
	const uint64_t trefs[2] = { 60, 40 };
	const struct lp_record_image_end end = { .references = 100, .threads = 2, .thread_refs = trefs,
						 .status = 3 };
	const struct lp_record_output *outs;
	struct lp_profile *p;
	uint32_t id, id2;

	(void)state;
	assert_int_equal(lp_recorder_new_direct(&r, &o), 0);
	assert_int_equal(lp_recorder_mode(r), LP_RECORD_SAMPLE);
	assert_int_equal(lp_recorder_image_begin(r, &img, &id), 0);
	assert_int_equal(id, 0);
	img.pid = 99;
	assert_int_equal(lp_recorder_image_begin(r, &img, &id2), 0);
	assert_int_equal(id2, 1);
	assert_int_equal(lp_recorder_image_maps(r, id, MAPS_TEXT, strlen(MAPS_TEXT)), 0);
	/* a later snapshot adds only what is new */
	assert_int_equal(lp_recorder_image_maps(r, id, MAPS_MORE, strlen(MAPS_MORE)), 0);
	assert_int_equal(lp_recorder_image_samples(r, id, s, 2), 0);
	assert_int_equal(lp_recorder_image_end(r, id, &end), 0);
	assert_int_equal(lp_recorder_image_end(r, id2, &end), 0);
	assert_int_equal(lp_recorder_image_samples(r, 5, s, 1), LP_EINVAL);

	assert_int_equal(lp_recorder_outputs(r, &outs), 2);
	assert_string_equal(outs[0].path, out);
	assert_string_equal(outs[1].path, child);
	assert_int_equal(outs[0].samples, 2);
	assert_int_equal(outs[0].dangling, 1);
	assert_int_equal(outs[0].references, 100);
	assert_int_equal(outs[0].threads, 2);
	assert_int_equal(outs[0].status, 3);
	assert_true(outs[0].ended);
	assert_int_equal(outs[0].error, 0);
	lp_recorder_free(r);

	assert_int_equal(lp_profile_read(&p, out), 0);
	assert_string_equal(p->source, "pmu");
	assert_string_equal(p->command, "prog -n 3");
	assert_int_equal(p->date, 1700000000);
	assert_int_equal(p->window, 0);
	assert_int_equal(p->n_line_sizes, 2);
	assert_int_equal(p->line_sizes[1], 128);
	assert_int_equal(p->seed, 7);
	assert_int_equal(p->references, 100);
	assert_int_equal(p->n_threads, 2);
	assert_int_equal(p->thread_refs[0], 60);
	assert_int_equal(p->thread_refs[1], 40);
	assert_int_equal(p->mappings.n, 2);
	assert_string_equal(p->mappings.v[0].path, "/bin/prog");
	assert_string_equal(p->mappings.v[1].path, "/lib/libc.so.6");
	assert_int_equal(p->n_samples, 2);
	for (size_t i = 0; i < p->n_samples; i++) {
		const struct lp_sample *x = &p->samples[i];

		if (x->line_idx == 0) {
			assert_int_equal(x->time, 10);
			assert_int_equal(x->reuse, 4); /* end - begin - 1 */
			assert_int_equal(x->reuse_pc, 0x401010);
			assert_int_equal(x->kind, LP_REF_READ);
		} else {
			assert_int_equal(x->time, 3);
			assert_true(x->reuse == LP_REUSE_DANGLING);
			assert_int_equal(x->tid, 1);
		}
	}
	lp_profile_free(p);
	assert_int_equal(lp_profile_read(&p, child), 0);
	assert_int_equal(p->n_samples, 0);
	lp_profile_free(p);
	unlink(out);
	unlink(child);
	free(out);
	free(child);
}

static void test_trace_held_until_end(void **state)
{
	char *out = lp_test_path("direct.lpt");
	struct lp_record_options o = options(out, LP_RECORD_TRACE);
	struct lp_recorder *r;
	struct lp_record_image img = image(42);
	const struct lp_record_image_end end = { .references = 3, .threads = 1,
						 .thread_refs = (const uint64_t[]){ 3 } };
	struct lp_ref refs[3] = { { 0x1000, 0x401000, 8, 0, LP_REF_READ },
				  { 0x1008, 0x401004, 8, 0, LP_REF_WRITE },
				  { 0x2000, 0x401008, 4, 0, LP_REF_READ } };
	struct lp_ref back[8];
	struct lp_trace_reader *tr;
	uint32_t id;

	(void)state;
	o.rate = 0;
	assert_int_equal(lp_recorder_new_direct(&r, &o), 0);
	assert_int_equal(lp_recorder_image_begin(r, &img, &id), 0);
	assert_int_equal(lp_recorder_image_refs(r, id, refs, 2), 0);
	/* mappings that come after the first references still reach the
	 * trace's header: the references are held until the end */
	assert_int_equal(lp_recorder_image_maps(r, id, MAPS_MORE, strlen(MAPS_MORE)), 0);
	assert_int_equal(lp_recorder_image_refs(r, id, refs + 2, 1), 0);
	assert_int_equal(access(out, F_OK), -1);
	assert_int_equal(lp_recorder_image_end(r, id, &end), 0);
	lp_recorder_free(r);

	assert_int_equal(lp_trace_reader_open(&tr, out, NULL), 0);
	assert_int_equal(lp_trace_read(tr, back, 8), 3);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(back[i].addr, refs[i].addr);
		assert_int_equal(back[i].pc, refs[i].pc);
		assert_int_equal(back[i].kind, refs[i].kind);
	}
	assert_non_null(lp_trace_reader_mappings(tr));
	assert_int_equal(lp_trace_reader_mappings(tr)->n, 2);
	lp_trace_reader_free(tr);
	unlink(out);
	free(out);
}

/* An image that never ended (the engine stopped) leaves no file. */
static void test_unended_image_dropped(void **state)
{
	char *out = lp_test_path("unended.lpp");
	struct lp_record_options o = options(out, LP_RECORD_SAMPLE);
	struct lp_recorder *r;
	struct lp_record_image img = image(42);
	uint32_t id;

	(void)state;
	assert_int_equal(lp_recorder_new_direct(&r, &o), 0);
	assert_int_equal(lp_recorder_image_begin(r, &img, &id), 0);
	lp_recorder_free(r);
	assert_int_equal(access(out, F_OK), -1);
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_samples),
		cmocka_unit_test(test_trace_held_until_end),
		cmocka_unit_test(test_unended_image_dropped),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
