/* locprof diff: two profiles side by side, as cg_diff compares two
 * Cachegrind runs: the working-set graphs with their difference, the named
 * caches, and the source lines, functions and data objects whose misses
 * moved most. The library computes the comparison (lp_report_diff); this
 * file parses the options and formats it as text, CSV or JSON, and plots
 * both runs' curves in one SVG. */
#include "cli.h"

#include <locprof/profile.h>
#include <locprof/report.h>

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage[] =
	"usage: locprof diff A.lpp B.lpp [--sizes 4K..64M] [--cache SPEC ...] [--policy lru,random]\n"
	"                    [--at SIZE] [--top N] [--format text|csv|json] [-o FILE]\n"
	"                    [--svg FILE] [--cold] [--line BYTES]\n"
	"       locprof diff [options] A.rank0.lpp A.rank1.lpp... -- B.rank0.lpp...\n"
	"\n"
	"Compare two profiles (a program before and after a change, or on two\n"
	"inputs): their miss-ratio curves side by side with the difference B - A,\n"
	"their named caches, and the source lines, functions and data objects\n"
	"whose predicted misses changed most between the runs (matched by name:\n"
	"a line by its file's base name and number). Every number is computed as\n"
	"`locprof report` computes it for each profile alone. Each run may be\n"
	"several profiles (the ranks of an MPI job), the A run's before `--`\n"
	"and the B run's after it: each run is their sum, as `locprof report`\n"
	"sums several profiles.\n"
	"\n"
	"  -s, --sizes LIST     cache sizes of the curves (default 4K..64M)\n"
	"  -c, --cache SPEC     a named cache, as report takes it: SIZE:ASSOC:LINE[:lru],\n"
	"                       L1, L2, L3 or host\n"
	"  -p, --policy LIST    lru, random or both (default lru,random)\n"
	"  -a, --at SIZE        cache size of the hot spots, fully associative (default\n"
	"                       the first --cache, with its ways; else 32K)\n"
	"  -t, --top N          rows of each hot-spot table (default 10, 0 = all)\n"
	"  -F, --format FMT     text (default), csv or json\n"
	"  -o, --output FILE    write to FILE instead of standard output\n"
	"      --svg FILE       plot both runs' curves in one SVG (A solid, B dashed)\n"
	"      --cold           include cold misses (dangling samples as misses)\n"
	"      --alloc-fn NAME  name heap blocks past the program's allocation\n"
	"                       wrapper NAME (a glob; repeatable): its callers name\n"
	"                       the blocks it returns (docs/models.md, Data objects)\n"
	"  -l, --line BYTES     line size to use when the profiles have several\n"
	"  -h, --help           this help\n";

static int run(int argc, char **argv);

const struct cli_command cmd_diff = {
	.name = "diff",
	.summary = "compare two profiles: curves, caches and the hot spots that moved",
	.usage = usage,
	.run = run,
};

enum { MAX_CACHES = 32 };

struct diff_opts {
	const char *a, *b, *sizes_arg, *format, *svg, *output; /* a, b: labels */
	char **pa, **pb; /* the profiles of each run */
	size_t na, nb;
	char la[64], lb[64];
	unsigned policies;
	int cold;
	uint64_t top, at, line;
	struct lp_report_cache caches[MAX_CACHES];
	size_t ncaches;
	char hot_cache[96]; /* the cache of the hot spots, as shown */
};

static const char *const kind_names[3] = { "line", "function", "object" };

