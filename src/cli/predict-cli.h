/* locprof predict: the three subcommands (collect, fit, at), one file each,
 * dispatched by cmd-predict.c. */
#ifndef LP_PREDICT_CLI_H
#define LP_PREDICT_CLI_H

#include "cli.h"

#include <locprof/prediction.h>

extern const struct cli_command cmd_predict_collect;
extern const struct cli_command cmd_predict_fit;
extern const struct cli_command cmd_predict_at;

/* The run files (*.xrun) of a directory, malloc'ed paths into *names_out:
 * -1 to go on, or the exit status after the error line. */
int predict_list_runs(const char *dir, char ***names_out, size_t *nn_out);

/* predict collect --sizes LIST|auto: one collect per size (predict-sizes.c). */
int predict_collect_sizes(int argc, char **argv);

#endif
