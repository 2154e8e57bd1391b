/* Tests of the .lpp profile format and of the StatCache sampler. */
#include "lp-test.h"

#include <locprof/profile.h>
#include <locprof/sample.h>

#include "common/rng.h"
#include "sample/profile-chunk.h"

#include <math.h>

static struct lp_profile *make_profile(size_t nsamples)
{
	struct lp_profile *p;
	struct lp_rng rng;

	assert_int_equal(lp_profile_new(&p), 0);
	lp_rng_seed(&rng, 7);
	lp_profile_set_str(&p->command, "./prog --arg");
	lp_profile_set_str(&p->host, "hostx");
	lp_profile_set_str(&p->source, "test");
	p->date = 1700000000;
	p->n_line_sizes = 2;
	p->line_sizes[0] = 64;
	p->line_sizes[1] = 128;
	p->rate = 1e-3;
	p->seed = 42;
	p->window = 1000;
	p->accesses[0] = 10000;
	p->accesses[1] = 9000;
	p->references = 9500;
	lp_profile_set_thread_refs(p, 0, 9000);
	lp_profile_set_thread_refs(p, 1, 500);
	for (size_t i = 0; i < nsamples; i++) {
		struct lp_sample s = {
			.time = lp_rng_below(&rng, 9000), .pc = 0x400000 + i, .addr = 0x1000 + 64 * i,
			.reuse = i % 5 == 0 ? LP_REUSE_DANGLING : lp_rng_below(&rng, 500),
			.reuse_pc = 0x500000 + i, .tid = (uint32_t)(i & 1), .kind = i & 1,
			.line_idx = (uint8_t)(i % 2),
		};
		assert_int_equal(lp_profile_add_sample(p, &s), 0);
	}
	uint8_t id[4] = { 1, 2, 3, 4 };
	assert_int_equal(lp_mappings_add(&p->mappings, 0x400000, 0x401000, 0, "/bin/prog", id, 4), 0);
	assert_int_equal(lp_profile_finish(p, 0), 0);
	return p;
}

static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;

	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	*len = (size_t)ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc(*len);
	assert_int_equal(fread(buf, 1, *len, f), *len);
	fclose(f);
	return buf;
}

/* n allocation events: blocks allocated and every third one freed. */
static void add_allocs(struct lp_profile *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct lp_alloc_event e = {
			.time = i % 7 == 6 ? LP_TIME_UNKNOWN : 100 * i, .addr = 0x7f0000000000 + 4096 * (i / 2),
			.size = i % 3 == 2 ? 0 : 64 + i, .pc = 0x401000 + 16 * (i % 5), .tid = (uint32_t)(i % 3),
			.kind = i % 3 == 2 ? LP_EV_FREE : LP_EV_ALLOC,
		};
		assert_int_equal(lp_profile_add_alloc(p, &e), 0);
	}
}

static void assert_same_alloc(const struct lp_alloc_event *a, const struct lp_alloc_event *b)
{
	assert_int_equal(a->time, b->time);
	assert_int_equal(a->addr, b->addr);
	assert_int_equal(a->size, b->size);
	assert_int_equal(a->pc, b->pc);
	assert_int_equal(a->tid, b->tid);
	assert_int_equal(a->kind, b->kind);
	assert_int_equal(a->stack, b->stack);
}

static void assert_same_sample(const struct lp_sample *a, const struct lp_sample *b)
{
	assert_int_equal(a->time, b->time);
	assert_int_equal(a->pc, b->pc);
	assert_int_equal(a->addr, b->addr);
	assert_int_equal(a->reuse, b->reuse);
	assert_int_equal(a->reuse_pc, b->reuse_pc);
	assert_int_equal(a->tid, b->tid);
	assert_int_equal(a->kind, b->kind);
	assert_int_equal(a->line_idx, b->line_idx);
}

/* Data objects: the block alive at a time, against a replay of the
 * events up to that time; random blocks that reuse addresses. */
