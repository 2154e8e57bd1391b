/* The radix sorts (common/sort.c) against qsort() on random and
 * adversarial arrays (the pairs against a stable order): every length around the small-array cut, keys that
 * share all but one byte, all equal, descending, and doubles of every
 * sign and magnitude with the infinities. */
#include "lp-test.h"

#include "common/rng.h"
#include "common/sort.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* kind 0: any 64 bits; 1: small numbers; 2: one byte differs; 3: all
 * equal; 4: descending */
static uint64_t key(struct lp_rng *r, int kind, size_t i, size_t n)
{
	switch (kind) {
	case 0: return lp_rng_next(r);
	case 1: return lp_rng_below(r, 1000);
	case 2: return 0x1234567800000000ull | (lp_rng_below(r, 256) << 16);
	case 3: return 42;
	default: return (uint64_t)(n - i) << 20;
	}
}

static void test_u64(void **state)
{
	struct lp_rng r;
	const size_t lens[] = { 0, 1, 2, 3, LP_SORT_SMALL - 1, LP_SORT_SMALL, LP_SORT_SMALL + 1, 300, 4097, 70000 };

	(void)state;
	lp_rng_seed(&r, 1);
	for (int kind = 0; kind < 5; kind++)
		for (size_t l = 0; l < sizeof(lens) / sizeof(lens[0]); l++) {
			size_t n = lens[l];
			uint64_t *a = malloc((n + 1) * sizeof(*a)), *b = malloc((n + 1) * sizeof(*b));
			assert_non_null(a);
			assert_non_null(b);
			for (size_t i = 0; i < n; i++)
				a[i] = b[i] = key(&r, kind, i, n);
			lp_sort_u64(a, n);
			qsort(b, n, sizeof(*b), cmp_u64);
			if (n)
				assert_memory_equal(a, b, n * sizeof(*a));
			free(a);
			free(b);
		}
}

static double value(struct lp_rng *r, size_t i)
{
	static const double special[] = { 0.0, -0.0, INFINITY, -INFINITY, 1e-310, -1e-310, 1.0, -1.0 };
	double m = ldexp(lp_rng_double(r), (int)lp_rng_below(r, 200) - 100);

	if (i % 7 == 0)
		return special[lp_rng_below(r, 8)];
	return lp_rng_below(r, 2) ? m : -m;
}

static void test_double(void **state)
{
	struct lp_rng r;
	const size_t lens[] = { 0, 1, 5, LP_SORT_SMALL, 1000, 50001 };

	(void)state;
	lp_rng_seed(&r, 2);
	for (size_t l = 0; l < sizeof(lens) / sizeof(lens[0]); l++) {
		size_t n = lens[l];
		double *a = malloc((n + 1) * sizeof(*a)), *b = malloc((n + 1) * sizeof(*b));
		assert_non_null(a);
		assert_non_null(b);
		for (size_t i = 0; i < n; i++)
			a[i] = b[i] = value(&r, i);
		lp_sort_double(a, n);
		qsort(b, n, sizeof(*b), cmp_double);
		/* equal as numbers (qsort may order -0.0 and 0.0 either way) */
		for (size_t i = 0; i < n; i++)
			assert_true(a[i] == b[i]);
		for (size_t i = 1; i < n; i++) /* and -0.0 first */
			assert_false(a[i - 1] == 0 && a[i] == 0 && !signbit(a[i - 1]) && signbit(a[i]));
		free(a);
		free(b);
	}
}

/* by key, then by the position before the sort: a stable order */
static int cmp_pair_stable(const void *a, const void *b)
{
	const struct lp_sort_pair *x = a, *y = b;
	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->val < y->val ? -1 : x->val > y->val;
}

static void test_pairs(void **state)
{
	struct lp_rng r;
	const size_t lens[] = { 0, 1, 7, LP_SORT_SMALL - 1, LP_SORT_SMALL, 999, 30000 };

	(void)state;
	lp_rng_seed(&r, 3);
	for (int kind = 0; kind < 5; kind++)
		for (size_t l = 0; l < sizeof(lens) / sizeof(lens[0]); l++) {
			size_t n = lens[l];
			struct lp_sort_pair *a = malloc((n + 1) * sizeof(*a)), *b = malloc((n + 1) * sizeof(*b));
			assert_non_null(a);
			assert_non_null(b);
			/* few distinct keys (kinds 1 to 3) test the stability */
			for (size_t i = 0; i < n; i++)
				a[i] = b[i] = (struct lp_sort_pair){ key(&r, kind, i, n), i };
			assert_int_equal(lp_sort_pairs(a, n), 0);
			qsort(b, n, sizeof(*b), cmp_pair_stable);
			for (size_t i = 0; i < n; i++) {
				assert_true(a[i].key == b[i].key);
				assert_true(a[i].val == b[i].val);
			}
			free(a);
			free(b);
		}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_u64),
		cmocka_unit_test(test_double),
		cmocka_unit_test(test_pairs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
