/* locprof report: working-set graphs, named caches, windows and hot pcs
 * from a profile. The library computes every table (lp_report, in
 * src/lib/report); this file parses the options and formats the tables as
 * text, CSV or JSON. */
#include "cli.h"
#include "report-html.h"
#include "report-timeline.h"

#include <locprof/profile.h>
#include <locprof/report.h>
#include <locprof/symbol.h>

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <sys/stat.h>

static const char usage[] =
	"usage: locprof report PROFILE.lpp... [--sizes 4K..64M] [--cache SPEC ...]\n"
	"                         [--policy lru,random] [--format text|csv|json] [-o FILE]\n"
	"                         [--svg FILE] [--reference CSV] [--window[=N]] [--top N]\n"
	"                         [--at SIZE] [--cold] [--fill|--no-fill] [--threads] [--shared]\n"
	"                         [--resamples N] [-j N] [--html DIR] [--per-rank]\n"
	"                         [--timeline] [--timeline-svg FILE]\n"
	"\n"
	"Predict miss ratios from a profile: the working-set graph under LRU\n"
	"(StatStack) and random replacement (StatCache), fully associative; the\n"
	"miss ratio of named caches (set-associative LRU by the placement model,\n"
	"which reads where each reuse's lines fall in the sets from the samples'\n"
	"addresses; random by StatCache, each reuse stretched by how crowded\n"
	"its set is); the ratio per time\n"
	"window; the pcs, source lines and functions whose accesses miss most,\n"
	"and the data objects (heap blocks by allocation call site, globals by\n"
	"symbol) they miss on; and the misses per thread. Cold misses are\n"
	"excluded unless --cold is given. Every predicted ratio comes with its\n"
	"interval (what another sampling seed could give: a bootstrap over the\n"
	"samples, docs/models.md), and a cache size whose resamples fall on both\n"
	"sides of a cliff of the curve, or near which (15%) the curve drops\n"
	"steeply, is named, as is a random-replacement ratio whose cache is\n"
	"within sampling error of the run's footprint (whether it ever fills is\n"
	"not known: the interval covers both answers), and an LRU ratio whose\n"
	"stack distances the samples inside their spans count otherwise (the\n"
	"interval reaches the ratio they give, and the ratios of the distances\n"
	"they leave possible at the profile's rate).\n"
	"\n"
	"Several profiles (the ranks of an MPI job, prof.rank*.lpp) give the\n"
	"report of the whole job: each rank on caches of its own, references\n"
	"and misses summed, each miss ratio the ranks' weighted by their line\n"
	"accesses (docs/commands/report.md, \"Several profiles\").\n"
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
	"      --html DIR       also write DIR/index.html: the graph and every table on\n"
	"                       one page that loads nothing from the network, with the\n"
	"                       hot lines in their source, the per-thread table and\n"
	"                       the time view (and DIR/working-set.svg,\n"
	"                       DIR/timeline.svg)\n"
	"  -r, --reference CSV  overlay reference curves (e.g. from locprof simulate)\n"
	"  -w, --window[=N]     print the miss ratio per time window (window of N line\n"
	"                       accesses, also the models' windows; default the\n"
	"                       profile's)\n"
	"  -t, --top N          top pcs, source lines, functions and data objects by\n"
	"                       predicted misses (default 10, 0 = none); the rows\n"
	"                       of --shared's sharing tables (0 = all)\n"
	"  -a, --at SIZE        cache size for the windows, the top pcs and objects\n"
	"                       (default the first --cache, else 32K)\n"
	"  -l, --line BYTES     line size to use when the profile has several\n"
	"      --cold           include cold misses (dangling samples as misses)\n"
	"      --alloc-fn NAME  name heap blocks past the program's allocation\n"
	"                       wrapper NAME (a glob; repeatable): its callers name\n"
	"                       the blocks it returns (docs/models.md, Data objects)\n"
	"      --fill           StatCache: no evictions until the cache is full, and\n"
	"                       cold misses evict, at every size (default: at the\n"
	"                       sizes the run's footprint fits in; docs/models.md)\n"
	"      --no-fill        StatCache: the paper's equation at every size\n"
	"      --threads        per thread: references, line accesses and LRU misses\n"
	"                       in each --cache (else the --at size)\n"
	"      --timeline       the time view: the miss ratio of the --cache caches\n"
	"                       (default the host's) over the run, per phase interval\n"
	"                       of a `record --phases` profile (with each phase's top\n"
	"                       functions: --top of them, 3 with --top 0), else per\n"
	"                       window (one profile)\n"
	"      --timeline-svg FILE  also plot the time view as SVG\n"
	"      --shared         threads and caches at each --sizes size: one cache\n"
	"                       shared by all threads, two caches, a private cache\n"
	"                       each (with coherence misses), each thread's private\n"
	"                       cache, and the true and false sharing tables\n"
	"      --resamples N    resamples behind the intervals (default 8; 0: no\n"
	"                       intervals)\n"
	"  -j, --jobs N         threads evaluating the resamples at once (default:\n"
	"                       the CPUs it may run on, at most 8); the same report\n"
	"                       on any number\n"
	"      --per-rank       several profiles: the report of each one (in JSON,\n"
	"                       \"ranks\" next to the whole job's)\n"
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
	const char *profile; /* the label of the report being printed */
	char *const *profiles;
	size_t nprofiles;
	const char *sizes_arg, *format, *svg, *refpath, *output, *html, *timeline_svg;
	int timeline;
	const struct lp_timeline *tl; /* --timeline: printed after the tables */
	unsigned policies;
	int show_windows, cold, fill, threads, per_rank, shared;
	unsigned resamples, jobs;
	uint64_t window, top, at, line;
	struct lp_report_cache caches[MAX_CACHES];
	size_t ncaches;
};

