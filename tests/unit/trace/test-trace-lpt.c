/* Tests of the lpt binary trace format: exact round trips, mappings, and
 * damage (truncation at every offset, random corruption) never crashing
 * and never passing silently. */
#include "lp-test.h"

#include <locprof/trace.h>
#include "common/rng.h"

#include <sys/stat.h>

#define FIELDS_SIZE (offsetof(struct lp_ref, kind) + 1)

/* Read everything; returns the count, *err the final status (0 or < 0). */
static size_t read_all(const char *path, struct lp_ref *buf, size_t cap, int *err)
{
	struct lp_trace_reader *r;
	size_t total = 0;
	ssize_t n = 0;

	*err = lp_trace_reader_open(&r, path, NULL);
	if (*err < 0)
		return 0;
	while ((n = lp_trace_read(r, buf + total, total < cap ? (cap - total > 1000 ? 1000 : cap - total) : 1)) > 0) {
		assert_true(total + (size_t)n <= cap);
		total += (size_t)n;
	}
	assert_int_equal(lp_trace_reader_count(r), total);
	*err = (int)n;
	lp_trace_reader_free(r);
	return total;
}

static void write_refs(const char *path, const struct lp_ref *refs, size_t n, const struct lp_mappings *m)
{
	struct lp_trace_writer *w;

	assert_int_equal(lp_trace_writer_open(&w, path, NULL), 0);
	if (m)
		assert_int_equal(lp_trace_writer_set_mappings(w, m), 0);
	/* Uneven batches, so that block boundaries fall inside them. */
	for (size_t i = 0; i < n;) {
		size_t k = n - i < 777 ? n - i : 777;
		assert_int_equal(lp_trace_write(w, refs + i, k), 0);
		i += k;
	}
	assert_int_equal(lp_trace_writer_close(w), 0);
}

/* Random records with every edge value mixed in, of the first `kinds`
 * kinds (5: frame records too). */
static void random_refs(struct lp_ref *v, size_t n, uint64_t seed, unsigned kinds)
{
	static const uint64_t edges[] = { 0, 1, 2, 3, 4, 7, 8, 16, 64, 65, 127, 128, 0xffff, 0x10000,
					  0xffffffffULL, 0x100000000ULL, UINT64_MAX, UINT64_MAX - 1,
					  (uint64_t)INT64_MAX, (uint64_t)INT64_MAX + 1 };
	struct lp_rng rng;

	lp_rng_seed(&rng, seed);
	for (size_t i = 0; i < n; i++) {
		uint64_t x = lp_rng_next(&rng);
		struct lp_ref *r = &v[i];
		memset(r, 0, sizeof(*r));
		switch (x % 5) {
		case 0: r->addr = edges[lp_rng_below(&rng, 20)]; break;
		case 1: r->addr = lp_rng_next(&rng); break;
		default: r->addr = (i ? v[i - 1].addr : 0) + 8 * (x % 3); break;
		}
		r->pc = x % 3 ? (i ? v[i - 1].pc : 0x401000) : (x & 4 ? edges[lp_rng_below(&rng, 20)] : lp_rng_next(&rng));
		r->size = x % 7 ? 1ULL << (x >> 8) % 4 : edges[lp_rng_below(&rng, 20)];
		r->tid = x % 11 ? (i ? v[i - 1].tid : 0) : (x % 2 ? UINT32_MAX : (uint32_t)(x >> 40) % 5);
		r->kind = (uint8_t)((x >> 20) % kinds);
		if (r->kind == LP_EV_FRAME) /* a frame has a pc and a thread only */
			r->addr = r->size = 0;
		if (lp_ref_is_access(r) && r->size > LP_REF_SIZE_MAX)
			r->size = r->size % LP_REF_SIZE_MAX + 1; /* events keep any size */
	}
}

static void assert_refs_equal(const struct lp_ref *a, const struct lp_ref *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (memcmp(&a[i], &b[i], FIELDS_SIZE) || a[i].kind != b[i].kind)
			fail_msg("record %zu differs: addr %llx/%llx pc %llx/%llx size %llu/%llu tid %u/%u kind %u/%u",
				 i, (unsigned long long)a[i].addr, (unsigned long long)b[i].addr,
				 (unsigned long long)a[i].pc, (unsigned long long)b[i].pc,
				 (unsigned long long)a[i].size, (unsigned long long)b[i].size,
				 a[i].tid, b[i].tid, a[i].kind, b[i].kind);
}

