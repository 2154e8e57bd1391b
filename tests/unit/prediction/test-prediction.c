/* Cross-architecture prediction: expressions, constrained fits, machines,
 * run and model files, and known answers for the models: synthetic groups
 * whose distances and counts scale as known polynomials are recovered
 * exactly, and the binomial model is the fully-associative cut at s = 1;
 * set distances equal a naive per-set count, are the stack distances at
 * s = 1, and give exact set-associative predictions. */
#include "lp-test.h"

#include <locprof/model.h>
#include <locprof/sim.h>
#include <locprof/prediction.h>

#include "prediction/prediction-internal.h"

#include <inttypes.h>
#include <math.h>
#include <sys/stat.h>

static int REL(double a, double b)
{
	return fabs(a - b) <= 1e-6 * fmax(1, fabs(b));
}

/* ---- expressions ------------------------------------------------------- */

static double ev(const char *s, double P)
{
	struct lp_pred_expr *e;
	double v;

	assert_int_equal(lp_pred_expr_parse(&e, s), 0);
	v = lp_pred_expr_eval(e, P);
	lp_pred_expr_free(e);
	return v;
}

static void test_expr(void **state)
{
	struct lp_pred_expr *e;

	(void)state;
	assert_true(ev("P^2", 3) == 9);
	assert_true(ev("2^3^2", 1) == 512); /* right-associative */
	assert_true(ev("-P^2", 3) == -9);
	assert_true(ev("1/P + 2*P", 4) == 8.25);
	assert_true(REL(ev("P*log(P)", M_E), M_E));
	assert_true(ev("log2(P) + sqrt(P) - abs(-1)", 16) == 7);
	assert_true(ev(" ( P + 1 ) * ( P - 1 ) ", 5) == 24);
	assert_int_equal(lp_pred_expr_parse(&e, "P * log(P)"), 0);
	assert_string_equal(lp_pred_expr_text(e), "P*log(P)");
	lp_pred_expr_free(e);
	assert_int_equal(lp_pred_expr_parse(&e, "P^"), LP_EPARSE);
	assert_int_equal(lp_pred_expr_parse(&e, "foo(P)"), LP_EPARSE);
	assert_int_equal(lp_pred_expr_parse(&e, "(P"), LP_EPARSE);
	assert_int_equal(lp_pred_expr_parse(&e, "P)"), LP_EPARSE);
	assert_int_equal(lp_pred_expr_parse(&e, "N"), LP_EPARSE);
	assert_int_equal(lp_pred_expr_parse(&e, ""), LP_EPARSE);
	assert_null(e);
}

/* ---- NNLS and LSI ---------------------------------------------------------- */

/* Brute force: the best of every subset of free variables, the others 0. */
static double nnls_brute(const double *E, const double *f, size_t m, size_t n, double *best_x)
{
	double best = INFINITY;

	for (unsigned s = 0; s < (1u << n); s++) {
		double x[4] = { 0 }, A[64], r = 0;
		size_t k = 0, idx[4];
		for (size_t j = 0; j < n; j++)
			if (s >> j & 1)
				idx[k++] = j;
		if (k) {
			for (size_t i = 0; i < m; i++)
				for (size_t t = 0; t < k; t++)
					A[i * k + t] = E[i * n + idx[t]];
			double z[4];
			if (lp_lsi(A, f, m, k, NULL, NULL, 0, z) < 0)
				continue;
			int neg = 0;
			for (size_t t = 0; t < k; t++)
				neg |= z[t] < 0;
			if (neg)
				continue;
			for (size_t t = 0; t < k; t++)
				x[idx[t]] = z[t];
		}
		for (size_t i = 0; i < m; i++) {
			double s2 = -f[i];
			for (size_t j = 0; j < n; j++)
				s2 += E[i * n + j] * x[j];
			r += s2 * s2;
		}
		if (r < best) {
			best = r;
			memcpy(best_x, x, n * sizeof(*x));
		}
	}
	return best;
}

static void test_nnls(void **state)
{
	double E[] = { 1, 0, 0, 1 }, f[] = { 1, -1 }, x[4];
	uint64_t seed = 12345;

	(void)state;
	assert_int_equal(lp_nnls(E, f, 2, 2, x), 0);
	assert_true(REL(x[0], 1) && x[1] == 0);
	/* random problems against brute force */
	for (int trial = 0; trial < 200; trial++) {
		double A[6 * 3], b[6], xb[4], r = 0;
		for (int i = 0; i < 18; i++) {
			seed = seed * 6364136223846793005ull + 1442695040888963407ull;
			A[i] = (double)(seed >> 40) / (1 << 24) - 0.5;
		}
		for (int i = 0; i < 6; i++) {
			seed = seed * 6364136223846793005ull + 1442695040888963407ull;
			b[i] = (double)(seed >> 40) / (1 << 24) - 0.5;
		}
		double best = nnls_brute(A, b, 6, 3, xb);
		assert_int_equal(lp_nnls(A, b, 6, 3, x), 0);
		for (int i = 0; i < 6; i++) {
			double s = -b[i];
			for (int j = 0; j < 3; j++) {
				assert_true(x[j] >= 0);
				s += A[i * 3 + j] * x[j];
			}
			r += s * s;
		}
		assert_true(r <= best + 1e-9);
	}
}

static void test_lsi(void **state)
{
	/* min ||x - (1, -1)|| subject to x2 >= 0 and x1 + x2 >= 2 */
	double A[] = { 1, 0, 0, 1 }, b[] = { 1, -1 }, G[] = { 0, 1, 1, 1 }, h[] = { 0, 2 }, x[2];

	(void)state;
	assert_int_equal(lp_lsi(A, b, 2, 2, G, h, 1, x), 0);
	assert_true(REL(x[0], 1) && fabs(x[1]) < 1e-9);
	/* both: the projection onto x1 + x2 = 2 is (2, 0) */
	assert_int_equal(lp_lsi(A, b, 2, 2, G, h, 2, x), 0);
	assert_true(REL(x[0], 2) && fabs(x[1]) < 1e-9);
	/* no constraint: plain least squares of an overdetermined line fit */
	double A2[] = { 1, 1, 1, 2, 1, 3 }, b2[] = { 3, 5, 7 };
	assert_int_equal(lp_lsi(A2, b2, 3, 2, NULL, NULL, 0, x), 0);
	assert_true(REL(x[0], 1) && REL(x[1], 2));
	/* x1 >= 1 and -x1 >= 0 cannot both hold */
	double G3[] = { 1, 0, -1, 0 }, h3[] = { 1, 0 };
	assert_int_equal(lp_lsi(A, b, 2, 2, G3, h3, 2, x), LP_EINVAL);
	/* rank deficient */
	double A4[] = { 1, 1, 2, 2, 3, 3 };
	assert_int_equal(lp_lsi(A4, b2, 3, 2, NULL, NULL, 0, x), LP_EINVAL);
}

/* ---- fits ----------------------------------------------------------------------- */

static void check_recovered(const char *basis, const char *truth, const double *P, size_t n)
{
	struct lp_pred_basis b;
	struct lp_pred_expr *t;
	struct lp_pred_fit f;
	double y[16];
	char buf[256];

	assert_int_equal(lp_pred_basis_parse(&b, basis), 0);
	assert_int_equal(lp_pred_expr_parse(&t, truth), 0);
	for (size_t i = 0; i < n; i++)
		y[i] = lp_pred_expr_eval(t, P[i]);
	assert_int_equal(lp_pred_fit_select(&b, P, y, n, LP_PRED_FIT_NONNEG | LP_PRED_FIT_MONOTONE, 16 * P[n - 1], &f), 0);
	/* the same function far outside the fitted range: exact recovery */
	for (double x = P[0]; x <= 100 * P[n - 1]; x *= 1.7)
		if (!REL(lp_pred_fit_eval(&b, &f, x), lp_pred_expr_eval(t, x))) {
			fprintf(stderr, "%s fitted as %s: %g at %g, want %g\n", truth,
				lp_pred_fit_format(&b, &f, buf, sizeof(buf)), lp_pred_fit_eval(&b, &f, x), x, lp_pred_expr_eval(t, x));
			fail();
		}
	lp_pred_expr_free(t);
	lp_pred_basis_release(&b);
}

