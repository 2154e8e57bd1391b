/* locprof report: working-set graphs, named caches, windows and hot pcs
 * from a profile. */
#include "cli.h"

#include <locprof/model.h>
#include <locprof/profile.h>
#include <locprof/report.h>
#include <locprof/symbol.h>

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
	"usage: locprof report PROFILE.lpp [--sizes 4K..64M] [--cache SIZE:WAYS:LINE ...]\n"
	"                      [--cache host] [--policy lru,random] [--format text|csv|json]\n"
	"                      [--svg FILE] [--reference CSV] [--window [N]] [--top N]\n"
	"                      [--at SIZE] [--cold] [--fill|--no-fill]\n"
	"\n"
	"Predict miss ratios from a profile: the working-set graph under LRU\n"
	"(StatStack) and random replacement (StatCache), fully associative; the\n"
	"miss ratio of named caches (set-associative LRU by the binomial model,\n"
	"random by StatCache); the ratio per time window; and the pcs whose\n"
	"accesses miss most, and the data objects (heap blocks by allocation\n"
	"call site, globals by symbol) they miss on. Cold misses are excluded\n"
	"unless --cold is given.\n"
	"\n"
	"  -s, --sizes LIST     cache sizes of the graph (default 4K..64M)\n"
	"  -c, --cache SPEC     a cache SIZE:WAYS:LINE (e.g. 32K:8:64; WAYS 0 = fully\n"
	"                       associative), or 'host' for this machine's data caches\n"
	"  -p, --policy LIST    lru, random or both (default lru,random)\n"
	"  -F, --format FMT     text (default), csv (the curve CSV of docs/formats.md)\n"
	"                       or json\n"
	"  -o, --svg FILE       also plot the graph as SVG\n"
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
	"  -h, --help           this help\n";

static int run(int argc, char **argv);

const struct cli_command cmd_report = {
	.name = "report",
	.summary = "working-set graphs, cache predictions and hot pcs from a profile",
	.usage = usage,
	.run = run,
};

struct cache {
	char label[64];
	uint64_t size, ways, line;
	double lru, random;
};