/* Returns -1 to go on, else the exit status. */
static int parse_options(int argc, char **argv, struct diff_opts *o)
{
	enum { OPT_COLD = 1000, OPT_SVG, OPT_ALLOC_FN };
	static const struct option opts[] = {
		{ "sizes", required_argument, NULL, 's' },  { "cache", required_argument, NULL, 'c' },
		{ "policy", required_argument, NULL, 'p' }, { "at", required_argument, NULL, 'a' },
		{ "top", required_argument, NULL, 't' },    { "format", required_argument, NULL, 'F' },
		{ "svg", required_argument, NULL, OPT_SVG }, { "cold", no_argument, NULL, OPT_COLD },
		{ "line", required_argument, NULL, 'l' },   { "output", required_argument, NULL, 'o' },
		{ "alloc-fn", required_argument, NULL, OPT_ALLOC_FN },
		{ "help", no_argument, NULL, 'h' },         { 0 },
	};
	int c, rc, sep = argc;

	/* A's profiles -- B's profiles: options before the "--" only */
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--")) {
			sep = i;
			break;
		}
	while ((c = cli_getopt(sep, argv, "s:c:p:a:t:F:l:o:h", opts)) != -1) {
		switch (c) {
		case 's': o->sizes_arg = optarg; break;
		case 'c':
			if (cli_report_cache_option(&cmd_diff, optarg, o->caches, MAX_CACHES, &o->ncaches))
				return CLI_USAGE;
			break;
		case 'p':
			if (cli_report_policy_option(&cmd_diff, optarg, &o->policies))
				return CLI_USAGE;
			break;
		case 'a':
			if (cli_parse_size(optarg, &o->at) < 0 || !o->at)
				return cli_usage_error(&cmd_diff, "bad --at '%s'", optarg);
			break;
		case 't':
			if (cli_parse_u64(optarg, &o->top) < 0)
				return cli_usage_error(&cmd_diff, "bad --top '%s'", optarg);
			break;
		case 'F': o->format = optarg; break;
		case 'l':
			if (cli_parse_size(optarg, &o->line) < 0)
				return cli_usage_error(&cmd_diff, "bad --line '%s'", optarg);
			break;
		case OPT_SVG: o->svg = optarg; break;
		case 'o': o->output = optarg; break;
		case OPT_COLD: o->cold = 1; break;
		case OPT_ALLOC_FN:
			if ((rc = cli_alloc_fn_option(&cmd_diff, optarg)) != 0)
				return rc;
			break;
		case 'h': return cli_print_usage(&cmd_diff);
		default: return cli_usage_error(&cmd_diff, "%s", cli_getopt_error());
		}
	}
	if (sep < argc && sep > optind) {
		o->pa = argv + optind;
		o->na = (size_t)(sep - optind);
		o->pb = argv + sep + 1;
		o->nb = (size_t)(argc - sep - 1);
	} else {
		/* two profiles, after a "--" or without one */
		int first = sep < argc ? sep + 1 : optind;
		if (argc - first != 2)
			return cli_usage_error(&cmd_diff, "diff takes two profiles, or A's profiles -- B's profiles");
		o->pa = argv + first;
		o->pb = argv + first + 1;
		o->na = o->nb = 1;
	}
	if (!o->nb)
		return cli_usage_error(&cmd_diff, "no profile of run B after '--'");
	for (size_t i = 0; i < o->nb; i++)
		if (o->pb[i][0] == '-' && access(o->pb[i], F_OK) < 0)
			return cli_usage_error(&cmd_diff, "'%s' after '--': options go before the profiles", o->pb[i]);
	if (cli_profiles_distinct(&cmd_diff, o->pa, o->na) != CLI_OK ||
	    cli_profiles_distinct(&cmd_diff, o->pb, o->nb) != CLI_OK)
		return CLI_USAGE;
	o->a = o->pa[0];
	o->b = o->pb[0];
	if (o->na > 1) {
		snprintf(o->la, sizeof(o->la), "%zu profiles", o->na);
		o->a = o->la;
	}
	if (o->nb > 1) {
		snprintf(o->lb, sizeof(o->lb), "%zu profiles", o->nb);
		o->b = o->lb;
	}
	if (strcmp(o->format, "text") && strcmp(o->format, "csv") && strcmp(o->format, "json"))
		return cli_usage_error(&cmd_diff, "unknown format '%s' (text, csv, json)", o->format);
	return -1;
}

static const char *column(const char *curve)
{
	return strcmp(curve, "statstack") ? "random" : "lru";
}

static size_t rows(const struct diff_opts *o, size_t n)
{
	return o->top && n > o->top ? o->top : n;
}

