/* The source-line and function tables of the hot spots (lp_hotspots) in
 * CSV and JSON, as `report` and `annotate` both print them
 * (docs/formats.md), with each row's 95% interval (equal to its misses
 * where they are counted exactly, on a trace). */
#include "cli.h"

#include <locprof/report.h>

#include <stdio.h>

void cli_csv_source_lines(const struct lp_source_line *l, size_t n)
{
	char b1[512], b2[512];

	printf("file,line,misses,share,line_accesses,path,misses_lo,misses_hi\n");
	for (size_t i = 0; i < n; i++)
		printf("%s,%d,%.1f,%.6f,%.1f,%s,%.1f,%.1f\n", cli_csv_field(l[i].file, b1, sizeof(b1)), l[i].line,
		       l[i].misses, l[i].share, l[i].accesses, cli_csv_field(l[i].path, b2, sizeof(b2)), l[i].misses_lo,
		       l[i].misses_hi);
}

void cli_csv_source_functions(const struct lp_source_function *f, size_t n)
{
	char b1[512], b2[512];

	printf("function,caller,misses,share,line_accesses,misses_lo,misses_hi\n");
	for (size_t i = 0; i < n; i++) {
		printf("%s,", cli_csv_field(f[i].function, b1, sizeof(b1)));
		printf("%s,%.1f,%.6f,%.1f,%.1f,%.1f\n", f[i].caller ? cli_csv_field(f[i].caller, b2, sizeof(b2)) : "",
		       f[i].misses, f[i].share, f[i].accesses, f[i].misses_lo, f[i].misses_hi);
	}
}

void cli_json_source_lines(const struct lp_source_line *l, size_t n)
{
	cli_jprintf("[");
	for (size_t i = 0; i < n; i++) {
		cli_jprintf("%s{\"file\":", i ? "," : "");
		cli_json_string(l[i].file);
		cli_jprintf(",\"path\":");
		cli_json_string(l[i].path);
		cli_jprintf(",\"line\":%d,\"misses\":%.1f,\"misses_lo\":%.1f,\"misses_hi\":%.1f,\"share\":%.6f,"
		       "\"line_accesses\":%.1f}",
		       l[i].line, l[i].misses, l[i].misses_lo, l[i].misses_hi, l[i].share, l[i].accesses);
	}
	cli_jprintf("]");
}

void cli_json_source_functions(const struct lp_source_function *f, size_t n)
{
	cli_jprintf("[");
	for (size_t i = 0; i < n; i++) {
		cli_jprintf("%s{\"function\":", i ? "," : "");
		cli_json_string(f[i].function);
		cli_jprintf(",\"caller\":");
		if (f[i].caller)
			cli_json_string(f[i].caller);
		else
			cli_jprintf("null");
		cli_jprintf(",\"misses\":%.1f,\"misses_lo\":%.1f,\"misses_hi\":%.1f,\"share\":%.6f,\"line_accesses\":%.1f}",
		       f[i].misses, f[i].misses_lo, f[i].misses_hi, f[i].share, f[i].accesses);
	}
	cli_jprintf("]");
}
