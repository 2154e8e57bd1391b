/* locprof record: run a program built with `locprof cc` and collect its
 * samples (or its full trace), one output per process. */
#include "cli.h"

#include <locprof/record.h>

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static const char usage[] =
	"usage: locprof record [options] [--] PROGRAM [ARGS...]\n"
	"\n"
	"Run PROGRAM (built with `locprof cc`) and record its data locality:\n"
	"a sample of its references with their reuse distances (StatCache), or\n"
	"with --mode trace every reference. Every thread of every process is\n"
	"recorded; each process gets its own output: OUT for the first, and\n"
	"OUT's name with the pid inserted (prof.1234.lpp) for the others.\n"
	"PROGRAM's stdin, stdout and stderr are its own, and locprof exits with\n"
	"PROGRAM's exit status (128+N if a signal N killed it).\n"
	"\n"
	"  -o, --output OUT    output (default locprof.lpp; trace mode locprof.lpt)\n"
	"  -m, --mode MODE     sample (default) or trace\n"
	"  -r, --rate R        sampling rate, the chance of each reference being\n"
	"                      sampled (default 1e-4)\n"
	"  -l, --line SIZES    line sizes in bytes, up to 4 (default 64; e.g. 64,128)\n"
	"  -s, --seed N        random seed (default 1): same seed, same samples\n"
	"      --flush-ms MS   the program sends its data at least this often\n"
	"                      (default 100): a SIGKILL loses at most that much\n"
	"  -b, --backend NAME  inst (the only one in this build)\n"
	"  -q, --quiet         no summary on stderr\n"
	"  -h, --help          this help\n"
	"\n"
	"Until the .lpp profile writer lands, sample mode writes the text sample\n"
	"list of docs/formats.md under the OUT name. See docs/commands/record.md.\n";

static int run(int argc, char **argv);

const struct cli_command cmd_record = {
	.name = "record",
	.summary = "run a program and record its reuse-distance samples or trace",
	.usage = usage,
	.run = run,
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Resolve PROGRAM as execvp would. */
static int find_program(const char *prog, char *buf, size_t len)
{
	const char *path = getenv("PATH");

	if (strchr(prog, '/')) {
		snprintf(buf, len, "%s", prog);
		return access(buf, X_OK);
	}
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		const char *end = strchr(path, ':');
		size_t n = end ? (size_t)(end - path) : strlen(path);
		snprintf(buf, len, "%.*s/%s", (int)n, n ? path : ".", prog);
		if (access(buf, X_OK) == 0)
			return 0;
		if (!end)
			break;
		path = end + 1;
	}
	return -1;
}

/* 1 if the ELF file has a symbol (static or dynamic) starting with one of
 * the instrumentation callback names, 0 if not, -1 if it is not readable
 * as ELF (a script, say). */
static int elf_instrumented(const char *path)
{
	static const char *const names[] = { "__sanitizer_cov_load", "__sanitizer_cov_store",
					     "__tsan_read", "__tsan_write" };
	int fd = open(path, O_RDONLY | O_CLOEXEC), found = 0;
	struct stat st;
	const uint8_t *f;
	const Elf64_Ehdr *eh;

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || st.st_size < (off_t)sizeof(Elf64_Ehdr)) {
		close(fd);
		return -1;
	}
	f = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (f == MAP_FAILED)
		return -1;
	eh = (const Elf64_Ehdr *)f;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_shoff + (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr) > (uint64_t)st.st_size) {
		munmap((void *)f, (size_t)st.st_size);
		return -1;
	}
	const Elf64_Shdr *sh = (const Elf64_Shdr *)(f + eh->e_shoff);
	for (unsigned i = 0; i < eh->e_shnum && !found; i++) {
		if (sh[i].sh_type != SHT_SYMTAB && sh[i].sh_type != SHT_DYNSYM)
			continue;
		if (sh[i].sh_link >= eh->e_shnum)
			continue;
		const Elf64_Shdr *str = &sh[sh[i].sh_link];
		if (sh[i].sh_offset + sh[i].sh_size > (uint64_t)st.st_size ||
		    str->sh_offset + str->sh_size > (uint64_t)st.st_size || !sh[i].sh_entsize)
			continue;
		const char *strs = (const char *)f + str->sh_offset;
		for (uint64_t k = 0; k < sh[i].sh_size / sizeof(Elf64_Sym) && !found; k++) {
			const Elf64_Sym *s = (const Elf64_Sym *)(f + sh[i].sh_offset) + k;
			if (s->st_name >= str->sh_size)
				continue;
			const char *name = strs + s->st_name;
			size_t max = str->sh_size - s->st_name;
			for (size_t j = 0; j < sizeof(names) / sizeof(names[0]); j++)
				if (strnlen(name, max) < max && !strncmp(name, names[j], strlen(names[j])))
					found = 1;
		}
	}
	munmap((void *)f, (size_t)st.st_size);
	return found;
}

