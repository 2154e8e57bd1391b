/* locprof stackdist: exact LRU stack distances and miss-ratio curves. */
#include "cli-exact.h"

static const char usage[] =
	"usage: locprof stackdist [options] TRACE\n"
	"\n"
	"Exact LRU stack distances of a trace (the number of distinct other lines\n"
	"touched between two accesses to a line), their histogram and the miss\n"
	"ratio of a fully-associative LRU cache of every size (one pass gives all\n"
	"sizes). An access straddling lines touches each of them. See\n"
	"docs/commands/stackdist.md and docs/algorithms.md.\n"
	"\n"
	"  -l, --line LIST        line size(s) in bytes, e.g. 64 or 32,64,128 (default 64)\n"
	"  -a, --algorithm A      fast (default), naive, markers, bk, avl, prealloc\n"
	"  -s, --sizes LIST       cache sizes for the curve besides the powers of two,\n"
	"                         e.g. 4K..64M,48K; the first also ranks --per-pc\n"
	"  -c, --curve            print the miss-ratio curve only (with --format csv:\n"
	"                         the curve CSV of docs/formats.md)\n"
	"  -p, --per-pc           also per-pc histograms; text shows the top pcs by misses\n"
	"      --top N            pcs shown in text output (default 20)\n"
	"  -F, --format F         text (default), csv or json\n"
	"  -f, --from FORMAT      trace format (lpt, text, lackey; default: guessed)\n"
	"      --prealloc-n N     line accesses the prealloc algorithm can hold\n"
	"                         (default 268435456)\n"
	"  -h, --help             this help\n"
	"\n"
	"A cache of C lines misses on cold accesses and on every access with stack\n"
	"distance >= C. The histogram is exact below 256 and log-linear above (128\n"
	"bins per power of two); misses are exact at cache sizes whose line count\n"
	"has at most 8 significant bits (all powers of two, 48K, 1.5M, ...) and\n"
	"interpolated within a bin otherwise (marked '~' in text).\n"
	"If TRACE is damaged, results cover what was read, a warning says so and\n"
	"the exit status is 3.\n";

static int run(int argc, char **argv);

const struct cli_command cmd_stackdist = {
	.name = "stackdist",
	.summary = "exact LRU stack distance histogram and miss-ratio curve of a trace",
	.usage = usage,
	.run = run,
};

static int run(int argc, char **argv)
{
	return cli_exact_run(&cmd_stackdist, LP_DIST_STACK, argc, argv);
}
