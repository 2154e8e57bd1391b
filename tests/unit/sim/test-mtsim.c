/* The multi-threaded simulator against a slow reference written from the
 * rules of docs/simulator.md ("Several threads") as directly as possible:
 * caches as arrays of ways scanned linearly, who holds a line found by
 * looking into every cache, cold misses from the list of lines each cache
 * has accessed, coherence misses from the log of what removed each line,
 * false against true sharing from the whole log of accesses (the core's
 * last access to the line, then every write of another core after it). */
#include "lp-test.h"

#include <locprof/sim.h>

#include "common/rng.h"

/* ---- a cache: lru, fifo or random, with invalidation ------------------- */
struct rcache {
	uint64_t sets, ways, clock;
	int policy; /* 0 lru, 1 fifo, 2 random */
	uint64_t *tag, *used, *inserted;
	int *valid;
	struct lp_rng rng;
};

static void rc_init(struct rcache *r, const struct lp_cache_spec *s, uint64_t seed)
{
	uint64_t lines = s->size / s->line;

	memset(r, 0, sizeof(*r));
	r->ways = s->assoc ? s->assoc : lines;
	r->sets = lines / r->ways;
	r->policy = !strcmp(s->policy, "lru") ? 0 : !strcmp(s->policy, "fifo") ? 1 : 2;
	r->tag = calloc(lines, 8);
	r->used = calloc(lines, 8);
	r->inserted = calloc(lines, 8);
	r->valid = calloc(lines, sizeof(int));
	lp_rng_seed(&r->rng, seed);
}

static void rc_release(struct rcache *r)
{
	free(r->tag);
	free(r->used);
	free(r->inserted);
	free(r->valid);
}

static int rc_holds(const struct rcache *r, uint64_t line)
{
	for (uint64_t i = 0; i < r->sets * r->ways; i++)
		if (r->valid[i] && r->tag[i] == line)
			return 1;
	return 0;
}

/* 1 hit, 0 miss; *victim the evicted line or UINT64_MAX */
static int rc_access(struct rcache *r, uint64_t line, uint64_t *victim)
{
	uint64_t base = (line % r->sets) * r->ways, v = UINT64_MAX;

	r->clock++;
	*victim = UINT64_MAX;
	for (uint64_t w = 0; w < r->ways; w++)
		if (r->valid[base + w] && r->tag[base + w] == line) {
			r->used[base + w] = r->clock;
			return 1;
		}
	for (uint64_t w = 0; w < r->ways && v == UINT64_MAX; w++)
		if (!r->valid[base + w])
			v = w;
	if (v == UINT64_MAX) {
		if (r->policy == 2) {
			v = lp_rng_below(&r->rng, r->ways);
		} else {
			uint64_t *t = r->policy == 0 ? r->used : r->inserted;
			v = 0;
			for (uint64_t w = 1; w < r->ways; w++)
				if (t[base + w] < t[base + v])
					v = w;
		}
		*victim = r->tag[base + v];
	}
	r->valid[base + v] = 1;
	r->tag[base + v] = line;
	r->used[base + v] = r->inserted[base + v] = r->clock;
	return 0;
}

static int rc_remove(struct rcache *r, uint64_t line)
{
	for (uint64_t i = 0; i < r->sets * r->ways; i++)
		if (r->valid[i] && r->tag[i] == line) {
			r->valid[i] = 0;
			return 1;
		}
	return 0;
}

/* ---- the reference simulator ------------------------------------------- */
enum { MAXC = 8, MAXT = 8, LOGCAP = 1 << 16 };

struct removal {
	int cache; /* core * 2 + level */
	uint64_t line;
	int invalidation;
};

struct access_rec {
	uint64_t time, lo, hi; /* bytes */
	int core, write;
};