/* ---- text ------------------------------------------------------------- */

/* "+0.0123 ±0.0040*": a change, the larger distance to the ends of its
 * 95% interval, and '*' where the interval leaves out 0 */
static const char *change(double delta, double lo, double hi, const char *fmt, char *buf, size_t len)
{
	char d[24], h[24];
	double half = fmax(delta - lo, hi - delta);

	if (!isfinite(delta)) { /* a run without samples */
		snprintf(buf, len, "n/a");
		return buf;
	}
	snprintf(d, sizeof(d), fmt, delta);
	snprintf(h, sizeof(h), fmt, isfinite(half) ? half : 0);
	snprintf(buf, len, "%s ±%s%s", d, h + 1, lo > 0 || hi < 0 ? "*" : " ");
	return buf;
}

static void text_run(const char *tag, const char *path, const struct lp_report *r)
{
	const struct lp_report_info *in = lp_report_info(r);

	printf("%s: %s: %zu samples, %" PRIu64 " line accesses of %g bytes\n", tag, path, in->samples, in->accesses,
	       in->line);
}

static void text_diff(const struct diff_opts *o, const struct lp_report *ra, const struct lp_report *rb,
		      const struct lp_report_diff *d)
{
	const struct lp_report_info *in = lp_report_info(ra);
	const struct lp_diff_curve *cv;
	const struct lp_diff_cache *ca;
	size_t nc = lp_report_diff_curves(d, &cv), nca = lp_report_diff_caches(d, &ca);
	char b[32], c[64], c2[64];

	text_run("A", o->a, ra);
	text_run("B", o->b, rb);
	printf("%s\n\n%10s", o->cold ? "cold misses included" : "cold misses excluded", "size");
	for (size_t k = 0; k < nc; k++)
		printf(" %9s A %9s B %17s", column(cv[k].name), column(cv[k].name), "B - A");
	printf("\n");
	for (size_t i = 0; nc && i < cv[0].n; i++) {
		printf("%10s", cli_format_size(cv[0].points[i].size, b, sizeof(b)));
		for (size_t k = 0; k < nc; k++)
			cli_tprintf(" %11.4f %11.4f %17s", cv[k].points[i].a, cv[k].points[i].b,
			       change(cv[k].points[i].delta, cv[k].points[i].delta_lo, cv[k].points[i].delta_hi, "%+.4f",
				      c, sizeof(c)));
		printf("\n");
	}
	printf("(±: the 95%% interval of each change, from the two runs' intervals; *: the interval leaves out 0, "
	       "so the change is more than sampling noise)\n");
	if (nca) {
		printf("\n%-24s %8s %6s %9s %9s %17s %11s %11s %17s\n", "cache", "size", "ways", "lru A", "lru B",
		       "B - A", "random A", "random B", "B - A");
		for (size_t i = 0; i < nca; i++)
			cli_tprintf("%-24s %8s %6" PRIu64 " %9.4f %9.4f %17s %12.4f %12.4f %17s\n", ca[i].label,
			       cli_format_size(ca[i].size, b, sizeof(b)), ca[i].ways, ca[i].lru_a, ca[i].lru_b,
			       change(ca[i].lru_b - ca[i].lru_a, ca[i].lru_delta_lo, ca[i].lru_delta_hi, "%+.4f", c,
				      sizeof(c)),
			       ca[i].random_a, ca[i].random_b,
			       change(ca[i].random_b - ca[i].random_a, ca[i].random_delta_lo, ca[i].random_delta_hi,
				      "%+.4f", c2, sizeof(c2)));
	}
	for (int k = LP_DIFF_LINE; k <= LP_DIFF_OBJECT; k++) {
		static const char *const titles[3] = { "source lines", "functions", "data objects" };
		const struct lp_diff_spot *s;
		size_t n = rows(o, lp_report_diff_spots(d, (enum lp_diff_kind)k, &s));

		if (!n)
			continue;
		printf("\n%s whose predicted %s misses in %s moved most:\n", titles[k], in->hot_policy, o->hot_cache);
		printf("%12s %7s %12s %7s %24s  %s\n", "misses A", "share", "misses B", "share", "B - A", kind_names[k]);
		for (size_t i = 0; i < n; i++)
			printf("%12.0f %6.1f%% %12.0f %6.1f%% %24s  %s\n", s[i].misses_a, 100 * s[i].share_a,
			       s[i].misses_b, 100 * s[i].share_b,
			       change(s[i].delta, s[i].delta_lo, s[i].delta_hi, "%+.0f", c, sizeof(c)), s[i].name);
	}
}

