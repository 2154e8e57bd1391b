/* Strided placement (src/lib/prediction/prediction-place.c) against a functional
 * set-associative LRU simulation (lp_cache): cyclic strided sweeps are
 * exact for every stride, adversarial ones included (one line, a power of
 * two equal to sets x line, strides folding onto a few sets, strides
 * coprime with the sets, fractional strides in lines); a sweep with random
 * lines between its reuses matches the simulation within its noise; no walk
 * is the binomial model (and random lines are simulated as it says); one
 * set is the fully-associative cut. */
#include "lp-test.h"

#include <locprof/model.h>
#include <locprof/sim.h>
#include <locprof/prediction.h>

#include "common/rng.h"
#include "prediction/prediction-internal.h"

#include <math.h>

/* Simulate `sweeps` passes over the n lines floor((x0 + k stride) / line)
 * (a stride below the line: n consecutive lines), each pass followed by
 * `rnd` fresh lines at random addresses; the miss ratio of the walk's
 * accesses after the first pass. */
static double sim_sweep(uint64_t sets, uint64_t ways, uint64_t line, uint64_t stride, uint64_t x0, size_t n,
			size_t rnd, int sweeps, struct lp_rng *rng)
{
	struct lp_cache_spec spec = { .size = sets * ways * line, .assoc = ways, .line = line, .policy = "lru" };
	struct lp_cache *c;
	uint64_t *walk = malloc(n * sizeof(*walk)), *r = malloc((rnd + 1) * sizeof(*r));
	uint8_t *hit = malloc(n);
	size_t misses = 0;

	assert_non_null(walk);
	assert_non_null(r);
	assert_non_null(hit);
	assert_int_equal(lp_cache_new(&c, &spec, 1), 0);
	for (size_t k = 0; k < n; k++)
		walk[k] = stride < line ? x0 / line + k : (x0 + k * stride) / line;
	for (int s = 0; s < sweeps; s++) {
		lp_cache_access_lines(c, walk, n, hit, NULL);
		if (s)
			for (size_t k = 0; k < n; k++)
				misses += !hit[k];
		for (size_t k = 0; k < rnd; k++)
			r[k] = (1ull << 40) + lp_rng_below(rng, 1ull << 36); /* far from the walk */
		if (rnd)
			lp_cache_access_lines(c, r, rnd, NULL, NULL);
	}
	lp_cache_free(c);
	free(walk);
	free(r);
	free(hit);
	return (double)misses / ((double)(sweeps - 1) * (double)n);
}

/* The average over the offsets within a line that give different walks. */
static double sim_sweep_avg(uint64_t sets, uint64_t ways, uint64_t line, uint64_t stride, size_t n, size_t rnd,
			    int sweeps, struct lp_rng *rng)
{
	uint64_t g = stride < line ? line : lp_pred_place_gcd(stride, line), q = line / g;
	double sum = 0;

	for (uint64_t o = 0; o < q; o++)
		sum += sim_sweep(sets, ways, line, stride, (1ull << 30) + o * g, n, rnd, sweeps, rng);
	return sum / (double)q;
}

static double model(uint64_t sets, uint64_t ways, uint64_t line, double stride, double lines, double D)
{
	struct lp_pred_place_walk w = { stride, lines, 0 };
	double p = -1;

	assert_int_equal(lp_pred_place_miss(&w, sets, ways, line, &D, 1, &p), 0);
	assert_true(p >= 0 && p <= 1);
	return p;
}

