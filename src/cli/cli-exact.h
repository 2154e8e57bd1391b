/* The shared body of `locprof stackdist` and `locprof reusedist`. */
#ifndef LP_CLI_EXACT_H
#define LP_CLI_EXACT_H

#include "cli.h"

int cli_exact_run(const struct cli_command *cmd, enum lp_distance kind, int argc, char **argv);

#endif
