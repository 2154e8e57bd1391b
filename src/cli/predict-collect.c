/* locprof predict collect: one run at one problem size -> DIR/size-P.xrun. */
#include "predict-cli.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static const char usage[] =
	"usage: locprof predict collect --size P -o DIR [options] -- PROGRAM [ARGS...]\n"
	"       locprof predict collect --size P -o DIR --trace TRACE [--binary PROGRAM]\n"
	"\n"
	"Run PROGRAM (built with `locprof cc`) under `locprof record --mode trace`,\n"
	"or read TRACE ('-' for stdin), and write DIR/size-P.xrun: the reference\n"
	"groups found from the binary's loops and the pcs' strides, and for every\n"
	"pc the exact LRU stack-distance histogram of each block size. Run it once\n"
	"per small problem size P (the value the program's size argument takes).\n"
	"\n"
	"  -s, --size P        the problem size of this run (required)\n"
	"  -o, --output DIR    directory of the runs (created if missing)\n"
	"  -l, --line LIST     cache line sizes to collect (default 32,64,128)\n"
	"  -p, --page LIST     page sizes, for TLBs (default 4K,16K,32K)\n"
	"  -S, --sets LIST     set-distance histograms for caches of SETS sets of\n"
	"                      LINE-byte lines: SETSxLINE,... (e.g. 256x128); the\n"
	"                      exact set-associative LRU model for those geometries\n"
	"  -m, --machine M     set distances for every set-associative cache level\n"
	"                      of machine M (built-in or file), and its line sizes\n"
	"      --phase SIZE    average the histograms of blocks above SIZE over the\n"
	"                      placements of the address space by multiples of\n"
	"                      SIZE (up to 8; default 4K: where randomised\n"
	"                      addresses put the arrays in a page; 0: none)\n"
	"  -t, --trace TRACE   read this trace instead of running a program\n"
	"  -f, --from FORMAT   format of TRACE (lpt, text, lackey)\n"
	"  -b, --binary PATH   the executable the trace's pcs belong to (default:\n"
	"                      PROGRAM; needed with --trace when the trace carries\n"
	"                      no mappings)\n"
	"  -k, --keep-trace    keep the trace of the run as DIR/size-P.lpt\n"
	"  -q, --quiet         no summary on stderr\n"
	"  -h, --help          this help\n";

static int predict_collect(int argc, char **argv);

const struct cli_command cmd_predict_collect = {
	.name = "predict collect",
	.summary = "",
	.run = predict_collect,
	.usage = usage,
};

static int add_list(const char *s, uint64_t *v, size_t *n, size_t max, const char *what)
{
	uint64_t *list;
	size_t k;

	if (cli_parse_size_list(s, &list, &k) < 0) {
		cli_usage_error(&cmd_predict_collect, "bad %s list '%s'", what, s);
		return -1;
	}
	for (size_t i = 0; i < k; i++) {
		if (!list[i] || (list[i] & (list[i] - 1))) {
			cli_usage_error(&cmd_predict_collect, "%s size %llu is not a power of two", what,
					(unsigned long long)list[i]);
			free(list);
			return -1;
		}
		int dup = 0;
		for (size_t j = 0; j < *n; j++)
			dup |= v[j] == list[i];
		if (dup)
			continue;
		if (*n == max) {
			cli_usage_error(&cmd_predict_collect, "at most %zu line and page sizes in all", max);
			free(list);
			return -1;
		}
		v[(*n)++] = list[i];
	}
	free(list);
	return 0;
}

