/* The collector loop every backend that runs a program under the collector
 * shares: the instrumented program itself (record-inst.c) or a program
 * under a tool that speaks the same protocol (valgrind). */
#include "cli.h"
#include "record.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

double record_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Resolve PROGRAM as execvp would. */
int record_find_program(const char *prog, char *buf, size_t len)
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

/* environ without any variable that add[] sets, plus add[]. */
static char **make_env(char *const *add, char *const *extra)
{
	size_t n = 0, k = 0, m = 0, e = 0;
	char **v, **all;

	while (environ[n])
		n++;
	while (add[m])
		m++;
	while (extra && extra[e])
		e++;
	all = calloc(m + e + 1, sizeof(*all));
	v = calloc(n + m + e + 1, sizeof(*v));
	if (!v || !all) {
		free(all);
		free(v);
		return NULL;
	}
	memcpy(all, add, m * sizeof(*all));
	if (e)
		memcpy(all + m, extra, e * sizeof(*all));
	m += e;
	for (size_t i = 0; i < n; i++) {
		int ours = 0;
		for (size_t j = 0; j < m && !ours; j++) {
			size_t len = strcspn(all[j], "=") + 1;
			if (!strncmp(environ[i], all[j], len))
				ours = 1;
		}
		if (!ours)
			v[k++] = environ[i];
	}
	for (size_t j = 0; j < m; j++)
		v[k++] = all[j];
	free(all);
	return v;
}

static volatile sig_atomic_t forward_sig;

/* SIGINT, SIGTERM, SIGHUP: one sent to locprof by a process (kill, a
 * supervisor) is passed on to the program; one from the terminal (^C, a
 * hangup: si_code SI_KERNEL) went to the program's process group, the
 * program included, already. */
static void on_forward(int sig, siginfo_t *info, void *ctx)
{
	(void)ctx;
	if (info->si_code <= 0) /* SI_USER, SI_QUEUE, SI_TKILL: from a process */
		forward_sig = sig;
}

/* A profile of few samples: its ratios are shares of a few hundred
 * (cli_few_samples()); report's text says it again under the curves. */
static void few_samples_hint(const struct lp_record_output *x)
{
	double points, rate, expect;

	if (x->rate < 1 && cli_few_samples(x->samples, x->references, &points, &rate, &expect)) {
		if (!x->samples)
			cli_note("%s: no samples, so no miss ratios; --rate %g would give about %.0f",
				 strcmp(x->path, "-") ? x->path : "<stdout>", rate, expect);
		else
			cli_note("%s: only %llu samples, so its miss ratios are rough (within %.0f points); --rate %g "
				 "would give about %.0f",
				 strcmp(x->path, "-") ? x->path : "<stdout>", (unsigned long long)x->samples, points,
				 rate, expect);
	}
}

/* A run of several processes (a launcher, a shell script, the exec of a
 * shim: pyenv's `python3 -c 'print(1)'` under the valgrind backend left 79
 * profiles, 77 % of the references in the interpreter's): which one holds
 * most of the work, where that is not the program's own or there are
 * three or more. */
static unsigned long long output_refs(const struct lp_record_output *x, enum lp_record_mode mode)
{
	return mode == LP_RECORD_TRACE ? x->traced : x->references;
}

void record_busiest_output(const struct record_request *req, const struct lp_record_output *outs, size_t nout)
{
	size_t best = 0;
	unsigned long long all = 0, r;

	for (size_t i = 0; i < nout; i++) {
		all += output_refs(&outs[i], req->opts.mode);
		if (output_refs(&outs[i], req->opts.mode) > output_refs(&outs[best], req->opts.mode))
			best = i;
	}
	r = output_refs(&outs[best], req->opts.mode);
	if (req->quiet || nout < 2 || (nout == 2 && best == 0) || !all)
		return;
	cli_note("%zu profiles, %llu references in all; the most in %s: %llu (%.0f%%)", nout, all,
		 strcmp(outs[best].path, "-") ? outs[best].path : "<stdout>", r, 100.0 * (double)r / (double)all);
}

void record_print_output(const struct lp_record_output *x, const struct record_request *req, int exited)
{
	enum lp_record_mode mode = req->opts.mode;
	const char *path = strcmp(x->path, "-") ? x->path : "<stdout>";
	char how[96];

	if (!x->ended && exited >= 0)
		snprintf(how, sizeof(how), "exit %d, but the runtime's connection was lost: data up to the last flush",
			 exited);
	else if (!x->ended)
		snprintf(how, sizeof(how), "killed or cut short: data up to the last flush");
	else if (x->exec)
		snprintf(how, sizeof(how), "exec");
	else if (x->status < 0)
		snprintf(how, sizeof(how), "killed by signal %d", -x->status);
	else
		snprintf(how, sizeof(how), "exit %d", x->status);

	if (x->error)
		cli_error("%s (pid %u): not written: %s", path, x->pid, lp_strerror(x->error));
	else if (mode == LP_RECORD_TRACE)
		cli_note("%s: %llu references, %llu allocations, %u thread%s (pid %u, %s)", path,
			 (unsigned long long)x->traced, (unsigned long long)x->allocs, x->threads,
			 x->threads == 1 ? "" : "s", x->pid, how);
	else {
		cli_note("%s: %llu samples (%llu dangling) of %llu references at rate %.3g, %u thread%s (pid %u, %s)",
			 path, (unsigned long long)x->samples, (unsigned long long)x->dangling,
			 (unsigned long long)x->references, x->rate, x->threads, x->threads == 1 ? "" : "s",
			 x->pid, how);
		if (x->capped)
			cli_note("%s: over %llu samples at rate %g, so the rate was halved as the run went on: what is "
				 "kept is a sample at rate %.3g (--max-samples N sets the cap, 0 none)",
				 path, (unsigned long long)req->opts.max_samples, req->opts.rate, x->rate);
		few_samples_hint(x);
	}
}

