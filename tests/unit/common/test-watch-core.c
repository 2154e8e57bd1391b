/* The watch-table core (common/watch-core.h) against an obviously correct
 * reference, an unordered list searched linearly, on random operation
 * sequences and on adversarial ones: every key in one probe run, runs that
 * wrap around the end of the table, a table filled to its limit, extreme
 * keys; and the invariant checker against tables broken on purpose. */
#include "lp-test.h"

#include "common/rng.h"

/* The core's asserts report to cmocka, so that a test can expect one. */
#define LP_WATCH_ASSERT(cond) mock_assert((int)(cond), #cond, __FILE__, __LINE__)
#include "common/watch-core.h"

/* ---- the reference: an unordered list ------------------------------------ */

struct ref_watch {
	uint64_t line, begin;
	uint32_t idx;
};

struct ref_list {
	struct ref_watch *v;
	size_t n;
};

static struct ref_watch *ref_find(struct ref_list *r, uint64_t line, uint32_t idx)
{
	for (size_t i = 0; i < r->n; i++)
		if (r->v[i].line == line && r->v[i].idx == idx)
			return &r->v[i];
	return NULL;
}

static void ref_insert(struct ref_list *r, uint64_t line, uint32_t idx, uint64_t begin)
{
	r->v = realloc(r->v, (r->n + 1) * sizeof(*r->v));
	assert_non_null(r->v);
	r->v[r->n++] = (struct ref_watch){ .line = line, .begin = begin, .idx = idx };
}

static void ref_remove(struct ref_list *r, struct ref_watch *w)
{
	*w = r->v[--r->n];
}

/* ---- the table under test, growing in malloc'd memory --------------------- */

static void grow(struct lp_watch_table *t)
{
	struct lp_watch *old = t->slot;
	struct lp_watch *mem = malloc(lp_watch_table_bytes(t->log2 + 1));

	assert_non_null(mem);
	lp_watch_table_move(t, mem, t->log2 + 1);
	free(old);
}

static void table_new(struct lp_watch_table *t, uint32_t log2)
{
	struct lp_watch *mem = malloc(lp_watch_table_bytes(log2));

	assert_non_null(mem);
	memset(mem, 0xa5, lp_watch_table_bytes(log2)); /* init must not rely on zeroed memory */
	lp_watch_table_init(t, mem, log2);
}

static void put(struct lp_watch_table *t, struct ref_list *r, uint64_t line, uint32_t idx,
		uint64_t begin)
{
	struct lp_watch *w;

	if (lp_watch_table_must_grow(t))
		grow(t);
	w = lp_watch_insert(t, line, idx);
	assert_non_null(w);
	assert_int_equal(w->line, line);
	assert_int_equal(w->idx, idx);
	assert_int_equal(t->state[w - t->slot], lp_watch_state(t, line, idx));
	w->begin = begin;
	w->pc = ~begin;
	ref_insert(r, line, idx, begin);
}

/* Both hold exactly the same watches, and the table's invariants hold. */
static void same(const struct lp_watch_table *t, struct ref_list *r)
{
	struct lp_watch *w;
	uint64_t pos = 0, walked = 0;

	assert_int_equal(lp_watch_table_check(t), 0);
	assert_int_equal(t->live, r->n);
	for (size_t i = 0; i < r->n; i++) {
		w = lp_watch_find(t, r->v[i].line, r->v[i].idx);
		assert_non_null(w);
		assert_int_equal(w->begin, r->v[i].begin);
		assert_int_equal(w->pc, ~r->v[i].begin);
	}
	while ((w = lp_watch_table_next(t, &pos))) {
		struct ref_watch *e = ref_find(r, w->line, w->idx);
		assert_non_null(e);
		assert_int_equal(e->begin, w->begin);
		walked++;
	}
	assert_int_equal(walked, r->n);
}

/* One StatCache step on (line, idx): end its watch if there is one (the
 * reference says whether), then watch it with probability 1/2. */
static void step(struct lp_watch_table *t, struct ref_list *r, struct lp_rng *rng, uint64_t line,
		 uint32_t idx, uint64_t now)
{
	struct ref_watch *e = ref_find(r, line, idx);
	struct lp_watch *w = lp_watch_find(t, line, idx);

	if (e) {
		assert_non_null(w);
		assert_int_equal(w->begin, e->begin);
		lp_watch_remove(t, w);
		ref_remove(r, e);
	} else {
		assert_null(w);
	}
	if (lp_rng_next(rng) & 1)
		put(t, r, line, idx, now);
}

