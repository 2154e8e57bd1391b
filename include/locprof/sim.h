/* locprof/sim.h - functional cache simulation.
 *
 * The rules (docs/simulator.md): a reference of `size` bytes at `addr`
 * touches the lines addr>>log2(line) .. (addr+size-1)>>log2(line), each one
 * access to the first level (a line access); writes are treated like reads (write-allocate,
 * no write-back traffic); LP_EV_ALLOC/LP_EV_FREE are not accesses. The set
 * of a line is line mod sets (sets a power of two); fully associative
 * caches have one set.
 *
 * Three tools:
 *   lp_cache  one cache, any geometry and policy; a batch of lines in,
 *             hit flags and missed lines out (the fast path);
 *   lp_sim    a hierarchy L1 -> L2 -> ... fed with references; every level
 *             sees the misses of the level above; 3C split per level;
 *   lp_graph  a working-set graph: many fully-associative sizes, policies
 *             LRU, FIFO and random, in one pass over the references;
 *   lp_memspy MemSpy time sampling (Martonosi, Gupta, Anderson 1993).
 */
#ifndef LOCPROF_SIM_H
#define LOCPROF_SIM_H

#include <locprof/common.h>

#ifdef __cplusplus
extern "C" {
#endif

#define LP_POLICY_NAME_MAX 16

/* A cache geometry, as parsed from "SIZE:ASSOC:LINE[:POLICY]". */
struct lp_cache_spec {
	uint64_t size;  /* bytes */
	uint64_t assoc; /* ways; 0 = fully associative */
	uint64_t line;  /* bytes, a power of two */
	char policy[LP_POLICY_NAME_MAX]; /* "lru" (default), "fifo", "random", "plru" */
};

/* Parse "32K:8:64:lru"; assoc is a number (1 = direct mapped) or "full".
 * Fails with LP_EINVAL and an lp_errmsg() saying exactly what is wrong. */
int lp_cache_spec_parse(struct lp_cache_spec *spec, const char *s);

/* Check a spec filled in by hand: the same refusals as the parser. */
int lp_cache_spec_check(const struct lp_cache_spec *spec);

/* "32K:8:64:lru" (assoc "full" when 0). */
const char *lp_cache_spec_format(const struct lp_cache_spec *spec, char *buf, size_t len);

/* Comma-separated names of the replacement policies. */
const char *lp_cache_policy_names(void);

/* Sets and ways of a valid spec. */
uint64_t lp_cache_spec_sets(const struct lp_cache_spec *spec);
uint64_t lp_cache_spec_ways(const struct lp_cache_spec *spec);

/* ---- one cache ----------------------------------------------------------- */
struct lp_cache;

/* seed drives the random policy: a miss in a full set of W ways evicts way
 * lp_rng_below(rng, W) of an xoshiro256** generator seeded with seed (one
 * draw per such miss, none otherwise); a set that is not full fills its
 * lowest invalid way first, whatever the policy. */
int lp_cache_new(struct lp_cache **out, const struct lp_cache_spec *spec, uint64_t seed);
void lp_cache_free(struct lp_cache *c);

/* Simulate n line numbers (address >> log2(line)) in order. hit[i] (if
 * hit != NULL) receives 1 or 0; the missed lines are appended to miss_out
 * (if not NULL; room for n). Returns the number of misses. */
size_t lp_cache_access_lines(struct lp_cache *c, const uint64_t *lines, size_t n,
			     uint8_t *hit, uint64_t *miss_out);

/* Accesses and misses so far. */
void lp_cache_counts(const struct lp_cache *c, uint64_t *accesses, uint64_t *misses);

/* ---- a hierarchy, or independent caches -------------------------------- */
struct lp_level_stats {
	uint64_t accesses, misses; /* line accesses, and those that missed */
	uint64_t cold;     /* first access ever to the line at this level */
	uint64_t capacity; /* not cold, and also a miss in a fully-associative LRU cache of the same size and line */
	uint64_t conflict; /* the other misses: would have hit with full associativity */
	/* Per reference, as Cachegrind counts: accesses (lp_sim_ref_accesses())
	 * with at least one missed line at this level (a reference straddling
	 * two lines is one access, one miss at most). The ratio is
	 * ref_misses / lp_sim_ref_accesses() at every level, as Cachegrind's
	 * D1 and LLd miss rates are. */
	uint64_t ref_misses;
};

struct lp_sim;

enum {
	LP_SIM_3C = 1, /* classify misses into cold / capacity / conflict (slower) */
};

/* A hierarchy of n levels, specs[0] = L1. flags: LP_SIM_3C. */
int lp_sim_new(struct lp_sim **out, const struct lp_cache_spec *specs, size_t n,
	       uint64_t seed, unsigned flags);
void lp_sim_free(struct lp_sim *s);

/* Feed records (allocation events are skipped). */
int lp_sim_refs(struct lp_sim *s, const struct lp_ref *refs, size_t n);

size_t lp_sim_levels(const struct lp_sim *s);
void lp_sim_level_stats(const struct lp_sim *s, size_t level, struct lp_level_stats *out);
/* References (records that are accesses) seen. */
uint64_t lp_sim_references(const struct lp_sim *s);
/* Accesses per reference, as Cachegrind counts them: the references, less
 * the writes that complete a read-modify-write (a write by the same pc and
 * thread to the same address and size as the reference just before it,
 * a read), which Cachegrind merges with their read into one "modify". */
uint64_t lp_sim_ref_accesses(const struct lp_sim *s);

/* ---- working-set graph, one pass ------------------------------------------ */
enum {
	LP_GRAPH_LRU = 1,
	LP_GRAPH_FIFO = 2,
	LP_GRAPH_RANDOM = 4,
};
#define LP_GRAPH_MAX_SIZES 64

struct lp_graph;

/* Fully-associative caches of sizes[0..n) bytes (multiples of line, any
 * order, no duplicates, at most LP_GRAPH_MAX_SIZES), line a power of two,
 * policies a mask of LP_GRAPH_*. The random caches each use seed as
 * lp_cache_new() does, so every point equals a separate simulation of
 * "SIZE:full:LINE:random" with the same seed. */
int lp_graph_new(struct lp_graph **out, const uint64_t *sizes, size_t n, uint64_t line,
		 unsigned policies, uint64_t seed);
void lp_graph_free(struct lp_graph *g);
int lp_graph_refs(struct lp_graph *g, const struct lp_ref *refs, size_t n);
int lp_graph_lines(struct lp_graph *g, const uint64_t *lines, size_t n);

struct lp_graph_point {
	uint64_t size;      /* bytes */
	uint64_t accesses;  /* line accesses */
	uint64_t cold;      /* first touches (a miss at every size) */
	uint64_t lru_misses, fifo_misses, random_misses; /* including cold */
	/* per reference (lp_graph_refs(); 0 from lp_graph_lines()): accesses
	 * as lp_sim_ref_accesses() counts them, and those with a missed line */
	uint64_t ref_accesses;
	uint64_t lru_ref_misses, fifo_ref_misses, random_ref_misses;
};
size_t lp_graph_sizes(const struct lp_graph *g);
/* Points in increasing order of size. */
void lp_graph_point(const struct lp_graph *g, size_t i, struct lp_graph_point *out);

/* ---- MemSpy time sampling ---------------------------------------------- */
struct lp_memspy_params {
	struct lp_cache_spec cache; /* LRU, or any policy if direct mapped */
	uint64_t sample_length;     /* R references per sample, > 0 */
	uint64_t sample_interval;   /* one sample starts every I references, I >= R */
	int random_lengths;         /* draw each length uniformly in [R/2, 3R/2] (interval scales with it) */
	uint64_t seed;
};

struct lp_memspy_result {
	uint64_t references, samples, sampled_references;
	uint64_t lines;              /* lines (frames) in the cache */
	/* the sampled simulation, over line accesses inside samples */
	uint64_t known_hits, known_misses, unknown;
	double m_mu0, m_mu05, m_mu1; /* Eq. 1 with mu = 0, 0.5, 1 */
	double bound;                /* Eq. 1 half-width 0.5*U/N: m_mu05 +- bound */
	double wood_mu;              /* dead time / generation time, generations inside samples */
	double wood_touched_mu;      /* the same with the lines-touched correction */
	double m_wood, m_wood_touched;
	uint64_t generations;
	double gens_per_line_sample; /* generations / (samples * lines) */
	/* the truth, from a full simulation of the whole trace */
	uint64_t accesses, misses;   /* all line accesses */
	double true_miss_ratio;
	uint64_t sample_accesses, sample_misses;
	double true_miss_ratio_samples;
	double true_mu;              /* fraction of the unknown references that really missed */
};

struct lp_memspy;
int lp_memspy_new(struct lp_memspy **out, const struct lp_memspy_params *p);
void lp_memspy_free(struct lp_memspy *m);
int lp_memspy_refs(struct lp_memspy *m, const struct lp_ref *refs, size_t n);
void lp_memspy_result(struct lp_memspy *m, struct lp_memspy_result *out); /* flushes pending work */

/* ---- several threads: private caches, a shared one, coherence ----------
 * Every thread runs on a core (one core per thread, round-robin over N
 * cores, or an explicit map). Each core has private levels (an L1 and
 * optionally an L2, non-inclusive: level 2 sees the misses of level 1);
 * the misses of the last private level of every core go, in trace order,
 * to one shared last-level cache. Writes keep the private copies coherent
 * with MSI or MESI invalidation at line granularity: a write removes the
 * line from every other core's private levels. Every miss is cold (first
 * access of that cache to the line), coherence (the cache's copy was last
 * removed by another core's write) or replacement (evicted by the
 * policy); a coherence miss is false sharing when no other core wrote any
 * byte the missing reference touches in the line since the copy was
 * invalidated, true sharing otherwise. All rules: docs/simulator.md. */
#define LP_MTSIM_MAX_CORES 64
#define LP_MTSIM_MAX_PRIVATE 2
#define LP_MTSIM_ALL UINT32_MAX /* "every thread" or "every core" in the stats calls */

enum lp_mtsim_protocol {
	LP_MTSIM_MESI = 0, /* a read with no other copy gets Exclusive; its first write is silent */
	LP_MTSIM_MSI = 1,  /* no Exclusive state: the first write to a read line is an upgrade */
};

enum {
	LP_MTSIM_EVENTS = 1, /* log every coherence miss (lp_mtsim_events()) */
};

struct lp_mtsim_config {
	struct lp_cache_spec priv[LP_MTSIM_MAX_PRIVATE]; /* L1 [, L2] of every core: lru, fifo or random */
	size_t npriv;                                      /* 1 or 2 */
	struct lp_cache_spec shared;                       /* the shared last-level cache, any policy */
	int has_shared;
	/* Cores: with core_map, thread id t runs on core core_map[t] (t <
	 * ncore_map and core_map[t] != UINT32_MAX, else the thread's first
	 * reference is refused with LP_EINVAL); else with
	 * cores > 0 the k-th thread to appear (from 0) runs on core k mod
	 * cores; else every thread on a core of its own. At most
	 * LP_MTSIM_MAX_CORES cores. */
	uint32_t cores;
	const uint32_t *core_map;
	size_t ncore_map;
	enum lp_mtsim_protocol protocol;
	uint64_t seed;  /* random policies, as lp_cache_new() */
	unsigned flags; /* LP_MTSIM_EVENTS */
};

/* Counts of one level, over all its caches or for one thread or core.
 * cold + replacement + coherence = misses; false_sharing + true_sharing =
 * coherence. upgrades and downgrades are counted at level 0 only. */
struct lp_mtsim_stats {
	uint64_t accesses, misses;  /* line accesses, and those that missed */
	uint64_t cold, replacement, coherence;
	uint64_t false_sharing, true_sharing;
	uint64_t invalidations; /* copies removed from other cores' caches of this level by these writes */
	uint64_t upgrades;      /* writes hitting a private copy that was not Modified or Exclusive */
	uint64_t downgrades;    /* reads that turned another core's Modified copy into Shared */
};

/* One coherence miss (LP_MTSIM_EVENTS). */
struct lp_mtsim_event {
	uint64_t time;       /* the reference's number among the accesses, from 1 */
	uint64_t pc, addr;   /* of the missing reference (addr: its first byte in the line) */
	uint64_t line;       /* line number */
	uint64_t writer_pc;  /* the write that invalidated the copy */
	uint64_t writer_time;
	uint32_t tid, writer_tid;
	uint32_t level;      /* 0 = L1 */
	uint8_t false_sharing;
};

struct lp_mtsim;

/* Fails with LP_EINVAL and the reason: a bad spec, npriv not 1 or 2,
 * different line sizes (coherence is per line: every level takes one line
 * size), a private plru cache, too many cores. */
int lp_mtsim_new(struct lp_mtsim **out, const struct lp_mtsim_config *cfg);
void lp_mtsim_free(struct lp_mtsim *s);
/* Feed records (allocation events are skipped). LP_EINVAL for a thread
 * that the core map does not name, or a 65th core; the references before
 * it have been simulated. */
int lp_mtsim_refs(struct lp_mtsim *s, const struct lp_ref *refs, size_t n);

/* Levels: the private ones, then the shared one. */
size_t lp_mtsim_levels(const struct lp_mtsim *s);
const struct lp_cache_spec *lp_mtsim_level_spec(const struct lp_mtsim *s, size_t level);
int lp_mtsim_level_shared(const struct lp_mtsim *s, size_t level);
/* References (loads and stores) seen. */
uint64_t lp_mtsim_references(const struct lp_mtsim *s);
/* Threads in order of first appearance: their ids and cores. */
size_t lp_mtsim_threads(const struct lp_mtsim *s);
uint32_t lp_mtsim_thread_id(const struct lp_mtsim *s, size_t i);
uint32_t lp_mtsim_thread_core(const struct lp_mtsim *s, size_t i);
/* Cores in use (the highest core number + 1). */
uint32_t lp_mtsim_cores(const struct lp_mtsim *s);
/* The counts of one level for thread number i (order of appearance, not
 * the id), or for all threads with LP_MTSIM_ALL. */
void lp_mtsim_thread_stats(const struct lp_mtsim *s, size_t level, uint32_t i, struct lp_mtsim_stats *out);
/* The counts of one level of one core (the shared level: of the core's
 * threads' accesses to it). */
void lp_mtsim_core_stats(const struct lp_mtsim *s, size_t level, uint32_t core, struct lp_mtsim_stats *out);
/* The coherence misses logged since the last lp_mtsim_events_clear()
 * (LP_MTSIM_EVENTS), in order; valid until the next lp_mtsim_refs(). */
size_t lp_mtsim_events(const struct lp_mtsim *s, const struct lp_mtsim_event **ev);
void lp_mtsim_events_clear(struct lp_mtsim *s);

/* ---- the host's caches ------------------------------------------------ */
struct lp_host_cache {
	unsigned level;
	char type[16];  /* "Data" or "Unified" */
	char name[40];  /* "L1 48K": the level and the size as sysfs writes them */
	uint64_t size, ways, line; /* bytes, ways of associativity, bytes */
};

/* The data and unified caches of cpu0, from
 * SYSFS/devices/system/cpu/cpu0/cache/index<i>/ in index order (sysfs_root
 * NULL = "/sys"; tests pass a fake tree). An entry whose files are missing
 * or unreadable is skipped; the scan stops at the first index without a
 * level. At most cap entries; *n says how many. 0 even when none is found
 * (a machine or container without the directory). */
int lp_host_caches(const char *sysfs_root, struct lp_host_cache *out, size_t cap, size_t *n);

/* ---- a cache as every command names it -------------------------------- */
struct lp_named_cache {
	char name[64]; /* the SPEC as written, or the host's "L1 48K" */
	struct lp_cache_spec spec;
};

/* One cache argument (report --cache, simulate --cache and --level):
 *   SIZE:ASSOC:LINE[:POLICY]  lp_cache_spec_parse()
 *   L1, L2, L3                that level of this machine's data caches (a
 *                             unified cache counts), LRU
 *   host                      every data or unified level of this machine
 * Fills out[0..*n) (at most cap). Fails with LP_EINVAL and the reason: the
 * SPEC's, "this machine has no L3 data cache", "cannot read this machine's
 * caches (no SYSFS/devices/system/cpu/cpu0/cache)", or a host level the
 * simulator cannot take ("host L3 ...: <the SPEC's reason>"); LP_ELIMIT
 * when more than cap. sysfs_root as for lp_host_caches(). */
int lp_cache_arg_parse(const char *arg, const char *sysfs_root, struct lp_named_cache *out, size_t cap,
		       size_t *n);

#ifdef __cplusplus
}
#endif
#endif
