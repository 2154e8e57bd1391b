/* locprof predict at: a fitted model evaluated at problem sizes, for the
 * levels of a machine, per program, function, loop and group. */
#include "predict-cli.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char usage[] =
	"usage: locprof predict at DIR|MODEL --size P[,P...] [options]\n"
	"\n"
	"Evaluate a fitted model (DIR/model.xmodel) at problem sizes P: predicted\n"
	"stack-distance histograms, and for every level of the machine the\n"
	"predicted misses of a fully-associative LRU cache of its size (the cut\n"
	"at the cache size) and of its real geometry (strided placement, see\n"
	"--strided; --binomial, --set-distances, --calibrated: other models); TLBs\n"
	"are caches of page-sized blocks.\n"
	"\n"
	"  -s, --size LIST     problem sizes to predict (required), e.g. 480 or 240,480\n"
	"  -m, --machine M     itanium2, r12000, host (default) or a machine file\n"
	"  -c, --cache SPEC    instead of --machine, an LRU cache level: SIZE:ASSOC:LINE\n"
	"                      (as simulate --cache), L1, L2, L3 or host (this\n"
	"                      machine's); repeat for a hierarchy\n"
	"  -w, --work EXPR     unit of work for misses per work, an expression of P\n"
	"                      such as 'P^3' (default: the predicted references)\n"
	"  -F, --format F      text (default), csv or json\n"
	"      --top N         functions, loops and groups shown in text, the busiest\n"
	"                      (default 20, 0 = all)\n"
	"      --hist BLOCK    also print each group's predicted histogram at this\n"
	"                      block size\n"
	"      --svg PREFIX    plot misses per work against P for each level:\n"
	"                      PREFIX-LEVEL.svg\n"
	"      --plot-max P    right end of the plots (default 10x the largest\n"
	"                      fitted size, or the largest --size)\n"
	"      --measured CSV  measured totals to compare with and plot: lines\n"
	"                      'size,level,fa_misses,sa_misses' (a field may be empty)\n"
	"      --set-distances the set-distance histograms where they were\n"
	"                      collected for the level's sets and line size\n"
	"                      (`predict collect --sets/--machine`): exact at the\n"
	"                      fitted sizes, poor beyond them (docs/prediction.md)\n"
	"      --binomial      the binomial model everywhere (the paper's section 5.2)\n"
	"      --strided       (the default) strided placement: for a group that walks memory with\n"
	"                      a stride (measured by `predict collect`), the sets its\n"
	"                      walk fills at P, computed from the stride and walk\n"
	"                      length fitted as functions of P; the binomial model\n"
	"                      for the other lines and for groups with no walk\n"
	"      --calibrated    placement-calibrated set associativity: per group, a\n"
	"                      mixture of random placement (the binomial model) and\n"
	"                      even placement (lines spread evenly over the sets)\n"
	"                      fitted to the set distances of the fitted runs\n"
	"                      (binomial where they were not collected or do not\n"
	"                      determine it); text output lists the weights\n"
	"      --placement L   the placements mixed with random: even (default),\n"
	"                      cut (the fully-associative cut), even,cut\n"
	"      --agree X       use a group's weights only when the runs' own fits\n"
	"                      of the random weight span at most X (default 0.5;\n"
	"                      1: always)\n"
	"  -h, --help          this help\n"
	"\n"
	"Machine files: 'name N', 'cache NAME SIZE ASSOC|full LINE' and\n"
	"'tlb NAME ENTRIES PAGE [ASSOC]' lines; see docs/prediction.md.\n";

static int predict_at(int argc, char **argv);

const struct cli_command cmd_predict_at = {
	.name = "predict at",
	.summary = "",
	.run = predict_at,
	.usage = usage,
};

enum { FMT_TEXT, FMT_CSV, FMT_JSON };

struct meas {
	double size;
	char level[LP_PRED_NAME_MAX];
	double fa, sa; /* NAN when absent */
};

struct ctx {
	struct lp_pred_model *m;
	struct lp_machine mc;
	struct lp_pred_expr *work;
	int fmt, top, sa_how;
	uint64_t hist_block;
	struct meas *meas;
	size_t nmeas;
	/* per group x level for the current size */
	struct lp_pred_count *cnt;
	struct lp_pred_check *chk;
	/* per level: the verdict on the rows totals() summed last */
	struct lp_pred_validity *val;
	/* the model fitted without the largest fitted size (NULL when the
	 * runs are not at hand), and its misses per level at the current size */
	struct lp_pred_model *loo;
	double *loo_fa;
};

/* "even", "cut", "even,cut", "none": the placements besides random. */
static int parse_placement(const char *s, unsigned *mask)
{
	char *copy = strdup(s), *save = NULL;
	int rc = 0;

	*mask = 1u << LP_PRED_PLACE_RANDOM;
	if (!copy)
		return -1;
	for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (!strcmp(t, "even"))
			*mask |= 1u << LP_PRED_PLACE_EVEN;
		else if (!strcmp(t, "cut"))
			*mask |= 1u << LP_PRED_PLACE_CUT;
		else if (strcmp(t, "random") && strcmp(t, "none"))
			rc = -1;
	}
	free(copy);
	return rc;
}

static int parse_sizes(const char *s, double **out, size_t *n)
{
	char *copy = strdup(s), *save = NULL;
	double *v = NULL;

	*n = 0;
	if (!copy)
		return -1;
	for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		double x;
		double *nv;
		if (cli_parse_double(t, &x) < 0 || !(x > 0) || x > 1e15 || !(nv = realloc(v, (*n + 1) * sizeof(*nv)))) {
			free(copy);
			free(v);
			return -1;
		}
		v = nv;
		v[(*n)++] = x;
	}
	free(copy);
	*out = v;
	return *n ? 0 : -1;
}