static void run_random(uint64_t seed, uint64_t universe, uint32_t nidx, int wide, int steps,
		       int check_every)
{
	struct lp_watch_table t;
	struct ref_list r = { 0 };
	struct lp_rng rng;

	lp_rng_seed(&rng, seed);
	table_new(&t, 1); /* two slots: grows many times */
	for (int s = 0; s < steps; s++) {
		uint64_t x = lp_rng_next(&rng);
		uint64_t line = wide ? x : x % universe;
		uint32_t idx = (uint32_t)(lp_rng_next(&rng) % nidx);
		if (wide && (x & 3) == 0 && r.n) { /* revisit a watched line */
			line = r.v[x % r.n].line;
			idx = r.v[x % r.n].idx;
		}
		step(&t, &r, &rng, line, idx, (uint64_t)s);
		if (s % check_every == 0) /* same() is quadratic in the watches */
			same(&t, &r);
	}
	same(&t, &r);
	/* end: every watch dangles, then the table is cleared */
	lp_watch_table_clear(&t);
	assert_int_equal(t.live, 0);
	assert_int_equal(lp_watch_table_check(&t), 0);
	for (size_t i = 0; i < r.n; i++)
		assert_null(lp_watch_find(&t, r.v[i].line, r.v[i].idx));
	free(t.slot);
	free(r.v);
}

static void test_random_small_universe(void **state)
{
	/* many hits and removals: lines 0..99 of three line sizes */
	for (uint64_t seed = 1; seed <= 4; seed++)
		run_random(seed, 100, 3, 0, 20000, 97);
}

static void test_random_wide_keys(void **state)
{
	/* any 64-bit line, revisits a quarter of the time */
	for (uint64_t seed = 10; seed <= 12; seed++)
		run_random(seed, 0, 256, 1, 8000, 997);
}

static void test_random_strided(void **state)
{
	/* array sweeps: lines a multiple of a large power of two apart */
	for (uint64_t seed = 20; seed <= 22; seed++)
		run_random(seed, 1ull << 20, 1, 0, 8000, 997);
}

/* n distinct keys whose home is `home` in a table of 2^log2 slots. */
static void keys_with_home(uint64_t *out, size_t n, uint32_t log2, uint64_t home, uint32_t idx)
{
	struct lp_watch dummy;
	struct lp_watch_table probe = { .slot = &dummy, .log2 = log2 };
	size_t k = 0;

	for (uint64_t line = 0; k < n; line++)
		if (lp_watch_home(&probe, line, idx) == home)
			out[k++] = line;
}

/* Fill one run from home with n colliding keys, then remove them in a
 * random order, checking against the reference after each step. */
static void collide(uint32_t log2, uint64_t home, size_t n, uint64_t seed)
{
	struct lp_watch_table t;
	struct ref_list r = { 0 };
	struct lp_rng rng;
	uint64_t *keys = malloc(n * sizeof(*keys));

	assert_non_null(keys);
	lp_rng_seed(&rng, seed);
	keys_with_home(keys, n, log2, home, 0);
	table_new(&t, log2);
	for (size_t i = 0; i < n; i++) {
		put(&t, &r, keys[i], 0, i);
		assert_int_equal(t.log2, log2); /* no growth: one run */
	}
	same(&t, &r);
	/* keys of the same home that are not there miss, over the whole run */
	uint64_t absent[4];
	keys_with_home(absent, 4, log2, home, 1);
	for (int i = 0; i < 4; i++)
		assert_null(lp_watch_find(&t, absent[i], 1));
	while (r.n) {
		struct ref_watch *e = &r.v[lp_rng_next(&rng) % r.n];
		struct lp_watch *w = lp_watch_find(&t, e->line, e->idx);
		assert_non_null(w);
		lp_watch_remove(&t, w);
		ref_remove(&r, e);
		if (r.n % 8 == 0 || r.n < 16) /* the full check is O(cap x run) */
			same(&t, &r);
	}
	same(&t, &r);
	free(t.slot);
	free(r.v);
	free(keys);
}

static void test_collisions_one_run(void **state)
{
	/* half the table in one run from slot 100 */
	collide(10, 100, 512, 1);
}

static void test_collisions_wrap_around(void **state)
{
	/* runs that start at the last slots and continue at slot 0 */
	collide(6, 63, 32, 2);
	collide(6, 60, 32, 3);
	collide(4, 15, 8, 4);
}

/* Interleaved runs from neighbouring homes across the wrap: removal must
 * move an entry back only when its home allows it. */