/* Returns -1 to go on, else the exit status. */
static int parse_options(int argc, char **argv, struct report_opts *o)
{
	enum { OPT_COLD = 1000, OPT_FILL, OPT_NO_FILL, OPT_SVG, OPT_THREADS, OPT_RESAMPLES, OPT_HTML, OPT_PER_RANK,
	       OPT_TIMELINE, OPT_TIMELINE_SVG, OPT_SHARED, OPT_ALLOC_FN };
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
		{ "threads", no_argument, NULL, OPT_THREADS },
		{ "shared", no_argument, NULL, OPT_SHARED },
		{ "html", required_argument, NULL, OPT_HTML },
		{ "timeline", no_argument, NULL, OPT_TIMELINE },
		{ "timeline-svg", required_argument, NULL, OPT_TIMELINE_SVG },
		{ "resamples", required_argument, NULL, OPT_RESAMPLES },
		{ "jobs", required_argument, NULL, 'j' },
		{ "per-rank", no_argument, NULL, OPT_PER_RANK },
		{ "alloc-fn", required_argument, NULL, OPT_ALLOC_FN },
		{ 0 },
	};
	int c, rc;

	while ((c = cli_getopt(argc, argv, "s:c:p:F:o:r:w::t:a:l:j:h", opts)) != -1) {
		switch (c) {
		case 's': o->sizes_arg = optarg; break;
		case 'c':
			if ((rc = cli_report_cache_option(&cmd_report, optarg, o->caches, MAX_CACHES, &o->ncaches)) != 0)
				return rc;
			break;
		case 'p':
			if (cli_report_policy_option(&cmd_report, optarg, &o->policies))
				return CLI_USAGE;
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
		case OPT_THREADS: o->threads = 1; break;
		case OPT_SHARED: o->shared = 1; break;
		case OPT_HTML: o->html = optarg; break;
		case OPT_TIMELINE: o->timeline = 1; break;
		case OPT_TIMELINE_SVG: o->timeline_svg = optarg; break;
		case OPT_PER_RANK: o->per_rank = 1; break;
		case OPT_ALLOC_FN:
			if ((rc = cli_alloc_fn_option(&cmd_report, optarg)) != 0)
				return rc;
			break;
		case OPT_RESAMPLES: {
			uint64_t v;
			if (cli_parse_u64(optarg, &v) < 0 || v == 1 || v > 1000)
				return cli_usage_error(&cmd_report, "bad --resamples '%s' (0, or 2 to 1000)", optarg);
			o->resamples = (unsigned)v;
			break;
		}
		case 'j': {
			uint64_t v;
			if (cli_parse_u64(optarg, &v) < 0 || !v || v > LP_INTERVAL_MAX_JOBS)
				return cli_usage_error(&cmd_report, "bad --jobs '%s' (1 to %d)", optarg,
						       LP_INTERVAL_MAX_JOBS);
			o->jobs = (unsigned)v;
			break;
		}
		case 'h': return cli_print_usage(&cmd_report);
		default: return cli_usage_error(&cmd_report, "%s", cli_getopt_error());
		}
	}
	if (argc - optind < 1)
		return cli_usage_error(&cmd_report, "report takes one profile or more");
	o->profiles = argv + optind;
	o->nprofiles = (size_t)(argc - optind);
	o->profile = argv[optind];
	if (cli_profiles_distinct(&cmd_report, o->profiles, o->nprofiles) != CLI_OK)
		return CLI_USAGE;
	for (size_t i = 0; o->show_windows && i < o->nprofiles; i++)
		if (o->profiles[i][strspn(o->profiles[i], "0123456789")] == 0 && access(o->profiles[i], F_OK) < 0)
			return cli_usage_error(&cmd_report, "'%s' is not a profile: a window's length is --window=N",
					       o->profiles[i]);
	if (o->nprofiles > 1 && o->show_windows && !o->per_rank)
		return cli_usage_error(&cmd_report, "--window with several profiles needs --per-rank (each rank has its own clock)");
	if (strcmp(o->format, "text") && strcmp(o->format, "csv") && strcmp(o->format, "json"))
		return cli_usage_error(&cmd_report, "unknown format '%s' (text, csv, json)", o->format);
	return -1;
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
void cli_text_ratio(double ratio, const struct lp_interval *iv)
{
	if (!isfinite(ratio)) { /* unknown: a profile without samples */
		printf(" %*s", iv ? 19 : 12, "n/a");
		return;
	}
	if (!iv) {
		printf(" %12.4f", ratio);
		return;
	}
	double h = fmax(iv->hi - ratio, ratio - iv->lo);
	printf(" %11.4f \u00b1%.4f", ratio, isfinite(h) ? h : 0);
}

/* "within 15% of this size", or "between 31% below and 44% above this
 * size" where the resamples put the stack distances that far. */
static const char *slack_words(const struct lp_interval *iv, char *b, size_t size)
{
	double below = 100 * (1 - iv->slack_lo), above = 100 * (iv->slack_hi - 1);

	if (fabs(below - above) < 0.5)
		snprintf(b, size, "within %.0f%% of this size", above);
	else
		snprintf(b, size, "between %.0f%% below and %.0f%% above this size", below, above);
	return b;
}

void cli_text_cliff(const char *where, const char *policy, const struct lp_interval *iv, int setassoc)
{
	char b[64];

	printf("%s %s: cliff within sampling error: between %.1f%% and %.1f%% (", where, policy, 100 * iv->below,
	       100 * iv->above);
	if (iv->footprint)
		printf("the run's footprint is within sampling error of this size: the lower end is the cache that "
		       "never fills, the upper one the cache that does)\n");
	else if (iv->steep && setassoc)
		printf("the fully associative curve drops steeply %s: how each reuse's lines share the sets decides, "
		       "and the samples show it poorly)\n",
		       slack_words(iv, b, sizeof(b)));
	else if (iv->steep)
		printf("the curve drops steeply %s, nearer than its stack distances are known)\n",
		       slack_words(iv, b, sizeof(b)));
	else
		printf("resamples fall on both sides of a steep drop of the curve)\n");
}

/* A curve's ratio whose interval reaches the one of the stack distances
 * checked inside the spans (lp_interval.spans) gets a line saying so
 * where the two differ by a point or more. */
#define REPORT_SPANS_NOTE 0.01

/* The sizes of a curve whose interval reaches the stack distances the
 * samples inside the spans leave possible (lp_interval.band), in one
 * line. */
static void text_band(const struct lp_curve *c)
{
	char b[32];
	int any = 0;

	for (size_t i = 0; c->iv && i < c->n; i++)
		if (c->iv[i].band) {
			printf("%s%s", any ? ", " : "", cli_format_size(c->size[i], b, sizeof(b)));
			any = 1;
		}
	if (any)
		printf(" %s: the interval also covers the stack distances that the samples inside the reuses' spans "
		       "leave possible (at this rate they check the model's only loosely; a higher --rate checks "
		       "them closer)\n",
		       column_name(c));
}

/* A named cache whose LRU ratio could be this much higher (one point)
 * where no sample showed the layout gets a line saying so: the widening
 * is in the upper end of both of its intervals, and unexplained, gawk's
 * 32K:8:64 read "0.0131 +-0.0392" beside 32K's "0.0127 +-0.0089" (2.95
 * points unseen, under the five points that the line once took). */
#define REPORT_UNSEEN_NOTE 0.01

