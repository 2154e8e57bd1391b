/* Threads and caches: private caches per thread, caches shared by groups
 * of threads, and the coherence misses between them, from the samples'
 * two clocks (lp_sample.time/reuse: the thread's own; stime/sreuse/sown:
 * all threads'; common/share-core.h). In the line of Berg, Zeffer and
 * Hagersten's multiprocessor StatCache and of StatStack in shared time:
 * each cache is modelled by the single-cache models (StatStack for LRU,
 * StatCache for random replacement) run on a view of the profile as that
 * cache sees it, and a coherence miss is added where the model has a hit.
 *
 * Assumptions:
 *  - A cache shared by a group of threads sees their references
 *    interleaved as the run interleaved them. For all threads together
 *    that is exact: the shared clock and the first access by any thread.
 *    For a part of the threads, a shared distance counts the owner's own
 *    accesses in it whole (the sample knows them up to the owner's reuse)
 *    and the other threads' by the group's share of their references
 *    (the threads run at steady relative speeds). The reuse is the first
 *    access by any thread when that thread is in the group; the owner's
 *    own reuse when the sample's mask of the threads that touched the
 *    line before it (lp_profile.masks) holds no other thread of the
 *    group: both exact. Else it lies between the two, and is drawn where
 *    the first of the group's other threads would come if every thread
 *    touched the line at random at a rate in proportion to its
 *    references, below the owner's reuse when the mask says one of them
 *    came before it (the mask says which threads came, not when; a
 *    profile without masks does not say which either, and takes the
 *    draw cut at the owner's reuse for every such sample). On a random 4-thread
 *    trace (tests/unit/model/test-share-model.c) two caches of two
 *    threads come within 0.003 of exact LRU on average with the masks
 *    (coherence part 0.002), 0.004 without (0.002).
 *  - A thread alone on a cache sees its own clock and reuse exactly.
 *  - A coherence miss: the sample's line was written by a thread outside
 *    the owner's cache before the cache's reuse, and the reuse would
 *    otherwise hit. When the cache's reuse is the owner's own (the mask
 *    holds no other thread of the cache), any writer of the sample's
 *    writer mask outside the cache invalidated it: exact. Else (or
 *    without masks) the first writer is the one known, and a later
 *    writer from outside, after a first one from inside, is missed (the
 *    masks do not say whether a write came before or after the cache's
 *    reuse). Invalidation of lines
 *    that are never reused is no miss. Threads beyond 64 share mask bits
 *    (thread % 64): with more threads the masks are not used.
 *  - Every thread samples at the same rate, so a group's samples stand
 *    for its share of the line accesses; the whole process's misses per
 *    line access are the groups' ratios weighted by their shares.
 *  - A profile without shared time (lp_profile.shared = 0: versions 1
 *    and 2, the valgrind and pmu backends) has only the private view:
 *    every view uses it, with no coherence.
 */
#include <locprof/model.h>

#include "common/error.h"
#include "common/hash.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The thread of a sample (or a writer) beyond the placement's table:
 * placed as tid mod ngroups. */
static uint32_t group_of(const struct lp_share_placement *pl, uint32_t tid)
{
	return tid < pl->nthreads ? pl->group[tid] : tid % pl->ngroups;
}

uint32_t lp_share_threads(const struct lp_profile *p)
{
	uint32_t n = p->n_threads;

	for (size_t i = 0; i < p->n_samples; i++)
		if (p->samples[i].tid >= n)
			n = p->samples[i].tid + 1;
	return n ? n : 1;
}

double lp_share_group_share(const struct lp_profile *p, unsigned li, const struct lp_share_placement *pl,
			    uint32_t g)
{
	uint64_t mine = 0, all = 0;
	size_t first, n;

	for (uint32_t t = 0; t < p->n_threads; t++) {
		all += p->thread_refs[t];
		if (group_of(pl, t) == g)
			mine += p->thread_refs[t];
	}
	if (all)
		return (double)mine / (double)all;
	/* no per-thread counts: the samples' shares */
	lp_profile_line_samples(p, li, &first, &n);
	for (size_t i = first; i < first + n; i++)
		mine += group_of(pl, p->samples[i].tid) == g;
	return n ? (double)mine / (double)n : 0;
}

/* The share of the references made by thread tid (the samples' share
 * when the profile has no per-thread counts: 1 / threads). */
