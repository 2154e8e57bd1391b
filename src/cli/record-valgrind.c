/* The `valgrind` backend of locprof record: any binary, run under valgrind
 * with locprof's tool (src/vg), which speaks the collector protocol, so the
 * shared collector loop (record-collect.c) does the rest.
 *
 * Valgrind finds a tool as $VALGRIND_LIB/<tool>-amd64-linux, and next to it
 * vgpreload_core-amd64-linux.so, default.supp and, for a tool replacing
 * malloc, vgpreload_<tool>-amd64-linux.so. Ours live in the build (or
 * install) tree and the others in the system's valgrind directory, so every
 * run links them into a private temporary directory and points VALGRIND_LIB
 * there; the user never sees it. */
#include "cli.h"
#include "cli-path.h"
#include "record.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef LOCPROF_VG_SYSLIB
#define LOCPROF_VG_SYSLIB "/usr/libexec/valgrind"
#endif

#define VG_TOOL "locprof-amd64-linux"
#define VG_PRELOAD "vgpreload_locprof-amd64-linux.so"
#define VG_PRELOAD_REPLACE "vgpreload_locprof-replace-amd64-linux.so"
#define VG_CORE_PRELOAD "vgpreload_core-amd64-linux.so"
#define VG_SUPP "default.supp"

static int is_file(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static int dir_has(const char *dir, const char *name)
{
	char p[PATH_MAX];

	if ((size_t)snprintf(p, sizeof(p), "%s/%s", dir, name) >= sizeof(p))
		return 0;
	return is_file(p);
}

/* The directory with our tool: $LOCPROF_VG_DIR, else the build tree or
 * install layout around the locprof executable (cli-path.h). */
static int find_tool_dir(char *out, size_t len)
{
	return cli_own_dir(CLI_OWN_VALGRIND, "LOCPROF_VG_DIR", VG_TOOL, out, len);
}

static int find_system_dir(char *out, size_t len)
{
	static const char *const dirs[] = { LOCPROF_VG_SYSLIB, "/usr/libexec/valgrind",
					    "/usr/lib/x86_64-linux-gnu/valgrind",
					    "/usr/lib/valgrind", "/usr/local/libexec/valgrind" };

	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		if (dir_has(dirs[i], VG_CORE_PRELOAD) && dir_has(dirs[i], VG_SUPP)) {
			snprintf(out, len, "%s", dirs[i]);
			return 0;
		}
	}
	return -1;
}

/* -X --allocs=yes|no|replace is ours (it decides which preload is in the
 * tool directory: the wrappers around the program's malloc, none, or
 * valgrind's malloc replacement); every other -X goes to valgrind as is. */
static int allocs_option(const char *opt, int *allocs)
{
	if (strncmp(opt, "--allocs=", 9))
		return 0;
	if (!strcmp(opt + 9, "yes"))
		*allocs = 1;
	else if (!strcmp(opt + 9, "no"))
		*allocs = 0;
	else if (!strcmp(opt + 9, "replace"))
		*allocs = 2;
	else
		return -1;
	return 1;
}

static const char *check(const struct record_request *req)
{
	int allocs = 1;

	if (req->counter)
		return "--counter is for --backend pmu";
	if (req->max_skid)
		return "--max-skid is for --backend pmu";
	if (req->target_samples)
		return "--samples is not supported by the valgrind backend; use --rate";
	if (req->max_samples_given && req->max_samples)
		return "--max-samples is not supported by the valgrind backend (it keeps every sample of its rate)";
	for (unsigned i = 0; i < req->nbackend_opts; i++) {
		const char *o = req->backend_opts[i];
		if (allocs_option(o, &allocs) < 0)
			return "bad -X --allocs (yes, no or replace)";
		if (o[0] != '-')
			return "-X takes valgrind options for this backend (e.g. -X --trace-children=no)";
		if (!strncmp(o, "--tool", 6))
			return "-X --tool: the valgrind backend runs locprof's own tool";
	}
	return NULL;
}

/* A temporary directory of links; a signal that ends locprof removes it
 * (lp_tmp_track). */
struct tooldir {
	char path[64];
	char links[4][PATH_MAX];
	int nlinks;
	int slots[5];
};

static void tooldir_remove(struct tooldir *d)
{
	for (int i = 0; i <= d->nlinks; i++)
		lp_tmp_untrack(d->slots[i]);
	for (int i = 0; i < d->nlinks; i++)
		unlink(d->links[i]);
	if (d->path[0])
		rmdir(d->path);
}