/* ---- csv -------------------------------------------------------------- */

static void csv_diff(const struct diff_opts *o, const struct lp_report *ra, const struct lp_report_diff *d)
{
	const struct lp_report_info *in = lp_report_info(ra);
	const struct lp_diff_curve *cv;
	const struct lp_diff_cache *ca;
	size_t nc = lp_report_diff_curves(d, &cv), nca = lp_report_diff_caches(d, &ca);
	char b1[512], b2[512];

	printf("# locprof diff A %s, B %s, line %g, %s\n", cli_csv_field(o->a, b1, sizeof(b1)),
	       cli_csv_field(o->b, b2, sizeof(b2)), in->line, o->cold ? "cold misses included" : "cold misses excluded");
	printf("curve,size_bytes,miss_ratio_a,miss_ratio_b,delta,delta_lo,delta_hi\n");
	for (size_t k = 0; k < nc; k++)
		for (size_t i = 0; i < cv[k].n; i++)
			printf("%s,%" PRIu64 ",%.6f,%.6f,%.6f,%.6f,%.6f\n", cv[k].name, cv[k].points[i].size,
			       cv[k].points[i].a, cv[k].points[i].b, cv[k].points[i].delta, cv[k].points[i].delta_lo,
			       cv[k].points[i].delta_hi);
	if (nca) {
		printf("\ncache,size_bytes,ways,lru_a,lru_b,random_a,random_b,lru_delta_lo,lru_delta_hi,"
		       "random_delta_lo,random_delta_hi\n");
		for (size_t i = 0; i < nca; i++)
			printf("%s,%" PRIu64 ",%" PRIu64 ",%.6f,%.6f,%.6f,%.6f,%.6f,%.6f,%.6f,%.6f\n",
			       cli_csv_field(ca[i].label, b1, sizeof(b1)), ca[i].size, ca[i].ways, ca[i].lru_a,
			       ca[i].lru_b, ca[i].random_a, ca[i].random_b, ca[i].lru_delta_lo, ca[i].lru_delta_hi,
			       ca[i].random_delta_lo, ca[i].random_delta_hi);
	}
	printf("\n# predicted %s misses in %s, line accesses of each whole run\n", in->hot_policy, o->hot_cache);
	printf("kind,name,misses_a,misses_b,share_a,share_b,delta,delta_lo,delta_hi\n");
	for (int k = LP_DIFF_LINE; k <= LP_DIFF_OBJECT; k++) {
		const struct lp_diff_spot *s;
		size_t n = rows(o, lp_report_diff_spots(d, (enum lp_diff_kind)k, &s));

		for (size_t i = 0; i < n; i++)
			printf("%s,%s,%.1f,%.1f,%.6f,%.6f,%.1f,%.1f,%.1f\n", kind_names[k],
			       cli_csv_field(s[i].name, b1, sizeof(b1)), s[i].misses_a, s[i].misses_b, s[i].share_a,
			       s[i].share_b, s[i].delta, s[i].delta_lo, s[i].delta_hi);
	}
}

/* ---- json ------------------------------------------------------------- */

static void json_run(const char *path, const struct lp_report *r)
{
	const struct lp_report_info *in = lp_report_info(r);

	cli_jprintf("{\"profile\":");
	cli_json_string(path);
	cli_jprintf(",\"samples\":%zu,\"accesses\":%" PRIu64 "}", in->samples, in->accesses);
}

