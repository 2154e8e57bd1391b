/* The shared body of `locprof stackdist` and `locprof reusedist`: options,
 * reading the trace into the exact engine, and the text, CSV and JSON
 * outputs (docs/commands/stackdist.md, reusedist.md) of the curve points
 * and pc ranking the library computes (lp_dist_curve, lp_dist_pcs). */
#include "cli-exact.h"

#include <locprof/report.h>

#include <stdlib.h>
#include <string.h>

enum { BATCH = 65536, FMT_TEXT, FMT_CSV, FMT_JSON };

struct opts {
	const struct cli_command *cmd;
	enum lp_distance kind;
	const char *trace, *from, *algorithm;
	uint64_t *lines, *sizes, prealloc_n, top;
	size_t n_lines, n_sizes;
	int per_pc, curve, format;
};

/* ---- shared helpers ---------------------------------------------------- */

static const char *kind_word(const struct opts *o)
{
	return o->kind == LP_DIST_STACK ? "stack" : "reuse";
}

/* The point that ranks pcs. */
static uint64_t rank_point(const struct opts *o)
{
	return lp_dist_rank_point(o->kind, o->sizes, o->n_sizes);
}

/* The curve's points (NULL after an error message). */
static struct lp_dist_point *points(const struct opts *o, const struct lp_exact *e, size_t li, size_t *np)
{
	struct lp_dist_point *pt = NULL;

	if (lp_dist_curve(e, li, o->kind, o->sizes, o->n_sizes, &pt, np) < 0)
		cli_error("%s", lp_errmsg());
	return pt;
}

/* The pcs ranked at the rank point (NULL after an error message). */
static struct lp_dist_pc *pc_rows(const struct opts *o, const struct lp_exact *e, size_t li, size_t *n)
{
	struct lp_dist_pc *r = NULL;

	if (lp_dist_pcs(e, li, o->kind, rank_point(o), &r, n) < 0)
		cli_error("%s", lp_errmsg());
	return r;
}

static void print_count(double v, int exact)
{
	if (exact)
		printf("%.0f", v);
	else
		printf("%.2f", v);
}

/* ---- text -------------------------------------------------------------- */

static void text_hist(const struct opts *o, const struct lp_hist *h)
{
	uint64_t total = lp_hist_cold(h) + lp_hist_finite(h), cum = 0;
	size_t nb = lp_hist_nbins(h), b = 0;

	printf("\n%s distance histogram (ranges of powers of two)\n", kind_word(o));
	printf("  %-24s %14s %8s\n", "distance", "count", "cum %");
	/* Group the bins by octave: [0], [1], [2,3], [4,7], ... */
	for (int k = -1; b < nb; k++) {
		uint64_t lo = k < 0 ? 0 : UINT64_C(1) << k;
		uint64_t hi = k < 0 ? 0 : (k == 63 ? UINT64_MAX : (UINT64_C(2) << k) - 1);
		uint64_t c = 0, blo, bhi;
		char range[48];

		for (; b < nb; b++) {
			lp_hist_bin_range(b, &blo, &bhi);
			if (blo > hi)
				break;
			c += lp_hist_bin_count(h, b);
		}
		if (!c)
			continue;
		cum += c;
		if (lo == hi)
			snprintf(range, sizeof(range), "%llu", (unsigned long long)lo);
		else
			snprintf(range, sizeof(range), "%llu-%llu", (unsigned long long)lo,
				 (unsigned long long)hi);
		printf("  %-24s %14llu %8.2f\n", range, (unsigned long long)c,
		       total ? 100.0 * (double)cum / (double)total : 0.0);
	}
	cum += lp_hist_cold(h);
	printf("  %-24s %14llu %8.2f\n", "inf (cold)", (unsigned long long)lp_hist_cold(h),
	       total ? 100.0 * (double)cum / (double)total : 0.0);
}