static void test_objects_vs_replay(void **state)
{
	struct lp_rng rng;
	struct lp_profile *p;
	struct lp_objects *o;

	lp_rng_seed(&rng, 11);
	assert_int_equal(lp_profile_new(&p), 0);
	/* live blocks at 64-byte slots; time advances by 1..3 per event */
	uint64_t t = 0, live[64] = { 0 };
	for (int i = 0; i < 3000; i++) {
		uint64_t slot = lp_rng_below(&rng, 64);
		t += 1 + lp_rng_below(&rng, 3);
		struct lp_alloc_event e = { .time = t, .addr = 0x10000 + 64 * slot, .tid = 0 };
		if (live[slot]) {
			e.kind = LP_EV_FREE;
			live[slot] = 0;
		} else {
			e.kind = LP_EV_ALLOC;
			e.size = 1 + lp_rng_below(&rng, 64);
			e.pc = 0x400000 + (uint64_t)i;
			live[slot] = e.size;
		}
		assert_int_equal(lp_profile_add_alloc(p, &e), 0);
	}
	assert_int_equal(lp_objects_new(&o, p), 0);
	for (int q = 0; q < 3000; q++) {
		uint64_t qt = lp_rng_below(&rng, t + 2), qa = 0x10000 + lp_rng_below(&rng, 64 * 64 + 10);
		/* replay: the block containing qa alive at qt */
		uint64_t size[64] = { 0 }, pc[64] = { 0 };
		for (size_t i = 0; i < p->n_allocs && p->allocs[i].time <= qt; i++) {
			const struct lp_alloc_event *e = &p->allocs[i];
			uint64_t slot = (e->addr - 0x10000) / 64;
			size[slot] = e->kind == LP_EV_ALLOC ? e->size : 0;
			pc[slot] = e->pc;
		}
		uint64_t slot = (qa - 0x10000) / 64, gs, gz, gp;
		int live_here = slot < 64 && size[slot] && qa < 0x10000 + 64 * slot + size[slot];
		int got = lp_objects_find(o, qa, qt, &gs, &gz, &gp);
		if (live_here) {
			assert_int_equal(got, 1);
			assert_int_equal(gs, 0x10000 + 64 * slot);
			assert_int_equal(gz, size[slot]);
			assert_int_equal(gp, pc[slot]);
		} else if (got) {
			/* not alive: a block that held it before or after */
			assert_true(gs <= qa && qa < gs + gz);
		}
	}
	/* times unknown: the last block allocated at the address */
	struct lp_profile *u;
	assert_int_equal(lp_profile_new(&u), 0);
	struct lp_alloc_event ev[] = {
		{ LP_TIME_UNKNOWN, 0x5000, 100, 0x11, 0, LP_EV_ALLOC, 0 },
		{ LP_TIME_UNKNOWN, 0x5000, 0, 0x12, 0, LP_EV_FREE, 0 },
		{ LP_TIME_UNKNOWN, 0x5000, 50, 0x13, 0, LP_EV_ALLOC, 0 },
		{ LP_TIME_UNKNOWN, 0x9000, 0, 0x14, 0, LP_EV_FREE, 0 }, /* a free of nothing */
	};
	for (int i = 0; i < 4; i++)
		assert_int_equal(lp_profile_add_alloc(u, &ev[i]), 0);
	struct lp_objects *uo;
	uint64_t gs, gz, gp;
	assert_int_equal(lp_objects_new(&uo, u), 0);
	assert_int_equal(lp_objects_count(uo), 2);
	assert_int_equal(lp_objects_find(uo, 0x5010, LP_TIME_UNKNOWN, &gs, &gz, &gp), 1);
	assert_int_equal(gp, 0x13);
	assert_int_equal(lp_objects_find(uo, 0x5060, 7, &gs, &gz, &gp), 1); /* only the first was that big */
	assert_int_equal(gp, 0x11);
	assert_int_equal(lp_objects_find(uo, 0x9000, 7, &gs, &gz, &gp), 0);
	lp_objects_free(uo);
	lp_profile_free(u);
	lp_objects_free(o);
	lp_profile_free(p);
}

/* The reflected IEEE CRC-32, one bit at a time: slow and obviously right. */
static uint32_t crc32_bitwise(uint32_t crc, const uint8_t *p, size_t n)
{
	crc = ~crc;
	for (size_t i = 0; i < n; i++) {
		crc ^= p[i];
		for (int b = 0; b < 8; b++)
			crc = (crc >> 1) ^ (0xedb88320u & -(crc & 1));
	}
	return ~crc;
}

