/* Shared implementation of `locprof cc` and `locprof c++` (cli-cc.c). */
#ifndef LP_CLI_CC_H
#define LP_CLI_CC_H

#include "cli.h"

/* Run the wrapped compiler (exec, so it returns only on failure). */
int cli_cc_main(const struct cli_command *cmd, int argc, char **argv, int cxx);

/* Directory holding liblocprof-rt.a, or NULL: $LOCPROF_RT_DIR, else the
 * build tree or install layout around the executable (cli-path.h). */
const char *cli_rt_dir(void);

#endif