/* Pure strided sweeps: exact. */
static void test_place_sweeps(void **state)
{
	static const struct {
		uint64_t sets, ways, line;
	} geo[] = { { 64, 4, 64 }, { 256, 8, 128 }, { 2048, 6, 128 }, { 4, 2, 64 } };
	struct lp_rng rng;

	(void)state;
	lp_rng_seed(&rng, 7);
	for (size_t gi = 0; gi < sizeof(geo) / sizeof(geo[0]); gi++) {
		uint64_t S = geo[gi].sets, A = geo[gi].ways, B = geo[gi].line, SB = S * B;
		uint64_t strides[] = {
			8,                  /* below a line: consecutive lines */
			B,                  /* one line */
			3 * B,              /* coprime with the sets */
			7 * B + B / 2,      /* fractional: half lines */
			B + 8,              /* fractional: 1/16 lines (1/8 at 64) */
			SB,                 /* every line in one set */
			SB / 2, SB / 4, 4096, 8192, /* powers of two: a few sets */
			SB + B,             /* one line modulo the sets */
			S > 256 ? 82240u : 6464u, /* the transpose's and matmul's rows */
		};
		for (size_t si = 0; si < sizeof(strides) / sizeof(strides[0]); si++) {
			uint64_t st = strides[si];
			size_t ns[] = { 2, A, A + 1, S * A / 2, S * A - 1, S * A, S * A + S / 2 + 1, 2 * S * A + 3 };
			if (st < B && st != 8)
				continue;
			for (size_t ni = 0; ni < sizeof(ns) / sizeof(ns[0]); ni++) {
				size_t n = ns[ni];
				double sim = sim_sweep_avg(S, A, B, st, n, 0, 3, &rng);
				double p = model(S, A, B, (double)st, (double)n, (double)n - 1);
				if (fabs(p - sim) > 1e-9) {
					fprintf(stderr, "S %lu A %lu B %lu stride %lu n %zu: model %.9f, simulated %.9f\n",
						(unsigned long)S, (unsigned long)A, (unsigned long)B, (unsigned long)st, n,
						p, sim);
					fail();
				}
			}
		}
	}
}

/* Many distances at once (sorted or not) give what each gives alone, and
 * a window shorter than the walk is a window of the same walk. */
static void test_place_batch(void **state)
{
	double D[] = { 5000, 3, 767, 1500, 100000, 0, 2047, 1200.4 }, p[8];
	struct lp_pred_place_walk w = { 6464, 808, 0 };

	(void)state;
	assert_int_equal(lp_pred_place_miss(&w, 256, 8, 128, D, 8, p), 0);
	for (int i = 0; i < 8; i++)
		assert_true(fabs(p[i] - model(256, 8, 128, 6464, 808, D[i])) < 1e-12);
	/* the longest reuses: the walk's 808 lines and the rest at random */
	assert_true(p[4] > 0.99);
	assert_true(p[5] == 0);
}

/* A walk moved by an outer stride (a matrix walked column after column):
 * the cyclic sweep over all its distinct lines. Exact when the moves are
 * whole lines; a move below a line (the next column of doubles) is taken
 * as moving to the next lines once every line / stride1 moves, close to
 * the simulation of the real moves. */
static double sim_lattice(uint64_t sets, uint64_t ways, uint64_t line, uint64_t stride, uint64_t n0,
			  uint64_t stride1, uint64_t n1, uint64_t x0, size_t *nlines)
{
	struct lp_cache_spec spec = { .size = sets * ways * line, .assoc = ways, .line = line, .policy = "lru" };
	size_t cap = n0 * n1, n = 0, misses = 0;
	uint64_t *l = malloc(cap * sizeof(*l)), base = 1ull << 30;
	uint8_t *hit = malloc(cap), *seen = calloc(1u << 24, 1);
	struct lp_cache *cc;

	assert_non_null(l);
	assert_non_null(hit);
	assert_non_null(seen);
	/* the distinct lines in walk order */
	for (uint64_t k1 = 0; k1 < n1; k1++)
		for (uint64_t k = 0; k < n0; k++) {
			uint64_t x = (base + x0 + k * stride + k1 * stride1) / line, rel = x - base / line;
			assert_true(rel < (1u << 24));
			if (!seen[rel]) {
				seen[rel] = 1;
				l[n++] = x;
			}
		}
	assert_int_equal(lp_cache_new(&cc, &spec, 1), 0);
	lp_cache_access_lines(cc, l, n, hit, NULL);
	for (int r = 0; r < 2; r++) {
		lp_cache_access_lines(cc, l, n, hit, NULL);
		for (size_t j = 0; j < n; j++)
			misses += !hit[j];
	}
	lp_cache_free(cc);
	free(l);
	free(hit);
	free(seen);
	*nlines = n;
	return (double)misses / (2.0 * (double)n);
}

