/* Throughput of the exact distance algorithms on synthetic line traces
 * generated in memory: uniform and Zipf (s = 1) over M lines, N accesses.
 *
 *   bench-stackdist-throughput [--quick] [--n N] [--m M[,M...]] [--algos a,b,...]
 *                              [--dist uniform|zipf|both] [--repeat R]
 *                              [--isa avx512|avx2|popcnt|generic]
 *
 * An algorithm written fast@ISA (e.g. --algos fast@generic,fast@avx2) is
 * fast with that variant of its inner loop, to compare them in one run.
 *
 * With --repeat R every cell is the median of R runs on the same trace (the
 * VM is shared, so single runs vary by +-20%). Times are the thread's CPU
 * time, not wall time, for the same reason.
 *
 * Prints a markdown table: M accesses/s of each algorithm, of reuse
 * distance, and of a floor that only looks each line up in the same hash
 * table; bytes held by the structures at the end, and the peak RSS of the
 * process. An algorithm whose projected time (from its first 1/50 of the
 * trace) exceeds 20 s, or if its first second projects beyond 100 s, is skipped and its projected rate shown in brackets. */
#include <locprof/exact.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "common/rng.h"
#include "exact/exact-internal.h"

#define CHUNK 65536

static const char *fast_isa; /* --isa: variant of fast's loop (NULL = best) */