static void text_unseen(const struct lp_report_cache *c)
{
	uint64_t ways = c->ways ? c->ways : 1;
	char b[32];

	printf("%s lru: up to %.1f points higher if the reuses whose sets no sample showed (taken as random: those "
	       "over %" PRIu64 " to %" PRIu64 " lines, and longer ones of pcs whose sampled lines are aligned) shared "
	       "their sets, as arrays a multiple of %s apart walked together, or nodes at one offset of their "
	       "pages, do; a higher sampling rate shows their layout\n",
	       c->label, 100 * c->lru_unseen, ways, LP_SA_UNSEEN_SPAN * ways - 1,
	       cli_format_size(c->size / ways, b, sizeof(b)));
}

/* A profile of few samples: say in words that every ratio is rough, and
 * which rate would give enough (cli_few_samples()). */
static void text_few_samples(const struct lp_report *r)
{
	const struct lp_report_info *in = lp_report_info(r);
	double points, rate, expect;

	if (in->samples && cli_few_samples(in->samples, in->accesses, &points, &rate, &expect))
		printf("only %zu samples: each ratio is a share of them, known to within %.0f points at worst; "
		       "recording at --rate %g would give about %.0f\n",
		       in->samples, points, rate, expect);
}

static void text_curves(const struct report_opts *o, const struct lp_report *r)
{
	const struct lp_report_info *in = lp_report_info(r);
	const struct lp_curve *cv;
	size_t nc = lp_report_curves(r, &cv);
	char b[32];

	if (o->nprofiles > 1 && !o->per_rank)
		printf("%zu profiles summed: %zu samples, ", o->nprofiles, in->samples);
	else if (in->phases)
		printf("profile %s: %zu samples in %zu phases (standing for %zu at the full rate), ", o->profile,
		       in->recorded, in->phases, in->samples);
	else
		printf("profile %s: %zu samples, ", o->profile, in->samples);
	if (!in->accesses_partial)
		printf("%" PRIu64 " line accesses", in->accesses);
	else if (in->accesses)
		printf("at least %" PRIu64 " line accesses (partial: the run was cut short, counted up to "
		       "the last flush)", in->accesses);
	else
		printf("line accesses not counted (the run was cut short before the first flush)");
	printf(" of %g bytes (%" PRIu64 " references), %s\n", in->line, in->references, cold_words(o));
	if (in->region)
		printf("region of interest: %s; entered %" PRIu64 " time%s, %" PRIu64
		       " references outside it left out\n",
		       in->region, in->region_entries, in->region_entries == 1 ? "" : "s", in->region_skipped);
	printf("\n");
	printf("%10s", "size");
	for (size_t k = 0; k < nc; k++)
		printf(" %*s", cv[k].iv ? 20 : 12, column_name(&cv[k]));
	printf("\n");
	for (size_t i = 0; nc && i < cv[0].n; i++) {
		printf("%10s", cli_format_size(cv[0].size[i], b, sizeof(b)));
		for (size_t k = 0; k < nc; k++)
			cli_text_ratio(cv[k].ratio[i], cv[k].iv ? &cv[k].iv[i] : NULL);
		printf("\n");
	}
	if (nc && cv[0].iv)
		printf("(\u00b1: the 95%% interval of each ratio, what another sampling seed could give, and at least "
		       "the models' resolution, %.4f; docs/models.md)\n",
		       LP_INTERVAL_MODEL);
	text_few_samples(r);
	for (size_t k = 0; k < nc; k++)
		for (size_t i = 0; cv[k].iv && i < cv[k].n; i++)
			if (cv[k].iv[i].cliff)
				cli_text_cliff(cli_format_size(cv[k].size[i], b, sizeof(b)), column_name(&cv[k]), &cv[k].iv[i], 0);
	for (size_t k = 0; k < nc; k++)
		text_band(&cv[k]);
	for (size_t k = 0; k < nc; k++)
		for (size_t i = 0; cv[k].iv && i < cv[k].n; i++)
			if (cv[k].iv[i].spans && fabs(cv[k].iv[i].checked - cv[k].ratio[i]) >= REPORT_SPANS_NOTE)
				printf("%s %s: the stack distances counted inside the reuses' spans give %.1f%%, against "
				       "%.1f%% from the model's: the interval reaches both\n",
				       cli_format_size(cv[k].size[i], b, sizeof(b)), column_name(&cv[k]),
				       100 * cv[k].iv[i].checked, 100 * cv[k].ratio[i]);
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
		printf("\nmiss ratios per line access (lru, random) and per reference (lru/ref, random/ref:"
		       " one access, a miss if any of its lines misses)\n");
		printf("%-24s %8s %6s %*s %*s %12s %12s\n", "cache", "size", "ways", iv ? 20 : 12, "lru", iv ? 20 : 12,
		       "random", "lru/ref", "random/ref");
		for (size_t i = 0; i < nca; i++) {
			printf("%-24s %8s %6" PRIu64, ca[i].label, cli_format_size(ca[i].size, b, sizeof(b)), ca[i].ways);
			cli_text_ratio(ca[i].lru, iv ? &ca[i].lru_iv : NULL);
			cli_text_ratio(ca[i].random, iv ? &ca[i].random_iv : NULL);
			cli_tprintf(" %12.4f %12.4f\n", ca[i].lru_ref, ca[i].random_ref);
		}
		for (size_t i = 0; iv && i < nca; i++) {
			if (ca[i].lru_iv.cliff)
				cli_text_cliff(ca[i].label, "lru", &ca[i].lru_iv, ca[i].ways != 0);
			if (ca[i].random_iv.cliff)
				cli_text_cliff(ca[i].label, "random", &ca[i].random_iv, 0);
		}
		for (size_t i = 0; i < nca; i++)
			if (ca[i].lru_unseen >= REPORT_UNSEEN_NOTE)
				text_unseen(&ca[i]);
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

/* The rows to show of a table sorted by decreasing misses: at most top,
 * those with misses only (as the hot pcs). */
static size_t lines_shown(const struct lp_source_line *l, size_t n, size_t top)
{
	size_t k = 0;

	while (k < n && k < top && l[k].misses > 0)
		k++;
	return k;
}

static size_t functions_shown(const struct lp_source_function *f, size_t n, size_t top)
{
	size_t k = 0;

	while (k < n && k < top && f[k].misses > 0)
		k++;
	return k;
}

/* "[lo, hi]" of a hot row's misses (lp_report_count_interval()). */
static const char *count_interval(double lo, double hi, char *buf, size_t len)
{
	snprintf(buf, len, "[%.0f, %.0f]", lo, hi);
	return buf;
}

/* The program's own lines, where hot pcs are inlined C++ standard
 * library code (lp_hotspots_own_lines()): the lines the user can change. */
static void text_own_lines(const struct report_opts *o, const struct lp_hotspots *h, const char *policy,
			   const char *at)
{
	const struct lp_source_line *l;
	size_t n = lines_shown(l, lp_hotspots_own_lines(h, &l), o->top);
	char iv[64];

	if (!n)
		return;
	printf("\ntop lines of the program's own code by predicted %s misses at %s (inlined C++ standard library code "
	       "charged to the line that called it):\n",
	       policy, at);
	printf("%12s %21s %8s %14s  %s\n", "misses", "95% interval", "share", "line accesses", "file:line");
	for (size_t i = 0; i < n; i++)
		printf("%12.0f %21s %7.1f%% %14.0f  %s:%d\n", l[i].misses,
		       count_interval(l[i].misses_lo, l[i].misses_hi, iv, sizeof(iv)), 100 * l[i].share, l[i].accesses,
		       l[i].file, l[i].line);
}

/* The hot source lines and functions, where the pcs have line
 * information (a profile of a program built with -g). */
static void text_sources(const struct report_opts *o, const struct lp_report *r)
{
	const struct lp_report_info *in = lp_report_info(r);
	const struct lp_hotspots *h = lp_report_hotspots(r);
	const struct lp_source_line *l;
	const struct lp_source_function *f;
	size_t nl = h ? lp_hotspots_lines(h, &l) : 0, nf = h ? lp_hotspots_functions(h, &f) : 0;
	char b[32], iv[64];

	if (!nl)
		return;
	nl = lines_shown(l, nl, o->top);
	nf = functions_shown(f, nf, o->top);
	cli_format_size(in->at, b, sizeof(b));
	printf("\ntop source lines by predicted %s misses at %s (the line of the access that misses):\n",
	       in->hot_policy, b);
	printf("%12s %21s %8s %14s  %s\n", "misses", "95% interval", "share", "line accesses", "file:line");
	for (size_t i = 0; i < nl; i++)
		printf("%12.0f %21s %7.1f%% %14.0f  %s:%d\n", l[i].misses,
		       count_interval(l[i].misses_lo, l[i].misses_hi, iv, sizeof(iv)), 100 * l[i].share, l[i].accesses,
		       l[i].file, l[i].line);
	text_own_lines(o, h, in->hot_policy, b);
	printf("\ntop functions by predicted %s misses at %s (inlined code: its function in the caller):\n",
	       in->hot_policy, b);
	printf("%12s %21s %8s %14s  %s\n", "misses", "95% interval", "share", "line accesses", "function");
	for (size_t i = 0; i < nf; i++)
		printf("%12.0f %21s %7.1f%% %14.0f  %s\n", f[i].misses,
		       count_interval(f[i].misses_lo, f[i].misses_hi, iv, sizeof(iv)), 100 * f[i].share, f[i].accesses,
		       f[i].label);
}

/* An object named by a function of the program whose name holds "alloc"
 * (sqlite3Malloc): a wrapper the profile's stacks did not show as one (a
 * single caller; docs/models.md, "Data objects"). Says how to look
 * through it, for the first three such rows. */
static void text_wrapper_hints(const struct lp_report_object *obj, size_t n)
{
	int said = 0;

	for (size_t i = 0; i < n && said < 3; i++) {
		const char *f = obj[i].name + 5, *end;
		int looks = 0;

		if (strncmp(obj[i].name, "heap@", 5) || strstr(f, ".so"))
			continue; /* not the heap, or a library's (heap@libgomp.so.1:gomp_malloc) */
		end = strstr(f, " (");
		if (!end)
			end = f + strlen(f);
		for (const char *c = f; c + 5 <= end && !looks; c++)
			looks = !strncasecmp(c, "alloc", 5);
		if (!looks)
			continue;
		printf("%.*s: named by a function that looks like an allocation wrapper; --alloc-fn '%.*s' names its "
		       "blocks by its callers\n",
		       (int)(end - obj[i].name), obj[i].name, (int)(end - f), f);
		said++;
	}
}

static void text_hot(const struct report_opts *o, const struct lp_report *r)
{
	const struct lp_report_info *in = lp_report_info(r);
	const struct lp_report_pc *pcs;
	const struct lp_report_object *obj;
	size_t npc = lp_report_pcs(r, &pcs), nobj = lp_report_objects(r, &obj);
	char b[32], pb[32], iv[64];

	cli_format_size(in->at, b, sizeof(b));
	printf("\ntop pcs by predicted %s misses at %s (the pc of the access that misses; 95%% interval: the "
	       "row's sampling error):\n",
	       in->hot_policy, b);
	printf("%18s %12s %21s %8s  %s\n", "pc", "misses", "95% interval", "share", "function (file:line)");
	for (size_t i = 0; i < npc; i++) {
		snprintf(pb, sizeof(pb), "%#" PRIx64, pcs[i].pc);
		printf("%18s %12.0f %21s %7.1f%%  %s\n", pb, pcs[i].misses,
		       count_interval(pcs[i].misses_lo, pcs[i].misses_hi, iv, sizeof(iv)), 100 * pcs[i].share,
		       pcs[i].name ? pcs[i].name : "?");
	}
	if (in->touched_blocks_only)
		printf("\ntop data objects by predicted %s misses at %s (%zu heap blocks in the profile, the "
		       "touched ones of %" PRIu64 " allocated):\n",
		       in->hot_policy, b, in->heap_blocks, in->run_allocs);
	else
		printf("\ntop data objects by predicted %s misses at %s (%zu heap blocks in the profile):\n",
		       in->hot_policy, b, in->heap_blocks);
	/* as wide as the longest name shown (C++ and long file names), from
	 * 32 to 64 characters: the columns after it stay aligned */
	int w = 32;
	for (size_t i = 0; i < nobj; i++)
		if ((int)strlen(obj[i].name) > w)
			w = strlen(obj[i].name) < 64 ? (int)strlen(obj[i].name) : 64;
	printf("%*s %12s %21s %8s\n", w, "object", "misses", "95% interval", "share");
	for (size_t i = 0; i < nobj; i++)
		printf("%*s %12.0f %21s %7.1f%%\n", w, obj[i].name, obj[i].misses,
		       count_interval(obj[i].misses_lo, obj[i].misses_hi, iv, sizeof(iv)), 100 * obj[i].share);
	text_wrapper_hints(obj, nobj);
	text_sources(o, r);
}

/* ---- csv: the curve CSV, then one table per block (docs/formats.md) ---- */

static void csv_sources(const struct report_opts *o, const struct lp_report *r)
{
	const struct lp_hotspots *h = lp_report_hotspots(r);
	const struct lp_source_line *l;
	const struct lp_source_function *f;
	size_t nl = h ? lp_hotspots_lines(h, &l) : 0, nf = h ? lp_hotspots_functions(h, &f) : 0;

	printf("\n");
	cli_csv_source_lines(l, lines_shown(l, nl, o->top));
	printf("\n");
	cli_csv_source_functions(f, functions_shown(f, nf, o->top));
}

static void csv_threads(const struct lp_report *r)
{
	const struct lp_report_thread *t;
	const struct lp_report_cache *c;
	size_t nt = lp_report_threads(r, &t), nc = lp_report_thread_caches(r, &c);
	char b[256];

	printf("\n# per thread: line accesses from the thread's references, LRU misses per cache from its samples\n");
	printf("thread,references,samples,line_accesses");
	for (size_t k = 0; k < nc; k++)
		printf(",%s", cli_csv_field(c[k].label, b, sizeof(b)));
	printf("\n");
	for (size_t i = 0; i < nt; i++) {
		printf("%" PRIu32 ",%" PRIu64 ",%zu,%.1f", t[i].tid, t[i].references, t[i].samples, t[i].accesses);
		for (size_t k = 0; k < nc; k++)
			printf(",%.1f", t[i].misses[k]);
		printf("\n");
	}
}

/* The scalars of the text's headings, one field a row: a table that takes
 * new fields without a new column layout. */
static void csv_summary(const struct report_opts *o, const struct lp_report *r)
{
	const struct lp_report_info *in = lp_report_info(r);
	char b[256];

	printf("\nfield,value\n");
	printf("profile,%s\n", cli_csv_field(o->profile, b, sizeof(b)));
	printf("line_bytes,%g\nsamples,%zu\nrecorded_samples,%zu\nphases,%zu\n", in->line, in->samples, in->recorded,
	       in->phases);
	printf("line_accesses,%" PRIu64 "\nline_accesses_partial,%d\n", in->accesses, in->accesses_partial);
	printf("cold_misses,%s\n", o->cold ? "included" : "excluded");
	if (o->show_windows)
		printf("window_length,%" PRIu64 "\n", in->window_length);
	if (o->top)
		printf("hot_policy,%s\nhot_at_bytes,%" PRIu64 "\nheap_blocks,%zu\nrun_allocs,%" PRIu64
		       "\ntouched_blocks_only,%d\n",
		       in->hot_policy, in->at, in->heap_blocks, in->run_allocs, in->touched_blocks_only);
}

/* The pcs of each data object; share: of the object's misses. */
static void csv_pairs(const struct lp_report *r)
{
	const struct lp_report_object *obj;
	const struct lp_report_pair *pr;
	size_t npr = lp_report_pairs(r, &pr);
	char b1[256], b2[32];

	lp_report_objects(r, &obj);
	printf("\nobject,pc,misses,object_share,function,misses_lo,misses_hi\n");
	for (size_t i = 0; i < npr; i++) {
		printf("%s,", cli_csv_field(obj[pr[i].object].name, b1, sizeof(b1)));
		snprintf(b2, sizeof(b2), "%#" PRIx64, pr[i].pc);
		printf("%s,%.1f,%.6f,%s,%.1f,%.1f\n", b2, pr[i].misses, pr[i].share,
		       pr[i].name ? cli_csv_field(pr[i].name, b1, sizeof(b1)) : "", pr[i].misses_lo, pr[i].misses_hi);
	}
}

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
			struct lp_interval none = { .lo = cv[k].ratio[i], .hi = cv[k].ratio[i], .below = NAN, .above = NAN };
			const struct lp_interval *iv = cv[k].iv ? &cv[k].iv[i] : &none;
			printf("%s,%" PRIu64 ",%.6f,%.1f,%.0f,%.6f,%.6f,%.1f,%.1f,%d\n", cv[k].name, cv[k].size[i],
			       cv[k].ratio[i], cv[k].ratio[i] * acc, acc, iv->lo, iv->hi, iv->lo * acc, iv->hi * acc,
			       iv->cliff);
		}
	csv_summary(o, r);
	if (nca) {
		printf("\ncache,size_bytes,ways,line_bytes,lru_miss_ratio,random_miss_ratio,lru_miss_ratio_lo,"
		       "lru_miss_ratio_hi,random_miss_ratio_lo,random_miss_ratio_hi,lru_cliff,random_cliff,"
		       "lru_ref_miss_ratio,random_ref_miss_ratio,lru_unseen\n");
		for (size_t i = 0; i < nca; i++)
			printf("%s,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%.6f,%.6f,%.6f,%.6f,%.6f,%.6f,%d,%d,%.6f,%.6f,%.6f\n",
			       cli_csv_field(ca[i].label, b1, sizeof(b1)), ca[i].size, ca[i].ways, ca[i].line, ca[i].lru,
			       ca[i].random, ca[i].lru_iv.lo, ca[i].lru_iv.hi, ca[i].random_iv.lo, ca[i].random_iv.hi,
			       ca[i].lru_iv.cliff, ca[i].random_iv.cliff, ca[i].lru_ref, ca[i].random_ref, ca[i].lru_unseen);
	}
	if (o->show_windows) {
		printf("\n# random replacement at %" PRIu64 " bytes, windows of %" PRIu64 " line accesses or more\n",
		       in->at, in->window_length);
		printf("window,start,random_miss_ratio\n");
		for (size_t i = 0; i < nw; i++)
			printf("%zu,%" PRIu64 ",%.6f\n", i, w[i].start, w[i].ratio);
	}
	if (o->threads)
		csv_threads(r);
	if (o->shared)
		cli_csv_share(r);
	if (!o->top)
		return;
	printf("\n# predicted %s misses at %" PRIu64 " bytes, line accesses of the whole run\n", in->hot_policy, in->at);
	printf("pc,misses,share,function,misses_lo,misses_hi\n");
	for (size_t i = 0; i < npc; i++) {
		snprintf(b2, sizeof(b2), "%#" PRIx64, pcs[i].pc);
		printf("%s,%.1f,%.6f,%s,%.1f,%.1f\n", b2, pcs[i].misses, pcs[i].share,
		       pcs[i].name ? cli_csv_field(pcs[i].name, b1, sizeof(b1)) : "", pcs[i].misses_lo,
		       pcs[i].misses_hi);
	}
	printf("\nobject,misses,share,misses_lo,misses_hi\n");
	for (size_t i = 0; i < nobj; i++)
		printf("%s,%.1f,%.6f,%.1f,%.1f\n", cli_csv_field(obj[i].name, b1, sizeof(b1)), obj[i].misses,
		       obj[i].share, obj[i].misses_lo, obj[i].misses_hi);
	csv_sources(o, r);
	csv_pairs(r);
}