static void test_fit_exact(void **state)
{
	const double P5[] = { 16, 24, 32, 40, 48 }, P6[] = { 10, 20, 30, 40, 50, 60 };
	struct lp_pred_basis b;
	struct lp_pred_fit f;
	double y[5];

	(void)state;
	check_recovered(NULL, "0.125*P^3", P5, 5);
	check_recovered(NULL, "3*P^2 + 5*P", P5, 5);
	check_recovered(NULL, "2*P^2 + 3*P + 7", P5, 5);
	check_recovered(NULL, "P^4/2048 + 3", P5, 5);
	check_recovered(NULL, "42", P5, 5);
	check_recovered("1,P,P^2,P^3", "P^3 - 4*P^2 + 100*P + 9", P6, 6);
	check_recovered("1,P,log(P),P*log(P)", "3*P*log(P) + 2", P5, 5);
	check_recovered("1,P,log(P),P*log(P)", "7*log(P) - 1", P5, 5);
	/* the terms found are exactly the true ones */
	assert_int_equal(lp_pred_basis_parse(&b, "1,P,P^2,P^3"), 0);
	for (int i = 0; i < 5; i++)
		y[i] = 3 * P5[i] * P5[i] + 5 * P5[i];
	assert_int_equal(lp_pred_fit_select(&b, P5, y, 5, 0, 0, &f), 0);
	assert_int_equal(f.used, 0x6); /* P and P^2 */
	assert_true(REL(f.coef[1], 5) && REL(f.coef[2], 3));
	for (int i = 0; i < 5; i++)
		y[i] = 0;
	assert_int_equal(lp_pred_fit_select(&b, P5, y, 5, 0, 0, &f), 0);
	assert_int_equal(f.used, 0);
	lp_pred_basis_release(&b);
	/* refusals */
	assert_int_equal(lp_pred_basis_parse(&b, "P,P"), LP_EINVAL);
	assert_int_equal(lp_pred_basis_parse(&b, "P,("), LP_EPARSE);
}

static void test_fit_constraints(void **state)
{
	/* counts that rise then flatten: an unconstrained cubic through them
	 * turns down soon after the last size; the constrained fit may not */
	const double P[] = { 10, 20, 30, 40, 50, 60 }, y[] = { 100, 390, 820, 1280, 1600, 1700 };
	struct lp_pred_basis b;
	struct lp_pred_fit f;

	(void)state;
	assert_int_equal(lp_pred_basis_parse(&b, "1,P,P^2,P^3"), 0);
	assert_int_equal(lp_pred_fit_subset(&b, 0xf, P, y, 6, 0, 0, &f), 0);
	assert_true(lp_pred_fit_eval(&b, &f, 200) < lp_pred_fit_eval(&b, &f, 60)); /* it does turn down */
	assert_int_equal(lp_pred_fit_subset(&b, 0xf, P, y, 6, LP_PRED_FIT_MONOTONE | LP_PRED_FIT_NONNEG, 960, &f), 0);
	for (double x = 10; x < 960; x += 5) {
		if (!(lp_pred_fit_eval(&b, &f, x + 5) >= lp_pred_fit_eval(&b, &f, x) - 1e-6)) {
			char buf[256];
			fprintf(stderr, "%s decreases at %g: %g -> %g\n", lp_pred_fit_format(&b, &f, buf, sizeof(buf)), x,
				lp_pred_fit_eval(&b, &f, x), lp_pred_fit_eval(&b, &f, x + 5));
			fail();
		}
		assert_true(lp_pred_fit_eval(&b, &f, x) >= -1e-6);
	}
	lp_pred_basis_release(&b);
}

/* ---- machines ------------------------------------------------------------------- */

static void test_machine(void **state)
{
	struct lp_machine m;
	char *dir = lp_test_path("sys"), path[512];

	(void)state;
	assert_int_equal(lp_machine_builtin(&m, "itanium2"), 0);
	assert_int_equal(m.n, 5);
	assert_string_equal(m.level[2].name, "L3");
	assert_int_equal(m.level[2].blocks, 12288);
	assert_int_equal(lp_pred_level_sets(&m.level[2]), 2048);
	assert_int_equal(lp_pred_level_ways(&m.level[2]), 6);
	assert_int_equal(m.level[4].kind, LP_PRED_LEVEL_TLB);
	assert_int_equal(lp_pred_level_sets(&m.level[4]), 1);
	assert_int_equal(lp_pred_level_ways(&m.level[4]), 128);
	assert_int_equal(lp_machine_builtin(&m, "r12000"), 0);
	assert_int_equal(m.level[1].blocks, 65536);
	assert_int_equal(m.level[2].block, 32768);
	assert_int_equal(lp_machine_builtin(&m, "pdp11"), LP_EINVAL);
	assert_int_equal(lp_machine_parse(&m, "name x\ncache L1 32K full 64 # comment\ntlb T 64 4K 4\n", "t"), 0);
	assert_int_equal(m.level[0].assoc, 0);
	assert_int_equal(m.level[0].blocks, 512);
	assert_int_equal(m.level[1].assoc, 4);
	assert_int_equal(lp_machine_parse(&m, "cache L1 32K 8 48\n", "t"), LP_EINVAL);
	assert_int_equal(lp_machine_parse(&m, "cache L1 32K 7 64\n", "t"), LP_EINVAL);
	assert_int_equal(lp_machine_parse(&m, "cache L1 32K 8\n", "t"), LP_EPARSE);
	assert_int_equal(lp_machine_parse(&m, "cache L1 32K 8 64\ncache L1 1M 8 64\n", "t"), LP_EINVAL);
	assert_int_equal(lp_machine_parse(&m, "# nothing\n", "t"), LP_EINVAL);
	/* the host, from a copy of sysfs */
	const char *idx[][5] = { { "0", "1", "Data", "48K", "12" }, { "1", "1", "Instruction", "32K", "8" },
				 { "2", "2", "Unified", "1280K", "10" } };
	const char *parents[] = { "", "/devices", "/devices/system", "/devices/system/cpu",
				  "/devices/system/cpu/cpu0", "/devices/system/cpu/cpu0/cache" };
	for (size_t i = 0; i < sizeof(parents) / sizeof(parents[0]); i++) {
		snprintf(path, sizeof(path), "%s%s", dir, parents[i]);
		mkdir(path, 0755);
	}
	for (int i = 0; i < 3; i++) {
		char d[512], f[600];
		snprintf(d, sizeof(d), "%s/devices/system/cpu/cpu0/cache/index%s", dir, idx[i][0]);
		mkdir(d, 0755);
		snprintf(f, sizeof(f), "%s/level", d);
		lp_test_write_file(f, idx[i][1], 1);
		snprintf(f, sizeof(f), "%s/type", d);
		lp_test_write_file(f, idx[i][2], strlen(idx[i][2]));
		snprintf(f, sizeof(f), "%s/size", d);
		lp_test_write_file(f, idx[i][3], strlen(idx[i][3]));
		snprintf(f, sizeof(f), "%s/ways_of_associativity", d);
		lp_test_write_file(f, idx[i][4], strlen(idx[i][4]));
		snprintf(f, sizeof(f), "%s/coherency_line_size", d);
		lp_test_write_file(f, "64", 2);
	}
	assert_int_equal(lp_machine_host(&m, dir), 0);
	assert_int_equal(m.n, 3);
	assert_string_equal(m.level[0].name, "L1");
	assert_int_equal(m.level[0].blocks, 768);
	assert_int_equal(m.level[1].blocks, 20480);
	assert_int_equal(m.level[1].assoc, 10);
	assert_int_equal(m.level[2].kind, LP_PRED_LEVEL_TLB);
	free(dir);
}

/* ---- synthetic runs and exact recovery --------------------------------------- */

/* Run file of a program with two reference groups in two loops:
 *   group 0 (pcs 0 and 1, one loop, like A[i][k] and A[i][k+1]): per
 *     64-byte block, P^2 cold, P^2 accesses at the constant distance 1,
 *     2P^2 at 3P + 5 and P^2/2 at P^2/2 (the paper's model: the parts of
 *     the histogram beyond the constant distances keep their shares);
 *   group 1 (pc 2, another loop): 3P^2 cold, 4P^2 at 2P^2 + 1.
 * (A distance never exceeds the lines touched: 4P^2 here.)
 * At 4096-byte blocks everything is at distance 0 or cold. */
