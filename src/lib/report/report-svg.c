/* Working-set graphs as SVG, and the shared curve CSV reader. */
#include <locprof/report.h>

#include "common/array.h"
#include "common/error.h"
#include "common/io.h"
#include "common/svg.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int curve_push(struct lp_curve *c, uint64_t size, double ratio)
{
	/* size[] and ratio[] grow together: both follow c->cap */
	size_t cap_size = c->cap, cap_ratio = c->cap;
	int rc;

	if ((rc = LP_ARRAY_RESERVE(c->size, cap_size, c->n + 1, 32, "curve points")) < 0 ||
	    (rc = LP_ARRAY_RESERVE(c->ratio, cap_ratio, c->n + 1, 32, "curve points")) < 0)
		return rc;
	c->cap = cap_ratio;
	c->size[c->n] = size;
	c->ratio[c->n++] = ratio;
	return 0;
}

void lp_curves_free(struct lp_curve *c, size_t n)
{
	for (size_t i = 0; i < n && c; i++) {
		free(c[i].name);
		free(c[i].size);
		free(c[i].ratio);
		free(c[i].iv);
	}
	free(c);
}

int lp_curves_read_csv(const char *path, struct lp_curve **out, size_t *nout)
{
	struct lp_in *in;
	struct lp_curve *v = NULL;
	size_t n = 0, cap = 0, lineno = 0;
	char *line;
	ssize_t got;
	int err;

	if ((err = lp_in_open(&in, path)) < 0)
		return err;
	/* Tables are separated by an empty line and start with their header
	 * line; only the curve table (header "curve,...", or rows without a
	 * header) is read, the others (the named caches and hot spots of
	 * `locprof report`) are skipped. */
	int in_curves = 1, want_header = 0;
	while ((got = lp_in_getline(in, &line)) > 0) {
		char name[128];
		unsigned long long size;
		double ratio;
		size_t i;
		lineno++;
		if (line[0] == '\0') {
			want_header = 1;
			continue;
		}
		if (line[0] == '#')
			continue;
		int row = sscanf(line, "%127[^,],%llu,%lf", name, &size, &ratio) == 3;
		if (want_header) {
			want_header = 0;
			in_curves = row || !strncmp(line, "curve,", 6);
		}
		if (!in_curves || !strncmp(line, "curve,", 6))
			continue;
		if (!row || !isfinite(ratio)) {
			err = lp_seterr(LP_EPARSE, "%s: line %zu: not a curve row", path, lineno);
			goto out_fail;
		}
		for (i = 0; i < n && strcmp(v[i].name, name); i++)
			;
		if (i == n) {
			if (LP_ARRAY_RESERVE(v, cap, n + 1, 4, "curves") < 0)
				goto out_nomem;
			memset(&v[n], 0, sizeof(v[n]));
			if (!(v[n].name = strdup(name)))
				goto out_nomem;
			n++;
		}
		if (curve_push(&v[i], size, ratio) < 0)
			goto out_nomem;
	}
	if (got < 0) {
		err = (int)got;
		goto out_fail;
	}
	lp_in_free(in);
	*out = v;
	*nout = n;
	return 0;
out_nomem:
	err = lp_seterr(LP_ENOMEM, "out of memory");
out_fail:
	lp_curves_free(v, n);
	lp_in_free(in);
	return err;
}

static void size_label(char *buf, size_t len, double bytes)
{
	if (bytes >= 1024.0 * 1024 * 1024)
		snprintf(buf, len, "%gG", bytes / (1024.0 * 1024 * 1024));
	else if (bytes >= 1024.0 * 1024)
		snprintf(buf, len, "%gM", bytes / (1024.0 * 1024));
	else if (bytes >= 1024)
		snprintf(buf, len, "%gK", bytes / 1024);
	else
		snprintf(buf, len, "%g", bytes);
}

/* The interval of a curve as a band in its colour, under the line: the
 * polygon along the upper ends left to right, back along the lower ends. */