static void text_curve(const struct opts *o, const struct lp_exact *e, size_t li)
{
	struct lp_dist_point *pt;
	size_t np = 0;
	char buf[32];

	if (!(pt = points(o, e, li, &np)))
		return;
	if (o->kind == LP_DIST_STACK) {
		printf("\nLRU miss-ratio curve (fully associative, line %llu bytes; '~' = interpolated)\n",
		       (unsigned long long)lp_exact_line_size(e, li));
		printf("  %-10s %12s %16s %10s %16s %10s\n", "cache", "lines", "misses", "ratio",
		       "misses-nocold", "ratio-nocold");
	} else {
		printf("\naccesses with reuse distance >= x ('~' = interpolated)\n");
		printf("  %-10s %16s %10s %16s %10s\n", "x", "count", "fraction", "count-nocold",
		       "frac-nocold");
	}
	for (size_t i = 0; i < np; i++) {
		const struct lp_dist_point *p = &pt[i];

		if (o->kind == LP_DIST_STACK)
			printf("  %-10s %12llu %c%15.0f %10.6f %16.0f %10.6f\n",
			       cli_format_size(p->x, buf, sizeof(buf)), (unsigned long long)p->threshold,
			       p->exact ? ' ' : '~', p->misses, p->ratio, p->misses_nocold, p->ratio_nocold);
		else
			printf("  %-10llu %c%15.0f %10.6f %16.0f %10.6f\n", (unsigned long long)p->threshold,
			       p->exact ? ' ' : '~', p->misses, p->ratio, p->misses_nocold, p->ratio_nocold);
	}
	free(pt);
}

static void text_pcs(const struct opts *o, const struct lp_exact *e, size_t li)
{
	size_t n = 0;
	struct lp_dist_pc *r = pc_rows(o, e, li, &n);
	char buf[32];

	if (!r)
		return;
	if (o->kind == LP_DIST_STACK)
		printf("\ntop pcs by misses in a %s LRU cache (%zu pcs)\n",
		       cli_format_size(rank_point(o), buf, sizeof(buf)), n);
	else
		printf("\ntop pcs by accesses with reuse distance >= %llu or cold (%zu pcs)\n",
		       (unsigned long long)rank_point(o), n);
	printf("  %-18s %14s %12s %14s %8s\n", "pc", "accesses", "cold",
	       o->kind == LP_DIST_STACK ? "misses" : "long+cold", "ratio");
	for (size_t k = 0; k < n && k < o->top; k++)
		printf("  0x%-16llx %14llu %12llu %14.0f %8.4f\n", (unsigned long long)r[k].pc,
		       (unsigned long long)r[k].accesses, (unsigned long long)r[k].cold, r[k].misses,
		       r[k].accesses ? r[k].misses / (double)r[k].accesses : 0.0);
	free(r);
}

static void out_text(const struct opts *o, const struct lp_exact *e)
{
	printf("%s distances of %s", kind_word(o), o->trace);
	if (o->kind == LP_DIST_STACK)
		printf(" (algorithm %s)", o->algorithm ? o->algorithm : "fast");
	printf("\nreferences         %llu\n", (unsigned long long)lp_exact_references(e));
	for (size_t li = 0; li < lp_exact_n_line_sizes(e); li++) {
		const struct lp_hist *h = lp_exact_hist(e, li);
		uint64_t acc = lp_exact_line_accesses(e, li), line = lp_exact_line_size(e, li);
		char buf[32];

		if (li || lp_exact_n_line_sizes(e) > 1)
			printf("\n== line size %llu\n", (unsigned long long)line);
		printf("line size          %llu bytes\n", (unsigned long long)line);
		printf("line accesses      %llu\n", (unsigned long long)acc);
		printf("distinct lines     %llu (footprint %s)\n",
		       (unsigned long long)lp_exact_distinct_lines(e, li),
		       cli_format_size(lp_exact_distinct_lines(e, li) * line, buf, sizeof(buf)));
		printf("cold accesses      %llu (%.2f%%)\n", (unsigned long long)lp_hist_cold(h),
		       acc ? 100.0 * (double)lp_hist_cold(h) / (double)acc : 0.0);
		printf("max distance       %llu\n", (unsigned long long)lp_hist_max(h));
		if (!o->curve)
			text_hist(o, h);
		text_curve(o, e, li);
		if (o->per_pc && !o->curve)
			text_pcs(o, e, li);
	}
}

/* ---- csv --------------------------------------------------------------- */

static void csv_hist(const struct lp_hist *h, const char *prefix)
{
	for (size_t b = 0; b < lp_hist_nbins(h); b++) {
		uint64_t lo, hi;

		if (!lp_hist_bin_count(h, b))
			continue;
		lp_hist_bin_range(b, &lo, &hi);
		printf("%s%llu,%llu,%llu\n", prefix, (unsigned long long)lo,
		       (unsigned long long)lp_hist_bin_count(h, b), (unsigned long long)hi);
	}
	printf("%sinf,%llu,inf\n", prefix, (unsigned long long)lp_hist_cold(h));
}