static void test_interleaved_runs_across_the_end(void **state)
{
	struct lp_watch_table t;
	struct ref_list r = { 0 };
	struct lp_rng rng;
	uint64_t k[4][6];
	const uint64_t homes[4] = { 61, 62, 63, 0 };

	lp_rng_seed(&rng, 5);
	table_new(&t, 6);
	for (int h = 0; h < 4; h++)
		keys_with_home(k[h], 6, 6, homes[h], 2);
	for (int i = 0; i < 6; i++)
		for (int h = 3; h >= 0; h--)
			put(&t, &r, k[h][i], 2, (uint64_t)(10 * h + i));
	same(&t, &r);
	for (int round = 0; round < 200; round++) {
		int h = (int)(lp_rng_next(&rng) % 4), i = (int)(lp_rng_next(&rng) % 6);
		step(&t, &r, &rng, k[h][i], 2, (uint64_t)(1000 + round));
		same(&t, &r);
	}
	free(t.slot);
	free(r.v);
}

/* A walk that removes some of the watches it is given visits each watch
 * once, whatever the runs and wherever they wrap. */
static void walk_removing(struct lp_watch_table *t, struct ref_list *r, struct lp_rng *rng)
{
	struct lp_watch_walk k;
	struct lp_watch *w;
	uint64_t visits = 0, n = r->n;
	uint8_t *seen = calloc(n ? n : 1, 1);
	struct ref_list keep = { 0 };

	assert_non_null(seen);
	lp_watch_walk_init(t, &k);
	while ((w = lp_watch_walk_next(t, &k))) {
		struct ref_watch *e = ref_find(r, w->line, w->idx);
		assert_non_null(e);
		assert_int_equal(seen[e - r->v], 0);
		seen[e - r->v] = 1;
		visits++;
		if (lp_rng_next(rng) & 1)
			lp_watch_remove(t, w);
		else
			ref_insert(&keep, e->line, e->idx, e->begin);
	}
	assert_int_equal(visits, n);
	free(r->v);
	*r = keep;
	same(t, r);
	free(seen);
}

static void test_walk_removing(void **state)
{
	struct lp_rng rng;

	lp_rng_seed(&rng, 7);
	for (int round = 0; round < 40; round++) {
		struct lp_watch_table t;
		struct ref_list r = { 0 };
		uint32_t log2 = 3 + (uint32_t)(round % 5);
		uint64_t cap = 1ull << log2, keys[8];
		table_new(&t, log2);
		/* runs from the last slots, wrapping to slot 0, and random keys */
		keys_with_home(keys, 3, log2, cap - 1, 0);
		for (int i = 0; i < 3; i++)
			put(&t, &r, keys[i], 0, (uint64_t)i);
		keys_with_home(keys, 2, log2, 0, 1);
		for (int i = 0; i < 2; i++)
			put(&t, &r, keys[i], 1, (uint64_t)(10 + i));
		while (2 * (t.live + 1) <= cap && (lp_rng_next(&rng) & 3))
			put(&t, &r, lp_rng_next(&rng), 2, 100 + t.live);
		same(&t, &r);
		walk_removing(&t, &r, &rng);
		walk_removing(&t, &r, &rng); /* again, on what is left */
		free(t.slot);
		free(r.v);
	}
}

static void test_full_table(void **state)
{
	struct lp_watch_table t;
	struct ref_list r = { 0 };
	struct lp_rng rng;

	lp_rng_seed(&rng, 6);
	table_new(&t, 5);
	/* up to the limit: cap / 2 watches, then must_grow */
	for (uint64_t i = 0; i < 16; i++) {
		assert_false(lp_watch_table_must_grow(&t));
		put(&t, &r, lp_rng_next(&rng), 0, i);
	}
	assert_int_equal(t.log2, 5);
	assert_true(lp_watch_table_must_grow(&t));
	same(&t, &r);
	/* lookups of absent keys end at a full table's empty half */
	for (int i = 0; i < 1000; i++)
		assert_null(lp_watch_find(&t, lp_rng_next(&rng), 0));
	/* inserting past the limit is a programmer error */
	expect_assert_failure(lp_watch_insert(&t, 12345, 0));
	assert_int_equal(t.live, 16);
	/* removing one makes room again */
	lp_watch_remove(&t, lp_watch_find(&t, r.v[3].line, 0));
	ref_remove(&r, &r.v[3]);
	assert_false(lp_watch_table_must_grow(&t));
	put(&t, &r, 12345, 0, 99);
	same(&t, &r);
	/* and the next one grows it, keeping everything */
	put(&t, &r, 54321, 0, 100);
	assert_int_equal(t.log2, 6);
	same(&t, &r);
	free(t.slot);
	free(r.v);
}

