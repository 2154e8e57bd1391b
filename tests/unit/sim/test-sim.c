/* The cache simulator against a brute-force reference written as simply as
 * possible: arrays of ways with timestamps, linear scans, the same
 * documented victim rules (lowest invalid way first; random = one
 * lp_rng_below(ways) draw per miss in a full set). */
#include "lp-test.h"

#include <locprof/sim.h>

#include "common/rng.h"

/* ---- the reference ------------------------------------------------------ */
struct ref_cache {
	uint64_t sets, ways, clock;
	int policy; /* 0 lru, 1 fifo, 2 random, 3 plru */
	uint64_t *tag;
	int *valid;
	uint64_t *used, *inserted;
	int *tree; /* per set: ways entries, node 1..ways-1 */
	struct lp_rng rng;
};

static int policy_num(const char *p)
{
	return !strcmp(p, "lru") ? 0 : !strcmp(p, "fifo") ? 1 : !strcmp(p, "random") ? 2 : 3;
}

static void ref_init(struct ref_cache *r, const struct lp_cache_spec *s, uint64_t seed)
{
	uint64_t lines = s->size / s->line;

	memset(r, 0, sizeof(*r));
	r->ways = s->assoc ? s->assoc : lines;
	r->sets = lines / r->ways;
	r->policy = policy_num(s->policy);
	r->tag = calloc(lines, sizeof(uint64_t));
	r->valid = calloc(lines, sizeof(int));
	r->used = calloc(lines, sizeof(uint64_t));
	r->inserted = calloc(lines, sizeof(uint64_t));
	r->tree = calloc(lines, sizeof(int));
	lp_rng_seed(&r->rng, seed);
}

static void ref_release(struct ref_cache *r)
{
	free(r->tag);
	free(r->valid);
	free(r->used);
	free(r->inserted);
	free(r->tree);
}

/* Point every tree node on w's path away from w, halving the range. */
static void ref_tree_touch(struct ref_cache *r, int *tree, uint64_t w)
{
	uint64_t lo = 0, hi = r->ways, node = 1;

	while (hi - lo > 1) {
		uint64_t mid = (lo + hi) / 2;
		if (w < mid) {
			tree[node] = 1;
			hi = mid;
			node = 2 * node;
		} else {
			tree[node] = 0;
			lo = mid;
			node = 2 * node + 1;
		}
	}
}

static uint64_t ref_tree_victim(struct ref_cache *r, int *tree)
{
	uint64_t lo = 0, hi = r->ways, node = 1;

	while (hi - lo > 1) {
		uint64_t mid = (lo + hi) / 2;
		if (tree[node] == 0) {
			hi = mid;
			node = 2 * node;
		} else {
			lo = mid;
			node = 2 * node + 1;
		}
	}
	return lo;
}

static int ref_access(struct ref_cache *r, uint64_t line)
{
	uint64_t set = line % r->sets, base = set * r->ways, v = UINT64_MAX;

	r->clock++;
	for (uint64_t w = 0; w < r->ways; w++) {
		if (r->valid[base + w] && r->tag[base + w] == line) {
			r->used[base + w] = r->clock;
			if (r->policy == 3)
				ref_tree_touch(r, r->tree + base, w);
			return 1;
		}
	}
	for (uint64_t w = 0; w < r->ways && v == UINT64_MAX; w++)
		if (!r->valid[base + w])
			v = w;
	if (v == UINT64_MAX) {
		switch (r->policy) {
		case 0:
		case 1:
			v = 0;
			for (uint64_t w = 1; w < r->ways; w++) {
				uint64_t *t = r->policy == 0 ? r->used : r->inserted;
				if (t[base + w] < t[base + v])
					v = w;
			}
			break;
		case 2:
			v = lp_rng_below(&r->rng, r->ways);
			break;
		default:
			v = ref_tree_victim(r, r->tree + base);
		}
	}
	r->valid[base + v] = 1;
	r->tag[base + v] = line;
	r->used[base + v] = r->inserted[base + v] = r->clock;
	if (r->policy == 3)
		ref_tree_touch(r, r->tree + base, v);
	return 0;
}