/* ---- json ------------------------------------------------------------- */
/* The JSON's "version": raised when a field changes meaning or goes away,
 * not when one is added (docs/report.schema.json allows more properties). */
enum { REPORT_JSON_VERSION = 1 };

static void json_sources(size_t top, const struct lp_report *r)
{
	const struct lp_hotspots *h = lp_report_hotspots(r);
	const struct lp_source_line *l;
	const struct lp_source_function *f;
	size_t nl = h ? lp_hotspots_lines(h, &l) : 0, nf = h ? lp_hotspots_functions(h, &f) : 0;

	cli_jprintf(",\"lines\":");
	cli_json_source_lines(l, lines_shown(l, nl, top));
	cli_jprintf(",\"functions\":");
	cli_json_source_functions(f, functions_shown(f, nf, top));
	nl = h ? lp_hotspots_own_lines(h, &l) : 0;
	cli_jprintf(",\"own_lines\":");
	cli_json_source_lines(l, lines_shown(l, nl, top));
}

static void json_threads(const struct lp_report *r)
{
	const struct lp_report_thread *t;
	const struct lp_report_cache *c;
	size_t nt = lp_report_threads(r, &t), nc = lp_report_thread_caches(r, &c);

	cli_jprintf(",\"threads\":{\"caches\":[");
	for (size_t k = 0; k < nc; k++) {
		cli_jprintf("%s", k ? "," : "");
		cli_json_string(c[k].label);
	}
	cli_jprintf("],\"rows\":[");
	for (size_t i = 0; i < nt; i++) {
		cli_jprintf("%s{\"thread\":%" PRIu32 ",\"references\":%" PRIu64 ",\"samples\":%zu,\"line_accesses\":%.1f,"
		       "\"misses\":[",
		       i ? "," : "", t[i].tid, t[i].references, t[i].samples, t[i].accesses);
		for (size_t k = 0; k < nc; k++)
			cli_jprintf("%s%.1f", k ? "," : "", t[i].misses[k]);
		cli_jprintf("]}");
	}
	cli_jprintf("]}");
}

