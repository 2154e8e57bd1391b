/* locprof cc / locprof c++: compile and link a program for the inst
 * backend. Every argument that is not one of ours passes through untouched,
 * so the wrapper works as CC/CXX in any build system. */
#include "cli-cc.h"
#include "cli-path.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

static int file_exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

const char *cli_rt_dir(void)
{
	static char dir[PATH_MAX];

	return cli_own_dir(CLI_OWN_RUNTIME, "LOCPROF_RT_DIR", "liblocprof-rt.a", dir, sizeof(dir)) == 0
		       ? dir
		       : NULL;
}

/* Is prog an executable file somewhere in PATH (or a path)? */
static int in_path(const char *prog)
{
	const char *path = getenv("PATH");
	char buf[PATH_MAX];

	if (strchr(prog, '/'))
		return access(prog, X_OK) == 0;
	while (path && *path) {
		const char *end = strchr(path, ':');
		size_t len = end ? (size_t)(end - path) : strlen(path);
		snprintf(buf, sizeof(buf), "%.*s/%s", (int)len, len ? path : ".", prog);
		if (access(buf, X_OK) == 0)
			return 1;
		if (!end)
			break;
		path = end + 1;
	}
	return 0;
}

/* Arguments after which the driver does not link. */
static int is_no_link_arg(const char *a)
{
	static const char *const exact[] = { "-c", "-S", "-E", "-M", "-MM", "-fsyntax-only",
					     "--version", "-dumpversion", "-dumpmachine",
					     "-shared", "-r", "-###" };

	for (size_t i = 0; i < sizeof(exact) / sizeof(exact[0]); i++)
		if (!strcmp(a, exact[i]))
			return 1;
	return !strncmp(a, "-print-", 7) || !strncmp(a, "--print-", 8);
}

/* A Fortran source, by the extensions gfortran knows. clang hands such a
 * file to gfortran, which knows nothing of locprof's pass. */
static int is_fortran(const char *a)
{
	static const char *const ext[] = { "f", "for", "ftn", "fpp", "f77", "f90", "f95", "f03", "f08" };
	const char *dot = strrchr(a, '.');

	if (a[0] == '-' || !dot || strchr(dot, '/'))
		return 0;
	for (size_t i = 0; i < sizeof(ext) / sizeof(ext[0]); i++)
		if (!strcasecmp(dot + 1, ext[i]))
			return 1;
	return 0;
}

/* Fortran: instrumented by gfortran's ThreadSanitizer pass (--gcc with
 * LOCPROF_GCC=gfortran), given to the compiler proper, which
 * -Xpreprocessor does not reach for a Fortran file; so only in a command
 * that compiles without linking, where the driver cannot link libtsan
 * (the runtime defines its entry points). 0 to go on, else the status. */
static int fortran_check(const struct cli_command *cmd, const char *file, int use_gcc, int link)
{
	if (!use_gcc)
		return cli_usage_error(cmd, "'%s' is Fortran, which clang hands to gfortran uninstrumented: build it "
					    "with LOCPROF_GCC=gfortran locprof cc --gcc (compile with -c, then link), or "
					    "record a gfortran build with --backend valgrind",
				       file);
	if (link)
		return cli_usage_error(cmd, "'%s': a Fortran source is instrumented only when compiled apart: "
					    "compile it with -c, then link the objects (docs/commands/cc.md)",
				       file);
	return 0;
}

/* The compiler's arguments (from i): whether the command links, how many
 * inputs it names, its first Fortran source (NULL: none). */
static void scan_compiler_args(int argc, char **argv, int i, int *link, int *inputs, const char **fortran)
{
	for (int j = i; j < argc; j++) {
		if (is_no_link_arg(argv[j]))
			*link = 0;
		if (argv[j][0] != '-')
			(*inputs)++;
		if (!*fortran && is_fortran(argv[j]) && (j == i || strcmp(argv[j - 1], "-o")))
			*fortran = argv[j];
	}
}