/* ---- traces -------------------------------------------------------------- */
/* Lines with some locality: a mix of a hot region, strided sweeps and
 * uniform noise over a footprint a few times the cache. */
static uint64_t *make_lines(size_t n, uint64_t footprint, uint64_t seed)
{
	struct lp_rng rng;
	uint64_t *v = malloc(n * sizeof(*v)), pos = 0;

	lp_rng_seed(&rng, seed);
	for (size_t i = 0; i < n; i++) {
		uint64_t k = lp_rng_below(&rng, 10);
		if (k < 4)
			v[i] = lp_rng_below(&rng, footprint / 8 + 1);
		else if (k < 7)
			v[i] = (pos += 1 + lp_rng_below(&rng, 3)) % footprint;
		else
			v[i] = lp_rng_below(&rng, footprint);
		v[i] += 1000; /* not starting at line 0 */
	}
	return v;
}

static void check_spec(const char *text, uint64_t seed, size_t n)
{
	struct lp_cache_spec spec;
	struct lp_cache *c;
	struct ref_cache r;
	uint64_t lines, *trace, *missed, acc, mis;
	uint8_t *hit;
	size_t nm, want_m = 0, j = 0;

	assert_int_equal(lp_cache_spec_parse(&spec, text), 0);
	assert_int_equal(lp_cache_new(&c, &spec, seed), 0);
	ref_init(&r, &spec, seed);
	lines = spec.size / spec.line;
	trace = make_lines(n, lines * 3, seed * 31 + 7);
	hit = malloc(n);
	missed = malloc(n * sizeof(*missed));
	/* uneven batches exercise the batch boundaries */
	for (size_t off = 0; off < n;) {
		size_t len = 1 + (off * 7919) % 1000;
		if (len > n - off)
			len = n - off;
		nm = lp_cache_access_lines(c, trace + off, len, hit + off, missed + j);
		j += nm;
		off += len;
	}
	for (size_t i = 0, k = 0; i < n; i++) {
		int want = ref_access(&r, trace[i]);
		if (hit[i] != want)
			fail_msg("%s seed %llu: access %zu (line %llu): simulator says %s, reference %s",
				 text, (unsigned long long)seed, i, (unsigned long long)trace[i],
				 hit[i] ? "hit" : "miss", want ? "hit" : "miss");
		if (!want) {
			assert_int_equal(missed[k], trace[i]);
			k++;
			want_m++;
		}
	}
	lp_cache_counts(c, &acc, &mis);
	assert_int_equal(acc, n);
	assert_int_equal(mis, want_m);
	assert_int_equal(j, want_m);
	free(hit);
	free(missed);
	free(trace);
	ref_release(&r);
	lp_cache_free(c);
}

static void test_policies_vs_reference(void **state)
{
	static const char *geoms[] = {
		"4K:1:64", "4K:2:64", "8K:4:64", "32K:8:64", "16K:16:32", "2K:full:64",
		"16K:64:64", "64K:full:64", "256:full:1", "1K:4:1", "64K:2:4096", "512:8:16",
		/* LRU's age bytes take every way count up to 16, specialised or not */
		"6K:3:64",  "12K:12:64", "1K:full:64", "24K:24:64", "960:15:64", "512:1:64",
		/* set counts that are not powers of two: 192, 480, 3, 5 */
		"48K:4:64", "480K:16:64", "192:1:64", "5K:16:64", "40K:32:64",
	};
	static const char *pols[] = { "lru", "fifo", "random", "plru" };
	char spec[64];

	for (size_t g = 0; g < sizeof(geoms) / sizeof(*geoms); g++)
		for (size_t p = 0; p < 4; p++)
			for (uint64_t seed = 1; seed <= 2; seed++) {
				struct lp_cache_spec sp;

				snprintf(spec, sizeof(spec), "%s:%s", geoms[g], pols[p]);
				if (lp_cache_spec_parse(&sp, spec) < 0) {
					/* plru needs power-of-two ways */
					assert_string_equal(pols[p], "plru");
					continue;
				}
				check_spec(spec, seed, 20000);
			}
}

