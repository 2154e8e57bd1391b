/* SVG plots of misses against problem size: log-log axes, predicted
 * curves as lines, measured points as markers, the fitted range between
 * two vertical lines (the file, prolog, text and colours: common/svg.c). */
#include <locprof/prediction.h>

#include "common/error.h"
#include "common/svg.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

int lp_pred_svg_write(const char *path, const char *title, const char *ylabel,
		  const struct lp_pred_series *s, size_t n, double fit_lo, double fit_hi)
{
	const double W = 760, H = 460, L = 80, R = 190, T = 40, B = 50;
	double xmin = INFINITY, xmax = -INFINITY, ymin = INFINITY, ymax = -INFINITY;
	struct lp_out *f;
	int err;

	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < s[i].n; k++) {
			double x = s[i].x[k], y = s[i].y[k];
			if (!(x > 0) || !isfinite(x))
				continue;
			xmin = fmin(xmin, x);
			xmax = fmax(xmax, x);
			if (y > 0 && isfinite(y)) {
				ymin = fmin(ymin, y);
				ymax = fmax(ymax, y);
			}
		}
	if (fit_lo > 0) {
		xmin = fmin(xmin, fit_lo);
		xmax = fmax(xmax, fit_hi);
	}
	if (!isfinite(xmin))
		return lp_seterr(LP_EINVAL, "nothing to plot");
	if (!isfinite(ymin)) {
		ymin = 1;
		ymax = 10;
	}
	/* whole decades on y, a little margin on x */
	ymin = pow(10, floor(log10(ymin)));
	ymax = pow(10, ceil(log10(ymax)));
	if (ymax <= ymin)
		ymax = ymin * 10;
	xmin /= 1.15;
	xmax *= 1.15;
#define X(v) (L + (log(v) - log(xmin)) / (log(xmax) - log(xmin)) * (W - L - R))
#define Y(v) (H - B - (log(v) - log(ymin)) / (log(ymax) - log(ymin)) * (H - T - B))
	if ((err = lp_svg_open(&f, path, W, H, "sans-serif")) < 0)
		return err;
	lp_out_printf(f, "<text x=\"%g\" y=\"22\" font-size=\"15\">", L);
	lp_svg_text(f, title);
	lp_out_printf(f, "</text>\n");
	/* axes and grid */
	lp_out_printf(f, "<rect x=\"%g\" y=\"%g\" width=\"%g\" height=\"%g\" fill=\"none\" stroke=\"black\"/>\n",
		L, T, W - L - R, H - T - B);
	for (double d = ymin; d <= ymax * 1.0001; d *= 10) {
		lp_out_printf(f, "<line x1=\"%g\" y1=\"%.2f\" x2=\"%g\" y2=\"%.2f\" stroke=\"#ddd\"/>\n", L, Y(d),
			W - R, Y(d));
		lp_out_printf(f, "<text x=\"%g\" y=\"%.2f\" text-anchor=\"end\">%g</text>\n", L - 6, Y(d) + 4, d);
	}
	for (int e = (int)floor(log10(xmin)); e <= (int)ceil(log10(xmax)); e++)
		for (int k = 0; k < 3; k++) {
			static const double mant[3] = { 1, 2, 5 };
			double d = mant[k] * pow(10, e);
			if (d < xmin || d > xmax)
				continue;
			lp_out_printf(f, "<line x1=\"%.2f\" y1=\"%g\" x2=\"%.2f\" y2=\"%g\" stroke=\"#ddd\"/>\n", X(d),
				T, X(d), H - B);
			lp_out_printf(f, "<text x=\"%.2f\" y=\"%g\" text-anchor=\"middle\">%g</text>\n", X(d),
				H - B + 16, d);
		}
	lp_out_printf(f, "<text x=\"%g\" y=\"%g\" text-anchor=\"middle\">problem size P</text>\n",
		(L + W - R) / 2, H - 12);
	lp_out_printf(f, "<text transform=\"translate(18 %g) rotate(-90)\" text-anchor=\"middle\">",
		(T + H - B) / 2);
	lp_svg_text(f, ylabel);
	lp_out_printf(f, "</text>\n");
	if (fit_lo > 0) {
		for (int k = 0; k < 2; k++) {
			double v = k ? fit_hi : fit_lo;
			lp_out_printf(f, "<line x1=\"%.2f\" y1=\"%g\" x2=\"%.2f\" y2=\"%g\" stroke=\"#888\" "
				   "stroke-dasharray=\"2 3\"/>\n", X(v), T, X(v), H - B);
		}
		lp_out_printf(f, "<text x=\"%.2f\" y=\"%g\" text-anchor=\"middle\" fill=\"#666\">fitted</text>\n",
			(X(fit_lo) + X(fit_hi)) / 2, T + 14);
	}
	/* series */
	for (size_t i = 0; i < n; i++) {
		const char *col = lp_svg_color((size_t)(s[i].color >= 0 ? s[i].color : 0));
		if (s[i].points) {
			for (size_t k = 0; k < s[i].n; k++)
				if (s[i].x[k] > 0 && s[i].y[k] > 0 && isfinite(s[i].y[k]))
					lp_out_printf(f, "<circle cx=\"%.2f\" cy=\"%.2f\" r=\"3.5\" fill=\"none\" "
						   "stroke=\"%s\" stroke-width=\"1.5\"/>\n",
						X(s[i].x[k]), Y(fmax(s[i].y[k], ymin)), col);
		} else {
			int open = 0;
			for (size_t k = 0; k < s[i].n; k++) {
				double y = s[i].y[k];
				if (!(s[i].x[k] > 0) || !(y > 0) || !isfinite(y)) {
					if (open)
						lp_out_printf(f, "\"/>\n");
					open = 0;
					continue;
				}
				if (!open)
					lp_out_printf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.6\"%s "
						   "points=\"", col, s[i].dashed ? " stroke-dasharray=\"6 4\"" : "");
				lp_out_printf(f, "%.2f,%.2f ", X(s[i].x[k]), Y(fmax(y, ymin)));
				open = 1;
			}
			if (open)
				lp_out_printf(f, "\"/>\n");
		}
		/* legend */
		double ly = T + 10 + 18 * (double)i, lx = W - R + 12;
		if (s[i].points)
			lp_out_printf(f, "<circle cx=\"%g\" cy=\"%g\" r=\"3.5\" fill=\"none\" stroke=\"%s\" "
				   "stroke-width=\"1.5\"/>\n", lx + 10, ly, col);
		else
			lp_out_printf(f, "<line x1=\"%g\" y1=\"%g\" x2=\"%g\" y2=\"%g\" stroke=\"%s\" "
				   "stroke-width=\"1.6\"%s/>\n", lx, ly, lx + 20, ly, col,
				s[i].dashed ? " stroke-dasharray=\"6 4\"" : "");
		lp_out_printf(f, "<text x=\"%g\" y=\"%g\">", lx + 26, ly + 4);
		lp_svg_text(f, s[i].name);
		lp_out_printf(f, "</text>\n");
	}
#undef X
#undef Y
	return lp_svg_close(f);
}