static int read_measured(const char *path, struct ctx *x)
{
	FILE *f = fopen(path, "r");
	char line[512];
	size_t lineno = 0;

	if (!f) {
		cli_error("cannot open '%s': %s", path, strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		char *fld[4], *s = line, *end;
		int nf = 0;
		struct meas mm;
		lineno++;
		line[strcspn(line, "\r\n")] = 0;
		if (!line[0] || line[0] == '#' || !strncmp(line, "size,", 5))
			continue;
		while (nf < 4) {
			fld[nf++] = s;
			if (!(s = strchr(s, ',')))
				break;
			*s++ = 0;
		}
		if (nf != 4 || s) {
			cli_error("%s:%zu: expected 'size,level,fa_misses,sa_misses'", path, lineno);
			fclose(f);
			return -1;
		}
		mm.size = strtod(fld[0], &end);
		if (*end || !(mm.size > 0) || strlen(fld[1]) >= sizeof(mm.level)) {
			cli_error("%s:%zu: bad size or level", path, lineno);
			fclose(f);
			return -1;
		}
		snprintf(mm.level, sizeof(mm.level), "%s", fld[1]);
		mm.fa = *fld[2] ? strtod(fld[2], NULL) : NAN;
		mm.sa = *fld[3] ? strtod(fld[3], NULL) : NAN;
		struct meas *nm = realloc(x->meas, (x->nmeas + 1) * sizeof(*nm));
		if (!nm) {
			fclose(f);
			return -1;
		}
		x->meas = nm;
		x->meas[x->nmeas++] = mm;
	}
	fclose(f);
	return 0;
}

static const struct meas *find_meas(const struct ctx *x, double size, const char *level)
{
	for (size_t i = 0; i < x->nmeas; i++)
		if (fabs(x->meas[i].size - size) <= 1e-9 * size && !strcmp(x->meas[i].level, level))
			return &x->meas[i];
	return NULL;
}

static double work_at(const struct ctx *x, double P)
{
	return x->work ? lp_pred_expr_eval(x->work, P) : lp_pred_model_references(x->m, P);
}

/* Predicted counts of every group at every level, into x->cnt. */
static int predict_all(struct ctx *x, double P)
{
	size_t ng = lp_pred_model_ngroups(x->m);

	for (size_t l = 0; x->loo && l < x->mc.n; l++) {
		x->loo_fa[l] = 0;
		for (size_t g = 0; g < lp_pred_model_ngroups(x->loo); g++) {
			struct lp_pred_count c;
			if (lp_pred_model_predict(x->loo, g, &x->mc.level[l], P, &c) < 0) {
				cli_error("%s", lp_errmsg());
				return -1;
			}
			x->loo_fa[l] += c.fa_misses;
		}
	}

	for (size_t g = 0; g < ng; g++)
		for (size_t l = 0; l < x->mc.n; l++)
			if (lp_pred_model_predict_sa(x->m, g, &x->mc.level[l], P, x->sa_how, &x->cnt[g * x->mc.n + l]) < 0 ||
			    lp_pred_model_check_sa(x->m, g, &x->mc.level[l], P, x->sa_how, &x->chk[g * x->mc.n + l]) < 0) {
				cli_error("%s", lp_errmsg());
				return -1;
			}
	return 0;
}

static void sum_into(struct lp_pred_count *dst, const struct lp_pred_count *src)
{
	dst->references += src->references;
	dst->accesses += src->accesses;
	dst->fa_misses += src->fa_misses;
	dst->sa_misses += src->sa_misses;
}

/* Totals over the groups accepted by `want` (NULL: all), and the verdict
 * on each level of them into x->val. */
static void totals(const struct ctx *x, int (*want)(const struct ctx *, size_t, const void *),
		   const void *arg, struct lp_pred_count *out)
{
	size_t ng = lp_pred_model_ngroups(x->m);

	memset(out, 0, x->mc.n * sizeof(*out));
	for (size_t l = 0; l < x->mc.n; l++) {
		struct lp_pred_check sum;
		memset(&sum, 0, sizeof(sum));
		for (size_t g = 0; g < ng; g++)
			if (!want || want(x, g, arg)) {
				sum_into(&out[l], &x->cnt[g * x->mc.n + l]);
				lp_pred_check_add(&sum, &x->chk[g * x->mc.n + l]);
			}
		if (!want) {
			sum.total = 1;
			sum.refs_total = lp_pred_model_references(x->m, sum.size);
		}
		if (!want && x->loo) {
			sum.loo = 1;
			sum.loo_fa = x->loo_fa[l];
			sum.loo_pmax = lp_pred_model_fit_size(x->loo, lp_pred_model_nsizes(x->loo) - 1);
		}
		lp_pred_check_judge(&sum, &x->mc.level[l], &x->val[l]);
	}
}

/* "ok" or the level's flags. */
static const char *check_name(const struct ctx *x, size_t l, char *buf, size_t len)
{
	return lp_pred_check_name(x->val[l].flags, buf, len);
}

static int want_func(const struct ctx *x, size_t g, const void *arg)
{
	struct lp_pred_group_info gi;

	lp_pred_model_group(x->m, g, &gi);
	return !strcmp(gi.function, (const char *)arg);
}

static int want_loop(const struct ctx *x, size_t g, const void *arg)
{
	return lp_pred_model_group_in_loop(x->m, g, *(const size_t *)arg);
}

static int want_group(const struct ctx *x, size_t g, const void *arg)
{
	return g == *(const size_t *)arg;
}

/* The name of the model the library uses for a level's sa_misses. */
static const char *sa_model(const struct ctx *x, size_t l)
{
	return lp_pred_sa_model_name(lp_pred_model_sa_model(x->m, &x->mc.level[l], x->sa_how));
}

static const char *geometry(const struct lp_pred_level *l, char *buf, size_t len)
{
	char sz[48], way[48];

	if (l->assoc)
		snprintf(way, sizeof(way), "%llu-way", (unsigned long long)l->assoc);
	else
		snprintf(way, sizeof(way), "full");
	if (l->kind == LP_PRED_LEVEL_TLB)
		snprintf(buf, len, "%llu entries %s %s", (unsigned long long)l->blocks, way,
			 cli_format_size(l->block, sz, sizeof(sz)));
	else
		snprintf(buf, len, "%s %s %lluB", cli_format_size(l->blocks * l->block, sz, sizeof(sz)), way,
			 (unsigned long long)l->block);
	return buf;
}

/* ---- text ----------------------------------------------------------------- */

static void text_rows(const struct ctx *x, const char *name, const char *where, const struct lp_pred_count *c,
		      double work)
{
	char ck[64];

	for (size_t l = 0; l < x->mc.n; l++) {
		if (!(c[l].accesses > 0) && !(c[l].fa_misses > 0))
			continue;
		printf("%-28.28s %-26.26s %-5s %13.6g %13.6g %13.6g %11.4g %11.4g  %s\n", name, where,
		       x->mc.level[l].name, c[l].accesses, c[l].fa_misses, c[l].sa_misses,
		       c[l].fa_misses / work, c[l].sa_misses / work, check_name(x, l, ck, sizeof(ck)));
	}
}

static void text_header(const char *what)
{
	printf("\n%-28s %-26s %-5s %13s %13s %13s %11s %11s  %s\n", what, "where", "level", "accesses",
	       "fa_misses", "sa_misses", "fa/work", "sa/work", "check");
}

struct rank {
	size_t id;
	double key;
};

static int cmp_rank(const void *a, const void *b)
{
	const struct rank *x = a, *y = b;
	return x->key > y->key ? -1 : x->key < y->key;
}

/* The placement weights of the groups with set distances, per level. */
static void print_placements(const struct ctx *x)
{
	size_t ng = lp_pred_model_ngroups(x->m);
	int head = 0;

	for (size_t l = 0; l < x->mc.n; l++) {
		const struct lp_pred_level *L = &x->mc.level[l];
		if (lp_pred_level_sets(L) <= 1 || !lp_pred_model_has_setd(x->m, L))
			continue;
		for (size_t g = 0; g < ng; g++) {
			struct lp_pred_placement pl;
			struct lp_pred_group_info gi;
			char name[64];
			lp_pred_model_placement(x->m, g, L, &pl);
			if (!pl.have)
				continue;
			if (!head++)
				printf("\nplacement weights (random even cut; [min-max] of the runs' own fits; "
				       "sep, resid: W1 lines/access)\n");
			lp_pred_model_group(x->m, g, &gi);
			snprintf(name, sizeof(name), "#%zu %s", g, gi.function);
			printf("%-5s %-12.12s %-18.18s %4.2f %4.2f %4.2f  [%4.2f-%4.2f %4.2f-%4.2f %4.2f-%4.2f] "
			       "sep %.3g resid %.3g %s\n", L->name, name, gi.where, pl.w[0], pl.w[1], pl.w[2],
			       pl.lo[0], pl.hi[0], pl.lo[1], pl.hi[1], pl.lo[2], pl.hi[2], pl.sep, pl.resid,
			       pl.det ? "used" : "binomial (undetermined)");
		}
	}
}

/* The functions of the model's groups, each once, in group order, into
 * funcs (room for every group); returns how many. */
static size_t group_functions(const struct ctx *x, const char **funcs)
{
	size_t ng = lp_pred_model_ngroups(x->m), nf = 0;

	for (size_t g = 0; g < ng; g++) {
		struct lp_pred_group_info gi;
		int seen = 0;
		lp_pred_model_group(x->m, g, &gi);
		for (size_t i = 0; i < nf; i++)
			seen |= !strcmp(funcs[i], gi.function);
		if (!seen)
			funcs[nf++] = gi.function;
	}
	return nf;
}

static int print_text(struct ctx *x, double P, struct lp_pred_count *tot)
{
	size_t ng = lp_pred_model_ngroups(x->m), nl = lp_pred_model_nloops(x->m), n;
	double work = work_at(x, P);
	struct rank *rk = calloc(ng + nl + 1, sizeof(*rk));
	const char **funcs = calloc(ng + 1, sizeof(*funcs));
	size_t nf = 0;
	char geo[160];

	if (!rk || !funcs) {
		free(rk);
		free(funcs);
		return -1;
	}
	printf("\n== P = %g: %.6g references, work %.6g (%s)\n", P, lp_pred_model_references(x->m, P), work,
	       x->work ? lp_pred_expr_text(x->work) : "references");
	printf("%-5s %-26s %13s %13s %13s %11s %11s  %-8s %-25s %s\n", "level", "geometry", "accesses", "fa_misses",
	       "sa_misses", "fa/work", "sa/work", "sa_model", "fa_range", "check");
	for (size_t l = 0; l < x->mc.n; l++) {
		char rg[64], ck[64];
		snprintf(rg, sizeof(rg), "%.6g..%.6g", x->val[l].lo, x->val[l].hi);
		printf("%-5s %-26s %13.6g %13.6g %13.6g %11.4g %11.4g  %-8s %-25s %s\n", x->mc.level[l].name,
		       geometry(&x->mc.level[l], geo, sizeof(geo)), tot[l].accesses, tot[l].fa_misses,
		       tot[l].sa_misses, tot[l].fa_misses / work, tot[l].sa_misses / work, sa_model(x, l), rg,
		       check_name(x, l, ck, sizeof(ck)));
	}
	/* what the flags mean here, in words */
	for (size_t l = 0; l < x->mc.n; l++)
		if (x->val[l].flags)
			printf("%s: not to be trusted: %s.\n", x->mc.level[l].name, x->val[l].reason);
	if (x->sa_how == LP_PRED_SA_CALIBRATED)
		print_placements(x);
	/* measured, when given */
	int any = 0;
	for (size_t l = 0; l < x->mc.n; l++)
		any |= find_meas(x, P, x->mc.level[l].name) != NULL;
	if (any) {
		printf("\n%-5s %13s %13s %8s %13s %13s %8s\n", "level", "fa_pred", "fa_meas", "fa_err%",
		       "sa_pred", "sa_meas", "sa_err%");
		for (size_t l = 0; l < x->mc.n; l++) {
			const struct meas *mm = find_meas(x, P, x->mc.level[l].name);
			if (!mm)
				continue;
			printf("%-5s %13.6g %13.6g %8.2f %13.6g %13.6g %8.2f\n", x->mc.level[l].name,
			       tot[l].fa_misses, mm->fa, 100 * (tot[l].fa_misses - mm->fa) / mm->fa,
			       tot[l].sa_misses, mm->sa, 100 * (tot[l].sa_misses - mm->sa) / mm->sa);
		}
	}
	nf = group_functions(x, funcs);
	struct lp_pred_count *c = calloc(x->mc.n, sizeof(*c));
	if (!c) {
		free(rk);
		free(funcs);
		return -1;
	}
	/* functions, busiest first (by the first level's misses), as the
	 * loops and groups below */
	for (size_t i = 0; i < nf; i++) {
		totals(x, want_func, funcs[i], c);
		rk[i] = (struct rank){ i, c[0].sa_misses + c[0].fa_misses };
	}
	qsort(rk, nf, sizeof(*rk), cmp_rank);
	n = x->top && (size_t)x->top < nf ? (size_t)x->top : nf;
	text_header("function");
	for (size_t i = 0; i < n; i++) {
		totals(x, want_func, funcs[rk[i].id], c);
		text_rows(x, funcs[rk[i].id], "", c, work);
	}
	if (n < nf)
		printf("(%zu more functions; --top 0 shows all)\n", nf - n);
	/* loops, busiest first (by the first level's misses) */
	for (size_t l = 0; l < nl; l++) {
		totals(x, want_loop, &l, c);
		rk[l] = (struct rank){ l, c[0].sa_misses + c[0].fa_misses };
	}
	qsort(rk, nl, sizeof(*rk), cmp_rank);
	n = x->top && (size_t)x->top < nl ? (size_t)x->top : nl;
	if (n)
		text_header("loop");
	for (size_t i = 0; i < n; i++) {
		struct lp_pred_loop_info li;
		char name[64];
		lp_pred_model_loop(x->m, rk[i].id, &li);
		totals(x, want_loop, &rk[i].id, c);
		snprintf(name, sizeof(name), "#%zu %s", rk[i].id, li.function);
		text_rows(x, name, li.where, c, work);
	}
	if (n < nl)
		printf("(%zu more loops; --top 0 shows all)\n", nl - n);
	/* groups */
	for (size_t g = 0; g < ng; g++) {
		totals(x, want_group, &g, c);
		rk[g] = (struct rank){ g, c[0].sa_misses + c[0].fa_misses };
	}
	qsort(rk, ng, sizeof(*rk), cmp_rank);
	n = x->top && (size_t)x->top < ng ? (size_t)x->top : ng;
	text_header("group");
	for (size_t i = 0; i < n; i++) {
		struct lp_pred_group_info gi;
		char name[64];
		lp_pred_model_group(x->m, rk[i].id, &gi);
		totals(x, want_group, &rk[i].id, c);
		snprintf(name, sizeof(name), "#%zu %s", rk[i].id, gi.function);
		text_rows(x, name, gi.where, c, work);
	}
	if (n < ng)
		printf("(%zu more groups; --top 0 shows all)\n", ng - n);
	if (x->hist_block) {
		printf("\npredicted histograms at %llu-byte blocks (distance: count)\n",
		       (unsigned long long)x->hist_block);
		for (size_t g = 0; g < ng; g++) {
			struct lp_pred_bin *bins;
			size_t nb;
			double cold;
			struct lp_pred_group_info gi;
			if (lp_pred_model_hist(x->m, g, x->hist_block, P, &bins, &nb, &cold) < 0) {
				cli_error("%s", lp_errmsg());
				free(c);
				free(rk);
				free(funcs);
				return -1;
			}
			lp_pred_model_group(x->m, g, &gi);
			printf("group %zu (%s %s): cold %.6g", g, gi.function, gi.where, cold);
			for (size_t i = 0; i < nb; i++)
				printf(", %.6g: %.6g", bins[i].distance, bins[i].count);
			printf("\n");
			free(bins);
		}
	}
	free(c);
	free(rk);
	free(funcs);
	return 0;
}

/* ---- csv and json ------------------------------------------------------------------ */

static void csv_quoted(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '"')
			putchar('"');
		putchar(*s);
	}
	putchar('"');
}

