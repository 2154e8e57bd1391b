/* Set-associative LRU from a sampled profile: where the lines of a reuse's
 * span fall in the sets, read from the samples' addresses, and the misses
 * by the placement model of strided walks (model-setassoc-walk.c), which
 * `model predict` uses for its reference groups too. docs/models.md,
 * "Set-associative LRU: the placement model".
 *
 * What is measured. A sample x (line X, time t, reuse distance d) has a
 * span, the accesses t+1 .. t+d; the D other lines of its reuse (StatStack's
 * estimate) are the lines whose last access in the span is there. A sample
 * y inside the span whose own next access is after it (or never) is such
 * a last access (the argument of StatStack's estimate, model-statstack.c),
 * so its line Y is drawn from the D lines, and Y - X is a draw of where
 * the span's lines lie relative to the reused one. Each x's offsets weigh
 * 1 in all. A span that holds no sample (most short ones) takes its
 * offsets from the walks of the pcs around it (model-setassoc-drift.c).
 *
 * Assumptions:
 * - The reuses of one pc whose D + 1 lie in one octave (below
 *   SA_EXACT_LINES, that are equal) place their spans' lines alike (the
 *   same walk, the same arrays around it): their offsets are pooled. Pcs
 *   with fewer than SA_MIN_PAIRS offsets at one D are pooled over their
 *   octave, and with fewer there with the others of that octave.
 * - Lattice: when at least SA_LATTICE_SHARE of the offsets are multiples
 *   of a step g (a column walk of a row-major matrix: the row length in
 *   lines), the span's lines near the reused one are on the lattice
 *   X + g Z; g is the largest such product of prime powers (2..13), or
 *   a multiple of it on which at least half of the offsets are, where a
 *   mixture of that lattice and lines anywhere explains them better
 *   (likeliest_lattice(): a column walk beside a row).
 * - Walk: the lines on the lattice near X are a walk through X: the
 *   share nu of the span's lines drawn at random from a region of
 *   consecutive lattice points through X. Its density phi is read from
 *   the lattice points within g (D + 1) / 4 of X. A walk at least
 *   SA_DENSE dense is dense: its nu (D + 1) lines are the region, and
 *   each set of the lattice gets its even share. A sparser one's region
 *   is as far as the group's offsets reach (their 99th percentile over
 *   0.9, the share of a range that reused lines spread over it reach at
 *   that percentile): random reads of an array stay in the array.
 *   Contiguous arrays (g = 1, dense) spread evenly over the sets;
 *   random reads of a range are a sparse walk over it; lines
 *   scattered at random over a large range have phi near 0, and the
 *   binomial model is what the walk model then gives, on a lattice of
 *   step 1; on one of step g > 1 they are a sparse walk over their
 *   extent however low phi is: they stay on the s / gcd(g, s) sets of
 *   the reused line's lattice (arrays walked in lock step whole pages
 *   apart: every span's lines in one set).
 * - Second walk: where no lattice holds SA_LATTICE_SHARE, one of step
 *   g >= SA_COSET_STEP holding SA_COSET_SHARE or more, with most other
 *   offsets as near, is two walks (columns i and j walked together): the
 *   second's lines share the reused line's sets in the spans whose shift
 *   is a multiple of gcd(g, s), and are in other sets otherwise.
 * - Part walk: where neither holds, a lattice of step g >= SA_COSET_STEP
 *   holding SA_PART_SHARE or more of the offsets, far beyond the 1/g
 *   that chance puts there (by SA_PART_NATS of likelihood over the
 *   group's spans), is a walk of that share of the span's lines (an
 *   FFT's twiddle factors at the small lengths, whole pages apart).
 * - A walk holds no more of a span's lines than it has lattice points in
 *   its extent, where the share says over SA_OVER_EXTENT times more (the
 *   offsets of a span's last accesses can favour the reused line's own
 *   walk); the excess is placed at random.
 * - The other lines of the span are placed at random (binomial).
 * - A pc that reads a few lines over and over, `ways` or more of them in
 *   one set, misses on its reuses that span them all, whatever the rest
 *   gives (hot footprints, model-setassoc-hot.c).
 * - The offsets are measured in lines of the profile's line size; the
 *   sets are line % s, so the lattice's lines land on s / gcd(g, s) sets.
 * - Samples of different threads are not in each other's spans (their
 *   clocks differ in live profiles).
 * Cost: at most SA_SCAN samples of each span are read (fewer in a large
 * profile: about SA_PAIRS offsets in all), once, at the StatStack model's
 * first set-associative ratio; a cache is one pass of the walk model per
 * group (tests/unit/model/test-setassoc.c: against lp_cache simulation).
 */
#include "model/model-internal.h"

#include "common/error.h"
#include "common/sort.h"
#include "common/htab.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SA_SCAN 64            /* samples read per span, at most */
#define SA_PAIRS (1u << 17)   /* offsets of all spans (memory, time), about */
#define SA_MIN_PAIRS 32       /* offsets for a pc's own estimate */
#define SA_MIN_WALK_PAIRS 8   /* offsets for any walk (see place_groups) */
#define SA_MIN_WALK_SPANS 5   /* ... of a second or part walk: spans */
#define SA_LATTICE_SHARE 0.8  /* share of offsets on a lattice to take it */
#define SA_COSET_SHARE 0.35   /* ... with a second walk beside it */
#define SA_COSET_STEP 8       /* a second walk's lattice: at least 8 lines */
#define SA_COSET_NEAR 0.8     /* share of the other offsets the second walk holds */
#define SA_SHIFT_SHARE 0.15   /* a second walk's shift: its share of the walk */
#define SA_PART_SHARE 0.2     /* a part walk: at least this share on its lattice */
#define SA_PART_NATS 10.0     /* ... explaining the offsets this much better (the
			       * log-likelihood ratio over the group's spans) */
#define SA_MIN_DENSE 0.02     /* near share x density below: random placement
			       * (on a lattice of step 1) */
#define SA_DENSE 0.9          /* a walk's density above: 1 */
#define SA_MAX_REACH 64.0     /* the walk's lines are within 64 (D + 1) lines
			       * (on a lattice of step 1) */
#define SA_MAX_STEP (1ull << 40)
#define SA_OVER_EXTENT 4.0    /* a walk's lines beyond this many times its
			       * lattice points in range: capped at them (the
			       * extent is read from a few hundred offsets) */

struct sa_pair {
	int64_t delta;  /* Y - X in lines */
	double weight;  /* 1 / pairs of its sample: each sample counts once */
	double lines;   /* D + 1 of its sample */
	double rdy;     /* reuse distance of the sample at Y, or of the one
			 * Y's walk was read from (model-setassoc-drift.c);
			 * INFINITY: dangling */
	uint32_t group; /* its sample's group (set once groups are known) */
};

/* The reuse distances of a group's span lines, on its walk and off it,
 * by half octave of rd + 1, weighed as the pairs are: from them, how often
 * the walk's lines miss against the others' (lp_sa_place_crowding()). */
#define SA_RD_BINS 130
struct sa_rd_hist {
	double w[2][SA_RD_BINS]; /* [0]: off the walk, [1]: on it */
	double dangling[2];      /* the weight of the dangling ones */
};

