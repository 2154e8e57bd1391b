/* locprof cc and locprof c++: the compiler wrappers of the inst backend
 * (the work is in cli-cc.c). */
#include "cli-cc.h"

/* The help of both wrappers; they differ in the names only. */
#define CC_USAGE(NAME, LANG, COMPILER, MAKEVAR)                                             \
	"usage: locprof " NAME " [--lto|--no-lto] [--sancov|--gcc] [--clone-max=N] [--show]\n" \
	"       COMPILER-ARGS...\n"                                                         \
	"\n"                                                                                \
	"Compile and link a " LANG " program so that `locprof record` can profile it:\n"    \
	"runs " COMPILER " with locprof's LLVM pass (-fpass-plugin=locprof-pass.so: inline\n" \
	"code before every load and store) and, when linking, adds the locprof\n"           \
	"runtime (liblocprof-rt.a, -lunwind, -lpthread, -lm). Every other argument\n"      \
	"passes through untouched, so `make " MAKEVAR "=\"locprof " NAME "\"` works. The program\n" \
	"runs normally unless started by `locprof record`, slower by its inline code\n"     \
	"(1.1x to 2x: sqlite3, 1.9x).\n"                                                     \
	"\n"                                                                                \
	"  --lto      compile with -flto and link with lld (default when ld.lld\n"          \
	"             exists); with --sancov, the callbacks are then inlined\n"             \
	"  --no-lto   plain objects and the default linker: a large program builds\n"      \
	"             several times faster (sqlite3: 8.4 min against 24.7)\n"               \
	"  --sancov   clang's SanitizerCoverage callbacks instead of the pass\n"            \
	"             (-fsanitize-coverage=edge,trace-loads,trace-stores); the\n"           \
	"             default when the pass was not built\n"                                \
	"  --gcc      use gcc with -fsanitize=thread instrumentation instead; the\n"        \
	"             program is linked with the locprof runtime, not libtsan\n"            \
	"  --clone-max=N  the pass clones the blocks of functions of at most N\n"           \
	"             IR instructions (default 2000; 0: none), a speed/compile-time\n"      \
	"             trade-off with the same samples either way\n"                         \
	"  --show     print the compiler command line on stderr\n"                          \
	"\n"                                                                                \
	"Options of locprof must come before the compiler's. The compiler can be\n"         \
	"changed with LOCPROF_CLANG / LOCPROF_GCC (and LOCPROF_CLANGXX /\n"                 \
	"LOCPROF_GXX for c++; the pass needs clang 14, else use --sancov); the\n"           \
	"runtime is found next to the locprof executable or in $LOCPROF_RT_DIR.\n"          \
	"With -shared the runtime is not added: link the executable with\n"                 \
	"locprof " NAME " too. See docs/commands/cc.md.\n"

static const char cc_usage[] = CC_USAGE("cc", "C", "clang", "CC");
static const char cxx_usage[] = CC_USAGE("c++", "C++", "clang++", "CXX");

static int run_cc(int argc, char **argv);
static int run_cxx(int argc, char **argv);

const struct cli_command cmd_cc = {
	.name = "cc",
	.summary = "C compiler wrapper: build a program for locprof record",
	.usage = cc_usage,
	.run = run_cc,
};

const struct cli_command cmd_cxx = {
	.name = "c++",
	.summary = "C++ compiler wrapper: build a program for locprof record",
	.usage = cxx_usage,
	.run = run_cxx,
};

static int run_cc(int argc, char **argv)
{
	return cli_cc_main(&cmd_cc, argc, argv, 0);
}

static int run_cxx(int argc, char **argv)
{
	return cli_cc_main(&cmd_cxx, argc, argv, 1);
}
