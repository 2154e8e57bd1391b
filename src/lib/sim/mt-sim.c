/* Multi-threaded functional simulation: private levels per core, a shared
 * last-level cache, MSI/MESI invalidation, and the cold / replacement /
 * coherence split with false and true sharing (rules: sim.h and
 * docs/simulator.md, "Several threads").
 *
 * Assumptions: the trace's order is the order in which the accesses reach
 * the caches; every level has one line size, the unit of coherence; the
 * private levels are non-inclusive (level 2 sees level 1's misses) and
 * the shared level sees the misses of the last private level; nothing is
 * written back (a dirty copy's eviction makes no access); the shared
 * level is not kept inclusive of the private ones.
 *
 * A directory entry per line says exactly which cores hold it in any
 * private level (fills report their victims), which one holds it Modified
 * or Exclusive, which caches have ever accessed it (cold misses) and whose
 * copy was last removed by an invalidation (coherence misses). A line that
 * has had a copy invalidated also gets a sharing record: per core the
 * time, thread and pc of the write that invalidated its copy, and per
 * byte the time of the last write, which decides false against true
 * sharing. */
#include "sim/mt-internal.h"

#include "common/array.h"
#include "common/error.h"

#include <stdlib.h>
#include <string.h>

enum { LLCBUF = 4096, NONE = -1 };

struct mt_line {
	uint64_t holders;                      /* cores holding it in a private level */
	uint64_t seen[LP_MTSIM_MAX_PRIVATE];   /* cores whose level k has accessed it */
	uint64_t inval[LP_MTSIM_MAX_PRIVATE];  /* cores whose level k copy an invalidation removed */
	uint32_t share;                        /* sharing record + 1; 0 = none yet */
	int8_t mod, excl;                      /* core holding it Modified / Exclusive, or NONE */
	uint8_t llc_seen;
};

/* Per core: when, by which thread and pc, its copy was last invalidated. */
struct mt_inval {
	uint64_t time, pc;
	uint32_t tid;
};

struct mt_thread {
	uint32_t tid, core;
};

struct lp_mtsim {
	struct lp_mtsim_config cfg;
	size_t npriv, nlevels;
	unsigned shift;
	uint64_t line_bytes;
	struct lp_pcache *priv;       /* [core * npriv + k]; sets == 0 until the core is used */
	struct lp_cache *llc;
	uint64_t refs;
	/* lines */
	struct lp_htab line_index;    /* line -> entry */
	struct mt_line *lines;
	size_t nlines, caplines;
	/* sharing records: LP_MTSIM_MAX_CORES invalidations, then one time per byte */
	struct mt_inval *share_inval;
	uint64_t *share_bytes;
	size_t nshare, capshare, capshare_bytes;
	/* threads */
	struct lp_htab thread_index;  /* tid -> index */
	struct mt_thread *threads;
	size_t nthreads, capthreads;
	struct lp_mtsim_stats *tstats; /* [thread * nlevels + level] */
	size_t captstats;
	struct lp_mtsim_stats cstats[LP_MTSIM_MAX_CORES * (LP_MTSIM_MAX_PRIVATE + 1)];
	uint32_t ncores;
	/* accesses waiting for the shared level, in order */
	uint64_t llc_lines[LLCBUF];
	uint32_t llc_entry[LLCBUF], llc_thread[LLCBUF];
	uint8_t llc_hit[LLCBUF];
	size_t nllc;
	/* coherence misses (LP_MTSIM_EVENTS) */
	struct lp_mtsim_event *events;
	size_t nevents, capevents;
};