void cli_json_interval(const struct lp_interval *iv, double acc)
{
	cli_jprintf("\"miss_ratio_lo\":%.6f,\"miss_ratio_hi\":%.6f,\"misses_lo\":%.1f,\"misses_hi\":%.1f,"
	       "\"cliff\":%s",
	       iv->lo, iv->hi, iv->lo * acc, iv->hi * acc, iv->cliff ? "true" : "false");
	if (iv->cliff)
		cli_jprintf(",\"cliff_below\":%.6f,\"cliff_above\":%.6f", iv->below, iv->above);
	if (iv->spans)
		cli_jprintf(",\"span_checked\":%.6f", iv->checked);
	if (iv->band)
		cli_jprintf(",\"span_band\":true");
}

static void json_hot(size_t top, const struct lp_report *r)
{
	const struct lp_report_info *in = lp_report_info(r);
	const struct lp_report_pc *pcs;
	const struct lp_report_object *obj;
	const struct lp_report_pair *pr;
	size_t npc = lp_report_pcs(r, &pcs), nobj = lp_report_objects(r, &obj), npr = lp_report_pairs(r, &pr);

	cli_jprintf(",\"hot\":{\"policy\":\"%s\",\"at\":%" PRIu64 ",\"heap_blocks\":%zu,\"run_allocs\":%" PRIu64
	       ",\"touched_blocks_only\":%s,\"pcs\":[",
	       in->hot_policy, in->at, in->heap_blocks, in->run_allocs, in->touched_blocks_only ? "true" : "false");
	for (size_t i = 0; i < npc; i++) {
		cli_jprintf("%s{\"pc\":\"%#" PRIx64 "\",\"misses\":%.1f,\"misses_lo\":%.1f,\"misses_hi\":%.1f,"
		       "\"share\":%.6f,\"function\":",
		       i ? "," : "", pcs[i].pc, pcs[i].misses, pcs[i].misses_lo, pcs[i].misses_hi, pcs[i].share);
		if (pcs[i].name)
			cli_json_string(pcs[i].name);
		else
			cli_jprintf("null");
		cli_jprintf("}");
	}
	cli_jprintf("],\"objects\":[");
	for (size_t i = 0, k = 0; i < nobj; i++) {
		cli_jprintf("%s{\"object\":", i ? "," : "");
		cli_json_string(obj[i].name);
		cli_jprintf(",\"misses\":%.1f,\"misses_lo\":%.1f,\"misses_hi\":%.1f,\"share\":%.6f,\"pcs\":[",
		       obj[i].misses, obj[i].misses_lo, obj[i].misses_hi, obj[i].share);
		for (size_t first = k; k < npr && pr[k].object == i; k++) {
			cli_jprintf("%s{\"pc\":\"%#" PRIx64 "\",\"misses\":%.1f,\"misses_lo\":%.1f,\"misses_hi\":%.1f,"
			       "\"share\":%.6f,\"function\":",
			       k > first ? "," : "", pr[k].pc, pr[k].misses, pr[k].misses_lo, pr[k].misses_hi,
			       pr[k].share);
			if (pr[k].name)
				cli_json_string(pr[k].name);
			else
				cli_jprintf("null");
			cli_jprintf("}");
		}
		cli_jprintf("]}");
	}
	cli_jprintf("]");
	json_sources(top, r);
	cli_jprintf("}");
}

