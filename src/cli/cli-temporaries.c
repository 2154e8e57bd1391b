/* Removing the temporary files (NAME.tmp.PID, common/io.c) of the
 * outputs a command is writing when a signal ends locprof, so that an
 * interrupted `record`, `sample -o`, `convert` or `predict collect` leaves
 * nothing behind. SIGKILL cannot be caught: the next command that writes
 * the same output clears those (lp_out_open). */
#include "cli.h"

#include <locprof/common.h>

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

/* Every signal whose default action ends the process, with a handler that
 * removes the temporary files first; SIGINT, SIGTERM and SIGHUP are
 * replaced while the program runs (passed on to it), and reach this
 * handler before and after. */
static const int fatal_signals[] = { SIGINT,  SIGTERM, SIGHUP,    SIGQUIT, SIGALRM, SIGUSR1,
				     SIGUSR2, SIGPIPE, SIGVTALRM, SIGPROF, SIGXCPU, SIGXFSZ,
				     SIGABRT, SIGSYS,  SIGSEGV,   SIGBUS,  SIGFPE,  SIGILL };
static struct sigaction old_actions[65];

static void on_fatal(int sig)
{
	int saved = errno;

	lp_tmp_remove_all();
	sigaction(sig, &old_actions[sig], NULL);
	/* A fault comes back when the instruction runs again, now to the
	 * previous handler (a sanitizer's, or the default); any other signal
	 * is sent again and acts when this handler returns. */
	if (sig != SIGSEGV && sig != SIGBUS && sig != SIGFPE && sig != SIGILL)
		raise(sig);
	errno = saved;
}

static void remove_at_exit(void)
{
	lp_tmp_remove_all();
}

void cli_remove_temporaries_on_exit(void)
{
	static int installed;
	struct sigaction sa;

	if (installed++)
		return;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_fatal;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(fatal_signals) / sizeof(fatal_signals[0]); i++) {
		int sig = fatal_signals[i];
		if (sigaction(sig, NULL, &old_actions[sig]) < 0 || old_actions[sig].sa_handler == SIG_IGN)
			continue; /* an ignored signal (nohup) stays ignored */
		sigaction(sig, &sa, NULL);
	}
	atexit(remove_at_exit);
}