struct ref {
	struct lp_mtsim_config cfg;
	unsigned shift;
	struct rcache priv[MAXC][2], llc;
	int tcore[MAXT], nthreads, tindex[64];
	uint64_t time;
	struct lp_mtsim_stats st[MAXT][3];
	/* everything that happened, for the brute-force questions */
	struct removal *rem;
	size_t nrem;
	struct access_rec *acc;
	size_t nacc;
	uint64_t *seen; /* (cache id << 56) | line; cache id 2*core+k, 255 = llc */
	size_t nseen;
	/* MESI/MSI state per (core, line): 'M', 'E', 'S' while held */
	struct {
		int core;
		uint64_t line;
		char st;
	} *state;
	size_t nstate;
	/* the write that invalidated each core's copy */
	struct {
		int core;
		uint64_t line, time, pc;
		uint32_t tid;
	} *inv;
	size_t ninv;
	struct lp_mtsim_event *ev;
	size_t nev;
};

static int seen_test_set(struct ref *R, int cache, uint64_t line)
{
	uint64_t key = ((uint64_t)cache << 56) | line;

	for (size_t i = 0; i < R->nseen; i++)
		if (R->seen[i] == key)
			return 1;
	R->seen[R->nseen++] = key;
	return 0;
}

static char *state_of(struct ref *R, int core, uint64_t line)
{
	for (size_t i = 0; i < R->nstate; i++)
		if (R->state[i].core == core && R->state[i].line == line)
			return &R->state[i].st;
	R->state[R->nstate].core = core;
	R->state[R->nstate].line = line;
	R->state[R->nstate].st = 'I';
	return &R->state[R->nstate++].st;
}

static int core_holds(struct ref *R, int core, uint64_t line)
{
	for (size_t k = 0; k < R->cfg.npriv; k++)
		if (rc_holds(&R->priv[core][k], line))
			return 1;
	return 0;
}

static void ref_init(struct ref *R, const struct lp_mtsim_config *cfg)
{
	memset(R, 0, sizeof(*R));
	R->cfg = *cfg;
	R->shift = (unsigned)__builtin_ctzll(cfg->priv[0].line);
	for (int c = 0; c < MAXC; c++)
		for (size_t k = 0; k < cfg->npriv; k++)
			rc_init(&R->priv[c][k], &cfg->priv[k], cfg->seed);
	if (cfg->has_shared)
		rc_init(&R->llc, &cfg->shared, cfg->seed);
	R->rem = malloc(LOGCAP * 4 * sizeof(*R->rem));
	R->acc = malloc(LOGCAP * 4 * sizeof(*R->acc));
	R->seen = malloc(LOGCAP * 4 * sizeof(*R->seen));
	R->state = malloc(LOGCAP * 4 * sizeof(*R->state));
	R->inv = malloc(LOGCAP * 4 * sizeof(*R->inv));
	R->ev = malloc(LOGCAP * 4 * sizeof(*R->ev));
	for (int i = 0; i < 64; i++)
		R->tindex[i] = -1;
}

static void ref_release(struct ref *R)
{
	for (int c = 0; c < MAXC; c++)
		for (size_t k = 0; k < R->cfg.npriv; k++)
			rc_release(&R->priv[c][k]);
	if (R->cfg.has_shared)
		rc_release(&R->llc);
	free(R->rem);
	free(R->acc);
	free(R->seen);
	free(R->state);
	free(R->inv);
	free(R->ev);
}

/* The last removal of line from cache (core, k). */
static const struct removal *last_removal(struct ref *R, int core, size_t k, uint64_t line)
{
	for (size_t i = R->nrem; i-- > 0;)
		if (R->rem[i].cache == core * 2 + (int)k && R->rem[i].line == line)
			return &R->rem[i];
	return NULL;
}

/* True sharing: another core wrote a byte of [lo, hi] after this core's
 * last access to the line. */
static int true_sharing(struct ref *R, int core, uint64_t line, uint64_t lo, uint64_t hi)
{
	uint64_t since = 0;
	int found = 0;

	for (size_t i = R->nacc; i-- > 0 && !found;)
		if (R->acc[i].core == core && R->acc[i].lo >> R->shift <= line && R->acc[i].hi >> R->shift >= line) {
			since = R->acc[i].time;
			found = 1;
		}
	assert_true(found); /* a coherence miss follows an access */
	for (size_t i = 0; i < R->nacc; i++)
		if (R->acc[i].time > since && R->acc[i].write && R->acc[i].core != core &&
		    R->acc[i].lo <= hi && R->acc[i].hi >= lo)
			return 1;
	return 0;
}

