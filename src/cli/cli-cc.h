/* Shared implementation of `locprof cc` and `locprof c++` (cli-cc.c). */
#ifndef LP_CLI_CC_H
#define LP_CLI_CC_H

#include "cli.h"

/* Run the wrapped compiler (exec, so it returns only on failure). */
int cli_cc_main(const struct cli_command *cmd, int argc, char **argv, int cxx);

/* Directory holding liblocprof-rt.a, or NULL: $LOCPROF_RT_DIR, then next to
 * the locprof executable (build tree: <build>/src/rt), then the install
 * layout <prefix>/bin/../lib/locprof. */
const char *cli_rt_dir(void);

#endif
