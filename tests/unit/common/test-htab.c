/* Tests of the library's hash table (common/htab.h) against a slow,
 * obviously correct reference (a list searched linearly), and of the
 * growable array (common/array.h). */
#include "lp-test.h"

#include "common/array.h"
#include "common/error.h"
#include "common/htab.h"
#include "common/rng.h"

/* The reference: every key once, in insertion order. */
struct ref {
	uint64_t *key, *val;
	size_t n, cap_k, cap_v;
};

static uint64_t *ref_find(struct ref *r, uint64_t key)
{
	for (size_t i = 0; i < r->n; i++)
		if (r->key[i] == key)
			return &r->val[i];
	return NULL;
}

static uint64_t *ref_get(struct ref *r, uint64_t key, int *isnew)
{
	uint64_t *v = ref_find(r, key);

	*isnew = !v;
	if (v)
		return v;
	assert_int_equal(LP_ARRAY_RESERVE(r->key, r->cap_k, r->n + 1, 16, "keys"), 0);
	assert_int_equal(LP_ARRAY_RESERVE(r->val, r->cap_v, r->n + 1, 16, "values"), 0);
	r->key[r->n] = key;
	return &r->val[r->n++];
}

/* Insert or update every key of keys[] in both, then compare them whole. */
static void apply_and_compare(struct lp_htab *t, struct ref *r, const uint64_t *keys, size_t n,
			      struct lp_rng *rng)
{
	assert_int_equal(lp_htab_reserve(t, n), 0);
	for (size_t i = 0; i < n; i++) {
		int a, b;
		uint64_t *x = lp_htab_get(t, keys[i], &a), *y = ref_get(r, keys[i], &b);

		assert_int_equal(a, b);
		if (!a)
			assert_true(*x == *y);
		*x = *y = lp_rng_next(rng);
	}
	assert_int_equal(lp_htab_check(t), 0);
	assert_int_equal(t->n + (size_t)t->has_top, r->n);
	for (size_t i = 0; i < r->n; i++) {
		uint64_t *x = lp_htab_find(t, r->key[i]);

		assert_non_null(x);
		assert_true(*x == r->val[i]);
	}
	/* keys never inserted are not found */
	for (int i = 0; i < 200; i++) {
		uint64_t k = lp_rng_next(rng);

		if (!ref_find(r, k))
			assert_null(lp_htab_find(t, k));
	}
	/* the load factor reserve promises */
	assert_true(t->n * 4 <= (t->mask + 1) * 3);
}

static void run_against_reference(uint64_t (*key_of)(struct lp_rng *, size_t), uint64_t seed)
{
	struct lp_htab t;
	struct ref r = { 0 };
	struct lp_rng rng;
	uint64_t keys[257];

	lp_rng_seed(&rng, seed);
	assert_int_equal(lp_htab_init(&t, 2), 0);
	for (size_t batch = 0; batch < 40; batch++) {
		size_t n = 1 + lp_rng_below(&rng, 256);

		for (size_t i = 0; i < n; i++)
			keys[i] = key_of(&rng, batch * 256 + i);
		apply_and_compare(&t, &r, keys, n, &rng);
	}
	lp_htab_release(&t);
	free(r.key);
	free(r.val);
}

static uint64_t key_random(struct lp_rng *rng, size_t i) { return lp_rng_next(rng); }
/* few distinct keys: mostly updates */
static uint64_t key_small_range(struct lp_rng *rng, size_t i) { return lp_rng_below(rng, 300); }
/* consecutive lines, the common case of a trace */
static uint64_t key_sequential(struct lp_rng *rng, size_t i) { return i / 3; }
/* large power-of-two strides, and the keys at the ends of the range
 * (UINT64_MAX is the empty key, kept outside the array) */