static void csv_rows(const struct ctx *x, double P, const char *scope, long id, const char *name,
		     const char *where, const struct lp_pred_count *c, double work)
{
	for (size_t l = 0; l < x->mc.n; l++) {
		printf("%g,%s,%ld,", P, scope, id);
		csv_quoted(name);
		putchar(',');
		csv_quoted(where);
		char ck[64];
		printf(",%s,%llu,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g,%s,%.10g,%.10g,%s,", x->mc.level[l].name,
		       (unsigned long long)x->mc.level[l].block, c[l].references, c[l].accesses, c[l].fa_misses,
		       c[l].sa_misses, work, c[l].fa_misses / work, c[l].sa_misses / work, sa_model(x, l),
		       x->val[l].lo, x->val[l].hi, check_name(x, l, ck, sizeof(ck)));
		csv_quoted(x->val[l].reason);
		putchar('\n');
	}
}

/* A number as JSON allows it: null where it is not finite (misses per
 * unit of work where the work model is 0 at P). */
static void json_number(const char *key, double v)
{
	cli_jprintf("\"%s\": ", key);
	if (isfinite(v))
		cli_jprintf("%.10g", v);
	else
		cli_jprintf("null");
}

static void json_levels(const struct ctx *x, const struct lp_pred_count *c, double work)
{
	cli_jprintf("[");
	for (size_t l = 0; l < x->mc.n; l++) {
		char ck[64];
		cli_jprintf("%s{\"level\": \"%s\", ", l ? ", " : "", x->mc.level[l].name);
		json_number("references", c[l].references);
		cli_jprintf(", ");
		json_number("accesses", c[l].accesses);
		cli_jprintf(", ");
		json_number("fa_misses", c[l].fa_misses);
		cli_jprintf(", ");
		json_number("sa_misses", c[l].sa_misses);
		cli_jprintf(", ");
		json_number("fa_per_work", c[l].fa_misses / work);
		cli_jprintf(", ");
		json_number("sa_per_work", c[l].sa_misses / work);
		cli_jprintf(", ");
		json_number("fa_lo", x->val[l].lo);
		cli_jprintf(", ");
		json_number("fa_hi", x->val[l].hi);
		cli_jprintf(", \"check\": \"%s\", \"reason\": ", check_name(x, l, ck, sizeof(ck)));
		cli_json_string(x->val[l].reason);
		cli_jprintf("}");
	}
	cli_jprintf("]");
}