struct lp_sa_place {
	size_t n;               /* samples of the line size */
	uint32_t *group;        /* per sample; UINT32_MAX: no finite reuse */
	struct lp_sa_group_info *g;
	size_t ng;
	size_t *order;          /* finite samples by group: those of group k */
	size_t *start;          /* are order[start[k], start[k + 1]) */
	uint64_t line;
	/* the layout: group of each (pc, octave) key with its own estimate,
	 * and of the rest of each octave (UINT32_MAX: none), so that the
	 * samples of another profile (a resample) find their groups */
	struct lp_htab keys;
	uint32_t rest[64];
	struct lp_sa_hot *hot;  /* the hot footprints (model-setassoc-hot.c) */
	struct sa_rd_hist *rdh; /* per group (NULL: none read) */
};

void lp_sa_place_free(struct lp_sa_place *pl)
{
	if (!pl)
		return;
	free(pl->group);
	free(pl->g);
	free(pl->order);
	free(pl->start);
	lp_htab_release(&pl->keys);
	lp_sa_hot_free(pl->hot);
	free(pl->rdh);
	free(pl);
}

/* The offsets in order of group (a counting sort: the groups' sizes are
 * known), into a new array that replaces *pairs. */
static int sort_by_group(const struct lp_sa_place *pl, struct sa_pair **pairs, size_t np)
{
	struct sa_pair *v = malloc((np ? np : 1) * sizeof(*v));
	size_t *at = malloc((pl->ng + 1) * sizeof(*at));

	if (!v || !at) {
		free(v);
		free(at);
		return lp_seterr(LP_ENOMEM, "out of memory");
	}
	at[0] = 0;
	for (size_t k = 0; k < pl->ng; k++)
		at[k + 1] = at[k] + pl->g[k].pairs;
	for (size_t k = 0; k < np; k++)
		v[at[(*pairs)[k].group]++] = (*pairs)[k];
	free(*pairs);
	free(at);
	*pairs = v;
	return 0;
}

/* First sample index in [lo, n) with time >= t (sorted by time). */
static size_t time_lower(const struct lp_sample *s, size_t lo, size_t n, uint64_t t)
{
	return lo + lp_model_first_at(s + lo, n - lo, t);
}

/* Room in *pairs (of *cap) for `extra` more after np, doubling. */
static int pairs_reserve(struct sa_pair **pairs, size_t np, size_t *cap, size_t extra)
{
	size_t nc = *cap ? *cap : 1024;
	struct sa_pair *v;

	if (np + extra <= *cap)
		return 0;
	while (nc < np + extra)
		nc *= 2;
	if (!(v = realloc(*pairs, nc * sizeof(*v))))
		return lp_seterr(LP_ENOMEM, "out of memory");
	*pairs = v;
	*cap = nc;
	return 0;
}

/* The offsets of sample i's span (at most `scan` of its samples read,
 * one from each of `scan` equal stretches, at a place in it drawn from a
 * hash: the first of each stretch aliased with loops whose period divides
 * the span's, a tiled GEMM's spans read at 1e-1 through 4 of their 110
 * samples put rows a multiple of 4 apart, in the reused line's sets, at
 * 6.0 % of the offsets where they are 4.3 %), appended to *pairs. */
static int span_pairs(const struct lp_sample *s, size_t n, size_t i, double lines, unsigned shift,
		      size_t scan, struct sa_pair **pairs, size_t *np, size_t *cap)
{
	uint64_t t = s[i].time, d = s[i].reuse, e = t + d, x = s[i].addr >> shift;
	size_t a = time_lower(s, i + 1, n, t + 1), b = time_lower(s, a, n, e + 1), step, first = *np;
	int err;

	if (b <= a)
		return 0;
	step = (b - a + scan - 1) / scan;
	for (size_t m = a; m < b; m += step) {
		size_t len = b - m < step ? b - m : step; /* the last stretch can be shorter */
		const struct lp_sample *y = &s[m + (size_t)(lp_hash64((uint64_t)i * SA_SCAN + (m - a) / step) % len)];
		uint64_t l = y->addr >> shift;
		if (y->tid != s[i].tid || l == x)
			continue;
		if (y->reuse != LP_REUSE_DANGLING && y->time + y->reuse < e)
			continue; /* touched again inside the span: not its last access */
		if ((err = pairs_reserve(pairs, *np, cap, 1)) < 0)
			return err;
		(*pairs)[(*np)++] = (struct sa_pair){ (int64_t)(l - x), 0, lines,
						      y->reuse == LP_REUSE_DANGLING ? INFINITY : (double)y->reuse, 0 };
	}
	for (size_t k = first; k < *np; k++)
		(*pairs)[k].weight = 1.0 / (double)(*np - first);
	return 0;
}

/* A span that holds no sample: its lines where the walks of the pcs
 * around it are then (model-setassoc-drift.c), appended to *pairs like
 * span_pairs()'s. The drift table is built at the first such span. */
static int drift_pairs(struct lp_sa_drift **drift, const struct lp_sample *s, size_t n, size_t i, double lines,
		       uint64_t line, size_t scan, struct sa_pair **pairs, size_t *np, size_t *cap)
{
	int64_t delta[SA_SCAN];
	double rd[SA_SCAN];
	size_t nd;
	int err;

	if (!*drift && (err = lp_sa_drift_new(drift, s, n)) < 0)
		return err;
	nd = lp_sa_drift_offsets(*drift, s, n, i, line, lines, delta, rd, scan < SA_SCAN ? scan : SA_SCAN);
	if ((err = pairs_reserve(pairs, *np, cap, nd)) < 0)
		return err;
	for (size_t k = 0; k < nd; k++)
		(*pairs)[(*np)++] = (struct sa_pair){ delta[k], 1.0 / (double)nd, lines, rd[k], 0 };
	return 0;
}

/* The weight of the offsets p[0, np) that are multiples of g. */
static double on_lattice(const struct sa_pair *p, size_t np, uint64_t g)
{
	double on = 0;

	for (size_t i = 0; i < np; i++)
		if ((uint64_t)(p[i].delta < 0 ? -p[i].delta : p[i].delta) % g == 0)
			on += p[i].weight;
	return on;
}

/* The largest step g (a product of prime powers) that at least `share`
 * of a group's offsets p[0, np) are multiples of: for each prime, the
 * weight of the offsets by how many times it divides them, which bounds
 * each prime's power; then, while the offsets on the product's lattice
 * are fewer than the share (each prime's multiples may be different
 * offsets: rows of 30 lines walked beside a second column have half
 * their offsets multiples of 4 and half of 15, a quarter of 60), the
 * prime whose removal keeps the most of them is removed. */
