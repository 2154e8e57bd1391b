/* The time view as SVG (report --timeline-svg): the miss ratio of each
 * cache over one thread's run, a step per interval or window, with each
 * phase as a coloured band behind the lines and, in the legend, its share
 * of the run, its ratio and its top function. */
#include "report/report-internal.h"

#include "common/error.h"
#include "common/io.h"
#include "common/svg.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define W 960.0
#define ML 70.0
#define MR 30.0
#define MT 44.0
#define PH 300.0 /* plot height */

/* Light band colours, one per phase (cycling): distinct from the lines'. */
static const char *band_color(size_t k)
{
	static const char *const c[] = { "#cfe2f3", "#f4cccc", "#d9ead3", "#fff2cc",
					 "#d9d2e9", "#fce5cd", "#d0e0e3", "#ead1dc" };
	return c[k % (sizeof(c) / sizeof(c[0]))];
}

static void human(char *buf, size_t n, double v)
{
	static const char *const unit[] = { "", "K", "M", "G", "T" };
	int u = 0;

	while (v >= 1000 && u < 4) {
		v /= 1000;
		u++;
	}
	snprintf(buf, n, "%g%s", round(v * 10) / 10, unit[u]);
}

/* The first thread with rows: [*first, *first + *n) of the rows. */
static void thread_rows(const struct lp_timeline *t, size_t *first, size_t *n)
{
	const struct lp_timeline_row *r;
	size_t nr = lp_timeline_rows(t, &r), i = 0;

	*first = 0;
	while (i < nr && r[i].tid == r[0].tid)
		i++;
	*n = i;
}

static void axes(struct lp_out *o, double x0, double x1, double ymax, double ph, const char *title)
{
	char buf[32];

	lp_out_printf(o, "<text x=\"%g\" y=\"24\" text-anchor=\"middle\" font-size=\"15\" font-weight=\"bold\">", W / 2);
	lp_svg_text(o, title);
	lp_out_printf(o, "</text>\n");
	for (int i = 0; i <= 5; i++) {
		double y = MT + ph - ph * i / 5.0;
		lp_out_printf(o, "<line x1=\"%g\" y1=\"%.1f\" x2=\"%g\" y2=\"%.1f\" stroke=\"#e0e0e0\"/>\n", ML, y, W - MR, y);
		lp_out_printf(o, "<text x=\"%g\" y=\"%.1f\" text-anchor=\"end\">%g%%</text>\n", ML - 6, y + 4,
			      round(ymax * i / 5.0 * 1000) / 10);
	}
	for (int i = 0; i <= 8; i++) {
		double x = ML + (W - MR - ML) * i / 8.0;
		human(buf, sizeof(buf), x0 + (x1 - x0) * i / 8.0);
		lp_out_printf(o, "<line x1=\"%.1f\" y1=\"%g\" x2=\"%.1f\" y2=\"%g\" stroke=\"black\"/>\n", x, MT + ph, x,
			      MT + ph + 5);
		lp_out_printf(o, "<text x=\"%.1f\" y=\"%g\" text-anchor=\"middle\">%s</text>\n", x, MT + ph + 18, buf);
	}
	lp_out_printf(o, "<text x=\"%g\" y=\"%g\" text-anchor=\"middle\">time (line accesses of the thread)</text>\n",
		      (ML + W - MR) / 2, MT + ph + 36);
	lp_out_printf(o, "<text transform=\"translate(18,%g) rotate(-90)\" text-anchor=\"middle\">miss ratio</text>\n",
		      MT + ph / 2);
}