static void band(struct lp_out *o, const struct lp_curve *c, const char *col, double lo, double hi,
		 double pw, double ml, double mt, double ph, double ytop)
{
	int started = 0;

#define BX(b) (ml + (log2(b) - lo) / (hi - lo) * pw)
#define BY(r) (mt + ph - (r) / ytop * ph)
	lp_out_printf(o, "<polygon fill=\"%s\" fill-opacity=\"0.18\" stroke=\"none\" points=\"", col);
	for (int back = 0; back < 2; back++)
		for (size_t k = 0; k < c->n; k++) {
			size_t j = back ? c->n - 1 - k : k;
			double r = back ? c->iv[j].lo : c->iv[j].hi;
			if (!c->size[j] || !isfinite(r))
				continue;
			lp_out_printf(o, "%s%.1f,%.1f", started ? " " : "", BX((double)c->size[j]), BY(r));
			started = 1;
		}
	lp_out_printf(o, "\"/>\n");
#undef BX
#undef BY
}

int lp_svg_write(const char *path, const char *title, const struct lp_curve *curves, size_t n,
		 const struct lp_curve *refs, size_t nrefs, const struct lp_marker *marks,
		 size_t nmarks)
{
	const double W = 800, H = 480, ml = 70, mr = 210, mt = 45, mb = 60;
	const double pw = W - ml - mr, ph = H - mt - mb;
	double lo = INFINITY, hi = -INFINITY, ymax = 0;
	struct lp_out *o;
	int err;

	for (int pass = 0; pass < 2; pass++) {
		const struct lp_curve *c = pass ? refs : curves;
		for (size_t i = 0; i < (pass ? nrefs : n); i++)
			for (size_t j = 0; j < c[i].n; j++) {
				if (c[i].size[j] == 0)
					continue;
				lo = fmin(lo, log2((double)c[i].size[j]));
				hi = fmax(hi, log2((double)c[i].size[j]));
				if (isfinite(c[i].ratio[j]))
					ymax = fmax(ymax, c[i].ratio[j]);
				if (!pass && c[i].iv && isfinite(c[i].iv[j].hi))
					ymax = fmax(ymax, c[i].iv[j].hi);
			}
	}
	if (!isfinite(lo)) {
		lo = 12;
		hi = 26;
	}
	lo = floor(lo);
	hi = ceil(hi);
	if (hi <= lo)
		hi = lo + 1;
	/* round the ratio axis up to a tenth (or a hundredth for small ratios) */
	double ystep = ymax > 0.2 ? 0.1 : ymax > 0.05 ? 0.02 : 0.005;
	double ytop = fmax(ystep, ceil(ymax / ystep - 1e-9) * ystep);
#define X(b) (ml + (log2(b) - lo) / (hi - lo) * pw)
#define Y(r) (mt + ph - (r) / ytop * ph)

	if ((err = lp_svg_open(&o, path, W, H, "Helvetica, Arial, sans-serif")) < 0)
		return err;
	lp_out_printf(o, "<text x=\"%g\" y=\"24\" text-anchor=\"middle\" font-size=\"15\" font-weight=\"bold\">",
		      ml + pw / 2);
	lp_svg_text(o, title);
	lp_out_printf(o, "</text>\n");
	/* grid and ticks: every power of two on x (labels every other one when
	 * crowded), every ystep on y */
	int xstep = hi - lo > 14 ? 2 : 1;
	for (int e = (int)lo; e <= (int)hi; e++) {
		double x = X(pow(2, e));
		char lab[32];
		lp_out_printf(o, "<line x1=\"%.1f\" y1=\"%g\" x2=\"%.1f\" y2=\"%g\" stroke=\"#e0e0e0\"/>\n", x, mt,
			      x, mt + ph);
		lp_out_printf(o, "<line x1=\"%.1f\" y1=\"%g\" x2=\"%.1f\" y2=\"%g\" stroke=\"black\"/>\n", x,
			      mt + ph, x, mt + ph + 5);
		if ((e - (int)lo) % xstep == 0) {
			size_label(lab, sizeof(lab), pow(2, e));
			lp_out_printf(o, "<text x=\"%.1f\" y=\"%g\" text-anchor=\"middle\">%s</text>\n", x,
				      mt + ph + 19, lab);
		}
	}
	for (int i = 0; i * ystep <= ytop + 1e-9; i++) {
		double y = Y(i * ystep);
		lp_out_printf(o, "<line x1=\"%g\" y1=\"%.1f\" x2=\"%g\" y2=\"%.1f\" stroke=\"#e0e0e0\"/>\n", ml, y,
			      ml + pw, y);
		lp_out_printf(o, "<line x1=\"%g\" y1=\"%.1f\" x2=\"%g\" y2=\"%.1f\" stroke=\"black\"/>\n", ml - 5,
			      y, ml, y);
		lp_out_printf(o, "<text x=\"%g\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n", ml - 8, y + 4,
			      round(i * ystep * 1000) / 1000);
	}
	lp_out_printf(o, "<rect x=\"%g\" y=\"%g\" width=\"%g\" height=\"%g\" fill=\"none\" stroke=\"black\"/>\n",
		      ml, mt, pw, ph);
	lp_out_printf(o, "<text x=\"%g\" y=\"%g\" text-anchor=\"middle\">cache size (bytes, log scale)</text>\n",
		      ml + pw / 2, H - 18);
	lp_out_printf(o, "<text transform=\"translate(20,%g) rotate(-90)\" text-anchor=\"middle\">miss ratio</text>\n",
		      mt + ph / 2);

	size_t legend = 0;
	for (int pass = 0; pass < 2; pass++) {
		const struct lp_curve *c = pass ? refs : curves;
		for (size_t i = 0; i < (pass ? nrefs : n); i++, legend++) {
			const char *col = lp_svg_color(legend % 6);
			int started = 0;
			if (!pass && c[i].iv)
				band(o, &c[i], col, lo, hi, pw, ml, mt, ph, ytop);
			lp_out_printf(o, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"%s\"%s points=\"", col,
				      pass ? "1.5" : "2", pass ? " stroke-dasharray=\"6,4\"" : "");
			for (size_t j = 0; j < c[i].n; j++) {
				if (!c[i].size[j] || !isfinite(c[i].ratio[j]))
					continue;
				lp_out_printf(o, "%s%.1f,%.1f", started ? " " : "", X((double)c[i].size[j]),
					      Y(c[i].ratio[j]));
				started = 1;
			}
			lp_out_printf(o, "\"/>\n");
			double ly = mt + 10 + 20.0 * (double)legend;
			lp_out_printf(o, "<line x1=\"%g\" y1=\"%g\" x2=\"%g\" y2=\"%g\" stroke=\"%s\" stroke-width=\"2\"%s/>\n",
				      ml + pw + 12, ly, ml + pw + 40, ly, col,
				      pass ? " stroke-dasharray=\"6,4\"" : "");
			lp_out_printf(o, "<text x=\"%g\" y=\"%g\">", ml + pw + 46, ly + 4);
			lp_svg_text(o, c[i].name);
			lp_out_printf(o, "%s</text>\n", pass ? " (ref.)" : "");
		}
	}
	for (size_t i = 0; i < nmarks; i++) {
		if (!marks[i].size || !isfinite(marks[i].ratio))
			continue;
		double x = X((double)marks[i].size), y = Y(marks[i].ratio);
		lp_out_printf(o, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4.5\" fill=\"black\"/>\n", x, y);
		lp_out_printf(o, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\">", x + 6, y - 6);
		lp_svg_text(o, marks[i].label);
		lp_out_printf(o, "</text>\n");
	}
#undef X
#undef Y
	return lp_svg_close(o);
}