int cli_cc_main(const struct cli_command *cmd, int argc, char **argv, int cxx)
{
	int use_gcc = 0, sancov = 0, lto = -1, show = 0, link = 1, i = 1, n = 0, inputs = 0, rc;
	const char *fortran = NULL;
	const char *rt = cli_rt_dir(), *compiler, *env;
	char archive[PATH_MAX + 64], plugin[PATH_MAX + 80], include[PATH_MAX + 32];
	char **args;

	for (; i < argc; i++) {
		if (!strcmp(argv[i], "--gcc"))
			use_gcc = 1;
		else if (!strcmp(argv[i], "--sancov"))
			sancov = 1;
		else if (!strcmp(argv[i], "--lto"))
			lto = 1;
		else if (!strcmp(argv[i], "--no-lto"))
			lto = 0;
		else if (!strcmp(argv[i], "--show"))
			show = 1;
		else if (!strncmp(argv[i], "--clone-max=", 12)) {
			/* Read by the pass in the compiler (src/pass). */
			const char *v = argv[i] + 12;
			if (!*v || strspn(v, "0123456789") != strlen(v) || strlen(v) > 18)
				return cli_usage_error(cmd, "--clone-max needs a number of IR instructions");
			if (setenv("LOCPROF_PASS_CLONE_MAX", v, 1)) {
				cli_error("cannot set LOCPROF_PASS_CLONE_MAX: %s", strerror(errno));
				return CLI_ERROR;
			}
		}
		else if (!strcmp(argv[i], "--help") && argc == 2)
			return cli_print_usage(cmd);
		else if (!strcmp(argv[i], "--"))
			{ i++; break; }
		else
			break;
	}
	scan_compiler_args(argc, argv, i, &link, &inputs, &fortran);
	/* The runtime replaces malloc and friends to see allocations; a
	 * static libc defines them too, and the link fails with pages of
	 * duplicate symbols. */
	for (int j = i; j < argc && link; j++)
		if (!strcmp(argv[j], "-static") || !strcmp(argv[j], "--static") || !strcmp(argv[j], "-static-pie"))
			return cli_usage_error(cmd, "%s: a static link cannot be instrumented (the runtime needs "
						    "libc's allocator by name); build it dynamically, or record the "
						    "static binary with --backend valgrind",
					       argv[j]);
	if (!inputs)
		link = 0; /* a query like -v: nothing to link */
	if (fortran && (rc = fortran_check(cmd, fortran, use_gcc, link)))
		return rc;
	env = getenv(use_gcc ? (cxx ? "LOCPROF_GXX" : "LOCPROF_GCC") : (cxx ? "LOCPROF_CLANGXX" : "LOCPROF_CLANG"));
	compiler = env && *env ? env : use_gcc ? (cxx ? "g++" : "gcc") : (cxx ? "clang++" : "clang");
	if (use_gcc && lto == 1)
		return cli_usage_error(cmd, "--lto needs clang (drop --gcc)");
	if (use_gcc && sancov)
		return cli_usage_error(cmd, "--sancov and --gcc are two different instrumentations");
	/* locprof's own LLVM pass when it was built (src/pass), else
	 * SanitizerCoverage's callbacks. */
	if (!use_gcc && !sancov) {
		plugin[0] = 0;
		if (rt)
			snprintf(plugin, sizeof(plugin), "-fpass-plugin=%s/locprof-pass.so", rt);
		if (!rt || !file_exists(plugin + strlen("-fpass-plugin=")))
			sancov = 1;
	}
	if (lto == -1)
		lto = !use_gcc && in_path("ld.lld") && rt &&
		      (snprintf(archive, sizeof(archive), "%s/liblocprof-rt-lto.a", rt),
		       file_exists(archive));
	if (link && !rt) {
		cli_error("cannot find the locprof runtime (liblocprof-rt.a); set LOCPROF_RT_DIR");
		return CLI_ERROR;
	}
	if (!in_path(compiler)) {
		cli_error("cannot find the compiler '%s'%s", compiler,
			  use_gcc ? "" : " (locprof cc needs clang; or use --gcc)");
		return CLI_ERROR;
	}
	args = calloc((size_t)argc + 20, sizeof(*args));
	if (!args) {
		cli_error("out of memory");
		return CLI_ERROR;
	}
	args[n++] = (char *)compiler;
	if (use_gcc) {
		/* Given to the compiler proper only (the driver's preprocessor
		 * options reach cc1/cc1plus), so that the driver does not link
		 * libtsan: the locprof runtime defines the __tsan_* entry points. */
		if (!fortran)
			args[n++] = "-Xpreprocessor";
		args[n++] = "-fsanitize=thread";
		if (!fortran)
			args[n++] = "-Xpreprocessor";
		args[n++] = "--param=tsan-instrument-func-entry-exit=0";
	} else {
		if (sancov) {
			args[n++] = "-fsanitize-coverage=edge,trace-loads,trace-stores";
			/* Otherwise clang links its ubsan runtime, whose weak
			 * coverage callbacks and constructors we do not want. */
			args[n++] = "-fno-sanitize-link-runtime";
		} else {
			args[n++] = plugin;
		}
		if (lto)
			args[n++] = "-flto";
		/* With -g, DWARF 4 rather than clang 14's DWARF 5, which
		 * valgrind 3.19 reads only in part (the valgrind backend's
		 * symbols; memcheck's messages). An explicit -gdwarf-5 wins. */
		args[n++] = "-fdebug-default-version=4";
	}
	if (rt) {
		/* locprof/roi.h, with no flag of the program's own */
		snprintf(include, sizeof(include), "-isystem%s/include", rt);
		args[n++] = include;
	}
	for (int j = i; j < argc; j++)
		args[n++] = argv[j];
	if (link) {
		/* The pass inlines its own code: the callbacks' bitcode is
		 * only for SanitizerCoverage's calls. */
		snprintf(archive, sizeof(archive), "%s/liblocprof-rt%s.a", rt, lto && sancov ? "-lto" : "");
		/* Only when linking: clang warns about it on compile-only
		 * commands, which breaks builds using -Werror. */
		if (lto)
			args[n++] = "-fuse-ld=lld";
		/* Whole archive: the allocation functions and _exit must replace
		 * libc's even when the program does not name them itself. */
		args[n++] = "-Wl,--whole-archive";
		args[n++] = archive;
		args[n++] = "-Wl,--no-whole-archive";
		/* the callers of each allocation (docs/runtime.md,
		 * "Allocation call stacks") */
		args[n++] = "-lunwind";
		args[n++] = "-lpthread";
		args[n++] = "-lm";
	}
	args[n] = NULL;
	if (show) {
		for (int j = 0; j < n; j++)
			fprintf(stderr, "%s%s", j ? " " : "", args[j]);
		fputc('\n', stderr);
	}
	fflush(stdout);
	execvp(compiler, args);
	cli_error("cannot run '%s': %s", compiler, strerror(errno));
	free(args);
	return CLI_ERROR;
}