static void test_crc32(void **state)
{
	static uint8_t buf[5000];
	uint64_t x = 88172645463325252ull;

	assert_int_equal(lp_crc32(0, "123456789", 9), 0xcbf43926u);
	assert_int_equal(lp_crc32(0, "", 0), 0);
	for (size_t i = 0; i < sizeof(buf); i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		buf[i] = (uint8_t)x;
	}
	/* every length and alignment the word-at-a-time code treats apart,
	 * and chained calls as the chunk sealer makes them */
	for (size_t len = 0; len < 80; len++)
		for (size_t off = 0; off < 9; off++)
			assert_int_equal(lp_crc32(0, buf + off, len),
					 crc32_bitwise(0, buf + off, len));
	assert_int_equal(lp_crc32(0, buf, sizeof(buf)),
			 crc32_bitwise(0, buf, sizeof(buf)));
	assert_int_equal(lp_crc32(lp_crc32(0, buf, 7), buf + 7, 4000),
			 crc32_bitwise(0, buf, 4007));
}

/* A count below the latest sample's time is partial (a killed run's last
 * flush); one above every sample time, or no sample, is not. */
static void test_count_partial(void **state)
{
	struct lp_profile *p = make_profile(200);
	uint64_t latest[2] = { 0, 0 };

	(void)state;
	for (size_t i = 0; i < p->n_samples; i++)
		if (p->samples[i].time > latest[p->samples[i].line_idx])
			latest[p->samples[i].line_idx] = p->samples[i].time;
	assert_int_equal(lp_profile_count_partial(p, 0), 0);
	assert_int_equal(lp_profile_count_partial(p, 1), 0);
	p->accesses[1] = latest[1] + 1;
	assert_int_equal(lp_profile_count_partial(p, 1), 0);
	p->accesses[1] = latest[1];
	assert_int_equal(lp_profile_count_partial(p, 1), 1);
	p->accesses[0] = 0;
	assert_int_equal(lp_profile_count_partial(p, 0), 1);
	assert_int_equal(lp_profile_count_partial(p, 7), 0);
	lp_profile_free(p);
}

static void test_round_trip(void **state)
{
	struct lp_profile *p = make_profile(300), *q;
	char *path = lp_test_path("rt.lpp");

	assert_int_equal(lp_profile_write(p, path), 0);
	assert_int_equal(lp_profile_read(&q, path), 0);
	assert_string_equal(q->command, "./prog --arg");
	assert_string_equal(q->host, "hostx");
	assert_int_equal(q->date, 1700000000);
	assert_int_equal(q->n_line_sizes, 2);
	assert_int_equal(q->line_sizes[1], 128);
	assert_true(q->rate == 1e-3);
	assert_int_equal(q->seed, 42);
	assert_int_equal(q->accesses[0], 10000);
	assert_int_equal(q->references, 9500);
	assert_int_equal(q->n_threads, 2);
	assert_int_equal(q->thread_refs[1], 500);
	assert_int_equal(q->n_samples, 300);
	for (size_t i = 0; i < 300; i++)
		assert_same_sample(&p->samples[i], &q->samples[i]);
	assert_int_equal(q->windows[0].length, 1000);
	assert_int_equal(q->windows[0].n, 10);
	assert_int_equal(q->windows[1].n, 9);
	for (size_t w = 0; w < 10; w++) {
		assert_int_equal(q->windows[0].v[w].n, p->windows[0].v[w].n);
		assert_int_equal(q->windows[0].v[w].first, p->windows[0].v[w].first);
	}
	assert_int_equal(q->mappings.n, 1);
	assert_string_equal(q->mappings.v[0].path, "/bin/prog");
	assert_int_equal(q->mappings.v[0].build_id_len, 4);
	assert_int_equal(q->n_allocs, 0); /* none written, none read */
	lp_profile_free(p);
	lp_profile_free(q);
	free(path);
}

/* The ALOC section: round trip (more events than one chunk holds), and a
 * kind that is not an allocation event is refused. */
