/* The `inst` backend of locprof record: the program was built with
 * `locprof cc`, so its runtime speaks to the collector by itself. */
#include "cli.h"
#include "record.h"

#include <locprof/symbol.h>

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const char *check(const struct record_request *req)
{
	if (req->counter)
		return "--counter is for --backend pmu";
	if (req->nbackend_opts)
		return "the inst backend takes no -X options";
	if (req->max_skid)
		return "--max-skid is for --backend pmu";
	return NULL;
}

/* The interpreter a "#!" line names, resolved as the kernel (and, for
 * `#!/usr/bin/env NAME`, env) would. 1 and out set, 0 if path is no
 * script. */
static int script_interpreter(const char *path, char *out, size_t len)
{
	char line[256], *word, *save = NULL;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	n = read(fd, line, sizeof(line) - 1);
	close(fd);
	if (n < 3 || line[0] != '#' || line[1] != '!')
		return 0;
	line[n] = 0;
	line[strcspn(line, "\n")] = 0;
	if (!(word = strtok_r(line + 2, " \t", &save)))
		return 0;
	if (!strcmp(strrchr(word, '/') ? strrchr(word, '/') + 1 : word, "env")) {
		/* the first word that is no option of env's: the program */
		while ((word = strtok_r(NULL, " \t", &save)) && (word[0] == '-' || strchr(word, '=')))
			;
		if (!word)
			return 0;
		return record_find_program(word, out, len) == 0;
	}
	snprintf(out, len, "%s", word);
	return 1;
}

static const char not_instrumented[] =
	"'%s' is not instrumented: rebuild it with 'locprof cc' (e.g. locprof cc -O2 prog.c "
	"-o prog), or use --backend valgrind";

/* A launcher (env VAR=x PROG, time PROG, taskset -c 0 PROG, nice, numactl,
 * timeout...) named as PROGRAM: one of its first arguments names an
 * instrumented program, as the launcher would find it. A word that only
 * looks like one (cp ./prog dir) costs a run that ends "ran no
 * instrumented code", not a wrong profile. */
#define LAUNCHER_ARGS 16
static int launches_instrumented(const struct record_request *req)
{
	char path[PATH_MAX];

	for (int i = 1; i <= LAUNCHER_ARGS && req->argv[i]; i++) {
		const char *w = req->argv[i];
		if (w[0] == '-' || strchr(w, '=') || record_find_program(w, path, sizeof(path)) < 0)
			continue;
		if (lp_binary_instrumented(path) == 1)
			return 1;
	}
	return 0;
}

/* sh -c '...', bash script.sh: a shell may start instrumented programs. */
static int is_shell(const char *path)
{
	static const char *const shells[] = { "sh", "bash", "dash", "zsh", "ksh", "busybox" };
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;

	for (size_t i = 0; i < sizeof(shells) / sizeof(shells[0]); i++)
		if (!strcmp(base, shells[i]))
			return 1;
	return 0;
}

/* Refuse a program that cannot send anything before it runs: its ELF file
 * (or its script's interpreter's) carries no runtime. A script run by an
 * ordinary interpreter may still start instrumented programs, which
 * nothing can tell in advance: that is said, and the run goes on. */
static int ready(const struct record_request *req)
{
	char interp[PATH_MAX];
	int ins = lp_binary_instrumented(req->prog);

	if (ins == 1)
		return CLI_OK;
	if (ins == 0) {
		if (launches_instrumented(req))
			return CLI_OK;
		if (is_shell(req->prog)) {
			if (!req->quiet)
				cli_note("'%s' is a shell, which is not instrumented: cannot tell whether it runs "
					 "instrumented programs; running it", req->argv[0]);
			return CLI_OK;
		}
		cli_error(not_instrumented, req->argv[0]);
		return CLI_ERROR;
	}
	if (ins != LP_EFORMAT || !script_interpreter(req->prog, interp, sizeof(interp))) {
		if (!req->quiet)
			cli_note("cannot tell whether '%s' is instrumented (%s); running it", req->argv[0],
				 lp_errmsg());
		return CLI_OK;
	}
	if (lp_binary_instrumented(interp) == 1)
		return CLI_OK;
	if (!req->quiet)
		cli_note("'%s' is a script for '%s', which is not instrumented: cannot tell whether "
			 "it runs instrumented programs; running it", req->argv[0], interp);
	return CLI_OK;
}

/* --samples N starts at this rate and halves it online (docs/runtime.md). */
#define INST_START_RATE (1.0 / 128)

static int run(const struct record_request *req)
{
	static struct record_request r;
	uint64_t connections;
	int ran, st;

	r = *req;
	if (r.target_samples) {
		r.opts.target_samples = r.target_samples;
		r.opts.rate = INST_START_RATE;
	} else
		r.opts.max_samples = r.max_samples;
	req = &r;
	st = record_with_collector(req, req->prog, req->argv, NULL, &connections, &ran);

	if (ran && !connections && st > 128 && st < 128 + 65) {
		/* killed before its runtime connected, which it does at a
		 * thread's first instrumented reference */
		cli_error("no profile: '%s' was killed by signal %d before its first instrumented memory reference",
			  req->argv[0], st - 128);
		return st;
	}
	if (ran && !connections) {
		/* a script whose programs were not instrumented after all, or
		 * an instrumented program that ended before its runtime
		 * started */
		cli_error("no profile: '%s' ran no instrumented code", req->argv[0]);
		return CLI_ERROR;
	}
	return st;
}

const struct record_backend record_backend_inst = {
	.name = "inst",
	.summary = "programs built with `locprof cc` (compiler instrumentation)",
	.check = check,
	.ready = ready,
	.run = run,
};