static uint64_t lattice_step(const struct sa_pair *p, size_t np, double total, double share)
{
	static const uint64_t primes[] = { 2, 3, 5, 7, 11, 13 };
	uint64_t g = 1;

	for (size_t k = 0; k < sizeof(primes) / sizeof(primes[0]); k++) {
		double by[64] = { 0 }, on = 0;
		int e = 63;
		for (size_t i = 0; i < np; i++) {
			uint64_t a = (uint64_t)(p[i].delta < 0 ? -p[i].delta : p[i].delta);
			int v = 0;
			while (a && a % primes[k] == 0 && v < 63) {
				a /= primes[k];
				v++;
			}
			by[a ? v : 63] += p[i].weight;
		}
		/* the largest e with at least the share divisible by prime^e */
		for (; e > 0; e--) {
			on += by[e];
			if (on >= share * total)
				break;
		}
		while (e-- > 0 && g * primes[k] <= SA_MAX_STEP)
			g *= primes[k];
	}
	while (g > 1 && on_lattice(p, np, g) < share * total) {
		uint64_t best = 1;
		double most = -1;
		for (size_t k = 0; k < sizeof(primes) / sizeof(primes[0]); k++) {
			double on;
			if (g % primes[k])
				continue;
			on = on_lattice(p, np, g / primes[k]);
			if (on > most) {
				most = on;
				best = primes[k];
			}
		}
		g /= best;
	}
	return g;
}

/* How well a lattice of step g explains the offsets p[0, np): the
 * log-likelihood per offset of a mixture, a share nu of them on the
 * lattice and the rest anywhere, against all of them anywhere. On the
 * lattice an offset is g times likelier than anywhere (1/g of the
 * residues), so an offset on it gives nu g + 1 - nu, one off it 1 - nu,
 * with nu = (s - 1/g) / (1 - 1/g) for the share s on it (the maximum). */
static double lattice_fit(const struct sa_pair *p, size_t np, double total, uint64_t g)
{
	double s = on_lattice(p, np, g) / total, nu = (s - 1.0 / (double)g) / (1.0 - 1.0 / (double)g);

	if (!(nu > 0))
		return 0;
	if (nu >= 1)
		return log((double)g);
	return s * log(nu * (double)g + 1 - nu) + (1 - s) * log(1 - nu);
}

/* The lattice of a group whose offsets are SA_LATTICE_SHARE or more on
 * step g: g, or a multiple of it that a smaller share is on, whichever
 * explains the offsets best (lattice_fit()). A column walk of 40-line
 * rows, interleaved with a row and a vector read along with it, has 76 %
 * of its span's lines on the step of 40 and 82 % on the step of 4 (the
 * row's lines that fall there by chance): the step of 4 put the column's
 * lines on 16 sets of 64, not the 8 they share, and the 32K:8:64 ratio
 * was 27 % against 34 % simulated (`chain 320`). The largest step that
 * SA_LATTICE_SHARE of the offsets are on stays the first choice, so a
 * walk is never split by a coincidence of a few offsets: a multiple must
 * explain them better, and hold at least half of them. */
static uint64_t likeliest_lattice(const struct sa_pair *p, size_t np, double total, uint64_t g)
{
	static const double shares[] = { 0.7, 0.6, 0.5 };
	double best = lattice_fit(p, np, total, g);
	uint64_t step = g;

	for (size_t k = 0; k < sizeof(shares) / sizeof(shares[0]); k++) {
		uint64_t h = lattice_step(p, np, total, shares[k]);
		double fit;
		if (h <= g || h % g || h == step)
			continue;
		if ((fit = lattice_fit(p, np, total, h)) > best) {
			best = fit;
			step = h;
		}
	}
	return step;
}

/* A group's walk with step g: its density phi near the reused line (the
 * lattice points within a quarter of g (D + 1) of it that were touched,
 * against the share that a dense walk through it touches there, 1 - 1/8:
 * the walk's ends cut some off; a random subset of a range of R lattice
 * points has phi = (D + 1) / R), and nu, the share of the span's lines on
 * the lattice within g (D + 1) / phi of the reused line: the range that
 * holds the walk's lines at that density. A density above SA_DENSE is
 * taken as 1: the sampling noise of a few hundred offsets, where a walk
 * that misses a line in twenty would be rare. */
static int cmp_double(const void *a, const void *b)
{
	const double *x = a, *y = b;
	return x[0] < y[0] ? -1 : x[0] > y[0];
}

static int walk_share(const struct sa_pair *p, size_t np, uint64_t g, double total, double *near,
		      double *density, double *extent)
{
	double nu = 0, close = 0, phi, reach, *v = malloc((np ? np : 1) * 2 * sizeof(*v)), acc = 0;
	size_t nv = 0;

	if (!v)
		return lp_seterr(LP_ENOMEM, "out of memory");
	for (size_t i = 0; i < np; i++) {
		uint64_t a = (uint64_t)(p[i].delta < 0 ? -p[i].delta : p[i].delta);
		if (a % g == 0 && (double)a <= 0.25 * (double)g * p[i].lines)
			close += p[i].weight;
	}
	phi = 2 * (close / total) / 0.875;
	phi = phi >= SA_DENSE ? 1 : phi;
	/* lines scattered on a lattice of step g > 1 stay on its sets however
	 * far apart: every one of them counts (twelve arrays 313 pages
	 * apart, walked in lock step, have their lines up to 11 * 313 * 64
	 * lines from the reused one, all in its set of a cache of 4K ways) */
	reach = phi > 1.0 / SA_MAX_REACH ? 1 / phi : g > 1 ? INFINITY : SA_MAX_REACH;
	for (size_t i = 0; i < np; i++) {
		uint64_t a = (uint64_t)(p[i].delta < 0 ? -p[i].delta : p[i].delta);
		if (a % g == 0 && (double)a <= reach * (double)g * p[i].lines) {
			nu += p[i].weight;
			v[2 * nv] = (double)(a / g);
			v[2 * nv++ + 1] = p[i].weight;
		}
	}
	*near = nu / total;
	*density = phi;
	/* a sparse walk's lines lie within the range these offsets reach:
	 * pooled over reused lines anywhere in a range of R lines, their 99th
	 * percentile is 0.9 R (P(|Y - X| > y) = (1 - y / R)^2) */
	qsort(v, nv, 2 * sizeof(*v), cmp_double);
	*extent = 1e15;
	for (size_t i = 0; i < nv; i++) {
		acc += v[2 * i + 1];
		if (acc >= 0.99 * nu) {
			*extent = v[2 * i] / 0.9 + 1;
			break;
		}
	}
	free(v);
	return 0;
}

static int cmp_delta(const void *a, const void *b)
{
	const struct sa_pair *x = a, *y = b;
	return x->delta < y->delta ? -1 : x->delta > y->delta;
}

/* The four commonest shifts of q[0, nq) (residues, weighing `total` in
 * all) into G->shift and G->at (shares of the total), those with at
 * least SA_SHIFT_SHARE of it: a shift each span draws anew (a column j
 * beside column i, j moving on) leaves every residue a few percent, and
 * the noise of a few hundred offsets would pick some of them. */