static void test_round_trip_random(void **state)
{
	enum { N = 200000 }; /* several blocks */
	char *path = lp_test_path("rt.lpt");
	struct lp_ref *in = calloc(N, sizeof(*in)), *out = calloc(N + 1, sizeof(*out));
	int err;

	random_refs(in, N, 42, 5);
	write_refs(path, in, N, NULL);
	assert_int_equal(read_all(path, out, N + 1, &err), N);
	assert_int_equal(err, 0);
	assert_refs_equal(in, out, N);
	free(in);
	free(out);
	free(path);
}

static void test_empty_trace(void **state)
{
	char *path = lp_test_path("empty.lpt");
	struct lp_trace_reader *r;
	struct lp_ref out[4];
	int err;

	write_refs(path, NULL, 0, NULL);
	assert_int_equal(read_all(path, out, 4, &err), 0);
	assert_int_equal(err, 0);
	assert_int_equal(lp_trace_reader_open(&r, path, NULL), 0);
	assert_int_equal(lp_trace_reader_mappings(r)->n, 0);
	lp_trace_reader_free(r);
	free(path);
}

static void test_mappings_round_trip(void **state)
{
	char *path = lp_test_path("maps.lpt");
	struct lp_mappings m = { 0 };
	const struct lp_mappings *got;
	struct lp_trace_reader *r;
	struct lp_trace_writer *w;
	struct lp_ref ref = { .addr = 0x1000, .size = 8, .pc = 0x401000 }, out[2];
	uint8_t bid[20];

	for (int i = 0; i < 20; i++)
		bid[i] = (uint8_t)(0xa0 + i);
	assert_int_equal(lp_mappings_add(&m, 0x400000, 0x401000, 0, "/usr/bin/prog", bid, 20), 0);
	assert_int_equal(lp_mappings_add(&m, 0x7f0000000000, UINT64_MAX, 0x3000, "", NULL, 0), 0);
	write_refs(path, &ref, 1, &m);

	assert_int_equal(lp_trace_reader_open(&r, path, NULL), 0);
	got = lp_trace_reader_mappings(r);
	assert_int_equal(got->n, 2);
	assert_true(got->v[0].start == 0x400000 && got->v[0].end == 0x401000 && got->v[0].file_offset == 0);
	assert_string_equal(got->v[0].path, "/usr/bin/prog");
	assert_int_equal(got->v[0].build_id_len, 20);
	assert_memory_equal(got->v[0].build_id, bid, 20);
	assert_true(got->v[1].start == 0x7f0000000000 && got->v[1].end == UINT64_MAX &&
		    got->v[1].file_offset == 0x3000 && got->v[1].build_id_len == 0);
	assert_string_equal(got->v[1].path, "");
	assert_int_equal(lp_trace_read(r, out, 2), 1);
	assert_int_equal(out[0].addr, 0x1000);
	assert_int_equal(lp_trace_read(r, out, 2), 0);
	lp_trace_reader_free(r);

	/* Mappings after the first record are refused. */
	assert_int_equal(lp_trace_writer_open(&w, path, NULL), 0);
	assert_int_equal(lp_trace_write(w, &ref, 1), 0);
	assert_int_equal(lp_trace_writer_set_mappings(w, &m), LP_EINVAL);
	lp_trace_writer_abort(w);
	lp_mappings_release(&m);
	free(path);
}

static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	long n;

	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc((size_t)n + 1);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	*len = (size_t)n;
	return buf;
}

/* A small file of several blocks: the records are written in blocks of
 * 64K, so 150000 records make 3 record blocks. */
enum { DAMAGE_N = 150000 };

static void test_truncation_at_every_offset(void **state)
{
	char *path = lp_test_path("trunc-src.lpt"), *cut = lp_test_path("trunc.lpt");
	struct lp_ref *in = calloc(DAMAGE_N, sizeof(*in)), *out = calloc(DAMAGE_N + 1, sizeof(*out));
	struct lp_mappings m = { 0 };
	uint8_t *file;
	size_t len, prev = 0;
	int err;

	/* Regular records compress well, keeping the file (and the loop
	 * below, which reads a file per offset) small. */
	for (size_t i = 0; i < DAMAGE_N; i++)
		in[i] = (struct lp_ref){ .addr = 0x1000 + 8 * i, .pc = 0x400000 + (i % 3), .size = 8,
					 .kind = (uint8_t)(i % 5 == 0) };
	assert_int_equal(lp_mappings_add(&m, 1, 2, 3, "/lib/x.so", NULL, 0), 0);
	write_refs(path, in, DAMAGE_N, &m);
	file = slurp(path, &len);
	assert_true(len < 20000);
	for (size_t cutlen = 0; cutlen < len; cutlen++) {
		lp_test_write_file(cut, file, cutlen);
		size_t got = read_all(cut, out, DAMAGE_N + 1, &err);
		if (cutlen < 8) {
			assert_int_equal(err, LP_EFORMAT);
		} else {
			assert_int_equal(err, LP_ETRUNCATED);
			assert_non_null(strstr(lp_errmsg(), "truncated"));
		}
		/* A prefix, of whole blocks, never shrinking as the cut moves. */
		assert_true(got == 0 || got == 65536 || got == 131072 || got == DAMAGE_N);
		assert_true(got >= prev);
		prev = got;
		assert_refs_equal(in, out, got);
	}
	assert_int_equal(prev, DAMAGE_N); /* cut inside the end block */
	assert_int_equal(read_all(path, out, DAMAGE_N + 1, &err), DAMAGE_N);
	assert_int_equal(err, 0);
	lp_mappings_release(&m);
	free(file);
	free(in);
	free(out);
	free(path);
	free(cut);
}