/* A real last-level cache: 480 MiB, 16 ways, 491520 sets (not a power of
 * two). The trace crowds a few sets (lines set + k * 491520, 40 lines for
 * 16 ways), mixed with lines spread over a footprint twice the cache, so
 * that the set index decides hits: with the low bits as the index those
 * lines would fall into other sets. */
static void test_last_level_cache_vs_reference(void **state)
{
	const uint64_t sets = 491520;
	const size_t n = 200000;
	struct lp_cache_spec spec;
	struct lp_cache *c;
	struct ref_cache r;
	struct lp_rng rng;
	uint64_t *trace = malloc(n * sizeof(*trace)), acc, mis, want_m = 0;
	uint8_t *hit = malloc(n);

	assert_int_equal(lp_cache_spec_parse(&spec, "480M:16:64"), 0);
	assert_int_equal(lp_cache_spec_sets(&spec), sets);
	assert_int_equal(lp_cache_new(&c, &spec, 1), 0);
	ref_init(&r, &spec, 1);
	lp_rng_seed(&rng, 11);
	for (size_t i = 0; i < n; i++)
		trace[i] = lp_rng_below(&rng, 4) ? lp_rng_below(&rng, 8) + sets * lp_rng_below(&rng, 40)
						 : lp_rng_below(&rng, 2 * 16 * sets);
	lp_cache_access_lines(c, trace, n, hit, NULL);
	for (size_t i = 0; i < n; i++) {
		int want = ref_access(&r, trace[i]);
		if (hit[i] != want)
			fail_msg("480M:16:64: access %zu (line %llu): simulator says %s, reference %s", i,
				 (unsigned long long)trace[i], hit[i] ? "hit" : "miss", want ? "hit" : "miss");
		want_m += !want;
	}
	lp_cache_counts(c, &acc, &mis);
	assert_int_equal(mis, want_m);
	/* both hits and misses, in numbers */
	assert_true(want_m > 10000 && want_m < n - 10000);
	free(hit);
	free(trace);
	ref_release(&r);
	lp_cache_free(c);
}

static void test_random_policy_depends_on_seed(void **state)
{
	struct lp_cache_spec spec;
	struct lp_cache *a, *b;
	uint64_t *t = make_lines(20000, 300, 5), x, ma, mb;

	assert_int_equal(lp_cache_spec_parse(&spec, "4K:8:64:random"), 0);
	assert_int_equal(lp_cache_new(&a, &spec, 1), 0);
	assert_int_equal(lp_cache_new(&b, &spec, 2), 0);
	lp_cache_access_lines(a, t, 20000, NULL, NULL);
	lp_cache_access_lines(b, t, 20000, NULL, NULL);
	lp_cache_counts(a, &x, &ma);
	lp_cache_counts(b, &x, &mb);
	assert_true(ma != mb);
	lp_cache_free(a);
	lp_cache_free(b);
	free(t);
}

/* ---- SPEC parsing --------------------------------------------------------- */
static void refused(const char *spec, const char *msg)
{
	struct lp_cache_spec s;

	assert_int_equal(lp_cache_spec_parse(&s, spec), LP_EINVAL);
	if (!strstr(lp_errmsg(), msg))
		fail_msg("'%s': message '%s' does not contain '%s'", spec, lp_errmsg(), msg);
}