/* ", \"levels\": [...]": the last field of a function, loop or group. */
static void json_levels_field(const struct ctx *x, const struct lp_pred_count *c, double work)
{
	cli_jprintf(", \"levels\": ");
	json_levels(x, c, work);
}

/* Where a loop or group is, its strides (a group's; NULL for a loop) and
 * its levels: "\"function\": F, \"where\": W[, \"strides\": S], \"levels\": L". */
static void json_place_levels(const struct ctx *x, const char *function, const char *where,
			      const char *strides, const struct lp_pred_count *c, double work)
{
	cli_jprintf("\"function\": ");
	cli_json_string(function);
	cli_jprintf(", \"where\": ");
	cli_json_string(where);
	if (strides) {
		cli_jprintf(", \"strides\": ");
		cli_json_string(strides);
	}
	json_levels_field(x, c, work);
}

/* One loop of the JSON output, c the scratch totals of every level. */
static void json_loop(const struct ctx *x, size_t l, struct lp_pred_count *c, double work)
{
	struct lp_pred_loop_info li;

	lp_pred_model_loop(x->m, l, &li);
	totals(x, want_loop, &l, c);
	cli_jprintf("%s\n    {\"id\": %zu, \"parent\": %d, \"depth\": %d, ", l ? "," : "", l, li.parent,
	       li.depth);
	json_place_levels(x, li.function, li.where, NULL, c, work);
	cli_jprintf("}");
}

