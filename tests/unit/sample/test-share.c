/* Shared time and coherence in the trace sampler (common/share-core.h),
 * against a brute-force scan of the line-access sequence: for every sample,
 * the first access by any thread (the shared reuse), the sampling thread's
 * own reuse on both clocks, the first write by another thread before it and
 * whether the reuse touched a byte that other threads wrote (true sharing)
 * or only other bytes (false sharing), and the threads that touched and
 * wrote the line in between. Also the profile round trip of the shared
 * fields, with and without the thread masks. */
#include "lp-test.h"

#include <locprof/profile.h>
#include <locprof/sample.h>

#include "common/rng.h"
#include "common/share-core.h"

/* A trace of nthreads threads over `lines` 64-byte lines: accesses of 1 to
 * 8 bytes at random offsets, a third of them writes, in bursts of one
 * thread; the first references are thread 0, 1, ... so that the sampler's
 * thread numbers are the trace's. */
static struct lp_ref *mt_trace(size_t n, uint32_t nthreads, uint64_t lines, uint64_t seed)
{
	struct lp_ref *r = calloc(n, sizeof(*r));
	struct lp_rng rng;
	uint32_t tid = 0;

	assert_non_null(r);
	lp_rng_seed(&rng, seed);
	for (size_t i = 0; i < n; i++) {
		if (i < nthreads)
			tid = (uint32_t)i;
		else if (lp_rng_below(&rng, 4) == 0 || (i > 2 * n / 3 && tid == nthreads - 1))
			/* the last thread ends at 2/3: its samples of lines
			 * written after it are invalidated and never reused */
			tid = (uint32_t)lp_rng_below(&rng, i > 2 * n / 3 ? nthreads - 1 : nthreads);
		uint64_t size = 1ull << lp_rng_below(&rng, 4);
		r[i].addr = 0x10000 + 64 * lp_rng_below(&rng, lines) + size * lp_rng_below(&rng, 64 / size);
		r[i].size = size;
		r[i].pc = 0x400000 + 4 * lp_rng_below(&rng, 16);
		r[i].kind = lp_rng_below(&rng, 3) == 0 ? LP_REF_WRITE : LP_REF_READ;
		r[i].tid = tid;
	}
	return r;
}

/* The expected fields of the sample taken at line access u0 of refs (one
 * line size, no reference straddles), by a scan forward. */
static void brute_force(const struct lp_ref *refs, size_t n, uint32_t shift, size_t u0,
			struct lp_sample *want)
{
	uint64_t line = refs[u0].addr >> shift, mask = 0, own = 0;
	int written = 0, seen_any = 0;

	memset(want, 0, sizeof(*want));
	want->sreuse = want->sown = want->reuse = LP_REUSE_DANGLING;
	want->stid = refs[u0].tid;
	for (size_t u = u0 + 1; u < n; u++) {
		const struct lp_ref *r = &refs[u];
		uint64_t last = r->addr + r->size - 1;
		int same = r->tid == refs[u0].tid;
		if (r->addr >> shift != line) {
			own += same;
			continue;
		}
		if (!seen_any) {
			seen_any = 1;
			want->sreuse = u - u0 - 1;
			want->stid = r->tid;
		}
		if (!same) {
			want->touched |= 1ull << r->tid;
			if (r->kind == LP_REF_WRITE)
				want->writers |= 1ull << r->tid;
		}
		if (same) {
			want->sown = u - u0 - 1;
			want->reuse = own;
			want->reuse_pc = r->pc;
			want->coh = !written ? LP_COH_NONE
				    : (lp_share_mask(line, shift, r->addr, last) & mask) ? LP_COH_TRUE
											  : LP_COH_FALSE;
			return;
		}
		if (r->kind == LP_REF_WRITE) {
			if (!written) {
				want->wtid = r->tid;
				want->wpc = r->pc;
			}
			written = 1;
			mask |= lp_share_mask(line, shift, r->addr, last);
		}
	}
	want->coh = written ? LP_COH_UNUSED : LP_COH_NONE;
}