static void test_alloc_round_trip(void **state)
{
	struct lp_profile *p = make_profile(50), *q;
	char *path = lp_test_path("alloc.lpp");
	struct lp_alloc_event bad = { .kind = LP_REF_READ };

	add_allocs(p, LP_ALLOCS_PER_CHUNK + 123);
	assert_int_equal(lp_profile_add_alloc(p, &bad), LP_EINVAL);
	assert_int_equal(lp_profile_write(p, path), 0);
	assert_int_equal(lp_profile_read(&q, path), 0);
	assert_int_equal(q->n_allocs, p->n_allocs);
	for (size_t i = 0; i < p->n_allocs; i++)
		assert_same_alloc(&p->allocs[i], &q->allocs[i]);
	assert_int_equal(q->n_samples, 50);
	lp_profile_free(p);
	lp_profile_free(q);
	free(path);
}

/* Call stacks (more than a chunk's worth, ids past 16 bits) and TLS
 * segments survive a write and a read; lp_objects hands the block's stack
 * and the thread's TLS segment back. */
static void test_stacks_tls_round_trip(void **state)
{
	struct lp_profile *p = make_profile(10), *q;
	char *path = lp_test_path("stacks.lpp");
	size_t nst = LP_STACKS_PER_CHUNK + 70000;
	struct lp_objects *o;
	uint64_t f[LP_ALLOC_STACK_MAX], start, size, pc, image;
	const struct lp_alloc_stack *st;
	uint32_t id;

	(void)state;
	for (size_t i = 0; i < nst; i++) {
		unsigned n = 1 + (unsigned)(i % LP_ALLOC_STACK_MAX);
		for (unsigned k = 0; k < n; k++)
			f[k] = 0x400000 + 16 * i + k;
		assert_int_equal(lp_profile_add_stack(p, f, n, &id), 0);
		assert_int_equal(id, i + 1);
	}
	assert_int_equal(lp_profile_add_stack(p, f, 0, &id), LP_EINVAL);
	assert_int_equal(lp_profile_add_stack(p, f, LP_ALLOC_STACK_MAX + 1, &id), LP_EINVAL);
	struct lp_alloc_event a = { 5, 0x10000, 64, 0x400000 + 16 * (nst - 1), 1, LP_EV_ALLOC, (uint32_t)nst };
	struct lp_alloc_event b = { 6, 0x20000, 64, 0x999, 1, LP_EV_ALLOC, 0 };
	struct lp_tls_block t = { 0x7f0000001000, 4096, 0x401000, 1 };
	assert_int_equal(lp_profile_add_alloc(p, &a), 0);
	assert_int_equal(lp_profile_add_alloc(p, &b), 0);
	assert_int_equal(lp_profile_add_tls(p, &t), 0);
	assert_int_equal(lp_profile_write(p, path), 0);
	assert_int_equal(lp_profile_read(&q, path), 0);
	assert_int_equal(q->n_stacks, nst);
	for (size_t i = 0; i < nst; i++) {
		assert_int_equal(q->stacks[i].n, p->stacks[i].n);
		assert_memory_equal(q->stacks[i].frames, p->stacks[i].frames, p->stacks[i].n * sizeof(uint64_t));
	}
	assert_int_equal(q->n_tls, 1);
	assert_true(q->tls[0].start == t.start && q->tls[0].size == t.size && q->tls[0].image == t.image &&
		    q->tls[0].tid == t.tid);
	st = lp_profile_event_stack(q, &q->allocs[q->n_allocs - 2]);
	assert_non_null(st);
	assert_int_equal(st->frames[0], a.pc);
	assert_null(lp_profile_event_stack(q, &q->allocs[q->n_allocs - 1]));

	assert_int_equal(lp_objects_new(&o, q), 0);
	assert_int_equal(lp_objects_find_stack(o, 0x10010, LP_TIME_UNKNOWN, 1, &start, &size, &pc, &st), 1);
	assert_true(st && st->n == p->stacks[nst - 1].n && st->frames[0] == a.pc);
	assert_int_equal(lp_objects_find_stack(o, 0x20010, LP_TIME_UNKNOWN, 1, &start, &size, &pc, &st), 1);
	assert_null(st);
	assert_int_equal(lp_objects_find_tls(o, 0x7f0000001800, 1, &start, &image), 1);
	assert_true(start == t.start && image == t.image);
	assert_int_equal(lp_objects_find_tls(o, 0x7f0000001800, 0, &start, &image), 0); /* another thread's */
	assert_int_equal(lp_objects_find_tls(o, 0x7f0000002000, 1, &start, &image), 0); /* past its end */
	lp_objects_free(o);
	lp_profile_free(p);
	lp_profile_free(q);
	free(path);
}