static void common_shifts(struct sa_pair *q, size_t nq, double total, struct lp_sa_group_info *G)
{
	memset(G->shift, 0, sizeof(G->shift));
	memset(G->at, 0, sizeof(G->at));
	qsort(q, nq, sizeof(*q), cmp_delta);
	for (size_t a = 0, b; a < nq; a = b) {
		double w = 0;
		int k = 3;
		for (b = a; b < nq && q[b].delta == q[a].delta; b++)
			w += q[b].weight;
		w /= total;
		if (w < SA_SHIFT_SHARE || w <= G->at[3])
			continue;
		for (; k > 0 && G->at[k - 1] < w; k--) {
			G->at[k] = G->at[k - 1];
			G->shift[k] = G->shift[k - 1];
		}
		G->at[k] = w;
		G->shift[k] = (uint64_t)q[a].delta;
	}
}

/* The share of a group's second walk that is in the reused line's class
 * of sets, of d = gcd(step, sets) classes: its shifts that are multiples
 * of d, and of the even rest the share of the shifts 1 .. step - 1 that
 * are (a shift of 0 is the first walk itself): (step / d - 1) / (step - 1). */
static double second_walk_along(const struct lp_sa_group_info *G, uint64_t sets)
{
	uint64_t d = lp_sa_gcd(G->step % sets, sets);
	double along = 0, rest = 1;

	for (int k = 0; k < 4; k++) {
		rest -= G->at[k];
		if (G->shift[k] % d == 0)
			along += G->at[k];
	}
	return along + fmax(0, rest) * ((double)(G->step / d) - 1) / ((double)G->step - 1);
}

/* The largest divisor d > 1 of g that most of the shifts q[0, nq) (the
 * residues modulo g of the offsets off g's lattice, weighing `other` in
 * all) are multiples of, beyond the share of them that chance puts there
 * (shifts spread over 1 .. g - 1 are multiples of d with probability
 * (g/d - 1) / (g - 1): half of them even, for rows of 30 lines): 1 where
 * none. */
static uint64_t own_lattice(const struct sa_pair *q, size_t nq, double other, uint64_t g)
{
	static const double shares[] = { SA_LATTICE_SHARE, 0.7, 0.6, 0.5 };
	uint64_t best = 1;

	for (size_t k = 0; k < sizeof(shares) / sizeof(shares[0]); k++) {
		uint64_t d = lp_sa_gcd(lattice_step(q, nq, other, shares[k]), g);
		double s, chance, nu;
		if (d <= best || d == g)
			continue;
		s = on_lattice(q, nq, d) / other;
		chance = ((double)(g / d) - 1) / ((double)g - 1);
		nu = (s - chance) / (1 - chance);
		if (nu >= 0.5)
			best = d;
	}
	return best;
}

/* Two walks of one step at a time (a covariance kernel's columns i and
 * j of a row-major matrix): the offsets on the lattice through the reused
 * line are between SA_COSET_SHARE and SA_LATTICE_SHARE of them, and most
 * of the others lie as near (within 1.5 times the walk's extent) on the
 * second walk, whose shift from the first differs from span to span (j
 * moves on), so that their residues spread over the whole lattice. The
 * first walk is read from its own offsets, as if it were all of the span
 * (lines scaled by its share); the second is the group's `other`. Returns
 * 1 and sets G where the offsets are such, 2 and sets G->step where the
 * second walk is the first one's (below), 0 where neither, < 0 on
 * error. */
static int coset_walks(const struct sa_pair *p, size_t np, double total, struct lp_sa_group_info *G)
{
	uint64_t g = lattice_step(p, np, total, SA_COSET_SHARE);
	double on = 0, near, density, extent, other = 0, off = 0;
	struct sa_pair *q;
	size_t nq = 0;
	int err;

	if (g < SA_COSET_STEP)
		return 0;
	if (!(q = malloc(np * sizeof(*q))))
		return lp_seterr(LP_ENOMEM, "out of memory");
	for (size_t i = 0; i < np; i++)
		if ((uint64_t)(p[i].delta < 0 ? -p[i].delta : p[i].delta) % g == 0) {
			on += p[i].weight;
			q[nq++] = p[i];
		}
	for (size_t i = 0; i < nq; i++)
		q[i].lines *= on / total;
	err = walk_share(q, nq, g, on, &near, &density, &extent);
	free(q);
	if (err < 0)
		return err;
	if (!(q = malloc(np * sizeof(*q))))
		return lp_seterr(LP_ENOMEM, "out of memory");
	nq = 0;
	for (size_t i = 0; i < np; i++) {
		double a = fabs((double)p[i].delta) / (double)g;
		if ((uint64_t)(p[i].delta < 0 ? -p[i].delta : p[i].delta) % g == 0)
			continue;
		off += p[i].weight;
		if (a <= 1.5 * fmin(extent, p[i].lines)) {
			other += p[i].weight;
			q[nq] = p[i];
			q[nq++].delta = (int64_t)(((p[i].delta % (int64_t)g) + (int64_t)g) % (int64_t)g);
		}
	}
	if (!(off > 0) || other < SA_COSET_NEAR * off) {
		free(q);
		return 0;
	}
	/* a second walk whose shifts are multiples of a divisor d of g is
	 * the first walk's own lattice points between the multiples of g: one
	 * walk of step d (a column walk of 75-line rows, from 14 offsets, 5 of
	 * them multiples of 300, 6 of the other 9 multiples of 75: read as
	 * two walks of step 300 it put the column on 16 sets of 64, 34 % at
	 * 48K:12:64 where simulation has 5 %) */
	uint64_t d = own_lattice(q, nq, other, g);
	if (d > 1) {
		free(q);
		G->step = d;
		return 2;
	}
	common_shifts(q, nq, other, G);
	free(q);
	G->step = g;
	G->near = near * on / total;
	G->density = density;
	G->extent = extent;
	G->other = other / total;
	return 1;
}

/* A part walk: where no lattice holds SA_LATTICE_SHARE of a group's
 * offsets and they are not two walks, a lattice of step g > 1 that holds
 * SA_PART_SHARE or more of them, far beyond the 1/g that chance puts
 * there, is a walk of that share of the span's lines, the rest placed at
 * random. An FFT's twiddle factors at the small lengths are read at
 * strides of whole pages (n / len of them), so that the 16 lines of
 * length 16 lie 512 lines apart, in one set of any cache of up to 512
 * sets, among as many lines of the input and output elsewhere: 40 % of
 * the offsets on the step of 512. Read as random placement, reuses of 40
 * lines were hits in 256K:8:64, where simulation misses on every one
 * (`fft 32768`: 4.2 % against 9.5 %). The lattice is the candidate (the
 * largest steps for shares from 70 % down to SA_PART_SHARE) with the
 * best mixture fit (lattice_fit()), of at least SA_COSET_STEP lines (a
 * step of 2 or 4 holds half or a quarter of any offsets by chance, and
 * the order of a walk tilts that: the far spans of a column walk of
 * 50-line rows had 65 % of their offsets even, and read as a part walk
 * on half the sets their random-replacement ratio went from 0.45 to 0.59
 * against 0.44 simulated); it must gain SA_PART_NATS over
 * random placement, counting each span once (its offsets weigh 1 in
 * all: they are one layout, not independent draws). 1 where none. */