static void test_shared_fields_match_brute_force(void **state)
{
	size_t n = 30000;
	struct lp_ref *refs = mt_trace(n, 4, 24, 5);
	struct lp_profile *p = lp_test_sample(refs, n, 0.03, 3, NULL, 0);
	size_t kinds[4] = { 0 }, foreign = 0;
	uint64_t *own_clock = calloc(n, sizeof(uint64_t)), count[4] = { 0 };

	(void)state;
	for (size_t i = 0; i < n; i++) /* each access's time on its thread's clock */
		own_clock[i] = count[refs[i].tid]++;
	assert_true(p->shared);
	assert_true(p->n_samples > 600);
	for (size_t i = 0; i < p->n_samples; i++) {
		const struct lp_sample *sm = &p->samples[i];
		struct lp_sample want;
		assert_true(sm->stime < n);
		assert_int_equal(sm->tid, refs[sm->stime].tid);
		assert_int_equal(sm->time, own_clock[sm->stime]);
		assert_int_equal(sm->addr, refs[sm->stime].addr);
		brute_force(refs, n, 6, sm->stime, &want);
		assert_int_equal(sm->sreuse, want.sreuse);
		assert_int_equal(sm->stid, want.stid);
		assert_int_equal(sm->sown, want.sown);
		assert_int_equal(sm->reuse, want.reuse);
		assert_int_equal(sm->reuse_pc, want.reuse_pc);
		assert_int_equal(sm->coh, want.coh);
		assert_int_equal(sm->touched, want.touched);
		assert_int_equal(sm->writers, want.writers);
		if (sm->coh != LP_COH_NONE) {
			assert_int_equal(sm->wtid, want.wtid);
			assert_int_equal(sm->wpc, want.wpc);
		}
		kinds[sm->coh]++;
		foreign += sm->stid != sm->tid;
	}
	/* the trace exercises every case but the last (test_small_cases) */
	for (int k = 0; k < 3; k++)
		assert_true(kinds[k] > 10);
	assert_true(foreign > 100);
	assert_true(p->masks);
	lp_profile_free(p);
	free(refs);
	free(own_clock);
}

/* A profile with shared time writes SMPX chunks and reads back the same
 * fields; one without reads back with shared = 0. */
static void test_shared_round_trip(void **state)
{
	size_t n = 20000;
	struct lp_ref *refs = mt_trace(n, 3, 40, 9);
	const uint32_t sizes[] = { 32, 64 };
	struct lp_profile *p = lp_test_sample(refs, n, 0.02, 1, sizes, 2), *q;
	char *path = lp_test_path("shared.lpp");

	(void)state;
	assert_int_equal(lp_profile_write(p, path), 0);
	assert_int_equal(lp_profile_read(&q, path), 0);
	assert_true(q->shared && q->masks);
	assert_int_equal(q->n_samples, p->n_samples);
	assert_memory_equal(q->samples, p->samples, p->n_samples * sizeof(*p->samples));
	lp_profile_free(q);
	/* without the masks: 88-byte SMPX records, as profiles written
	 * before them, read with shared time and no masks */
	p->masks = 0;
	assert_int_equal(lp_profile_write(p, path), 0);
	assert_int_equal(lp_profile_read(&q, path), 0);
	assert_true(q->shared && !q->masks);
	assert_int_equal(q->n_samples, p->n_samples);
	for (size_t i = 0; i < q->n_samples; i++) {
		assert_int_equal(q->samples[i].sreuse, p->samples[i].sreuse);
		assert_int_equal(q->samples[i].coh, p->samples[i].coh);
		assert_int_equal(q->samples[i].touched | q->samples[i].writers, 0);
	}
	lp_profile_free(q);
	p->shared = 0;
	assert_int_equal(lp_profile_write(p, path), 0);
	assert_int_equal(lp_profile_read(&q, path), 0);
	assert_false(q->shared);
	assert_int_equal(q->n_samples, p->n_samples);
	for (size_t i = 0; i < q->n_samples; i++) {
		assert_int_equal(q->samples[i].reuse, p->samples[i].reuse);
		assert_int_equal(q->samples[i].stime, 0);
		assert_int_equal(q->samples[i].coh, 0);
	}
	lp_profile_free(q);
	lp_profile_free(p);
	free(refs);
	free(path);
}