static int check_config(const struct lp_mtsim_config *c)
{
	char buf[64];
	int err;

	if (c->npriv < 1 || c->npriv > LP_MTSIM_MAX_PRIVATE)
		return lp_seterr(LP_EINVAL, "%zu private levels (1 or 2)", c->npriv);
	for (size_t k = 0; k < c->npriv + (c->has_shared != 0); k++) {
		const struct lp_cache_spec *sp = k < c->npriv ? &c->priv[k] : &c->shared;
		if ((err = lp_cache_spec_check(sp)) < 0)
			return err;
		if (sp->line != c->priv[0].line)
			return lp_seterr(LP_EINVAL,
					 "every level takes the line size of the first (%llu bytes), not %s: "
					 "coherence is kept per line",
					 (unsigned long long)c->priv[0].line,
					 lp_cache_spec_format(sp, buf, sizeof(buf)));
		if (k < c->npriv && strcmp(sp->policy, "lru") && strcmp(sp->policy, "fifo") &&
		    strcmp(sp->policy, "random"))
			return lp_seterr(LP_EINVAL, "a private cache takes policy lru, fifo or random, not %s",
					 sp->policy);
	}
	if (c->cores > LP_MTSIM_MAX_CORES)
		return lp_seterr(LP_ELIMIT, "%u cores (at most %d)", c->cores, LP_MTSIM_MAX_CORES);
	for (size_t t = 0; c->core_map && t < c->ncore_map; t++)
		if (c->core_map[t] >= LP_MTSIM_MAX_CORES && c->core_map[t] != UINT32_MAX)
			return lp_seterr(LP_ELIMIT, "thread %zu on core %u (cores are 0 to %d)", t, c->core_map[t],
					 LP_MTSIM_MAX_CORES - 1);
	return 0;
}

int lp_mtsim_new(struct lp_mtsim **out, const struct lp_mtsim_config *cfg)
{
	struct lp_mtsim *s;
	int err;

	*out = NULL;
	if ((err = check_config(cfg)) < 0)
		return err;
	if (!(s = calloc(1, sizeof(*s))))
		return lp_seterr(LP_ENOMEM, "out of memory");
	s->cfg = *cfg;
	s->npriv = cfg->npriv;
	s->nlevels = cfg->npriv + (cfg->has_shared != 0);
	s->line_bytes = cfg->priv[0].line;
	s->shift = lp_log2_u64(s->line_bytes);
	err = LP_ENOMEM;
	if (!(s->priv = calloc(LP_MTSIM_MAX_CORES * s->npriv, sizeof(*s->priv))) ||
	    lp_htab_init(&s->line_index, 1024) < 0 || lp_htab_init(&s->thread_index, 16) < 0) {
		lp_seterr(LP_ENOMEM, "out of memory");
		goto out_free;
	}
	if (cfg->has_shared && (err = lp_cache_new(&s->llc, &cfg->shared, cfg->seed)) < 0)
		goto out_free;
	s->cfg.core_map = NULL; /* the caller's array: copied below */
	if (cfg->core_map) {
		uint32_t *m = malloc(cfg->ncore_map * sizeof(*m) + 1);
		if (!m) {
			err = lp_seterr(LP_ENOMEM, "out of memory");
			goto out_free;
		}
		memcpy(m, cfg->core_map, cfg->ncore_map * sizeof(*m));
		s->cfg.core_map = m;
	}
	*out = s;
	return 0;
out_free:
	lp_mtsim_free(s);
	return err;
}

void lp_mtsim_free(struct lp_mtsim *s)
{
	if (!s)
		return;
	for (size_t i = 0; s->priv && i < LP_MTSIM_MAX_CORES * s->npriv; i++)
		if (s->priv[i].tags)
			lp_pcache_release(&s->priv[i]);
	free(s->priv);
	lp_cache_free(s->llc);
	if (s->line_index.s)
		lp_htab_release(&s->line_index);
	if (s->thread_index.s)
		lp_htab_release(&s->thread_index);
	free(s->lines);
	free(s->share_inval);
	free(s->share_bytes);
	free(s->threads);
	free(s->tstats);
	free(s->events);
	free((void *)s->cfg.core_map);
	free(s);
}

