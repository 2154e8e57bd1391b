/* report --html DIR: the report as one self-contained static page. */
#ifndef LOCPROF_CLI_REPORT_HTML_H
#define LOCPROF_CLI_REPORT_HTML_H

#include <locprof/report.h>
#include <locprof/symbol.h>

struct report_html_in {
	const char *profile;   /* the profile's path, as given */
	const struct lp_report *r;
	struct lp_symbols *syms; /* may be NULL */
	size_t top;            /* rows of the hot functions and source lines */
	int cold, windows;
	int intervals;         /* the report has intervals (--resamples) */
	const char *graph_svg; /* the working-set graph's SVG file, inlined */
	/* The time view (report --timeline): NULL, or its data and its plot
	 * (lp_timeline_svg's file, inlined) */
	const struct lp_timeline *tl;
	const char *timeline_svg;
};

/* Write dir/index.html (dir must exist): the page holds its
 * style, its script and the graph inline and loads nothing. 0, or -1 after
 * printing one error line. */
int report_html_write(const char *dir, const struct report_html_in *in);

#endif
