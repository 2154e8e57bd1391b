/* Where the locprof command finds its own files: the runtime and LLVM pass
 * of `locprof cc`, the valgrind tool of `record --backend valgrind`. */
#ifndef LP_CLI_PATH_H
#define LP_CLI_PATH_H

#include <stddef.h>

/* The kinds of files locprof installs beside itself. */
enum cli_own_files {
	CLI_OWN_RUNTIME,  /* liblocprof-rt.a, liblocprof-rt-lto.a, locprof-pass.so */
	CLI_OWN_VALGRIND, /* locprof-amd64-linux and its preloads */
};

/* Copy to out the directory holding the files of that kind, checking that
 * it has `probe` (a file name). Looked up, in order: the environment
 * variable $env when set and not empty (and then nowhere else); the build
 * tree, relative to the directory of the running executable; the install
 * layout, also relative to it (<prefix>/bin/../lib/locprof, as configured
 * by CMAKE_INSTALL_BINDIR and CMAKE_INSTALL_LIBDIR), so that an installed
 * tree may be moved; the configured install directory. 0, or -1 when none
 * has it. */
int cli_own_dir(enum cli_own_files kind, const char *env, const char *probe, char *out, size_t len);

#endif
