/* locprof report: working-set graphs, named caches, windows and hot pcs
 * from a profile. The library computes every table (lp_report, in
 * src/lib/report); this file parses the options and formats the tables as
 * text, CSV or JSON. */
#include "cli.h"

#include <locprof/profile.h>
#include <locprof/report.h>
#include <locprof/symbol.h>

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
	"usage: locprof report PROFILE.lpp [--sizes 4K..64M] [--cache SPEC ...]\n"
	"                      [--policy lru,random] [--format text|csv|json] [-o FILE]\n"
	"                      [--svg FILE] [--reference CSV] [--window [N]] [--top N]\n"
	"                      [--at SIZE] [--cold] [--fill|--no-fill] [--resamples N]\n"
	"\n"
	"Predict miss ratios from a profile: the working-set graph under LRU\n"
	"(StatStack) and random replacement (StatCache), fully associative; the\n"
	"miss ratio of named caches (set-associative LRU by the placement model,\n"
	"which reads where each reuse's lines fall in the sets from the samples'\n"
	"addresses; random by StatCache, fully associative); the ratio per time\n"
	"window; and the pcs whose accesses miss most, and the data objects\n"
	"(heap blocks by allocation call site, globals by symbol) they miss on.\n"
	"Cold misses are excluded unless --cold is given. Every predicted ratio\n"
	"comes with its interval (what another sampling seed could give: a\n"
	"bootstrap over the samples, docs/models.md), and a cache size whose\n"
	"resamples fall on both sides of a cliff of the curve is named.\n"
	"\n"
	"  -s, --sizes LIST     cache sizes of the graph (default 4K..64M)\n"
	"  -c, --cache SPEC     a cache SIZE:ASSOC:LINE[:lru] (e.g. 32K:8:64; ASSOC a\n"
	"                       number or 'full', 0 also meaning full); L1, L2 or L3\n"
	"                       for that level of this machine, host for all of them\n"
	"  -p, --policy LIST    lru, random or both (default lru,random)\n"
	"  -F, --format FMT     text (default), csv (the curve CSV of docs/formats.md,\n"
	"                       then the other tables) or json\n"
	"  -o, --output FILE    write the report to FILE instead of standard output\n"
	"      --svg FILE       also plot the graph as SVG\n"
	"  -r, --reference CSV  overlay reference curves (e.g. from locprof simulate)\n"
	"  -w, --window[=N]     print the miss ratio per time window (window of N line\n"
	"                       accesses, also the models' windows; default the\n"
	"                       profile's)\n"
	"  -t, --top N          top pcs and data objects by predicted misses\n"
	"                       (default 10, 0 = none)\n"
	"  -a, --at SIZE        cache size for the windows, the top pcs and objects\n"
	"                       (default the first --cache, else 32K)\n"
	"  -l, --line BYTES     line size to use when the profile has several\n"
	"      --cold           include cold misses (dangling samples as misses)\n"
	"      --fill           StatCache: no evictions until the cache is full, and\n"
	"                       cold misses evict, at every size (default: at the\n"
	"                       sizes the run's footprint fits in; docs/models.md)\n"
	"      --no-fill        StatCache: the paper's equation at every size\n"
	"      --resamples N    resamples behind the intervals (default 8; 0: no\n"
	"                       intervals)\n"
	"  -h, --help           this help\n";

static int run(int argc, char **argv);

const struct cli_command cmd_report = {
	.name = "report",
	.summary = "working-set graphs, cache predictions and hot pcs from a profile",
	.usage = usage,
	.run = run,
};

enum { MAX_CACHES = 32 };

struct report_opts {
	const char *profile, *sizes_arg, *format, *svg, *refpath, *output;
	unsigned policies;
	int show_windows, cold, fill;
	unsigned resamples;
	uint64_t window, top, at, line;
	struct lp_report_cache caches[MAX_CACHES];
	size_t ncaches;
};

/* --cache ARG: a SPEC, L1, L2, L3 or host (lp_cache_arg_parse). ASSOC 0
 * is taken for full (what report accepted first). The models are LRU's
 * and random replacement's (--policy), so a SPEC names no other policy. */