static int read_sys(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	if (!fgets(buf, (int)len, f)) {
		fclose(f);
		return -1;
	}
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

/* /sys/devices/system/cpu/cpu0/cache/index*: the data and unified caches. */
static int host_caches(struct cache *v, size_t *n, size_t cap)
{
	for (int i = 0; i < 16 && *n < cap; i++) {
		char p[128], level[16], type[32], size[32], ways[16], line[16];
		uint64_t s, w, l;
#define SYS(field, buf) \
	(snprintf(p, sizeof(p), "/sys/devices/system/cpu/cpu0/cache/index%d/" field, i), \
	 read_sys(p, buf, sizeof(buf)))
		if (SYS("level", level) < 0)
			break;
		if (SYS("type", type) < 0 || !strcmp(type, "Instruction") || SYS("size", size) < 0 ||
		    SYS("ways_of_associativity", ways) < 0 || SYS("coherency_line_size", line) < 0)
			continue;
#undef SYS
		if (cli_parse_size(size, &s) < 0 || cli_parse_u64(ways, &w) < 0 || cli_parse_u64(line, &l) < 0)
			continue;
		struct cache *c = &v[(*n)++];
		memset(c, 0, sizeof(*c));
		c->size = s;
		c->ways = w;
		c->line = l;
		snprintf(c->label, sizeof(c->label), "L%s %s", level, size);
	}
	return 0;
}

static int parse_cache(const char *spec, struct cache *c)
{
	char buf[64];
	char *a, *b;

	if (strlen(spec) >= sizeof(buf))
		return -1;
	strcpy(buf, spec);
	memset(c, 0, sizeof(*c));
	a = strchr(buf, ':');
	if (!a)
		return -1;
	*a++ = '\0';
	b = strchr(a, ':');
	c->line = 64;
	if (b) {
		*b++ = '\0';
		if (cli_parse_size(b, &c->line) < 0 || !c->line)
			return -1;
	}
	if (cli_parse_size(buf, &c->size) < 0 || cli_parse_u64(a, &c->ways) < 0 || !c->size)
		return -1;
	snprintf(c->label, sizeof(c->label), "%s", spec);
	return 0;
}

struct pcrow {
	uint64_t pc;
	double misses;
};

static int cmp_pcrow(const void *a, const void *b)
{
	const struct pcrow *x = a, *y = b;
	if (x->misses != y->misses)
		return x->misses > y->misses ? -1 : 1;
	return x->pc < y->pc ? -1 : x->pc > y->pc;
}

static int cmp_pc(const void *a, const void *b)
{
	const struct pcrow *x = a, *y = b;
	return x->pc < y->pc ? -1 : x->pc > y->pc;
}

/* ---- pc symbolisation ----------------------------------------------------
 * The binaries the profile's mappings name, read once when the top pcs are
 * printed; without them (a profile of a program whose files are gone or
 * were rebuilt) pcs stay addresses. */
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

/* "func (file.c:12)", "func" or the address. */
static const char *pc_name(struct lp_symbols *syms, uint64_t pc, char *buf, size_t len)
{
	struct lp_code_loc loc;

	if (syms && lp_symbols_pc(syms, pc, &loc) && loc.function) {
		if (loc.file)
			snprintf(buf, len, "%s (%s:%d)", loc.function, loc.file, loc.line);
		else
			snprintf(buf, len, "%s", loc.function);
	} else {
		snprintf(buf, len, "%#" PRIx64, pc);
	}
	return buf;
}

/* Sum per-sample miss probabilities by the pc of the reusing access. */
static size_t top_pcs(const struct lp_profile *p, size_t first, size_t n, const double *prob,
		      struct pcrow *rows, double *total)
{
	size_t k = 0, m = 0;

	*total = 0;
	for (size_t i = 0; i < n; i++) {
		rows[k].pc = p->samples[first + i].reuse_pc;
		rows[k++].misses = prob[i];
		*total += prob[i];
	}
	qsort(rows, k, sizeof(*rows), cmp_pc);
	for (size_t i = 0; i < k; i++) {
		if (m && rows[m - 1].pc == rows[i].pc)
			rows[m - 1].misses += rows[i].misses;
		else
			rows[m++] = rows[i];
	}
	qsort(rows, m, sizeof(*rows), cmp_pcrow);
	return m;
}

/* Data objects by predicted misses: each sample's miss probability goes
 * to the heap block holding its address (named by its allocation call
 * site, from the profile's allocation events), else to the global
 * variable there (symbols of the profile's mappings), else to "(other)"
 * (stack, unknown). Separate from top_pcs so that symbolising pcs does
 * not touch it. */
struct objrow {
	char name[160];
	double misses;
};

static int cmp_objrow(const void *a, const void *b)
{
	const struct objrow *x = a, *y = b;
	if (x->misses != y->misses)
		return x->misses > y->misses ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int cmp_objname(const void *a, const void *b)
{
	return strcmp(((const struct objrow *)a)->name, ((const struct objrow *)b)->name);
}

static void print_top_objects(const struct lp_profile *p, size_t first, size_t n, const double *prob,
			      uint64_t top, const char *policy, const char *at)
{
	struct lp_objects *objs = NULL;
	struct lp_symbols *syms = NULL;
	struct objrow *rows = malloc((n ? n : 1) * sizeof(*rows));
	size_t m = 0;
	double total = 0;

	if (!rows || lp_objects_new(&objs, p) < 0) {
		cli_warn("no data objects: %s", lp_errmsg());
		free(rows);
		return;
	}
	if (p->mappings.n && lp_symbols_new(&syms, &p->mappings, NULL) < 0)
		syms = NULL; /* globals stay "(other)" */
	for (size_t i = 0; i < n; i++) {
		const struct lp_sample *s = &p->samples[first + i];
		uint64_t start, size, site;
		struct lp_data_sym ds;
		char nb[150];
		if (prob[i] <= 0)
			continue;
		if (lp_objects_find_tid(objs, s->addr, s->time, s->tid, &start, &size, &site))
			snprintf(rows[m].name, sizeof(rows[m].name), "heap@%s", pc_name(syms, site, nb, sizeof(nb)));
		else if (syms && lp_symbols_data(syms, s->addr, &ds) && ds.name)
			snprintf(rows[m].name, sizeof(rows[m].name), "%s", ds.name);
		else
			snprintf(rows[m].name, sizeof(rows[m].name), "(other)");
		rows[m++].misses = prob[i];
		total += prob[i];
	}
	qsort(rows, m, sizeof(*rows), cmp_objname);
	size_t k = 0;
	for (size_t i = 0; i < m; i++) {
		if (k && !strcmp(rows[k - 1].name, rows[i].name))
			rows[k - 1].misses += rows[i].misses;
		else
			rows[k++] = rows[i];
	}
	qsort(rows, k, sizeof(*rows), cmp_objrow);
	if (p->alloc_flags & LP_ALLOCS_TOUCHED)
		printf("\ntop data objects by predicted %s misses at %s (%zu heap blocks in the profile, the "
		       "touched ones of %" PRIu64 " allocated):\n",
		       policy, at, lp_objects_count(objs), lp_objects_run_allocs(objs));
	else
		printf("\ntop data objects by predicted %s misses at %s (%zu heap blocks in the profile):\n",
		       policy, at, lp_objects_count(objs));
	printf("%32s %12s %8s\n", "object", "misses", "share");
	for (size_t i = 0; i < k && i < top; i++)
		printf("%32s %12.0f %7.1f%%\n", rows[i].name, rows[i].misses / (p->rate > 0 ? p->rate : 1),
		       100 * rows[i].misses / total);
	lp_symbols_free(syms);
	lp_objects_free(objs);
	free(rows);
}

static int run(int argc, char **argv)
{
	enum { OPT_COLD = 1000, OPT_FILL, OPT_NO_FILL };
	static const struct option opts[] = {
		{ "sizes", required_argument, NULL, 's' },  { "cache", required_argument, NULL, 'c' },
		{ "policy", required_argument, NULL, 'p' }, { "format", required_argument, NULL, 'F' },
		{ "svg", required_argument, NULL, 'o' },    { "reference", required_argument, NULL, 'r' },
		{ "window", optional_argument, NULL, 'w' }, { "top", required_argument, NULL, 't' },
		{ "at", required_argument, NULL, 'a' },     { "line", required_argument, NULL, 'l' },
		{ "cold", no_argument, NULL, OPT_COLD },    { "help", no_argument, NULL, 'h' },
		{ "fill", no_argument, NULL, OPT_FILL },
		{ "no-fill", no_argument, NULL, OPT_NO_FILL },
		{ 0 },
	};
	const char *sizes_arg = "4K..64M", *format = "text", *svg = NULL, *refpath = NULL;
	int want_lru = 1, want_random = 1, show_windows = 0, cold = 0, fill = LP_STATCACHE_FILL_AUTO, c, err, status = CLI_OK;
	uint64_t window = 0, top = 10, at = 0, line_arg = 0, *sizes = NULL;
	size_t nsizes = 0, ncaches = 0, nrefs = 0;
	struct cache caches[32];
	struct lp_profile *p = NULL;
	struct lp_statstack *ss = NULL;
	struct lp_statcache *sc = NULL;
	struct lp_curve curves[2], *refs = NULL;
	struct lp_marker marks[32];
	double *lines = NULL, *ratio_lru = NULL, *ratio_rnd = NULL, *prob = NULL;
	struct pcrow *rows = NULL;
	struct lp_symbols *syms = NULL;
	int li;

	memset(curves, 0, sizeof(curves));
	while ((c = cli_getopt(argc, argv, "s:c:p:F:o:r:w::t:a:l:h", opts)) != -1) {
		switch (c) {
		case 's': sizes_arg = optarg; break;
		case 'c':
			if (!strcmp(optarg, "host")) {
				host_caches(caches, &ncaches, 32);
			} else if (ncaches >= 32 || parse_cache(optarg, &caches[ncaches++]) < 0) {
				return cli_usage_error(&cmd_report, "bad --cache '%s' (SIZE:WAYS:LINE or host)", optarg);
			}
			break;
		case 'p':
			want_lru = strstr(optarg, "lru") != NULL;
			want_random = strstr(optarg, "random") != NULL;
			if (!want_lru && !want_random)
				return cli_usage_error(&cmd_report, "bad --policy '%s' (lru, random)", optarg);
			break;
		case 'F': format = optarg; break;
		case 'o': svg = optarg; break;
		case 'r': refpath = optarg; break;
		case 'w':
			show_windows = 1;
			if (optarg && (cli_parse_u64(optarg, &window) < 0 || !window))
				return cli_usage_error(&cmd_report, "bad --window '%s'", optarg);
			break;
		case 't':
			if (cli_parse_u64(optarg, &top) < 0)
				return cli_usage_error(&cmd_report, "bad --top '%s'", optarg);
			break;
		case 'a':
			if (cli_parse_size(optarg, &at) < 0 || !at)
				return cli_usage_error(&cmd_report, "bad --at '%s'", optarg);
			break;
		case 'l':
			if (cli_parse_size(optarg, &line_arg) < 0)
				return cli_usage_error(&cmd_report, "bad --line '%s'", optarg);
			break;
		case OPT_COLD: cold = 1; break;
		case OPT_FILL: fill = 1; break;
		case OPT_NO_FILL: fill = 0; break;
		case 'h': return cli_print_usage(&cmd_report);
		default: return cli_usage_error(&cmd_report, "bad option");
		}
	}
	if (argc - optind != 1)
		return cli_usage_error(&cmd_report, "report takes one profile");
	if (strcmp(format, "text") && strcmp(format, "csv") && strcmp(format, "json"))
		return cli_usage_error(&cmd_report, "unknown format '%s' (text, csv, json)", format);
	if (cli_parse_size_list(sizes_arg, &sizes, &nsizes) < 0)
		return cli_usage_error(&cmd_report, "bad --sizes '%s'", sizes_arg);

	err = lp_profile_read(&p, argv[optind]);
	if (!p) {
		cli_error("%s", lp_errmsg());
		free(sizes);
		return CLI_ERROR;
	}
	if (err < 0) {
		cli_warn("%s", lp_errmsg());
		status = CLI_PARTIAL;
	}
	cli_warn_profile(p, argv[optind]);
	li = line_arg ? lp_profile_line_index(p, (uint32_t)line_arg) : 0;
	if (li < 0 || !p->n_line_sizes) {
		cli_error("the profile has no line size %" PRIu64, line_arg);
		status = CLI_ERROR;
		goto out;
	}
	const double line = p->line_sizes[li];
	if (refpath && lp_curves_read_csv(refpath, &refs, &nrefs) < 0) {
		cli_error("%s", lp_errmsg());
		status = CLI_ERROR;
		goto out;
	}
	size_t first, n;
	lp_profile_line_samples(p, (unsigned)li, &first, &n);
	if (lp_statstack_new(&ss, p, (unsigned)li, window, cold) < 0 ||
	    lp_statcache_new(&sc, p, (unsigned)li, window, cold) < 0 ||
	    !(lines = malloc(nsizes * sizeof(*lines))) || !(ratio_lru = malloc(nsizes * sizeof(double))) ||
	    !(ratio_rnd = malloc(nsizes * sizeof(double))) || !(prob = malloc((n + 1) * sizeof(double))) ||
	    !(rows = malloc((n + 1) * sizeof(*rows)))) {
		cli_error("%s", lp_errmsg());
		status = CLI_ERROR;
		goto out;
	}
	if (fill && lp_statcache_set_fill(sc, fill) < 0) {
		cli_error("%s", lp_errmsg());
		status = CLI_ERROR;
		goto out;
	}
	for (size_t i = 0; i < nsizes; i++) {
		lines[i] = fmax(1.0, (double)sizes[i] / line);
		ratio_lru[i] = lp_statstack_miss_ratio(ss, lines[i]);
	}
	lp_statcache_curve(sc, lines, nsizes, ratio_rnd);
	for (size_t i = 0; i < ncaches; i++) {
		struct cache *k = &caches[i];
		uint64_t L = k->size / (uint64_t)line, ways = k->ways ? k->ways : L;
		if ((double)k->line != line)
			cli_warn("cache %s has %" PRIu64 "-byte lines; the profile's are %g bytes", k->label,
				 k->line, line);
		if (!L)
			L = 1;
		k->lru = lp_statstack_setassoc_miss_ratio(ss, L / ways ? L / ways : 1, ways);
		double Ld = (double)L;
		lp_statcache_curve(sc, &Ld, 1, &k->random);
		marks[i] = (struct lp_marker){ k->label, k->size, want_lru ? k->lru : k->random };
	}
	if (!at)
		at = ncaches ? caches[0].size : 32768;

	curves[0] = (struct lp_curve){ .name = "statstack", .size = sizes, .ratio = ratio_lru, .n = nsizes };
	curves[1] = (struct lp_curve){ .name = "statcache", .size = sizes, .ratio = ratio_rnd, .n = nsizes };
	const struct lp_curve *shown = want_lru ? curves : curves + 1;
	size_t nshown = (size_t)want_lru + (size_t)want_random;

	if (!strcmp(format, "csv")) {
		printf("# locprof curve v1: report %s, line %g, %s\n", argv[optind], line,
		       cold ? "cold misses included" : "cold misses excluded");
		printf("curve,size_bytes,miss_ratio,misses,accesses\n");
		double acc = (double)p->accesses[li];
		for (size_t k = 0; k < nshown; k++)
			for (size_t i = 0; i < nsizes; i++)
				printf("%s,%" PRIu64 ",%.6f,%.1f,%.0f\n", shown[k].name, sizes[i], shown[k].ratio[i],
				       shown[k].ratio[i] * acc, acc);
	} else if (!strcmp(format, "json")) {
		printf("{\"profile\":");
		cli_json_string(argv[optind]);
		printf(",\"line\":%g,\"samples\":%zu,\"cold\":%s,\"curves\":[",
		       line, n, cold ? "true" : "false");
		for (size_t k = 0; k < nshown; k++) {
			printf("%s{\"name\":\"%s\",\"points\":[", k ? "," : "", shown[k].name);
			for (size_t i = 0; i < nsizes; i++)
				printf("%s[%" PRIu64 ",%.6f]", i ? "," : "", sizes[i], shown[k].ratio[i]);
			printf("]}");
		}
		printf("],\"caches\":[");
		for (size_t i = 0; i < ncaches; i++)
			printf("%s{\"cache\":\"%s\",\"size\":%" PRIu64 ",\"ways\":%" PRIu64 ",\"lru\":%.6f,\"random\":%.6f}",
			       i ? "," : "", caches[i].label, caches[i].size, caches[i].ways, caches[i].lru,
			       caches[i].random);
		printf("]}\n");
	} else {
		char b1[32];
		printf("profile %s: %zu samples, ", argv[optind], n);
		if (!lp_profile_count_partial(p, (unsigned)li))
			printf("%" PRIu64 " line accesses", p->accesses[li]);
		else if (p->accesses[li])
			printf("at least %" PRIu64 " line accesses (partial: the run was cut short, counted up to "
			       "the last flush)", p->accesses[li]);
		else
			printf("line accesses not counted (the run was cut short before the first flush)");
		printf(" of %g bytes, %s\n\n", line, cold ? "cold misses included" : "cold misses excluded");
		printf("%10s", "size");
		for (size_t k = 0; k < nshown; k++)
			printf(" %12s", want_lru && k == 0 ? "lru" : "random");
		printf("\n");
		for (size_t i = 0; i < nsizes; i++) {
			printf("%10s", cli_format_size(sizes[i], b1, sizeof(b1)));
			for (size_t k = 0; k < nshown; k++)
				printf(" %12.4f", shown[k].ratio[i]);
			printf("\n");
		}
		if (ncaches) {
			printf("\n%-24s %8s %6s %12s %12s\n", "cache", "size", "ways", "lru", "random(FA)");
			for (size_t i = 0; i < ncaches; i++)
				printf("%-24s %8s %6" PRIu64 " %12.4f %12.4f\n", caches[i].label,
				       cli_format_size(caches[i].size, b1, sizeof(b1)), caches[i].ways,
				       caches[i].lru, caches[i].random);
		}
		if (show_windows) {
			size_t nw = lp_statcache_nwindows(sc);
			double *wr = malloc(nw * sizeof(*wr));
			if (wr) {
				lp_statcache_window_ratios(sc, fmax(1.0, (double)at / line), wr);
				printf("\nrandom-replacement miss ratio per window (%" PRIu64
				       " line accesses or more: widened to 400 samples within a phase) at %s:\n"
				       "%8s %14s %10s\n",
				       lp_statcache_window_length(sc), cli_format_size(at, b1, sizeof(b1)), "window",
				       "start", "ratio");
				for (size_t w = 0; w < nw; w++) {
					uint64_t ws, we;
					lp_statcache_window(sc, w, &ws, &we);
					printf("%8zu %14" PRIu64 " %10.4f\n", w, ws, wr[w]);
				}
				free(wr);
			}
		}
		if (top) {
			double total;
			size_t m;
			uint64_t Lat = (uint64_t)fmax(1.0, (double)at / line);
			if (want_lru)
				lp_statstack_sample_miss(ss, 1, Lat, prob);
			else
				lp_statcache_sample_miss(sc, (double)Lat, prob);
			m = top_pcs(p, first, n, prob, rows, &total);
			printf("\ntop pcs by predicted %s misses at %s (the pc of the access that misses):\n",
			       want_lru ? "LRU" : "random", cli_format_size(at, b1, sizeof(b1)));
			syms = report_symbols(p);
			printf("%18s %12s %8s  %s\n", "pc", "misses", "share", "function (file:line)");
			for (size_t i = 0; i < m && i < top && rows[i].misses > 0; i++) {
				char nb[512], pb[32];
				/* each sample stands for 1/rate accesses */
				snprintf(pb, sizeof(pb), "%#" PRIx64, rows[i].pc);
				pc_name(syms, rows[i].pc, nb, sizeof(nb));
				printf("%18s %12.0f %7.1f%%  %s\n", pb,
				       rows[i].misses / (p->rate > 0 ? p->rate : 1), 100 * rows[i].misses / total,
				       strcmp(nb, pb) ? nb : "?");
			}
			print_top_objects(p, first, n, prob, top, want_lru ? "LRU" : "random",
					  cli_format_size(at, b1, sizeof(b1)));
		}
	}
	if (svg) {
		char title[256];
		snprintf(title, sizeof(title), "Working-set graph (%g-byte lines, %zu samples%s)", line, n,
			 cold ? "" : ", cold misses excluded");
		if (lp_svg_write(svg, title, shown, nshown, refs, nrefs, marks, ncaches) < 0) {
			cli_error("%s", lp_errmsg());
			status = CLI_ERROR;
		}
	}
out:
	lp_symbols_free(syms);
	lp_curves_free(refs, nrefs);
	lp_statstack_free(ss);
	lp_statcache_free(sc);
	free(lines);
	free(ratio_lru);
	free(ratio_rnd);
	free(prob);
	free(rows);
	free(sizes);
	lp_profile_free(p);
	return status;
}
