/* Where the locprof command finds its own files (cli-path.h). The build
 * system says where they are relative to the executable, in the build tree
 * and once installed (CMakeLists.txt: LOCPROF_*_FROM_EXE). */
#include "cli-path.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef LOCPROF_RT_BUILD_FROM_EXE
#define LOCPROF_RT_BUILD_FROM_EXE "src/rt"
#endif
#ifndef LOCPROF_VG_BUILD_FROM_EXE
#define LOCPROF_VG_BUILD_FROM_EXE "src/vg"
#endif
#ifndef LOCPROF_PKGLIB_FROM_EXE
#define LOCPROF_PKGLIB_FROM_EXE "../lib/locprof"
#endif
#ifndef LOCPROF_PKGLIB_DIR
#define LOCPROF_PKGLIB_DIR "/usr/local/lib/locprof"
#endif

static int dir_has(const char *dir, const char *name)
{
	char path[PATH_MAX];
	struct stat st;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >= sizeof(path))
		return 0;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* out = dir without its "..", when dir has probe and fits */
static int take(const char *dir, const char *probe, char *out, size_t len)
{
	char real[PATH_MAX];

	if (!dir_has(dir, probe) || !realpath(dir, real) || strlen(real) >= len)
		return -1;
	memcpy(out, real, strlen(real) + 1);
	return 0;
}

int cli_own_dir(enum cli_own_files kind, const char *env, const char *probe, char *out, size_t len)
{
	const char *build = kind == CLI_OWN_VALGRIND ? LOCPROF_VG_BUILD_FROM_EXE : LOCPROF_RT_BUILD_FROM_EXE;
	const char *sub = kind == CLI_OWN_VALGRIND ? "/valgrind" : "";
	const char *value = env ? getenv(env) : NULL;
	char exe[PATH_MAX], cand[PATH_MAX];
	ssize_t n;
	char *slash;

	if (value && *value)
		return take(value, probe, out, len);
	/* /proc/self/exe has the symbolic links resolved: a link to locprof
	 * in some bin directory still finds the tree it belongs to. */
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = 0;
		slash = strrchr(exe, '/');
		if (slash) {
			*slash = 0;
			if ((size_t)snprintf(cand, sizeof(cand), "%s/%s", exe, build) < sizeof(cand) &&
			    take(cand, probe, out, len) == 0)
				return 0;
			if ((size_t)snprintf(cand, sizeof(cand), "%s/%s%s", exe, LOCPROF_PKGLIB_FROM_EXE,
					     sub) < sizeof(cand) &&
			    take(cand, probe, out, len) == 0)
				return 0;
		}
	}
	if ((size_t)snprintf(cand, sizeof(cand), "%s%s", LOCPROF_PKGLIB_DIR, sub) < sizeof(cand))
		return take(cand, probe, out, len);
	return -1;
}
