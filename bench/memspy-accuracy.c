/* Accuracy of MemSpy trace sampling, in the shape of the paper's Tables 3
 * and 5 (Martonosi, Gupta, Anderson 1993), on five synthetic programs
 * generated in memory (none of the paper's traces are available).
 *
 *   bench-memspy-accuracy [MILLION_REFS]   (default 50)
 *
 * Samples of 0.5 M references, sampling ratio 1/10; direct-mapped caches
 * 16K/16B, 128K/32B, 1M/64B. For each program and cache: the true miss
 * ratio overall and during samples, and the estimates (mu = 0.5 with
 * Eq. 1's bound, Wood et al., Wood et al. with the lines-touched
 * correction) with their absolute error against the true miss ratio
 * during samples (in percentage points). */
#include <locprof/sim.h>

#include "common/rng.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { CHUNK = 1 << 16 };

struct gen {
	int kind;
	uint64_t i;
	struct lp_rng rng;
};

/* One reference of program g->kind. */
static uint64_t next_addr(struct gen *g)
{
	uint64_t i = g->i++;

	switch (g->kind) {
	case 0: { /* MATMAT-like: naive i-k-j matrix multiply, 3 x 384^2 doubles */
		const uint64_t N = 384;
		uint64_t t = i / 3, j = t % N, k = (t / N) % N, r = (t / N / N) % N;
		switch (i % 3) {
		case 0: return 0x10000000 + 8 * (r * N + k);          /* A[i][k] */
		case 1: return 0x20000000 + 8 * (k * N + j);          /* B[k][j] */
		default: return 0x30000000 + 8 * (r * N + j);         /* C[i][j] */
		}
	}
	case 1: { /* MP3D-like: particles updated in order, cells at random */
		if (i % 4)
			return 0x40000000 + 8 * (i % (4u << 20 >> 3) ) ;
		return 0x50000000 + 64 * lp_rng_below(&g->rng, 8192);
	}
	case 2: { /* TRI-like: phases with working sets 8K, 256K, 4M */
		static const uint64_t ws[] = { 8 << 10, 256 << 10, 4 << 20 };
		uint64_t w = ws[(i / 3000000) % 3];
		return 0x60000000 + (lp_rng_below(&g->rng, w) & ~7ULL);
	}
	case 3: /* ESPRESSO-like: almost everything in 6K, rare far references */
		if (lp_rng_below(&g->rng, 1000) == 0)
			return 0x70000000 + (lp_rng_below(&g->rng, 2 << 20) & ~7ULL);
		return 0x78000000 + (lp_rng_below(&g->rng, 6 << 10) & ~7ULL);
	default: /* PTHOR-like: pointer chasing over 1M of 32-byte records + hot 32K */
		if (i & 1)
			return 0x7c000000 + (lp_rng_below(&g->rng, 32 << 10) & ~7ULL);
		return 0x80000000 + 32 * ((i * 2654435761u) % 32768);
	}
}

static const char *names[] = { "MATMAT-like", "MP3D-like", "TRI-like", "ESPRESSO-like", "PTHOR-like" };
static const char *caches[] = { "16K:1:16", "128K:1:32", "1M:1:64" };

int main(int argc, char **argv)
{
	uint64_t nrefs = (uint64_t)((argc > 1 ? atof(argv[1]) : 50) * 1e6);
	struct lp_ref *buf = calloc(CHUNK, sizeof(*buf));

	printf("# %llu references per program; samples of 0.5M, ratio 1/10; miss ratios in %%\n",
	       (unsigned long long)nrefs);
	printf("%-14s %-10s %8s %8s | %8s %6s %7s | %8s %7s %6s | %8s %7s %6s | %6s %6s %6s\n",
	       "program", "cache", "overall", "samples", "mu=0.5", "+-", "err", "wood", "err", "mu",
	       "wood-t", "err", "mu", "true-mu", "gamma", "U/N");
	for (int p = 0; p < 5; p++) {
		for (int c = 0; c < 3; c++) {
			struct lp_memspy_params prm = { .sample_length = 500000, .sample_interval = 5000000, .seed = 1 };
			struct lp_memspy *m;
			struct lp_memspy_result r;
			struct gen g = { .kind = p };

			lp_rng_seed(&g.rng, 7 + (uint64_t)p);
			lp_cache_spec_parse(&prm.cache, caches[c]);
			if (lp_memspy_new(&m, &prm) < 0) {
				fprintf(stderr, "%s\n", lp_errmsg());
				return 1;
			}
			for (uint64_t done = 0; done < nrefs; done += CHUNK) {
				size_t n = nrefs - done < CHUNK ? (size_t)(nrefs - done) : CHUNK;
				for (size_t i = 0; i < n; i++) {
					buf[i].addr = next_addr(&g);
					buf[i].size = 8;
					buf[i].kind = (uint8_t)(i & 1);
				}
				lp_memspy_refs(m, buf, n);
			}
			lp_memspy_result(m, &r);
			double t = 100 * r.true_miss_ratio_samples;
			printf("%-14s %-10s %8.3f %8.3f | %8.3f %6.3f %+7.3f | %8.3f %+7.3f %6.3f | %8.3f %+7.3f %6.3f | %6.3f %6.3f %6.3f\n",
			       names[p], caches[c], 100 * r.true_miss_ratio, t, 100 * r.m_mu05, 100 * r.bound,
			       100 * r.m_mu05 - t, 100 * r.m_wood, 100 * r.m_wood - t, r.wood_mu,
			       100 * r.m_wood_touched, 100 * r.m_wood_touched - t, r.wood_touched_mu, r.true_mu,
			       r.gens_per_line_sample,
			       (double)r.unknown / (double)(r.known_hits + r.known_misses + r.unknown));
			lp_memspy_free(m);
		}
	}
	free(buf);
	return 0;
}
