/* The trace-mode merge (src/lib/collect/merge.c): batches of several
 * threads' numbered records, arriving in a random order, come out in the
 * order of their numbers, checked against a sort of all records; numbers
 * that never arrive are skipped at the end. */
#include "lp-test.h"

#include "collect/merge.h"
#include "common/rng.h"

struct sink {
	uint64_t *addr;
	size_t n;
};

static int collect(void *ctx, const struct lp_ref *refs, size_t n)
{
	struct sink *s = ctx;

	for (size_t i = 0; i < n; i++)
		s->addr[s->n++] = refs[i].addr;
	return 0;
}

/* total records numbered 0..total-1, dealt to threads at random, cut into
 * batches of random length, the batches of all threads shuffled (each
 * thread's own in order, as one connection delivers them); the record
 * with number lost (if < total) never arrives. */
static void run(uint64_t seed, size_t total, int threads, uint64_t lost)
{
	struct lp_rng rng;
	struct lp_msg_ref *per[8];
	size_t nper[8] = { 0 }, sent[8] = { 0 };
	struct lp_merge m = { 0 };
	struct sink s = { .addr = calloc(total, sizeof(uint64_t)) };
	size_t left = total - (lost < total);

	lp_rng_seed(&rng, seed);
	for (int t = 0; t < threads; t++)
		per[t] = calloc(total, sizeof(struct lp_msg_ref));
	for (uint64_t q = 0; q < total; q++) {
		int t = (int)lp_rng_below(&rng, (uint64_t)threads);
		if (q != lost)
			per[t][nper[t]++] = (struct lp_msg_ref){ .addr = 1000 + q, .thread = (uint32_t)t, .seq = q };
	}
	while (left) {
		int t = (int)lp_rng_below(&rng, (uint64_t)threads);
		size_t k = 1 + lp_rng_below(&rng, 50);
		if (sent[t] == nper[t])
			continue;
		if (k > nper[t] - sent[t])
			k = nper[t] - sent[t];
		assert_int_equal(lp_merge_add(&m, per[t] + sent[t], k, collect, &s), 0);
		sent[t] += k;
		left -= k;
		if (threads == 1 && lost >= total)
			assert_int_equal(m.held, 0); /* one thread in order: straight through */
		/* what came out so far is a prefix of the numbers */
		for (size_t i = 0; i < s.n; i++)
			assert_int_equal(s.addr[i], 1000 + i);
	}
	assert_int_equal(lp_merge_drain(&m, 1, collect, &s), 0);
	assert_int_equal(s.n, total - (lost < total));
	for (size_t i = 0, q = 0; i < s.n; i++, q++) {
		if (q == lost)
			q++;
		assert_int_equal(s.addr[i], 1000 + q);
	}
	assert_int_equal(m.held, 0);
	lp_merge_release(&m);
	for (int t = 0; t < threads; t++)
		free(per[t]);
	free(s.addr);
}

static void test_merge_order(void **state)
{
	(void)state;
	for (uint64_t seed = 1; seed <= 40; seed++)
		run(seed, 200 + 50 * seed, 1 + (int)(seed % 8), seed % 3 ? UINT64_MAX : 17 * seed);
	run(99, 5000, 1, UINT64_MAX); /* one thread: nothing is ever held */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_merge_order),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