static void out_csv(const struct opts *o, const struct lp_exact *e)
{
	size_t nl = lp_exact_n_line_sizes(e);

	if (o->curve && o->kind == LP_DIST_STACK)
		printf("# locprof curve v1: stackdist %s\n", o->trace);
	else if (o->curve)
		printf("# locprof reuse-ge v1: reusedist %s\n", o->trace);
	for (size_t li = 0; li < nl; li++) {
		const struct lp_hist *h = lp_exact_hist(e, li);

		if (nl > 1)
			printf("# line %llu\n", (unsigned long long)lp_exact_line_size(e, li));
		if (o->curve) {
			uint64_t acc = lp_exact_line_accesses(e, li), cold = lp_hist_cold(h);
			struct lp_dist_point *pt;
			size_t np = 0;

			if (!(pt = points(o, e, li, &np)))
				return;
			if (!li || nl > 1)
				printf(o->kind == LP_DIST_STACK ? "curve,size_bytes,miss_ratio,misses,accesses\n"
								: "curve,distance,fraction,count,accesses\n");
			for (int nc = 0; nc < 2; nc++)
				for (size_t i = 0; i < np; i++) {
					double m = nc ? pt[i].misses_nocold : pt[i].misses;
					uint64_t a = acc - (nc ? cold : 0);

					printf("%s%s,%llu,%.6f,",
					       o->kind == LP_DIST_STACK ? "lru" : "reuse-ge",
					       nc ? "-nocold" : "", (unsigned long long)pt[i].x,
					       a ? m / (double)a : 0.0);
					print_count(m, pt[i].exact);
					printf(",%llu\n", (unsigned long long)a);
				}
			free(pt);
			continue;
		}
		printf("distance,count,distance_max\n");
		csv_hist(h, "");
		if (o->per_pc) {
			printf("# per-pc\npc,distance,count,distance_max\n");
			for (size_t k = 0; k < lp_exact_pc_count(e, li); k++) {
				uint64_t pc;
				const struct lp_hist *ph = lp_exact_pc_hist(e, li, k, &pc);
				char prefix[32];

				snprintf(prefix, sizeof(prefix), "0x%llx,", (unsigned long long)pc);
				csv_hist(ph, prefix);
			}
		}
	}
}

/* ---- json -------------------------------------------------------------- */

static void json_hist(const struct lp_hist *h)
{
	int first = 1;

	cli_jprintf("{\"cold\": %llu, \"finite\": %llu, \"max\": %llu, \"bins\": [",
	       (unsigned long long)lp_hist_cold(h), (unsigned long long)lp_hist_finite(h),
	       (unsigned long long)lp_hist_max(h));
	for (size_t b = 0; b < lp_hist_nbins(h); b++) {
		uint64_t lo, hi;

		if (!lp_hist_bin_count(h, b))
			continue;
		lp_hist_bin_range(b, &lo, &hi);
		cli_jprintf("%s[%llu, %llu, %llu]", first ? "" : ", ", (unsigned long long)lo,
		       (unsigned long long)hi, (unsigned long long)lp_hist_bin_count(h, b));
		first = 0;
	}
	cli_jprintf("]}");
}