static void test_place_lattice(void **state)
{
	static const struct {
		uint64_t sets, ways, line, stride, n0, stride1, n1;
	} c[] = {
		{ 256, 8, 128, 1024, 128, 8, 128 },    /* matmul's B at 128 in the L2: 32 sets a column */
		{ 64, 4, 64, 768, 72, 64, 3 },         /* 16 sets a column, 4 or 5 lines each */
		{ 64, 4, 64, 4096, 20, 64, 10 },       /* one set a column, 10 sets */
		{ 64, 4, 64, 1024, 40, 2048, 6 },      /* columns overlapping by 38 rows */
		{ 64, 4, 64, 192, 50, 4096, 5 },       /* moves onto the same sets */
		{ 2048, 6, 128, 82240, 3000, 8, 20 },  /* the transpose's columns, moved by a double */
		{ 256, 8, 128, 6464, 400, 8, 40 },     /* matmul's at 808, 400 rows */
	};

	(void)state;
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct lp_pred_place_walk w = { (double)c[i].stride, (double)c[i].n0, (double)c[i].stride1 };
		uint64_t B = c[i].line, s0 = c[i].stride < B ? B : c[i].stride, s1 = c[i].stride1 < B ? B : c[i].stride1;
		uint64_t g = lp_pred_place_gcd(lp_pred_place_gcd(s0, B), s1), q = B / g;
		double p, D, sim = 0;
		size_t n = 0;
		for (uint64_t o = 0; o < q; o++)
			sim += sim_lattice(c[i].sets, c[i].ways, B, c[i].stride, c[i].n0, c[i].stride1, c[i].n1, o * g, &n) /
			       (double)q;
		D = (double)n - 1;
		assert_int_equal(lp_pred_place_miss(&w, c[i].sets, c[i].ways, B, &D, 1, &p), 0);
		fprintf(stderr, "walk %lu x %lu moved by %lu x %lu (%zu lines): model %.6f, simulated %.6f, binomial %.6f\n",
			(unsigned long)c[i].stride, (unsigned long)c[i].n0, (unsigned long)c[i].stride1,
			(unsigned long)c[i].n1, n, p, sim, lp_binomial_miss(D, c[i].sets, c[i].ways));
		if (c[i].stride1 % B == 0)
			assert_true(fabs(p - sim) < 1e-9);
		else
			assert_true(fabs(p - sim) < 0.03);
	}
}

/* A sweep with random lines between its reuses: the walk's own sets, and
 * the binomial model for the random lines. */
static void test_place_mixed(void **state)
{
	static const struct {
		uint64_t sets, ways, line, stride;
		size_t n, rnd;
	} c[] = {
		{ 2048, 6, 128, 82240, 10280, 652 }, /* the transpose's column and row */
		{ 256, 8, 128, 6464, 808, 51 },      /* the matrix multiply's */
		{ 64, 4, 64, 4096, 40, 100 },        /* a walk folded onto one set */
		{ 64, 4, 64, 192, 200, 60 },
	};
	struct lp_rng rng;

	(void)state;
	lp_rng_seed(&rng, 11);
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		double sim = sim_sweep_avg(c[i].sets, c[i].ways, c[i].line, c[i].stride, c[i].n, c[i].rnd, 41, &rng);
		double p = model(c[i].sets, c[i].ways, c[i].line, (double)c[i].stride, (double)c[i].n,
				 (double)(c[i].n - 1 + c[i].rnd));
		double b = lp_binomial_miss((double)(c[i].n - 1 + c[i].rnd), c[i].sets, c[i].ways);
		fprintf(stderr, "walk %lu x %zu + %zu random: model %.5f, simulated %.5f, binomial %.5f\n",
			(unsigned long)c[i].stride, c[i].n, c[i].rnd, p, sim, b);
		/* the simulation's noise: 40 passes over n lines */
		assert_true(fabs(p - sim) <= 0.05 * sim + 0.003);
	}
}

/* No walk: the binomial model, which a cyclic sweep over lines at random
 * addresses follows. */
