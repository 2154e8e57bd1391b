/* locprof predict fit: the runs of a directory -> DIR/model.xmodel. */
#include "predict-cli.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
	"usage: locprof predict fit DIR [options]\n"
	"\n"
	"Fit a model from the runs in DIR (DIR/size-*.xrun, 3 or more sizes) and\n"
	"write DIR/model.xmodel. Each reference group's histogram at each block\n"
	"size becomes: cold accesses, the leading bins of constant distance, and\n"
	"bins of fixed shares of the rest, every count and distance a function of\n"
	"the problem size P fitted by constrained least squares (section 4.1).\n"
	"\n"
	"  -B, --basis LIST    basis functions of P (default 1,P,P^2,P^3,P^4), e.g.\n"
	"                      '1,P,P^2,P*log(P)'\n"
	"  -r, --range R       the fits stay >= 0 and monotone up to R times the\n"
	"                      largest size (default 16)\n"
	"  -t, --tolerance T   bins stop splitting when their distance models\n"
	"                      agree within T (default 0.05)\n"
	"  -d, --depth N       limit of the recursive splitting (default 10)\n"
	"  -o, --output FILE   the model file (default DIR/model.xmodel)\n"
	"  -v, --verbose       print every group's formulas (at --block)\n"
	"      --block B       block size shown (default 64, or the first)\n"
	"  -q, --quiet         no summary\n"
	"  -h, --help          this help\n";

static int predict_fit(int argc, char **argv);

const struct cli_command cmd_predict_fit = {
	.name = "predict fit",
	.summary = "",
	.run = predict_fit,
	.usage = usage,
};

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The run files (DIR/size-P.xrun) into *names (malloc'ed); returns -1 to go on,
 * or the exit status. */
int predict_list_runs(const char *dir, char ***names_out, size_t *nn_out)
{
	char **names = NULL;
	size_t nn = 0, capn = 0;
	DIR *d;
	struct dirent *de;

	if (!(d = opendir(dir))) {
		cli_error("cannot open directory '%s': %s", dir, strerror(errno));
		return CLI_ERROR;
	}
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);
		if (len < 6 || strcmp(de->d_name + len - 5, ".xrun") || de->d_name[0] == '.')
			continue;
		if (nn == capn) {
			capn = capn ? capn * 2 : 16;
			char **nv = realloc(names, capn * sizeof(*nv));
			if (!nv) {
				closedir(d);
				goto out;
			}
			names = nv;
		}
		if (asprintf(&names[nn], "%s/%s", dir, de->d_name) < 0) {
			closedir(d);
			goto out;
		}
		nn++;
	}
	closedir(d);
	*names_out = names;
	*nn_out = nn;
	return -1;
out:
	for (size_t i = 0; i < nn; i++)
		free(names[i]);
	free(names);
	cli_error("out of memory");
	return CLI_ERROR;
}

/* The model's summary: its groups, and with verbose their formulas at
 * block size `show` (0: 64, or the first). */
static int print_model(const struct lp_pred_model *m, const char *output, uint64_t show, int verbose)
{
	size_t ns = lp_pred_model_nsizes(m), nb = lp_pred_model_nblocks(m);
	struct lp_pred_join_info ji;
	char f[512];

	if (!show) {
		show = lp_pred_model_block(m, 0);
		for (size_t b = 0; b < nb; b++)
			if (lp_pred_model_block(m, b) == 64)
				show = 64;
	}
	printf("model %s: %zu sizes (%g .. %g), %zu groups, %zu loops\n", output, ns,
	       lp_pred_model_fit_size(m, 0), lp_pred_model_fit_size(m, ns - 1), lp_pred_model_ngroups(m),
	       lp_pred_model_nloops(m));
	printf("command: %s\n", lp_pred_model_command(m));
	lp_pred_model_join(m, &ji);
	printf("joined %zu of %zu groups (%.1f%% of the references) across %zu runs of %zu binar%s by %s\n", ji.joined,
	       ji.groups, 100 * ji.share, ji.runs, ji.binaries, ji.binaries == 1 ? "y" : "ies",
	       ji.by_source ? "source location" : "code address");
	printf("references: %s\n\n", lp_pred_model_refs_formula(m, SIZE_MAX, f, sizeof(f)));
	printf("%-5s %-18s %-22s %-14s %4s %9s  %s\n", "group", "function", "where", "strides",
	       "pcs", "bins", "references");
	for (size_t g = 0; g < lp_pred_model_ngroups(m); g++) {
		struct lp_pred_group_info gi;
		size_t nc, nbins;
		char bins[32];
		lp_pred_model_group(m, g, &gi);
		if (lp_pred_model_bins(m, g, show, &nc, &nbins) < 0) {
			cli_error("%s", lp_errmsg());
			return CLI_ERROR;
		}
		snprintf(bins, sizeof(bins), "%zu+%zu", nc, nbins);
		printf("%-5zu %-18s %-22s %-14s %4zu %9s  %s\n", g, gi.function, gi.where, gi.strides,
		       gi.npcs, bins, lp_pred_model_refs_formula(m, g, f, sizeof(f)));
		if (verbose) {
			char *desc = lp_pred_model_describe(m, g, show);
			if (desc)
				fputs(desc, stdout);
			free(desc);
		}
	}
	printf("\nbins: constant-distance + rest bins at %llu-byte blocks\n", (unsigned long long)show);
	return CLI_OK;
}