/* environ without any LOCPROF_* of ours, plus the recorder's settings. */
static char **make_env(char *const *add)
{
	size_t n = 0, k = 0, m = 0;
	char **v;

	while (environ[n])
		n++;
	while (add[m])
		m++;
	v = calloc(n + m + 1, sizeof(*v));
	if (!v)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		int ours = 0;
		for (size_t j = 0; j < m; j++) {
			size_t len = strcspn(add[j], "=") + 1;
			if (!strncmp(environ[i], add[j], len))
				ours = 1;
		}
		if (!ours)
			v[k++] = environ[i];
	}
	for (size_t j = 0; j < m; j++)
		v[k++] = add[j];
	return v;
}

static volatile sig_atomic_t forward_sig;
static void on_forward(int sig)
{
	forward_sig = sig;
}

static int run(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "mode", required_argument, NULL, 'm' },
		{ "rate", required_argument, NULL, 'r' },
		{ "line", required_argument, NULL, 'l' },
		{ "seed", required_argument, NULL, 's' },
		{ "flush-ms", required_argument, NULL, 'F' },
		{ "backend", required_argument, NULL, 'b' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct lp_record_options o = { .mode = LP_RECORD_SAMPLE, .rate = 1e-4, .seed = 1,
				       .flush_ms = 100, .nlines = 1, .line_size = { 64 } };
	struct lp_recorder *r = NULL;
	const struct lp_record_output *outs;
	char prog[PATH_MAX], **env = NULL;
	int c, quiet = 0, status = 0, pipefd[2], exec_errno = 0, child_done = 0;
	uint64_t u;
	double t0, t1 = 0;
	pid_t pid;
	size_t nout;
	struct sigaction sa, old_int, old_quit, old_term, old_hup;

	while ((c = cli_getopt(argc, argv, "+o:m:r:l:s:b:qh", opts)) != -1) {
		switch (c) {
		case 'o': o.output = optarg; break;
		case 'm':
			if (!strcmp(optarg, "sample"))
				o.mode = LP_RECORD_SAMPLE;
			else if (!strcmp(optarg, "trace"))
				o.mode = LP_RECORD_TRACE;
			else
				return cli_usage_error(&cmd_record, "unknown mode '%s' (sample, trace)", optarg);
			break;
		case 'r':
			if (cli_parse_double(optarg, &o.rate) < 0 || !(o.rate > 0 && o.rate <= 1))
				return cli_usage_error(&cmd_record, "bad --rate '%s' (0 < R <= 1)", optarg);
			break;
		case 'l': {
			uint64_t *v;
			size_t n;
			if (cli_parse_size_list(optarg, &v, &n) < 0 || !n || n > 4)
				return cli_usage_error(&cmd_record, "bad --line '%s' (1 to 4 sizes)", optarg);
			for (size_t i = 0; i < n; i++) {
				if (v[i] < 1 || v[i] > (1u << 20) || (v[i] & (v[i] - 1))) {
					free(v);
					return cli_usage_error(&cmd_record,
							       "line sizes must be powers of two up to 1M: '%s'", optarg);
				}
				o.line_size[i] = (uint32_t)v[i];
			}
			o.nlines = (uint32_t)n;
			free(v);
			break;
		}
		case 's':
			if (cli_parse_u64(optarg, &o.seed) < 0)
				return cli_usage_error(&cmd_record, "bad --seed '%s'", optarg);
			break;
		case 'F':
			if (cli_parse_u64(optarg, &u) < 0 || !u || u > 3600000)
				return cli_usage_error(&cmd_record, "bad --flush-ms '%s'", optarg);
			o.flush_ms = (uint32_t)u;
			break;
		case 'b':
			if (strcmp(optarg, "inst")) {
				cli_error("backend '%s' is not available in this build (available: inst)", optarg);
				return CLI_USAGE;
			}
			break;
		case 'q': quiet = 1; break;
		case 'h': return cli_print_usage(&cmd_record);
		default: return cli_usage_error(&cmd_record, "bad option");
		}
	}
	if (optind >= argc)
		return cli_usage_error(&cmd_record, "no program to run");
	if (!o.output)
		o.output = o.mode == LP_RECORD_TRACE ? "locprof.lpt" : "locprof.lpp";
	if (o.mode == LP_RECORD_TRACE && !lp_trace_format_for_path(o.output))
		return cli_usage_error(&cmd_record, "cannot tell the trace format of '%s' (known: %s)",
				       o.output, lp_trace_format_names());
	if (find_program(argv[optind], prog, sizeof(prog)) < 0) {
		cli_error("cannot run '%s': %s", argv[optind], strerror(errno ? errno : ENOENT));
		return 127;
	}
	if (lp_recorder_new(&r, &o) < 0) {
		cli_error("cannot start the collector: %s", lp_errmsg());
		return CLI_ERROR;
	}
	env = make_env(lp_recorder_env(r));
	if (!env || pipe2(pipefd, O_CLOEXEC) < 0) {
		cli_error("out of memory");
		lp_recorder_free(r);
		free(env);
		return CLI_ERROR;
	}
	/* The terminal's ^C and ^\ reach the program too; the collector waits
	 * to receive what the program sends while it dies. TERM and HUP sent to
	 * locprof alone are passed on. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_IGN;
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGQUIT, &sa, &old_quit);
	sa.sa_handler = on_forward;
	sigaction(SIGTERM, &sa, &old_term);
	sigaction(SIGHUP, &sa, &old_hup);
	fflush(NULL);
	t0 = now_s();
	pid = fork();
	if (pid < 0) {
		cli_error("cannot fork: %s", strerror(errno));
		lp_recorder_free(r);
		free(env);
		return CLI_ERROR;
	}
	if (pid == 0) {
		int e;
		sigaction(SIGINT, &old_int, NULL);
		sigaction(SIGQUIT, &old_quit, NULL);
		sigaction(SIGTERM, &old_term, NULL);
		sigaction(SIGHUP, &old_hup, NULL);
		close(pipefd[0]);
		execve(prog, argv + optind, env);
		e = errno;
		if (write(pipefd[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(pipefd[1]);
	lp_recorder_set_main_pid(r, (uint32_t)pid);
	if (read(pipefd[0], &exec_errno, sizeof(exec_errno)) != sizeof(exec_errno))
		exec_errno = 0;
	close(pipefd[0]);
	free(env);
	for (;;) {
		int n = lp_recorder_poll(r, 50);
		if (n < 0) {
			cli_error("collector: %s", lp_errmsg());
			break;
		}
		if (forward_sig) {
			kill(pid, forward_sig);
			forward_sig = 0;
		}
		if (!child_done) {
			pid_t w = waitpid(pid, &status, WNOHANG);
			if (w == pid) {
				child_done = 1;
				t1 = now_s();
			}
		}
		/* Done when the program has ended and so have the connections of
		 * all its processes; one more look catches a last connection
		 * still in the listen queue. */
		if (child_done && n == 0 && lp_recorder_poll(r, 0) == 0)
			break;
	}
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGQUIT, &old_quit, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	sigaction(SIGHUP, &old_hup, NULL);
	if (lp_recorder_finish(r) < 0)
		cli_error("cannot write the output: %s", lp_errmsg());
	nout = lp_recorder_outputs(r, &outs);
	if (exec_errno) {
		cli_error("cannot run '%s': %s", argv[optind], strerror(exec_errno));
		lp_recorder_free(r);
		return 127;
	}
	if (!lp_recorder_connections(r)) {
		if (elf_instrumented(prog) != 1) {
			cli_error("'%s' is not instrumented: rebuild it with 'locprof cc' "
				  "(e.g. locprof cc -O2 prog.c -o prog), or use --backend valgrind",
				  argv[optind]);
			lp_recorder_free(r);
			return CLI_ERROR;
		}
		if (!quiet)
			cli_note("no profile: '%s' made no instrumented memory reference", argv[optind]);
	}
	for (size_t i = 0; i < nout && !quiet; i++) {
		const struct lp_record_output *x = &outs[i];
		char how[64];
		if (!x->ended)
			snprintf(how, sizeof(how), "killed or cut short: data up to the last flush");
		else if (x->status < 0)
			snprintf(how, sizeof(how), "killed by signal %d", -x->status);
		else
			snprintf(how, sizeof(how), "exit %d", x->status);
		if (x->error)
			cli_error("%s (pid %u): not written: %s", x->path, x->pid, lp_strerror(x->error));
		else if (o.mode == LP_RECORD_TRACE)
			cli_note("%s: %llu references, %llu allocations, %u thread%s (pid %u, %s)", x->path,
				 (unsigned long long)x->traced, (unsigned long long)x->allocs,
				 x->threads, x->threads == 1 ? "" : "s", x->pid, how);
		else
			cli_note("%s: %llu samples (%llu dangling) of %llu references, %u thread%s (pid %u, %s)",
				 x->path, (unsigned long long)x->samples,
				 (unsigned long long)x->dangling, (unsigned long long)x->references,
				 x->threads, x->threads == 1 ? "" : "s", x->pid, how);
	}
	if (!quiet)
		cli_note("run time %.3f s", t1 - t0);
	lp_recorder_free(r);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WIFEXITED(status) ? WEXITSTATUS(status) : CLI_ERROR;
}