static uint64_t part_lattice(const struct sa_pair *p, size_t np, double total)
{
	static const double shares[] = { 0.7, 0.6, 0.5, 0.4, 0.3, SA_PART_SHARE };
	double best = SA_PART_NATS / total;
	uint64_t step = 1;

	for (size_t k = 0; k < sizeof(shares) / sizeof(shares[0]); k++) {
		uint64_t h = lattice_step(p, np, total, shares[k]);
		double s, nu, fit;
		if (h < SA_COSET_STEP || h == step)
			continue;
		s = on_lattice(p, np, h) / total;
		nu = (s - 1.0 / (double)h) / (1.0 - 1.0 / (double)h);
		if (nu < SA_PART_SHARE || (fit = lattice_fit(p, np, total, h)) <= best)
			continue;
		best = fit;
		step = h;
	}
	return step;
}

static uint64_t group_key(const struct lp_sample *s, const double *sd, size_t i)
{
	return lp_sa_group_key(&s[i], sd[i]);
}

static uint64_t octave_key(const struct lp_sample *s, const double *sd, size_t i)
{
	return lp_sa_octave_key(&s[i], sd[i]);
}

/* The index of key in keys (added when new, with cnt 0 and no group). */
static size_t key_index(struct lp_htab *keys, uint64_t key, size_t *cnt, uint32_t *gid)
{
	int isnew;
	uint64_t *v = lp_htab_get(keys, key, &isnew);

	if (isnew) {
		*v = keys->n - 1;
		cnt[*v] = 0;
		gid[*v] = UINT32_MAX;
	}
	return (size_t)*v;
}

/* Group the samples by pc and octave of distance, those with few offsets
 * with the others of their octave, and estimate each group's walk. */
/* The half octave of a finite reuse distance. */
static unsigned rd_bin(double rd)
{
	double b = 2 * log2(rd + 1);

	return b < SA_RD_BINS - 1 ? (unsigned)b : SA_RD_BINS - 1;
}

/* A group's span lines by reuse distance, on its walk (as walk_share()
 * counts them) and off it, into h. */
static void rd_hist(const struct sa_pair *p, size_t np, const struct lp_sa_group_info *G, struct sa_rd_hist *h)
{
	double phi = G->density, reach = phi > 1.0 / SA_MAX_REACH ? 1 / phi : G->step > 1 ? INFINITY : SA_MAX_REACH;

	for (size_t i = 0; i < np; i++) {
		uint64_t a = (uint64_t)(p[i].delta < 0 ? -p[i].delta : p[i].delta);
		int on = a % G->step == 0 && (double)a <= reach * (double)G->step * p[i].lines;
		/* a dangling Y (its line's last access) says nothing of
		 * how long ago the line was touched before */
		if (isfinite(p[i].rdy))
			h->w[on][rd_bin(p[i].rdy)] += p[i].weight;
		else
			h->dangling[on] += p[i].weight;
	}
}

/* The group of a key seen first (its index has no group yet): its own
 * where it has SA_MIN_PAIRS offsets, else its pc's octave's (key ok)
 * where that has, else the rest of the octave. */
static uint32_t new_group(struct lp_sa_place *pl, struct lp_htab *keys, size_t *cnt, uint32_t *gid,
			  uint32_t *rest, uint64_t key, uint64_t ok, uint64_t pc)
{
	size_t v = key_index(keys, key, cnt, gid), vo;
	unsigned o = (unsigned)(ok >> 56) & 63;

	if (cnt[v] >= SA_MIN_PAIRS) {
		pl->g[pl->ng].pc = pc;
		return (uint32_t)pl->ng++;
	}
	if (ok == key)
		vo = v;
	else if (gid[vo = key_index(keys, ok, cnt, gid)] != UINT32_MAX)
		return gid[vo];
	if (cnt[vo] >= SA_MIN_PAIRS && vo != v) {
		pl->g[pl->ng].pc = pc;
		return gid[vo] = (uint32_t)pl->ng++;
	}
	if (rest[o] == UINT32_MAX)
		rest[o] = (uint32_t)pl->ng++; /* pc 0 */
	if (vo != v)
		gid[vo] = rest[o];
	return rest[o];
}

static int place_groups(struct lp_sa_place *pl, const struct lp_sample *s, const double *sd,
			struct sa_pair **pairsp, const size_t *owner, size_t np)
{
	struct lp_htab keys = { 0 };
	struct sa_pair *pairs = *pairsp;
	/* keys: a sample's own and its octave's */
	size_t *cnt = malloc((2 * pl->n + 64) * sizeof(*cnt));
	uint32_t *gid = malloc((2 * pl->n + 64) * sizeof(*gid)), rest[64];
	int err = 0;

	if (!cnt || !gid || lp_htab_init(&keys, 64) < 0 || lp_htab_reserve(&keys, 2 * pl->n + 1) < 0 ||
	    !(pl->g = calloc(pl->n + 64, sizeof(*pl->g))))
		goto out_nomem;
	for (size_t k = 0; k < np; k++) {
		uint64_t key = group_key(s, sd, owner[k]), ok = octave_key(s, sd, owner[k]);
		cnt[key_index(&keys, key, cnt, gid)]++;
		if (ok != key)
			cnt[key_index(&keys, ok, cnt, gid)]++;
	}
	for (int o = 0; o < 64; o++)
		rest[o] = UINT32_MAX;
	for (size_t i = 0; i < pl->n; i++) {
		uint64_t key;
		size_t v;
		if (pl->group[i] == UINT32_MAX)
			continue;
		key = group_key(s, sd, i);
		v = key_index(&keys, key, cnt, gid);
		if (gid[v] == UINT32_MAX)
			gid[v] = new_group(pl, &keys, cnt, gid, rest, key, octave_key(s, sd, i), s[i].pc);
		pl->group[i] = gid[v];
		pl->g[gid[v]].samples++;
	}
	for (size_t k = 0; k < np; k++) {
		pairs[k].group = pl->group[owner[k]];
		pl->g[pairs[k].group].pairs++;
	}
	/* the layout keeps each key's group */
	for (size_t k = 0; k <= keys.mask; k++)
		if (keys.s[k].key != LP_HTAB_EMPTY)
			keys.s[k].val = gid[keys.s[k].val];
	if (keys.has_top)
		keys.top_val = gid[keys.top_val];
	pl->keys = keys;
	keys = (struct lp_htab){ 0 };
	memcpy(pl->rest, rest, sizeof(rest));
	if ((err = sort_by_group(pl, pairsp, np)) < 0)
		goto out;
	pairs = *pairsp;
	for (size_t k = 0; k < pl->ng; k++)
		pl->g[k].step = 1;
	if (!(pl->rdh = calloc(pl->ng ? pl->ng : 1, sizeof(*pl->rdh))))
		goto out_nomem;
	for (size_t a = 0, b; a < np; a = b) {
		struct lp_sa_group_info *G = &pl->g[pairs[a].group];
		double total = 0;
		for (b = a; b < np && pairs[b].group == pairs[a].group; b++) {
			total += pairs[b].weight;
			lp_sa_residue_add(G, pairs[b].delta, pairs[b].weight);
		}
		/* a walk read from a handful of offsets is noise: one offset is
		 * a lattice of its own length (a rest group of 35 samples took a
		 * step of 192 lines from one pair and put them all in one set).
		 * With SA_MIN_WALK_PAIRS = 8, offsets placed at random are 80 %
		 * even (the likeliest lattice) with probability 3.5 %; a group
		 * with fewer stays random. The offsets of one span are one
		 * walk's, not independent: 14 of 4 spans of random reads made
		 * a second walk of step 44 (test-setassoc); the weaker walks
		 * (second, part) want 5 spans at least. A lattice of 80 % of
		 * the offsets does not: a span without samples has a whole
		 * walk's offsets (soa16's sixteen arrays, from 3 or 4 spans) */
		if (!(total > 0) || b - a < SA_MIN_WALK_PAIRS)
			continue;
		G->step = lattice_step(pairs + a, b - a, total, SA_LATTICE_SHARE);
		if (G->step > 1)
			G->step = likeliest_lattice(pairs + a, b - a, total, G->step);
		if (G->step == 1 && total >= SA_MIN_WALK_SPANS && (err = coset_walks(pairs + a, b - a, total, G)) != 0) {
			if (err < 0)
				goto out;
			if (err == 1)
				continue;
			err = 0; /* 2: one walk, of the step coset_walks() set */
		}
		if (G->step == 1 && total >= SA_MIN_WALK_SPANS)
			G->step = part_lattice(pairs + a, b - a, total);
		if ((err = walk_share(pairs + a, b - a, G->step, total, &G->near, &G->density, &G->extent)) < 0)
			goto out;
		rd_hist(pairs + a, b - a, G, &pl->rdh[pairs[a].group]);
	}
	goto out;
out_nomem:
	err = lp_seterr(LP_ENOMEM, "out of memory");
out:
	free(cnt);
	free(gid);
	lp_htab_release(&keys);
	return err;
}