/* dir/from as d/name (from: NULL for name) */
static int tooldir_link_as(struct tooldir *d, const char *dir, const char *from, const char *name)
{
	char target[PATH_MAX], link[PATH_MAX];

	if ((size_t)snprintf(target, sizeof(target), "%s/%s", dir, from ? from : name) >= sizeof(target) ||
	    (size_t)snprintf(link, sizeof(link), "%s/%s", d->path, name) >= sizeof(link)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if (symlink(target, link) < 0)
		return -1;
	memcpy(d->links[d->nlinks], link, sizeof(link));
	d->slots[d->nlinks + 1] = lp_tmp_track(d->links[d->nlinks]);
	d->nlinks++;
	return 0;
}

static int tooldir_link(struct tooldir *d, const char *dir, const char *name)
{
	return tooldir_link_as(d, dir, NULL, name);
}

static int run(const struct record_request *req)
{
	char tool[PATH_MAX], sys[PATH_MAX], valgrind[PATH_MAX], env_lib[128], log_fd[32];
	const char *vg = getenv("LOCPROF_VALGRIND");
	struct tooldir d = { .nlinks = 0 };
	char **argv;
	char *extra_env[2];
	size_t n = 0, nargs = 0;
	int allocs = 1, st, ran, lfd;
	uint64_t connections;

	if (find_tool_dir(tool, sizeof(tool)) < 0) {
		cli_error("cannot find the locprof valgrind tool (%s); rebuild locprof with "
			  "valgrind installed (scripts/install-deps), or set LOCPROF_VG_DIR", VG_TOOL);
		return CLI_ERROR;
	}
	if (record_find_program(vg && *vg ? vg : "valgrind", valgrind, sizeof(valgrind)) < 0) {
		cli_error("cannot run valgrind: not installed (scripts/install-deps installs it)");
		return CLI_ERROR;
	}
	if (find_system_dir(sys, sizeof(sys)) < 0) {
		cli_error("cannot find valgrind's own files (%s, %s)", VG_CORE_PRELOAD, VG_SUPP);
		return CLI_ERROR;
	}
	for (unsigned i = 0; i < req->nbackend_opts; i++)
		allocs_option(req->backend_opts[i], &allocs);

	const char *tmp = getenv("TMPDIR");
	if (!tmp || tmp[0] != '/' || strlen(tmp) > 40)
		tmp = "/tmp";
	snprintf(d.path, sizeof(d.path), "%s/locprof-vg.XXXXXX", tmp);
	if (!mkdtemp(d.path)) {
		cli_error("cannot create a temporary directory: %s", strerror(errno));
		return CLI_ERROR;
	}
	d.slots[0] = lp_tmp_track(d.path);
	if (tooldir_link(&d, tool, VG_TOOL) < 0 ||
	    (allocs && tooldir_link_as(&d, tool, allocs == 2 ? VG_PRELOAD_REPLACE : NULL, VG_PRELOAD) < 0) ||
	    tooldir_link(&d, sys, VG_CORE_PRELOAD) < 0 || tooldir_link(&d, sys, VG_SUPP) < 0) {
		cli_error("cannot set up the valgrind tool directory %s: %s", d.path, strerror(errno));
		tooldir_remove(&d);
		return CLI_ERROR;
	}

	while (req->argv[nargs])
		nargs++;
	argv = calloc(nargs + req->nbackend_opts + 9, sizeof(*argv));
	if (!argv) {
		cli_error("out of memory");
		tooldir_remove(&d);
		return CLI_ERROR;
	}
	argv[n++] = valgrind;
	argv[n++] = "--tool=locprof";
	argv[n++] = "-q";
	/* Every process of the program, as with the inst backend; a child
	 * started without our environment (env -i) runs inert. */
	argv[n++] = "--trace-children=yes";
	/* valgrind's messages through a filter (record-vglog.c); the user's
	 * -X --log-file wins, being later */
	if ((lfd = record_vglog_start()) >= 0) {
		snprintf(log_fd, sizeof(log_fd), "--log-fd=%d", lfd);
		argv[n++] = log_fd;
	}
	for (unsigned i = 0; i < req->nbackend_opts; i++)
		if (!allocs_option(req->backend_opts[i], &allocs))
			argv[n++] = (char *)req->backend_opts[i];
	argv[n++] = "--";
	/* The program as typed, not req->prog (its PATH-resolved name):
	 * valgrind searches PATH itself and makes the name it was given the
	 * program's argv[0], so the program sees the argv[0] it sees natively
	 * and under `valgrind --tool=cachegrind PROG`. A longer argv[0]
	 * (/usr/bin/lua5.4 for lua5.4) changes what some programs allocate
	 * (Lua copies it into its arg table; its GC is paced by bytes
	 * allocated), hence their whole heap layout and their cache misses
	 * (docs/valgrind.md, "Agreement with Cachegrind"). */
	argv[n++] = req->argv[0];
	for (size_t i = 1; i < nargs; i++)
		argv[n++] = req->argv[i];
	argv[n] = NULL;
	snprintf(env_lib, sizeof(env_lib), "VALGRIND_LIB=%s", d.path);
	extra_env[0] = env_lib;
	extra_env[1] = NULL;

	st = record_with_collector(req, valgrind, argv, extra_env, &connections, &ran);
	record_vglog_finish(req->quiet);
	if (ran && !connections) {
		cli_error("valgrind stopped before running '%s' (see its message above)", req->argv[0]);
		st = CLI_ERROR;
	}
	free(argv);
	tooldir_remove(&d);
	return st;
}

const struct record_backend record_backend_valgrind = {
	.name = "valgrind",
	.summary = "any binary, under valgrind with locprof's tool",
	.check = check,
	.run = run,
};
