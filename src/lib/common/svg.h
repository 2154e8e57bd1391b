/* Internal: the pieces every SVG plot of the library shares (the working-set
 * graphs of report-svg.c, the miss-against-size plots of prediction-svg.c):
 * the file written through lp_out (temporary name, renamed on success), the
 * prolog with a white background, escaped text and one palette. Each plot
 * keeps its own axes and scales. Plain SVG 1.1 with no script, so that any
 * viewer (and rsvg-convert in the tests) renders it. */
#ifndef LP_COMMON_SVG_H
#define LP_COMMON_SVG_H

#include "common/io.h"

#include <stddef.h>

/* Open path and write the XML prolog, an <svg> element of w x h pixels in
 * font_family at 12 px, and a white background. */
int lp_svg_open(struct lp_out **o, const char *path, double w, double h, const char *font_family);
/* Close the <svg> element and the file (lp_out_close: renamed into place). */
int lp_svg_close(struct lp_out *o);
/* s as XML character data (NULL: nothing). */
void lp_svg_text(struct lp_out *o, const char *s);
/* Colour i of a palette of distinguishable colours (cycles after 8). */
const char *lp_svg_color(size_t i);

#endif