static void test_spec_parsing(void **state)
{
	struct lp_cache_spec s;
	char buf[64];

	assert_int_equal(lp_cache_spec_parse(&s, "32K:8:64:lru"), 0);
	assert_int_equal(s.size, 32768);
	assert_int_equal(s.assoc, 8);
	assert_int_equal(s.line, 64);
	assert_string_equal(s.policy, "lru");
	assert_int_equal(lp_cache_spec_sets(&s), 64);
	assert_int_equal(lp_cache_spec_parse(&s, "1M:full:64"), 0);
	assert_int_equal(s.assoc, 0);
	assert_string_equal(lp_cache_spec_format(&s, buf, sizeof(buf)), "1M:full:64:lru");
	assert_int_equal(lp_cache_spec_sets(&s), 1);
	assert_int_equal(lp_cache_spec_parse(&s, "16K:1:16:random"), 0);
	assert_int_equal(lp_cache_spec_parse(&s, "24K:12:64:lru"), 0); /* 32 sets of 12 ways */

	refused("0:1:64", "cache size must not be zero");
	refused("32K:0:64", "associativity must not be zero");
	refused("32K:8:0", "line size must not be zero");
	refused("32K:8:48", "line size 48 is not a power of two");
	refused("1000:1:64", "cache size 1000 is not a multiple of the line size 64");
	refused("32K:3:64", "not a multiple of assoc x line = 3 x 64 = 192 bytes");
	assert_int_equal(lp_cache_spec_parse(&s, "48K:4:64"), 0);
	assert_int_equal(lp_cache_spec_sets(&s), 192);
	assert_int_equal(lp_cache_spec_parse(&s, "480M:16:64"), 0);
	assert_int_equal(lp_cache_spec_sets(&s), 491520);
	refused("24K:12:64:plru", "policy plru needs a power-of-two number of ways, not 12");
	refused("3K:full:1K:plru", "not 3");
	refused("32K:8:64:mru", "unknown replacement policy 'mru' (known: lru, fifo, random, plru)");
	refused("32K:8", "is not SIZE:ASSOC:LINE[:POLICY]");
	refused("32Q:8:64", "bad cache size '32Q'");
	refused("32K:eight:64", "bad associativity 'eight'");
	refused("4K:128:64", "associativity 128 is more than the 64 lines");
}

/* ---- hierarchies and the 3C split ------------------------------------------ */
struct ref_fa { /* fully-associative LRU + set of lines ever seen */
	uint64_t cap, n, clock, *line, *used;
	uint64_t *seen, nseen;
};

static int ref_fa_access(struct ref_fa *f, uint64_t line) /* 0 cold, 1 hit, 2 miss */
{
	int cold = 1;
	uint64_t v = 0;

	f->clock++;
	for (uint64_t i = 0; i < f->nseen; i++)
		if (f->seen[i] == line)
			cold = 0;
	if (cold)
		f->seen[f->nseen++] = line;
	for (uint64_t i = 0; i < f->n; i++)
		if (f->line[i] == line) {
			f->used[i] = f->clock;
			return 1;
		}
	if (f->n < f->cap) {
		v = f->n++;
	} else {
		for (uint64_t i = 1; i < f->n; i++)
			if (f->used[i] < f->used[v])
				v = i;
	}
	f->line[v] = line;
	f->used[v] = f->clock;
	return cold ? 0 : 2;
}