/* One reference group, with its placement weights per level that has them
 * when the calibrated model is asked for. */
static void json_group(const struct ctx *x, size_t g, struct lp_pred_count *c, double work)
{
	struct lp_pred_group_info gi;
	int n = 0;

	lp_pred_model_group(x->m, g, &gi);
	totals(x, want_group, &g, c);
	cli_jprintf("%s\n    {\"id\": %zu, \"loop\": %d, \"pcs\": %zu, ", g ? "," : "", g, gi.loop, gi.npcs);
	json_place_levels(x, gi.function, gi.where, gi.strides, c, work);
	if (x->sa_how == LP_PRED_SA_CALIBRATED) {
		cli_jprintf(", \"placement\": [");
		for (size_t l = 0; l < x->mc.n; l++) {
			struct lp_pred_placement pl;
			lp_pred_model_placement(x->m, g, &x->mc.level[l], &pl);
			if (!pl.have || lp_pred_level_sets(&x->mc.level[l]) <= 1)
				continue;
			const char *key[] = { "random", "even", "cut", "random_min", "random_max", "sep", "resid" };
			double v[] = { pl.w[0], pl.w[1], pl.w[2], pl.lo[0], pl.hi[0], pl.sep, pl.resid };
			cli_jprintf("%s{\"level\": \"%s\"", n++ ? ", " : "", x->mc.level[l].name);
			for (size_t k = 0; k < sizeof(v) / sizeof(v[0]); k++) {
				cli_jprintf(", ");
				json_number(key[k], v[k]);
			}
			cli_jprintf(", \"used\": %s}", pl.det ? "true" : "false");
		}
		cli_jprintf("]");
	}
	cli_jprintf("}");
}

static int print_struct(struct ctx *x, double P, const struct lp_pred_count *tot, int first)
{
	size_t ng = lp_pred_model_ngroups(x->m), nl = lp_pred_model_nloops(x->m), nf = 0;
	double work = work_at(x, P);
	struct lp_pred_count *c = calloc(x->mc.n, sizeof(*c));
	const char **funcs = calloc(ng + 1, sizeof(*funcs));

	if (!c || !funcs) {
		free(c);
		free(funcs);
		return -1;
	}
	nf = group_functions(x, funcs);
	if (x->fmt == FMT_CSV) {
		csv_rows(x, P, "program", -1, "", "", tot, work);
		for (size_t i = 0; i < nf; i++) {
			totals(x, want_func, funcs[i], c);
			csv_rows(x, P, "function", (long)i, funcs[i], "", c, work);
		}
		for (size_t l = 0; l < nl; l++) {
			struct lp_pred_loop_info li;
			lp_pred_model_loop(x->m, l, &li);
			totals(x, want_loop, &l, c);
			csv_rows(x, P, "loop", (long)l, li.function, li.where, c, work);
		}
		for (size_t g = 0; g < ng; g++) {
			struct lp_pred_group_info gi;
			lp_pred_model_group(x->m, g, &gi);
			totals(x, want_group, &g, c);
			csv_rows(x, P, "group", (long)g, gi.function, gi.where, c, work);
		}
	} else {
		printf("%s\n  {", first ? "" : ",");
		json_number("size", P);
		printf(", ");
		json_number("work", work);
		printf(", ");
		json_number("references", lp_pred_model_references(x->m, P));
		printf(", \"program\": ");
		json_levels(x, tot, work);
		printf(",\n   \"functions\": [");
		for (size_t i = 0; i < nf; i++) {
			totals(x, want_func, funcs[i], c);
			printf("%s\n    {\"name\": ", i ? "," : "");
			cli_json_string(funcs[i]);
			json_levels_field(x, c, work);
			printf("}");
		}
		printf("],\n   \"loops\": [");
		for (size_t l = 0; l < nl; l++)
			json_loop(x, l, c, work);
		printf("],\n   \"groups\": [");
		for (size_t g = 0; g < ng; g++)
			json_group(x, g, c, work);
		printf("]}");
	}
	free(c);
	free(funcs);
	return 0;
}

/* ---- plots ------------------------------------------------------------------- */