static char *write_run(double P)
{
	char name[64], *path;
	FILE *f;
	long p = (long)P;

	snprintf(name, sizeof(name), "size-%ld.xrun", p);
	path = lp_test_path(name);
	assert_non_null(f = fopen(path, "w"));
	fprintf(f, "# locprof xpred run v1\nsize %ld\ncommand ./prog%%20%ld\nreferences %ld\n", p, p,
		4 * p * p + p * p / 2 + 7 * p * p);
	fprintf(f, "blocks 64 4096\nbias 0x0 mappings\nmodule 0 /bin/prog\n");
	fprintf(f, "loop 0 0 0x1000 -1 1 0 kernel k.c:10-12\nloop 1 0 0x2000 -1 1 1 kernel k.c:20-20\n");
	fprintf(f, "pc 0 0 0x1010 %ld 0 0 8 k.c:11 kernel\n", (4 * p * p + p * p / 2) / 2);
	fprintf(f, "pc 1 0 0x1020 %ld 0 0 8 k.c:11 kernel\n", (4 * p * p + p * p / 2) - (4 * p * p + p * p / 2) / 2);
	fprintf(f, "pc 2 0 0x2010 %ld 1 1 16 k.c:20 kernel\n", 7 * p * p);
	/* pc 0 and pc 1 split group 0's accesses unevenly (the unrolled pair) */
	fprintf(f, "hist 0 64 %ld 1:%ld %ld:%ld %ld:%ld\n", p * p, p * p, 3 * p + 5, 2 * p * p - 1, p * p / 2, p * p / 2);
	fprintf(f, "hist 1 64 0 %ld:1\n", 3 * p + 5);
	fprintf(f, "hist 2 64 %ld %ld:%ld\n", 3 * p * p, 2 * p * p + 1, 4 * p * p);
	fprintf(f, "hist 0 4096 1 0:%ld\n", 4 * p * p + p * p / 2 - 1);
	fprintf(f, "hist 2 4096 1 0:%ld\n", 7 * p * p - 1);
	fprintf(f, "end\n");
	fclose(f);
	return path;
}

static struct lp_pred_model *fit_synthetic(const double *sizes, size_t n, const char *basis)
{
	struct lp_pred_run *runs[8] = { 0 };
	struct lp_pred_model *m;
	struct lp_pred_fit_options o = { .basis = basis };

	for (size_t i = 0; i < n; i++) {
		char *path = write_run(sizes[i]);
		assert_int_equal(lp_pred_run_read(&runs[i], path), 0);
		assert_true(lp_pred_run_size(runs[i]) == sizes[i]);
		free(path);
	}
	assert_int_equal(lp_pred_model_fit(&m, runs, n, &o), 0);
	for (size_t i = 0; i < n; i++)
		lp_pred_run_free(runs[i]);
	return m;
}

static void check_group_block(const struct lp_pred_model *m, size_t g, uint64_t block, double P, const double *d,
			      const double *c, size_t nb, double cold)
{
	struct lp_pred_bin *bins;
	size_t n;
	double cl;

	assert_int_equal(lp_pred_model_hist(m, g, block, P, &bins, &n, &cl), 0);
	assert_true(REL(cl, cold));
	/* each true bin is found with its count (the model may cut one true
	 * bin into several at the same distance) */
	for (size_t i = 0; i < nb; i++) {
		double sum = 0;
		for (size_t k = 0; k < n; k++)
			if (REL(bins[k].distance, d[i]))
				sum += bins[k].count;
		if (!REL(sum, c[i])) {
			fprintf(stderr, "group %zu at P=%g: %g accesses at distance %g, want %g\n", g, P, sum, d[i], c[i]);
			fail();
		}
	}
	double total = 0, want = 0;
	for (size_t k = 0; k < n; k++)
		total += bins[k].count;
	for (size_t i = 0; i < nb; i++)
		want += c[i];
	assert_true(REL(total, want));
	free(bins);
}

static void check_group(const struct lp_pred_model *m, size_t g, double P, const double *d, const double *c,
			size_t nb, double cold)
{
	check_group_block(m, g, 64, P, d, c, nb, cold);
}

static void test_synthetic_groups(void **state)
{
	const double sizes[] = { 10, 20, 30, 40, 50 };
	struct lp_pred_model *m = fit_synthetic(sizes, 5, NULL);
	struct lp_pred_group_info gi;
	char *path = lp_test_path("model.xmodel");
	struct lp_pred_model *m2;

	(void)state;
	assert_int_equal(lp_pred_model_ngroups(m), 2);
	lp_pred_model_group(m, 0, &gi);
	assert_int_equal(gi.npcs, 2);
	assert_string_equal(gi.function, "kernel");
	assert_string_equal(gi.where, "k.c:11");
	assert_int_equal(lp_pred_model_nloops(m), 2);
	/* 10x beyond the largest fitted size, and a size in between */
	for (double P = 35; P <= 500; P += 155) {
		double d0[] = { 1, 3 * P + 5, P * P / 2 }, c0[] = { P * P, 2 * P * P, P * P / 2 };
		double d1[] = { 2 * P * P + 1 }, c1[] = { 4 * P * P };
		check_group(m, 0, P, d0, c0, 3, P * P);
		check_group(m, 1, P, d1, c1, 1, 3 * P * P);
	}
	/* the model file keeps it all */
	assert_int_equal(lp_pred_model_write(m, path), 0);
	assert_int_equal(lp_pred_model_read(&m2, path), 0);
	for (size_t g = 0; g < 2; g++) {
		struct lp_pred_level l = { .name = "L", .blocks = 1000, .assoc = 4, .block = 64 };
		struct lp_pred_count a, b;
		assert_int_equal(lp_pred_model_predict(m, g, &l, 480, &a), 0);
		assert_int_equal(lp_pred_model_predict(m2, g, &l, 480, &b), 0);
		assert_true(REL(a.fa_misses, b.fa_misses) && REL(a.sa_misses, b.sa_misses));
		assert_true(REL(a.references, b.references) && REL(a.accesses, b.accesses));
	}
	/* a level whose block size was not collected */
	{
		struct lp_pred_level l = { .name = "L9", .blocks = 10, .assoc = 0, .block = 128 };
		struct lp_pred_count a;
		assert_int_equal(lp_pred_model_predict(m, 0, &l, 100, &a), LP_EINVAL);
	}
	lp_pred_model_free(m2);
	lp_pred_model_free(m);
	free(path);
}

/* A column walk at page level (the matrix multiply's B at 16K pages):
 * P^3 accesses; P^3 - P^4/2048 - P^2 of them on the page of the previous
 * row (constant distance 1), P^4/2048 + P^2 crossing to a page last seen a
 * walk ago, at distance P^2/2048 + 2 (the pages of B, of A and of C);
 * 3P^2/2048 cold (the three matrices' pages). At P = 64k the distances are whole numbers (4, 10, 20, 34, 52 at
 * 64..320): small integers whose quadratic scaling must be recovered
 * exactly through the binning and the fits, and the counts' P^4 term with
 * it, so that 4x beyond, where the walk spans more pages than a TLB holds,
 * the cut is right. */
static char *write_walk_run(double P)
{
	char name[64], *path;
	FILE *f;
	long p = (long)P, cross = p * p * p * p / 2048 + p * p, d = p * p / 2048 + 2, cold = 3 * p * p / 2048;

	snprintf(name, sizeof(name), "walk-%ld.xrun", p);
	path = lp_test_path(name);
	assert_non_null(f = fopen(path, "w"));
	fprintf(f, "# locprof xpred run v1\nsize %ld\ncommand ./walk%%20%ld\nreferences %ld\n", p, p, p * p * p);
	fprintf(f, "blocks 16384\nbias 0x0 mappings\nmodule 0 /bin/walk\n");
	fprintf(f, "loop 0 0 0x1000 -1 1 0 kernel w.c:10-12\n");
	fprintf(f, "pc 0 0 0x1010 %ld 0 0 %ld w.c:11 kernel\n", p * p * p, 8 * p);
	fprintf(f, "hist 0 16384 %ld 1:%ld %ld:%ld\n", cold, p * p * p - cross - cold, d, cross);
	fprintf(f, "end\n");
	fclose(f);
	return path;
}

static void test_page_walk(void **state)
{
	const double sizes[] = { 64, 128, 192, 256, 320 };
	struct lp_pred_run *runs[5];
	struct lp_pred_model *m;

	(void)state;
	for (size_t i = 0; i < 5; i++) {
		char *path = write_walk_run(sizes[i]);
		assert_int_equal(lp_pred_run_read(&runs[i], path), 0);
		free(path);
	}
	assert_int_equal(lp_pred_model_fit(&m, runs, 5, NULL), 0);
	for (double P = 96; P <= 1280; P += 296) {
		struct lp_pred_bin *bins;
		size_t n;
		double cold, cross = P * P * P * P / 2048 + P * P, d = P * P / 2048 + 2, cl = 3 * P * P / 2048;
		double want_d[] = { 1, d }, want_c[] = { P * P * P - cross - cl, cross };
		check_group_block(m, 0, 16384, P, want_d, want_c, 2, cl);
		/* and the TLB cut: 128 entries */
		struct lp_pred_level l = { .name = "TLB", .blocks = 128, .assoc = 0, .block = 16384 };
		struct lp_pred_count c;
		assert_int_equal(lp_pred_model_predict(m, 0, &l, P, &c), 0);
		assert_true(REL(c.fa_misses, cl + (d >= 128 ? cross : 0)));
		assert_int_equal(lp_pred_model_hist(m, 0, 16384, P, &bins, &n, &cold), 0);
		free(bins);
	}
	lp_pred_model_free(m);
	for (size_t i = 0; i < 5; i++)
		lp_pred_run_free(runs[i]);
}