static void test_random_corruption(void **state)
{
	char *path = lp_test_path("corrupt-src.lpt"), *bad = lp_test_path("corrupt.lpt");
	struct lp_ref *in = calloc(DAMAGE_N, sizeof(*in)), *out = calloc(DAMAGE_N + 1, sizeof(*out));
	struct lp_rng rng;
	uint8_t *file, *copy;
	size_t len;
	int err, silent = 0;

	random_refs(in, 3000, 7, 4);
	write_refs(path, in, 3000, NULL);
	file = slurp(path, &len);
	copy = malloc(len);
	lp_rng_seed(&rng, 99);
	for (int trial = 0; trial < 3000; trial++) {
		memcpy(copy, file, len);
		int flips = 1 + (int)lp_rng_below(&rng, 3);
		for (int f = 0; f < flips; f++)
			copy[lp_rng_below(&rng, len)] ^= (uint8_t)(1u << lp_rng_below(&rng, 8));
		if (!memcmp(copy, file, len))
			continue; /* two flips cancelled */
		lp_test_write_file(bad, copy, len);
		size_t got = read_all(bad, out, DAMAGE_N + 1, &err);
		assert_true(got <= 3000);
		if (err == 0) {
			/* Only possible if the damage hit bytes nothing depends
			 * on; then the records must be exactly right. */
			silent++;
			assert_int_equal(got, 3000);
			assert_refs_equal(in, out, got);
		} else {
			assert_true(err == LP_ECORRUPT || err == LP_ETRUNCATED || err == LP_EFORMAT ||
				    err == LP_EVERSION);
			assert_refs_equal(in, out, got);
		}
	}
	/* Every byte of the file is covered by a check. */
	assert_int_equal(silent, 0);
	free(copy);
	free(file);
	free(in);
	free(out);
	free(path);
	free(bad);
}

/* A writer refuses what a reader would: a reference above
 * LP_REF_SIZE_MAX (an event may be of any size). Bytes after the end
 * block are reported after the records before them. */
static void test_size_limit_and_data_after_end(void **state)
{
	char *path = lp_test_path("big.lpt"), *two = lp_test_path("two.lpt");
	struct lp_trace_writer *w;
	struct lp_ref in[3] = { { .addr = 1, .size = LP_REF_SIZE_MAX },
				{ .addr = 2, .size = UINT64_MAX, .kind = LP_EV_ALLOC },
				{ .addr = 3, .size = LP_REF_SIZE_MAX + 1, .kind = LP_REF_WRITE } }, out[8];
	uint8_t *buf;
	size_t len;
	FILE *f;
	int err;

	assert_int_equal(lp_trace_writer_open(&w, path, NULL), 0);
	assert_int_equal(lp_trace_write(w, in, 2), 0);
	assert_int_equal(lp_trace_write(w, in, 3), LP_ELIMIT);
	assert_non_null(strstr(lp_errmsg(), "record 5: a reference of 1048577 bytes"));
	assert_int_equal(lp_trace_writer_close(w), 0);
	assert_int_equal(read_all(path, out, 8, &err), 2);
	assert_int_equal(err, 0);
	assert_true(out[0].size == LP_REF_SIZE_MAX && out[1].size == UINT64_MAX);

	assert_non_null(f = fopen(path, "rb"));
	fseek(f, 0, SEEK_END);
	len = (size_t)ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc(2 * len);
	assert_int_equal(fread(buf, 1, len, f), len);
	fclose(f);
	memcpy(buf + len, buf, len);
	lp_test_write_file(two, buf, 2 * len);
	assert_int_equal(read_all(two, out, 8, &err), 2);
	assert_int_equal(err, LP_ECORRUPT);
	assert_non_null(strstr(lp_errmsg(), "data after the end-of-trace block"));
	free(buf);
	free(path);
	free(two);
}