static double now_s(void)
{
	struct timespec ts;

	/* CPU time of this thread: the VM is shared with other jobs, and
	 * wall time counts the time slices they take */
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void generate(uint64_t *lines, size_t n, size_t m, int zipf, uint64_t seed)
{
	struct lp_rng r;
	double *cdf = NULL;

	lp_rng_seed(&r, seed);
	if (zipf) {
		double sum = 0;

		cdf = malloc(m * sizeof(*cdf));
		for (size_t k = 0; k < m; k++)
			cdf[k] = (sum += 1.0 / (double)(k + 1));
		for (size_t k = 0; k < m; k++)
			cdf[k] /= sum;
	}
	for (size_t i = 0; i < n; i++) {
		uint64_t x;

		if (zipf) {
			double u = lp_rng_double(&r);
			size_t lo = 0, hi = m - 1;

			while (lo < hi) {
				size_t mid = (lo + hi) / 2;
				if (cdf[mid] < u)
					lo = mid + 1;
				else
					hi = mid;
			}
			x = lo;
		} else {
			x = lp_rng_below(&r, m);
		}
		/* an odd multiplier scatters line numbers over 64 bits */
		lines[i] = x * 0x9e3779b97f4a7c15ULL;
	}
	free(cdf);
}

/* The floor: one hash lookup and update per access, nothing else, in the
 * simplest table of the module (lp_htab: 16-byte slots, linear probing).
 * fast uses a bucket table (lp_xbtab) that holds half the bytes per line
 * but spends more instructions per lookup, so at large M fast's table
 * alone can be faster than this floor. */
static double run_floor(const uint64_t *lines, size_t n, size_t *mem, uint64_t *check)
{
	struct lp_htab t;
	double t0 = now_s();
	uint64_t sum = 0;

	lp_htab_init(&t, 1 << 12);
	for (size_t off = 0; off < n; off += LP_EXACT_BATCH) {
		size_t k = n - off < LP_EXACT_BATCH ? n - off : LP_EXACT_BATCH;

		lp_htab_reserve(&t, k);
		for (size_t i = 0; i < k; i++) {
			int isnew;
			uint64_t *v;

			if (i + 16 < k)
				lp_htab_prefetch(&t, lines[off + i + 16]);
			v = lp_htab_get(&t, lines[off + i], &isnew);
			sum += isnew ? 0 : *v;
			*v = off + i;
		}
	}
	t0 = now_s() - t0;
	*mem = lp_htab_memory(&t);
	*check = sum;
	lp_htab_release(&t);
	return t0;
}

/* Returns seconds, or a negative projected time when skipped. */
static double run_algo(const char *algo, enum lp_distance kind, const uint64_t *lines, size_t n,
		       size_t *mem, uint64_t *check)
{
	struct lp_exact_opts o = { .kind = kind, .algorithm = algo, .prealloc_n = n + 1,
				   .fast_isa = fast_isa };
	char name[64];

	/* "fast@avx2": fast with that variant of its loop */
	if (algo && strchr(algo, '@')) {
		snprintf(name, sizeof(name), "%s", algo);
		*strchr(name, '@') = 0;
		o.algorithm = name;
		o.fast_isa = strchr(algo, '@') + 1;
	}
	struct lp_distcalc *c;
	static uint64_t dist[CHUNK];
	size_t probe = n / 50, done;

	/* projected from the first 1/50 of the trace, or from any point after
	 * a second, so that an O(M) algorithm at large M gives up early */
	uint64_t sum = 0;
	double t0;

	if (lp_distcalc_new(&c, &o) < 0) {
		fprintf(stderr, "%s: %s\n", algo, lp_errmsg());
		exit(1);
	}
	t0 = now_s();
	for (size_t off = 0; off < n; off += CHUNK) {
		size_t k = n - off < CHUNK ? n - off : CHUNK;

		if (lp_distcalc_run(c, lines + off, k, dist, &done) < 0) {
			fprintf(stderr, "%s: %s\n", algo, lp_errmsg());
			exit(1);
		}
		for (size_t i = 0; i < k; i++)
			sum += dist[i];
		if (off + k >= probe || now_s() - t0 > 1.0) {
			double proj = (now_s() - t0) * (double)n / (double)(off + k);
			/* before the probe point, only give up on the hopeless:
			 * the first accesses are mostly cold and slower */
			if (proj > (off + k >= probe ? 20.0 : 100.0)) {
				lp_distcalc_free(c);
				return -proj;
			}
		}
	}
	t0 = now_s() - t0;
	*mem = lp_distcalc_memory(c);
	*check = sum;
	lp_distcalc_free(c);
	return t0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Median of `repeat` runs (a skip in any run is reported as a skip). */
static double run_median(const char *algo, enum lp_distance kind, const uint64_t *lines, size_t n,
			 size_t *mem, uint64_t *check, int repeat, int floor)
{
	double t[64];
	int r = 0;

	/* at least one run, which sets *mem and *check (repeat is 1..64) */
	do {
		t[r] = floor ? run_floor(lines, n, mem, check) : run_algo(algo, kind, lines, n, mem, check);
		if (t[r] < 0)
			return t[r];
	} while (++r < repeat);
	qsort(t, (size_t)repeat, sizeof(t[0]), cmp_double);
	return repeat % 2 ? t[repeat / 2] : (t[repeat / 2 - 1] + t[repeat / 2]) / 2;
}

int main(int argc, char **argv)
{
	int repeat = 1, dist_lo = 0, dist_hi = 1;
	size_t n = 100000000, ms[8] = { 1000, 100000, 1000000, 10000000 }, nm = 4;
	const char *algos_default[] = { "fast", "prealloc", "bk", "avl", "markers", "naive" };
	const char *algos[8];
	size_t na = 6;
	char algobuf[256];
	struct rusage ru;

	memcpy(algos, algos_default, sizeof(algos_default));
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--quick")) {
			n = 10000000;
		} else if (!strcmp(argv[i], "--n") && i + 1 < argc) {
			n = strtoull(argv[++i], NULL, 0);
		} else if (!strcmp(argv[i], "--m") && i + 1 < argc) {
			char *s = argv[++i];
			nm = 0;
			while (*s && nm < 8) {
				ms[nm++] = strtoull(s, &s, 0);
				if (*s == ',')
					s++;
			}
		} else if (!strcmp(argv[i], "--isa") && i + 1 < argc) {
			fast_isa = argv[++i];
		} else if (!strcmp(argv[i], "--repeat") && i + 1 < argc) {
			repeat = atoi(argv[++i]);
			if (repeat < 1 || repeat > 64)
				repeat = 1;
		} else if (!strcmp(argv[i], "--dist") && i + 1 < argc) {
			i++;
			dist_lo = !strcmp(argv[i], "zipf");
			dist_hi = strcmp(argv[i], "uniform") ? 1 : 0;
		} else if (!strcmp(argv[i], "--algos") && i + 1 < argc) {
			snprintf(algobuf, sizeof(algobuf), "%s", argv[++i]);
			na = 0;
			for (char *tok = strtok(algobuf, ","); tok && na < 8; tok = strtok(NULL, ","))
				algos[na++] = tok;
		} else {
			fprintf(stderr, "usage: %s [--quick] [--n N] [--m M,...] [--algos a,b,...] "
				"[--dist uniform|zipf|both] [--repeat R] [--isa avx512|avx2|popcnt|generic]\n", argv[0]);
			return 2;
		}
	}
	uint64_t *lines = malloc(n * sizeof(*lines));
	if (!lines) {
		perror("malloc");
		return 1;
	}
	printf("N = %zu line accesses per trace; M accesses per CPU second (MiB held by the structures)", n);
	if (repeat > 1)
		printf("; median of %d runs", repeat);
	printf("; fast's loop: %s", lp_exact_fast_isa(fast_isa) ? lp_exact_fast_isa(fast_isa) : "?");
	printf("\n\n");
	printf("| trace | M | floor (hash only) | reuse |");
	for (size_t a = 0; a < na; a++)
		printf(" %s |", algos[a]);
	printf("\n|---|---|---|---|");
	for (size_t a = 0; a < na; a++)
		printf("---|");
	printf("\n");
	fflush(stdout);
	for (int zipf = dist_lo; zipf <= dist_hi; zipf++) {
		for (size_t k = 0; k < nm; k++) {
			size_t mem;
			uint64_t check, ref = 0;
			double t;

			generate(lines, n, ms[k], zipf, 1 + k);
			printf("| %s | %zu |", zipf ? "zipf 1.0" : "uniform", ms[k]);
			t = run_median(NULL, LP_DIST_REUSE, lines, n, &mem, &check, repeat, 1);
			printf(" %.1f (%.0f) |", n / t / 1e6, mem / 1048576.0);
			fflush(stdout);
			t = run_median(NULL, LP_DIST_REUSE, lines, n, &mem, &check, repeat, 0);
			if (t < 0)
				printf(" skipped [~%.2f] |", n / -t / 1e6);
			else
				printf(" %.1f (%.0f) |", n / t / 1e6, mem / 1048576.0);
			fflush(stdout);
			for (size_t a = 0; a < na; a++) {
				t = run_median(algos[a], LP_DIST_STACK, lines, n, &mem, &check, repeat, 0);
				if (t < 0) {
					printf(" skipped [~%.2f] |", n / -t / 1e6);
				} else {
					printf(" %.1f (%.0f) |", n / t / 1e6, mem / 1048576.0);
					if (ref && check != ref) {
						fprintf(stderr, "\n%s disagrees with %s\n", algos[a], algos[0]);
						return 1;
					}
					ref = check;
				}
				fflush(stdout);
			}
			printf("\n");
		}
	}
	getrusage(RUSAGE_SELF, &ru);
	printf("\npeak RSS of the whole run: %.0f MiB (of which the trace: %.0f MiB)\n",
	       ru.ru_maxrss / 1024.0, n * 8 / 1048576.0);
	free(lines);
	return 0;
}
