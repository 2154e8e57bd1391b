/* locprof reusedist: exact reuse distances (StatCache's definition). */
#include "cli-exact.h"

static const char usage[] =
	"usage: locprof reusedist [options] TRACE\n"
	"\n"
	"Exact reuse distances of a trace: the number of line accesses, of any\n"
	"line, strictly between two accesses to the same line (StatCache). This is\n"
	"what the statcache sampler estimates; the histogram here is its ground\n"
	"truth. An access straddling lines touches each of them.\n"
	"See docs/commands/reusedist.md.\n"
	"\n"
	"  -l, --line LIST        line size(s) in bytes, e.g. 64 or 32,64,128 (default 64)\n"
	"  -s, --at LIST          reuse distances added to the 'fraction >= x' table\n"
	"                         (besides the powers of two), e.g. 1000,48K; the first\n"
	"                         ranks --per-pc (default 1024)\n"
	"  -c, --curve            print only the table of the fraction of accesses with\n"
	"                         reuse distance >= x (csv: curves reuse-ge, reuse-ge-nocold)\n"
	"  -p, --per-pc           also per-pc histograms; text shows the top pcs\n"
	"      --top N            pcs shown in text output (default 20)\n"
	"  -F, --format F         text (default), csv or json\n"
	"  -f, --from FORMAT      trace format (lpt, text, lackey; default: guessed)\n"
	"  -h, --help             this help\n"
	"\n"
	"The histogram is exact below 256 and log-linear above (128 bins per power\n"
	"of two). If TRACE is damaged, results cover what was read, a warning says\n"
	"so and the exit status is 3.\n";

static int run(int argc, char **argv);

const struct cli_command cmd_reusedist = {
	.name = "reusedist",
	.summary = "exact reuse distance histogram of a trace",
	.usage = usage,
	.run = run,
};

static int run(int argc, char **argv)
{
	return cli_exact_run(&cmd_reusedist, LP_DIST_REUSE, argc, argv);
}