static int predict_fit(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "basis", required_argument, NULL, 'B' },
		{ "range", required_argument, NULL, 'r' },
		{ "tolerance", required_argument, NULL, 't' },
		{ "depth", required_argument, NULL, 'd' },
		{ "output", required_argument, NULL, 'o' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "block", required_argument, NULL, 'K' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct lp_pred_fit_options fo = { 0 };
	const char *dir, *output = NULL;
	char **names = NULL, *mpath = NULL;
	size_t nn = 0;
	struct lp_pred_run **runs = NULL;
	struct lp_pred_model *m = NULL;
	int c, verbose = 0, quiet = 0, status = CLI_OK;
	uint64_t show = 0, u;

	while ((c = cli_getopt(argc, argv, "B:r:t:d:o:vqh", opts)) != -1) {
		switch (c) {
		case 'B': {
			struct lp_pred_basis b;
			if (lp_pred_basis_parse(&b, optarg) < 0)
				return cli_usage_error(&cmd_predict_fit, "bad --basis: %s", lp_errmsg());
			lp_pred_basis_release(&b);
			fo.basis = optarg;
			break;
		}
		case 'r':
			if (cli_parse_double(optarg, &fo.range) < 0 || !(fo.range >= 1) || fo.range > 1e6)
				return cli_usage_error(&cmd_predict_fit, "bad --range '%s' (>= 1)", optarg);
			break;
		case 't':
			if (cli_parse_double(optarg, &fo.tolerance) < 0 || !(fo.tolerance > 0) || fo.tolerance > 10)
				return cli_usage_error(&cmd_predict_fit, "bad --tolerance '%s' (0 < T <= 10)", optarg);
			break;
		case 'd':
			if (cli_parse_u64(optarg, &u) < 0 || !u || u > 30)
				return cli_usage_error(&cmd_predict_fit, "bad --depth '%s' (1 to 30)", optarg);
			fo.max_depth = (unsigned)u;
			break;
		case 'o': output = optarg; break;
		case 'v': verbose = 1; break;
		case 'K':
			if (cli_parse_size(optarg, &show) < 0 || !show)
				return cli_usage_error(&cmd_predict_fit, "bad --block '%s'", optarg);
			break;
		case 'q': quiet = 1; break;
		case 'h': return cli_print_usage(&cmd_predict_fit);
		default: return cli_usage_error(&cmd_predict_fit, "%s", cli_getopt_error());
		}
	}
	if (optind + 1 != argc)
		return cli_usage_error(&cmd_predict_fit, "fit needs one directory of runs");
	dir = argv[optind];
	if ((status = predict_list_runs(dir, &names, &nn)) >= 0)
		goto done;
	status = CLI_OK;
	if (nn < 3) {
		cli_error("'%s' holds %zu run%s; a model needs 3 or more sizes "
			  "(locprof predict collect --size P -o %s -- PROGRAM ...)", dir, nn, nn == 1 ? "" : "s", dir);
		status = CLI_ERROR;
		goto done;
	}
	qsort(names, nn, sizeof(*names), cmp_str);
	if (!(runs = calloc(nn, sizeof(*runs))))
		goto nomem;
	for (size_t i = 0; i < nn; i++)
		if (lp_pred_run_read(&runs[i], names[i]) < 0) {
			cli_error("%s", lp_errmsg());
			status = CLI_ERROR;
			goto done;
		}
	if (lp_pred_model_fit(&m, runs, nn, &fo) < 0) {
		cli_error("cannot fit: %s", lp_errmsg());
		status = CLI_ERROR;
		goto done;
	}
	if (!output) {
		if (!(mpath = lp_pred_model_path(dir)))
			goto nomem;
		output = mpath;
	}
	if (lp_pred_model_write(m, output) < 0) {
		cli_error("%s", lp_errmsg());
		status = CLI_ERROR;
		goto done;
	}
	if (!quiet)
		status = print_model(m, output, show, verbose);
	goto done;
nomem:
	cli_error("out of memory");
	status = CLI_ERROR;
done:
	for (size_t i = 0; runs && i < nn; i++)
		lp_pred_run_free(runs[i]);
	lp_pred_model_free(m);
	for (size_t i = 0; i < nn; i++)
		free(names[i]);
	free(names);
	free(runs);
	free(mpath);
	return status;
}