static void json_report(const struct report_opts *o, const struct lp_report *r)
{
	const struct lp_report_info *in = lp_report_info(r);
	const struct lp_curve *cv;
	const struct lp_report_cache *ca;
	const struct lp_report_window *w;
	size_t nc = lp_report_curves(r, &cv), nca = lp_report_caches(r, &ca), nw = lp_report_windows(r, &w);

	cli_jprintf("{\"version\":%d,\"profile\":", REPORT_JSON_VERSION);
	cli_json_string(o->profile);
	cli_jprintf(",\"line\":%g,\"samples\":%zu,\"accesses\":%" PRIu64 ",\"accesses_partial\":%s,\"cold\":%s",
	       in->line, in->samples, in->accesses, in->accesses_partial ? "true" : "false",
	       o->cold ? "true" : "false");
	cli_jprintf(",\"recorded_samples\":%zu,\"phases\":%zu", in->recorded, in->phases);
	cli_jprintf(",\"curves\":[");
	for (size_t k = 0; k < nc; k++) {
		cli_jprintf("%s{\"name\":\"%s\",\"points\":[", k ? "," : "", cv[k].name);
		for (size_t i = 0; i < cv[k].n; i++)
			cli_jprintf("%s[%" PRIu64 ",%.6f]", i ? "," : "", cv[k].size[i], cv[k].ratio[i]);
		cli_jprintf("],\"intervals\":[");
		for (size_t i = 0; cv[k].iv && i < cv[k].n; i++) {
			cli_jprintf("%s{\"size\":%" PRIu64 ",", i ? "," : "", cv[k].size[i]);
			cli_json_interval(&cv[k].iv[i], (double)in->accesses);
			cli_jprintf("}");
		}
		cli_jprintf("]}");
	}
	cli_jprintf("],\"caches\":[");
	for (size_t i = 0; i < nca; i++) {
		cli_jprintf("%s{\"cache\":", i ? "," : "");
		cli_json_string(ca[i].label);
		cli_jprintf(",\"size\":%" PRIu64 ",\"ways\":%" PRIu64 ",\"line\":%" PRIu64 ",\"lru\":%.6f,\"random\":%.6f,"
		       "\"lru_ref\":%.6f,\"random_ref\":%.6f,\"lru_unseen\":%.6f",
		       ca[i].size, ca[i].ways, ca[i].line, ca[i].lru, ca[i].random, ca[i].lru_ref, ca[i].random_ref,
		       ca[i].lru_unseen);
		if (o->resamples) {
			cli_jprintf(",\"lru_interval\":{");
			cli_json_interval(&ca[i].lru_iv, (double)in->accesses);
			cli_jprintf("},\"random_interval\":{");
			cli_json_interval(&ca[i].random_iv, (double)in->accesses);
			cli_jprintf("}");
		}
		cli_jprintf("}");
	}
	cli_jprintf("]");
	if (o->show_windows) {
		cli_jprintf(",\"windows\":{\"at\":%" PRIu64 ",\"length\":%" PRIu64 ",\"random\":[", in->at,
		       in->window_length);
		for (size_t i = 0; i < nw; i++)
			cli_jprintf("%s[%" PRIu64 ",%.6f]", i ? "," : "", w[i].start, w[i].ratio);
		cli_jprintf("]}");
	}
	if (o->top)
		json_hot(o->top, r);
	if (o->threads)
		json_threads(r);
	if (o->tl)
		report_timeline_json(o->tl);
	if (o->shared)
		cli_json_share(r, o->resamples > 0);
}

