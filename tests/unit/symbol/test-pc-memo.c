/* Tests of the per-pc memo of the symbol lookups (symbol/pc-memo.h)
 * against a slow, obviously correct reference: a list searched linearly. */
#include "lp-test.h"

#include "common/rng.h"
#include "symbol/pc-memo.h"

/* An entry of an odd size, so that entries are not word-aligned copies. */
struct answer {
	uint64_t a;
	char tag[5];
};

struct ref {
	uint64_t key[4096];
	struct answer ans[4096];
	int found[4096];
	size_t n;
};

static int ref_find(const struct ref *r, uint64_t key, struct answer *out, int *found)
{
	for (size_t i = 0; i < r->n; i++)
		if (r->key[i] == key) {
			*out = r->ans[i];
			*found = r->found[i];
			return 1;
		}
	return 0;
}

/* What a lookup "computes" for key: a function of the key alone. */
static struct answer compute(uint64_t key, int *found)
{
	struct answer a = { .a = key * 0x9e3779b97f4a7c15ull };

	memcpy(a.tag, &key, sizeof(a.tag));
	*found = (key % 3) != 0;
	return a;
}

static uint64_t draw_key(struct lp_rng *rng, size_t i)
{
	switch (i % 5) {
	case 0: return UINT64_MAX - lp_rng_next(rng) % 3; /* the table's empty key and its neighbours */
	case 1: return lp_rng_next(rng) % 64;             /* small, repeated */
	case 2: return 0x400000 + 16 * (lp_rng_next(rng) % 2000); /* pcs of one text */
	default: return lp_rng_next(rng);
	}
}

/* The memo's use in the symbol library: find, else compute and add. Every
 * answer equals the reference's, and the memo remembers exactly the keys
 * the reference holds. */
static void test_against_reference(void **state)
{
	static struct ref r;
	struct lp_pc_memo m;
	struct lp_rng rng;
	size_t hits = 0;

	(void)state;
	lp_rng_seed(&rng, 17);
	lp_pc_memo_init(&m, sizeof(struct answer), 4);
	r.n = 0;
	for (size_t i = 0; i < 20000 && r.n < 4096; i++) {
		uint64_t key = draw_key(&rng, i);
		struct answer got, want;
		int gf, wf;

		if (lp_pc_memo_find(&m, key, &got, &gf)) {
			assert_true(ref_find(&r, key, &want, &wf));
			assert_memory_equal(&got, &want, sizeof(got));
			assert_int_equal(gf, wf);
			hits++;
			continue;
		}
		assert_false(ref_find(&r, key, &want, &wf));
		got = compute(key, &gf);
		assert_int_equal(lp_pc_memo_add(&m, key, &got, gf), 0);
		r.key[r.n] = key;
		r.ans[r.n] = got;
		r.found[r.n++] = gf;
	}
	assert_true(hits > 1000);
	assert_int_equal(m.n, r.n);
	assert_int_equal(lp_htab_check(&m.idx), 0);
	/* every key, after all the growth */
	for (size_t i = 0; i < r.n; i++) {
		struct answer got;
		int gf;

		assert_true(lp_pc_memo_find(&m, r.key[i], &got, &gf));
		assert_memory_equal(&got, &r.ans[i], sizeof(got));
		assert_int_equal(gf, r.found[i]);
	}
	lp_pc_memo_release(&m);
}

/* An empty memo (nothing allocated yet) and a released one answer nothing;
 * a released memo can be used again. */
static void test_empty_and_released(void **state)
{
	struct lp_pc_memo m;
	struct answer a = { .a = 7 }, got;
	int found;

	(void)state;
	lp_pc_memo_init(&m, sizeof(a), 0);
	assert_false(lp_pc_memo_find(&m, 0, &got, &found));
	assert_false(lp_pc_memo_find(&m, UINT64_MAX, &got, &found));
	assert_int_equal(lp_pc_memo_add(&m, 42, &a, 0), 0);
	assert_true(lp_pc_memo_find(&m, 42, &got, &found));
	assert_int_equal(found, 0);
	assert_true(got.a == 7);
	lp_pc_memo_release(&m);
	assert_false(lp_pc_memo_find(&m, 42, &got, &found));
	assert_int_equal(lp_pc_memo_add(&m, 42, &a, 1), 0);
	assert_true(lp_pc_memo_find(&m, 42, &got, &found));
	assert_int_equal(found, 1);
	lp_pc_memo_release(&m);
	lp_pc_memo_release(&m); /* twice: still fine */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_against_reference),
		cmocka_unit_test(test_empty_and_released),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