static void out_json(const struct opts *o, const struct lp_exact *e)
{
	cli_jprintf("{\"command\": \"%s\", \"trace\": ", o->cmd->name);
	cli_json_string(o->trace);
	if (o->kind == LP_DIST_STACK)
		cli_jprintf(", \"algorithm\": \"%s\"", o->algorithm ? o->algorithm : "fast");
	cli_jprintf(",\n \"histogram_bins\": \"[lo, hi, count]; exact below 256, 128 bins per octave above\",\n");
	cli_jprintf(" \"references\": %llu, \"line_sizes\": [", (unsigned long long)lp_exact_references(e));
	for (size_t li = 0; li < lp_exact_n_line_sizes(e); li++) {
		const struct lp_hist *h = lp_exact_hist(e, li);
		uint64_t acc = lp_exact_line_accesses(e, li);
		struct lp_dist_point *pt;
		size_t np = 0;

		cli_jprintf("%s\n  {\"line_size\": %llu, \"line_accesses\": %llu, \"distinct_lines\": %llu,\n",
		       li ? "," : "", (unsigned long long)lp_exact_line_size(e, li),
		       (unsigned long long)acc, (unsigned long long)lp_exact_distinct_lines(e, li));
		cli_jprintf("   \"histogram\": ");
		json_hist(h);
		cli_jprintf(",\n   \"%s\": [", o->kind == LP_DIST_STACK ? "curve" : "reuse_ge");
		if ((pt = points(o, e, li, &np))) {
			for (size_t i = 0; i < np; i++)
				cli_jprintf("%s\n    {\"%s\": %llu, \"%s\": %.2f, \"ratio\": %.6f, \"ratio_nocold\": %.6f, \"exact\": %s}",
				       i ? "," : "", o->kind == LP_DIST_STACK ? "size_bytes" : "distance",
				       (unsigned long long)pt[i].x, o->kind == LP_DIST_STACK ? "misses" : "count",
				       pt[i].misses, pt[i].ratio, pt[i].ratio_nocold, pt[i].exact ? "true" : "false");
			free(pt);
		}
		cli_jprintf("]");
		if (o->per_pc) {
			size_t n = 0;
			struct lp_dist_pc *r = pc_rows(o, e, li, &n);

			cli_jprintf(",\n   \"per_pc_rank_point\": %llu, \"per_pc\": [", (unsigned long long)rank_point(o));
			for (size_t k = 0; r && k < n; k++) {
				const struct lp_hist *ph = lp_exact_pc_hist(e, li, r[k].index, NULL);

				cli_jprintf("%s\n    {\"pc\": \"0x%llx\", \"accesses\": %llu, \"misses_at_rank_point\": %.2f, \"histogram\": ",
				       k ? "," : "", (unsigned long long)r[k].pc,
				       (unsigned long long)r[k].accesses, r[k].misses);
				json_hist(ph);
				cli_jprintf("}");
			}
			free(r);
			cli_jprintf("]");
		}
		cli_jprintf("}");
	}
	cli_jprintf("]}\n");
}

/* ---- the command ------------------------------------------------------- */

/* Options into *o; returns -1 to go on, else the exit status (after a
 * message). */