/* Misses of a fully-associative cache from a predicted histogram, by hand. */
static void test_predict_cut(void **state)
{
	const double sizes[] = { 10, 20, 30, 40, 50 };
	struct lp_pred_model *m = fit_synthetic(sizes, 5, NULL);
	double P = 300;

	(void)state;
	/* group 0 at P = 300: cold P^2; P^2 at 1, 2P^2 at 905, P^2/2 at 45000 */
	for (uint64_t lines = 1; lines < 100000; lines = lines * 3 + 1) {
		struct lp_pred_level l = { .name = "L", .blocks = lines, .assoc = 0, .block = 64 };
		struct lp_pred_count c;
		double want = P * P + (lines <= 1 ? P * P : 0) + (lines <= 905 ? 2 * P * P : 0) +
			      (lines <= 45000 ? P * P / 2 : 0);
		assert_int_equal(lp_pred_model_predict(m, 0, &l, P, &c), 0);
		assert_true(REL(c.fa_misses, want));
		assert_true(REL(c.sa_misses, want)); /* one set: the cut */
	}
	lp_pred_model_free(m);
}

/* The binomial model with one set is the cut at the cache size. */
static void test_binomial_cut(void **state)
{
	(void)state;
	for (uint64_t k = 1; k <= 64; k *= 2)
		for (double d = 0; d < 3 * k + 5; d += 1)
			assert_true(lp_binomial_miss(d, 1, k) == (d >= (double)k ? 1.0 : 0.0));
	/* and with many sets it is a probability that grows with the distance */
	double last = 0;
	for (double d = 0; d < 400; d += 7) {
		double p = lp_binomial_miss(d, 64, 4);
		assert_true(p >= last - 1e-12 && p >= 0 && p <= 1);
		last = p;
	}
	/* through the model: a set-associative level with one set equals the
	 * fully-associative prediction */
	const double sizes[] = { 10, 20, 30, 40, 50 };
	struct lp_pred_model *m = fit_synthetic(sizes, 5, NULL);
	for (uint64_t lines = 2; lines < 50000; lines *= 3) {
		struct lp_pred_level fa = { .name = "F", .blocks = lines, .assoc = 0, .block = 64 };
		struct lp_pred_bin *bins;
		size_t n;
		double cold, sa;
		struct lp_pred_count c;
		assert_int_equal(lp_pred_model_predict(m, 0, &fa, 250, &c), 0);
		assert_int_equal(lp_pred_model_hist(m, 0, 64, 250, &bins, &n, &cold), 0);
		sa = cold;
		for (size_t i = 0; i < n; i++)
			sa += bins[i].count * lp_binomial_miss(bins[i].distance, 1, lines);
		if (!REL(sa, c.fa_misses)) {
			fprintf(stderr, "lines %llu: binomial %g, cut %g\n", (unsigned long long)lines, sa, c.fa_misses);
			for (size_t i = 0; i < n; i++)
				fprintf(stderr, "  %.17g: %g\n", bins[i].distance, bins[i].count);
			fail();
		}
		free(bins);
	}
	lp_pred_model_free(m);
}

/* The binomial model (section 5.2) against a direct computation: the
 * probabilities of i of the n other lines in our set by the recurrence
 * P(0) = q^n, P(i+1) = P(i) (n-i)/(i+1) p/q in long double, summed for
 * i < k; and three values computed exactly in rational arithmetic (Python's
 * fractions), among them the distances near capacity of the matrix multiply
 * (about 690 lines in the Itanium2's L2, 256 sets of 8 ways) and of the
 * transpose (about 10300 lines in its L3, 2048 sets of 6 ways). */
static void test_binomial_direct(void **state)
{
	const struct {
		double n;
		uint64_t s, k;
	} c[] = { { 8, 256, 8 }, { 9, 2, 8 }, { 100, 64, 4 }, { 690, 256, 8 }, { 1394, 256, 8 },
		  { 5000, 2048, 6 }, { 10300, 2048, 6 }, { 12287, 2048, 6 }, { 40000, 4, 16 } };

	(void)state;
	for (size_t t = 0; t < sizeof(c) / sizeof(c[0]); t++) {
		long double p = 1.0L / c[t].s, q = 1 - p, P = powl(q, c[t].n), hit = 0;
		for (uint64_t i = 0; i < c[t].k && i <= c[t].n; i++) {
			hit += P;
			P *= (c[t].n - i) / (i + 1) * p / q;
		}
		double want = (double)(1 - hit), got = lp_binomial_miss(c[t].n, c[t].s, c[t].k);
		if (!(fabs(got - want) <= 1e-9 + 1e-9 * want)) {
			fprintf(stderr, "n %g s %llu k %llu: %.17g, direct %.17g\n", c[t].n, (unsigned long long)c[t].s,
				(unsigned long long)c[t].k, got, want);
			fail();
		}
	}
	assert_true(fabs(lp_binomial_miss(690, 256, 8) - 0.0064399716313541374) < 1e-9 * 0.0064399716313541374);
	assert_true(fabs(lp_binomial_miss(10300, 2048, 6) - 0.38918109604894996) < 1e-9 * 0.38918109604894996);
	assert_true(fabs(lp_binomial_miss(100, 64, 4) - 0.0722166023506088) < 1e-9 * 0.0722166023506088);
	/* n <= k - 1: always a hit */
	assert_true(lp_binomial_miss(7, 256, 8) == 0);
}

/* ---- bad files --------------------------------------------------------------------- */

static void test_bad_files(void **state)
{
	char *p = lp_test_path("bad.xrun");
	struct lp_pred_run *r;
	struct lp_pred_model *m;

	(void)state;
	lp_test_write_file(p, "hello\n", 6);
	assert_int_equal(lp_pred_run_read(&r, p), LP_EFORMAT);
	assert_int_equal(lp_pred_model_read(&m, p), LP_EFORMAT);
	lp_test_write_file(p, "# locprof xpred run v3\n", 23);
	assert_int_equal(lp_pred_run_read(&r, p), LP_EVERSION);
	const char *trunc = "# locprof xpred run v1\nsize 10\nblocks 64\n";
	lp_test_write_file(p, trunc, strlen(trunc));
	assert_int_equal(lp_pred_run_read(&r, p), LP_ETRUNCATED);
	const char *bad = "# locprof xpred run v1\nsize 10\nblocks 64\nhist 5 64 0 1:1\nend\n";
	lp_test_write_file(p, bad, strlen(bad));
	assert_int_equal(lp_pred_run_read(&r, p), LP_ECORRUPT);
	assert_int_equal(lp_pred_run_read(&r, "/nonexistent/x.xrun"), LP_EIO);
	/* too few runs, two runs at one size */
	const double one[] = { 10, 20 };
	struct lp_pred_run *runs[3];
	for (int i = 0; i < 2; i++) {
		char *q = write_run(one[i]);
		assert_int_equal(lp_pred_run_read(&runs[i], q), 0);
		free(q);
	}
	assert_int_equal(lp_pred_model_fit(&m, runs, 2, NULL), LP_EINVAL);
	runs[2] = runs[1];
	assert_int_equal(lp_pred_model_fit(&m, runs, 3, NULL), LP_EINVAL);
	lp_pred_run_free(runs[0]);
	lp_pred_run_free(runs[1]);
	free(p);
}

/* ---- checks of a prediction ------------------------------------------------ */

/* The verdict on one fully-associative level of the synthetic program at P. */
static void judge(const struct lp_pred_model *m, uint64_t blocks, uint64_t block, double P, struct lp_pred_check *sum,
		  struct lp_pred_validity *v)
{
	struct lp_pred_level l = { .name = "L", .blocks = blocks, .assoc = 0, .block = block };

	memset(sum, 0, sizeof(*sum));
	for (size_t g = 0; g < lp_pred_model_ngroups(m); g++) {
		struct lp_pred_check c;
		assert_int_equal(lp_pred_model_check(m, g, &l, P, &c), 0);
		lp_pred_check_add(sum, &c);
	}
	lp_pred_check_judge(sum, &l, v);
}

