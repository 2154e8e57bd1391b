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
	"       locprof predict collect --sizes P,P,...|auto -o DIR [options] -- PROGRAM [ARGS...]\n"
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
	"\n"
	"Several sizes in one command: '{}' in PROGRAM, ARGS and --build is the size.\n"
	"      --sizes LIST    collect each size of LIST (P,P,...)\n"
	"      --sizes auto    choose the sizes: COUNT sizes over SPAN from --start,\n"
	"                      fitted, and checked at FACTOR times the largest on\n"
	"                      --machine (default host); while the checks crosses\n"
	"                      or few ask for larger sizes, collect those instead\n"
	"                      (up to 4 rounds, within --budget); prints the sizes\n"
	"      --start P       the smallest size to try (with auto)\n"
	"      --count N       sizes (default 5)\n"
	"      --span X        largest over smallest (default 2.5)\n"
	"      --multiple K    sizes are multiples of K (default 1)\n"
	"      --factor F      predicted size over the largest fitted (default 8)\n"
	"      --budget REFS   references of the largest run at most (default 1e8)\n"
	"      --build CMD     shell command run before each size (e.g. a compile\n"
	"                      with -DN={})\n"
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

struct collect_opts {
	double size;
	int have_size, quiet, keep;
	uint64_t phase;
	const char *dir, *trace, *from, *lines, *pages, *setlist, *machine;
	char *binary; /* realpath of --binary, or the program run */
};

/* The options into o; returns -1 to go on, or the exit status. */
static int collect_options(int argc, char **argv, struct collect_opts *o)
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
	int c;

	while ((c = cli_getopt(argc, argv, "+s:o:l:p:S:m:t:f:b:kqh", opts)) != -1) {
		switch (c) {
		case 's':
			if (cli_parse_double(optarg, &o->size) < 0 || !(o->size > 0) || o->size > 1e15)
				return cli_usage_error(&cmd_predict_collect, "bad --size '%s' (a positive number)", optarg);
			o->have_size = 1;
			break;
		case 'o': o->dir = optarg; break;
		case 'l': o->lines = optarg; break;
		case 'p': o->pages = optarg; break;
		case 'S': o->setlist = optarg; break;
		case 'm': o->machine = optarg; break;
		case 't': o->trace = optarg; break;
		case 'f':
			if (!lp_trace_format_known(optarg))
				return cli_usage_error(&cmd_predict_collect, "unknown trace format '%s' (%s)", optarg,
						       lp_trace_format_names());
			o->from = optarg;
			break;
		case 'b':
			free(o->binary);
			if (!(o->binary = realpath(optarg, NULL))) {
				cli_error("cannot open binary '%s': %s", optarg, strerror(errno));
				return CLI_ERROR;
			}
			break;
		case 'k': o->keep = 1; break;
		case 'P':
			if (cli_parse_size(optarg, &o->phase) < 0 || (o->phase & (o->phase - 1)))
				return cli_usage_error(&cmd_predict_collect, "bad --phase '%s' (0 or a power of two)", optarg);
			break;
		case 'q': o->quiet = 1; break;
		case 'h': return cli_print_usage(&cmd_predict_collect);
		default: return cli_usage_error(&cmd_predict_collect, "%s", cli_getopt_error());
		}
	}
	if (!o->have_size || !o->dir)
		return cli_usage_error(&cmd_predict_collect, "collect needs --size P and -o DIR");
	if (!o->trace && optind >= argc)
		return cli_usage_error(&cmd_predict_collect, "collect needs a program to run (after --) or --trace");
	if (o->trace && optind < argc)
		return cli_usage_error(&cmd_predict_collect, "give a program or --trace, not both");
	return -1;
}

/* The block sizes (--line, --page) and set-distance geometries (--sets,
 * and those of --machine's set-associative caches, whose lines are added
 * to the block sizes); returns -1 to go on, or the exit status. */
static int collect_geometry(const struct collect_opts *o, struct lp_pred_collect_config *cfg, uint64_t *blocks,
			    struct lp_pred_setspec *setd)
{
	size_t nblocks = 0, nsetd = 0;

	if (add_list(o->lines, blocks, &nblocks, 16, "line") < 0 || add_list(o->pages, blocks, &nblocks, 16, "page") < 0)
		return CLI_USAGE;
	if (o->setlist && add_sets(o->setlist, setd, &nsetd, 16) < 0)
		return CLI_USAGE;
	if (o->machine) {
		struct lp_machine mach;
		if (lp_machine_get(&mach, o->machine) < 0) {
			cli_error("%s", lp_errmsg());
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
					      setd, &nsetd, 16) < 0))
				return CLI_USAGE;
		}
	}
	for (size_t i = 0; i < nsetd; i++) {
		char item[32];
		snprintf(item, sizeof(item), "%llu", (unsigned long long)setd[i].line);
		if (add_list(item, blocks, &nblocks, 16, "line") < 0)
			return CLI_USAGE;
	}
	cfg->blocks = blocks;
	cfg->nblocks = nblocks;
	cfg->phase = o->phase;
	cfg->setd = setd;
	cfg->nsetd = nsetd;
	return -1;
}

/* Run the program under `locprof record --mode trace` into *tpath; its
 * command line into *command. Returns -1 to go on, or the exit status. */