static int parse_options(struct opts *o, int argc, char **argv)
{
	const struct cli_command *cmd = o->cmd;
	enum lp_distance kind = o->kind;
	static const struct option stack_opts[] = {
		{ "line", required_argument, NULL, 'l' },
		{ "algorithm", required_argument, NULL, 'a' },
		{ "sizes", required_argument, NULL, 's' },
		{ "curve", no_argument, NULL, 'c' },
		{ "per-pc", no_argument, NULL, 'p' },
		{ "top", required_argument, NULL, 'T' },
		{ "format", required_argument, NULL, 'F' },
		{ "from", required_argument, NULL, 'f' },
		{ "prealloc-n", required_argument, NULL, 'N' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	static const struct option reuse_opts[] = {
		{ "line", required_argument, NULL, 'l' },
		{ "at", required_argument, NULL, 's' },
		{ "curve", no_argument, NULL, 'c' },
		{ "per-pc", no_argument, NULL, 'p' },
		{ "top", required_argument, NULL, 'T' },
		{ "format", required_argument, NULL, 'F' },
		{ "from", required_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int c;

	while ((c = cli_getopt(argc, argv, kind == LP_DIST_STACK ? "l:a:s:cpF:f:h" : "l:s:cpF:f:h",
			       kind == LP_DIST_STACK ? stack_opts : reuse_opts)) != -1) {
		switch (c) {
		case 'l':
			free(o->lines);
			o->lines = NULL;
			if (cli_parse_size_list(optarg, &o->lines, &o->n_lines) < 0 || !o->n_lines)
				return cli_usage_error(cmd, "bad --line '%s'", optarg);
			break;
		case 'a':
			if (!lp_exact_algorithm_known(optarg))
				return cli_usage_error(cmd, "unknown algorithm '%s' (known: %s)", optarg,
						       lp_exact_algorithm_names());
			o->algorithm = optarg;
			break;
		case 's':
			free(o->sizes);
			o->sizes = NULL;
			if (cli_parse_size_list(optarg, &o->sizes, &o->n_sizes) < 0)
				return cli_usage_error(cmd, "bad %s '%s'", kind == LP_DIST_STACK ? "--sizes" : "--at",
						       optarg);
			/* the first size given ranks pcs: keep the user's first */
			if (o->n_sizes > 1) {
				char *copy = strdup(optarg), *end = NULL;
				uint64_t first;

				if (copy && cli_parse_size(strtok_r(copy, ",.", &end), &first) == 0)
					for (size_t i = 0; i < o->n_sizes; i++)
						if (o->sizes[i] == first) {
							o->sizes[i] = o->sizes[0];
							o->sizes[0] = first;
							break;
						}
				free(copy);
			}
			break;
		case 'c': o->curve = 1; break;
		case 'p': o->per_pc = 1; break;
		case 'T':
			if (cli_parse_u64(optarg, &o->top) < 0)
				return cli_usage_error(cmd, "bad --top '%s'", optarg);
			break;
		case 'F':
			if (!strcmp(optarg, "text"))
				o->format = FMT_TEXT;
			else if (!strcmp(optarg, "csv"))
				o->format = FMT_CSV;
			else if (!strcmp(optarg, "json"))
				o->format = FMT_JSON;
			else 
				return cli_usage_error(cmd, "unknown output format '%s' (known: text, csv, json)",
						       optarg);
			break;
		case 'f':
			if (!lp_trace_format_known(optarg))
				return cli_usage_error(cmd, "unknown trace format '%s' (known: %s)", optarg,
						       lp_trace_format_names());
			o->from = optarg;
			break;
		case 'N':
			if (cli_parse_u64(optarg, &o->prealloc_n) < 0 || !o->prealloc_n)
				return cli_usage_error(cmd, "bad --prealloc-n '%s'", optarg);
			break;
		case 'h': return cli_print_usage(cmd);
		default: return cli_usage_error(cmd, "%s", cli_getopt_error());
		}
	}
	if (argc - optind != 1)
		return cli_usage_error(cmd, "%s takes one trace", cmd->name);
	o->trace = argv[optind];
	for (size_t i = 0; i < o->n_lines; i++)
		if (!o->lines[i] || o->lines[i] & (o->lines[i] - 1) || o->lines[i] > (UINT64_C(1) << 40))
			return cli_usage_error(cmd, "line size %llu is not a power of two up to 1T",
					       (unsigned long long)o->lines[i]);
	return -1;
}

int cli_exact_run(const struct cli_command *cmd, enum lp_distance kind, int argc, char **argv)
{
	struct opts o = { .cmd = cmd, .kind = kind, .top = 20, .format = FMT_TEXT };
	struct lp_exact_config cfg = { .kind = kind };
	struct lp_trace_reader *r = NULL;
	struct lp_exact *e = NULL;
	struct lp_ref *buf = NULL;
	int status, err;
	ssize_t n;

	if ((status = parse_options(&o, argc, argv)) >= 0)
		goto out;
	status = CLI_OK;
	cfg.algorithm = o.algorithm;
	cfg.line_sizes = o.lines;
	cfg.n_line_sizes = o.n_lines;
	cfg.per_pc = o.per_pc;
	cfg.prealloc_n = o.prealloc_n;
	if (lp_exact_new(&e, &cfg) < 0 || !(buf = malloc(BATCH * sizeof(*buf)))) {
		cli_error("%s", lp_errmsg());
		status = CLI_ERROR;
		goto out;
	}
	if (lp_trace_reader_open(&r, o.trace, o.from) < 0) {
		cli_error("%s", lp_errmsg());
		status = CLI_ERROR;
		goto out;
	}
	while ((n = lp_trace_read(r, buf, BATCH)) > 0) {
		if ((err = lp_exact_feed(e, buf, (size_t)n)) < 0) {
			cli_error("%s", lp_errmsg());
			status = CLI_ERROR;
			goto out;
		}
	}
	if (n < 0 && (status = cli_trace_read_failed((int)n, r)) == CLI_ERROR)
		goto out;
	if (o.format == FMT_TEXT)
		out_text(&o, e);
	else if (o.format == FMT_CSV)
		out_csv(&o, e);
	else
		out_json(&o, e);
	if (fflush(stdout) != 0) {
		cli_error("cannot write the output");
		status = CLI_ERROR;
	}
out:
	lp_trace_reader_free(r);
	lp_exact_free(e);
	free(buf);
	free(o.lines);
	free(o.sizes);
	return status;
}