static void ref_line(struct ref *R, const struct lp_ref *r, int ti, uint64_t line, uint64_t lo, uint64_t hi)
{
	int core = R->tcore[ti], held = 0;
	size_t k;
	uint64_t victim[2] = { UINT64_MAX, UINT64_MAX };
	char *st;

	for (k = 0; k < R->cfg.npriv; k++) {
		struct lp_mtsim_stats *s = &R->st[ti][k];
		s->accesses++;
		if (rc_access(&R->priv[core][k], line, &victim[k])) {
			held = 1;
			break;
		}
		s->misses++;
		if (!seen_test_set(R, core * 2 + (int)k, line)) {
			s->cold++;
		} else {
			const struct removal *rm = last_removal(R, core, k, line);
			assert_non_null(rm);
			if (rm->invalidation) {
				int ts = true_sharing(R, core, line, lo, hi);
				s->coherence++;
				ts ? s->true_sharing++ : s->false_sharing++;
				for (size_t j = R->ninv; j-- > 0;)
					if (R->inv[j].core == core && R->inv[j].line == line) {
						R->ev[R->nev++] = (struct lp_mtsim_event){
							.time = R->time, .pc = r->pc, .addr = lo, .line = line,
							.writer_pc = R->inv[j].pc, .writer_time = R->inv[j].time,
							.tid = r->tid, .writer_tid = R->inv[j].tid, .level = (uint32_t)k,
							.false_sharing = (uint8_t)!ts };
						break;
					}
			} else {
				s->replacement++;
			}
		}
		if (victim[k] != UINT64_MAX)
			R->rem[R->nrem++] = (struct removal){ .cache = core * 2 + (int)k, .line = victim[k] };
	}
	if (!held && R->cfg.has_shared) {
		struct lp_mtsim_stats *s = &R->st[ti][R->cfg.npriv];
		uint64_t v;
		s->accesses++;
		if (!rc_access(&R->llc, line, &v)) {
			s->misses++;
			if (seen_test_set(R, 255, line))
				s->replacement++;
			else
				s->cold++;
		}
	}
	/* the victims' states: a core holding a line nowhere has state I */
	for (k = 0; k < R->cfg.npriv; k++)
		if (victim[k] != UINT64_MAX && !core_holds(R, core, victim[k]))
			*state_of(R, core, victim[k]) = 'I';
	st = state_of(R, core, line);
	if (r->kind == LP_REF_WRITE) {
		if (*st == 'S')
			R->st[ti][0].upgrades++;
		if (*st != 'M' && *st != 'E') {
			for (int d = 0; d < MAXC; d++) {
				int any = 0;
				if (d == core)
					continue;
				for (k = 0; k < R->cfg.npriv; k++)
					if (rc_remove(&R->priv[d][k], line)) {
						R->rem[R->nrem++] = (struct removal){ .cache = d * 2 + (int)k, .line = line,
										      .invalidation = 1 };
						R->st[ti][k].invalidations++;
						any = 1;
					}
				if (any) {
					R->inv[R->ninv].core = d;
					R->inv[R->ninv].line = line;
					R->inv[R->ninv].time = R->time;
					R->inv[R->ninv].pc = r->pc;
					R->inv[R->ninv++].tid = r->tid;
					*state_of(R, d, line) = 'I';
				}
			}
		}
		*st = 'M';
	} else if (!held) {
		int others = 0;
		for (int d = 0; d < MAXC; d++)
			if (d != core && core_holds(R, d, line)) {
				char *o = state_of(R, d, line);
				others = 1;
				if (*o == 'M') {
					R->st[ti][0].downgrades++;
					*o = 'S';
				}
				if (*o == 'E')
					*o = 'S';
			}
		*st = !others && R->cfg.protocol == LP_MTSIM_MESI ? 'E' : 'S';
	}
	R->acc[R->nacc++] = (struct access_rec){ .time = R->time, .lo = lo, .hi = hi, .core = core,
						 .write = r->kind == LP_REF_WRITE };
	assert_true(R->nacc < LOGCAP * 4 && R->nrem < LOGCAP * 4 && R->nseen < LOGCAP * 4);
}

