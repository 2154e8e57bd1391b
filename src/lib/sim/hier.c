/* A cache hierarchy fed with references.
 *
 * Rules: level 1 sees every line a reference touches (a reference that
 * straddles k lines is k accesses); level i+1 sees exactly the missed
 * lines of level i, in order, translated to its own line size (a missed
 * 64-byte line is one access to the 128-byte line containing it, or two
 * accesses to the 32-byte lines it contains). Levels are not inclusive or
 * exclusive: nothing flows back up, and there are no write-backs.
 *
 * 3C split (Hill): a miss is cold if the line was never accessed at this
 * level before; capacity if it also misses in a fully-associative LRU cache
 * of the same size and line size fed with the same accesses; conflict
 * otherwise. The three always sum to the misses (a fully-associative cache
 * may miss where the real one hits; such accesses are hits and are not
 * counted anywhere).
 *
 * Per reference (what Cachegrind and hardware counters count): a reference
 * misses at a level when any of the lines it brought there misses, so a
 * reference that straddles two lines is one reference and at most one miss
 * per level. Each line carries the number of its reference through the
 * levels; the misses of a level are its missed lines with distinct
 * numbers. A write by the same instruction to the same bytes as the read
 * just before it (a read-modify-write, `add %eax, (%rdx)`) takes the
 * read's number, as Cachegrind's "modify" event does: one access. */
#include "sim/sim-internal.h"

#include "common/error.h"

#include <stdlib.h>
#include <string.h>

enum { LINEBUF = 8192 };

struct level {
	struct lp_cache *cache;
	struct lp_graph *fa; /* 3C: one fully-associative LRU size */
	unsigned shift;
	uint64_t *in, *miss;
	uint64_t *in_ref, *miss_ref; /* the reference number of each line */
	uint8_t *hit;
	uint64_t cold, capacity, conflict;
	uint64_t ref_misses;    /* references with a missed line here */
	uint64_t last_miss_ref; /* number of the last one (refs are numbered from 1) */
};

struct lp_sim {
	size_t n;
	uint64_t refs;
	uint64_t ref_accesses; /* references, a read-modify-write counted once */
	struct lp_ref last;    /* the last reference seen (kind 0xff: none) */
	struct level lv[];
};

int lp_sim_new(struct lp_sim **out, const struct lp_cache_spec *specs, size_t n, uint64_t seed,
	       unsigned flags)
{
	struct lp_sim *s;
	int err;

	*out = NULL;
	if (!n)
		return lp_seterr(LP_EINVAL, "no cache level");
	if (!(s = calloc(1, sizeof(*s) + n * sizeof(s->lv[0]))))
		return lp_seterr(LP_ENOMEM, "out of memory");
	s->n = n;
	s->last.kind = 0xff;
	for (size_t i = 0; i < n; i++) {
		struct level *l = &s->lv[i];
		char buf[64];

		if ((err = lp_cache_new(&l->cache, &specs[i], seed)) < 0) {
			lp_seterr(err, "level %zu (%s): %s", i + 1,
				  lp_cache_spec_format(&specs[i], buf, sizeof(buf)), lp_errmsg());
			goto out_free;
		}
		l->shift = lp_log2_u64(specs[i].line);
		l->in = malloc(LINEBUF * sizeof(*l->in));
		l->miss = malloc(LINEBUF * sizeof(*l->miss));
		l->hit = malloc(LINEBUF);
		l->in_ref = malloc(LINEBUF * sizeof(*l->in_ref));
		l->miss_ref = malloc(LINEBUF * sizeof(*l->miss_ref));
		if (!l->in || !l->miss || !l->hit || !l->in_ref || !l->miss_ref) {
			err = lp_seterr(LP_ENOMEM, "out of memory");
			goto out_free;
		}
		if ((flags & LP_SIM_3C) &&
		    (err = lp_graph_new(&l->fa, &specs[i].size, 1, specs[i].line, LP_GRAPH_LRU, 0)) < 0)
			goto out_free;
	}
	*out = s;
	return 0;
out_free:
	lp_sim_free(s);
	return err;
}

void lp_sim_free(struct lp_sim *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++) {
		lp_cache_free(s->lv[i].cache);
		lp_graph_free(s->lv[i].fa);
		free(s->lv[i].in);
		free(s->lv[i].miss);
		free(s->lv[i].hit);
		free(s->lv[i].in_ref);
		free(s->lv[i].miss_ref);
	}
	free(s);
}

static int feed(struct lp_sim *s, size_t i, const uint64_t *lines, const uint64_t *refs, size_t n,
		unsigned from_shift);

/* The per-reference misses of a batch, and the reference numbers of its
 * missed lines (in the order lp_cache_access_lines() appends them). */