static void test_wrong_magic_and_version(void **state)
{
	char *path = lp_test_path("x.lpt");
	struct lp_trace_reader *r;
	uint8_t hdr[16] = { 0x89, 'L', 'P', 'T', '\r', '\n', 0x1a, '\n', 7, 0, 0, 0, 0, 0, 0, 0 };

	lp_test_write_file(path, "R 0x10 8\n", 9);
	assert_int_equal(lp_trace_reader_open(&r, path, NULL), LP_EFORMAT);
	assert_non_null(strstr(lp_errmsg(), "x.lpt': not a locprof trace (bad magic)"));
	lp_test_write_file(path, hdr, sizeof(hdr));
	assert_int_equal(lp_trace_reader_open(&r, path, NULL), LP_EVERSION);
	assert_non_null(strstr(lp_errmsg(), "lpt version 7 is not supported (this locprof reads versions 1 to 2)"));
	free(path);
}

/* The file's version field set to v. */
static void set_version(const char *path, uint8_t v)
{
	FILE *f = fopen(path, "r+b");

	assert_non_null(f);
	assert_int_equal(fseek(f, 8, SEEK_SET), 0);
	assert_int_equal(fwrite(&v, 1, 1, f), 1);
	fclose(f);
}

/* Frame records: between references they leave the address deltas as
 * they were (a sweep around an allocation's frames costs no address
 * bytes), they round-trip, and a version 1 file holds none: one without
 * frames is read as ever, one with them is corrupt. */
static void test_frames_and_version_1(void **state)
{
	char *path = lp_test_path("f.lpt");
	struct lp_ref in[8] = {
		{ .addr = 0x1000, .pc = 0x400, .size = 8 },
		{ .addr = 0x1008, .pc = 0x400, .size = 8 },
		{ .addr = 0x7000, .pc = 0x410, .size = 64, .kind = LP_EV_ALLOC },
		{ .pc = 0x401234, .kind = LP_EV_FRAME },
		{ .pc = 0x7f0000001000, .kind = LP_EV_FRAME },
		{ .addr = 0x7010, .pc = 0x400, .size = 8, .kind = LP_REF_WRITE },
		{ .addr = 0x7018, .pc = 0x400, .size = 8, .kind = LP_REF_WRITE },
		{ .pc = 0x401234, .tid = 3, .kind = LP_EV_FRAME },
	}, out[9];
	int err;

	write_refs(path, in, 8, NULL);
	assert_int_equal(read_all(path, out, 9, &err), 8);
	assert_int_equal(err, 0);
	assert_refs_equal(in, out, 8);
	set_version(path, 1);
	assert_int_equal(read_all(path, out, 9, &err), 3); /* those before the first frame */
	assert_int_equal(err, LP_ECORRUPT);
	/* without frames, version 1 is version 2 */
	write_refs(path, in, 3, NULL);
	set_version(path, 1);
	assert_int_equal(read_all(path, out, 9, &err), 3);
	assert_int_equal(err, 0);
	assert_refs_equal(in, out, 3);
	free(path);
}

static void test_sniffed_from_pipe_content(void **state)
{
	char *path = lp_test_path("noext"), *lpt = lp_test_path("y.lpt");
	struct lp_ref in[3] = { { .addr = 1, .size = 1 }, { .addr = 2, .size = 2, .kind = 1 },
				{ .addr = 3, .size = 0, .kind = LP_EV_FREE } }, out[4];
	struct lp_trace_reader *r;
	uint8_t *file;
	size_t len;

	write_refs(lpt, in, 3, NULL);
	file = slurp(lpt, &len);
	lp_test_write_file(path, file, len);
	assert_int_equal(lp_trace_reader_open(&r, path, NULL), 0);
	assert_string_equal(lp_trace_reader_format(r), "lpt");
	assert_int_equal(lp_trace_read(r, out, 4), 3);
	assert_refs_equal(in, out, 3);
	lp_trace_reader_free(r);
	free(file);
	free(path);
	free(lpt);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip_random),
		cmocka_unit_test(test_empty_trace),
		cmocka_unit_test(test_mappings_round_trip),
		cmocka_unit_test(test_truncation_at_every_offset),
		cmocka_unit_test(test_random_corruption),
		cmocka_unit_test(test_size_limit_and_data_after_end),
		cmocka_unit_test(test_wrong_magic_and_version),
		cmocka_unit_test(test_frames_and_version_1),
		cmocka_unit_test(test_sniffed_from_pipe_content),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