static void ref_refs(struct ref *R, const struct lp_ref *refs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct lp_ref *r = &refs[i];
		uint64_t end = r->addr + (r->size ? r->size - 1 : 0);
		int ti;

		if (r->kind > LP_REF_WRITE)
			continue;
		assert_true(r->tid < 64);
		if (R->tindex[r->tid] < 0) {
			R->tindex[r->tid] = R->nthreads;
			R->tcore[R->nthreads] = R->cfg.core_map ? (int)R->cfg.core_map[r->tid]
					       : R->cfg.cores ? R->nthreads % (int)R->cfg.cores
							      : R->nthreads;
			R->nthreads++;
		}
		ti = R->tindex[r->tid];
		R->time++;
		for (uint64_t l = r->addr >> R->shift; l <= end >> R->shift; l++) {
			uint64_t lo = l << R->shift, hi = ((l + 1) << R->shift) - 1;
			ref_line(R, r, ti, l, lo < r->addr ? r->addr : lo, hi > end ? end : hi);
		}
	}
}

/* ---- traces ------------------------------------------------------------- */
/* kind 0: random over a few lines (every kind of miss); 1: two threads
 * writing neighbouring counters of one line (false sharing); 2: a
 * producer writing slots that a consumer reads (true sharing); 3: a mix
 * with straddling references and a shared read-only table. */
static struct lp_ref *make_trace(int kind, size_t n, int threads, uint64_t line, uint64_t seed)
{
	struct lp_ref *v = calloc(n, sizeof(*v));
	struct lp_rng rng;

	lp_rng_seed(&rng, seed);
	for (size_t i = 0; i < n; i++) {
		struct lp_ref *r = &v[i];
		uint32_t t = (uint32_t)lp_rng_below(&rng, (uint64_t)threads);

		r->tid = t * 3 + 1; /* ids are not 0..n-1 */
		r->size = 1u << lp_rng_below(&rng, 4);
		r->pc = 0x400000 + 16 * lp_rng_below(&rng, 8);
		r->kind = lp_rng_below(&rng, 3) == 0 ? LP_REF_WRITE : LP_REF_READ;
		switch (kind) {
		case 0:
			r->addr = 0x10000 + lp_rng_below(&rng, 40 * line);
			break;
		case 1:
			r->size = 4;
			r->addr = 0x20000 + 4 * t + line * lp_rng_below(&rng, 2);
			r->kind = lp_rng_below(&rng, 4) ? LP_REF_WRITE : LP_REF_READ;
			break;
		case 2:
			r->size = 8;
			r->addr = 0x30000 + 8 * lp_rng_below(&rng, 16);
			r->kind = t == 0 ? LP_REF_WRITE : LP_REF_READ;
			break;
		default:
			if (lp_rng_below(&rng, 2)) {
				r->addr = 0x50000 + lp_rng_below(&rng, 4 * line);
				r->kind = LP_REF_READ;
			} else {
				r->addr = 0x60000 + (line - 2) + lp_rng_below(&rng, 8 * line);
			}
		}
		if (lp_rng_below(&rng, 50) == 0) { /* allocation events are skipped */
			r->kind = LP_EV_ALLOC;
			r->size = 64;
		}
	}
	return v;
}

/* Returns the first level's counts, so that callers can check that the
 * traces exercised what they should. */
static struct lp_mtsim_stats compare(const struct lp_mtsim_config *cfg, const struct lp_ref *refs, size_t n)
{
	struct lp_mtsim_stats l1;
	struct lp_mtsim *s;
	struct ref *R = malloc(sizeof(*R));
	const struct lp_mtsim_event *ev;
	size_t nev;

