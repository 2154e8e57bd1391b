/* locprof synth: write a synthetic trace with a known locality. */
#include "cli.h"
#include <locprof/synth.h>

#include <stdlib.h>

static const char usage[] =
	"usage: locprof synth PATTERN [options] -o OUT\n"
	"\n"
	"Write a synthetic memory-reference trace whose locality is known, to test\n"
	"and calibrate the analyses. PATTERN is one of\n"
	"  seq      sweep FOOTPRINT bytes in ELEM-byte steps, over and over\n"
	"  cyclic   touch LINES lines in order, one access each, over and over\n"
	"  uniform  touch a line drawn uniformly among LINES lines\n"
	"  zipf     touch line k-1 (k = 1..LINES) with probability ~ k^-S\n"
	"  strided  touch offset i*STRIDE modulo FOOTPRINT for the i-th reference\n"
	"  mix      phases of PHASE references, each running one of the five\n"
	"           patterns above (drawn by the seeded generator); each pattern\n"
	"           resumes where it stopped, in its own region base + j*2^36\n"
	"\n"
	"  -o, --output OUT        trace to write ('-' = stdout); the format comes\n"
	"                          from the extension (.lpt, .txt, .lackey), else --to\n"
	"  -t, --to FORMAT         output format: lpt, text or lackey\n"
	"  -n, --count N           references to generate (default 1000000)\n"
	"  -l, --line-size BYTES   line size, a power of two (default 64)\n"
	"  -e, --elem-size BYTES   bytes per access (default 8)\n"
	"  -b, --base ADDR         first address (default 0x10000000)\n"
	"  -f, --footprint BYTES   seq, strided: bytes covered (default 1M)\n"
	"  -L, --lines N           cyclic, uniform, zipf: number of lines (default 16384)\n"
	"  -s, --zipf-s S          zipf exponent, > 0 (default 1.0)\n"
	"  -S, --stride BYTES      strided: distance between references (default 4096)\n"
	"  -w, --write-ratio R     fraction of writes, 0..1 (default 0.25)\n"
	"  -T, --threads N         threads; they take turns in bursts of 64\n"
	"                          references (default 1)\n"
	"      --pc ADDR           pc of the first pattern; pattern j (seq=0, cyclic,\n"
	"                          uniform, zipf, strided) uses ADDR + 16*j\n"
	"                          (default 0x401000)\n"
	"      --seed N            seed of the generator; the same seed gives the\n"
	"                          same trace (default 1)\n"
	"  -p, --phase N           mix: references per phase (default 100000)\n"
	"  -h, --help              this help\n"
	"\n"
	"Sizes accept K, M, G suffixes (powers of 1024). Example:\n"
	"  locprof synth zipf -n 10M -L 1M -s 0.9 -o zipf.lpt\n";

enum { BATCH = 4096 };

static int run(int argc, char **argv);

const struct cli_command cmd_synth = {
	.name = "synth",
	.summary = "write a synthetic trace (seq, cyclic, uniform, zipf, strided, mix)",
	.usage = usage,
	.run = run,
};

enum { OPT_PC = 256, OPT_SEED };

static const char *option_name(const struct option *opts, int c)
{
	for (; opts->name; opts++)
		if (opts->val == c)
			return opts->name;
	return "?";
}