static void json_diff(const struct diff_opts *o, const struct lp_report *ra, const struct lp_report *rb,
		      const struct lp_report_diff *d)
{
	const struct lp_report_info *in = lp_report_info(ra);
	const struct lp_diff_curve *cv;
	const struct lp_diff_cache *ca;
	size_t nc = lp_report_diff_curves(d, &cv), nca = lp_report_diff_caches(d, &ca);

	cli_jprintf("{\"a\":");
	json_run(o->a, ra);
	cli_jprintf(",\"b\":");
	json_run(o->b, rb);
	cli_jprintf(",\"line\":%g,\"cold\":%s,\"curves\":[", in->line, o->cold ? "true" : "false");
	for (size_t k = 0; k < nc; k++) {
		cli_jprintf("%s{\"name\":\"%s\",\"points\":[", k ? "," : "", cv[k].name);
		for (size_t i = 0; i < cv[k].n; i++)
			cli_jprintf("%s{\"size\":%" PRIu64 ",\"a\":%.6f,\"b\":%.6f,\"delta\":%.6f,\"delta_lo\":%.6f,"
			       "\"delta_hi\":%.6f}",
			       i ? "," : "", cv[k].points[i].size, cv[k].points[i].a, cv[k].points[i].b,
			       cv[k].points[i].delta, cv[k].points[i].delta_lo, cv[k].points[i].delta_hi);
		cli_jprintf("]}");
	}
	cli_jprintf("],\"caches\":[");
	for (size_t i = 0; i < nca; i++) {
		cli_jprintf("%s{\"cache\":", i ? "," : "");
		cli_json_string(ca[i].label);
		cli_jprintf(",\"size\":%" PRIu64 ",\"ways\":%" PRIu64 ",\"lru_a\":%.6f,\"lru_b\":%.6f,\"random_a\":%.6f,"
		       "\"random_b\":%.6f,\"lru_delta_lo\":%.6f,\"lru_delta_hi\":%.6f,\"random_delta_lo\":%.6f,"
		       "\"random_delta_hi\":%.6f}",
		       ca[i].size, ca[i].ways, ca[i].lru_a, ca[i].lru_b, ca[i].random_a, ca[i].random_b,
		       ca[i].lru_delta_lo, ca[i].lru_delta_hi, ca[i].random_delta_lo, ca[i].random_delta_hi);
	}
	cli_jprintf("],\"hot\":{\"policy\":\"%s\",\"at\":%" PRIu64 ",\"cache\":", in->hot_policy, in->at);
	cli_json_string(o->hot_cache);
	for (int k = LP_DIFF_LINE; k <= LP_DIFF_OBJECT; k++) {
		static const char *const keys[3] = { "lines", "functions", "objects" };
		const struct lp_diff_spot *s;
		size_t n = rows(o, lp_report_diff_spots(d, (enum lp_diff_kind)k, &s));

		cli_jprintf(",\"%s\":[", keys[k]);
		for (size_t i = 0; i < n; i++) {
			cli_jprintf("%s{\"name\":", i ? "," : "");
			cli_json_string(s[i].name);
			cli_jprintf(",\"misses_a\":%.1f,\"misses_b\":%.1f,\"share_a\":%.6f,\"share_b\":%.6f,\"delta\":%.1f,"
			       "\"delta_lo\":%.1f,\"delta_hi\":%.1f}",
			       s[i].misses_a, s[i].misses_b, s[i].share_a, s[i].share_b, s[i].delta, s[i].delta_lo,
			       s[i].delta_hi);
		}
		cli_jprintf("]");
	}
	cli_jprintf("}}\n");
}

/* ---- the command -------------------------------------------------------- */

/* Both runs' curves in one plot: A's solid, B's dashed (as reference
 * curves), each named after its profile. */