static int plot(struct ctx *x, const char *prefix, double pmax)
{
	size_t ns = lp_pred_model_nsizes(x->m), ng = lp_pred_model_ngroups(x->m), npts = 80;
	double lo = lp_pred_model_fit_size(x->m, 0) / 1.2, *px = malloc(npts * sizeof(*px));
	double *fa = calloc(npts * x->mc.n, sizeof(*fa)), *sa = calloc(npts * x->mc.n, sizeof(*sa));
	double *mx = malloc((ns + x->nmeas + 1) * sizeof(*mx)), *my = malloc((ns + x->nmeas + 1) * sizeof(*my));
	double *qx = malloc((x->nmeas + 1) * sizeof(*qx)), *qf = malloc((x->nmeas + 1) * sizeof(*qf));
	double *qs = malloc((x->nmeas + 1) * sizeof(*qs));
	int rc = 0;

	if (!px || !fa || !sa || !mx || !my || !qx || !qf || !qs) {
		rc = -1;
		goto out;
	}
	for (size_t i = 0; i < npts; i++) {
		double P = lo * pow(pmax / lo, (double)i / (double)(npts - 1));
		double w = work_at(x, P);
		px[i] = P;
		if (predict_all(x, P) < 0) {
			rc = -1;
			goto out;
		}
		for (size_t l = 0; l < x->mc.n; l++)
			for (size_t g = 0; g < ng; g++) {
				fa[l * npts + i] += x->cnt[g * x->mc.n + l].fa_misses / w;
				sa[l * npts + i] += x->cnt[g * x->mc.n + l].sa_misses / w;
			}
	}
	for (size_t l = 0; l < x->mc.n; l++) {
		const struct lp_pred_level *L = &x->mc.level[l];
		struct lp_pred_series s[5];
		size_t k = 0, nq = 0;
		char path[4096], title[256], ylab[128];
		/* the exact fully-associative misses of the fitted runs */
		for (size_t r = 0; r < ns; r++) {
			double v = 0, P = lp_pred_model_fit_size(x->m, r);
			for (size_t g = 0; g < ng; g++) {
				struct lp_pred_count cm;
				if (lp_pred_model_measured(x->m, g, L, r, &cm) == 0)
					v += cm.fa_misses;
			}
			mx[r] = P;
			my[r] = v / (x->work ? lp_pred_expr_eval(x->work, P) : lp_pred_model_measured_references(x->m, r));
		}
		for (size_t i = 0; i < x->nmeas; i++)
			if (!strcmp(x->meas[i].level, L->name)) {
				double w = work_at(x, x->meas[i].size);
				qx[nq] = x->meas[i].size;
				qf[nq] = x->meas[i].fa / w;
				qs[nq++] = x->meas[i].sa / w;
			}
		s[k++] = (struct lp_pred_series){ "predicted, fully assoc.", px, fa + l * npts, npts, 0, 0, 0 };
		if (L->assoc) {
			enum lp_pred_sa_model sm = lp_pred_model_sa_model(x->m, L, x->sa_how);
			const char *name = sm == LP_PRED_SA_MODEL_SETD	     ? "predicted, set distances"
					   : sm == LP_PRED_SA_MODEL_CALIBRATED ? "predicted, calibrated"
					   : sm == LP_PRED_SA_MODEL_STRIDED    ? "predicted, strided"
									       : "predicted, binomial";
			s[k++] = (struct lp_pred_series){ name, px, sa + l * npts, npts, 0, 1, 1 };
		}
		s[k++] = (struct lp_pred_series){ "fitted runs (exact, FA)", mx, my, ns, 1, 0, 0 };
		if (nq) {
			s[k++] = (struct lp_pred_series){ "simulated, fully assoc.", qx, qf, nq, 1, 0, 2 };
			if (L->assoc)
				s[k++] = (struct lp_pred_series){ "simulated, set assoc.", qx, qs, nq, 1, 0, 3 };
		}
		snprintf(path, sizeof(path), "%s-%s.svg", prefix, L->name);
		snprintf(title, sizeof(title), "%s misses on %s (%s)", L->name, x->mc.name, lp_pred_model_command(x->m));
		snprintf(ylab, sizeof(ylab), "misses per %s", x->work ? lp_pred_expr_text(x->work) : "reference");
		if (lp_pred_svg_write(path, title, ylab, s, k, lp_pred_model_fit_size(x->m, 0),
				  lp_pred_model_fit_size(x->m, ns - 1)) < 0) {
			cli_error("%s", lp_errmsg());
			rc = -1;
			goto out;
		}
	}
out:
	free(px);
	free(fa);
	free(sa);
	free(mx);
	free(my);
	free(qx);
	free(qf);
	free(qs);
	return rc;
}

struct at_opts {
	const char *machine, *svg, *measured;
	struct lp_named_cache cache[LP_MACHINE_MAX_LEVELS];
	size_t ncaches;
	int machine_given;
	unsigned place;
	double agree, pmax;
	double *sizes;
	size_t nsizes;
};