static int place_order(struct lp_sa_place *pl, const double *sd);

int lp_sa_place_new(struct lp_sa_place **out, const struct lp_sample *s, size_t n, const double *sd,
		    uint64_t line)
{
	struct lp_sa_place *pl;
	struct lp_sa_drift *drift = NULL;
	struct sa_pair *pairs = NULL;
	size_t np = 0, cap = 0, *owner = NULL, owner_cap = 0, scan = n ? SA_PAIRS / n : SA_SCAN;
	unsigned shift = 0;
	int err = 0;

	*out = NULL;
	scan = scan < 4 ? 4 : scan > SA_SCAN ? SA_SCAN : scan;
	while (shift < 63 && (1ull << shift) < line)
		shift++;
	if (!(pl = calloc(1, sizeof(*pl))) || !(pl->group = malloc((n ? n : 1) * sizeof(*pl->group))))
		goto out_nomem;
	pl->n = n;
	pl->line = line;
	for (size_t i = 0; i < n; i++) {
		size_t before = np;
		pl->group[i] = UINT32_MAX;
		if (s[i].reuse == LP_REUSE_DANGLING || !isfinite(sd[i]))
			continue;
		pl->group[i] = 0;
		if ((err = span_pairs(s, n, i, floor(sd[i] + 0.5) + 1, shift, scan, &pairs, &np, &cap)) < 0 ||
		    (np == before && floor(sd[i] + 0.5) >= 2 &&
		     (err = drift_pairs(&drift, s, n, i, floor(sd[i] + 0.5) + 1, line, scan, &pairs, &np, &cap)) < 0))
			goto out;
		if (np > before) {
			/* only when the pairs grew: a realloc to the same size
			 * copies the whole array under ASan (quadratic: 200 s
			 * for a diff of 36 000 samples) */
			if (owner_cap < cap) {
				size_t *o = realloc(owner, cap * sizeof(*o));
				if (!o)
					goto out_nomem;
				owner = o;
				owner_cap = cap;
			}
			for (size_t k = before; k < np; k++)
				owner[k] = i;
		}
	}
	if ((err = place_groups(pl, s, sd, &pairs, owner, np)) < 0 || (err = place_order(pl, sd)) < 0 ||
	    (err = lp_sa_group_alignment(pl->g, pl->ng, pl->start, pl->order, s, shift, SA_MIN_WALK_PAIRS)) < 0 ||
	    (err = lp_sa_hot_new(&pl->hot, s, n, sd, line)) < 0)
		goto out;
	*out = pl;
	pl = NULL;
	goto out;
out_nomem:
	err = lp_seterr(LP_ENOMEM, "out of memory");
out:
	free(pairs);
	free(owner);
	lp_sa_drift_free(drift);
	lp_sa_place_free(pl);
	return err;
}

int lp_sa_place_assign(struct lp_sa_place **out, const struct lp_sa_place *layout, const struct lp_sample *s,
		       size_t n, const double *sd)
{
	struct lp_sa_place *pl;
	uint32_t none = (uint32_t)layout->ng; /* no layout: the binomial model */
	int err;

	*out = NULL;
	if (!(pl = calloc(1, sizeof(*pl))) || !(pl->group = malloc((n ? n : 1) * sizeof(*pl->group))) ||
	    !(pl->g = malloc((layout->ng + 1) * sizeof(*pl->g)))) {
		lp_sa_place_free(pl);
		return lp_seterr(LP_ENOMEM, "out of memory");
	}
	pl->n = n;
	pl->line = layout->line;
	pl->ng = layout->ng + 1;
	memcpy(pl->g, layout->g, layout->ng * sizeof(*pl->g));
	pl->g[none] = (struct lp_sa_group_info){ .step = 1 };
	if (layout->rdh) {
		if (!(pl->rdh = calloc(pl->ng, sizeof(*pl->rdh)))) {
			lp_sa_place_free(pl);
			return lp_seterr(LP_ENOMEM, "out of memory");
		}
		memcpy(pl->rdh, layout->rdh, layout->ng * sizeof(*pl->rdh));
	}
	for (size_t k = 0; k < pl->ng; k++)
		pl->g[k].samples = 0;
	for (int o = 0; o < 64; o++)
		pl->rest[o] = UINT32_MAX;
	for (size_t i = 0; i < n; i++) {
		uint64_t key, *v;
		uint32_t gi;
		pl->group[i] = UINT32_MAX;
		if (s[i].reuse == LP_REUSE_DANGLING || !isfinite(sd[i]))
			continue;
		key = group_key(s, sd, i);
		v = layout->keys.s ? lp_htab_find((struct lp_htab *)&layout->keys, key) : NULL;
		if (!v && layout->keys.s)
			v = lp_htab_find((struct lp_htab *)&layout->keys, octave_key(s, sd, i));
		gi = v ? (uint32_t)*v : layout->rest[(octave_key(s, sd, i) >> 56) & 63];
		pl->group[i] = gi == UINT32_MAX ? none : gi;
		pl->g[pl->group[i]].samples++;
	}
	if ((err = place_order(pl, sd)) < 0 || (err = lp_sa_hot_new(&pl->hot, s, n, sd, pl->line)) < 0) {
		lp_sa_place_free(pl);
		return err;
	}
	*out = pl;
	return 0;
}