static int add_caches(struct report_opts *o, const char *arg)
{
	struct lp_named_cache nc[MAX_CACHES];
	char buf[128];
	const char *colon = strchr(arg, ':'), *label = arg; /* a SPEC as written */
	size_t n;
	int rc;

	if (colon && colon[1] == '0' && (colon[2] == ':' || !colon[2]) && strlen(arg) + 4 < sizeof(buf)) {
		snprintf(buf, sizeof(buf), "%.*sfull%s", (int)(colon + 1 - arg), arg, colon + 2);
		arg = buf;
	}
	if ((rc = cli_cache_arg(&cmd_report, arg, nc, MAX_CACHES - o->ncaches, &n)) != 0)
		return rc;
	for (size_t i = 0; i < n; i++) {
		struct lp_report_cache *c = &o->caches[o->ncaches++];
		if (strcmp(nc[i].spec.policy, "lru"))
			return cli_usage_error(&cmd_report, "bad cache '%s': report predicts LRU and random "
					       "replacement (--policy), not %s", label, nc[i].spec.policy);
		memset(c, 0, sizeof(*c));
		snprintf(c->label, sizeof(c->label), "%s", colon ? label : nc[i].name);
		c->size = nc[i].spec.size;
		c->ways = nc[i].spec.assoc;
		c->line = nc[i].spec.line;
	}
	return 0;
}

/* Returns -1 to go on, else the exit status. */
static int parse_options(int argc, char **argv, struct report_opts *o)
{
	enum { OPT_COLD = 1000, OPT_FILL, OPT_NO_FILL, OPT_SVG, OPT_RESAMPLES };
	static const struct option opts[] = {
		{ "sizes", required_argument, NULL, 's' },  { "cache", required_argument, NULL, 'c' },
		{ "policy", required_argument, NULL, 'p' }, { "format", required_argument, NULL, 'F' },
		{ "output", required_argument, NULL, 'o' }, { "reference", required_argument, NULL, 'r' },
		{ "svg", required_argument, NULL, OPT_SVG },
		{ "window", optional_argument, NULL, 'w' }, { "top", required_argument, NULL, 't' },
		{ "at", required_argument, NULL, 'a' },     { "line", required_argument, NULL, 'l' },
		{ "cold", no_argument, NULL, OPT_COLD },    { "help", no_argument, NULL, 'h' },
		{ "fill", no_argument, NULL, OPT_FILL },
		{ "no-fill", no_argument, NULL, OPT_NO_FILL },
		{ "resamples", required_argument, NULL, OPT_RESAMPLES },
		{ 0 },
	};
	int c, rc;

	while ((c = cli_getopt(argc, argv, "s:c:p:F:o:r:w::t:a:l:h", opts)) != -1) {
		switch (c) {
		case 's': o->sizes_arg = optarg; break;
		case 'c':
			if ((rc = add_caches(o, optarg)) != 0)
				return rc;
			break;
		case 'p':
			o->policies = (strstr(optarg, "lru") ? LP_REPORT_LRU : 0) |
				      (strstr(optarg, "random") ? LP_REPORT_RANDOM : 0);
			if (!o->policies)
				return cli_usage_error(&cmd_report, "bad --policy '%s' (lru, random)", optarg);
			break;
		case 'F': o->format = optarg; break;
		case 'o': o->output = optarg; break;
		case OPT_SVG: o->svg = optarg; break;
		case 'r': o->refpath = optarg; break;
		case 'w':
			o->show_windows = 1;
			if (optarg && (cli_parse_u64(optarg, &o->window) < 0 || !o->window))
				return cli_usage_error(&cmd_report, "bad --window '%s'", optarg);
			break;
		case 't':
			if (cli_parse_u64(optarg, &o->top) < 0)
				return cli_usage_error(&cmd_report, "bad --top '%s'", optarg);
			break;
		case 'a':
			if (cli_parse_size(optarg, &o->at) < 0 || !o->at)
				return cli_usage_error(&cmd_report, "bad --at '%s'", optarg);
			break;
		case 'l':
			if (cli_parse_size(optarg, &o->line) < 0)
				return cli_usage_error(&cmd_report, "bad --line '%s'", optarg);
			break;
		case OPT_COLD: o->cold = 1; break;
		case OPT_FILL: o->fill = 1; break;
		case OPT_NO_FILL: o->fill = 0; break;
		case OPT_RESAMPLES: {
			uint64_t v;
			if (cli_parse_u64(optarg, &v) < 0 || v == 1 || v > 1000)
				return cli_usage_error(&cmd_report, "bad --resamples '%s' (0, or 2 to 1000)", optarg);
			o->resamples = (unsigned)v;
			break;
		}
		case 'h': return cli_print_usage(&cmd_report);
		default: return cli_usage_error(&cmd_report, "bad option");
		}
	}
	if (argc - optind != 1)
		return cli_usage_error(&cmd_report, "report takes one profile");
	o->profile = argv[optind];
	if (strcmp(o->format, "text") && strcmp(o->format, "csv") && strcmp(o->format, "json"))
		return cli_usage_error(&cmd_report, "unknown format '%s' (text, csv, json)", o->format);
	return -1;
}