int record_with_collector(const struct record_request *req, const char *path,
			  char *const *exec_argv, char *const *extra_env, uint64_t *connections,
			  int *ran)
{
	struct lp_recorder *r = NULL;
	const struct lp_record_output *outs;
	char **env;
	int status = 0, pipefd[2], exec_errno = 0, child_done = 0;
	double t0, t1 = 0;
	pid_t pid;
	size_t nout, lost = 0;
	uint64_t refs = 0;
	int empty;
	struct sigaction sa, old_int, old_quit, old_term, old_hup;

	*connections = 0;
	*ran = 0;
	if (lp_recorder_new(&r, &req->opts) < 0) {
		cli_error("cannot start the collector: %s", lp_errmsg());
		return CLI_ERROR;
	}
	env = make_env(lp_recorder_env(r), extra_env);
	if (!env || pipe2(pipefd, O_CLOEXEC) < 0) {
		cli_error("out of memory");
		lp_recorder_free(r);
		free(env);
		return CLI_ERROR;
	}
	/* The terminal's ^C and ^\ reach the program too; the collector waits
	 * to receive what the program sends while it dies. INT, TERM and HUP
	 * sent to locprof alone are passed on. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_IGN;
	sigaction(SIGQUIT, &sa, &old_quit);
	sa.sa_handler = NULL;
	sa.sa_sigaction = on_forward;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	sigaction(SIGHUP, &sa, &old_hup);
	fflush(NULL);
	t0 = record_now();
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
		/* -o -: the trace is locprof's stdout; the program's goes to
		 * stderr so that the stream stays a trace */
		if (req->opts.output && !strcmp(req->opts.output, "-"))
			dup2(STDERR_FILENO, STDOUT_FILENO);
		execve(path, exec_argv, env);
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
		if (forward_sig && !child_done) {
			kill(pid, forward_sig);
			forward_sig = 0;
		}
		if (!child_done) {
			pid_t w = waitpid(pid, &status, WNOHANG);
			if (w == pid) {
				child_done = 1;
				t1 = record_now();
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
	if (lp_recorder_finish(r) < 0) {
		cli_error("cannot write the output: %s", lp_errmsg());
		lost++;
	}
	nout = lp_recorder_outputs(r, &outs);
	*connections = lp_recorder_connections(r);
	if (exec_errno) {
		cli_error("cannot run '%s': %s", exec_argv[0], strerror(exec_errno));
		lp_recorder_free(r);
		return 127;
	}
	*ran = 1;
	for (size_t i = 0; i < nout; i++) {
		/* The program's process exited, yet its image sent no BYE: the
		 * runtime could not reach the collector again after the program
		 * took its descriptor (docs/runtime.md, "The connection"). The
		 * profile ends early: locprof's failure, not a success. */
		int exited = outs[i].pid == (uint32_t)pid && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
		int cut = exited >= 0 && !outs[i].ended && !outs[i].error;

		if (!req->quiet || outs[i].error || cut)
			record_print_output(&outs[i], req, exited);
		if (!req->quiet)
			record_region_print(req, &outs[i]);
		if (outs[i].error || cut)
			lost++;
		refs += output_refs(&outs[i], req->opts.mode);
	}
	record_busiest_output(req, outs, nout);
	if (!req->quiet && *connections)
		cli_note("run time %.3f s", t1 - t0);
	/* Connected (an allocation, the exit) but never counted a reference:
	 * the program's code was not instrumented after all (a Fortran
	 * source that clang handed to gfortran); a region never entered says
	 * so itself. The empty profile is kept. */
	empty = nout && !lost && !refs && !req->opts.region && WIFEXITED(status);
	if (empty)
		cli_error("'%s' ran no instrumented code: its profile %s holds no memory reference (a source "
			  "its compiler did not instrument? docs/commands/cc.md)",
			  exec_argv[0], strcmp(outs[0].path, "-") ? outs[0].path : "<stdout>");
	lp_recorder_free(r);
	/* An output that was not written is locprof's failure, whatever the
	 * program's status (the summary line above gives it). */
	if (lost || (*connections && !nout))
		return CLI_ERROR;
	if (empty)
		return CLI_ERROR;
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WIFEXITED(status) ? WEXITSTATUS(status) : CLI_ERROR;
}