static void test_place_random(void **state)
{
	struct lp_rng rng;

	(void)state;
	lp_rng_seed(&rng, 3);
	for (double D = 0; D < 3000; D += 37) {
		double p[2];
		struct lp_pred_place_walk one = { 6464, 1, 0 };
		assert_int_equal(lp_pred_place_miss(NULL, 256, 8, 128, &D, 1, &p[0]), 0);
		assert_int_equal(lp_pred_place_miss(&one, 256, 8, 128, &D, 1, &p[1]), 0);
		assert_true(p[0] == lp_binomial_miss(D, 256, 8));
		assert_true(p[1] == p[0]);
	}
	/* random lines, swept cyclically: per sweep of n lines, the share of
	 * lines whose set holds `ways` or more of the others, on average the
	 * binomial tail (averaged over placements) */
	for (size_t n = 150; n <= 450; n += 100) {
		struct lp_cache_spec spec = { .size = 64 * 4 * 64, .assoc = 4, .line = 64, .policy = "lru" };
		double sum = 0, b = lp_binomial_miss((double)n - 1, 64, 4);
		int trials = 200;
		uint64_t *l = malloc(n * sizeof(*l));
		uint8_t *hit = malloc(n);
		for (int t = 0; t < trials; t++) {
			struct lp_cache *c;
			size_t miss = 0;
			assert_int_equal(lp_cache_new(&c, &spec, 1), 0);
			for (size_t k = 0; k < n; k++) {
				int dup;
				do {
					l[k] = lp_rng_below(&rng, 1ull << 30);
					dup = 0;
					for (size_t j = 0; j < k; j++)
						dup |= l[j] == l[k];
				} while (dup);
			}
			lp_cache_access_lines(c, l, n, hit, NULL);
			lp_cache_access_lines(c, l, n, hit, NULL);
			for (size_t k = 0; k < n; k++)
				miss += !hit[k];
			sum += (double)miss / (double)n;
			lp_cache_free(c);
		}
		free(l);
		free(hit);
		fprintf(stderr, "random sweep of %zu lines: simulated %.4f, binomial %.4f\n", n, sum / trials, b);
		assert_true(fabs(sum / trials - b) <= 0.05 * b + 0.01);
	}
}

/* One set: the fully-associative cut, whatever the walk. */
static void test_place_one_set(void **state)
{
	(void)state;
	for (uint64_t A = 1; A <= 32; A *= 2)
		for (double D = 0; D < 4 * A + 3; D += 1) {
			double cut = D >= (double)A ? 1 : 0;
			assert_true(model(1, A, 64, 64, 1e6, D) == cut);
			assert_true(model(1, A, 64, 8, 3, D) == cut);
			assert_true(model(1, A, 64, 4096 + 32, 1e3, D) == cut);
			double p;
			assert_int_equal(lp_pred_place_miss(NULL, 1, A, 64, &D, 1, &p), 0);
			assert_true(p == cut);
		}
}

/* ---- through collect's run files, fit and predict ------------------------ */

/* A column walk of a P x P matrix of doubles, column after column, by an
 * unrolled pair of pcs (pc 0 the even rows, pc 1 the odd ones: 16P bytes
 * apart each, one row apart from each other). Lines of 64 bytes hold 8
 * columns: the first column of each line is a cold access, the next 7 reuse
 * the line after the column's P - 1 other lines. `skew` moves pc 1's first
 * address off the interleaving (two arrays, not one walk). */