	ref_init(R, cfg);
	assert_int_equal(lp_mtsim_new(&s, cfg), 0);
	/* batches of uneven length: state carries across calls */
	for (size_t i = 0, b = 1; i < n; i += b, b = b * 3 % 997 + 1)
		assert_int_equal(lp_mtsim_refs(s, refs + i, i + b > n ? n - i : b), 0);
	ref_refs(R, refs, n);
	nev = lp_mtsim_events(s, &ev);
	assert_int_equal(nev, R->nev);
	for (size_t j = 0; j < nev; j++) {
		assert_int_equal(ev[j].time, R->ev[j].time);
		assert_int_equal(ev[j].line, R->ev[j].line);
		assert_int_equal(ev[j].addr, R->ev[j].addr);
		assert_int_equal(ev[j].pc, R->ev[j].pc);
		assert_int_equal(ev[j].tid, R->ev[j].tid);
		assert_int_equal(ev[j].writer_tid, R->ev[j].writer_tid);
		assert_int_equal(ev[j].writer_pc, R->ev[j].writer_pc);
		assert_int_equal(ev[j].writer_time, R->ev[j].writer_time);
		assert_int_equal(ev[j].level, R->ev[j].level);
		assert_int_equal(ev[j].false_sharing, R->ev[j].false_sharing);
	}
	assert_int_equal(lp_mtsim_threads(s), (size_t)R->nthreads);
	for (size_t k = 0; k < lp_mtsim_levels(s); k++) {
		struct lp_mtsim_stats sum = { 0 }, all_st, cores_st;
		for (int t = 0; t < R->nthreads; t++) {
			struct lp_mtsim_stats st;
			const struct lp_mtsim_stats *e = &R->st[t][k];

			lp_mtsim_thread_stats(s, k, (uint32_t)t, &st);
			assert_int_equal(lp_mtsim_thread_core(s, (size_t)t), (uint32_t)R->tcore[t]);
			assert_int_equal(st.accesses, e->accesses);
			assert_int_equal(st.misses, e->misses);
			assert_int_equal(st.cold, e->cold);
			assert_int_equal(st.replacement, e->replacement);
			assert_int_equal(st.coherence, e->coherence);
			assert_int_equal(st.false_sharing, e->false_sharing);
			assert_int_equal(st.true_sharing, e->true_sharing);
			assert_int_equal(st.invalidations, e->invalidations);
			assert_int_equal(st.upgrades, e->upgrades);
			assert_int_equal(st.downgrades, e->downgrades);
			assert_int_equal(st.cold + st.replacement + st.coherence, st.misses);
			assert_int_equal(st.false_sharing + st.true_sharing, st.coherence);
			sum.accesses += st.accesses;
			sum.misses += st.misses;
		}
		lp_mtsim_thread_stats(s, k, LP_MTSIM_ALL, &all_st);
		lp_mtsim_core_stats(s, k, LP_MTSIM_ALL, &cores_st);
		assert_int_equal(all_st.accesses, sum.accesses);
		assert_int_equal(all_st.misses, sum.misses);
		assert_memory_equal(&all_st, &cores_st, sizeof(all_st));
	}
	lp_mtsim_thread_stats(s, 0, LP_MTSIM_ALL, &l1);
	lp_mtsim_free(s);
	ref_release(R);
	free(R);
	return l1;
}

static struct lp_mtsim_config config(const char *l1, const char *l2, const char *llc, uint32_t cores,
				     enum lp_mtsim_protocol proto)
{
	struct lp_mtsim_config c = { 0 };

	assert_int_equal(lp_cache_spec_parse(&c.priv[0], l1), 0);
	c.npriv = 1;
	if (l2) {
		assert_int_equal(lp_cache_spec_parse(&c.priv[1], l2), 0);
		c.npriv = 2;
	}
	if (llc) {
		assert_int_equal(lp_cache_spec_parse(&c.shared, llc), 0);
		c.has_shared = 1;
	}
	c.cores = cores;
	c.protocol = proto;
	c.seed = 7;
	c.flags = LP_MTSIM_EVENTS;
	return c;
}

