/* locprof predict: scalable models of reuse-distance histograms for
 * predicting cache and TLB misses at other problem sizes on other machines
 * (Marin & Mellor-Crummey). This file only dispatches: the subcommands are
 * predict-collect.c, predict-fit.c and predict-at.c, which do not call back
 * here; the library side is include/locprof/prediction.h. `locprof model`
 * is the same command under its older name, and `predict` the same
 * subcommand as `at`, so that existing scripts keep working. */
#include "predict-cli.h"

#include <string.h>

static const char usage[] =
	"usage: locprof predict collect --size P -o DIR [options] -- PROGRAM [ARGS...]\n"
	"       locprof predict collect --size P -o DIR --trace TRACE [--binary PROGRAM]\n"
	"       locprof predict fit DIR [--basis LIST] [--range R] [--tolerance T]\n"
	"       locprof predict at DIR --size P[,P...] --machine M [options]\n"
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
	"  at        predicted histograms and misses of every level of a machine\n"
	"            (itanium2, r12000, host, or a machine file), per program,\n"
	"            function, loop and group, as text, CSV, JSON and SVG plots\n"
	"\n"
	"'locprof predict SUBCOMMAND --help' lists each one's options.\n"
	"'locprof model' is another name for 'locprof predict', and 'predict' for\n"
	"'at'. See docs/commands/predict.md and docs/prediction.md.\n";

static int run(int argc, char **argv);

const struct cli_command cmd_predict = {
	.name = "predict",
	.summary = "fit scalable locality models; predict misses at other sizes and machines",
	.usage = usage,
	.alias = "model",
	.run = run,
};

static const struct {
	const char *name, *alias;
	const struct cli_command *cmd;
} subcommands[] = {
	{ "collect", NULL, &cmd_predict_collect },
	{ "fit", NULL, &cmd_predict_fit },
	{ "at", "predict", &cmd_predict_at },
};

static int run(int argc, char **argv)
{
	if (argc < 2)
		return cli_usage_error(&cmd_predict, "no subcommand (collect, fit, at)");
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))
		return cli_print_usage(&cmd_predict);
	for (size_t i = 0; i < sizeof(subcommands) / sizeof(subcommands[0]); i++)
		if (!strcmp(argv[1], subcommands[i].name) ||
		    (subcommands[i].alias && !strcmp(argv[1], subcommands[i].alias)))
			return subcommands[i].cmd->run(argc - 1, argv + 1);
	return cli_usage_error(&cmd_predict, "unknown subcommand '%s' (collect, fit, at)", argv[1]);
}