/* Each group's finite samples: order[start[k], start[k + 1]). */
static int place_order(struct lp_sa_place *pl, const double *sd)
{
	size_t n = pl->n;
	struct lp_sort_pair *by_sd;
	int err = 0;

	if (!(pl->order = malloc((n ? n : 1) * sizeof(*pl->order))) ||
	    !(pl->start = calloc(pl->ng + 1, sizeof(*pl->start))))
		return lp_seterr(LP_ENOMEM, "out of memory");
	if (!(by_sd = malloc((n ? n : 1) * sizeof(*by_sd))))
		return lp_seterr(LP_ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++)
		if (pl->group[i] != UINT32_MAX)
			pl->start[pl->group[i] + 1]++;
	for (size_t k = 0; k < pl->ng; k++)
		pl->start[k + 1] += pl->start[k];
	for (size_t i = 0, *fill = pl->start; i < n; i++)
		if (pl->group[i] != UINT32_MAX)
			pl->order[fill[pl->group[i]]++] = i;
	for (size_t k = pl->ng; k > 0; k--) /* the fill moved each start to the next */
		pl->start[k] = pl->start[k - 1];
	pl->start[0] = 0;
	/* each group's samples by stack distance: their walk requests are
	 * then in the order the walk model takes them (lp_sa_walk_miss()
	 * sorts only requests that are not) */
	for (size_t k = 0; k < pl->ng; k++) {
		size_t a = pl->start[k], m = pl->start[k + 1] - a;
		for (size_t i = 0; i < m; i++)
			by_sd[i] = (struct lp_sort_pair){ lp_sort_double_key(sd[pl->order[a + i]]), pl->order[a + i] };
		if ((err = lp_sort_pairs(by_sd, m)) < 0)
			break;
		for (size_t i = 0; i < m; i++)
			pl->order[a + i] = by_sd[i].val;
	}
	free(by_sd);
	return err;
}

size_t lp_sa_place_groups(const struct lp_sa_place *pl)
{
	return pl ? pl->ng : 0;
}

void lp_sa_place_group(const struct lp_sa_place *pl, size_t g, struct lp_sa_group_info *out)
{
	*out = pl->g[g];
}

/* Whether group G's lines near the reused one are placed as a walk.
 * Scattered over a range many times their number (density near 0), lines
 * of step 1 fall in the sets at random: the binomial model. Lines on a
 * lattice of step g > 1 do not, however sparse: they land on the
 * s / gcd(g, s) sets of the reused line's lattice only, which the walk
 * model's region gives (arrays mapped whole pages apart and walked in lock
 * step: twelve of them at one offset of their pages put each span's
 * twelve lines in one set of a cache of 4K ways, 82.5% misses in 32K:8:64
 * where random placement gave 10%). */
static int placed_as_walk(const struct lp_sa_group_info *G)
{
	return G->near * G->density >= SA_MIN_DENSE || (G->step > 1 && G->near >= SA_MIN_DENSE);
}

/* Miss chances of group G's samples idx[0, k) (by stack distance) when
 * `share` of each span's D + 1 lines are on the walk through the reused
 * line, `drop` of them lie in other sets than its own (a second walk on
 * another class of sets: not in its way), and the rest are placed at
 * random. */
static int walk_group_miss(const struct lp_sa_place *pl, const struct lp_sa_group_info *G, const double *sd,
			   uint64_t sets, uint64_t ways, const size_t *idx, size_t k, double share, double drop,
			   double *D, double *walk, double *region, double *miss)
{
	struct lp_sa_walk w = { (double)G->step * (double)pl->line, 1e18, 0 };
	double spread = G->near > 0 ? share / G->near : 1;

	for (size_t j = 0; j < k; j++) {
		double lines = floor(sd[idx[j]] + 0.5) + 1;
		D[j] = fmax(0, sd[idx[j]] - drop * lines);
		/* no more of them on the walk than it has lattice points in
		 * range, where the share says several times more: a naive
		 * matrix multiply (n = 256) reads B whole between two reuses
		 * of a line of it, and the last accesses of those spans of
		 * 8 300 lines fall on the line's own column (read as two
		 * walks of step 16, 520 points in range) as 40 % of the
		 * offsets; 3 500 lines on that lattice put 55 in each of its
		 * 64 sets of a 1M:16:64 cache, 6 % misses where simulation
		 * has none. The cap spills the rest to random placement.
		 * Only beyond SA_OVER_EXTENT times: the range is read from a
		 * few hundred offsets, and a short dense walk's from few
		 * (capped at 1.5 times, sixteen arrays in lock step, 17 to 31
		 * lines a span in extents of 10 to 17, lost their conflicts:
		 * `soa16` went from 1 to 18 points off) */
		walk[j] = share * lines > SA_OVER_EXTENT * spread * G->extent ? spread * G->extent : share * lines;
		region[j] = G->density >= 1 ? walk[j] : fmax(walk[j], spread * G->extent);
	}
	return lp_sa_walk_miss(placed_as_walk(G) ? &w : NULL, sets, ways, pl->line, D, walk,
			       region, k, miss);
}

/* A group with a second walk (G->other) shares the reused line's sets
 * with it in the spans where its shift is a multiple of gcd(step, sets):
 * the lattice's sets fall in that many classes (second_walk_along()). */
int lp_sa_place_miss(const struct lp_sa_place *pl, const double *sd, uint64_t sets, uint64_t ways,
		     double *prob)
{
	size_t n = pl->n ? pl->n : 1;
	double *D = malloc(n * sizeof(*D)), *walk = malloc(n * sizeof(*walk)), *miss = malloc(n * sizeof(*miss));
	double *region = malloc(n * sizeof(*region)), *apart = malloc(n * sizeof(*apart));
	int err = 0;

	if (!D || !walk || !miss || !region || !apart) {
		err = lp_seterr(LP_ENOMEM, "out of memory");
		goto out;
	}
	for (uint32_t gi = 0; gi < pl->ng; gi++) {
		const struct lp_sa_group_info *G = &pl->g[gi];
		const size_t *idx = pl->order + pl->start[gi];
		size_t k = pl->start[gi + 1] - pl->start[gi];
		double same = 1;
		if (!k || lp_sa_residue_miss(G, sd, sets, ways, idx, k, prob))
			continue;
		if ((err = walk_group_miss(pl, G, sd, sets, ways, idx, k, G->near + G->other, 0, D, walk, region,
					   miss)) < 0)
			goto out;
		if (G->other > 0) {
			same = second_walk_along(G, sets);
			if (same < 1 && (err = walk_group_miss(pl, G, sd, sets, ways, idx, k, G->near, G->other, D,
							       walk, region, apart)) < 0)
				goto out;
		}
		for (size_t j = 0; j < k; j++)
			prob[idx[j]] = same * miss[j] + (same < 1 ? (1 - same) * apart[j] : 0);
	}
	err = lp_sa_hot_miss(pl->hot, pl, sd, sets, ways, prob);
out:
	free(D);
	free(walk);
	free(region);
	free(miss);
	free(apart);
	return err;
}