/* The binaries the profile's mappings name, for pc, allocation-site and
 * global names; without them (a profile of a program whose files are gone
 * or were rebuilt) pcs stay addresses. */
static struct lp_symbols *report_symbols(const struct lp_profile *p)
{
	struct lp_symbols *syms = NULL;

	if (!p->mappings.n)
		return NULL;
	if (lp_symbols_new(&syms, &p->mappings, NULL) < 0) {
		cli_warn("pcs are not symbolised: %s", lp_errmsg());
		return NULL;
	}
	if (lp_symbols_warning(syms))
		cli_warn("%s", lp_symbols_warning(syms));
	return syms;
}

static const char *cold_words(const struct report_opts *o)
{
	return o->cold ? "cold misses included" : "cold misses excluded";
}

static const char *column_name(const struct lp_curve *c)
{
	return strcmp(c->name, "statstack") ? "random" : "lru";
}

/* ---- text ------------------------------------------------------------- */

/* A ratio and its interval as "0.0630 +-0.0040": the larger of the two
 * distances to the interval's ends (CSV and JSON give both ends). */
static void text_ratio(double ratio, const struct lp_interval *iv)
{
	if (!iv) {
		printf(" %12.4f", ratio);
		return;
	}
	double h = fmax(iv->hi - ratio, ratio - iv->lo);
	printf(" %11.4f \u00b1%.4f", ratio, isfinite(h) ? h : 0);
}

static void text_cliff(const char *where, const char *policy, const struct lp_interval *iv)
{
	printf("%s %s: cliff within sampling error: between %.1f%% and %.1f%% (resamples fall on both "
	       "sides of a steep drop of the curve)\n",
	       where, policy, 100 * iv->below, 100 * iv->above);
}

static void text_curves(const struct report_opts *o, const struct lp_report *r)
{
	const struct lp_report_info *in = lp_report_info(r);
	const struct lp_curve *cv;
	size_t nc = lp_report_curves(r, &cv);
	char b[32];

	printf("profile %s: %zu samples, ", o->profile, in->samples);
	if (!in->accesses_partial)
		printf("%" PRIu64 " line accesses", in->accesses);
	else if (in->accesses)
		printf("at least %" PRIu64 " line accesses (partial: the run was cut short, counted up to "
		       "the last flush)", in->accesses);
	else
		printf("line accesses not counted (the run was cut short before the first flush)");
	printf(" of %g bytes, %s\n\n", in->line, cold_words(o));
	printf("%10s", "size");
	for (size_t k = 0; k < nc; k++)
		printf(" %*s", cv[k].iv ? 20 : 12, column_name(&cv[k]));
	printf("\n");
	for (size_t i = 0; nc && i < cv[0].n; i++) {
		printf("%10s", cli_format_size(cv[0].size[i], b, sizeof(b)));
		for (size_t k = 0; k < nc; k++)
			text_ratio(cv[k].ratio[i], cv[k].iv ? &cv[k].iv[i] : NULL);
		printf("\n");
	}
	if (nc && cv[0].iv)
		printf("(\u00b1: the interval of each ratio, what another sampling seed could give; docs/models.md)\n");
	for (size_t k = 0; k < nc; k++)
		for (size_t i = 0; cv[k].iv && i < cv[k].n; i++)
			if (cv[k].iv[i].cliff)
				text_cliff(cli_format_size(cv[k].size[i], b, sizeof(b)), column_name(&cv[k]), &cv[k].iv[i]);
}