static void count_ref_misses(struct level *l, const uint64_t *refs, size_t n)
{
	size_t m = 0;

	for (size_t j = 0; j < n; j++) {
		if (l->hit[j])
			continue;
		l->miss_ref[m++] = refs[j];
		if (refs[j] != l->last_miss_ref) {
			l->ref_misses++;
			l->last_miss_ref = refs[j];
		}
	}
}

/* n <= LINEBUF */
static int run_level(struct lp_sim *s, size_t i, const uint64_t *lines, const uint64_t *refs, size_t n)
{
	struct level *l = &s->lv[i];
	size_t nm = lp_cache_access_lines(l->cache, lines, n, l->hit, i + 1 < s->n ? l->miss : NULL);

	count_ref_misses(l, refs, n);
	if (l->fa) {
		for (size_t j = 0; j < n; j++) {
			int r = lp_graph_access_one(l->fa, lines[j]);
			if (r < 0)
				return r;
			if (l->hit[j])
				continue;
			if (r == 0)
				l->cold++;
			else if (r == 2)
				l->capacity++;
			else
				l->conflict++;
		}
	}
	if (i + 1 < s->n && nm)
		return feed(s, i + 1, l->miss, l->miss_ref, nm, l->shift);
	return 0;
}

static int feed(struct lp_sim *s, size_t i, const uint64_t *lines, const uint64_t *refs, size_t n,
		unsigned from_shift)
{
	struct level *l = &s->lv[i];
	size_t k = 0;
	int err;

	if (from_shift == l->shift)
		return run_level(s, i, lines, refs, n);
	for (size_t j = 0; j < n; j++) {
		uint64_t first, last;
		if (from_shift > l->shift) {
			first = lines[j] << (from_shift - l->shift);
			last = first + ((1ULL << (from_shift - l->shift)) - 1);
		} else {
			first = last = lines[j] >> (l->shift - from_shift);
		}
		for (uint64_t x = first;; x++) {
			l->in_ref[k] = refs[j];
			l->in[k++] = x;
			if (k == LINEBUF) {
				if ((err = run_level(s, i, l->in, l->in_ref, k)) < 0)
					return err;
				k = 0;
			}
			if (x == last)
				break;
		}
	}
	return k ? run_level(s, i, l->in, l->in_ref, k) : 0;
}

int lp_sim_refs(struct lp_sim *s, const struct lp_ref *refs, size_t n)
{
	struct level *l = &s->lv[0];
	uint64_t *in = l->in, *in_ref = l->in_ref, nrefs = 0, id = s->ref_accesses;
	const struct lp_ref *prev = &s->last;
	unsigned shift = l->shift;
	size_t k = 0;
	int err = 0;

	/* The counts live in locals and the common case, a reference within
	 * one line, is two stores: s->refs++ in memory and the general loop
	 * cost ~6 ns a reference, as much as the LRU cache itself (perf,
	 * bench-sim-throughput). */
	for (size_t i = 0; i < n; i++) {
		uint64_t first, last;

		__builtin_prefetch(&refs[i + 32]);
		if (!lp_ref_is_access(&refs[i]))
			continue;
		nrefs++;
		if (!lp_ref_is_modify(prev, &refs[i]))
			id++;
		prev = &refs[i];
		lp_ref_lines(&refs[i], shift, &first, &last);
		if (first != last) {
			for (uint64_t x = first;; x++) {
				in_ref[k] = id;
				in[k++] = x;
				if (k == LINEBUF) {
					if ((err = run_level(s, 0, in, in_ref, k)) < 0)
						goto out;
					k = 0;
				}
				if (x == last)
					break;
			}
			continue;
		}
		in_ref[k] = id;
		in[k++] = first;
		if (k == LINEBUF) {
			if ((err = run_level(s, 0, in, in_ref, k)) < 0)
				goto out;
			k = 0;
		}
	}
	if (k)
		err = run_level(s, 0, in, in_ref, k);
out:
	if (prev != &s->last)
		s->last = *prev;
	s->refs += nrefs;
	s->ref_accesses = id;
	return err;
}

size_t lp_sim_levels(const struct lp_sim *s)
{
	return s->n;
}

uint64_t lp_sim_references(const struct lp_sim *s)
{
	return s->refs;
}

uint64_t lp_sim_ref_accesses(const struct lp_sim *s)
{
	return s->ref_accesses;
}

void lp_sim_level_stats(const struct lp_sim *s, size_t level, struct lp_level_stats *out)
{
	const struct level *l = &s->lv[level];

	lp_cache_counts(l->cache, &out->accesses, &out->misses);
	out->cold = l->cold;
	out->capacity = l->capacity;
	out->conflict = l->conflict;
	out->ref_misses = l->ref_misses;
}