/* Set-associative random replacement (docs/models.md, "Random replacement
 * in a set-associative cache"). A line survives a miss in its own set
 * with probability 1 - 1/k, so over a reuse that saw n misses in all it
 * survives with probability E[(1 - 1/k)^(n_X)], n_X the misses that fell
 * in its set: exp(-E[n_X] / k) where n_X is a binomial count (random
 * placement), (1 - 1/k)^(n_X) where the lattice fixes it (the walk's
 * lines: crowd_rho()'s g). With a share q of the span's misses in X's set that is
 * exp(-q n / k) = exp(-rho n / L), L = s k lines and rho = q s:
 * StatCache's f at the reuse distance times rho. Random placement gives
 * rho = 1 (StatCache's equation, the fully associative ratio, exact
 * there: the groups of the binomial model keep it). So do lines that
 * spread evenly over every set: on uniform reads of a contiguous range
 * simulation gives the fully associative ratio, where q = c / D (c = 15
 * of the other 1 023 lines in a set of 16) left the model 3 points low,
 * since the set-mates of a line that stays share only k - 1 ways and miss
 * more than the average; the model does not follow that, so rho > 1 only
 * where a walk's lattice visits fewer sets than the cache has
 * (s' = s / gcd(step, s) < s) and its lines crowd into them.
 *
 * q by the walk of the sample's group: of the span's D other lines, the
 * w = m + o - 1 on its walks (m = near (D + 1) lines of the walk through
 * X, X among them, drawn at random from a region of R consecutive
 * lattice points, which spread evenly over the min(R, s') sets the
 * lattice visits; o on a second walk), c in X's set, and r = D - w placed
 * at random, r / s of them in X's set. The walk's lines and the others
 * need not miss alike: arrays walked in lock step a multiple of the sets
 * apart (PageRank's edge arrays src[e] and dst[e]) share one set, but
 * their lines are reused within a few accesses and rarely miss, while
 * the random gathers between them miss nearly every time. With theta the
 * walk's lines' miss chance against the others',
 *     q = (c theta + r / s) / (w theta + r),
 * which is (c + r / s) / D when they miss alike (theta = 1), 1 / s when
 * the walk's lines never miss, and c / w when only they do. theta is read
 * from the samples in the group's spans (rd_hist()): their reuse
 * distances, on the walk and off it, each through the fully associative
 * miss chance f(k) = 1 - (1 - 1/L)^(k evict). With theta = 1 everywhere,
 * pagerank's reuses of 5 accesses were scaled by 48 at 32K:8:64: 3.5
 * points above simulation, where theta gives it within 0.3. */
/* Of m walk lines (X among them) drawn from a region of R lattice points
 * over `visited` of the sets, the expected number of others in X's set. */
static double walk_in_set(double m, double R, double visited)
{
	/* X's set holds R / min(R, s') of the region's points, X among
	 * them; m - 1 others drawn from the R - 1 others */
	return R > 1 ? (m - 1) * (R / fmin(R, visited) - 1) / (R - 1) : 0;
}

/* theta of a group: the mean miss chance of its walk's span lines over
 * that of the others. A side whose samples all dangle (lines read once,
 * never again: gathers over a large table) takes the run's miss ratio,
 * what an access whose past is unknown misses on average; 1 where a side
 * has no sample at all. */
static double walk_theta(const struct sa_rd_hist *h, double lines, double evict)
{
	double b = lines > 1 ? log1p(-1 / lines) : -INFINITY, p[2];

	if (!h || !(evict > 0))
		return 1;
	for (int on = 0; on < 2; on++) {
		double sum = 0, wt = 0;
		for (unsigned k = 0; k < SA_RD_BINS; k++) {
			double w = h->w[on][k];
			if (w > 0) {
				sum += w * -expm1(b * (exp2((k + 0.5) / 2) - 1) * evict);
				wt += w;
			}
		}
		if (!(wt > 0) && !(h->dangling[on] > 0))
			return 1;
		p[on] = wt > 0 ? sum / wt : fmin(evict, 1);
	}
	return p[0] > 0 ? p[1] / p[0] : 1;
}

int lp_sa_place_crowding(const struct lp_sa_place *pl, const double *sd, uint64_t sets, double lines, double evict,
			 int fits, double *rho)
{
	double ways = lines / (double)sets;

	for (size_t i = 0; i < pl->n; i++)
		rho[i] = 1;
	if (sets <= 1)
		return 0;
	for (uint32_t gi = 0; gi < pl->ng; gi++) {
		const struct lp_sa_group_info *G = &pl->g[gi];
		double visited = (double)(sets / lp_sa_gcd(G->step % sets, sets));
		double along = G->other > 0 ? second_walk_along(G, sets) : 0, theta;
		if (lp_sa_residue_rho(G, sd, sets, ways, fits, pl->order + pl->start[gi],
				      pl->start[gi + 1] - pl->start[gi], rho) ||
		    !placed_as_walk(G) || visited >= (double)sets)
			continue; /* random placement, or every set: rho = 1 */
		theta = walk_theta(pl->rdh ? &pl->rdh[gi] : NULL, lines, evict);
		for (size_t j = pl->start[gi]; j < pl->start[gi + 1]; j++) {
			size_t i = pl->order[j];
			double D = floor(sd[i] + 0.5), m, o, R, c1, c2;
			if (!(D >= 1) || !isfinite(D))
				continue;
			/* no more than the walk's lattice points, as in
			 * walk_group_miss() */
			m = fmin(fmax(1, floor(G->near * (D + 1) + 0.5)), D + 1);
			o = fmin(floor(G->other * (D + 1) + 0.5), D + 1 - m);
			if (m > SA_OVER_EXTENT * G->extent)
				m = fmax(1, floor(G->extent));
			if (o > SA_OVER_EXTENT * G->extent)
				o = floor(G->extent);
			R = G->density >= 1 ? m : fmax(m, fmin(G->extent, 1e15));
			/* a second walk (G->other) is in X's sets in a share
			 * `along` of the spans, and in none of them otherwise */
			c1 = walk_in_set(m, R, visited);
			R = G->density >= 1 ? m + o : fmax(m + o, fmin(G->extent * (m + o) / m, 1e15));
			c2 = walk_in_set(m + o, R, visited);
			rho[i] = lp_sa_crowd_rho(c1, m + o - 1, D, theta, sets, ways, fits) * (1 - along) +
				 lp_sa_crowd_rho(c2, m + o - 1, D, theta, sets, ways, fits) * along;
		}
	}
	return lp_sa_hot_rho(pl->hot, pl, sd, sets, ways, fits, rho);
}

/* Whether no offset showed sample i's span placement: its group (a pc and
 * octave of distance, or the rest of an octave) read fewer than
 * SA_MIN_WALK_PAIRS offsets, so the model took it as placed at random. */
int lp_sa_place_unseen(const struct lp_sa_place *pl, size_t i)
{
	return pl->group[i] != UINT32_MAX && pl->g[pl->group[i]].pairs < SA_MIN_WALK_PAIRS;
}

double lp_sa_place_aligned_sets(const struct lp_sa_place *pl, size_t i, uint64_t sets)
{
	uint64_t a = pl->group[i] != UINT32_MAX ? pl->g[pl->group[i]].aligned : 1;

	return a > 1 ? (double)(sets / lp_sa_gcd(a, sets)) : (double)sets;
}