/* The REGN chunk: the region of interest round trips; a profile without
 * one reads with none. */
static void test_region_round_trip(void **state)
{
	struct lp_profile *p = make_profile(20), *q;
	char *path = lp_test_path("region.lpp");

	assert_int_equal(lp_profile_write(p, path), 0);
	assert_int_equal(lp_profile_read(&q, path), 0);
	assert_null(q->region);
	assert_int_equal(q->region_skipped, 0);
	lp_profile_free(q);
	assert_int_equal(lp_profile_set_str(&p->region, "from kernel, till tail"), 0);
	p->region_skipped = 123456789012ull;
	p->region_entries = 3;
	assert_int_equal(lp_profile_write(p, path), 0);
	assert_int_equal(lp_profile_read(&q, path), 0);
	assert_string_equal(q->region, "from kernel, till tail");
	assert_int_equal(q->region_skipped, 123456789012ull);
	assert_int_equal(q->region_entries, 3);
	assert_int_equal(q->n_samples, 20);
	lp_profile_free(p);
	lp_profile_free(q);
	free(path);
}

/* Cut a profile with allocation events at every byte: what is read is
 * whole chunks, so the events are a prefix of whole chunks' worth. */
static void test_alloc_truncation(void **state)
{
	struct lp_profile *p = make_profile(20), *q;
	char *path = lp_test_path("alloc-full.lpp"), *cut = lp_test_path("alloc-cut.lpp");
	uint8_t *buf;
	size_t len, seen_all = 0;

	add_allocs(p, 30);
	assert_int_equal(lp_profile_write(p, path), 0);
	buf = slurp(path, &len);
	for (size_t at = 8; at < len; at++) {
		lp_test_write_file(cut, buf, at);
		assert_int_equal(lp_profile_read(&q, cut), LP_ETRUNCATED);
		if (!q)
			continue;
		assert_true(q->n_allocs == 0 || q->n_allocs == p->n_allocs);
		for (size_t i = 0; i < q->n_allocs; i++)
			assert_same_alloc(&p->allocs[i], &q->allocs[i]);
		seen_all += q->n_allocs == p->n_allocs;
		lp_profile_free(q);
	}
	/* only the END chunk (12 + 4 bytes) follows the ALOC chunk */
	assert_int_equal(seen_all, 16);
	free(buf);
	lp_profile_free(p);
	free(path);
	free(cut);
}

/* Compatibility both ways: a file without ALOC (older writers) reads
 * with no events; an ALOC chunk of a later version is skipped, not an
 * error, as unknown chunks are. */