static void text_tables(const struct report_opts *o, const struct lp_report *r)
{
	const struct lp_report_info *in = lp_report_info(r);
	const struct lp_report_cache *ca;
	const struct lp_report_window *w;
	size_t nca = lp_report_caches(r, &ca), nw = lp_report_windows(r, &w);
	char b[32];

	if (nca) {
		int iv = o->resamples > 0;
		printf("\n%-24s %8s %6s %*s %*s\n", "cache", "size", "ways", iv ? 20 : 12, "lru", iv ? 20 : 12,
		       "random(FA)");
		for (size_t i = 0; i < nca; i++) {
			printf("%-24s %8s %6" PRIu64, ca[i].label, cli_format_size(ca[i].size, b, sizeof(b)), ca[i].ways);
			text_ratio(ca[i].lru, iv ? &ca[i].lru_iv : NULL);
			text_ratio(ca[i].random, iv ? &ca[i].random_iv : NULL);
			printf("\n");
		}
		for (size_t i = 0; iv && i < nca; i++) {
			if (ca[i].lru_iv.cliff)
				text_cliff(ca[i].label, "lru", &ca[i].lru_iv);
			if (ca[i].random_iv.cliff)
				text_cliff(ca[i].label, "random", &ca[i].random_iv);
		}
	}
	if (o->show_windows) {
		printf("\nrandom-replacement miss ratio per window (%" PRIu64
		       " line accesses or more: widened to 400 samples within a phase) at %s:\n"
		       "%8s %14s %10s\n",
		       in->window_length, cli_format_size(in->at, b, sizeof(b)), "window", "start", "ratio");
		for (size_t i = 0; i < nw; i++)
			printf("%8zu %14" PRIu64 " %10.4f\n", i, w[i].start, w[i].ratio);
	}
}

static void text_hot(const struct report_opts *o, const struct lp_report *r)
{
	const struct lp_report_info *in = lp_report_info(r);
	const struct lp_report_pc *pcs;
	const struct lp_report_object *obj;
	size_t npc = lp_report_pcs(r, &pcs), nobj = lp_report_objects(r, &obj);
	char b[32], pb[32];

	cli_format_size(in->at, b, sizeof(b));
	printf("\ntop pcs by predicted %s misses at %s (the pc of the access that misses):\n", in->hot_policy, b);
	printf("%18s %12s %8s  %s\n", "pc", "misses", "share", "function (file:line)");
	for (size_t i = 0; i < npc; i++) {
		snprintf(pb, sizeof(pb), "%#" PRIx64, pcs[i].pc);
		printf("%18s %12.0f %7.1f%%  %s\n", pb, pcs[i].misses, 100 * pcs[i].share,
		       pcs[i].name ? pcs[i].name : "?");
	}
	if (in->touched_blocks_only)
		printf("\ntop data objects by predicted %s misses at %s (%zu heap blocks in the profile, the "
		       "touched ones of %" PRIu64 " allocated):\n",
		       in->hot_policy, b, in->heap_blocks, in->run_allocs);
	else
		printf("\ntop data objects by predicted %s misses at %s (%zu heap blocks in the profile):\n",
		       in->hot_policy, b, in->heap_blocks);
	printf("%32s %12s %8s\n", "object", "misses", "share");
	for (size_t i = 0; i < nobj; i++)
		printf("%32s %12.0f %7.1f%%\n", obj[i].name, obj[i].misses, 100 * obj[i].share);
}

/* ---- csv: the curve CSV, then one table per block (docs/formats.md) ---- */