/* The thread number of tid, adding it (and its core's caches) if new. */
static int thread_of(struct lp_mtsim *s, uint32_t tid, uint32_t *out)
{
	uint64_t *v;
	uint32_t core;
	int isnew, err;

	if ((v = lp_htab_find(&s->thread_index, tid))) {
		*out = (uint32_t)*v;
		return 0;
	}
	if (s->cfg.core_map) {
		if (tid >= s->cfg.ncore_map || s->cfg.core_map[tid] == UINT32_MAX)
			return lp_seterr(LP_EINVAL, "thread %u has no core in the core map", tid);
		core = s->cfg.core_map[tid];
	} else if (s->cfg.cores) {
		core = (uint32_t)(s->nthreads % s->cfg.cores);
	} else if (s->nthreads >= LP_MTSIM_MAX_CORES) {
		return lp_seterr(LP_ELIMIT, "thread %u is the %zu-th thread: at most %d cores (give fewer cores)",
				 tid, s->nthreads + 1, LP_MTSIM_MAX_CORES);
	} else {
		core = (uint32_t)s->nthreads;
	}
	for (size_t k = 0; k < s->npriv; k++) {
		struct lp_pcache *c = &s->priv[core * s->npriv + k];
		if (!c->tags && (err = lp_pcache_init(c, &s->cfg.priv[k], s->cfg.seed)) < 0)
			return err;
	}
	if (LP_ARRAY_RESERVE(s->threads, s->capthreads, s->nthreads + 1, 16, "threads") < 0 ||
	    LP_ARRAY_RESERVE(s->tstats, s->captstats, (s->nthreads + 1) * s->nlevels, 16, "threads") < 0 ||
	    lp_htab_reserve(&s->thread_index, 1) < 0)
		return lp_seterr(LP_ENOMEM, "out of memory");
	memset(&s->tstats[s->nthreads * s->nlevels], 0, s->nlevels * sizeof(*s->tstats));
	s->threads[s->nthreads] = (struct mt_thread){ .tid = tid, .core = core };
	*lp_htab_get(&s->thread_index, tid, &isnew) = s->nthreads;
	*out = (uint32_t)s->nthreads++;
	if (core + 1 > s->ncores)
		s->ncores = core + 1;
	return 0;
}

/* The directory entry of line, created empty if new. */
static int line_entry(struct lp_mtsim *s, uint64_t line, uint32_t *out)
{
	uint64_t *v;
	int isnew;

	if (lp_htab_reserve(&s->line_index, 1) < 0 ||
	    LP_ARRAY_RESERVE(s->lines, s->caplines, s->nlines + 1, 1024, "lines") < 0)
		return lp_seterr(LP_ENOMEM, "out of memory");
	v = lp_htab_get(&s->line_index, line, &isnew);
	if (isnew) {
		*v = s->nlines;
		s->lines[s->nlines++] = (struct mt_line){ .mod = NONE, .excl = NONE };
	}
	*out = (uint32_t)*v;
	return 0;
}

/* The sharing record of entry e, created if it has none. */
static int share_record(struct lp_mtsim *s, struct mt_line *e)
{
	size_t n = s->nshare;

	if (e->share)
		return 0;
	if (LP_ARRAY_RESERVE(s->share_inval, s->capshare, (n + 1) * LP_MTSIM_MAX_CORES, 64 * LP_MTSIM_MAX_CORES,
			     "sharing records") < 0 ||
	    LP_ARRAY_RESERVE(s->share_bytes, s->capshare_bytes, (n + 1) * s->line_bytes, 64 * s->line_bytes,
			     "sharing records") < 0)
		return lp_seterr(LP_ENOMEM, "out of memory");
	memset(&s->share_inval[n * LP_MTSIM_MAX_CORES], 0, LP_MTSIM_MAX_CORES * sizeof(*s->share_inval));
	memset(&s->share_bytes[n * s->line_bytes], 0, s->line_bytes * sizeof(*s->share_bytes));
	e->share = (uint32_t)++s->nshare;
	return 0;
}

static struct lp_mtsim_stats *tstat(struct lp_mtsim *s, uint32_t ti, size_t level)
{
	return &s->tstats[ti * s->nlevels + level];
}

