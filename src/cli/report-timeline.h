/* report --timeline: the time view of a profile (lp_timeline), built and
 * printed as text, CSV or JSON, and plotted (--timeline-svg). */
#ifndef LP_CLI_REPORT_TIMELINE_H
#define LP_CLI_REPORT_TIMELINE_H

#include "cli.h"

#include <locprof/report.h>

/* The timeline of l's profile for the named caches, or without any the
 * host's (else 32K:8:64); the policy is LRU when policies has it; each
 * phase's top functions (top of them, 0: 3) named by l's symbols, which it
 * loads (cli_report_symbols()). Prints the error; returns CLI_OK or
 * CLI_ERROR. */
int report_timeline_build(struct lp_timeline **out, struct cli_report *l, const struct lp_report_cache *caches,
			  size_t ncaches, unsigned policies, int cold, int fill, uint64_t window, size_t top);
void report_timeline_text(const struct lp_timeline *t);
/* After the report's tables: an empty line, then its tables. */
void report_timeline_csv(const struct lp_timeline *t);
/* ,"timeline":{...} inside the report's object (docs/report.schema.json). */
void report_timeline_json(const struct lp_timeline *t);

#endif