static void test_alloc_versions(void **state)
{
	struct lp_profile *p = make_profile(10), *q;
	char *path = lp_test_path("alloc-v.lpp");
	uint8_t *buf, *nb;
	size_t len;

	add_allocs(p, 5);
	assert_int_equal(lp_profile_write(p, path), 0);
	buf = slurp(path, &len);
	/* find the ALOC chunk: walk the chunks after the file header */
	size_t at = LP_LPP_FILE_HEADER_SIZE, aloc = 0;
	while (at + LP_CHUNK_HEADER_SIZE <= len) {
		if (lp_get_u32(buf + at) == LP_CHUNK_ALLOCS)
			aloc = at;
		at += LP_CHUNK_HEADER_SIZE + lp_get_u32(buf + at + 4);
	}
	assert_true(aloc > 0);
	/* version 2: re-seal with the right checksum */
	lp_put_u32(buf + aloc + LP_CHUNK_HEADER_SIZE, 2);
	lp_chunk_seal(buf + aloc, LP_CHUNK_ALLOCS, lp_get_u32(buf + aloc + 4));
	lp_test_write_file(path, buf, len);
	assert_int_equal(lp_profile_read(&q, path), 0);
	assert_int_equal(q->n_allocs, 0);
	assert_int_equal(q->n_samples, 10);
	lp_profile_free(q);
	/* no ALOC chunk at all (a version-1 file from before the section):
	 * drop it and fix the END count */
	size_t alen = LP_CHUNK_HEADER_SIZE + lp_get_u32(buf + aloc + 4);
	nb = malloc(len);
	memcpy(nb, buf, aloc);
	memcpy(nb + aloc, buf + aloc + alen, len - aloc - alen);
	size_t nlen = len - alen, end = nlen - LP_CHUNK_HEADER_SIZE - 4;
	assert_int_equal(lp_get_u32(nb + end), LP_CHUNK_END);
	lp_put_u32(nb + end + LP_CHUNK_HEADER_SIZE, lp_get_u32(nb + end + LP_CHUNK_HEADER_SIZE) - 1);
	lp_chunk_seal(nb + end, LP_CHUNK_END, 4);
	lp_test_write_file(path, nb, nlen);
	assert_int_equal(lp_profile_read(&q, path), 0);
	assert_int_equal(q->n_allocs, 0);
	assert_int_equal(q->n_samples, 10);
	lp_profile_free(q);
	/* a bad kind inside an intact chunk is a damaged chunk */
	lp_put_u32(buf + aloc + LP_CHUNK_HEADER_SIZE, 1);
	buf[aloc + LP_CHUNK_HEADER_SIZE + 8 + 36] = 7;
	lp_chunk_seal(buf + aloc, LP_CHUNK_ALLOCS, lp_get_u32(buf + aloc + 4));
	lp_test_write_file(path, buf, len);
	assert_int_equal(lp_profile_read(&q, path), LP_ECORRUPT);
	assert_non_null(q);
	assert_int_equal(q->n_samples, 10);
	lp_profile_free(q);
	free(nb);
	free(buf);
	lp_profile_free(p);
	free(path);
}

/* The sampler carries a trace's allocation events into the profile,
 * timed by the references before them. */
static void test_sampler_allocs(void **state)
{
	struct lp_profile *p;
	struct lp_sampler *s;
	struct lp_ref refs[] = {
		{ .addr = 0x1000, .size = 100, .pc = 0x10, .tid = 0, .kind = LP_EV_ALLOC },
		{ .addr = 0x1000, .size = 8, .pc = 0x20, .tid = 0, .kind = LP_REF_READ },
		{ .addr = 0x1040, .size = 8, .pc = 0x20, .tid = 1, .kind = LP_REF_WRITE },
		{ .addr = 0x1000, .size = 0, .pc = 0x30, .tid = 1, .kind = LP_EV_FREE },
		{ .addr = 0x1000, .size = 8, .pc = 0x20, .tid = 0, .kind = LP_REF_READ },
	};

	assert_int_equal(lp_profile_new(&p), 0);
	p->n_line_sizes = 1;
	p->line_sizes[0] = 64;
	p->rate = 0.5;
	assert_int_equal(lp_sampler_new(&s, p), 0);
	assert_int_equal(lp_sampler_feed(s, refs, 5), 0);
	assert_int_equal(lp_sampler_finish(s), 0);
	assert_int_equal(p->references, 3);
	assert_int_equal(p->n_allocs, 2);
	assert_int_equal(p->allocs[0].kind, LP_EV_ALLOC);
	assert_int_equal(p->allocs[0].time, 0);
	assert_int_equal(p->allocs[0].size, 100);
	assert_int_equal(p->allocs[0].pc, 0x10);
	assert_int_equal(p->allocs[1].kind, LP_EV_FREE);
	assert_int_equal(p->allocs[1].time, 2);
	assert_int_equal(p->allocs[1].tid, 1);
	lp_sampler_free(s);
	lp_profile_free(p);
}