static void csv_tables(const struct report_opts *o, const struct lp_report *r)
{
	const struct lp_report_info *in = lp_report_info(r);
	const struct lp_curve *cv;
	const struct lp_report_cache *ca;
	const struct lp_report_window *w;
	const struct lp_report_pc *pcs;
	const struct lp_report_object *obj;
	size_t nc = lp_report_curves(r, &cv), nca = lp_report_caches(r, &ca), nw = lp_report_windows(r, &w);
	size_t npc = lp_report_pcs(r, &pcs), nobj = lp_report_objects(r, &obj);
	double acc = (double)in->accesses;
	char b1[256], b2[32];

	printf("# locprof curve v1: report %s, line %g, %s\n", o->profile, in->line, cold_words(o));
	printf("curve,size_bytes,miss_ratio,misses,accesses,miss_ratio_lo,miss_ratio_hi,misses_lo,misses_hi,"
	       "cliff\n");
	for (size_t k = 0; k < nc; k++)
		for (size_t i = 0; i < cv[k].n; i++) {
			struct lp_interval none = { cv[k].ratio[i], cv[k].ratio[i], 0, NAN, NAN };
			const struct lp_interval *iv = cv[k].iv ? &cv[k].iv[i] : &none;
			printf("%s,%" PRIu64 ",%.6f,%.1f,%.0f,%.6f,%.6f,%.1f,%.1f,%d\n", cv[k].name, cv[k].size[i],
			       cv[k].ratio[i], cv[k].ratio[i] * acc, acc, iv->lo, iv->hi, iv->lo * acc, iv->hi * acc,
			       iv->cliff);
		}
	if (nca) {
		printf("\ncache,size_bytes,ways,line_bytes,lru_miss_ratio,random_miss_ratio,lru_miss_ratio_lo,"
		       "lru_miss_ratio_hi,random_miss_ratio_lo,random_miss_ratio_hi,lru_cliff,random_cliff\n");
		for (size_t i = 0; i < nca; i++)
			printf("%s,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%.6f,%.6f,%.6f,%.6f,%.6f,%.6f,%d,%d\n",
			       cli_csv_field(ca[i].label, b1, sizeof(b1)), ca[i].size, ca[i].ways, ca[i].line, ca[i].lru,
			       ca[i].random, ca[i].lru_iv.lo, ca[i].lru_iv.hi, ca[i].random_iv.lo, ca[i].random_iv.hi,
			       ca[i].lru_iv.cliff, ca[i].random_iv.cliff);
	}
	if (o->show_windows) {
		printf("\n# random replacement at %" PRIu64 " bytes, windows of %" PRIu64 " line accesses or more\n",
		       in->at, in->window_length);
		printf("window,start,random_miss_ratio\n");
		for (size_t i = 0; i < nw; i++)
			printf("%zu,%" PRIu64 ",%.6f\n", i, w[i].start, w[i].ratio);
	}
	if (!o->top)
		return;
	printf("\n# predicted %s misses at %" PRIu64 " bytes, line accesses of the whole run\n", in->hot_policy, in->at);
	printf("pc,misses,share,function\n");
	for (size_t i = 0; i < npc; i++) {
		snprintf(b2, sizeof(b2), "%#" PRIx64, pcs[i].pc);
		printf("%s,%.1f,%.6f,%s\n", b2, pcs[i].misses, pcs[i].share,
		       pcs[i].name ? cli_csv_field(pcs[i].name, b1, sizeof(b1)) : "");
	}
	printf("\nobject,misses,share\n");
	for (size_t i = 0; i < nobj; i++)
		printf("%s,%.1f,%.6f\n", cli_csv_field(obj[i].name, b1, sizeof(b1)), obj[i].misses, obj[i].share);
}

/* ---- json ------------------------------------------------------------- */

static void json_interval(const struct lp_interval *iv, double acc)
{
	printf("\"miss_ratio_lo\":%.6f,\"miss_ratio_hi\":%.6f,\"misses_lo\":%.1f,\"misses_hi\":%.1f,"
	       "\"cliff\":%s",
	       iv->lo, iv->hi, iv->lo * acc, iv->hi * acc, iv->cliff ? "true" : "false");
	if (iv->cliff)
		printf(",\"cliff_below\":%.6f,\"cliff_above\":%.6f", iv->below, iv->above);
}