static char *write_walk_run(long P, int skew)
{
	char name[64], *path;
	FILE *f;
	long refs = P * P;

	snprintf(name, sizeof(name), "walk-%d-%ld.xrun", skew, P);
	path = lp_test_path(name);
	assert_non_null(f = fopen(path, "w"));
	fprintf(f, "# locprof xpred run v1\nsize %ld\ncommand ./walk%%20%ld\nreferences %ld\n", P, P, refs);
	fprintf(f, "blocks 64\nbias 0x0 mappings\nmodule 0 /bin/walk\n");
	fprintf(f, "loop 0 0 0x0f00 -1 1 0 kernel w.c:9-9\nloop 1 0 0x1000 0 2 1 kernel w.c:10-10\n");
	fprintf(f, "pc 0 0 0x1010 %ld 0 1 %ld,? w.c:10 kernel\n", refs / 2, 16 * P);
	fprintf(f, "pc 1 0 0x1020 %ld 0 1 %ld,? w.c:10 kernel\n", refs / 2, 16 * P);
	/* runs of the innermost stride: P columns of P/2 - 1 steps per pc */
	fprintf(f, "walk 0 0x%lx %ld %ld\n", 1L << 30, P, P * (P / 2 - 1));
	fprintf(f, "walk 1 0x%lx %ld %ld\n", (1L << 30) + 8 * P + (skew ? 24 : 0), P, P * (P / 2 - 1));
	fprintf(f, "hist 0 64 %ld %ld:%ld\n", P * P / 8, P - 1, P * P - P * P / 8);
	fprintf(f, "hist 1 64 0\n");
	fprintf(f, "end\n");
	fclose(f);
	return path;
}

static double sim_walk(long P, uint64_t sets, uint64_t ways)
{
	struct lp_cache_spec spec = { .size = sets * ways * 64, .assoc = ways, .line = 64, .policy = "lru" };
	struct lp_cache *c;
	uint64_t *l = malloc((size_t)(P * P) * sizeof(*l)), acc, miss;
	size_t k = 0;

	assert_non_null(l);
	for (long i = 0; i < P; i++)
		for (long r = 0; r < P; r++)
			l[k++] = ((1ull << 30) + (uint64_t)(r * 8 * P + 8 * i)) / 64;
	assert_int_equal(lp_cache_new(&c, &spec, 1), 0);
	lp_cache_access_lines(c, l, k, NULL, NULL);
	lp_cache_counts(c, &acc, &miss);
	lp_cache_free(c);
	free(l);
	return (double)miss;
}

static void test_place_model(void **state)
{
	struct lp_pred_level l4 = { .name = "L", .blocks = 64 * 4, .assoc = 4, .block = 64 };
	struct lp_pred_level one = { .name = "F", .blocks = 4, .assoc = 4, .block = 64 };
	struct lp_pred_count c, cb, c2;

	(void)state;
	for (int skew = 0; skew <= 1; skew++) {
		struct lp_pred_run *runs[5];
		struct lp_pred_model *m, *m2;
		struct lp_pred_fit_options o = { 0 };
		char *mp = lp_test_path("walk.xmodel");
		for (int i = 0; i < 5; i++) {
			char *path = write_walk_run(40 + 8 * i, skew);
			if (lp_pred_run_read(&runs[i], path) < 0) {
				fprintf(stderr, "%s\n", lp_errmsg());
				fail();
			}
			free(path);
		}
		assert_int_equal(lp_pred_model_fit(&m, runs, 5, &o), 0);
		for (int i = 0; i < 5; i++)
			lp_pred_run_free(runs[i]);
		assert_int_equal(lp_pred_model_ngroups(m), 1);
		assert_int_equal(lp_pred_model_write(m, mp), 0);
		assert_int_equal(lp_pred_model_read(&m2, mp), 0);
		free(mp);
		/* 200: a row of 25 lines, prime to the 64 sets: 3 or 4 lines of
		 * the column per set, no misses but the cold ones; 256: a row of
		 * 32 lines, 2 sets hold the column, every reuse misses; 264: 33
		 * lines, 8 sets of 5 (their lines miss) */
		for (long P = 200; P <= 264; P += P == 200 ? 56 : 8) {
			double sim = sim_walk(P, 64, 4);
			assert_int_equal(lp_pred_model_predict_sa(m, 0, &l4, (double)P, LP_PRED_SA_STRIDED, &c), 0);
			assert_int_equal(lp_pred_model_predict_sa(m2, 0, &l4, (double)P, LP_PRED_SA_STRIDED, &c2), 0);
			assert_int_equal(lp_pred_model_predict_sa(m, 0, &l4, (double)P, LP_PRED_SA_BINOMIAL, &cb), 0);
			assert_true(fabs(c.sa_misses - c2.sa_misses) <= 1e-6 * c.sa_misses);
			fprintf(stderr, "skew %d P %ld: strided %.1f (walk %d), binomial %.1f, simulated %.1f\n", skew, P,
				c.sa_misses, c.sa_strided, cb.sa_misses, sim);
			if (!skew) {
				assert_int_equal(c.sa_strided, 1);
				assert_true(fabs(c.sa_misses - sim) <= 1e-6 * sim);
				assert_true(fabs(cb.sa_misses - sim) > 0.1 * sim);
			} else {
				/* not one walk: the binomial model */
				assert_int_equal(c.sa_strided, 0);
				assert_true(c.sa_misses == cb.sa_misses);
			}
			/* one set: the cut */
			assert_int_equal(lp_pred_model_predict_sa(m, 0, &one, (double)P, LP_PRED_SA_STRIDED, &c), 0);
			assert_true(c.sa_misses == c.fa_misses);
		}
		lp_pred_model_free(m);
		lp_pred_model_free(m2);
	}
}

