/* locprof annotate: the source of a profile's hottest files, each line
 * with its predicted misses and their share, as cg_annotate shows
 * Cachegrind's counts; and the functions by misses. The library groups the
 * misses by line and function (lp_hotspots, from lp_report) and reads the
 * sources (lp_source_read); this file formats them. */
#include "cli.h"

#include <locprof/profile.h>
#include <locprof/report.h>

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
	"usage: locprof annotate PROFILE.lpp... [--cache SPEC|L1|L2|L3] [--source-dir DIR ...]\n"
	"                           [--policy lru|random] [--top N] [--threshold PCT]\n"
	"                           [--context N] [--cold] [--line BYTES] [--format text|csv|json]\n"
	"                           [-o FILE] [FILE ...]\n"
	"\n"
	"Show the source of the files where a profile's misses fall, each line\n"
	"with the misses predicted for one cache (charged to the access that\n"
	"misses), their share of all misses and the line accesses there, like\n"
	"cg_annotate; first the functions and the lines by misses. Sources are\n"
	"read from the paths in the debug information; a file not found is said\n"
	"in one line and its lines are listed without their text. Works on a\n"
	"profile from any backend of a program built with -g. FILE arguments\n"
	"(a path, or its end such as 'matmul.c') choose the files to show.\n"
	"Several profiles (the leading arguments named *.lpp: the ranks of an MPI\n"
	"job) are summed, each rank on caches of its own.\n"
	"\n"
	"  -c, --cache SPEC     the cache of the misses: SIZE:ASSOC:LINE[:lru] (e.g.\n"
	"                       32K:8:64; ASSOC a number or 'full', 0 also meaning\n"
	"                       full), or L1, L2, L3 for that level of this machine\n"
	"                       (default 32K fully associative)\n"
	"  -I, --source-dir DIR\n"
	"                       look for sources in DIR first (repeatable): DIR and\n"
	"                       the path's tails, /a/b/c.c as DIR/a/b/c.c, DIR/b/c.c,\n"
	"                       DIR/c.c\n"
	"  -p, --policy P       lru (StatStack, set-associative by the placement model;\n"
	"                       default) or random (StatCache, fully associative)\n"
	"  -t, --top N          rows of the function and line tables (default 20)\n"
	"      --threshold PCT  show the files with at least PCT% of the misses\n"
	"                       (default 1; FILE arguments show theirs whatever it is)\n"
	"  -C, --context N      lines shown around each line with accesses (default 3)\n"
	"      --cold           include cold misses (dangling samples as misses)\n"
	"  -l, --line BYTES     line size to use when the profile has several\n"
	"  -F, --format FMT     text (default); csv (the function and line tables, then\n"
	"                       each file's lines with counts and their text) or json\n"
	"  -o, --output FILE    write to FILE instead of standard output\n"
	"  -h, --help           this help\n";

static int run(int argc, char **argv);

const struct cli_command cmd_annotate = {
	.name = "annotate",
	.summary = "source lines with their predicted misses, like cg_annotate",
	.usage = usage,
	.run = run,
};

enum { MAX_DIRS = 64, MAX_CACHES = 16 };

struct annotate_opts {
	const char *profile, *format, *output;
	char **profiles;
	size_t nprofiles;
	const char *dirs[MAX_DIRS];
	size_t ndirs;
	char **files;
	size_t nfiles;
	struct lp_report_cache caches[MAX_CACHES];
	size_t ncaches;
	unsigned policies;
	uint64_t top, context, line;
	double threshold;
	int cold;
};