int lp_timeline_svg(const struct lp_timeline *t, const char *path, const char *title)
{
	const struct lp_timeline_row *r;
	const struct lp_timeline_phase *ph;
	const struct lp_report_cache *ca;
	size_t first, n, nph = lp_timeline_phases(t, &ph), nc = lp_timeline_caches(t, &ca);
	double x0, x1, ymax = 0, H;
	struct lp_out *o;
	int err;

	lp_timeline_rows(t, &r);
	thread_rows(t, &first, &n);
	if (!n)
		return lp_seterr(LP_EINVAL, "timeline: nothing to plot");
	x0 = (double)r[first].start;
	x1 = (double)(r[first + n - 1].start + r[first + n - 1].accesses);
	if (x1 <= x0)
		x1 = x0 + 1;
	for (size_t i = first; i < first + n; i++)
		for (size_t c = 0; c < nc; c++)
			if (isfinite(r[i].ratio[c]) && r[i].ratio[c] > ymax)
				ymax = r[i].ratio[c];
	ymax = ymax <= 0 ? 0.05 : ceil(ymax * 1.1 * 20) / 20;
	if (ymax > 1)
		ymax = 1;
	H = MT + PH + 56 + 18.0 * (double)(nc + nph);
	if ((err = lp_svg_open(&o, path, W, H, "Helvetica, Arial, sans-serif")) < 0)
		return err;
#define X(v) (ML + ((v) - x0) / (x1 - x0) * (W - MR - ML))
#define Y(v) (MT + PH - (v) / ymax * PH)
	for (size_t i = first; i < first + n; i++) /* the phases' bands */
		if (r[i].phase != LP_TIMELINE_NO_PHASE)
			lp_out_printf(o, "<rect class=\"phase\" x=\"%.2f\" y=\"%g\" width=\"%.2f\" height=\"%g\" fill=\"%s\"/>\n",
				      X((double)r[i].start), MT, X((double)(r[i].start + r[i].accesses)) - X((double)r[i].start),
				      PH, band_color(r[i].phase));
	axes(o, x0, x1, ymax, PH, title);
	for (size_t c = 0; c < nc; c++) { /* a step line per cache */
		int pen = 0;
		lp_out_printf(o, "<path class=\"ratio\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\" d=\"", lp_svg_color(c));
		for (size_t i = first; i < first + n; i++) {
			double v = r[i].ratio[c];
			if (!isfinite(v)) {
				pen = 0;
				continue;
			}
			lp_out_printf(o, "%s%.2f,%.2f H%.2f", pen ? " L" : " M", X((double)r[i].start), Y(fmin(v, ymax)),
				      X((double)(r[i].start + r[i].accesses)));
			pen = 1;
		}
		lp_out_printf(o, "\"/>\n");
	}
	lp_out_printf(o, "<rect x=\"%g\" y=\"%g\" width=\"%g\" height=\"%g\" fill=\"none\" stroke=\"black\"/>\n", ML, MT,
		      W - MR - ML, PH);
	for (size_t c = 0; c < nc; c++) { /* legend: caches, then phases */
		double y = MT + PH + 58 + 18.0 * (double)c;
		lp_out_printf(o, "<line x1=\"%g\" y1=\"%g\" x2=\"%g\" y2=\"%g\" stroke=\"%s\" stroke-width=\"2\"/>\n", ML, y - 4,
			      ML + 24, y - 4, lp_svg_color(c));
		lp_out_printf(o, "<text x=\"%g\" y=\"%g\">", ML + 30, y);
		lp_svg_text(o, ca[c].label);
		lp_out_printf(o, ": whole run %.2f%%</text>\n", lp_timeline_run(t)[c] * 100);
	}
	for (size_t k = 0; k < nph; k++) {
		double y = MT + PH + 58 + 18.0 * (double)(nc + k);
		char buf[64];
		lp_out_printf(o, "<rect x=\"%g\" y=\"%g\" width=\"24\" height=\"12\" fill=\"%s\" stroke=\"#888\"/>\n", ML, y - 10,
			      band_color(k));
		snprintf(buf, sizeof(buf), "phase %u: %.1f%% of the run, %zu interval%s", ph[k].info.id,
			 ph[k].info.weight * 100, ph[k].info.intervals, ph[k].info.intervals == 1 ? "" : "s");
		lp_out_printf(o, "<text x=\"%g\" y=\"%g\">", ML + 30, y);
		lp_svg_text(o, buf);
		if (ph[k].ntop) {
			lp_out_printf(o, "; top: ");
			lp_svg_text(o, ph[k].top[0].label);
		}
		lp_out_printf(o, "</text>\n");
	}
#undef X
#undef Y
	return lp_svg_close(o);
}