/* Every access sampled (rate 1), by hand: thread 0 reads bytes 0-3 of a
 * line, thread 1 writes bytes 8-15 (false sharing at thread 0's reuse of
 * bytes 0-3), thread 0 reads again, thread 1 writes bytes 0-3 (thread 0
 * never comes back: invalidated, unused). */
static void test_small_cases(void **state)
{
	struct lp_ref refs[] = {
		{ .addr = 0x1000, .size = 4, .pc = 0x10, .kind = LP_REF_READ, .tid = 0 },
		{ .addr = 0x2000, .size = 4, .pc = 0x11, .kind = LP_REF_READ, .tid = 1 },
		{ .addr = 0x1008, .size = 8, .pc = 0x20, .kind = LP_REF_WRITE, .tid = 1 },
		{ .addr = 0x1000, .size = 4, .pc = 0x12, .kind = LP_REF_READ, .tid = 0 },
		{ .addr = 0x1000, .size = 4, .pc = 0x21, .kind = LP_REF_WRITE, .tid = 1 },
	};
	struct lp_profile *p = lp_test_sample(refs, 5, 1, 0, NULL, 0);

	(void)state;
	assert_int_equal(p->n_samples, 5);
	/* sorted by time (each thread's own clock), then as added */
	const struct lp_sample *a = NULL, *b = NULL;
	for (size_t i = 0; i < 5; i++) {
		if (p->samples[i].stime == 0)
			a = &p->samples[i];
		if (p->samples[i].stime == 3)
			b = &p->samples[i];
	}
	assert_non_null(a);
	assert_non_null(b);
	assert_int_equal(a->coh, LP_COH_FALSE);
	assert_int_equal(a->wtid, 1);
	assert_int_equal(a->wpc, 0x20);
	assert_int_equal(a->reuse, 0);  /* thread 0's own clock: nothing between */
	assert_int_equal(a->sown, 2);   /* all threads': two accesses */
	assert_int_equal(a->sreuse, 1); /* thread 1's write came first */
	assert_int_equal(a->stid, 1);
	assert_int_equal(b->coh, LP_COH_UNUSED);
	assert_int_equal(b->wpc, 0x21);
	assert_int_equal(b->reuse, LP_REUSE_DANGLING);
	assert_int_equal(b->sreuse, 0);
	lp_profile_free(p);
}

static void test_mask(void **state)
{
	(void)state;
	/* 64-byte line 2 = [128, 192): one bit per byte */
	assert_int_equal(lp_share_mask(2, 6, 128, 128), 1);
	assert_int_equal(lp_share_mask(2, 6, 130, 133), 0x3c);
	assert_int_equal(lp_share_mask(2, 6, 100, 129), 3);         /* from the line before */
	assert_int_equal(lp_share_mask(2, 6, 190, 300), 3ull << 62); /* into the next */
	assert_int_equal(lp_share_mask(2, 6, 192, 200), 0);
	/* 256-byte lines: 4 bytes a bit */
	assert_int_equal(lp_share_mask(1, 8, 256, 263), 3);
	assert_int_equal(lp_share_mask(1, 8, 0, 1000), ~0ull);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mask),
		cmocka_unit_test(test_small_cases),
		cmocka_unit_test(test_shared_fields_match_brute_force),
		cmocka_unit_test(test_shared_round_trip),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