/* Returns -1 to go on, else the exit status. */
static int parse_options(int argc, char **argv, struct annotate_opts *o)
{
	enum { OPT_COLD = 1000, OPT_THRESHOLD };
	static const struct option opts[] = {
		{ "cache", required_argument, NULL, 'c' },   { "source-dir", required_argument, NULL, 'I' },
		{ "policy", required_argument, NULL, 'p' },  { "top", required_argument, NULL, 't' },
		{ "context", required_argument, NULL, 'C' }, { "line", required_argument, NULL, 'l' },
		{ "cold", no_argument, NULL, OPT_COLD },     { "threshold", required_argument, NULL, OPT_THRESHOLD },
		{ "format", required_argument, NULL, 'F' },  { "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },          { 0 },
	};
	int c;

	while ((c = cli_getopt(argc, argv, "c:I:p:t:C:l:F:o:h", opts)) != -1) {
		switch (c) {
		case 'c':
			if (!strcmp(optarg, "host"))
				return cli_usage_error(&cmd_annotate, "annotate takes one cache: L1, L2 or L3, not host");
			if (o->ncaches)
				return cli_usage_error(&cmd_annotate, "annotate takes one --cache (one annotation per "
								      "cache: run it once for each)");
			if (cli_report_cache_option(&cmd_annotate, optarg, o->caches, MAX_CACHES, &o->ncaches))
				return CLI_USAGE;
			break;
		case 'I':
			if (o->ndirs >= MAX_DIRS)
				return cli_usage_error(&cmd_annotate, "more than %d --source-dir", MAX_DIRS);
			o->dirs[o->ndirs++] = optarg;
			break;
		case 'p':
			o->policies = !strcmp(optarg, "lru") ? LP_REPORT_LRU : !strcmp(optarg, "random") ? LP_REPORT_RANDOM : 0;
			if (!o->policies)
				return cli_usage_error(&cmd_annotate, "bad --policy '%s' (lru or random)", optarg);
			break;
		case 't':
			if (cli_parse_u64(optarg, &o->top) < 0)
				return cli_usage_error(&cmd_annotate, "bad --top '%s'", optarg);
			break;
		case 'C':
			if (cli_parse_u64(optarg, &o->context) < 0 || o->context > 1000)
				return cli_usage_error(&cmd_annotate, "bad --context '%s'", optarg);
			break;
		case 'l':
			if (cli_parse_size(optarg, &o->line) < 0)
				return cli_usage_error(&cmd_annotate, "bad --line '%s'", optarg);
			break;
		case OPT_THRESHOLD:
			if (cli_parse_double(optarg, &o->threshold) < 0 || o->threshold < 0 || o->threshold > 100)
				return cli_usage_error(&cmd_annotate, "bad --threshold '%s' (a percentage)", optarg);
			break;
		case OPT_COLD: o->cold = 1; break;
		case 'F': o->format = optarg; break;
		case 'o': o->output = optarg; break;
		case 'h': return cli_print_usage(&cmd_annotate);
		default: return cli_usage_error(&cmd_annotate, "%s", cli_getopt_error());
		}
	}
	if (argc - optind < 1)
		return cli_usage_error(&cmd_annotate, "annotate takes a profile");
	o->profile = argv[optind];
	o->profiles = argv + optind;
	o->nprofiles = 1;
	while (optind + (int)o->nprofiles < argc && cli_has_suffix(argv[optind + o->nprofiles], ".lpp"))
		o->nprofiles++;
	o->files = argv + optind + o->nprofiles;
	o->nfiles = (size_t)(argc - optind) - o->nprofiles;
	if (cli_profiles_distinct(&cmd_annotate, o->profiles, o->nprofiles) != CLI_OK)
		return CLI_USAGE;
	if (strcmp(o->format, "text") && strcmp(o->format, "csv") && strcmp(o->format, "json"))
		return cli_usage_error(&cmd_annotate, "unknown format '%s' (text, csv, json)", o->format);
	return -1;
}

/* Whether path is, or ends with the path components of, one of the FILE
 * arguments. */
static int file_chosen(const struct annotate_opts *o, const char *path)
{
	size_t lp = strlen(path);

	for (size_t i = 0; i < o->nfiles; i++) {
		size_t lf = strlen(o->files[i]);

		if (lf <= lp && !strcmp(path + lp - lf, o->files[i]) && (lf == lp || path[lp - lf - 1] == '/'))
			return 1;
	}
	return 0;
}

static void header(const struct annotate_opts *o, const struct lp_report *r, const char *cache)
{
	const struct lp_report_info *in = lp_report_info(r);
	const struct lp_hotspots *h = lp_report_hotspots(r);
	double acc, misses;

	lp_hotspots_totals(h, &acc, &misses);
	printf("profile %s: %zu samples, %" PRIu64 " line accesses of %g bytes, %s\n", o->profile, in->samples,
	       in->accesses, in->line, o->cold ? "cold misses included" : "cold misses excluded");
	printf("predicted %s misses in %s, charged to the line of the access that misses: %.0f\n", in->hot_policy,
	       cache, misses);
}

/* "[lo, hi] " in a column of 22, or nothing for counted misses */
static const char *row_interval(int sampled, double lo, double hi, char *buf, size_t len)
{
	char b[48];

	if (!sampled)
		return "";
	snprintf(b, sizeof(b), "[%.0f, %.0f]", lo, hi);
	snprintf(buf, len, "%21s ", b);
	return buf;
}

/* Whether the misses are a profile's estimates, each row with its 95%
 * interval (a trace's are counted: the interval is the count). */
static int misses_sampled(const struct lp_hotspots *h)
{
	const struct lp_source_function *f;
	size_t nf = lp_hotspots_functions(h, &f);

	for (size_t i = 0; i < nf; i++)
		if (f[i].misses_hi > f[i].misses_lo)
			return 1;
	return 0;
}

static void functions_table(const struct annotate_opts *o, const struct lp_hotspots *h)
{
	const struct lp_source_function *f;
	const struct lp_source_line *l;
	size_t nf = lp_hotspots_functions(h, &f), nl = lp_hotspots_lines(h, &l);

	int sampled = misses_sampled(h);
	char iv[64];

	nf = o->top && nf > o->top ? o->top : nf;
	nl = o->top && nl > o->top ? o->top : nl;
	printf("\nfunctions by misses (inlined code: its function in the caller%s):\n",
	       sampled ? "; 95% interval: the row's sampling error" : "");
	printf("%12s %s%8s %14s  %s\n", "misses", sampled ? "         95% interval " : "", "share", "line accesses",
	       "function");
	for (size_t i = 0; i < nf; i++)
		printf("%12.0f %s%7.1f%% %14.0f  %s\n", f[i].misses,
		       row_interval(sampled, f[i].misses_lo, f[i].misses_hi, iv, sizeof(iv)), 100 * f[i].share,
		       f[i].accesses, f[i].label);
	printf("\nlines by misses:\n");
	printf("%12s %s%8s %14s  %s\n", "misses", sampled ? "         95% interval " : "", "share", "line accesses",
	       "file:line");
	for (size_t i = 0; i < nl; i++)
		printf("%12.0f %s%7.1f%% %14.0f  %s:%d\n", l[i].misses,
		       row_interval(sampled, l[i].misses_lo, l[i].misses_hi, iv, sizeof(iv)), 100 * l[i].share,
		       l[i].accesses, l[i].file, l[i].line);
}

static int file_shown(const struct annotate_opts *o, const struct lp_source_file *f)
{
	return o->nfiles ? file_chosen(o, f->path) : 100 * f->share >= o->threshold;
}

/* The source of file f, or NULL after one warning line. */
static struct lp_source_text *read_source(const struct annotate_opts *o, const struct lp_source_file *f)
{
	struct lp_source_text *src = NULL;

	if (lp_source_read(&src, f->path, o->dirs, o->ndirs) < 0)
		cli_warn("%s%s; its lines are shown without their text", lp_errmsg(),
			 o->ndirs ? "" : " (--source-dir DIR to look elsewhere)");
	return src;
}

static const char *line_text(const struct lp_source_text *src, int line)
{
	return src && line > 0 && (size_t)line <= src->n ? src->lines[line - 1] : NULL;
}

/* One line of a file's listing; sampled: with the interval column. */
static void print_line(const struct lp_source_line *l, int sampled, int number, const char *text)
{
	char iv[64];

	if (l)
		printf("%12.0f %s%7.1f%% %14.0f %6d  %s\n", l->misses,
		       row_interval(sampled, l->misses_lo, l->misses_hi, iv, sizeof(iv)), 100 * l->share, l->accesses,
		       number, text);
	else
		printf("%12s %s%8s %14s %6d  %s\n", ".", sampled ? "                    . " : "", ".", ".", number,
		       text);
}

static void listing_header(int sampled, int with_text)
{
	printf("%12s %s%8s %14s %6s%s\n", "misses", sampled ? "         95% interval " : "", "share",
	       "line accesses", "line", with_text ? "  source" : "");
}

/* Lines from..to of a file with their counts (l: its lines with counts,
 * by number, from *k on). Returns 1 when a line with counts lies past the
 * end of the text. */
static int print_chunk(const struct lp_source_text *src, const struct lp_source_line *l, size_t nl, size_t *k,
		       int sampled, int from, int to)
{
	int bad = 0;

	for (int n = from; n <= to; n++) {
		const struct lp_source_line *here = NULL;

		while (*k < nl && l[*k].line < n)
			(*k)++;
		if (*k < nl && l[*k].line == n)
			here = &l[*k];
		if ((size_t)n <= src->n)
			print_line(here, sampled, n, src->lines[n - 1]);
		else if (here) {
			print_line(here, sampled, n, "");
			bad = 1;
		}
	}
	return bad;
}

/* One file: its text with the counts of its lines, in chunks around the
 * lines with counts (context lines each side; chunks that touch are
 * merged); without the text (not found), its lines with counts only. */
static void annotate_file(const struct annotate_opts *o, const struct lp_hotspots *h, size_t f)
{
	const struct lp_source_file *files;
	const struct lp_source_line *l;
	struct lp_source_text *src = NULL;
	size_t nl = lp_hotspots_file_lines(h, f, &l), k = 0;
	int start = 0, end = 0, bad = 0, chunks = 0, ctx = (int)o->context, sampled = misses_sampled(h);

	lp_hotspots_files(h, &files);
	printf("\n-- %s: %.0f misses, %.1f%%\n", files[f].path, files[f].misses, 100 * files[f].share);
	if (!(src = read_source(o, &files[f]))) {
		listing_header(sampled, 0);
		for (size_t i = 0; i < nl; i++)
			print_line(&l[i], sampled, l[i].line, "");
		return;
	}
	if (strcmp(src->path, files[f].path))
		printf("   (source read from %s)\n", src->path);
	listing_header(sampled, 1);
	for (size_t i = 0; i <= nl; i++) {
		int from = i < nl ? (l[i].line > ctx ? l[i].line - ctx : 1) : 0;

		if (i < nl && end && from <= end + 1) {
			end = l[i].line + ctx;
			continue;
		}
		if (end) {
			if (chunks++)
				printf("%12s\n", "...");
			bad |= print_chunk(src, l, nl, &k, sampled, start, end);
		}
		if (i < nl) {
			start = from;
			end = l[i].line + ctx;
		}
	}
	if (bad)
		cli_warn("%s has fewer lines than the debug information names: it changed since the build",
			 src->path);
	lp_source_free(src);
}

/* ---- csv and json: the tables, then each file's lines with counts ---- */

static void csv_annotate(const struct annotate_opts *o, const struct lp_report *r, const char *cache)
{
	const struct lp_hotspots *h = lp_report_hotspots(r);
	const struct lp_source_function *f;
	const struct lp_source_line *l;
	const struct lp_source_file *files;
	size_t nf = lp_hotspots_functions(h, &f), nl = lp_hotspots_lines(h, &l), nfiles = lp_hotspots_files(h, &files);
	char b1[512], b2[512];

	printf("# locprof annotate %s: predicted %s misses in %s, line accesses of the whole run\n", o->profile,
	       lp_report_info(r)->hot_policy, cache);
	cli_csv_source_functions(f, o->top && nf > o->top ? o->top : nf);
	printf("\n");
	cli_csv_source_lines(l, o->top && nl > o->top ? o->top : nl);
	printf("\npath,line,misses,share,line_accesses,source,misses_lo,misses_hi\n");
	for (size_t k = 0; k < nfiles; k++) {
		struct lp_source_text *src;
		size_t n;

		if (!file_shown(o, &files[k]))
			continue;
		src = read_source(o, &files[k]);
		n = lp_hotspots_file_lines(h, k, &l);
		for (size_t i = 0; i < n; i++) {
			const char *text = line_text(src, l[i].line);

			printf("%s,%d,%.1f,%.6f,%.1f,", cli_csv_field(files[k].path, b1, sizeof(b1)), l[i].line,
			       l[i].misses, l[i].share, l[i].accesses);
			printf("%s,%.1f,%.1f\n", text ? cli_csv_field(text, b2, sizeof(b2)) : "", l[i].misses_lo,
			       l[i].misses_hi);
		}
		lp_source_free(src);
	}
}

static void json_line(const struct lp_source_line *l, const char *text, int first)
{
	cli_jprintf("%s{\"line\":%d,\"misses\":%.1f,\"misses_lo\":%.1f,\"misses_hi\":%.1f,\"share\":%.6f,"
	       "\"line_accesses\":%.1f,\"text\":",
	       first ? "" : ",", l->line, l->misses, l->misses_lo, l->misses_hi, l->share, l->accesses);
	if (text)
		cli_json_string(text);
	else
		cli_jprintf("null");
	cli_jprintf("}");
}

static void json_annotate(const struct annotate_opts *o, const struct lp_report *r, const char *cache)
{
	const struct lp_report_info *in = lp_report_info(r);
	const struct lp_hotspots *h = lp_report_hotspots(r);
	const struct lp_source_function *f;
	const struct lp_source_line *l;
	const struct lp_source_file *files;
	size_t nf = lp_hotspots_functions(h, &f), nl = lp_hotspots_lines(h, &l), nfiles = lp_hotspots_files(h, &files);
	double acc, misses;

	lp_hotspots_totals(h, &acc, &misses);
	cli_jprintf("{\"profile\":");
	cli_json_string(o->profile);
	cli_jprintf(",\"line\":%g,\"samples\":%zu,\"accesses\":%" PRIu64 ",\"cold\":%s,\"policy\":\"%s\",\"cache\":", in->line,
	       in->samples, in->accesses, o->cold ? "true" : "false", in->hot_policy);
	cli_json_string(cache);
	cli_jprintf(",\"misses\":%.1f,\"functions\":", misses);
	cli_json_source_functions(f, o->top && nf > o->top ? o->top : nf);
	cli_jprintf(",\"lines\":");
	cli_json_source_lines(l, o->top && nl > o->top ? o->top : nl);
	cli_jprintf(",\"files\":[");

	for (size_t k = 0, shown = 0; k < nfiles; k++) {
		struct lp_source_text *src;
		size_t n;

		if (!file_shown(o, &files[k]))
			continue;
		src = read_source(o, &files[k]);
		cli_jprintf("%s{\"path\":", shown++ ? "," : "");
		cli_json_string(files[k].path);
		cli_jprintf(",\"read_from\":");
		if (src)
			cli_json_string(src->path);
		else
			cli_jprintf("null");
		cli_jprintf(",\"misses\":%.1f,\"share\":%.6f,\"lines\":[", files[k].misses, files[k].share);
		n = lp_hotspots_file_lines(h, k, &l);
		for (size_t i = 0; i < n; i++)
			json_line(&l[i], line_text(src, l[i].line), i == 0);
		cli_jprintf("]}");
		lp_source_free(src);
	}
	cli_jprintf("]}\n");
}

static int run(int argc, char **argv)
{
	struct annotate_opts o = { .format = "text", .policies = LP_REPORT_LRU, .top = 20, .context = 3,
				   .threshold = 1 };
	struct cli_reports l = { 0 };
	char label[64];
	const struct lp_source_file *files;
	const struct lp_hotspots *h;
	uint64_t sizes[1] = { 32768 };
	char cache[96], b[32], *tmp = NULL; /* -o: the temporary name standard output goes to */
	size_t nfiles, shown = 0;
	int status;

	if ((status = parse_options(argc, argv, &o)) >= 0)
		return status;
	if (o.ncaches)
		sizes[0] = o.caches[0].size;
	status = cli_reports_load(&l, o.profiles, o.nprofiles, o.line,
				 (struct lp_report_params){ .sizes = sizes, .nsizes = 1, .caches = o.caches,
							    .ncaches = o.ncaches, .policies = o.policies,
							    .cold = o.cold, .fill = LP_STATCACHE_FILL_AUTO,
							    .at = sizes[0], .at_ways = o.ncaches ? o.caches[0].ways : 0,
							    .top = 1 });
	if (status == CLI_ERROR)
		goto out;
	if (l.n > 1) {
		snprintf(label, sizeof(label), "%zu profiles summed", l.n);
		o.profile = label;
	}
	if (o.output && cli_stdout_to(o.output, &tmp) < 0) {
		status = CLI_ERROR;
		goto out;
	}
	h = lp_report_hotspots(l.r);
	if (o.ncaches && o.policies == LP_REPORT_LRU)
		snprintf(cache, sizeof(cache), "%s", o.caches[0].label);
	else
		snprintf(cache, sizeof(cache), "%s fully associative", cli_format_size(sizes[0], b, sizeof(b)));
	nfiles = lp_hotspots_files(h, &files);
	if (!nfiles && lp_report_info(l.r)->samples) /* without samples, loading said so */
		cli_warn("no source lines: the profile's pcs have no line information (build with -g, keep the "
			 "binaries that ran)");
	if (!strcmp(o.format, "json")) {
		json_annotate(&o, l.r, cache);
		goto out;
	}
	if (!strcmp(o.format, "csv")) {
		csv_annotate(&o, l.r, cache);
		goto out;
	}
	header(&o, l.r, cache);
	if (!nfiles)
		goto out;
	functions_table(&o, h);
	for (size_t i = 0; i < nfiles; i++) {
		if (!file_shown(&o, &files[i]))
			continue;
		annotate_file(&o, h, i);
		shown++;
	}
	if (!shown)
		cli_warn(o.nfiles ? "no misses in the files named" : "no file holds %g%% of the misses", o.threshold);
out:
	if (tmp && cli_stdout_commit(o.output, tmp, status != CLI_ERROR) < 0)
		status = CLI_ERROR;
	cli_reports_release(&l);
	return status;
}