/* The options into x and o; returns -1 to go on, or the exit status. */
static int at_options(int argc, char **argv, struct ctx *x, struct at_opts *o)
{
	static const struct option opts[] = {
		{ "size", required_argument, NULL, 's' },
		{ "machine", required_argument, NULL, 'm' },
		{ "cache", required_argument, NULL, 'c' },
		{ "work", required_argument, NULL, 'w' },
		{ "format", required_argument, NULL, 'F' },
		{ "top", required_argument, NULL, 'T' },
		{ "hist", required_argument, NULL, 'H' },
		{ "svg", required_argument, NULL, 'S' },
		{ "plot-max", required_argument, NULL, 'X' },
		{ "measured", required_argument, NULL, 'M' },
		{ "binomial", no_argument, NULL, 'B' },
		{ "set-distances", no_argument, NULL, 'D' },
		{ "calibrated", no_argument, NULL, 'C' },
		{ "strided", no_argument, NULL, 'R' },
		{ "placement", required_argument, NULL, 'P' },
		{ "agree", required_argument, NULL, 'A' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int c;
	uint64_t u;

	while ((c = cli_getopt(argc, argv, "s:m:c:w:F:h", opts)) != -1) {
		switch (c) {
		case 's':
			free(o->sizes);
			o->sizes = NULL;
			if (parse_sizes(optarg, &o->sizes, &o->nsizes) < 0)
				return cli_usage_error(&cmd_predict_at, "bad --size '%s' (positive numbers)", optarg);
			break;
		case 'm':
			o->machine = optarg;
			o->machine_given = 1;
			break;
		case 'c': {
			size_t k;
			int rc = cli_cache_arg(&cmd_predict_at, optarg, o->cache + o->ncaches,
					       LP_MACHINE_MAX_LEVELS - o->ncaches, &k);
			if (rc)
				return rc;
			o->ncaches += k;
			break;
		}
		case 'w':
			lp_pred_expr_free(x->work);
			x->work = NULL;
			if (lp_pred_expr_parse(&x->work, optarg) < 0)
				return cli_usage_error(&cmd_predict_at, "bad --work: %s", lp_errmsg());
			break;
		case 'F':
			if (!strcmp(optarg, "text"))
				x->fmt = FMT_TEXT;
			else if (!strcmp(optarg, "csv"))
				x->fmt = FMT_CSV;
			else if (!strcmp(optarg, "json"))
				x->fmt = FMT_JSON;
			else
				return cli_usage_error(&cmd_predict_at, "unknown format '%s' (text, csv, json)", optarg);
			break;
		case 'T':
			if (cli_parse_u64(optarg, &u) < 0 || u > 1000000)
				goto usage_bad;
			x->top = (int)u;
			break;
		case 'H':
			if (cli_parse_size(optarg, &x->hist_block) < 0 || !x->hist_block)
				goto usage_bad;
			break;
		case 'S': o->svg = optarg; break;
		case 'X':
			if (cli_parse_double(optarg, &o->pmax) < 0 || !(o->pmax > 0))
				goto usage_bad;
			break;
		case 'M': o->measured = optarg; break;
		case 'B': x->sa_how = LP_PRED_SA_BINOMIAL; break;
		case 'D': x->sa_how = LP_PRED_SA_AUTO; break;
		case 'C': x->sa_how = LP_PRED_SA_CALIBRATED; break;
		case 'R': x->sa_how = LP_PRED_SA_STRIDED; break;
		case 'P':
			if (parse_placement(optarg, &o->place) < 0)
				return cli_usage_error(&cmd_predict_at, "bad --placement '%s' (even, cut or even,cut)", optarg);
			x->sa_how = LP_PRED_SA_CALIBRATED;
			break;
		case 'A':
			if (cli_parse_double(optarg, &o->agree) < 0 || !(o->agree > 0))
				return cli_usage_error(&cmd_predict_at, "bad --agree '%s' (a positive number)", optarg);
			x->sa_how = LP_PRED_SA_CALIBRATED;
			break;
		case 'h': return cli_print_usage(&cmd_predict_at);
		default: return cli_usage_error(&cmd_predict_at, "%s", cli_getopt_error());
		}
	}
	if (optind + 1 != argc || !o->nsizes)
		return cli_usage_error(&cmd_predict_at, "predict needs a model (DIR or file) and --size");
	if (o->ncaches && o->machine_given)
		return cli_usage_error(&cmd_predict_at, "--cache and --machine: give one or the other");
	for (size_t i = 0; i < o->ncaches; i++)
		if (strcmp(o->cache[i].spec.policy, "lru"))
			return cli_usage_error(&cmd_predict_at, "cache '%s': predictions are of LRU caches, not %s",
					       o->cache[i].name, o->cache[i].spec.policy);
	return -1;
usage_bad:
	return cli_usage_error(&cmd_predict_at, "bad value '%s' for '%s'", optarg, argv[optind - 1]);
}

/* Nonzero if the model has histograms of block size `block`. */
static int have_block(const struct lp_pred_model *m, uint64_t block)
{
	for (size_t b = 0; b < lp_pred_model_nblocks(m); b++)
		if (lp_pred_model_block(m, b) == block)
			return 1;
	return 0;
}

/* The block sizes the machine's levels and --hist need were collected. */
static int check_blocks(const struct ctx *x)
{
	for (size_t l = 0; l < x->mc.n; l++)
		if (!have_block(x->m, x->mc.level[l].block)) {
			cli_error("level %s of %s has %llu-byte blocks, which were not collected "
				  "(locprof predict collect --line/--page)", x->mc.level[l].name, x->mc.name,
				  (unsigned long long)x->mc.level[l].block);
			return -1;
		}
	if (x->hist_block && !have_block(x->m, x->hist_block)) {
		cli_error("no histograms of %llu-byte blocks in the model", (unsigned long long)x->hist_block);
		return -1;
	}
	return 0;
}

/* What comes before the predictions: the model and machine (text), the
 * column names (CSV), or the opening of the object (JSON). */
static void print_head(const struct ctx *x, const char *mpath)
{
	size_t ns = lp_pred_model_nsizes(x->m);
	char f[512];
	if (x->fmt == FMT_TEXT) {
		/* the program's command line, cut: a database's SQL can run to
		 * kilobytes (the model file keeps it whole) */
		const char *cmdline = lp_pred_model_command(x->m);
		printf("# locprof predict at: %.160s%s\n# fitted at P = %g .. %g (%zu sizes); machine %s\n", cmdline,
		       strlen(cmdline) > 160 ? " ..." : "", lp_pred_model_fit_size(x->m, 0),
		       lp_pred_model_fit_size(x->m, ns - 1), ns, x->mc.name);
		printf("# references: %s\n", lp_pred_model_refs_formula(x->m, SIZE_MAX, f, sizeof(f)));
	} else if (x->fmt == FMT_CSV) {
		printf("size,scope,id,name,where,level,block,references,accesses,fa_misses,sa_misses,"
		       "work,fa_per_work,sa_per_work,sa_model,fa_lo,fa_hi,check,reason\n");
	} else {
		printf("{\"model\": ");
		cli_json_string(mpath);
		printf(", \"command\": ");
		cli_json_string(lp_pred_model_command(x->m));
		printf(", \"machine\": ");
		cli_json_string(x->mc.name);
		printf(", \"fitted_sizes\": [");
		for (size_t r = 0; r < ns; r++)
			printf("%s%.10g", r ? ", " : "", lp_pred_model_fit_size(x->m, r));
		printf("], \"work\": ");
		cli_json_string(x->work ? lp_pred_expr_text(x->work) : "references");
		printf(", \"levels\": [");
		for (size_t l = 0; l < x->mc.n; l++)
			printf("%s{\"name\": \"%s\", \"kind\": \"%s\", \"blocks\": %llu, \"assoc\": %llu, "
			       "\"block\": %llu, \"sa_model\": \"%s\"}", l ? ", " : "", x->mc.level[l].name,
			       x->mc.level[l].kind == LP_PRED_LEVEL_TLB ? "tlb" : "cache",
			       (unsigned long long)x->mc.level[l].blocks, (unsigned long long)x->mc.level[l].assoc,
			       (unsigned long long)x->mc.level[l].block, sa_model(x, l));
		printf("],\n \"predictions\": [");
	}
}

/* The --cache levels as a machine: each named by its SPEC, or "L2" for a
 * level of this machine's ("L2 1M"). */
static int caches_machine(struct lp_machine *mc, const struct at_opts *o)
{
	memset(mc, 0, sizeof(*mc));
	snprintf(mc->name, sizeof(mc->name), "--cache");
	for (size_t i = 0; i < o->ncaches; i++) {
		char name[LP_PRED_NAME_MAX];
		const struct lp_cache_spec *sp = &o->cache[i].spec;
		snprintf(name, sizeof(name), "%.*s", (int)strcspn(o->cache[i].name, " "), o->cache[i].name);
		if (lp_machine_add_cache(mc, name, sp->size, sp->assoc, sp->line) < 0)
			return -1;
	}
	return 0;
}

static int cmp_run_size(const void *a, const void *b)
{
	double x = lp_pred_run_size(*(struct lp_pred_run *const *)a), y = lp_pred_run_size(*(struct lp_pred_run *const *)b);

	return (x > y) - (x < y);
}

/* The model of the runs in dir without the largest size (default fit
 * options), for the check 'unstable'; x->loo stays NULL where dir is not a
 * directory of 4 or more runs, or that fit fails (no check then). */
static void fit_loo(struct ctx *x, const char *dir)
{
	struct stat st;
	char **names = NULL;
	size_t nn = 0, nr = 0;
	struct lp_pred_run **runs = NULL;

	if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode) || predict_list_runs(dir, &names, &nn) >= 0)
		return;
	if (nn >= 4 && (runs = calloc(nn, sizeof(*runs)))) {
		for (nr = 0; nr < nn && lp_pred_run_read(&runs[nr], names[nr]) == 0; nr++)
			;
		if (nr == nn) {
			qsort(runs, nr, sizeof(*runs), cmp_run_size);
			if (lp_pred_model_fit(&x->loo, runs, nr - 1, NULL) < 0 ||
			    !(x->loo_fa = calloc(x->mc.n + 1, sizeof(*x->loo_fa)))) {
				lp_pred_model_free(x->loo);
				x->loo = NULL;
			}
		}
	}
	for (size_t i = 0; i < nr; i++)
		lp_pred_run_free(runs[i]);
	for (size_t i = 0; i < nn; i++)
		free(names[i]);
	free(runs);
	free(names);
}

