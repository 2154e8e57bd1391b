/* SVG plots of misses against problem size: log-log axes, predicted
 * curves as lines, measured points as markers, the fitted range between
 * two vertical lines. Plain SVG 1.1, no script, so that any viewer (and
 * rsvg-convert in the tests) renders it. */
#include <locprof/prediction.h>

#include "common/error.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *const palette[] = { "#1f77b4", "#d62728", "#2ca02c", "#9467bd",
				       "#ff7f0e", "#8c564b", "#e377c2", "#17becf" };
#define NPAL (sizeof(palette) / sizeof(palette[0]))

static void esc(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		default: fputc(*s, f);
		}
	}
}

int lp_pred_svg_write(const char *path, const char *title, const char *ylabel,
		  const struct lp_pred_series *s, size_t n, double fit_lo, double fit_hi)
{
	const double W = 760, H = 460, L = 80, R = 190, T = 40, B = 50;
	double xmin = INFINITY, xmax = -INFINITY, ymin = INFINITY, ymax = -INFINITY;
	char tmp[4096];
	FILE *f;

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
	if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp))
		return lp_seterr(LP_EINVAL, "path too long");
	if (!(f = fopen(tmp, "w")))
		return lp_seterr_errno("cannot write '%s'", tmp);
#define X(v) (L + (log(v) - log(xmin)) / (log(xmax) - log(xmin)) * (W - L - R))
#define Y(v) (H - B - (log(v) - log(ymin)) / (log(ymax) - log(ymin)) * (H - T - B))
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		   "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%g\" height=\"%g\" "
		   "viewBox=\"0 0 %g %g\" font-family=\"sans-serif\" font-size=\"12\">\n"
		   "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
		W, H, W, H);
	fprintf(f, "<text x=\"%g\" y=\"22\" font-size=\"15\">", L);
	esc(f, title);
	fprintf(f, "</text>\n");
	/* axes and grid */
	fprintf(f, "<rect x=\"%g\" y=\"%g\" width=\"%g\" height=\"%g\" fill=\"none\" stroke=\"black\"/>\n",
		L, T, W - L - R, H - T - B);
	for (double d = ymin; d <= ymax * 1.0001; d *= 10) {
		fprintf(f, "<line x1=\"%g\" y1=\"%.2f\" x2=\"%g\" y2=\"%.2f\" stroke=\"#ddd\"/>\n", L, Y(d),
			W - R, Y(d));
		fprintf(f, "<text x=\"%g\" y=\"%.2f\" text-anchor=\"end\">%g</text>\n", L - 6, Y(d) + 4, d);
	}
	for (int e = (int)floor(log10(xmin)); e <= (int)ceil(log10(xmax)); e++)
		for (int k = 0; k < 3; k++) {
			static const double mant[3] = { 1, 2, 5 };
			double d = mant[k] * pow(10, e);
			if (d < xmin || d > xmax)
				continue;
			fprintf(f, "<line x1=\"%.2f\" y1=\"%g\" x2=\"%.2f\" y2=\"%g\" stroke=\"#ddd\"/>\n", X(d),
				T, X(d), H - B);
			fprintf(f, "<text x=\"%.2f\" y=\"%g\" text-anchor=\"middle\">%g</text>\n", X(d),
				H - B + 16, d);
		}
	fprintf(f, "<text x=\"%g\" y=\"%g\" text-anchor=\"middle\">problem size P</text>\n",
		(L + W - R) / 2, H - 12);
	fprintf(f, "<text transform=\"translate(18 %g) rotate(-90)\" text-anchor=\"middle\">",
		(T + H - B) / 2);
	esc(f, ylabel);
	fprintf(f, "</text>\n");
	if (fit_lo > 0) {
		for (int k = 0; k < 2; k++) {
			double v = k ? fit_hi : fit_lo;
			fprintf(f, "<line x1=\"%.2f\" y1=\"%g\" x2=\"%.2f\" y2=\"%g\" stroke=\"#888\" "
				   "stroke-dasharray=\"2 3\"/>\n", X(v), T, X(v), H - B);
		}
		fprintf(f, "<text x=\"%.2f\" y=\"%g\" text-anchor=\"middle\" fill=\"#666\">fitted</text>\n",
			(X(fit_lo) + X(fit_hi)) / 2, T + 14);
	}
	/* series */
	for (size_t i = 0; i < n; i++) {
		const char *col = palette[(size_t)(s[i].color >= 0 ? s[i].color : 0) % NPAL];
		if (s[i].points) {
			for (size_t k = 0; k < s[i].n; k++)
				if (s[i].x[k] > 0 && s[i].y[k] > 0 && isfinite(s[i].y[k]))
					fprintf(f, "<circle cx=\"%.2f\" cy=\"%.2f\" r=\"3.5\" fill=\"none\" "
						   "stroke=\"%s\" stroke-width=\"1.5\"/>\n",
						X(s[i].x[k]), Y(fmax(s[i].y[k], ymin)), col);
		} else {
			int open = 0;
			for (size_t k = 0; k < s[i].n; k++) {
				double y = s[i].y[k];
				if (!(s[i].x[k] > 0) || !(y > 0) || !isfinite(y)) {
					if (open)
						fprintf(f, "\"/>\n");
					open = 0;
					continue;
				}
				if (!open)
					fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.6\"%s "
						   "points=\"", col, s[i].dashed ? " stroke-dasharray=\"6 4\"" : "");
				fprintf(f, "%.2f,%.2f ", X(s[i].x[k]), Y(fmax(y, ymin)));
				open = 1;
			}
			if (open)
				fprintf(f, "\"/>\n");
		}
		/* legend */
		double ly = T + 10 + 18 * (double)i, lx = W - R + 12;
		if (s[i].points)
			fprintf(f, "<circle cx=\"%g\" cy=\"%g\" r=\"3.5\" fill=\"none\" stroke=\"%s\" "
				   "stroke-width=\"1.5\"/>\n", lx + 10, ly, col);
		else
			fprintf(f, "<line x1=\"%g\" y1=\"%g\" x2=\"%g\" y2=\"%g\" stroke=\"%s\" "
				   "stroke-width=\"1.6\"%s/>\n", lx, ly, lx + 20, ly, col,
				s[i].dashed ? " stroke-dasharray=\"6 4\"" : "");
		fprintf(f, "<text x=\"%g\" y=\"%g\">", lx + 26, ly + 4);
		esc(f, s[i].name);
		fprintf(f, "</text>\n");
	}
	fprintf(f, "</svg>\n");
#undef X
#undef Y
	if (ferror(f) | fclose(f)) {
		int rc = lp_seterr_errno("cannot write '%s'", tmp);
		remove(tmp);
		return rc;
	}
	if (rename(tmp, path) < 0) {
		int rc = lp_seterr_errno("cannot rename '%s' to '%s'", tmp, path);
		remove(tmp);
		return rc;
	}
	return 0;
}
