/* locprof model: scalable models of reuse-distance histograms for
 * predicting cache and TLB misses at other problem sizes on other machines
 * (Marin & Mellor-Crummey). Subcommands in model-collect.c, model-fit.c and
 * model-predict.c; the library side is include/locprof/prediction.h. */
#include "predict-cli.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char usage[] =
	"usage: locprof model collect --size P -o DIR [options] -- PROGRAM [ARGS...]\n"
	"       locprof model collect --size P -o DIR --trace TRACE [--binary PROGRAM]\n"
	"       locprof model fit DIR [--basis LIST] [--range R] [--tolerance T]\n"
	"       locprof model predict DIR --size P[,P...] --machine M [options]\n"
	"\n"
	"Predict the cache and TLB misses of a program at a problem size it never\n"
	"ran at, on a machine it never ran on, from exact reuse-distance\n"
	"histograms collected at a few small sizes (Marin & Mellor-Crummey 2005).\n"
	"\n"
	"  collect   run PROGRAM (built with `locprof cc`) at problem size P, or\n"
	"            read a trace of it, and write DIR/size-P.xrun: per reference\n"
	"            group (references of one loop with the same strides) the\n"
	"            stack-distance histograms of every line and page size\n"
	"  fit       fit DIR/model.xmodel from the runs in DIR (3 or more sizes)\n"
	"  predict   predicted histograms and misses of every level of a machine\n"
	"            (itanium2, r12000, host, or a machine file), per program,\n"
	"            function, loop and group, as text, CSV, JSON and SVG plots\n"
	"\n"
	"'locprof model SUBCOMMAND --help' lists each one's options. See\n"
	"docs/commands/model.md and docs/prediction.md.\n";

static int run(int argc, char **argv);

const struct cli_command cmd_predict = {
	.name = "model",
	.summary = "fit scalable locality models; predict misses at other sizes and machines",
	.usage = usage,
	.run = run,
};

char *model_path(const char *path)
{
	struct stat st;
	char *p = NULL;

	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		if (asprintf(&p, "%s/model.xmodel", path) < 0)
			return NULL;
		return p;
	}
	return strdup(path);
}

static int run(int argc, char **argv)
{
	if (argc < 2)
		return cli_usage_error(&cmd_predict, "no subcommand (collect, fit, predict)");
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))
		return cli_print_usage(&cmd_predict);
	if (!strcmp(argv[1], "collect"))
		return model_collect(argc - 1, argv + 1);
	if (!strcmp(argv[1], "fit"))
		return model_fit(argc - 1, argv + 1);
	if (!strcmp(argv[1], "predict"))
		return model_predict(argc - 1, argv + 1);
	return cli_usage_error(&cmd_predict, "unknown subcommand '%s' (collect, fit, predict)", argv[1]);
}