/* "256x128,64x64": set-distance geometries. */
static int add_sets(const char *s, struct lp_pred_setspec *v, size_t *n, size_t max)
{
	char *copy = strdup(s), *save = NULL, *tok;
	int rc = 0;

	if (!copy)
		return -1;
	for (tok = strtok_r(copy, ",", &save); tok && !rc; tok = strtok_r(NULL, ",", &save)) {
		char *x = strchr(tok, 'x'), *end;
		uint64_t sets, line;
		int dup = 0;
		if (!x) {
			rc = cli_usage_error(&cmd_predict_collect, "bad --sets item '%s' (SETSxLINE, e.g. 256x128)", tok);
			break;
		}
		*x = 0;
		errno = 0;
		sets = strtoull(tok, &end, 10);
		if (errno || *end || !*tok || !sets || cli_parse_size(x + 1, &line) < 0 || !line ||
		    (line & (line - 1))) {
			*x = 'x';
			rc = cli_usage_error(&cmd_predict_collect, "bad --sets item '%s' (SETSxLINE: sets >= 1, "
					     "LINE a power of two)", tok);
			break;
		}
		for (size_t j = 0; j < *n; j++)
			dup |= v[j].sets == sets && v[j].line == line;
		if (dup)
			continue;
		if (*n == max) {
			rc = cli_usage_error(&cmd_predict_collect, "at most %zu set-distance geometries", max);
			break;
		}
		v[(*n)++] = (struct lp_pred_setspec){ sets, line };
	}
	free(copy);
	return rc ? -1 : 0;
}

/* Resolve a program name as execvp does; returns a malloc'ed path or NULL. */
static char *find_program(const char *prog)
{
	const char *path = getenv("PATH");
	char buf[PATH_MAX];

	if (strchr(prog, '/'))
		return access(prog, X_OK) == 0 ? realpath(prog, NULL) : NULL;
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		const char *end = strchr(path, ':');
		size_t n = end ? (size_t)(end - path) : strlen(path);
		snprintf(buf, sizeof(buf), "%.*s/%s", (int)n, n ? path : ".", prog);
		if (access(buf, X_OK) == 0)
			return realpath(buf, NULL);
		if (!end)
			break;
		path = end + 1;
	}
	return NULL;
}

/* Run `locprof record --mode trace -q -o TRACE -- PROGRAM ARGS`; returns the
 * program's exit status (as record reports it), or -1. */
