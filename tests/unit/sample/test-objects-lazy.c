/* Data objects from allocation events of touched blocks only (the valgrind
 * tool's default, LP_ALLOCS_TOUCHED): a block's allocation event is written
 * when a sample first falls in it, with its original time, its free only
 * if its allocation was written. The attribution of every sample must be
 * the one the full event stream gives, also after a write and a read of
 * the profile (ALSM chunk: flags and run totals), with two threads whose
 * times count their own references (LP_ALLOCS_THREAD_CLOCK). */
#include "lp-test.h"

#include <locprof/profile.h>

#include "common/rng.h"

enum { SLOTS = 256, THREADS = 2 };

struct live {
	uint64_t addr, size, pc, time;
	uint32_t tid;
	int emitted;
};

/* A run: per thread a clock; blocks come and go at 64-byte-aligned slots of
 * various sizes (spanning up to 3 slots, so neighbours and address reuse
 * happen); samples fall in live blocks, in freed space, or outside the
 * heap. full gets every event, lazy those of touched blocks; samples go
 * to both. */
struct expect {
	uint64_t addr, time, block; /* block: the live one holding addr, 0 if none */
	uint32_t tid, owner;        /* the sample's thread, the block's */
};

static void make_run(struct lp_profile *full, struct lp_profile *lazy, uint64_t seed,
		     struct expect *ex, size_t *nex)
{
	struct lp_rng rng;
	struct live slot[SLOTS];
	uint64_t clock[THREADS] = { 0 }, allocs = 0, frees = 0, bytes = 0;

	memset(slot, 0, sizeof(slot));
	lp_rng_seed(&rng, seed);
	for (int step = 0; step < 20000; step++) {
		uint32_t tid = (uint32_t)lp_rng_below(&rng, THREADS);
		uint64_t s = lp_rng_below(&rng, SLOTS), r = lp_rng_below(&rng, 10);
		clock[tid] += 1 + lp_rng_below(&rng, 5);
		if (r < 4) { /* allocate at s if s..s+k are free */
			uint64_t k = 1 + lp_rng_below(&rng, 3);
			int ok = s + k <= SLOTS;
			for (uint64_t j = 0; ok && j < k; j++)
				ok = !slot[s + j].size && !(j == 0 && s && slot[s - 1].size > 64);
			/* a block spanning from an earlier slot: find its start */
			for (uint64_t j = s; ok && j-- > 0 && s - j < 3;)
				if (slot[j].size && slot[j].addr + slot[j].size > 0x100000 + 64 * s)
					ok = 0;
			if (!ok)
				continue;
			struct live b = { 0x100000 + 64 * s, 64 * (k - 1) + 1 + lp_rng_below(&rng, 64),
					  0x400000 + 16 * lp_rng_below(&rng, 40), clock[tid], tid, 0 };
			slot[s] = b;
			struct lp_alloc_event e = { b.time, b.addr, b.size, b.pc, tid, LP_EV_ALLOC, 0 };
			assert_int_equal(lp_profile_add_alloc(full, &e), 0);
			allocs++;
			bytes += b.size;
		} else if (r < 7) { /* free the block starting at s (any thread) */
			if (!slot[s].size)
				continue;
			struct lp_alloc_event e = { clock[tid], slot[s].addr, 0, 0x500000, tid, LP_EV_FREE, 0 };
			assert_int_equal(lp_profile_add_alloc(full, &e), 0);
			if (slot[s].emitted)
				assert_int_equal(lp_profile_add_alloc(lazy, &e), 0);
			frees++;
			memset(&slot[s], 0, sizeof(slot[s]));
		} else { /* a sample of thread tid */
			uint64_t a = r == 9 ? 0x7ff000000000 + 8 * lp_rng_below(&rng, 1000)
					    : 0x100000 + lp_rng_below(&rng, 64 * SLOTS);
			/* the tool finds the live block holding a, if any */
			struct expect *x = &ex[(*nex)++];
			*x = (struct expect){ a, clock[tid], 0, tid, 0 };
			for (uint64_t j = 0; j < SLOTS; j++) {
				struct live *b = &slot[j];
				if (b->size && a >= b->addr && a < b->addr + b->size) {
					x->block = b->addr;
					x->owner = b->tid;
				}
				if (b->size && a >= b->addr && a < b->addr + b->size && !b->emitted) {
					struct lp_alloc_event e = { b->time, b->addr, b->size, b->pc, b->tid,
								    LP_EV_ALLOC, 0 };
					assert_int_equal(lp_profile_add_alloc(lazy, &e), 0);
					b->emitted = 1;
				}
			}
			struct lp_sample smp = { .time = clock[tid], .pc = 0x600000, .addr = a, .tid = tid,
						 .reuse = 10 };
			assert_int_equal(lp_profile_add_sample(full, &smp), 0);
			assert_int_equal(lp_profile_add_sample(lazy, &smp), 0);
		}
	}
	full->alloc_flags = LP_ALLOCS_THREAD_CLOCK;
	lazy->alloc_flags = LP_ALLOCS_THREAD_CLOCK | LP_ALLOCS_TOUCHED | LP_ALLOCS_TOTALS;
	lazy->alloc_total = allocs;
	lazy->free_total = frees;
	lazy->alloc_bytes = bytes;
}

static struct lp_profile *new_profile(void)
{
	struct lp_profile *p;

	assert_int_equal(lp_profile_new(&p), 0);
	p->n_line_sizes = 1;
	p->line_sizes[0] = 64;
	p->rate = 0.01;
	return p;
}