/* write_run's program fitted at 16..48, its distances known: group 0's
 * 2P^2 reuses at 3P + 5 blocks (149 at 48: short) cross 300 blocks at
 * P = 98.3, a fifth of the misses at 200; its P^2/2 at P^2/2 and group 1's
 * 4P^2 at 2P^2 + 1 are long at 48, and cross 10000 blocks without a flag;
 * 80000 blocks is where group 1's reuses sit at 200 (edge); at 4096-byte
 * blocks the data are 2 blocks (few). */
static void test_check(void **state)
{
	const double sizes[] = { 16, 24, 32, 40, 48 };
	struct lp_pred_model *m = fit_synthetic(sizes, 5, NULL);
	struct lp_pred_check c;
	struct lp_pred_validity v;
	char name[64];

	(void)state;
	judge(m, 300, 64, 200, &c, &v);
	assert_true(fabs(c.fa - 420000) < 1);
	assert_true(fabs(c.crossed - 80000) < 1);
	assert_true(fabs(c.cross_at - 295.0 / 3) < 0.5);
	assert_int_equal(v.flags, LP_PRED_CHECK_CROSSES);
	assert_string_equal(lp_pred_check_name(v.flags, name, sizeof(name)), "crosses");
	assert_non_null(strstr(v.reason, "extrapolates past its capacity (300 lines of 64B): 19% of its predicted misses"));
	/* the model gives back its runs: no 'unfit' */
	for (size_t r = 0; r < c.nsizes; r++)
		assert_true(fabs(c.fit[r] - c.meas[r]) <= 1e-6 * c.meas[r] + 1);
	/* inside the fitted sizes nothing crosses */
	judge(m, 300, 64, 40, &c, &v);
	assert_int_equal(v.flags, 0);
	assert_string_equal(lp_pred_check_name(v.flags, name, sizeof(name)), "ok");
	judge(m, 10000, 64, 200, &c, &v);
	assert_true(fabs(c.fa - 340000) < 1);
	assert_int_equal(v.flags, 0);
	assert_true(v.lo == v.hi && fabs(v.lo - c.fa) < 1e-6);
	judge(m, 80000, 64, 200, &c, &v);
	assert_true(fabs(c.fa - 320000) < 1);
	assert_int_equal(v.flags, LP_PRED_CHECK_EDGE);
	assert_true(fabs(v.lo - 160000) < 1 && fabs(v.hi - 320000) < 1);
	judge(m, 4, 4096, 200, &c, &v);
	assert_true(v.flags & LP_PRED_CHECK_FEW);
	assert_non_null(strstr(v.reason, "data span 2 blocks of 4096B"));
	judge(m, 4, 4096, 48, &c, &v);
	assert_int_equal(v.flags, 0);
	/* the scaled capacities: the program's distinct 64-byte blocks are
	 * the cold accesses, P^2 + 3P^2 = 4P^2; 300 blocks of 160000 at 200
	 * are 17.28 of 9216 at 48 and 1.92 of 1024 at 16 (under 4: not
	 * tested); the exact model gives its runs back there too */
	judge(m, 300, 64, 200, &c, &v);
	assert_true(c.scap[4] == 17 && c.scap[1] == 4 && c.scap[0] == 0);
	for (size_t r = 1; r < c.nsizes; r++)
		assert_true(fabs(c.sfit[r] - c.smeas[r]) <= 1e-6 * c.smeas[r] + 1);
	assert_true(c.smeas[4] > 0);
	lp_pred_model_free(m);
}

/* The verdicts of the scaled-capacity, conflicts and unstable checks. */
static void test_check_verdicts(void **state)
{
	struct lp_pred_level l = { .name = "L2", .blocks = 2048, .assoc = 8, .block = 128 };
	struct lp_pred_check c = { .size = 400, .pmax = 100, .fa = 5000, .fa_short = 5000, .fa_long = 5000,
				   .blocks_max = 1000, .nsizes = 3 };
	struct lp_pred_validity v;
	char name[64];

	(void)state;
	for (size_t r = 0; r < 3; r++) {
		c.sizes[r] = 50.0 * (double)(r + 1);
		c.fit[r] = c.meas[r] = 100;
		c.scap[r] = 20.0 * (double)(r + 1);
		c.sfit[r] = c.smeas[r] = 1000;
	}
	c.sa = c.sa_strided = c.sa_binomial = 5000;
	lp_pred_check_judge(&c, &l, &v);
	assert_int_equal(v.flags, 0);
	/* 10% off at the scaled capacity is within the tolerance, 12% is not */
	c.sfit[1] = 1100;
	lp_pred_check_judge(&c, &l, &v);
	assert_int_equal(v.flags, 0);
	c.sfit[1] = 1120;
	lp_pred_check_judge(&c, &l, &v);
	assert_int_equal(v.flags, LP_PRED_CHECK_SHAPE);
	assert_string_equal(lp_pred_check_name(v.flags, name, sizeof(name)), "shape");
	assert_non_null(strstr(v.reason, "at P = 100, with a capacity of 40 blocks (the same share of that run's "
					 "data), the model has 1120 misses where the run has 1000 (+12%)"));
	/* a run not tested (no scaled capacity) is not judged */
	c.scap[1] = 0;
	lp_pred_check_judge(&c, &l, &v);
	assert_int_equal(v.flags, 0);
	/* conflicts: set-associative misses 20% over the fully-associative */
	c.sa = 6250;
	c.sa_strided = 6250;
	c.sa_binomial = 5100;
	lp_pred_check_judge(&c, &l, &v);
	assert_int_equal(v.flags, LP_PRED_CHECK_CONFLICTS);
	assert_string_equal(lp_pred_check_name(v.flags, name, sizeof(name)), "conflicts");
	assert_non_null(strstr(v.reason, "its set-associative misses (6250) are +25% from its fully-associative ones"));
	assert_non_null(strstr(v.reason, "(6250 with the walks' strided placement, 5100 with random placement)"));
	/* 5.7% apart is flagged; within 5%, or on a fully-associative level,
	 * no flag */
	c.sa = 5300;
	lp_pred_check_judge(&c, &l, &v);
	assert_int_equal(v.flags, LP_PRED_CHECK_CONFLICTS);
	c.sa = 5200;
	lp_pred_check_judge(&c, &l, &v);
	assert_int_equal(v.flags, 0);
	c.sa = 6250;
	l.assoc = 0;
	lp_pred_check_judge(&c, &l, &v);
	assert_int_equal(v.flags, 0);
	/* unstable: the model fitted without the largest size 12% off at P,
	 * not within the fitted sizes, nor without that model */
	c.loo = 1;
	c.loo_fa = 5600;
	c.loo_pmax = 80;
	lp_pred_check_judge(&c, &l, &v);
	assert_int_equal(v.flags, LP_PRED_CHECK_UNSTABLE);
	assert_string_equal(lp_pred_check_name(v.flags, name, sizeof(name)), "unstable");
	assert_non_null(strstr(v.reason, "fitted without its largest size (up to P = 80), the model predicts 5600 "
					 "misses (+12%)"));
	c.loo_fa = 5400;
	lp_pred_check_judge(&c, &l, &v);
	assert_int_equal(v.flags, 0);
	c.loo_fa = 5600;
	c.size = 90;
	lp_pred_check_judge(&c, &l, &v);
	assert_int_equal(v.flags, 0);
	c.size = 400;
	c.loo = 0;
	lp_pred_check_judge(&c, &l, &v);
	assert_int_equal(v.flags, 0);
	/* fold: walks confined to a few sets make 20% of the accesses (19%:
	 * no flag; on a fully-associative level, none) */
	l.assoc = 8;
	c.sa = 5000;
	c.acc = 100000;
	c.fold_acc = 20000;
	c.fold_sets = 8;
	c.fold_stride = 7680;
	lp_pred_check_judge(&c, &l, &v);
	assert_int_equal(v.flags, LP_PRED_CHECK_FOLD);
	assert_string_equal(lp_pred_check_name(v.flags, name, sizeof(name)), "fold");
	assert_non_null(strstr(v.reason, "a strided walk (7680 bytes a step at P = 400) puts its lines in 8 of its 256 "
					 "sets"));
	c.fold_acc = 19000;
	lp_pred_check_judge(&c, &l, &v);
	assert_int_equal(v.flags, 0);
	c.fold_acc = 20000;
	l.assoc = 0;
	lp_pred_check_judge(&c, &l, &v);
	assert_int_equal(v.flags, 0);
	l.assoc = 8;
	c.fold_acc = 0;
	/* outgrown: more than 10% of the misses */
	c.outgrown = 600;
	c.outgrow_at = 250;
	lp_pred_check_judge(&c, &l, &v);
	assert_int_equal(v.flags, LP_PRED_CHECK_OUTGROWN);
	assert_string_equal(lp_pred_check_name(v.flags, name, sizeof(name)), "outgrown");
	assert_non_null(strstr(v.reason, "12% of its predicted misses are reuses of reference groups"));
	assert_non_null(strstr(v.reason, "to hold them all from P = 250"));
	c.outgrown = 400;
	lp_pred_check_judge(&c, &l, &v);
	assert_int_equal(v.flags, 0);
	c.outgrown = 0;
	/* diverges: the groups' references 12% over the program's fit, at a
	 * level whose misses are not only cold ones; not within the fitted
	 * sizes, nor without the program's fit */
	c.total = 1;
	c.refs = 1120000;
	c.refs_total = 1000000;
	c.cold = 1000;
	lp_pred_check_judge(&c, &l, &v);
	assert_int_equal(v.flags, LP_PRED_CHECK_DIVERGES);
	assert_string_equal(lp_pred_check_name(v.flags, name, sizeof(name)), "diverges");
	assert_non_null(strstr(v.reason, "add up to 1.12e+06 references at P = 400, where the program's own fit "
					 "has 1e+06 (+12%)"));
	c.cold = 4600;
	lp_pred_check_judge(&c, &l, &v);
	assert_int_equal(v.flags, 0);
	c.cold = 1000;
	c.refs = 1080000;
	lp_pred_check_judge(&c, &l, &v);
	assert_int_equal(v.flags, 0);
	c.refs = 1120000;
	c.total = 0;
	lp_pred_check_judge(&c, &l, &v);
	assert_int_equal(v.flags, 0);
}