static void test_extreme_keys(void **state)
{
	struct lp_watch_table t;
	struct ref_list r = { 0 };
	const uint64_t lines[] = { 0, 1, UINT64_MAX, UINT64_MAX - 1, 1ull << 63, 1ull << 58 };

	table_new(&t, 3);
	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		put(&t, &r, lines[i], 0, i);
		put(&t, &r, lines[i], 255, 100 + i);
	}
	same(&t, &r);
	/* same line, other index: a different key */
	assert_null(lp_watch_find(&t, 0, 1));
	assert_null(lp_watch_find(&t, UINT64_MAX, 254));
	/* indexes 64 apart hash alike (idx << 58 drops its top bits): only
	 * the key comparison tells them apart */
	assert_int_equal(lp_watch_home(&t, 77, 1), lp_watch_home(&t, 77, 65));
	assert_int_equal(lp_watch_state(&t, 77, 1), lp_watch_state(&t, 77, 65));
	put(&t, &r, 77, 1, 200);
	assert_null(lp_watch_find(&t, 77, 65));
	put(&t, &r, 77, 65, 201);
	put(&t, &r, 77, 129, 202);
	same(&t, &r);
	lp_watch_remove(&t, lp_watch_find(&t, 77, 65));
	ref_remove(&r, ref_find(&r, 77, 65));
	assert_null(lp_watch_find(&t, 77, 65));
	same(&t, &r);
	free(t.slot);
	free(r.v);
}

static void test_duplicate_key_is_refused(void **state)
{
	struct lp_watch_table t;

	table_new(&t, 4);
	lp_watch_insert(&t, 42, 1)->begin = 7;
	expect_assert_failure(lp_watch_insert(&t, 42, 1));
	assert_int_equal(t.live, 1);
	assert_int_equal(lp_watch_table_check(&t), 0);
	free(t.slot);
}

/* The checker finds each broken invariant. */
static void test_check_finds_broken_tables(void **state)
{
	struct lp_watch_table t;
	uint64_t k[3];
	struct lp_watch *w;

	keys_with_home(k, 3, 4, 5, 0);
	table_new(&t, 4);
	for (int i = 0; i < 3; i++)
		lp_watch_insert(&t, k[i], 0);
	assert_int_equal(lp_watch_table_check(&t), 0);
	/* I1: live wrong */
	t.live++;
	assert_int_equal(lp_watch_table_check(&t), 1);
	t.live--;
	/* I1: a state byte that is not its key's */
	uint8_t good = t.state[6];
	t.state[6] = (uint8_t)(0x80 | ((good + 1) & 0x7f));
	assert_int_equal(lp_watch_table_check(&t), 1);
	t.state[6] = good;
	/* I4: a hole in the run (slot 6 emptied without shifting slot 7) */
	assert_int_not_equal(t.state[6], 0);
	t.state[6] = 0;
	t.live--;
	assert_int_equal(lp_watch_table_check(&t), 4);
	t.state[6] = good;
	t.live++;
	assert_int_equal(lp_watch_table_check(&t), 0);
	/* I3: a second copy of a key further along its run */
	w = &t.slot[8];
	assert_int_equal(t.state[8], 0);
	*w = t.slot[5];
	t.state[8] = t.state[5];
	t.live++;
	assert_int_equal(lp_watch_table_check(&t), 3);
	t.state[8] = 0;
	t.live--;
	/* I2: more than half full */
	for (uint64_t i = 0; i < 16; i++)
		t.state[i] = lp_watch_state(&t, t.slot[i].line, t.slot[i].idx);
	t.live = 16;
	assert_int_equal(lp_watch_table_check(&t), 2);
	free(t.slot);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_random_small_universe),
		cmocka_unit_test(test_random_wide_keys),
		cmocka_unit_test(test_random_strided),
		cmocka_unit_test(test_collisions_one_run),
		cmocka_unit_test(test_collisions_wrap_around),
		cmocka_unit_test(test_interleaved_runs_across_the_end),
		cmocka_unit_test(test_walk_removing),
		cmocka_unit_test(test_full_table),
		cmocka_unit_test(test_extreme_keys),
		cmocka_unit_test(test_duplicate_key_is_refused),
		cmocka_unit_test(test_check_finds_broken_tables),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