static int run(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "to", required_argument, NULL, 't' },
		{ "count", required_argument, NULL, 'n' },
		{ "line-size", required_argument, NULL, 'l' },
		{ "elem-size", required_argument, NULL, 'e' },
		{ "base", required_argument, NULL, 'b' },
		{ "footprint", required_argument, NULL, 'f' },
		{ "lines", required_argument, NULL, 'L' },
		{ "zipf-s", required_argument, NULL, 's' },
		{ "stride", required_argument, NULL, 'S' },
		{ "write-ratio", required_argument, NULL, 'w' },
		{ "threads", required_argument, NULL, 'T' },
		{ "pc", required_argument, NULL, OPT_PC },
		{ "seed", required_argument, NULL, OPT_SEED },
		{ "phase", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct lp_synth_params p;
	struct lp_synth *s = NULL;
	struct lp_trace_writer *w = NULL;
	struct lp_ref *buf = NULL;
	const char *outpath = NULL, *to = NULL;
	enum lp_synth_pattern pattern;
	int c, bad, status = CLI_ERROR;
	uint64_t v;
	size_t n;

	lp_synth_params_default(&p, LP_SYNTH_SEQ);
	while ((c = cli_getopt(argc, argv, "o:t:n:l:e:b:f:L:s:S:w:T:p:h", opts)) != -1) {
		bad = 0;
		switch (c) {
		case 'o': outpath = optarg; break;
		case 't': to = optarg; break;
		case 'n': bad = cli_parse_size(optarg, &p.count); break;
		case 'l': bad = cli_parse_size(optarg, &p.line_size); break;
		case 'e': bad = cli_parse_size(optarg, &p.elem_size); break;
		case 'b': bad = cli_parse_u64(optarg, &p.base); break;
		case 'f': bad = cli_parse_size(optarg, &p.footprint); break;
		case 'L': bad = cli_parse_size(optarg, &p.lines); break;
		case 's': bad = cli_parse_double(optarg, &p.zipf_s); break;
		case 'S': bad = cli_parse_size(optarg, &p.stride); break;
		case 'w': bad = cli_parse_double(optarg, &p.write_ratio); break;
		case 'T':
			bad = cli_parse_u64(optarg, &v) || v > UINT32_MAX;
			p.threads = (uint32_t)v;
			break;
		case OPT_PC: bad = cli_parse_u64(optarg, &p.pc); break;
		case OPT_SEED: bad = cli_parse_u64(optarg, &p.seed); break;
		case 'p': bad = cli_parse_size(optarg, &p.phase_len); break;
		case 'h': return cli_print_usage(&cmd_synth);
		default: return cli_usage_error(&cmd_synth, "%s", cli_getopt_error());
		}
		if (bad)
			return cli_usage_error(&cmd_synth, "bad value '%s' for --%s", optarg,
					       option_name(opts, c));
	}
	if (argc - optind != 1)
		return cli_usage_error(&cmd_synth, "synth takes one pattern (seq, cyclic, uniform, "
				       "zipf, strided, mix)");
	if (lp_synth_pattern_parse(argv[optind], &pattern) < 0)
		return cli_usage_error(&cmd_synth, "%s", lp_errmsg());
	p.pattern = pattern;
	if (!outpath)
		return cli_usage_error(&cmd_synth, "synth needs an output: -o OUT");
	if (to && !lp_trace_format_known(to))
		return cli_usage_error(&cmd_synth, "unknown format '%s' (known: %s)", to,
				       lp_trace_format_names());
	if (lp_synth_new(&s, &p) < 0)
		return cli_usage_error(&cmd_synth, "%s", lp_errmsg());

	if (!(buf = malloc(BATCH * sizeof(*buf)))) {
		cli_error("out of memory");
		goto out_synth;
	}
	if (lp_trace_writer_open(&w, outpath, to) < 0) {
		cli_error("%s", lp_errmsg());
		goto out_buf;
	}
	while ((n = lp_synth_fill(s, buf, BATCH)) > 0) {
		if (lp_trace_write(w, buf, n) < 0) {
			cli_error("%s", lp_errmsg());
			goto out_writer;
		}
	}
	if (lp_trace_writer_close(w) < 0) {
		w = NULL;
		cli_error("%s", lp_errmsg());
		goto out_buf;
	}
	w = NULL;
	status = CLI_OK;
out_writer:
	lp_trace_writer_abort(w);
out_buf:
	free(buf);
out_synth:
	lp_synth_free(s);
	return status;
}
