/* The shared SVG pieces (common/svg.h). */
#include "common/svg.h"

static const char *const palette[] = { "#1f77b4", "#d62728", "#2ca02c", "#9467bd",
				       "#ff7f0e", "#8c564b", "#e377c2", "#17becf" };

int lp_svg_open(struct lp_out **o, const char *path, double w, double h, const char *font_family)
{
	int err = lp_out_open(o, path);

	if (err < 0)
		return err;
	lp_out_printf(*o, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
			  "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%g\" height=\"%g\" "
			  "viewBox=\"0 0 %g %g\" font-family=\"%s\" font-size=\"12\">\n"
			  "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
		      w, h, w, h, font_family);
	return 0;
}

int lp_svg_close(struct lp_out *o)
{
	lp_out_printf(o, "</svg>\n");
	return lp_out_close(o);
}

void lp_svg_text(struct lp_out *o, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '<': lp_out_write(o, "&lt;", 4); break;
		case '>': lp_out_write(o, "&gt;", 4); break;
		case '&': lp_out_write(o, "&amp;", 5); break;
		case '"': lp_out_write(o, "&quot;", 6); break;
		default: lp_out_write(o, s, 1);
		}
	}
}

const char *lp_svg_color(size_t i)
{
	return palette[i % (sizeof(palette) / sizeof(palette[0]))];
}
