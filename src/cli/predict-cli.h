/* locprof model: the three subcommands (collect, fit, predict), one file each. */
#ifndef LP_MODEL_CLI_H
#define LP_MODEL_CLI_H

#include "cli.h"

#include <locprof/prediction.h>

extern const struct cli_command cmd_predict;

int model_collect(int argc, char **argv);
int model_fit(int argc, char **argv);
int model_predict(int argc, char **argv);

/* DIR/model.xmodel when path is a directory, else path itself; free(). */
char *model_path(const char *path);

#endif