/* ---- the command -------------------------------------------------------- */

static int write_svg(const struct report_opts *o, const char *path, const struct lp_report *r,
		     const struct lp_curve *refs, size_t nrefs)
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
	return lp_svg_write(path, title, cv, nc, refs, nrefs, marks, nca);
}

/* DIR/working-set.svg, then DIR/index.html with that graph inline. */
static int write_html(const struct report_opts *o, const struct lp_report *r, struct lp_symbols *syms,
		      const struct lp_curve *refs, size_t nrefs, const struct lp_timeline *tl)
{
	struct report_html_in in = { .profile = o->profile, .r = r, .syms = syms, .top = o->top, .cold = o->cold,
				     .windows = 1, .intervals = o->resamples > 0 };
	const struct lp_timeline_row *rows;
	const struct lp_timeline_phase *ph;
	char svg[4096], tsvg[4096];

	if (mkdir(o->html, 0777) < 0 && errno != EEXIST) {
		cli_error("cannot create directory '%s': %s", o->html, strerror(errno));
		return -1;
	}
	if ((size_t)snprintf(svg, sizeof(svg), "%s/working-set.svg", o->html) >= sizeof(svg)) {
		cli_error("directory name too long: '%s'", o->html);
		return -1;
	}
	if (write_svg(o, svg, r, refs, nrefs) < 0) {
		cli_error("%s", lp_errmsg());
		return -1;
	}
	in.graph_svg = svg;
	/* the time view, when there is time to see: phases, or two windows */
	if (tl && (lp_timeline_phases(tl, &ph) || lp_timeline_rows(tl, &rows) >= 2)) {
		snprintf(tsvg, sizeof(tsvg), "%s/timeline.svg", o->html);
		if (lp_timeline_svg(tl, tsvg, o->profile) < 0) {
			cli_error("%s", lp_errmsg());
			return -1;
		}
		in.tl = tl;
		in.timeline_svg = tsvg;
	}
	return report_html_write(o->html, &in);
}

/* ---- several profiles: the ranks ------------------------------------------ */

static void text_ranks(const struct cli_reports *rs)
{
	char b[64];

	cli_jprintf("%zu profiles, summed (each rank on caches of its own; ratios weighted by line accesses):\n",
	       rs->n);
	cli_jprintf("%-14s %-16s %14s %14s %9s  %s\n", "rank", "host", "references", "line accesses", "samples",
	       "profile");
	for (size_t i = 0; i < rs->n; i++) {
		const struct lp_report_info *in = lp_report_info(rs->v[i].r);
		cli_jprintf("%-14s %-16s %14" PRIu64 " %14" PRIu64 " %9zu  %s\n",
		       cli_rank_label(rs->v[i].p, b, sizeof(b)), rs->v[i].p->host, in->references, in->accesses,
		       in->samples, rs->v[i].path);
	}
	cli_jprintf("\n");
}

static void csv_ranks(const struct cli_reports *rs)
{
	char b[256];

	cli_jprintf("\nprofile,rank,world_size,host,references,line_accesses,samples\n");
	for (size_t i = 0; i < rs->n; i++) {
		const struct lp_profile *p = rs->v[i].p;
		const struct lp_report_info *in = lp_report_info(rs->v[i].r);
		cli_jprintf("%s,", cli_csv_field(rs->v[i].path, b, sizeof(b)));
		if (p->mpi_rank >= 0)
			cli_jprintf("%" PRId32 ",", p->mpi_rank);
		else
			cli_jprintf(",");
		if (p->mpi_rank >= 0 && p->mpi_size)
			cli_jprintf("%" PRIu32, p->mpi_size);
		cli_jprintf(",%s,%" PRIu64 ",%" PRIu64 ",%zu\n", cli_csv_field(p->host, b, sizeof(b)), in->references,
		       in->accesses, in->samples);
	}
}

/* "rank":0,"world_size":2,"host":"h" (null when not an MPI rank). */
static void json_rank_fields(const struct cli_report *l)
{
	const struct lp_profile *p = l->p;

	if (p->mpi_rank >= 0)
		cli_jprintf(",\"rank\":%" PRId32, p->mpi_rank);
	else
		cli_jprintf(",\"rank\":null");
	if (p->mpi_rank >= 0 && p->mpi_size)
		cli_jprintf(",\"world_size\":%" PRIu32, p->mpi_size);
	else
		cli_jprintf(",\"world_size\":null");
	cli_jprintf(",\"host\":");
	cli_json_string(p->host);
}