/* ---- set distances --------------------------------------------------------- */

#include "common/rng.h"

#include <locprof/exact.h>

/* Set distances the slow way: for each access, look back to the last
 * access of its line and count the distinct other lines of its set in
 * between (no stacks at all). */
static void naive_setd(const uint64_t *line, size_t n, uint64_t sets, size_t npc, struct lp_hist **h)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t x = line[i], s = x % sets, d = LP_DIST_COLD;
		size_t j = i;
		while (j > 0 && line[j - 1] != x)
			j--;
		if (j > 0) {
			d = 0;
			for (size_t k = j; k < i; k++) {
				int seen = line[k] % sets != s;
				for (size_t q = j; q < k && !seen; q++)
					seen = line[q] == line[k];
				d += !seen;
			}
		}
		assert_int_equal(lp_hist_add(h[i % npc], d, 1), 0);
	}
}

static void check_setd(const uint64_t *addr, size_t n, uint64_t sets, uint64_t lsize)
{
	struct lp_pred_sets *e;
	struct lp_hist *want[3];
	uint64_t *line = malloc(n * sizeof(*line));
	int shift = 0;

	while ((1ull << shift) < lsize)
		shift++;
	for (size_t i = 0; i < n; i++)
		line[i] = addr[i] >> shift;
	for (int p = 0; p < 3; p++)
		assert_int_equal(lp_hist_new(&want[p]), 0);
	naive_setd(line, n, sets, 3, want);
	assert_int_equal(lp_pred_sets_new(&e, sets, lsize), 0);
	for (size_t i = 0; i < n; i++) {
		struct lp_ref r = { .addr = addr[i], .size = 1, .pc = 0x100 + i % 3, .kind = LP_REF_READ };
		assert_int_equal(lp_pred_sets_access(e, &r, i % 3), 0);
	}
	for (int p = 0; p < 3; p++) {
		const struct lp_hist *got = lp_pred_sets_hist(e, (size_t)p);
		assert_non_null(got);
		assert_int_equal(lp_hist_cold(got), lp_hist_cold(want[p]));
		assert_int_equal(lp_hist_nbins(got), lp_hist_nbins(want[p]));
		for (size_t b = 0; b < lp_hist_nbins(got); b++)
			if (lp_hist_bin_count(got, b) != lp_hist_bin_count(want[p], b)) {
				fprintf(stderr, "sets %" PRIu64 " pc %d bin %zu: %" PRIu64 ", want %" PRIu64 "\n",
					sets, p, b, lp_hist_bin_count(got, b), lp_hist_bin_count(want[p], b));
				fail();
			}
		lp_hist_free(want[p]);
	}
	lp_pred_sets_free(e);
	free(line);
}

/* The engine's set distances equal the naive ones on random traces and on
 * power-of-two strides that fold onto a few sets, for several geometries
 * (including a non-power-of-two number of sets, and enough accesses per
 * set to renumber its times many times). */
static void test_setd_naive(void **state)
{
	enum { N = 3000 };
	uint64_t *a = malloc(N * sizeof(*a));
	struct lp_rng rng;
	const uint64_t sets[] = { 1, 2, 3, 64, 256 };

	(void)state;
	lp_rng_seed(&rng, 42);
	for (size_t g = 0; g < sizeof(sets) / sizeof(*sets); g++) {
		/* random over 600 lines of 64 bytes */
		for (size_t i = 0; i < N; i++)
			a[i] = 0x10000 + (lp_rng_next(&rng) % (600 * 64));
		check_setd(a, N, sets[g], 64);
		/* a few hot lines: small sets reused many times */
		for (size_t i = 0; i < N; i++)
			a[i] = 0x10000 + 64 * (lp_rng_next(&rng) % 9);
		check_setd(a, N, sets[g], 64);
		/* power-of-two strides: 4096 bytes (one set of 64), 8192, with
		 * passes of several lengths over the same lines */
		for (size_t i = 0; i < N; i++) {
			uint64_t len = 5 + (i / 500) * 7;
			a[i] = 0x100000 + (i % len) * (i < N / 2 ? 4096 : 8192);
		}
		check_setd(a, N, sets[g], 64);
		/* column walk of a matrix with a power-of-two row (128 lines)
		 * and 128-byte lines */
		for (size_t i = 0; i < N; i++)
			a[i] = 0x200000 + (i % 40) * 16384 + (i / 40) * 8;
		check_setd(a, N, sets[g], 128);
	}
	free(a);
}

/* With one set the set distances are the stack distances of the exact
 * engine (so the set-distance prediction of one set is the cut). */
static void test_setd_one_set(void **state)
{
	enum { N = 20000 };
	struct lp_ref *r = calloc(N, sizeof(*r));
	struct lp_exact *x;
	struct lp_pred_sets *e;
	struct lp_rng rng;
	uint64_t line = 64;
	struct lp_exact_config ec = { .kind = LP_DIST_STACK, .line_sizes = &line, .n_line_sizes = 1 };

	(void)state;
	lp_rng_seed(&rng, 7);
	for (size_t i = 0; i < N; i++) {
		/* unaligned 8-byte accesses, some across two lines */
		r[i].addr = 0x4000 + lp_rng_next(&rng) % (5000 * 64) + (i % 7 == 0 ? 60 : 0);
		r[i].size = 8;
		r[i].kind = LP_REF_READ;
	}
	assert_int_equal(lp_exact_new(&x, &ec), 0);
	assert_int_equal(lp_exact_feed(x, r, N), 0);
	assert_int_equal(lp_pred_sets_new(&e, 1, 64), 0);
	for (size_t i = 0; i < N; i++)
		assert_int_equal(lp_pred_sets_access(e, &r[i], 0), 0);
	const struct lp_hist *a = lp_exact_hist(x, 0), *b = lp_pred_sets_hist(e, 0);
	assert_int_equal(lp_hist_cold(a), lp_hist_cold(b));
	assert_int_equal(lp_hist_nbins(a), lp_hist_nbins(b));
	for (size_t k = 0; k < lp_hist_nbins(a); k++)
		assert_int_equal(lp_hist_bin_count(a, k), lp_hist_bin_count(b, k));
	lp_pred_sets_free(e);
	lp_exact_free(x);
	free(r);
}

/* Prediction from set-distance histograms: a run whose group has, per
 * 64-byte line, P cold accesses, 2P at set distance P/16 - 1 (in 16 sets)
 * and P at set distance 0, with stack distances P - 1 and 0: a 16-set
 * level uses them (misses: cold + those >= ways), a 32-set one the
 * binomial model, and --binomial forces the binomial. */
