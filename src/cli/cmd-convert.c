/* locprof convert: copy a trace from one format to another. */
#include "cli.h"

#include <stdlib.h>

static const char usage[] =
	"usage: locprof convert [--from FORMAT] [--to FORMAT] IN OUT\n"
	"\n"
	"Convert a memory-reference trace between formats. The formats are\n"
	"lpt (locprof's compressed binary format), text (one reference per line)\n"
	"and lackey (valgrind --tool=lackey --trace-mem=yes output; lackey's\n"
	"M lines become a read and a write). Each is chosen by the file's\n"
	"extension (.lpt, .txt/.trace, .lackey), by the content of the input, or\n"
	"by --from/--to. '-' is stdin or stdout (text unless --to says otherwise).\n"
	"\n"
	"  -f, --from FORMAT   format of IN\n"
	"  -t, --to FORMAT     format of OUT\n"
	"  -h, --help          this help\n"
	"\n"
	"If IN is damaged, everything before the damage is converted, a warning\n"
	"says how much, and the exit status is 3.\n";

enum { BATCH = 4096 };

static int run(int argc, char **argv);

const struct cli_command cmd_convert = {
	.name = "convert",
	.summary = "convert a trace between lpt, text and lackey formats",
	.usage = usage,
	.run = run,
};

static int run(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "from", required_argument, NULL, 'f' },
		{ "to", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *from = NULL, *to = NULL;
	struct lp_trace_reader *r = NULL;
	struct lp_trace_writer *w = NULL;
	struct lp_ref *buf = NULL;
	int c, status = CLI_OK;
	ssize_t n;

	while ((c = cli_getopt(argc, argv, "f:t:h", opts)) != -1) {
		switch (c) {
		case 'f': from = optarg; break;
		case 't': to = optarg; break;
		case 'h': return cli_print_usage(&cmd_convert);
		default: return cli_usage_error(&cmd_convert, "%s", cli_getopt_error());
		}
	}
	if (argc - optind != 2)
		return cli_usage_error(&cmd_convert, "convert takes an input and an output");
	if ((from && !lp_trace_format_known(from)) || (to && !lp_trace_format_known(to)))
		return cli_usage_error(&cmd_convert, "unknown format '%s' (known: %s)",
				       from && !lp_trace_format_known(from) ? from : to,
				       lp_trace_format_names());

	if (lp_trace_reader_open(&r, argv[optind], from) < 0) {
		cli_error("%s", lp_errmsg());
		return CLI_ERROR;
	}
	if (lp_trace_writer_open(&w, argv[optind + 1], to) < 0) {
		cli_error("%s", lp_errmsg());
		status = CLI_ERROR;
		goto out_reader;
	}
	if (!(buf = malloc(BATCH * sizeof(*buf)))) {
		cli_error("out of memory");
		status = CLI_ERROR;
		goto out_writer;
	}
	while ((n = lp_trace_read(r, buf, BATCH)) > 0) {
		if (lp_trace_write(w, buf, (size_t)n) < 0) {
			cli_error("%s", lp_errmsg());
			status = CLI_ERROR;
			goto out_writer;
		}
	}
	if (n < 0) {
		status = cli_trace_read_failed((int)n, r);
		if (status == CLI_ERROR)
			goto out_writer;
	}
	if (lp_trace_writer_close(w) < 0) {
		cli_error("%s", lp_errmsg());
		status = CLI_ERROR;
	}
	w = NULL;
out_writer:
	lp_trace_writer_abort(w);
	free(buf);
out_reader:
	lp_trace_reader_free(r);
	return status;
}