static uint64_t key_strided_and_extremes(struct lp_rng *rng, size_t i)
{
	switch (lp_rng_below(rng, 8)) {
	case 0:
		return UINT64_MAX;
	case 1:
		return 0;
	case 2:
		return UINT64_MAX - 1;
	default:
		return (uint64_t)lp_rng_below(rng, 4096) << 40;
	}
}

static void test_random_keys(void **state) { run_against_reference(key_random, 1); }
static void test_small_key_range(void **state) { run_against_reference(key_small_range, 2); }
static void test_sequential_keys(void **state) { run_against_reference(key_sequential, 3); }
static void test_strided_and_extreme_keys(void **state) { run_against_reference(key_strided_and_extremes, 4); }

/* Keys that all hash to one home slot of a 1024-slot table: one long probe
 * chain that wraps around the end of the array. */
static void test_one_probe_chain(void **state)
{
	struct lp_htab t;
	struct ref r = { 0 };
	struct lp_rng rng;
	uint64_t keys[600];
	size_t n = 0;

	lp_rng_seed(&rng, 5);
	assert_int_equal(lp_htab_init(&t, 1024), 0);
	for (uint64_t k = 0; n < 600; k++)
		if (lp_htab_pos(&t, k) == 1020)
			keys[n++] = k;
	apply_and_compare(&t, &r, keys, 600, &rng);
	assert_int_equal(t.mask + 1, 1024); /* no growth: the chain was real */
	lp_htab_release(&t);
	free(r.key);
	free(r.val);
}

/* The check finds each broken invariant. */
static void test_check_finds_damage(void **state)
{
	struct lp_htab t;
	int isnew;
	size_t home;

	assert_int_equal(lp_htab_init(&t, 64), 0);
	assert_int_equal(lp_htab_reserve(&t, 3), 0);
	*lp_htab_get(&t, 7, &isnew) = 1;
	assert_int_equal(lp_htab_check(&t), 0);
	t.n++;
	assert_int_equal(lp_htab_check(&t), LP_EINVAL);
	assert_non_null(strstr(lp_errmsg(), "counted"));
	t.n--;
	/* a key moved past an empty slot cannot be found from its home */
	home = lp_htab_pos(&t, 7);
	t.s[(home + 2) & t.mask] = t.s[home];
	t.s[home].key = LP_HTAB_EMPTY;
	assert_int_equal(lp_htab_check(&t), LP_EINVAL);
	assert_non_null(strstr(lp_errmsg(), "cut off"));
	lp_htab_release(&t);
}

static void test_array_grows_and_keeps_contents(void **state)
{
	uint32_t *v = NULL;
	size_t cap = 0;

	assert_int_equal(LP_ARRAY_RESERVE(v, cap, 1, 4, "numbers"), 0);
	assert_int_equal(cap, 4);
	for (uint32_t i = 0; i < 1000; i++) {
		assert_int_equal(LP_ARRAY_RESERVE(v, cap, i + 1, 4, "numbers"), 0);
		v[i] = i * 7;
	}
	assert_int_equal(cap, 1024); /* doubling from 4 */
	for (uint32_t i = 0; i < 1000; i++)
		assert_int_equal(v[i], i * 7);
	/* a limit: the capacity stops at it, and a need beyond it fails */
	assert_int_equal(LP_ARRAY_RESERVE_MAX(v, cap, 1500, 4, 1500, "numbers"), 0);
	assert_int_equal(cap, 1500);
	assert_int_equal(LP_ARRAY_RESERVE_MAX(v, cap, 1501, 4, 1500, "numbers"), LP_ELIMIT);
	assert_string_equal(lp_errmsg(), "more than 1500 numbers");
	assert_int_equal(cap, 1500);
	free(v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_random_keys),
		cmocka_unit_test(test_small_key_range),
		cmocka_unit_test(test_sequential_keys),
		cmocka_unit_test(test_strided_and_extreme_keys),
		cmocka_unit_test(test_one_probe_chain),
		cmocka_unit_test(test_check_finds_damage),
		cmocka_unit_test(test_array_grows_and_keeps_contents),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