static int collect_run(struct collect_opts *o, char **prog_argv, int nargs, char **command, char **tpath)
{
	char *prog = find_program(prog_argv[0]);
	size_t len = 0;
	int rc;

	if (!prog) {
		cli_error("cannot run '%s': %s", prog_argv[0], strerror(ENOENT));
		return 127;
	}
	if (!o->binary)
		o->binary = prog;
	else
		free(prog);
	for (int i = 0; i < nargs; i++)
		len += strlen(prog_argv[i]) + 1;
	if (!(*command = calloc(len + 1, 1)))
		goto nomem;
	for (int i = 0; i < nargs; i++) {
		if (i)
			strcat(*command, " ");
		strcat(*command, prog_argv[i]);
	}
	if (o->keep ? asprintf(tpath, "%s/size-%.15g.lpt", o->dir, o->size) < 0
		    : asprintf(tpath, "%s/.size-%.15g.%d.lpt", o->dir, o->size, (int)getpid()) < 0) {
		*tpath = NULL;
		goto nomem;
	}
	rc = record(*tpath, prog_argv);
	if (access(*tpath, R_OK) != 0) {
		/* locprof record has said why when it failed */
		if (rc <= 0)
			cli_error("no trace of '%s': it made no instrumented memory reference", prog_argv[0]);
		return rc > 0 ? rc : CLI_ERROR;
	}
	if (rc != 0)
		cli_warn("'%s' exited with status %d; its trace is used as recorded", prog_argv[0], rc);
	return -1;
nomem:
	cli_error("out of memory");
	return CLI_ERROR;
}

/* Feed the trace to the collection; returns -1 to go on, or the exit
 * status (CLI_PARTIAL: a damaged trace, read as far as it goes, in
 * *partial). */
static int collect_feed(struct lp_trace_reader *r, struct lp_pred_collect *xc, int *partial)
{
	struct lp_ref *buf = malloc(65536 * sizeof(*buf));
	int status = -1;

	if (!buf) {
		cli_error("out of memory");
		return CLI_ERROR;
	}
	for (;;) {
		ssize_t n = lp_trace_read(r, buf, 65536);
		if (n == 0)
			break;
		if (n < 0) {
			int st = cli_trace_read_failed((int)n, r);
			if (st != CLI_PARTIAL)
				status = st;
			else
				*partial = 1;
			break;
		}
		if (lp_pred_collect_feed(xc, buf, (size_t)n) < 0) {
			cli_error("%s", lp_errmsg());
			status = CLI_ERROR;
			break;
		}
	}
	free(buf);
	return status;
}

static void collect_summary(const struct collect_opts *o, const struct lp_pred_collect *xc, const char *out)
{
	struct lp_pred_collect_summary s;

	lp_pred_collect_summary(xc, &s);
	cli_note("%s: size %g, %llu references, %llu pcs (%llu in the binary), %llu loops, %llu groups", out,
		 o->size, (unsigned long long)s.references, (unsigned long long)s.pcs,
		 (unsigned long long)s.pcs_placed, (unsigned long long)s.loops, (unsigned long long)s.groups);
	if (s.place_failed)
		cli_warn("the pcs are not in '%s' at any load address: no loops, no groups by loop", o->binary);
	else if (s.pcs && s.pcs_placed * 2 < s.pcs)
		cli_warn("most pcs are in no known binary: give --binary, or a trace with mappings");
}

static int predict_collect(int argc, char **argv)
{
	struct collect_opts o = { .phase = 4096, .lines = "32,64,128", .pages = "4K,16K,32K" };
	uint64_t blocks[16];
	struct lp_pred_setspec setd[16];
	char *tpath = NULL, *out = NULL, *command = NULL;
	const char *trace;
	int status, partial = 0;
	struct lp_trace_reader *r = NULL;
	struct lp_pred_collect *xc = NULL;
	struct lp_pred_collect_config cfg = { 0 };

	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "--sizes"))
			return predict_collect_sizes(argc, argv);
	if ((status = collect_options(argc, argv, &o)) >= 0 || (status = collect_geometry(&o, &cfg, blocks, setd)) >= 0)
		goto done;
	status = CLI_ERROR;
	if (mkdir(o.dir, 0777) < 0 && errno != EEXIST) {
		cli_error("cannot create directory '%s': %s", o.dir, strerror(errno));
		goto done;
	}
	if (asprintf(&out, "%s/size-%.15g.xrun", o.dir, o.size) < 0) {
		out = NULL;
		goto done;
	}
	if (!o.trace) {
		if ((status = collect_run(&o, argv + optind, argc - optind, &command, &tpath)) >= 0)
			goto done;
		status = CLI_ERROR;
		trace = tpath;
	} else if (!(command = strdup(o.trace))) {
		cli_error("out of memory");
		goto done;
	} else {
		trace = o.trace;
	}
	if (lp_trace_reader_open(&r, trace, o.from) < 0) {
		cli_error("cannot read trace '%s': %s", trace, lp_errmsg());
		goto done;
	}
	cfg.maps = lp_trace_reader_mappings(r);
	cfg.binary = o.binary;
	if (lp_pred_collect_new(&xc, &cfg) < 0) {
		cli_error("%s", lp_errmsg());
		goto done;
	}
	if (!o.binary && (!cfg.maps || !cfg.maps->n))
		cli_warn("the trace carries no mappings and no --binary was given: no loops, "
			 "each pc is its own group");
	if ((status = collect_feed(r, xc, &partial)) >= 0)
		goto done;
	if (lp_pred_collect_write(xc, out, o.size, command) < 0) {
		cli_error("cannot write the run: %s", lp_errmsg());
		status = CLI_ERROR;
		goto done;
	}
	if (!o.quiet)
		collect_summary(&o, xc, out);
	status = partial ? CLI_PARTIAL : CLI_OK;
done:
	lp_pred_collect_free(xc);
	lp_trace_reader_free(r);
	if (tpath && !o.keep)
		unlink(tpath);
	free(tpath);
	free(out);
	free(o.binary);
	free(command);
	return status;
}