static int predict_at(int argc, char **argv)
{
	/* Strided placement by default: on the bench it fixes the two levels
	 * where the binomial model's random placement is far off and changes
	 * no other level by more than a percent (docs/prediction.md, "Strided
	 * placement"); for groups with no measured walk it is the binomial
	 * model. The set-distance fits are exact at the fitted sizes but
	 * extrapolate worse ("Set distances against the binomial model"). */
	struct ctx x = { .fmt = FMT_TEXT, .top = 20, .sa_how = LP_PRED_SA_STRIDED };
	struct at_opts o = { .machine = "host", .place = LP_PRED_PLACE_DEFAULT };
	char *mpath = NULL;
	int status;

	if ((status = at_options(argc, argv, &x, &o)) >= 0)
		goto done;
	status = CLI_ERROR;
	/* the model first: a missing or damaged one is the input's fault
	 * (status 1) whatever the machine, even one whose caches cannot be
	 * read (a container without sysfs cache entries) */
	if (!(mpath = lp_pred_model_path(argv[optind])))
		goto nomem;
	if (lp_pred_model_read(&x.m, mpath) < 0) {
		cli_error("%s", lp_errmsg());
		goto done;
	}
	if (o.ncaches ? caches_machine(&x.mc, &o) < 0 : lp_machine_get(&x.mc, o.machine) < 0) {
		cli_error("%s", lp_errmsg());
		status = CLI_USAGE;
		goto done;
	}
	if (check_blocks(&x) < 0)
		goto done;
	fit_loo(&x, argv[optind]);
	if ((o.place != LP_PRED_PLACE_DEFAULT || o.agree > 0) && lp_pred_model_calibrate(x.m, o.place, o.agree) < 0) {
		cli_error("%s", lp_errmsg());
		goto done;
	}
	if (o.measured && read_measured(o.measured, &x) < 0)
		goto done;
	if (!(x.cnt = calloc(lp_pred_model_ngroups(x.m) * x.mc.n + 1, sizeof(*x.cnt))) ||
	    !(x.chk = calloc(lp_pred_model_ngroups(x.m) * x.mc.n + 1, sizeof(*x.chk))) ||
	    !(x.val = calloc(x.mc.n + 1, sizeof(*x.val))))
		goto nomem;
	print_head(&x, mpath);
	for (size_t i = 0; i < o.nsizes; i++) {
		struct lp_pred_count *tot = calloc(x.mc.n, sizeof(*tot));
		if (!tot)
			goto nomem;
		if (predict_all(&x, o.sizes[i]) < 0) {
			free(tot);
			status = CLI_ERROR;
			goto done;
		}
		totals(&x, NULL, NULL, tot);
		int rc = x.fmt == FMT_TEXT ? print_text(&x, o.sizes[i], tot) : print_struct(&x, o.sizes[i], tot, i == 0);
		free(tot);
		if (rc < 0)
			goto nomem;
	}
	if (x.fmt == FMT_JSON)
		printf("]}\n");
	if (o.svg) {
		double fitmax = lp_pred_model_fit_size(x.m, lp_pred_model_nsizes(x.m) - 1);
		if (!o.pmax) {
			o.pmax = 10 * fitmax;
			for (size_t i = 0; i < o.nsizes; i++)
				o.pmax = fmax(o.pmax, o.sizes[i]);
			for (size_t i = 0; i < x.nmeas; i++)
				o.pmax = fmax(o.pmax, x.meas[i].size);
		}
		if (plot(&x, o.svg, o.pmax) < 0)
			goto done;
	}
	status = CLI_OK;
	goto done;
nomem:
	cli_error("out of memory");
	status = CLI_ERROR;
done:
	lp_pred_model_free(x.m);
	lp_pred_model_free(x.loo);
	free(x.loo_fa);
	lp_pred_expr_free(x.work);
	free(x.cnt);
	free(x.chk);
	free(x.val);
	free(x.meas);
	free(o.sizes);
	free(mpath);
	return status;
}
