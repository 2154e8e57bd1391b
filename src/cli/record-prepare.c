/* What `locprof record` does before it starts the program, so that a run
 * whose output cannot be kept is refused before the program has had any
 * effect: the output's name and directory are checked, stale temporary
 * files of killed recordings are cleared, an existing output is kept as
 * OUT.old. (A signal that ends locprof removes the temporary files of the
 * outputs being written: cli-temporaries.c, for every command.) */
#include "cli.h"
#include "record.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int record_prepare_output(const struct record_request *req)
{
	const char *out = req->opts.output;
	struct stat st;
	char *tmp;
	int fd, n;

	if (!strcmp(out, "-"))
		return CLI_OK;
	if (stat(out, &st) == 0 && S_ISDIR(st.st_mode)) {
		cli_error("cannot write '%s': it is a directory", out);
		return CLI_ERROR;
	}
	/* The outputs are written as OUT.tmp.PID by this process (common/io.c):
	 * create that name now, so that a missing or read-only directory stops
	 * the run before the program starts. */
	if (asprintf(&tmp, "%s.tmp.%d", out, (int)getpid()) < 0) {
		cli_error("out of memory");
		return CLI_ERROR;
	}
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		cli_error("cannot create '%s': %s", out, strerror(errno));
		free(tmp);
		return CLI_ERROR;
	}
	close(fd);
	unlink(tmp);
	free(tmp);

	n = lp_recorder_remove_stale(out);
	if (n > 0 && !req->quiet)
		cli_note("removed %d temporary file%s of killed recordings to '%s'", n, n == 1 ? "" : "s",
			 out);
	return CLI_OK;
}

int record_keep_old_output(const struct record_request *req)
{
	const char *out = req->opts.output;
	struct stat st;
	char *old;

	/* As perf keeps perf.data.old: the previous output stays one run. */
	if (!strcmp(out, "-") || lstat(out, &st) < 0 || !S_ISREG(st.st_mode))
		return CLI_OK;
	if (asprintf(&old, "%s.old", out) < 0) {
		cli_error("out of memory");
		return CLI_ERROR;
	}
	if (rename(out, old) < 0) {
		cli_error("cannot keep the existing '%s' as '%s': %s", out, old, strerror(errno));
		free(old);
		return CLI_ERROR;
	}
	free(old);
	return CLI_OK;
}

/* ---- signals that end locprof ------------------------------------------ */