/* Every sample in a live block of its own thread: both streams name that
 * block (a block of another thread does not compare by time: there the
 * full stream may name an older or younger block at the address). */
static void compare(const struct lp_profile *full, const struct lp_profile *lazy,
		    const struct expect *ex, size_t nex, size_t *found)
{
	struct lp_objects *of, *ol;

	assert_int_equal(lp_objects_new(&of, full), 0);
	assert_int_equal(lp_objects_new(&ol, lazy), 0);
	assert_true(lp_objects_count(ol) < lp_objects_count(of));
	assert_int_equal(lp_objects_run_allocs(ol), lazy->alloc_total);
	assert_int_equal(lp_objects_run_allocs(of), lp_objects_count(of));
	*found = 0;
	for (size_t i = 0; i < nex; i++) {
		const struct expect *x = &ex[i];
		uint64_t fs = 0, fz = 0, fp = 0, ls = 0, lz = 0, lpc = 0;
		int f = lp_objects_find_tid(of, x->addr, x->time, x->tid, &fs, &fz, &fp);
		int l = lp_objects_find_tid(ol, x->addr, x->time, x->tid, &ls, &lz, &lpc);
		if (!x->block || x->owner != x->tid)
			continue;
		(*found)++;
		assert_int_equal(f, 1);
		assert_int_equal(l, 1);
		assert_int_equal(fs, x->block);
		assert_int_equal(ls, x->block);
		assert_int_equal(fz, lz);
		assert_int_equal(fp, lpc);
	}
	lp_objects_free(of);
	lp_objects_free(ol);
}

static void test_lazy_equals_full(void **state)
{
	for (uint64_t seed = 1; seed <= 4; seed++) {
		struct lp_profile *full = new_profile(), *lazy = new_profile(), *q;
		char *path = lp_test_path("lazy.lpp");
		static struct expect ex[20000];
		size_t found, nex = 0;

		make_run(full, lazy, seed, ex, &nex);
		assert_int_equal(lp_profile_finish(full, 0), 0);
		assert_int_equal(lp_profile_finish(lazy, 0), 0);
		compare(full, lazy, ex, nex, &found);
		assert_true(found > 500);
		/* through the file: the flags and totals survive */
		assert_int_equal(lp_profile_write(lazy, path), 0);
		assert_int_equal(lp_profile_read(&q, path), 0);
		assert_int_equal(q->alloc_flags, lazy->alloc_flags);
		assert_int_equal(q->alloc_total, lazy->alloc_total);
		assert_int_equal(q->free_total, lazy->free_total);
		assert_int_equal(q->alloc_bytes, lazy->alloc_bytes);
		assert_int_equal(q->n_allocs, lazy->n_allocs);
		compare(full, q, ex, nex, &found);
		lp_profile_free(q);
		lp_profile_free(full);
		lp_profile_free(lazy);
		free(path);
	}
}

/* A profile without the ALSM chunk (older writers, `locprof sample`): no
 * flags, the totals are the blocks. */
static void test_no_summary(void **state)
{
	struct lp_profile *p = new_profile(), *q;
	char *path = lp_test_path("nosum.lpp");
	struct lp_alloc_event e = { 5, 0x1000, 100, 0x400000, 0, LP_EV_ALLOC, 0 };
	struct lp_objects *o;

	assert_int_equal(lp_profile_add_alloc(p, &e), 0);
	assert_int_equal(lp_profile_finish(p, 0), 0);
	assert_int_equal(lp_profile_write(p, path), 0);
	assert_int_equal(lp_profile_read(&q, path), 0);
	assert_int_equal(q->alloc_flags, 0);
	assert_int_equal(lp_objects_new(&o, q), 0);
	assert_int_equal(lp_objects_run_allocs(o), 1);
	lp_objects_free(o);
	lp_profile_free(p);
	lp_profile_free(q);
	free(path);
}

/* Per-thread clocks: a block of thread 1 does not compare by time with a
 * sample of thread 0 (its clock is another), so a sample of thread 0 at a
 * "time" before the block's allocation time in thread 1's clock still
 * finds it. */
static void test_thread_clock(void **state)
{
	struct lp_profile *p = new_profile();
	struct lp_alloc_event e = { 1000, 0x1000, 100, 0x400000, 1, LP_EV_ALLOC, 0 };
	struct lp_objects *o;
	uint64_t s, z, pc;

	assert_int_equal(lp_profile_add_alloc(p, &e), 0);
	assert_int_equal(lp_objects_new(&o, p), 0);
	/* one clock for all threads: allocated after time 10, so not alive */
	assert_int_equal(lp_objects_find_tid(o, 0x1010, 10, 0, &s, &z, &pc), 1);
	lp_objects_free(o);
	p->alloc_flags = LP_ALLOCS_THREAD_CLOCK;
	assert_int_equal(lp_objects_new(&o, p), 0);
	assert_int_equal(lp_objects_find_tid(o, 0x1010, 10, 0, &s, &z, &pc), 1);
	assert_int_equal(s, 0x1000);
	assert_int_equal(lp_objects_find_tid(o, 0x1010, 2000, 1, &s, &z, &pc), 1);
	assert_int_equal(lp_objects_find_tid(o, 0x2000, 2000, 1, &s, &z, &pc), 0);
	lp_objects_free(o);
	lp_profile_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lazy_equals_full),
		cmocka_unit_test(test_no_summary),
		cmocka_unit_test(test_thread_clock),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