static int write_svg(const struct diff_opts *o, const struct lp_report *ra, const struct lp_report *rb)
{
	const struct lp_report_info *in = lp_report_info(ra);
	const struct lp_curve *ca, *cb;
	size_t na = lp_report_curves(ra, &ca), nb = lp_report_curves(rb, &cb);
	struct lp_curve a[2], b[2];
	char names[4][300], title[256];

	for (size_t k = 0; k < na; k++) {
		a[k] = ca[k];
		snprintf(names[k], sizeof(names[k]), "A %s (%s)", column(ca[k].name), o->a);
		a[k].name = names[k];
	}
	for (size_t k = 0; k < nb; k++) {
		b[k] = cb[k];
		snprintf(names[2 + k], sizeof(names[2 + k]), "B %s (%s)", column(cb[k].name), o->b);
		b[k].name = names[2 + k];
	}
	snprintf(title, sizeof(title), "Working-set graphs, A and B (%g-byte lines%s)", in->line,
		 o->cold ? "" : ", cold misses excluded");
	return lp_svg_write(o->svg, title, a, na, b, nb, NULL, 0);
}

static int run(int argc, char **argv)
{
	struct diff_opts o = { .sizes_arg = "4K..64M", .format = "text", .top = 10,
			       .policies = LP_REPORT_LRU | LP_REPORT_RANDOM };
	struct cli_reports ra = { 0 }, rb = { 0 };
	struct lp_report_params pa;
	struct lp_report_diff *d = NULL;
	uint64_t *sizes = NULL;
	size_t nsizes = 0;
	char *tmp = NULL; /* -o: the temporary name standard output goes to */
	int status, sb;

	if ((status = parse_options(argc, argv, &o)) >= 0)
		return status;
	if (cli_parse_size_list(o.sizes_arg, &sizes, &nsizes) < 0)
		return cli_usage_error(&cmd_diff, "bad --sizes '%s'", o.sizes_arg);
	/* every hot spot of both runs, so that one missing from a run's top
	 * rows is not taken for one without misses */
	pa = (struct lp_report_params){ .sizes = sizes, .nsizes = nsizes, .caches = o.caches, .ncaches = o.ncaches,
					.policies = o.policies, .cold = o.cold, .fill = LP_STATCACHE_FILL_AUTO,
					.at = o.at, .top = SIZE_MAX, .resamples = LP_INTERVAL_RESAMPLES, .seed = 1,
					.jobs = cli_default_jobs() };
	if (!o.at && o.ncaches) {
		/* the hot spots of the first named cache, with its conflicts */
		pa.at = o.caches[0].size;
		pa.at_ways = o.caches[0].ways;
		snprintf(o.hot_cache, sizeof(o.hot_cache), "%s", o.caches[0].label);
	} else {
		cli_format_size(o.at ? o.at : 32768, o.hot_cache, sizeof(o.hot_cache));
	}
	status = cli_reports_load(&ra, o.pa, o.na, o.line, pa);
	if (status == CLI_ERROR || (sb = cli_reports_load(&rb, o.pb, o.nb, o.line, pa)) == CLI_ERROR) {
		status = CLI_ERROR;
		goto out;
	}
	if (sb == CLI_PARTIAL)
		status = CLI_PARTIAL;
	if (lp_report_info(ra.r)->line != lp_report_info(rb.r)->line)
		cli_warn("the profiles' line sizes differ (%g and %g bytes)", lp_report_info(ra.r)->line,
			 lp_report_info(rb.r)->line);
	if (lp_report_diff_new(&d, ra.r, rb.r) < 0) {
		cli_error("%s", lp_errmsg());
		status = CLI_ERROR;
		goto out;
	}
	if (o.output && cli_stdout_to(o.output, &tmp) < 0) {
		status = CLI_ERROR;
		goto out;
	}
	if (!strcmp(o.format, "csv"))
		csv_diff(&o, ra.r, d);
	else if (!strcmp(o.format, "json"))
		json_diff(&o, ra.r, rb.r, d);
	else
		text_diff(&o, ra.r, rb.r, d);
	if (o.svg && write_svg(&o, ra.r, rb.r) < 0) {
		cli_error("%s", lp_errmsg());
		status = CLI_ERROR;
	}
	if (tmp && cli_stdout_commit(o.output, tmp, status != CLI_ERROR) < 0)
		status = CLI_ERROR;
out:
	lp_report_diff_free(d);
	cli_reports_release(&ra);
	cli_reports_release(&rb);
	free(sizes);
	return status;
}