static void json_hot(const struct lp_report *r)
{
	const struct lp_report_info *in = lp_report_info(r);
	const struct lp_report_pc *pcs;
	const struct lp_report_object *obj;
	size_t npc = lp_report_pcs(r, &pcs), nobj = lp_report_objects(r, &obj);

	printf(",\"hot\":{\"policy\":\"%s\",\"at\":%" PRIu64 ",\"heap_blocks\":%zu,\"pcs\":[", in->hot_policy,
	       in->at, in->heap_blocks);
	for (size_t i = 0; i < npc; i++) {
		printf("%s{\"pc\":\"%#" PRIx64 "\",\"misses\":%.1f,\"share\":%.6f,\"function\":", i ? "," : "",
		       pcs[i].pc, pcs[i].misses, pcs[i].share);
		if (pcs[i].name)
			cli_json_string(pcs[i].name);
		else
			printf("null");
		printf("}");
	}
	printf("],\"objects\":[");
	for (size_t i = 0; i < nobj; i++) {
		printf("%s{\"object\":", i ? "," : "");
		cli_json_string(obj[i].name);
		printf(",\"misses\":%.1f,\"share\":%.6f}", obj[i].misses, obj[i].share);
	}
	printf("]}");
}

static void json_report(const struct report_opts *o, const struct lp_report *r)
{
	const struct lp_report_info *in = lp_report_info(r);
	const struct lp_curve *cv;
	const struct lp_report_cache *ca;
	const struct lp_report_window *w;
	size_t nc = lp_report_curves(r, &cv), nca = lp_report_caches(r, &ca), nw = lp_report_windows(r, &w);

	printf("{\"profile\":");
	cli_json_string(o->profile);
	printf(",\"line\":%g,\"samples\":%zu,\"cold\":%s,\"curves\":[", in->line, in->samples,
	       o->cold ? "true" : "false");
	for (size_t k = 0; k < nc; k++) {
		printf("%s{\"name\":\"%s\",\"points\":[", k ? "," : "", cv[k].name);
		for (size_t i = 0; i < cv[k].n; i++)
			printf("%s[%" PRIu64 ",%.6f]", i ? "," : "", cv[k].size[i], cv[k].ratio[i]);
		printf("],\"intervals\":[");
		for (size_t i = 0; cv[k].iv && i < cv[k].n; i++) {
			printf("%s{\"size\":%" PRIu64 ",", i ? "," : "", cv[k].size[i]);
			json_interval(&cv[k].iv[i], (double)in->accesses);
			printf("}");
		}
		printf("]}");
	}
	printf("],\"caches\":[");
	for (size_t i = 0; i < nca; i++) {
		printf("%s{\"cache\":", i ? "," : "");
		cli_json_string(ca[i].label);
		printf(",\"size\":%" PRIu64 ",\"ways\":%" PRIu64 ",\"lru\":%.6f,\"random\":%.6f", ca[i].size,
		       ca[i].ways, ca[i].lru, ca[i].random);
		if (o->resamples) {
			printf(",\"lru_interval\":{");
			json_interval(&ca[i].lru_iv, (double)in->accesses);
			printf("},\"random_interval\":{");
			json_interval(&ca[i].random_iv, (double)in->accesses);
			printf("}");
		}
		printf("}");
	}
	printf("]");
	if (o->show_windows) {
		printf(",\"windows\":{\"at\":%" PRIu64 ",\"length\":%" PRIu64 ",\"random\":[", in->at,
		       in->window_length);
		for (size_t i = 0; i < nw; i++)
			printf("%s[%" PRIu64 ",%.6f]", i ? "," : "", w[i].start, w[i].ratio);
		printf("]}");
	}
	if (o->top)
		json_hot(r);
	printf("}\n");
}

/* ---- the command -------------------------------------------------------- */

static int write_svg(const struct report_opts *o, const struct lp_report *r, const struct lp_curve *refs,
		     size_t nrefs)
{
	const struct lp_report_info *in = lp_report_info(r);
	const struct lp_curve *cv;
	const struct lp_report_cache *ca;
	struct lp_marker marks[MAX_CACHES];
	size_t nc = lp_report_curves(r, &cv), nca = lp_report_caches(r, &ca);
	char title[256];

	for (size_t i = 0; i < nca; i++)
		marks[i] = (struct lp_marker){ ca[i].label, ca[i].size,
					       o->policies & LP_REPORT_LRU ? ca[i].lru : ca[i].random };
	snprintf(title, sizeof(title), "Working-set graph (%g-byte lines, %zu samples%s)", in->line, in->samples,
		 o->cold ? "" : ", cold misses excluded");
	return lp_svg_write(o->svg, title, cv, nc, refs, nrefs, marks, nca);
}