static char *write_setd_run(long p)
{
	char name[64], *path;
	FILE *f;

	snprintf(name, sizeof(name), "setd-%ld.xrun", p);
	path = lp_test_path(name);
	assert_non_null(f = fopen(path, "w"));
	fprintf(f, "# locprof xpred run v1\nsize %ld\ncommand ./walk%%20%ld\nreferences %ld\n", p, p, 4 * p);
	fprintf(f, "blocks 64 %" PRIu64 " %" PRIu64 "\nbias 0x0 mappings\nmodule 0 /bin/walk\n",
		LP_PRED_KEY(16, 64), LP_PRED_KEY(1, 64));
	fprintf(f, "loop 0 0 0x1000 -1 1 0 walk w.c:10-12\n");
	fprintf(f, "pc 0 0 0x1010 %ld 0 0 64 w.c:11 walk\n", 4 * p);
	fprintf(f, "hist 0 64 %ld 0:%ld %ld:%ld\n", p, p, p - 1, 2 * p);
	fprintf(f, "hist 0 %" PRIu64 " %ld 0:%ld %ld:%ld\n", LP_PRED_KEY(16, 64), p, p, p / 16 - 1, 2 * p);
	/* one set: the set distances are the stack distances */
	fprintf(f, "hist 0 %" PRIu64 " %ld 0:%ld %ld:%ld\n", LP_PRED_KEY(1, 64), p, p, p - 1, 2 * p);
	fprintf(f, "end\n");
	fclose(f);
	return path;
}

static void test_setd_predict(void **state)
{
	struct lp_pred_run *runs[5];
	struct lp_pred_model *m, *m2;
	struct lp_pred_fit_options o = { 0 };
	char *mp = lp_test_path("setd.xmodel");

	(void)state;
	for (int i = 0; i < 5; i++) {
		char *path = write_setd_run(160 + 32 * i);
		assert_int_equal(lp_pred_run_read(&runs[i], path), 0);
		free(path);
	}
	assert_int_equal(lp_pred_model_fit(&m, runs, 5, &o), 0);
	for (int i = 0; i < 5; i++)
		lp_pred_run_free(runs[i]);
	assert_int_equal(lp_pred_model_write(m, mp), 0);
	assert_int_equal(lp_pred_model_read(&m2, mp), 0);
	for (double P = 160; P <= 2560; P += 320) {
		for (uint64_t ways = 1; ways <= 64; ways *= 2) {
			struct lp_pred_level l16 = { .name = "L", .blocks = 16 * ways, .assoc = ways, .block = 64 };
			struct lp_pred_level l32 = { .name = "M", .blocks = 32 * ways, .assoc = ways, .block = 64 };
			struct lp_pred_count c, cb, c2;
			double want = P + (P / 16 - 1 >= (double)ways ? 2 * P : 0);
			assert_true(lp_pred_model_has_setd(m, &l16));
			assert_false(lp_pred_model_has_setd(m, &l32));
			/* the largest fitted run (P = 288) has set distances up to
			 * 17: levels of 32 and 64 ways were not exercised */
			if (ways > 17) {
				assert_false(lp_pred_model_uses_setd(m, &l16));
				assert_int_equal(lp_pred_model_predict(m, 0, &l16, P, &c), 0);
				assert_int_equal(c.sa_setd, 0);
				continue;
			}
			assert_true(lp_pred_model_uses_setd(m, &l16));
			assert_int_equal(lp_pred_model_predict(m, 0, &l16, P, &c), 0);
			assert_int_equal(c.sa_setd, 1);
			if (!REL(c.sa_misses, want)) {
				fprintf(stderr, "P %g ways %" PRIu64 ": %g, want %g\n", P, ways, c.sa_misses, want);
				fail();
			}
			assert_int_equal(lp_pred_model_predict(m2, 0, &l16, P, &c2), 0);
			assert_true(REL(c2.sa_misses, want));
			/* the binomial model of the same level, on the predicted
			 * stack-distance histogram */
			struct lp_pred_bin *bins;
			size_t nb;
			double cold, b16, b32;
			assert_int_equal(lp_pred_model_hist(m, 0, 64, P, &bins, &nb, &cold), 0);
			b16 = b32 = cold;
			for (size_t i = 0; i < nb; i++) {
				b16 += bins[i].count * lp_binomial_miss(bins[i].distance, 16, ways);
				b32 += bins[i].count * lp_binomial_miss(bins[i].distance, 32, ways);
			}
			free(bins);
			assert_int_equal(lp_pred_model_predict_sa(m, 0, &l16, P, LP_PRED_SA_BINOMIAL, &cb), 0);
			assert_int_equal(cb.sa_setd, 0);
			assert_true(REL(cb.sa_misses, b16));
			assert_int_equal(lp_pred_model_predict(m, 0, &l32, P, &cb), 0);
			assert_int_equal(cb.sa_setd, 0);
			assert_true(REL(cb.sa_misses, b32));
		}
	}
	/* a level of one set (given by its ways) uses the set distances of
	 * 1x64: the fully-associative cut */
	for (double P = 160; P <= 2560; P += 160)
		for (uint64_t w = 2; w <= 4096; w *= 2) {
			struct lp_pred_level one = { .name = "S", .blocks = w, .assoc = w, .block = 64 };
			struct lp_pred_count c;
			assert_int_equal(lp_pred_model_predict(m, 0, &one, P, &c), 0);
			/* (up to the largest fitted run's distance 287) */
			assert_int_equal(c.sa_setd, w <= 287);
			assert_true(REL(c.sa_misses, c.fa_misses));
			assert_true(REL(c.sa_misses, P + (P - 1 >= (double)w ? 2 * P : 0)));
		}
	/* the measured histograms of the fitted runs too */
	for (size_t r = 0; r < 5; r++) {
		struct lp_pred_level l = { .name = "L", .blocks = 16 * 8, .assoc = 8, .block = 64 };
		struct lp_pred_count c;
		double P = 160 + 32 * (double)r;
		assert_int_equal(lp_pred_model_measured(m, 0, &l, r, &c), 0);
		assert_int_equal(c.sa_setd, 1);
		assert_true(REL(c.sa_misses, P + (P / 16 - 1 >= 8 ? 2 * P : 0)));
	}
	lp_pred_model_free(m);
	lp_pred_model_free(m2);
	free(mp);
}

/* ---- placement calibration -------------------------------------------------- */

#define CAL_SETS 64
#define CAL_BLOCKS 32

/* The line trace of a synthetic group at size P: `regular`, one cyclic
 * sweep over P consecutive lines, three times (in 64 sets its set distance
 * is floor((P-1)/64): the cut); else CAL_BLOCKS blocks of P lines with
 * random line numbers, each swept three times (set distances binomial). */
static uint64_t *cal_trace(int regular, long P, size_t *n)
{
	size_t nb = regular ? 1 : CAL_BLOCKS, k = 0;
	uint64_t *t = malloc(nb * 3 * (size_t)P * sizeof(*t)), *blk = malloc((size_t)P * sizeof(*blk));
	struct lp_rng rng;

	assert_non_null(t);
	assert_non_null(blk);
	lp_rng_seed(&rng, 0x5eed + (uint64_t)P);
	for (size_t b = 0; b < nb; b++) {
		for (long i = 0; i < P; i++)
			blk[i] = regular ? 4096 + (uint64_t)i : lp_rng_next(&rng) >> 8;
		for (int s = 0; s < 3; s++)
			for (long i = 0; i < P; i++)
				t[k++] = blk[i];
	}
	free(blk);
	*n = k;
	return t;
}

static void cal_put_hist(FILE *f, uint64_t key, const struct lp_hist *h)
{
	fprintf(f, "hist 0 %" PRIu64 " %" PRIu64, key, lp_hist_cold(h));
	for (size_t b = 0; b < lp_hist_nbins(h); b++) {
		uint64_t lo, hi, c = lp_hist_bin_count(h, b);
		if (!c)
			continue;
		lp_hist_bin_range(b, &lo, &hi);
		if (lo == hi)
			fprintf(f, " %" PRIu64 ":%" PRIu64, lo, c);
		else
			fprintf(f, " %" PRIu64 "-%" PRIu64 ":%" PRIu64, lo, hi, c);
	}
	fputc('\n', f);
}

/* A run file of the trace: stack distances (one set of 64-byte lines) and
 * set distances in CAL_SETS sets and in one set, from the set-distance
 * engine (test_setd_naive checks it against a naive count). */
static char *write_cal_run(int regular, long P)
{
	uint64_t keys[3] = { 64, LP_PRED_KEY(CAL_SETS, 64), LP_PRED_KEY(1, 64) }, nsets[3] = { 1, CAL_SETS, 1 };
	size_t n;
	uint64_t *t = cal_trace(regular, P, &n);
	char name[64], *path;
	FILE *f;

	snprintf(name, sizeof(name), "cal-%d-%ld.xrun", regular, P);
	path = lp_test_path(name);
	assert_non_null(f = fopen(path, "w"));
	fprintf(f, "# locprof xpred run v1\nsize %ld\ncommand ./sweep%%20%ld\nreferences %zu\n", P, P, n);
	fprintf(f, "blocks 64 %" PRIu64 " %" PRIu64 "\nbias 0x0 mappings\nmodule 0 /bin/sweep\n", keys[1],
		keys[2]);
	fprintf(f, "loop 0 0 0x1000 -1 1 0 sweep s.c:10-12\n");
	fprintf(f, "pc 0 0 0x1010 %zu 0 0 64 s.c:11 sweep\n", n);
	for (int k = 0; k < 3; k++) {
		struct lp_pred_sets *e;
		assert_int_equal(lp_pred_sets_new(&e, nsets[k], 64), 0);
		for (size_t i = 0; i < n; i++) {
			struct lp_ref r = { .addr = t[i] * 64, .size = 1, .pc = 0x1010, .kind = LP_REF_READ };
			assert_int_equal(lp_pred_sets_access(e, &r, 0), 0);
		}
		cal_put_hist(f, keys[k], lp_pred_sets_hist(e, 0));
		lp_pred_sets_free(e);
	}
	fprintf(f, "end\n");
	fclose(f);
	free(t);
	return path;
}