/* ---- distance 0 is a constant-distance bin --------------------------------- */

/* A group whose reuses at distance 0 (two arrays sharing a page at their
 * boundary) are a share that shrinks as P grows, next to long reuses at
 * P^2/16 blocks: distance 0 is its own bin, so that the rest keeps only
 * the long reuses and their distance extrapolates. */
static char *write_zero_run(long P)
{
	char name[64], *path;
	FILE *f;
	long zero = (1L << 20) / P, lng = P * P, near = P * P * P, cold = P * P / 8;

	snprintf(name, sizeof(name), "zero-%ld.xrun", P);
	path = lp_test_path(name);
	assert_non_null(f = fopen(path, "w"));
	/* (the long reuses skip P^2/16 blocks: the footprint holds P^2/8) */
	fprintf(f, "# locprof xpred run v1\nsize %ld\ncommand ./z%%20%ld\nreferences %ld\n", P, P,
		zero + lng + near + cold);
	fprintf(f, "blocks 4096\nbias 0x0 mappings\nmodule 0 /bin/z\n");
	fprintf(f, "pc 0 0 0x1010 %ld 0 -1 - z.c:1 kernel\n", zero + lng + near + cold);
	fprintf(f, "hist 0 4096 %ld 0:%ld 1:%ld %ld:%ld\n", cold, zero, near, P * P / 16, lng);
	fprintf(f, "end\n");
	fclose(f);
	return path;
}

static void test_zero_bin(void **state)
{
	struct lp_pred_run *runs[5];
	struct lp_pred_model *m;
	struct lp_pred_fit_options o = { 0 };
	struct lp_pred_level tlb = { .name = "T", .blocks = 8192, .assoc = 0, .block = 4096 };
	struct lp_pred_count c;
	size_t nconst, nbins;

	(void)state;
	for (int i = 0; i < 5; i++) {
		char *path = write_zero_run(64 + 16 * i);
		assert_int_equal(lp_pred_run_read(&runs[i], path), 0);
		free(path);
	}
	assert_int_equal(lp_pred_model_fit(&m, runs, 5, &o), 0);
	for (int i = 0; i < 5; i++)
		lp_pred_run_free(runs[i]);
	assert_int_equal(lp_pred_model_bins(m, 0, 4096, &nconst, &nbins), 0);
	assert_int_equal(nconst, 2); /* 0 and 1 */
	/* at 512 the long reuses are at 16384 blocks: all miss in 8192, with
	 * the cold accesses */
	assert_int_equal(lp_pred_model_predict(m, 0, &tlb, 512, &c), 0);
	if (fabs(c.fa_misses - 1.125 * 512 * 512) > 1e-3 * 512 * 512) {
		fprintf(stderr, "fa misses %g, want %g\n", c.fa_misses, 1.125 * 512 * 512);
		fail();
	}
	lp_pred_model_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_place_sweeps),
		cmocka_unit_test(test_place_batch),
		cmocka_unit_test(test_place_lattice),
		cmocka_unit_test(test_place_mixed),
		cmocka_unit_test(test_place_random),
		cmocka_unit_test(test_place_one_set),
		cmocka_unit_test(test_place_model),
		cmocka_unit_test(test_zero_bin),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