static void test_hierarchy_and_3c(void **state)
{
	static const char *levels[][3] = {
		{ "1K:2:32", "4K:4:64", "16K:8:128" },
		{ "2K:1:64", "8K:2:32", "32K:full:64:fifo" },
		{ "512:full:16:random", "2K:4:64:plru", "8K:1:64" },
	};
	enum { N = 6000 };
	struct lp_rng rng;

	lp_rng_seed(&rng, 99);
	for (size_t h = 0; h < 3; h++) {
		struct lp_cache_spec specs[3];
		struct ref_cache rc[3];
		struct ref_fa fa[3];
		struct lp_sim *sim;
		struct lp_ref *refs = calloc(N, sizeof(*refs));
		uint64_t acc[3] = { 0 }, mis[3] = { 0 }, c3[3][3] = { { 0 } };

		for (int i = 0; i < 3; i++) {
			uint64_t lines;
			assert_int_equal(lp_cache_spec_parse(&specs[i], levels[h][i]), 0);
			ref_init(&rc[i], &specs[i], 5);
			lines = specs[i].size / specs[i].line;
			fa[i] = (struct ref_fa){ .cap = lines };
			fa[i].line = calloc(lines, 8);
			fa[i].used = calloc(lines, 8);
			fa[i].seen = calloc(20 * N, 8);
		}
		for (size_t i = 0; i < N; i++) {
			refs[i].kind = lp_rng_below(&rng, 20) ? (uint8_t)lp_rng_below(&rng, 2) : LP_EV_ALLOC;
			refs[i].addr = 0x10000 + lp_rng_below(&rng, 24 * 1024) + (i % 3 ? 0 : (i * 64) % 8192);
			refs[i].size = 1 + lp_rng_below(&rng, i % 50 ? 16 : 300); /* some straddle */
		}
		assert_int_equal(lp_sim_new(&sim, specs, 3, 5, LP_SIM_3C), 0);
		assert_int_equal(lp_sim_refs(sim, refs, N / 2), 0);
		assert_int_equal(lp_sim_refs(sim, refs + N / 2, N - N / 2), 0);

		/* chained reference caches, byte ranges passed down */
		for (size_t i = 0; i < N; i++) {
			if (refs[i].kind > LP_REF_WRITE)
				continue;
			uint64_t lo = refs[i].addr, hi = refs[i].addr + refs[i].size - 1;
			/* level by level: the bytes of each missed line go down */
			uint64_t cur_lo[4096], cur_hi[4096], ncur = 0;
			for (uint64_t l = lo / specs[0].line; l <= hi / specs[0].line; l++) {
				cur_lo[ncur] = l * specs[0].line;
				cur_hi[ncur++] = l * specs[0].line + specs[0].line - 1;
			}
			for (int lv = 0; lv < 3 && ncur; lv++) {
				uint64_t nxt_lo[4096], nxt_hi[4096], nn = 0;
				for (uint64_t k = 0; k < ncur; k++) {
					for (uint64_t l = cur_lo[k] / specs[lv].line; l <= cur_hi[k] / specs[lv].line; l++) {
						int hit = ref_access(&rc[lv], l);
						int f = ref_fa_access(&fa[lv], l);
						acc[lv]++;
						if (!hit) {
							mis[lv]++;
							c3[lv][f == 0 ? 0 : f == 2 ? 1 : 2]++;
							nxt_lo[nn] = l * specs[lv].line;
							nxt_hi[nn++] = l * specs[lv].line + specs[lv].line - 1;
						}
					}
				}
				memcpy(cur_lo, nxt_lo, nn * 8);
				memcpy(cur_hi, nxt_hi, nn * 8);
				ncur = nn;
			}
		}
		for (int lv = 0; lv < 3; lv++) {
			struct lp_level_stats st;
			lp_sim_level_stats(sim, (size_t)lv, &st);
			assert_int_equal(st.accesses, acc[lv]);
			assert_int_equal(st.misses, mis[lv]);
			assert_int_equal(st.cold, c3[lv][0]);
			assert_int_equal(st.capacity, c3[lv][1]);
			assert_int_equal(st.conflict, c3[lv][2]);
			assert_int_equal(st.cold + st.capacity + st.conflict, st.misses);
			assert_true(st.misses > 0);
			ref_release(&rc[lv]);
			free(fa[lv].line);
			free(fa[lv].used);
			free(fa[lv].seen);
		}
		lp_sim_free(sim);
		free(refs);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_spec_parsing),
		cmocka_unit_test(test_policies_vs_reference),
		cmocka_unit_test(test_last_level_cache_vs_reference),
		cmocka_unit_test(test_random_policy_depends_on_seed),
		cmocka_unit_test(test_hierarchy_and_3c),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