static double lp_thread_share(const struct lp_profile *p, uint32_t tid)
{
	uint64_t all = 0;

	for (uint32_t t = 0; t < p->n_threads; t++)
		all += p->thread_refs[t];
	if (!all)
		return 1.0 / lp_share_threads(p);
	return tid < p->n_threads ? (double)p->thread_refs[tid] / (double)all : 0;
}

/* Pairs of u64 (shared time, own time) by their first. */
static int by_stime(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;

	return (x[0] > y[0]) - (x[0] < y[0]);
}

static int by_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* One thread's samples as pairs (shared time, own time), sorted here by
 * shared time (own time rises with it): the median of the ratios of
 * their gaps over the ratio of the sums (NAN with fewer than 16 gaps).
 * ratio: scratch of n doubles. */
static double together_one(uint64_t *pairs, size_t n, double *ratio)
{
	double own = 0, shared = 0, med;
	size_t k = 0;

	qsort(pairs, n, 2 * sizeof(*pairs), by_stime); /* own and shared time rise together */
	for (size_t i = 1; i < n; i++) {
		double go = (double)pairs[2 * i + 1] - (double)pairs[2 * i - 1];
		double gs = (double)pairs[2 * i] - (double)pairs[2 * i - 2];
		if (!(go > 0) || gs < 0)
			continue;
		ratio[k++] = gs / go;
		own += go;
		shared += gs;
	}
	if (k < 16 || !(own > 0))
		return NAN;
	qsort(ratio, k, sizeof(*ratio), by_double);
	med = k % 2 ? ratio[k / 2] : (ratio[k / 2 - 1] + ratio[k / 2]) / 2;
	return med / (shared / own);
}

double lp_share_together(const struct lp_profile *p, unsigned li)
{
	uint32_t nt = lp_share_threads(p);
	size_t first, n, *count = NULL, *at = NULL, used = 0;
	uint64_t *pairs = NULL;
	double *ratio = NULL, sum = 0, weight = 0;

	if (!p->shared || li >= p->n_line_sizes || nt < 2)
		return NAN;
	lp_profile_line_samples(p, li, &first, &n);
	if (!(count = calloc(nt + 1, sizeof(*count))) || !(at = calloc(nt + 1, sizeof(*at))) ||
	    !(pairs = malloc((n ? n : 1) * 2 * sizeof(*pairs))) || !(ratio = malloc((n ? n : 1) * sizeof(*ratio))))
		goto out;
	for (size_t i = first; i < first + n; i++)
		count[p->samples[i].tid + 1]++;
	for (uint32_t t = 0; t < nt; t++)
		count[t + 1] += count[t];
	for (size_t i = first; i < first + n; i++) {
		const struct lp_sample *s = &p->samples[i];
		size_t k = count[s->tid] + at[s->tid]++;
		pairs[2 * k] = s->stime;
		pairs[2 * k + 1] = s->time;
	}
	for (uint32_t t = 0; t < nt; t++) {
		double b = together_one(pairs + 2 * count[t], count[t + 1] - count[t], ratio);
		double w = lp_thread_share(p, t);
		if (isnan(b) || !(w > 0))
			continue;
		sum += w * b;
		weight += w;
		used++;
	}
out:
	free(count);
	free(at);
	free(pairs);
	free(ratio);
	return used >= 2 && weight > 0 ? sum / weight : NAN;
}

/* A shared distance d of sample s (owner share so of the references) as
 * the accesses of a group of share sg: the owner's own part of it
 * counts whole, the other threads' part by the group's share of their
 * references. The owner's part of an interval is what it was up to its
 * own reuse (reuse of sown), which the sample knows exactly. */
static uint64_t group_dist(const struct lp_sample *s, uint64_t d, double so, double sg)
{
	double own = so, rho;

	if (d == LP_REUSE_DANGLING)
		return d;
	if (s->reuse != LP_REUSE_DANGLING && s->sown != LP_REUSE_DANGLING && s->sown > 0)
		own = fmin(1.0, (double)s->reuse / (double)s->sown);
	rho = so < 1 ? fmax(0.0, (sg - so) / (1 - so)) : 0;
	return (uint64_t)llround((double)d * (own + (1 - own) * rho));
}

static uint64_t scaled(uint64_t d, double share)
{
	if (d == LP_REUSE_DANGLING)
		return d;
	return (uint64_t)llround((double)d * share);
}

static uint64_t lp_share_bit(uint32_t tid)
{
	return 1ull << (tid & 63);
}

/* The threads of group g as a mask of lp_sample.touched (0 when the
 * profile has no masks or more threads than bits). */