static void json_ranks(const struct cli_reports *rs)
{
	cli_jprintf(",\"profiles\":[");
	for (size_t i = 0; i < rs->n; i++) {
		const struct lp_report_info *in = lp_report_info(rs->v[i].r);
		cli_jprintf("%s{\"profile\":", i ? "," : "");
		cli_json_string(rs->v[i].path);
		json_rank_fields(&rs->v[i]);
		cli_jprintf(",\"references\":%" PRIu64 ",\"accesses\":%" PRIu64 ",\"samples\":%zu}", in->references,
		       in->accesses, in->samples);
	}
	cli_jprintf("]");
}

/* ---- the command -------------------------------------------------------- */

static void print_one(const struct report_opts *o, const struct lp_report *r)
{
	if (!strcmp(o->format, "csv")) {
		csv_tables(o, r);
		if (o->tl)
			report_timeline_csv(o->tl);
	} else if (!strcmp(o->format, "json")) {
		json_report(o, r);
		cli_jprintf("}\n");
	} else {
		text_curves(o, r);
		text_tables(o, r);
		if (o->top)
			text_hot(o, r);
		if (o->threads)
			cli_text_threads(r);
		if (o->tl)
			report_timeline_text(o->tl);
		if (o->shared)
			cli_text_share(r, o->resamples > 0, o->top);
	}
}

/* Several profiles: the whole job's report and the ranks' table, or with
 * --per-rank each rank's (JSON: the job's with "ranks"). */
static void print_ranks(struct report_opts *o, const struct cli_reports *rs)
{
	char label[64], b[64];

	snprintf(label, sizeof(label), "%zu profiles", rs->n);
	if (!strcmp(o->format, "json")) {
		o->profile = label;
		json_report(o, rs->r);
		json_ranks(rs);
		if (o->per_rank) {
			printf(",\"ranks\":[");
			for (size_t i = 0; i < rs->n; i++) {
				o->profile = rs->v[i].path;
				printf("%s", i ? "," : "");
				json_report(o, rs->v[i].r);
				json_rank_fields(&rs->v[i]);
				printf("}");
			}
			printf("]");
		}
		printf("}\n");
		return;
	}
	if (!o->per_rank) {
		o->profile = label;
		if (!strcmp(o->format, "text"))
			text_ranks(rs);
		print_one(o, rs->r);
		if (!strcmp(o->format, "csv"))
			csv_ranks(rs);
		return;
	}
	for (size_t i = 0; i < rs->n; i++) {
		o->profile = rs->v[i].path;
		if (!strcmp(o->format, "text"))
			printf("%s== %s: %s, host %s ==\n\n", i ? "\n" : "", rs->v[i].path,
			       cli_rank_label(rs->v[i].p, b, sizeof(b)), rs->v[i].p->host);
		else
			printf("%s# %s: %s, host %s\n", i ? "\n" : "", rs->v[i].path,
			       cli_rank_label(rs->v[i].p, b, sizeof(b)), rs->v[i].p->host);
		print_one(o, rs->v[i].r);
	}
	if (!strcmp(o->format, "csv"))
		csv_ranks(rs);
}

static int run(int argc, char **argv)
{
	struct report_opts o = { .sizes_arg = "4K..64M", .format = "text", .top = 10, .fill = LP_STATCACHE_FILL_AUTO,
				 .resamples = LP_INTERVAL_RESAMPLES,
				 .policies = LP_REPORT_LRU | LP_REPORT_RANDOM };
	struct cli_reports rs = { 0 };
	struct lp_timeline *tl = NULL;
	struct lp_curve *refs = NULL;
	uint64_t *sizes = NULL;
	size_t nsizes = 0, nrefs = 0;
	char *tmp = NULL; /* -o: the temporary name standard output goes to */
	int status;

	if ((status = parse_options(argc, argv, &o)) >= 0)
		return status;
	if (!o.jobs)
		o.jobs = cli_default_jobs();
	if (cli_parse_size_list(o.sizes_arg, &sizes, &nsizes) < 0)
		return cli_usage_error(&cmd_report, "bad --sizes '%s'", o.sizes_arg);
	if (o.refpath && lp_curves_read_csv(o.refpath, &refs, &nrefs) < 0) {
		cli_error("%s", lp_errmsg());
		free(sizes);
		return CLI_ERROR;
	}
	status = cli_reports_load(&rs, o.profiles, o.nprofiles, o.line,
				  (struct lp_report_params){ .sizes = sizes, .nsizes = nsizes, .caches = o.caches,
							     .ncaches = o.ncaches, .policies = o.policies,
							     .window = o.window, .cold = o.cold, .fill = o.fill,
							     .windows = o.show_windows || o.html, .at = o.at,
							     .top = o.top, .threads = o.threads || o.html, .share = o.shared,
							     .resamples = o.resamples, .jobs = o.jobs,
							     .seed = 1 });
	if (status == CLI_ERROR)
		goto out;
	/* the HTML page of one profile has the time view too */
	if (o.timeline || o.timeline_svg || (o.html && rs.n == 1)) {
		if (rs.n > 1) {
			status = cli_usage_error(&cmd_report, "--timeline takes one profile");
			goto out;
		}
		if (report_timeline_build(&tl, &rs.v[0], o.caches, o.ncaches, o.policies, o.cold, o.fill, o.window,
					  o.top) != CLI_OK) {
			status = CLI_ERROR;
			goto out;
		}
		o.tl = o.timeline ? tl : NULL;
	}
	if (o.output && cli_stdout_to(o.output, &tmp) < 0) {
		status = CLI_ERROR;
		goto out;
	}
	if (rs.n > 1)
		print_ranks(&o, &rs);
	else
		print_one(&o, rs.r);
	o.profile = rs.n > 1 ? "several profiles" : o.profiles[0];
	if (o.svg && write_svg(&o, o.svg, rs.r, refs, nrefs) < 0) {
		cli_error("%s", lp_errmsg());
		status = CLI_ERROR;
	}
	if (o.html && write_html(&o, rs.r, rs.n > 1 ? NULL : rs.v[0].syms, refs, nrefs, tl) < 0)
		status = CLI_ERROR;
	if (tl && o.timeline_svg && lp_timeline_svg(tl, o.timeline_svg, o.profile) < 0) {
		cli_error("%s", lp_errmsg());
		status = CLI_ERROR;
	}
	if (tmp && cli_stdout_commit(o.output, tmp, status != CLI_ERROR) < 0)
		status = CLI_ERROR;
out:
	lp_timeline_free(tl);
	cli_reports_release(&rs);
	lp_curves_free(refs, nrefs);
	free(sizes);
	return status;
}
