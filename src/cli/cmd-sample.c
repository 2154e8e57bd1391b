/* locprof sample: StatCache-sample a trace into a .lpp profile. */
#include "cli.h"

#include <locprof/profile.h>
#include <locprof/sample.h>

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char usage[] =
	"usage: locprof sample TRACE -o PROFILE.lpp [--rate R | --samples N]\n"
	"                      [--line 64[,128]] [--seed N] [--window N]\n"
	"\n"
	"Sample the reuse distances of a trace as StatCache does: every line\n"
	"access is selected with probability R (geometric gaps), its line is\n"
	"watched, and the number of line accesses until the line is touched again\n"
	"is recorded. Lines never touched again are kept as dangling samples.\n"
	"The trace's allocation events and executable mappings go into the\n"
	"profile too (for data objects and names in locprof report and\n"
	"annotate).\n"
	"\n"
	"  -o, --output FILE   the profile to write (required)\n"
	"  -r, --rate R        sampling rate, 0 < R <= 1 (default 1e-4)\n"
	"  -n, --samples N     aim at N samples: reads the trace twice (counting\n"
	"                      line accesses first), so TRACE must be a file\n"
	"  -l, --line LIST     line sizes in bytes, powers of two (default 64)\n"
	"  -s, --seed N        random seed (default 1)\n"
	"  -w, --window N      time window in line accesses (default 200000)\n"
	"  -f, --format FMT    trace format (default: from the name or content)\n"
	"  -h, --help          this help\n";

enum { BATCH = 4096 };

/* The trace's mappings (read to its end: a live trace writes them last),
 * so that report and annotate name the profile's pcs as simulate
 * --attribute names the trace's. */
static int copy_mappings(struct lp_profile *p, const struct lp_mappings *maps)
{
	for (size_t i = 0; maps && i < maps->n; i++) {
		const struct lp_mapping *m = &maps->v[i];
		int err = lp_mappings_add(&p->mappings, m->start, m->end, m->file_offset, m->path, m->build_id,
					  m->build_id_len);
		if (err < 0)
			return err;
	}
	return 0;
}

static int run(int argc, char **argv);

const struct cli_command cmd_sample = {
	.name = "sample",
	.summary = "sample reuse distances of a trace into a profile (StatCache)",
	.usage = usage,
	.run = run,
};

/* First pass for --samples: line accesses of the smallest line size. */
static int count_accesses(const char *path, const char *format, uint32_t line, uint64_t *total,
			  struct lp_ref *buf)
{
	struct lp_trace_reader *r;
	ssize_t n;

	*total = 0;
	if (lp_trace_reader_open(&r, path, format) < 0)
		return -1;
	while ((n = lp_trace_read(r, buf, BATCH)) > 0)
		*total += lp_line_accesses(buf, (size_t)n, line);
	lp_trace_reader_free(r);
	return n < 0 && n != LP_ETRUNCATED && n != LP_ECORRUPT ? -1 : 0;
}