static void test_vs_reference(void **state)
{
	/* private levels and a shared one of one line size each */
	static const char *l1s[] = { "256:2:16:lru", "512:4:32:fifo", "256:full:16:random", "128:1:16" };
	static const char *l2s[] = { NULL, "2K:2:32:random", "1K:4:16", "512:full:16" };
	static const char *llcs[][2] = { { "4K:4:16", "2K:full:16:fifo" },
					 { "8K:8:32:random", NULL },
					 { NULL, "1K:2:16:lru" },
					 { "2K:full:16:lru", "4K:4:16:random" } };
	uint64_t total[6] = { 0 };
	(void)state;
	for (int round = 0; round < 48; round++) {
		int kind = round % 4, threads = 2 + round % 3, v = (round / 4) % 4;
		uint32_t cores = round % 5 == 4 ? 2 : 0;
		struct lp_mtsim_config c = config(l1s[v], l2s[v], llcs[v][(round / 16) % 2], cores,
						  round % 2 ? LP_MTSIM_MSI : LP_MTSIM_MESI);
		struct lp_ref *refs = make_trace(kind, 3000, threads, c.priv[0].line, (uint64_t)round + 1);

		struct lp_mtsim_stats st = compare(&c, refs, 3000);
		uint64_t got[6] = { st.cold, st.replacement, st.false_sharing, st.true_sharing, st.upgrades,
				    st.downgrades };

		for (int i = 0; i < 6; i++)
			total[i] += got[i];
		free(refs);
	}
	for (int i = 0; i < 6; i++)
		assert_true(total[i] > 100); /* every kind of miss and transition happened */
}

/* Private caches of more than LP_SCAN_WAYS ways in a set (kept in a
 * policy-ordered list with a heap of free ways, not scanned): the same
 * misses, victims and invalidations as the reference's scan. */
static void test_large_sets_vs_reference(void **state)
{
	static const char *l1s[] = { "1K:full:16:lru", "2K:full:16:fifo", "1K:full:16:random", "4K:64:16:lru" };
	uint64_t replaced = 0, coherence = 0;
	(void)state;
	for (int round = 0; round < 16; round++) {
		int kind = round % 4, threads = 2 + round % 3;
		struct lp_mtsim_config c = config(l1s[round / 4], NULL, round % 2 ? "8K:4:16" : NULL, 0,
						  round % 3 ? LP_MTSIM_MESI : LP_MTSIM_MSI);
		struct lp_ref *refs = make_trace(kind, 6000, threads, c.priv[0].line, (uint64_t)round + 101);
		struct lp_mtsim_stats st;

		/* over 300 lines: more than a set's 64 or 128 ways */
		for (size_t i = 0; i < 6000; i += 2)
			refs[i].addr = 0x40000 + (refs[i].addr * 2654435761u) % (300 * c.priv[0].line);
		st = compare(&c, refs, 6000);
		replaced += st.replacement;
		coherence += st.false_sharing + st.true_sharing;
		free(refs);
	}
	/* victims were chosen and lines invalidated in the large sets */
	assert_true(replaced > 100 && coherence > 100);
}

static void test_core_map(void **state)
{
	/* threads 1 and 4 share core 0: no coherence between them */
	uint32_t map[16] = { 0 };
	struct lp_mtsim_config c = config("256:2:16", "1K:4:16", "4K:4:16", 0, LP_MTSIM_MESI);
	struct lp_ref *refs = make_trace(1, 2000, 3, 16, 99);
	(void)state;

	map[1] = 0;
	map[4] = 0;
	map[7] = 3;
	c.core_map = map;
	c.ncore_map = 16;
	compare(&c, refs, 2000);
	free(refs);
}

/* Two threads writing their own 4-byte counter of one line: every
 * coherence miss is false sharing; counters a line apart: none at all;
 * one counter written by both: true sharing. */
static void test_false_sharing_by_construction(void **state)
{
	struct lp_mtsim_config c = config("32K:8:64", NULL, "1M:16:64", 0, LP_MTSIM_MESI);
	struct lp_ref refs[2000];
	(void)state;

	for (int variant = 0; variant < 3; variant++) {
		struct lp_mtsim *s;
		struct lp_mtsim_stats st;

		for (int i = 0; i < 2000; i++) {
			uint32_t t = (uint32_t)(i & 1);
			uint64_t off = variant == 0 ? 4 * t : variant == 1 ? 64 * t : 0;
			refs[i] = (struct lp_ref){ .addr = 0x1000 + off, .size = 4, .pc = 0x400100 + t,
						   .tid = t, .kind = i % 4 < 2 ? LP_REF_READ : LP_REF_WRITE };
		}
		assert_int_equal(lp_mtsim_new(&s, &c), 0);
		assert_int_equal(lp_mtsim_refs(s, refs, 2000), 0);
		lp_mtsim_thread_stats(s, 0, LP_MTSIM_ALL, &st);
		if (variant == 0) {
			assert_true(st.coherence > 900);
			assert_int_equal(st.false_sharing, st.coherence);
		} else if (variant == 1) {
			assert_int_equal(st.coherence, 0);
			assert_int_equal(st.misses, 2);
		} else {
			assert_true(st.coherence > 900);
			assert_int_equal(st.true_sharing, st.coherence);
		}
		lp_mtsim_free(s);
	}
}

