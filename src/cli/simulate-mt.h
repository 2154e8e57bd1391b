/* locprof simulate's multi-threaded mode (simulate-mt.c), and what it
 * shares with cmd-simulate.c. */
#ifndef LP_CLI_SIMULATE_MT_H
#define LP_CLI_SIMULATE_MT_H

#include "cli.h"

#include <locprof/sim.h>
#include <locprof/symbol.h>
#include <locprof/trace.h>

enum cli_sim_fmt { CLI_SIM_TEXT, CLI_SIM_CSV, CLI_SIM_JSON };
/* The JSON's "version" (docs/simulate.schema.json): raised when a field
 * changes meaning or goes away, not when one is added. */
enum { CLI_SIMULATE_JSON_VERSION = 1 };

struct cli_mt_opts {
	const char *trace, *from;
	struct lp_mtsim_config cfg;
	enum cli_sim_fmt fmt;
	int attribute;
	const char *binary;
	uint64_t top;
};

/* "T=C,T=C": thread id T on core C; map[T] = UINT32_MAX for the ids not
 * named. 0, or -1 for a bad list. */
int cli_parse_core_map(const char *s, uint32_t **map, size_t *n);
/* Symbols for attribution: the trace's mappings and binary (may be NULL),
 * told the allocation stacks of the trace (read once more first, when it
 * is a file, format `from` or NULL) and the --alloc-fn names; 0 (with
 * *syms NULL when there are none), or -1 after an error message. */
int cli_simulate_symbols(const char *binary, const char *trace, const char *from, struct lp_trace_reader *rd,
			 struct lp_symbols **syms);
/* The start of an attribution row in JSON: `[,]\n  {"object": ...,
 * "function": ..., "pc": N, "where": ...` (the caller adds the rest). */
void cli_simulate_json_row(int comma, const char *object, const char *function, uint64_t pc, const char *where);
/* Run and print; an exit status. */
int cli_simulate_mt(const struct cli_mt_opts *o, struct lp_trace_reader *rd);

#endif