static int run(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' }, { "rate", required_argument, NULL, 'r' },
		{ "samples", required_argument, NULL, 'n' }, { "line", required_argument, NULL, 'l' },
		{ "seed", required_argument, NULL, 's' },   { "window", required_argument, NULL, 'w' },
		{ "format", required_argument, NULL, 'f' }, { "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *out = NULL, *format = NULL, *path;
	double rate = 1e-4;
	uint64_t target = 0, seed = 1, window = LP_PROFILE_WINDOW_DEFAULT, *lines = NULL;
	size_t nlines = 0;
	int c, have_rate = 0, status = CLI_OK;
	struct lp_profile *p = NULL;
	struct lp_sampler *s = NULL;
	struct lp_trace_reader *r = NULL;
	struct lp_ref *buf = NULL;
	ssize_t n;

	while ((c = cli_getopt(argc, argv, "o:r:n:l:s:w:f:h", opts)) != -1) {
		switch (c) {
		case 'o': out = optarg; break;
		case 'r':
			if (cli_parse_double(optarg, &rate) < 0 || !(rate > 0 && rate <= 1))
				return cli_usage_error(&cmd_sample, "bad --rate '%s' (0 < R <= 1)", optarg);
			have_rate = 1;
			break;
		case 'n':
			if (cli_parse_u64(optarg, &target) < 0 || !target)
				return cli_usage_error(&cmd_sample, "bad --samples '%s'", optarg);
			break;
		case 'l':
			free(lines);
			if (cli_parse_size_list(optarg, &lines, &nlines) < 0)
				return cli_usage_error(&cmd_sample, "bad --line '%s'", optarg);
			break;
		case 's':
			if (cli_parse_u64(optarg, &seed) < 0)
				return cli_usage_error(&cmd_sample, "bad --seed '%s'", optarg);
			break;
		case 'w':
			if (cli_parse_u64(optarg, &window) < 0 || !window)
				return cli_usage_error(&cmd_sample, "bad --window '%s'", optarg);
			break;
		case 'f': format = optarg; break;
		case 'h': free(lines); return cli_print_usage(&cmd_sample);
		default: free(lines); return cli_usage_error(&cmd_sample, "%s", cli_getopt_error());
		}
	}
	if (argc - optind != 1 || !out) {
		free(lines);
		return cli_usage_error(&cmd_sample, "sample takes one trace and -o PROFILE");
	}
	if (have_rate && target) {
		free(lines);
		return cli_usage_error(&cmd_sample, "give --rate or --samples, not both");
	}
	path = argv[optind];
	if (!lines) {
		lines = malloc(sizeof(*lines));
		lines[0] = 64;
		nlines = 1;
	}
	if (nlines > LP_PROFILE_MAX_LINE_SIZES) {
		free(lines);
		return cli_usage_error(&cmd_sample, "at most %d line sizes", LP_PROFILE_MAX_LINE_SIZES);
	}
	for (size_t i = 0; i < nlines; i++)
		if (lines[i] & (lines[i] - 1) || lines[i] > (1u << 30)) {
			free(lines);
			return cli_usage_error(&cmd_sample, "line size %llu is not a power of two",
					       (unsigned long long)lines[i]);
		}
	if (target && !strcmp(path, "-")) {
		free(lines);
		return cli_usage_error(&cmd_sample, "--samples reads the trace twice; use --rate with stdin");
	}
	if (!(buf = malloc(BATCH * sizeof(*buf))) || lp_profile_new(&p) < 0) {
		cli_error("out of memory");
		status = CLI_ERROR;
		goto out;
	}
	if (target) {
		uint64_t total;
		if (count_accesses(path, format, (uint32_t)lines[0], &total, buf) < 0) {
			cli_error("%s", lp_errmsg());
			status = CLI_ERROR;
			goto out;
		}
		rate = total ? (double)target / (double)total : 1;
		if (rate > 1)
			rate = 1;
	}
	{
		char host[256] = "", cmd[4096] = "";
		size_t used = 0;
		gethostname(host, sizeof(host) - 1);
		used += (size_t)snprintf(cmd, sizeof(cmd), "trace %s", path);
		lp_profile_set_str(&p->host, host);
		lp_profile_set_str(&p->source, cmd);
		used = (size_t)snprintf(cmd, sizeof(cmd), "locprof");
		for (int i = 0; i < argc && used < sizeof(cmd) - 1; i++)
			used += (size_t)snprintf(cmd + used, sizeof(cmd) - used, " %s", argv[i]);
		if (lp_profile_set_str(&p->command, cmd) < 0) {
			cli_error("out of memory");
			status = CLI_ERROR;
			goto out;
		}
	}
	p->date = (int64_t)time(NULL);
	p->n_line_sizes = (uint32_t)nlines;
	for (size_t i = 0; i < nlines; i++)
		p->line_sizes[i] = (uint32_t)lines[i];
	p->rate = rate;
	p->target_samples = target;
	p->seed = seed;
	p->window = window;
	if (lp_trace_reader_open(&r, path, format) < 0 || lp_sampler_new(&s, p) < 0) {
		cli_error("%s", lp_errmsg());
		status = CLI_ERROR;
		goto out;
	}
	while ((n = lp_trace_read(r, buf, BATCH)) > 0) {
		if (lp_sampler_feed(s, buf, (size_t)n) < 0) {
			cli_error("%s", lp_errmsg());
			status = CLI_ERROR;
			goto out;
		}
	}
	if (n < 0 && (status = cli_trace_read_failed((int)n, r)) == CLI_ERROR)
		goto out;
	if (copy_mappings(p, lp_trace_reader_mappings(r)) < 0 || lp_sampler_finish(s) < 0 ||
	    lp_profile_write(p, out) < 0) {
		cli_error("%s", lp_errmsg());
		status = CLI_ERROR;
		goto out;
	}
	cli_note("%zu samples of %llu line accesses (rate %.3g) written to %s", p->n_samples,
		 (unsigned long long)p->accesses[0], rate, out);
out:
	lp_sampler_free(s);
	lp_trace_reader_free(r);
	lp_profile_free(p);
	free(buf);
	free(lines);
	return status;
}
