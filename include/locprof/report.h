/* locprof/report.h - working-set graphs: the shared curve CSV and SVG plots. */
#ifndef LOCPROF_REPORT_H
#define LOCPROF_REPORT_H

#include <locprof/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One miss-ratio curve: ratio[i] at size[i] bytes. */
struct lp_curve {
	char *name; /* owned */
	uint64_t *size;
	double *ratio;
	size_t n, cap;
};

/* A named point on the plot (a real cache and its predicted ratio). */
struct lp_marker {
	const char *label;
	uint64_t size;
	double ratio;
};

/* Read the shared curve CSV (docs/formats.md); one lp_curve per distinct
 * curve name, in order of appearance. Free with lp_curves_free(). */
int lp_curves_read_csv(const char *path, struct lp_curve **out, size_t *n);
void lp_curves_free(struct lp_curve *c, size_t n);

/* Plot curves (and reference curves, drawn dashed) on a log2 size axis. */
int lp_svg_write(const char *path, const char *title, const struct lp_curve *curves, size_t n,
		 const struct lp_curve *refs, size_t nrefs, const struct lp_marker *marks,
		 size_t nmarks);

#ifdef __cplusplus
}
#endif
#endif
