/* locprof predict: the three subcommands (collect, fit, at), one file each,
 * dispatched by cmd-predict.c. */
#ifndef LP_PREDICT_CLI_H
#define LP_PREDICT_CLI_H

#include "cli.h"

#include <locprof/prediction.h>

extern const struct cli_command cmd_predict_collect;
extern const struct cli_command cmd_predict_fit;
extern const struct cli_command cmd_predict_at;

#endif