static int record(const char *trace, char **prog_argv)
{
	int n = 0, status;
	pid_t pid;
	char **av;

	while (prog_argv[n])
		n++;
	if (!(av = calloc((size_t)n + 10, sizeof(*av))))
		return -1;
	av[0] = "locprof";
	av[1] = "record";
	av[2] = "--mode";
	av[3] = "trace";
	av[4] = "-q";
	av[5] = "-o";
	av[6] = (char *)trace;
	av[7] = "--";
	for (int i = 0; i < n; i++)
		av[8 + i] = prog_argv[i];
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		free(av);
		return -1;
	}
	if (pid == 0) {
		execv("/proc/self/exe", av);
		_exit(127);
	}
	free(av);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static int predict_collect(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "size", required_argument, NULL, 's' },
		{ "output", required_argument, NULL, 'o' },
		{ "line", required_argument, NULL, 'l' },
		{ "page", required_argument, NULL, 'p' },
		{ "sets", required_argument, NULL, 'S' },
		{ "machine", required_argument, NULL, 'm' },
		{ "trace", required_argument, NULL, 't' },
		{ "from", required_argument, NULL, 'f' },
		{ "binary", required_argument, NULL, 'b' },
		{ "keep-trace", no_argument, NULL, 'k' },
		{ "phase", required_argument, NULL, 'P' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	uint64_t blocks[16], phase = 4096;
	size_t nblocks = 0, nsetd = 0;
	struct lp_pred_setspec setd[16];
	const char *setlist = NULL, *machine = NULL;
	const char *dir = NULL, *trace = NULL, *from = NULL, *lines = "32,64,128", *pages = "4K,16K,32K";
	char *binary = NULL, *tpath = NULL, *out = NULL, *command = NULL;
	double size = 0;
	int c, quiet = 0, keep = 0, status = CLI_OK, have_size = 0, rc;
	struct lp_trace_reader *r = NULL;
	struct lp_pred_collect *xc = NULL;
	struct lp_pred_collect_config cfg = { 0 };
	struct lp_ref *buf = NULL;

	while ((c = cli_getopt(argc, argv, "+s:o:l:p:S:m:t:f:b:kqh", opts)) != -1) {
		switch (c) {
		case 's':
			if (cli_parse_double(optarg, &size) < 0 || !(size > 0) || size > 1e15)
				return cli_usage_error(&cmd_predict_collect, "bad --size '%s' (a positive number)", optarg);
			have_size = 1;
			break;
		case 'o': dir = optarg; break;
		case 'l': lines = optarg; break;
		case 'p': pages = optarg; break;
		case 'S': setlist = optarg; break;
		case 'm': machine = optarg; break;
		case 't': trace = optarg; break;
		case 'f':
			if (!lp_trace_format_known(optarg))
				return cli_usage_error(&cmd_predict_collect, "unknown trace format '%s' (%s)", optarg,
						       lp_trace_format_names());
			from = optarg;
			break;
		case 'b':
			free(binary);
			if (!(binary = realpath(optarg, NULL))) {
				cli_error("cannot open binary '%s': %s", optarg, strerror(errno));
				return CLI_ERROR;
			}
			break;
		case 'k': keep = 1; break;
		case 'P':
			if (cli_parse_size(optarg, &phase) < 0 || (phase & (phase - 1))) {
				free(binary);
				return cli_usage_error(&cmd_predict_collect, "bad --phase '%s' (0 or a power of two)", optarg);
			}
			break;
		case 'q': quiet = 1; break;
		case 'h': free(binary); return cli_print_usage(&cmd_predict_collect);
		default: free(binary); return cli_usage_error(&cmd_predict_collect, "bad option");
		}
	}
	if (!have_size || !dir) {
		free(binary);
		return cli_usage_error(&cmd_predict_collect, "collect needs --size P and -o DIR");
	}
	if (!trace && optind >= argc) {
		free(binary);
		return cli_usage_error(&cmd_predict_collect, "collect needs a program to run (after --) or --trace");
	}
	if (trace && optind < argc) {
		free(binary);
		return cli_usage_error(&cmd_predict_collect, "give a program or --trace, not both");
	}
	if (add_list(lines, blocks, &nblocks, 16, "line") < 0 || add_list(pages, blocks, &nblocks, 16, "page") < 0) {
		free(binary);
		return CLI_USAGE;
	}
	if (setlist && add_sets(setlist, setd, &nsetd, 16) < 0) {
		free(binary);
		return CLI_USAGE;
	}
	if (machine) {
		struct lp_machine mach;
		if (lp_machine_get(&mach, machine) < 0) {
			cli_error("%s", lp_errmsg());
			free(binary);
			return CLI_ERROR;
		}
		for (size_t i = 0; i < mach.n; i++) {
			const struct lp_pred_level *l = &mach.level[i];
			uint64_t sets = lp_pred_level_sets(l);
			char item[64];
			int dup = 0;
			if (l->kind != LP_PRED_LEVEL_CACHE || !l->assoc || sets <= 1)
				continue;
			snprintf(item, sizeof(item), "%llu", (unsigned long long)l->block);
			for (size_t j = 0; j < nsetd; j++)
				dup |= setd[j].sets == sets && setd[j].line == l->block;
			if (add_list(item, blocks, &nblocks, 16, "line") < 0 ||
			    (!dup && add_sets((snprintf(item, sizeof(item), "%llux%llu", (unsigned long long)sets,
						       (unsigned long long)l->block), item),
					      setd, &nsetd, 16) < 0)) {
				free(binary);
				return CLI_USAGE;
			}
		}
	}
	for (size_t i = 0; i < nsetd; i++) {
		char item[32];
		snprintf(item, sizeof(item), "%llu", (unsigned long long)setd[i].line);
		if (add_list(item, blocks, &nblocks, 16, "line") < 0) {
			free(binary);
			return CLI_USAGE;
		}
	}
	if (mkdir(dir, 0777) < 0 && errno != EEXIST) {
		cli_error("cannot create directory '%s': %s", dir, strerror(errno));
		free(binary);
		return CLI_ERROR;
	}
	if (asprintf(&out, "%s/size-%.15g.xrun", dir, size) < 0) {
		free(binary);
		return CLI_ERROR;
	}
	if (!trace) {
		char *prog = find_program(argv[optind]);
		size_t len = 0;
		if (!prog) {
			cli_error("cannot run '%s': %s", argv[optind], strerror(ENOENT));
			status = 127;
			goto done;
		}
		if (!binary)
			binary = prog;
		else
			free(prog);
		for (int i = optind; i < argc; i++)
			len += strlen(argv[i]) + 1;
		if (!(command = calloc(len + 1, 1)))
			goto nomem;
		for (int i = optind; i < argc; i++) {
			if (i > optind)
				strcat(command, " ");
			strcat(command, argv[i]);
		}
		if (keep ? asprintf(&tpath, "%s/size-%.15g.lpt", dir, size) < 0
			 : asprintf(&tpath, "%s/.size-%.15g.%d.lpt", dir, size, (int)getpid()) < 0) {
			tpath = NULL;
			goto nomem;
		}
		rc = record(tpath, argv + optind);
		if (access(tpath, R_OK) != 0) {
			/* locprof record has said why when it failed */
			if (rc <= 0)
				cli_error("no trace of '%s': it made no instrumented memory reference", argv[optind]);
			status = rc > 0 ? rc : CLI_ERROR;
			goto done;
		}
		if (rc != 0)
			cli_warn("'%s' exited with status %d; its trace is used as recorded", argv[optind], rc);
		trace = tpath;
	} else if (!(command = strdup(trace))) {
		goto nomem;
	}
	if ((rc = lp_trace_reader_open(&r, trace, from)) < 0) {
		cli_error("cannot read trace '%s': %s", trace, lp_errmsg());
		status = CLI_ERROR;
		goto done;
	}
	cfg.blocks = blocks;
	cfg.nblocks = nblocks;
	cfg.phase = phase;
	cfg.setd = setd;
	cfg.nsetd = nsetd;
	cfg.maps = lp_trace_reader_mappings(r);
	cfg.binary = binary;
	if ((rc = lp_pred_collect_new(&xc, &cfg)) < 0) {
		cli_error("%s", lp_errmsg());
		status = CLI_ERROR;
		goto done;
	}
	if (!binary && (!cfg.maps || !cfg.maps->n))
		cli_warn("the trace carries no mappings and no --binary was given: no loops, "
			 "each pc is its own group");
	if (!(buf = malloc(65536 * sizeof(*buf))))
		goto nomem;
	for (;;) {
		ssize_t n = lp_trace_read(r, buf, 65536);
		if (n == 0)
			break;
		if (n < 0) {
			status = cli_trace_read_failed((int)n, r);
			if (status != CLI_PARTIAL)
				goto done;
			break;
		}
		if ((rc = lp_pred_collect_feed(xc, buf, (size_t)n)) < 0) {
			cli_error("%s", lp_errmsg());
			status = CLI_ERROR;
			goto done;
		}
	}
	if ((rc = lp_pred_collect_write(xc, out, size, command)) < 0) {
		cli_error("cannot write the run: %s", lp_errmsg());
		status = CLI_ERROR;
		goto done;
	}
	if (!quiet) {
		struct lp_pred_collect_summary s;
		lp_pred_collect_summary(xc, &s);
		cli_note("%s: size %g, %llu references, %llu pcs (%llu in the binary), %llu loops, %llu groups",
			 out, size, (unsigned long long)s.references, (unsigned long long)s.pcs,
			 (unsigned long long)s.pcs_placed, (unsigned long long)s.loops,
			 (unsigned long long)s.groups);
		if (s.place_failed)
			cli_warn("the pcs are not in '%s' at any load address: no loops, no groups by loop", binary);
		else if (s.pcs && s.pcs_placed * 2 < s.pcs)
			cli_warn("most pcs are in no known binary: give --binary, or a trace with mappings");
	}
	goto done;
nomem:
	cli_error("out of memory");
	status = CLI_ERROR;
done:
	lp_pred_collect_free(xc);
	lp_trace_reader_free(r);
	if (tpath && !keep)
		unlink(tpath);
	free(tpath);
	free(buf);
	free(out);
	free(binary);
	free(command);
	return status;
}