static uint64_t group_mask(const struct lp_profile *p, const struct lp_share_placement *pl, uint32_t g,
			   uint32_t nthreads)
{
	uint64_t m = 0;

	if (!p->masks || nthreads > 64)
		return 0;
	for (uint32_t t = 0; t < nthreads; t++)
		if (group_of(pl, t) == g)
			m |= lp_share_bit(t);
	return m;
}

/* Whether the reuse of sample s in the cache of its group g (members
 * threads of nthreads; so the owner's share of the references, sg the
 * group's) is estimated by group_reuse(): the first access to the line
 * by another thread was another group's, and (where the profile has the
 * masks) the group's other threads touched the line before the owner's
 * own reuse. */
static int group_estimated(const struct lp_sample *s, const struct lp_share_placement *pl, uint32_t g,
			   uint32_t members, double so, double sg, uint64_t gmask)
{
	if (group_of(pl, s->stid) == g || s->sreuse == LP_REUSE_DANGLING)
		return 0;
	if (members < 2 || !(sg - so > 0))
		return 0;
	return !gmask || (s->touched & gmask & ~lp_share_bit(s->tid));
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* The mean distance, on the shared clock, from a use to the first access
 * to its line by any thread (the owner included: the first access is the
 * first of all the threads' arrivals, whichever thread it was), over the
 * samples of group g whose reuse is estimated: their median over ln 2
 * (the mean of an exponential wait; a few very long first distances, the
 * main thread's lines, would pull a plain mean). 0 without such samples;
 * < 0 on error. */
static double foreign_wait(const struct lp_profile *p, size_t first, size_t n, const struct lp_share_placement *pl,
			   uint32_t g, uint32_t members, double sg, uint64_t gmask)
{
	double *v = malloc((n ? n : 1) * sizeof(*v)), wait = 0;
	size_t k = 0;

	if (!v)
		return lp_seterr(LP_ENOMEM, "out of memory");
	for (size_t i = first; i < first + n; i++) {
		const struct lp_sample *x = &p->samples[i];
		if (group_of(pl, x->tid) == g &&
		    group_estimated(x, pl, g, members, lp_thread_share(p, x->tid), sg, gmask))
			v[k++] = (double)x->sreuse + 1;
	}
	if (k) {
		qsort(v, k, sizeof(*v), cmp_double);
		wait = v[k / 2] / log(2.0);
	}
	free(v);
	return wait;
}

/* The reuse of sample s in the cache of its group g, on the shared clock:
 * the first access by any thread when that thread is in g; else the first
 * by the group's other threads, which comes after the first foreign one,
 * or the owner's own reuse if that is sooner. Taking the accesses to the
 * line as coming at random, each thread's at a rate in proportion to its
 * references (by references, not by threads: a main thread that waits for
 * its workers touches no line then), the first access by any thread T is
 * exponential with mean `wait` (foreign_wait()), whoever made it, and the
 * wait W for the group's others is memoryless: it starts afresh at T, with
 * mean wait / (sg - so), the group's others making sg - so of the
 * references. Where the mask says that one of them came before the
 * owner's reuse, W is below L = sown - T - 1, and is drawn from the
 * exponential truncated there; without the mask, drawn whole and cut at
 * the owner's reuse. A draw, with a uniform number hashed from the
 * sample's time and thread (the same view of the same profile every
 * time), not the mean: the long reuses are the ones a cache near the
 * data's size misses. Four threads reading one table at random,
 * interleaved in bursts of 1 to 7 accesses (mt-readonly 4 65536 1000000
 * through bench-trace-interleave, threads split in halves): over the
 * estimated samples of each half (about 500 of 2 000), the mean W was
 * 7 711 and 8 115 shared accesses, the truncated exponential's mean
 * 8 258 and 8 039. The mean taken before, (1 - so) / (sg - so) times
 * the mean first distance, is a quarter short (it counts the owner's own
 * rate in the wait for the others), and cutting at the owner's reuse
 * a draw known to lie below it lengthens the reuses: together they put
 * that kernel's pairs 2 to 14 points above simulation at 256K, the
 * table's size (tests/unit/model/test-share-model.c, pairs near the
 * table size). */
static uint64_t group_reuse(const struct lp_sample *s, const struct lp_share_placement *pl, uint32_t g,
			    uint32_t members, double so, double sg, uint64_t gmask, double wait)
{
	double u, d, mean;

	if (group_of(pl, s->stid) == g || s->sreuse == LP_REUSE_DANGLING)
		return s->sreuse;
	if (!group_estimated(s, pl, g, members, so, sg, gmask))
		return s->sown;
	u = ((double)(lp_hash64(s->stime * 0x9e3779b97f4a7c15ull + s->tid) >> 11) + 0.5) / 9007199254740992.0;
	mean = wait / (sg - so);
	if (gmask && s->sown != LP_REUSE_DANGLING) {
		/* the mask says one of the group's others came before the
		 * owner's reuse: W < L, the exponential truncated there */
		double L = (double)s->sown - (double)s->sreuse - 1;
		if (!(L > 0))
			return s->sown;
		d = ((double)s->sreuse + 1) - mean * log1p(-u * -expm1(-L / mean));
		return d >= (double)s->sown ? s->sown - 1 : (uint64_t)d;
	}
	d = ((double)s->sreuse + 1) - mean * log(u);
	return s->sown != LP_REUSE_DANGLING && d >= (double)s->sown ? s->sown : (uint64_t)d;
}

int lp_share_view(struct lp_profile **out, const struct lp_profile *p, unsigned li,
		  const struct lp_share_placement *pl, uint32_t g)
{
	struct lp_profile *q;
	size_t first, n;
	uint32_t members = 0, nthreads = lp_share_threads(p);
	uint64_t gmask;
	double share, wait = 0;
	int err;

	*out = NULL;
	if (li >= p->n_line_sizes || !pl->ngroups || g >= pl->ngroups)
		return lp_seterr(LP_EINVAL, "no line size %u or group %u", li, g);
	for (uint32_t t = 0; t < nthreads; t++)
		members += group_of(pl, t) == g;
	share = lp_share_group_share(p, li, pl, g);
	gmask = group_mask(p, pl, g, nthreads);
	if ((err = lp_profile_new(&q)) < 0)
		return err;
	q->n_line_sizes = 1;
	q->line_sizes[0] = p->line_sizes[li];
	q->rate = p->rate;
	q->seed = p->seed;
	q->window = p->window;
	q->shared = 0;
	q->accesses[0] = (uint64_t)llround((double)p->accesses[li] * share);
	q->references = (uint64_t)llround((double)p->references * share);
	lp_profile_line_samples(p, li, &first, &n);
	/* a group of some of the threads estimates reuses (group_reuse()) */
	if (p->shared && members > 1 && members < nthreads &&
	    (wait = foreign_wait(p, first, n, pl, g, members, share, gmask)) < 0) {
		lp_profile_free(q);
		return (int)wait;
	}
	for (size_t i = first; i < first + n; i++) {
		struct lp_sample s = p->samples[i];
		int coh = s.coh == LP_COH_TRUE || s.coh == LP_COH_FALSE;
		if (group_of(pl, s.tid) != g)
			continue;
		s.line_idx = 0;
		if (!p->shared || members == 1) {
			/* the thread's own clock: exact */
			s.coh = p->shared && coh ? LP_COH_TRUE : LP_COH_NONE;
		} else if (members == nthreads) {
			s.time = s.stime;
			s.reuse = s.sreuse;
			s.coh = LP_COH_NONE;
		} else {
			s.time = scaled(s.stime, share);
			double so = lp_thread_share(p, s.tid);
			s.reuse = group_dist(&s, group_reuse(&s, pl, g, members, so, share, gmask, wait), so, share);
			if (gmask && !(s.touched & gmask & ~lp_share_bit(s.tid)))
				coh = coh && (s.writers & ~gmask);
			else /* the first writer */
				coh = coh && group_of(pl, s.wtid) != g;
			s.coh = coh ? LP_COH_TRUE : LP_COH_NONE;
		}
		if ((err = lp_profile_add_sample(q, &s)) < 0)
			goto out_free;
	}
	if ((err = lp_profile_finish(q, 0)) < 0)
		goto out_free;
	*out = q;
	return 0;
out_free:
	lp_profile_free(q);
	return err;
}

/* The ratios of one group's cache, per the group's line accesses, added
 * to out[] with weight share. */
static int group_curve(const struct lp_profile *p, unsigned li, const struct lp_share_placement *pl,
		       uint32_t g, double share, const double *lines, size_t n, int include_cold,
		       struct lp_share_ratio *out)
{
	struct lp_profile *q = NULL;
	struct lp_statstack *ss = NULL;
	struct lp_statcache *sc = NULL;
	double *sd = NULL, *prob = NULL, *rnd = NULL;
	size_t ns, finite = 0;
	int err;

	if ((err = lp_share_view(&q, p, li, pl, g)) < 0)
		return err;
	ns = q->n_samples;
	if (!ns)
		goto out; /* nothing sampled: the group adds nothing */
	err = LP_ENOMEM;
	if (!(sd = malloc(ns * sizeof(*sd))) || !(prob = malloc(ns * sizeof(*prob))) ||
	    !(rnd = malloc(n * sizeof(*rnd))))
		goto out;
	if ((err = lp_statstack_new(&ss, q, 0, 0, include_cold)) < 0 ||
	    (err = lp_statstack_sample_sd(ss, sd)) < 0 ||
	    (err = lp_statcache_new(&sc, q, 0, 0, include_cold)) < 0 ||
	    (err = lp_statcache_curve(sc, lines, n, rnd)) < 0)
		goto out;
	size_t coherent = 0;
	for (size_t i = 0; i < ns; i++) {
		finite += q->samples[i].reuse != LP_REUSE_DANGLING;
		coherent += q->samples[i].coh != LP_COH_NONE && q->samples[i].reuse != LP_REUSE_DANGLING;
	}
	double den = (double)(include_cold ? ns : finite);
	for (size_t k = 0; k < n; k++) {
		double lru = lp_statstack_miss_ratio(ss, lines[k]), coh_lru = 0, coh_rnd = 0;
		/* each sample's miss chance only where some reuse was
		 * invalidated (the intervals evaluate this per resample and
		 * at 13 sizes around each: a third of report --shared's time
		 * on a profile without sharing) */
		if (coherent && (err = lp_statcache_sample_miss(sc, lines[k], prob)) < 0)
			goto out;
		for (size_t i = 0; coherent && i < ns; i++) {
			if (q->samples[i].coh == LP_COH_NONE || q->samples[i].reuse == LP_REUSE_DANGLING)
				continue;
			coh_lru += sd[i] < lines[k];
			coh_rnd += 1 - prob[i];
		}
		if (den > 0) {
			coh_lru /= den;
			coh_rnd /= den;
		}
		if (isfinite(lru)) {
			out[k].lru += share * (lru + coh_lru);
			out[k].lru_coh += share * coh_lru;
		}
		if (isfinite(rnd[k])) {
			out[k].random += share * (rnd[k] + coh_rnd);
			out[k].random_coh += share * coh_rnd;
		}
	}
	err = 0;
out:
	free(sd);
	free(prob);
	free(rnd);
	lp_statcache_free(sc);
	lp_statstack_free(ss);
	lp_profile_free(q);
	return err;
}

int lp_share_group_curve(const struct lp_profile *p, unsigned li, const struct lp_share_placement *pl,
			 uint32_t g, const double *lines, size_t n, int include_cold,
			 struct lp_share_ratio *out)
{
	memset(out, 0, n * sizeof(*out));
	return group_curve(p, li, pl, g, 1.0, lines, n, include_cold, out);
}

int lp_share_placement_curve(const struct lp_profile *p, unsigned li, const struct lp_share_placement *pl,
			     const double *lines, size_t n, int include_cold, struct lp_share_ratio *out)
{
	int err;

	memset(out, 0, n * sizeof(*out));
	for (uint32_t g = 0; g < pl->ngroups; g++) {
		double share = lp_share_group_share(p, li, pl, g);
		if (share > 0 && (err = group_curve(p, li, pl, g, share, lines, n, include_cold, out)) < 0)
			return err;
	}
	return 0;
}

int lp_share_placement_split(struct lp_share_placement *pl, uint32_t nthreads, uint32_t ngroups)
{
	if (!nthreads || !ngroups)
		return lp_seterr(LP_EINVAL, "no threads or no caches");
	if (ngroups > nthreads)
		ngroups = nthreads;
	if (!(pl->group = malloc(nthreads * sizeof(*pl->group))))
		return lp_seterr(LP_ENOMEM, "out of memory");
	pl->nthreads = nthreads;
	pl->ngroups = ngroups;
	for (uint32_t t = 0; t < nthreads; t++)
		pl->group[t] = (uint32_t)((uint64_t)t * ngroups / nthreads);
	return 0;
}

void lp_share_placement_release(struct lp_share_placement *pl)
{
	free(pl->group);
	pl->group = NULL;
	pl->nthreads = pl->ngroups = 0;
}
