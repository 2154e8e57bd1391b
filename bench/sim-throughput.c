/* Throughput of the cache simulator on in-memory synthetic traces.
 *
 *   bench-sim-throughput [MILLION_REFS] [--l1]   (default 20; --l1: part 1 only)
 *
 * 1. references/s of one 32K:8:64 LRU cache (lp_sim, no 3C), median of 5
 *    runs, and of the raw batch function on line numbers;
 * 2. the 17-size working-set graph 1K..64M (fully associative, line 64) in
 *    one pass against 17 separate simulations, for LRU alone and for
 *    LRU+FIFO+random. */
#include <locprof/sim.h>

#include "common/rng.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
	struct timespec ts;

	/* CPU time of this thread: the VM is shared with other jobs, and wall
	 * time counts the slices they take */
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* A mix typical of loops: 60% a hot 24 KiB region, 25% sequential sweeps
 * over 48 MiB, 15% uniform over 96 MiB. 8-byte aligned references. */
static struct lp_ref *make_refs(size_t n, uint64_t seed)
{
	struct lp_ref *r = calloc(n, sizeof(*r));
	struct lp_rng rng;
	uint64_t sweep = 0;

	lp_rng_seed(&rng, seed);
	for (size_t i = 0; i < n; i++) {
		uint64_t k = lp_rng_below(&rng, 100);
		r[i].size = 8;
		r[i].kind = (uint8_t)(k & 1);
		if (k < 60)
			r[i].addr = 0x10000000 + (lp_rng_below(&rng, 24 * 1024) & ~7ULL);
		else if (k < 85)
			r[i].addr = 0x20000000 + (sweep += 8) % (48 << 20);
		else
			r[i].addr = 0x40000000 + (lp_rng_below(&rng, 96 << 20) & ~7ULL);
	}
	return r;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double time_sim(const char *specs, const struct lp_ref *refs, size_t n, double *mr)
{
	struct lp_cache_spec spec;
	struct lp_sim *s;
	struct lp_level_stats st;
	double t0;

	if (lp_cache_spec_parse(&spec, specs) < 0 || lp_sim_new(&s, &spec, 1, 1, 0) < 0) {
		fprintf(stderr, "%s: %s\n", specs, lp_errmsg());
		exit(1);
	}
	t0 = now();
	for (size_t off = 0; off < n; off += 65536)
		lp_sim_refs(s, refs + off, n - off < 65536 ? n - off : 65536);
	t0 = now() - t0;
	lp_sim_level_stats(s, 0, &st);
	*mr = (double)st.misses / (double)st.accesses;
	lp_sim_free(s);
	return t0;
}

/* One pass of the working-set graph of the 17 sizes under the policies. */
static double time_graph(const uint64_t *sizes, unsigned policies, const struct lp_ref *refs, size_t n)
{
	struct lp_graph *g;
	double t0;

	lp_graph_new(&g, sizes, 17, 64, policies, 1);
	t0 = now();
	for (size_t off = 0; off < n; off += 65536)
		lp_graph_refs(g, refs + off, n - off < 65536 ? n - off : 65536);
	t0 = now() - t0;
	lp_graph_free(g);
	return t0;
}

int main(int argc, char **argv)
{
	size_t n = (size_t)((argc > 1 ? atof(argv[1]) : 20) * 1e6);
	int l1_only = argc > 2 && !strcmp(argv[2], "--l1");
	struct lp_ref *refs = make_refs(n, 42);
	uint64_t sizes[17];
	double t, mr, t_sep_lru = 0, t_sep_all = 0, t_one_lru, t_one_all;
	const char *pols[] = { "lru", "fifo", "random" };

	printf("references: %zu (in memory); rates per CPU second\n", n);
	{
		double ts[5];

		for (int rep = 0; rep < 5; rep++)
			ts[rep] = time_sim("32K:8:64:lru", refs, n, &mr);
		qsort(ts, 5, sizeof(ts[0]), cmp_double);
		printf("32K:8:64:lru  lp_sim_refs        %7.1f M refs/s  (median of 5; min %.1f, max %.1f; miss ratio %.4f)\n",
		       n / ts[2] / 1e6, n / ts[4] / 1e6, n / ts[0] / 1e6, mr);
	}
	{
		struct lp_cache_spec spec;
		struct lp_cache *c;
		uint64_t *lines = malloc(n * sizeof(*lines));
		for (size_t i = 0; i < n; i++)
			lines[i] = refs[i].addr >> 6;
		lp_cache_spec_parse(&spec, "32K:8:64:lru");
		lp_cache_new(&c, &spec, 1);
		t = now();
		lp_cache_access_lines(c, lines, n, NULL, NULL);
		t = now() - t;
		printf("32K:8:64:lru  lp_cache_access_lines %5.1f M lines/s\n", n / t / 1e6);
		lp_cache_free(c);
		free(lines);
	}
	if (l1_only) {
		free(refs);
		return 0;
	}
	for (int i = 0; i < 17; i++)
		sizes[i] = 1024ULL << i;
	for (int p = 0; p < 3; p++)
		for (int i = 0; i < 17; i++) {
			char spec[64];
			snprintf(spec, sizeof(spec), "%llu:full:64:%s", (unsigned long long)sizes[i], pols[p]);
			t = time_sim(spec, refs, n, &mr);
			if (p == 0)
				t_sep_lru += t;
			t_sep_all += t;
		}
	t_one_lru = time_graph(sizes, LP_GRAPH_LRU, refs, n);
	t_one_all = time_graph(sizes, LP_GRAPH_LRU | LP_GRAPH_FIFO | LP_GRAPH_RANDOM, refs, n);
	printf("17 sizes 1K..64M, LRU:           17 passes %.2f s, one pass %.2f s, ratio %.1fx\n",
	       t_sep_lru, t_one_lru, t_sep_lru / t_one_lru);
	printf("17 sizes 1K..64M, LRU+FIFO+rand: 51 passes %.2f s, one pass %.2f s, ratio %.1fx\n",
	       t_sep_all, t_one_all, t_sep_all / t_one_all);
	free(refs);
	return 0;
}