static struct lp_mtsim_stats *cstat(struct lp_mtsim *s, uint32_t core, size_t level)
{
	return &s->cstats[core * (LP_MTSIM_MAX_PRIVATE + 1) + level];
}

/* Add one to a counter of both the thread's and its core's stats. */
#define COUNT(s, ti, core, level, field)                     \
	do {                                                 \
		tstat(s, ti, level)->field++;                \
		cstat(s, core, level)->field++;              \
	} while (0)

/* Send the waiting accesses to the shared level. */
static void llc_flush(struct lp_mtsim *s)
{
	if (!s->nllc)
		return;
	lp_cache_access_lines(s->llc, s->llc_lines, s->nllc, s->llc_hit, NULL);
	for (size_t i = 0; i < s->nllc; i++) {
		struct mt_line *e = &s->lines[s->llc_entry[i]];
		uint32_t ti = s->llc_thread[i], core = s->threads[ti].core;

		COUNT(s, ti, core, s->npriv, accesses);
		if (s->llc_hit[i])
			continue;
		COUNT(s, ti, core, s->npriv, misses);
		if (e->llc_seen)
			COUNT(s, ti, core, s->npriv, replacement);
		else
			COUNT(s, ti, core, s->npriv, cold);
		e->llc_seen = 1;
	}
	s->nllc = 0;
}

/* A coherence miss of core at level k on the line of e, reference r
 * touching bytes [lo, hi] of it: false or true sharing, and the event. */
static int coherence_miss(struct lp_mtsim *s, const struct lp_ref *r, uint32_t ti, uint32_t core, size_t k,
			  uint32_t entry, uint64_t line, uint64_t lo, uint64_t hi)
{
	const struct mt_line *e = &s->lines[entry];
	const struct mt_inval *inv = &s->share_inval[(e->share - 1) * LP_MTSIM_MAX_CORES + core];
	const uint64_t *bt = &s->share_bytes[(e->share - 1) * s->line_bytes];
	uint64_t base = line << s->shift;
	int true_sharing = 0;

	assert(e->share);
	for (uint64_t b = lo; b <= hi && !true_sharing; b++)
		true_sharing = bt[b - base] >= inv->time;
	COUNT(s, ti, core, k, coherence);
	if (true_sharing)
		COUNT(s, ti, core, k, true_sharing);
	else
		COUNT(s, ti, core, k, false_sharing);
	if (!(s->cfg.flags & LP_MTSIM_EVENTS))
		return 0;
	if (LP_ARRAY_RESERVE(s->events, s->capevents, s->nevents + 1, 256, "coherence misses") < 0)
		return lp_seterr(LP_ENOMEM, "out of memory");
	s->events[s->nevents++] = (struct lp_mtsim_event){
		.time = s->refs, .pc = r->pc, .addr = lo, .line = line, .writer_pc = inv->pc,
		.writer_time = inv->time, .tid = r->tid, .writer_tid = inv->tid, .level = (uint32_t)k,
		.false_sharing = (uint8_t)!true_sharing,
	};
	return 0;
}

/* The line left a private level of core: is the core still holding it? */
static int evicted(struct lp_mtsim *s, uint32_t core, uint64_t victim)
{
	uint64_t *v = lp_htab_find(&s->line_index, victim);
	struct mt_line *e;

	assert(v); /* a line in a cache has been accessed */
	for (size_t k = 0; k < s->npriv; k++)
		if (lp_pcache_holds(&s->priv[core * s->npriv + k], victim))
			return 0;
	e = &s->lines[*v];
	e->holders &= ~(UINT64_C(1) << core);
	if (e->mod == (int8_t)core)
		e->mod = NONE;
	if (e->excl == (int8_t)core)
		e->excl = NONE;
	return 0;
}