/* Misses of the trace at size P in an LRU cache of CAL_SETS sets of `ways`
 * ways: the functional simulation. */
static double cal_simulate(int regular, long P, uint64_t sets, uint64_t ways)
{
	struct lp_cache_spec spec = { .size = sets * ways * 64, .assoc = ways, .line = 64, .policy = "lru" };
	struct lp_cache *c;
	size_t n;
	uint64_t *t = cal_trace(regular, P, &n), acc, miss;

	assert_int_equal(lp_cache_new(&c, &spec, 1), 0);
	lp_cache_access_lines(c, t, n, NULL, NULL);
	lp_cache_counts(c, &acc, &miss);
	lp_cache_free(c);
	free(t);
	return (double)miss;
}

static struct lp_pred_model *cal_model(int regular)
{
	struct lp_pred_run *runs[5];
	struct lp_pred_model *m;
	struct lp_pred_fit_options o = { 0 };

	/* 24..56 lines in 64 sets: 0.37 to 0.87 lines per set */
	for (int i = 0; i < 5; i++) {
		char *path = write_cal_run(regular, 24 + 8 * i);
		assert_int_equal(lp_pred_run_read(&runs[i], path), 0);
		free(path);
	}
	assert_int_equal(lp_pred_model_fit(&m, runs, 5, &o), 0);
	for (int i = 0; i < 5; i++)
		lp_pred_run_free(runs[i]);
	return m;
}

/* A group of regular placement (a cyclic sweep) gets a random weight of
 * about 0, and its calibrated prediction at 4x the largest fitted size and
 * beyond is the simulation; a group of random placement gets about 1 and
 * the binomial model; one set is the cut under every model. */
static void test_calibrated(void **state)
{
	struct lp_pred_level l4 = { .name = "L", .blocks = CAL_SETS * 4, .assoc = 4, .block = 64 };
	struct lp_pred_level one = { .name = "S", .blocks = 4, .assoc = 4, .block = 64 };
	struct lp_pred_placement pl;
	struct lp_pred_count c, cb;

	(void)state;
	for (int regular = 1; regular >= 0; regular--) {
		struct lp_pred_model *m = cal_model(regular);
		char *mp = lp_test_path("cal.xmodel");
		struct lp_pred_model *m2;
		lp_pred_model_placement(m, 0, &l4, &pl);
		assert_true(pl.have);
		assert_true(pl.det);
		assert_true(pl.sep >= 0.01);
		if (regular) {
			assert_true(pl.w[LP_PRED_PLACE_RANDOM] <= 0.02);
			assert_true(pl.w[LP_PRED_PLACE_EVEN] >= 0.98);
		} else {
			assert_true(pl.w[LP_PRED_PLACE_RANDOM] >= 0.85);
		}
		/* written and read back: the same calibration */
		assert_int_equal(lp_pred_model_write(m, mp), 0);
		assert_int_equal(lp_pred_model_read(&m2, mp), 0);
		free(mp);
		for (long P = 224; P <= 288; P += 32) {
			double sim = cal_simulate(regular, P, CAL_SETS, 4);
			struct lp_pred_count c2;
			assert_int_equal(lp_pred_model_predict_sa(m, 0, &l4, (double)P, LP_PRED_SA_CALIBRATED, &c), 0);
			assert_int_equal(lp_pred_model_predict_sa(m2, 0, &l4, (double)P, LP_PRED_SA_CALIBRATED, &c2), 0);
			assert_int_equal(lp_pred_model_predict_sa(m, 0, &l4, (double)P, LP_PRED_SA_BINOMIAL, &cb), 0);
			assert_int_equal(c.sa_cal, 1);
			assert_int_equal(cb.sa_cal, 0);
			assert_true(REL(c.sa_misses, c2.sa_misses));
			if (regular) {
				/* exact: cold only up to 256 lines; beyond, the
				 * lines of the fuller sets (at 288, 32 sets of 5) */
				if (!REL(c.sa_misses, sim)) {
					fprintf(stderr, "regular P %ld: %g, simulated %g\n", P, c.sa_misses, sim);
					fail();
				}
				if (P <= 256)
					assert_true(REL(c.sa_misses, (double)P));
				else
					assert_true(c.sa_misses < c.fa_misses);
				/* the binomial model is far off near the capacity */
				if (P < 256)
					assert_true(cb.sa_misses > 1.5 * sim);
			} else if (fabs(c.sa_misses - sim) > 0.05 * sim ||
				   fabs(c.sa_misses - cb.sa_misses) > 0.05 * cb.sa_misses) {
				fprintf(stderr, "random P %ld: %g, simulated %g, binomial %g\n", P, c.sa_misses, sim,
					cb.sa_misses);
				fail();
			}
		}
		/* the cut as the regular placement: the same up to the
		 * capacity (256 lines), every reuse a miss beyond */
		assert_int_equal(lp_pred_model_calibrate(m, (1u << LP_PRED_PLACE_RANDOM) | (1u << LP_PRED_PLACE_CUT), 0), 0);
		lp_pred_model_placement(m, 0, &l4, &pl);
		assert_true(pl.det);
		assert_true(regular ? pl.w[LP_PRED_PLACE_CUT] >= 0.98 : pl.w[LP_PRED_PLACE_RANDOM] >= 0.85);
		if (regular)
			for (long P = 224; P <= 288; P += 32) {
				assert_int_equal(lp_pred_model_predict_sa(m, 0, &l4, (double)P, LP_PRED_SA_CALIBRATED, &c), 0);
				assert_true(REL(c.sa_misses, c.fa_misses));
				assert_true(REL(c.sa_misses, P <= 256 ? (double)P : 3.0 * (double)P));
			}
		/* random alone is the binomial model */
		assert_int_equal(lp_pred_model_calibrate(m, 1u << LP_PRED_PLACE_RANDOM, 0), 0);
		lp_pred_model_placement(m, 0, &l4, &pl);
		assert_true(pl.w[LP_PRED_PLACE_RANDOM] == 1);
		assert_int_equal(lp_pred_model_predict_sa(m, 0, &l4, 224, LP_PRED_SA_CALIBRATED, &c), 0);
		assert_int_equal(lp_pred_model_predict_sa(m, 0, &l4, 224, LP_PRED_SA_BINOMIAL, &cb), 0);
		assert_true(REL(c.sa_misses, cb.sa_misses));
		/* one set: the transforms are all the cut, nothing to fit */
		lp_pred_model_placement(m, 0, &one, &pl);
		assert_true(pl.have);
		assert_false(pl.det);
		assert_true(pl.sep == 0);
		for (long P = 2; P <= 256; P *= 2) {
			assert_int_equal(lp_pred_model_predict_sa(m, 0, &one, (double)P, LP_PRED_SA_CALIBRATED, &c), 0);
			assert_int_equal(c.sa_cal, 0);
			assert_true(REL(c.sa_misses, c.fa_misses));
		}
		lp_pred_model_free(m);
		lp_pred_model_free(m2);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_expr),
		cmocka_unit_test(test_nnls),
		cmocka_unit_test(test_lsi),
		cmocka_unit_test(test_fit_exact),
		cmocka_unit_test(test_fit_constraints),
		cmocka_unit_test(test_machine),
		cmocka_unit_test(test_synthetic_groups),
		cmocka_unit_test(test_page_walk),
		cmocka_unit_test(test_predict_cut),
		cmocka_unit_test(test_binomial_cut),
		cmocka_unit_test(test_binomial_direct),
		cmocka_unit_test(test_bad_files),
		cmocka_unit_test(test_check),
		cmocka_unit_test(test_check_verdicts),
		cmocka_unit_test(test_setd_naive),
		cmocka_unit_test(test_setd_one_set),
		cmocka_unit_test(test_setd_predict),
		cmocka_unit_test(test_calibrated),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