static void test_truncation_everywhere(void **state)
{
	struct lp_profile *p = make_profile(40), *q;
	char *path = lp_test_path("full.lpp"), *cut = lp_test_path("cut.lpp");
	uint8_t *buf;
	size_t len;

	assert_int_equal(lp_profile_write(p, path), 0);
	buf = slurp(path, &len);
	for (size_t at = 0; at < len; at++) {
		int err;
		lp_test_write_file(cut, buf, at);
		err = lp_profile_read(&q, cut);
		if (at < 8) {
			assert_int_equal(err, LP_EFORMAT);
			assert_null(q);
			continue;
		}
		assert_true(err == LP_ETRUNCATED);
		if (!q)
			continue; /* cut inside the file header */
		/* what was read is a prefix: every sample or none */
		assert_true(q->n_samples == 0 || q->n_samples == p->n_samples);
		for (size_t i = 0; i < q->n_samples; i++)
			assert_same_sample(&p->samples[i], &q->samples[i]);
		lp_profile_free(q);
	}
	free(buf);
	lp_profile_free(p);
	free(path);
	free(cut);
}

static void test_corrupt_and_bad_header(void **state)
{
	struct lp_profile *p = make_profile(50), *q;
	char *path = lp_test_path("c.lpp"), *bad = lp_test_path("bad.lpp");
	uint8_t *buf;
	size_t len;

	assert_int_equal(lp_profile_write(p, path), 0);
	buf = slurp(path, &len);
	/* a byte inside the sample chunk's payload */
	buf[LP_LPP_FILE_HEADER_SIZE + 200] ^= 0x10;
	lp_test_write_file(bad, buf, len);
	assert_int_equal(lp_profile_read(&q, bad), LP_ECORRUPT);
	assert_non_null(q);
	assert_int_equal(q->n_samples, 0);
	assert_non_null(strstr(lp_errmsg(), "checksum"));
	lp_profile_free(q);
	buf[LP_LPP_FILE_HEADER_SIZE + 200] ^= 0x10;

	buf[8] = 7; /* version */
	lp_test_write_file(bad, buf, len);
	assert_int_equal(lp_profile_read(&q, bad), LP_EVERSION);
	assert_null(q);
	assert_non_null(strstr(lp_errmsg(), "version 7"));
	buf[8] = 1;
	buf[0] = 'X';
	lp_test_write_file(bad, buf, len);
	assert_int_equal(lp_profile_read(&q, bad), LP_EFORMAT);
	assert_non_null(strstr(lp_errmsg(), "not a locprof profile"));
	free(buf);
	lp_profile_free(p);
	free(path);
	free(bad);
}

/* Random references over a small footprint, some spanning two lines. */
static struct lp_ref *random_trace(size_t n, uint64_t seed)
{
	struct lp_ref *v = calloc(n, sizeof(*v));
	struct lp_rng rng;

	lp_rng_seed(&rng, seed);
	for (size_t i = 0; i < n; i++) {
		v[i].addr = 0x10000 + lp_rng_below(&rng, 64 * 300);
		v[i].size = 1 + lp_rng_below(&rng, 16);
		v[i].pc = 0x400000 + lp_rng_below(&rng, 50);
		v[i].kind = (uint8_t)lp_rng_below(&rng, 2);
		if (i % 97 == 0)
			v[i].kind = LP_EV_ALLOC; /* not an access */
	}
	return v;
}