/* A write of core to the line of entry: invalidate the other copies. */
static int write_line(struct lp_mtsim *s, const struct lp_ref *r, uint32_t ti, uint32_t core, uint32_t entry,
		      uint64_t line, int held, uint64_t lo, uint64_t hi)
{
	struct mt_line *e = &s->lines[entry];
	uint64_t bit = UINT64_C(1) << core, others = e->holders & ~bit;
	int err;

	if (e->mod == (int8_t)core) {
		/* nothing to tell anyone */
	} else if (e->excl == (int8_t)core) {
		e->excl = NONE; /* MESI: Exclusive -> Modified, silently */
		e->mod = (int8_t)core;
	} else {
		if (held)
			COUNT(s, ti, core, 0, upgrades);
		if (others && (err = share_record(s, e)) < 0)
			return err;
		for (uint32_t d = 0; others; d++, others >>= 1) {
			if (!(others & 1))
				continue;
			for (size_t k = 0; k < s->npriv; k++)
				if (lp_pcache_invalidate(&s->priv[d * s->npriv + k], line)) {
					e->inval[k] |= UINT64_C(1) << d;
					COUNT(s, ti, core, k, invalidations);
				}
			s->share_inval[(e->share - 1) * LP_MTSIM_MAX_CORES + d] =
				(struct mt_inval){ .time = s->refs, .pc = r->pc, .tid = r->tid };
		}
		e->holders = bit;
		e->mod = (int8_t)core;
		e->excl = NONE;
	}
	if (e->share) {
		uint64_t *bt = &s->share_bytes[(e->share - 1) * s->line_bytes], base = line << s->shift;
		for (uint64_t b = lo; b <= hi; b++)
			bt[b - base] = s->refs;
	}
	return 0;
}

/* A read of core that found no private copy: take the line Shared (or
 * Exclusive under MESI when no other core has it). */
static void read_miss(struct lp_mtsim *s, uint32_t ti, uint32_t core, struct mt_line *e)
{
	uint64_t bit = UINT64_C(1) << core;

	if (e->mod != NONE && e->mod != (int8_t)core) {
		COUNT(s, ti, core, 0, downgrades);
		e->mod = NONE;
	}
	if (e->excl != (int8_t)core)
		e->excl = NONE;
	if (s->cfg.protocol == LP_MTSIM_MESI && !(e->holders & ~bit))
		e->excl = (int8_t)core;
}

/* One line access of reference r (bytes [lo, hi] of the line). */
static int line_access(struct lp_mtsim *s, const struct lp_ref *r, uint32_t ti, uint32_t core, uint64_t line,
		       uint64_t lo, uint64_t hi)
{
	uint64_t bit = UINT64_C(1) << core, victims[LP_MTSIM_MAX_PRIVATE];
	uint32_t entry = 0;
	int held = 0, err;
	size_t k, filled = 0;

	if ((err = line_entry(s, line, &entry)) < 0)
		return err;
	for (k = 0; k < s->npriv; k++) {
		struct mt_line *e = &s->lines[entry];
		int hit = lp_pcache_access(&s->priv[core * s->npriv + k], line, &victims[k]);

		if (hit < 0)
			return hit;
		COUNT(s, ti, core, k, accesses);
		if (hit) {
			held = 1;
			break;
		}
		filled = k + 1;
		COUNT(s, ti, core, k, misses);
		if (!(e->seen[k] & bit)) {
			COUNT(s, ti, core, k, cold);
		} else if (e->inval[k] & bit) {
			if ((err = coherence_miss(s, r, ti, core, k, entry, line, lo, hi)) < 0)
				return err;
		} else {
			COUNT(s, ti, core, k, replacement);
		}
		e->seen[k] |= bit;
		e->inval[k] &= ~bit;
	}
	if (!held && s->llc) {
		if (s->nllc == LLCBUF)
			llc_flush(s);
		s->llc_lines[s->nllc] = line;
		s->llc_entry[s->nllc] = entry;
		s->llc_thread[s->nllc++] = ti;
	}
	for (k = 0; k < filled; k++)
		if (victims[k] != LP_NO_LINE && (err = evicted(s, core, victims[k])) < 0)
			return err;
	if (r->kind == LP_REF_WRITE) {
		if ((err = write_line(s, r, ti, core, entry, line, held, lo, hi)) < 0)
			return err;
	} else if (!held) {
		read_miss(s, ti, core, &s->lines[entry]);
	}
	s->lines[entry].holders |= bit;
	return 0;
}