static int run(int argc, char **argv)
{
	struct report_opts o = { .sizes_arg = "4K..64M", .format = "text", .top = 10, .fill = LP_STATCACHE_FILL_AUTO,
				 .resamples = LP_INTERVAL_RESAMPLES,
				 .policies = LP_REPORT_LRU | LP_REPORT_RANDOM };
	struct lp_report_params pa;
	struct lp_profile *p = NULL;
	struct lp_report *r = NULL;
	struct lp_symbols *syms = NULL;
	struct lp_curve *refs = NULL;
	uint64_t *sizes = NULL;
	size_t nsizes = 0, nrefs = 0;
	char *tmp = NULL; /* -o: the temporary name standard output goes to */
	int li, err, status;

	if ((status = parse_options(argc, argv, &o)) >= 0)
		return status;
	if (cli_parse_size_list(o.sizes_arg, &sizes, &nsizes) < 0)
		return cli_usage_error(&cmd_report, "bad --sizes '%s'", o.sizes_arg);
	status = CLI_OK;
	err = lp_profile_read(&p, o.profile);
	if (!p) {
		cli_error("%s", lp_errmsg());
		free(sizes);
		return CLI_ERROR;
	}
	if (err < 0) {
		cli_warn("%s", lp_errmsg());
		status = CLI_PARTIAL;
	}
	cli_warn_profile(p, o.profile);
	li = o.line ? lp_profile_line_index(p, (uint32_t)o.line) : 0;
	if (li < 0 || !p->n_line_sizes) {
		cli_error("the profile has no line size %" PRIu64, o.line);
		status = CLI_ERROR;
		goto out;
	}
	if (o.refpath && lp_curves_read_csv(o.refpath, &refs, &nrefs) < 0) {
		cli_error("%s", lp_errmsg());
		status = CLI_ERROR;
		goto out;
	}
	for (size_t i = 0; i < o.ncaches; i++)
		if (o.caches[i].line != p->line_sizes[li])
			cli_warn("cache %s has %" PRIu64 "-byte lines; the profile's are %u bytes", o.caches[i].label,
				 o.caches[i].line, p->line_sizes[li]);
	if (o.top)
		syms = report_symbols(p);
	pa = (struct lp_report_params){ .line_index = (unsigned)li, .sizes = sizes, .nsizes = nsizes,
					.caches = o.caches, .ncaches = o.ncaches, .policies = o.policies,
					.window = o.window, .cold = o.cold, .fill = o.fill,
					.windows = o.show_windows, .at = o.at, .top = o.top, .syms = syms,
					.resamples = o.resamples, .seed = 1 };
	if (lp_report_new(&r, p, &pa) < 0) {
		cli_error("%s", lp_errmsg());
		status = CLI_ERROR;
		goto out;
	}
	if (o.output && cli_stdout_to(o.output, &tmp) < 0) {
		status = CLI_ERROR;
		goto out;
	}
	if (!strcmp(o.format, "csv")) {
		csv_tables(&o, r);
	} else if (!strcmp(o.format, "json")) {
		json_report(&o, r);
	} else {
		text_curves(&o, r);
		text_tables(&o, r);
		if (o.top)
			text_hot(&o, r);
	}
	if (o.svg && write_svg(&o, r, refs, nrefs) < 0) {
		cli_error("%s", lp_errmsg());
		status = CLI_ERROR;
	}
	if (tmp && cli_stdout_commit(o.output, tmp, status != CLI_ERROR) < 0)
		status = CLI_ERROR;
out:
	lp_report_free(r);
	lp_curves_free(refs, nrefs);
	lp_symbols_free(syms);
	free(sizes);
	lp_profile_free(p);
	return status;
}