static void test_sampler_matches_brute_force(void **state)
{
	size_t n = 20000;
	struct lp_ref *refs = random_trace(n, 3);
	struct lp_profile *p;
	struct lp_sampler *s;
	uint32_t ls[2] = { 32, 64 };

	assert_int_equal(lp_profile_new(&p), 0);
	p->n_line_sizes = 2;
	memcpy(p->line_sizes, ls, sizeof(ls));
	p->rate = 0.02;
	p->seed = 11;
	assert_int_equal(lp_sampler_new(&s, p), 0);
	assert_int_equal(lp_sampler_feed(s, refs, n / 2), 0);
	assert_int_equal(lp_sampler_feed(s, refs + n / 2, n - n / 2), 0);
	assert_int_equal(lp_sampler_finish(s), 0);
	lp_sampler_free(s);
	assert_true(p->n_samples > 300);

	for (unsigned li = 0; li < 2; li++) {
		/* expand into the line-access sequence */
		uint64_t total = lp_line_accesses(refs, n, ls[li]);
		uint64_t *line = malloc(total * sizeof(*line)), *pc = malloc(total * sizeof(*pc));
		size_t t = 0, first, cnt, dangling = 0;
		for (size_t i = 0; i < n; i++) {
			if (!lp_ref_is_access(&refs[i]))
				continue;
			for (uint64_t l = refs[i].addr / ls[li]; l <= (refs[i].addr + refs[i].size - 1) / ls[li]; l++) {
				line[t] = l;
				pc[t++] = refs[i].pc;
			}
		}
		assert_int_equal(t, total);
		assert_int_equal(p->accesses[li], total);
		lp_profile_line_samples(p, li, &first, &cnt);
		assert_true(cnt > 100);
		for (size_t i = first; i < first + cnt; i++) {
			const struct lp_sample *sm = &p->samples[i];
			uint64_t want = LP_REUSE_DANGLING, wpc = 0;
			assert_int_equal(sm->addr / ls[li], line[sm->time]);
			for (uint64_t u = sm->time + 1; u < total; u++)
				if (line[u] == line[sm->time]) {
					want = u - sm->time - 1;
					wpc = pc[u];
					break;
				}
			assert_int_equal(sm->reuse, want);
			assert_int_equal(sm->reuse_pc, wpc);
			dangling += want == LP_REUSE_DANGLING;
		}
		assert_true(dangling < cnt / 4);
		free(line);
		free(pc);
	}
	assert_int_equal(p->references, n - (n + 96) / 97);
	lp_profile_free(p);
	free(refs);
}

/* Every access has the same chance: the sample times are uniform over the
 * run. Chi-square over 20 bins, and the mean of the positions. */
static void test_sampling_unbiased(void **state)
{
	size_t n = 400000, first, cnt, bins[20] = { 0 };
	struct lp_ref *refs = calloc(n, sizeof(*refs));
	struct lp_profile *p;
	struct lp_sampler *s;
	double chi = 0, mean = 0;

	for (size_t i = 0; i < n; i++) {
		refs[i].addr = 64 * (i % 1000);
		refs[i].size = 8;
	}
	assert_int_equal(lp_profile_new(&p), 0);
	p->n_line_sizes = 1;
	p->line_sizes[0] = 64;
	p->rate = 0.01;
	p->seed = 5;
	assert_int_equal(lp_sampler_new(&s, p), 0);
	assert_int_equal(lp_sampler_feed(s, refs, n), 0);
	assert_int_equal(lp_sampler_finish(s), 0);
	lp_sampler_free(s);
	lp_profile_line_samples(p, 0, &first, &cnt);
	/* count is Poisson-ish around n * rate: 5 sd */
	assert_true(fabs((double)cnt - 4000) < 5 * sqrt(4000));
	for (size_t i = 0; i < cnt; i++) {
		bins[p->samples[i].time * 20 / n]++;
		mean += (double)p->samples[i].time / (double)n;
	}
	mean /= (double)cnt;
	for (int b = 0; b < 20; b++) {
		double e = (double)cnt / 20;
		chi += (bins[b] - e) * (bins[b] - e) / e;
	}
	/* 19 degrees of freedom: P(chi2 > 43.8) = 0.001 */
	assert_true(chi < 43.8);
	/* uniform positions: sd of the mean is 1/sqrt(12 cnt) */
	assert_true(fabs(mean - 0.5) < 4 / sqrt(12.0 * (double)cnt));
	lp_profile_free(p);
	free(refs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_crc32),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_count_partial),
		cmocka_unit_test(test_alloc_round_trip),
		cmocka_unit_test(test_region_round_trip),
		cmocka_unit_test(test_alloc_truncation),
		cmocka_unit_test(test_stacks_tls_round_trip),
		cmocka_unit_test(test_alloc_versions),
		cmocka_unit_test(test_sampler_allocs),
		cmocka_unit_test(test_objects_vs_replay),
		cmocka_unit_test(test_truncation_everywhere),
		cmocka_unit_test(test_corrupt_and_bad_header),
		cmocka_unit_test(test_sampler_matches_brute_force),
		cmocka_unit_test(test_sampling_unbiased),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