int lp_mtsim_refs(struct lp_mtsim *s, const struct lp_ref *refs, size_t n)
{
	int err = 0;

	for (size_t i = 0; i < n && err >= 0; i++) {
		const struct lp_ref *r = &refs[i];
		uint64_t first, last, end;
		uint32_t ti = 0;

		if (!lp_ref_is_access(r))
			continue;
		if ((err = thread_of(s, r->tid, &ti)) < 0)
			break;
		s->refs++;
		lp_ref_lines(r, s->shift, &first, &last);
		end = r->addr + (r->size ? r->size - 1 : 0);
		if (end < r->addr)
			end = UINT64_MAX;
		for (uint64_t l = first; err >= 0; l++) {
			uint64_t lo = l == first ? r->addr : l << s->shift;
			uint64_t hi = l == last ? end : ((l + 1) << s->shift) - 1;

			err = line_access(s, r, ti, s->threads[ti].core, l, lo, hi);
			if (l == last)
				break;
		}
	}
	if (s->llc)
		llc_flush(s);
	return err < 0 ? err : 0;
}

size_t lp_mtsim_levels(const struct lp_mtsim *s)
{
	return s->nlevels;
}

const struct lp_cache_spec *lp_mtsim_level_spec(const struct lp_mtsim *s, size_t level)
{
	assert(level < s->nlevels);
	return level < s->npriv ? &s->cfg.priv[level] : &s->cfg.shared;
}

int lp_mtsim_level_shared(const struct lp_mtsim *s, size_t level)
{
	return level >= s->npriv;
}

uint64_t lp_mtsim_references(const struct lp_mtsim *s)
{
	return s->refs;
}

size_t lp_mtsim_threads(const struct lp_mtsim *s)
{
	return s->nthreads;
}

uint32_t lp_mtsim_thread_id(const struct lp_mtsim *s, size_t i)
{
	assert(i < s->nthreads);
	return s->threads[i].tid;
}

uint32_t lp_mtsim_thread_core(const struct lp_mtsim *s, size_t i)
{
	assert(i < s->nthreads);
	return s->threads[i].core;
}

uint32_t lp_mtsim_cores(const struct lp_mtsim *s)
{
	return s->ncores;
}

static void stats_add(struct lp_mtsim_stats *a, const struct lp_mtsim_stats *b)
{
	uint64_t *x = (uint64_t *)a;
	const uint64_t *y = (const uint64_t *)b;

	for (size_t i = 0; i < sizeof(*a) / sizeof(uint64_t); i++)
		x[i] += y[i];
}

void lp_mtsim_thread_stats(const struct lp_mtsim *s, size_t level, uint32_t i, struct lp_mtsim_stats *out)
{
	assert(level < s->nlevels);
	memset(out, 0, sizeof(*out));
	for (size_t t = 0; t < s->nthreads; t++)
		if (i == LP_MTSIM_ALL || t == i)
			stats_add(out, &s->tstats[t * s->nlevels + level]);
}

void lp_mtsim_core_stats(const struct lp_mtsim *s, size_t level, uint32_t core, struct lp_mtsim_stats *out)
{
	assert(level < s->nlevels);
	memset(out, 0, sizeof(*out));
	for (uint32_t c = 0; c < LP_MTSIM_MAX_CORES; c++)
		if (core == LP_MTSIM_ALL || c == core)
			stats_add(out, &s->cstats[c * (LP_MTSIM_MAX_PRIVATE + 1) + level]);
}

size_t lp_mtsim_events(const struct lp_mtsim *s, const struct lp_mtsim_event **ev)
{
	*ev = s->events;
	return s->nevents;
}

void lp_mtsim_events_clear(struct lp_mtsim *s)
{
	s->nevents = 0;
}