/* One thread: the private levels and the shared one are lp_sim's
 * hierarchy (same misses and cold misses at every level). */
static void test_one_thread_is_lp_sim(void **state)
{
	static const char *specs[][3] = { { "1K:2:32", "4K:4:32", "16K:8:32" },
					  { "512:full:16:fifo", "2K:4:16:random", "8K:2:16:plru" } };
	(void)state;
	for (int v = 0; v < 2; v++) {
		struct lp_mtsim_config c = config(specs[v][0], specs[v][1], specs[v][2], 0, LP_MTSIM_MESI);
		struct lp_cache_spec h[3] = { c.priv[0], c.priv[1], c.shared };
		struct lp_ref *refs = make_trace(0, 20000, 1, c.priv[0].line, 5 + (uint64_t)v);
		struct lp_mtsim *m;
		struct lp_sim *s;

		for (size_t i = 0; i < 20000; i++)
			refs[i].addr = refs[i].addr * 977 % (1 << 18); /* a larger footprint */
		assert_int_equal(lp_mtsim_new(&m, &c), 0);
		assert_int_equal(lp_sim_new(&s, h, 3, c.seed, LP_SIM_3C), 0);
		assert_int_equal(lp_mtsim_refs(m, refs, 20000), 0);
		assert_int_equal(lp_sim_refs(s, refs, 20000), 0);
		for (size_t k = 0; k < 3; k++) {
			struct lp_level_stats a;
			struct lp_mtsim_stats b;
			lp_sim_level_stats(s, k, &a);
			lp_mtsim_thread_stats(m, k, LP_MTSIM_ALL, &b);
			assert_int_equal(a.accesses, b.accesses);
			assert_int_equal(a.misses, b.misses);
			assert_int_equal(a.cold, b.cold);
			assert_int_equal(b.coherence, 0);
			assert_true(b.replacement > 0);
		}
		lp_sim_free(s);
		lp_mtsim_free(m);
		free(refs);
	}
}

static void test_refusals(void **state)
{
	struct lp_mtsim_config c = config("1K:2:32", "4K:4:64", NULL, 0, LP_MTSIM_MESI);
	struct lp_mtsim *s;
	uint32_t map[2] = { 0, 1 };
	struct lp_ref r = { .addr = 64, .size = 4, .tid = 5 };
	(void)state;

	assert_int_equal(lp_mtsim_new(&s, &c), LP_EINVAL);
	assert_non_null(strstr(lp_errmsg(), "line size"));
	c = config("1K:2:32:plru", NULL, NULL, 0, LP_MTSIM_MESI);
	assert_int_equal(lp_mtsim_new(&s, &c), LP_EINVAL);
	c = config("1K:2:32", NULL, NULL, 65, LP_MTSIM_MESI);
	assert_int_equal(lp_mtsim_new(&s, &c), LP_ELIMIT);
	c = config("1K:2:32", NULL, NULL, 0, LP_MTSIM_MESI);
	c.core_map = map;
	c.ncore_map = 2;
	assert_int_equal(lp_mtsim_new(&s, &c), 0);
	assert_int_equal(lp_mtsim_refs(s, &r, 1), LP_EINVAL);
	assert_non_null(strstr(lp_errmsg(), "thread 5"));
	lp_mtsim_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vs_reference),
		cmocka_unit_test(test_large_sets_vs_reference),
		cmocka_unit_test(test_core_map),
		cmocka_unit_test(test_false_sharing_by_construction),
		cmocka_unit_test(test_one_thread_is_lp_sim),
		cmocka_unit_test(test_refusals),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
