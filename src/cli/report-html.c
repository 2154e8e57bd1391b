/* report --html DIR: the tables of lp_report as one static page,
 * DIR/index.html, that a browser shows without a network: the style, the
 * script that sorts the tables and the working-set graph (the library's
 * SVG) are inline. Every string from the profile (file and function names,
 * paths, source text) goes through html_text(); none goes into the script,
 * which reads the numbers to sort by from the cells' data-v attributes. */
#include "report-html.h"

#include "cli.h"

#include <locprof/common.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Lines of source shown around a hot line, before and after it. */
enum { SOURCE_CONTEXT = 2 };

static const char page_style[] =
	"body{font-family:Helvetica,Arial,sans-serif;margin:1.5em auto;max-width:1100px;color:#222;padding:0 1em}\n"
	"h1{font-size:1.5em;margin-bottom:.2em}h2{font-size:1.2em;margin-top:1.6em;border-bottom:1px solid #ccc}\n"
	"nav a{margin-right:1em}p.note{color:#555;font-size:.9em}\n"
	"table{border-collapse:collapse;font-size:.9em}th,td{padding:.2em .6em;text-align:right}\n"
	"th{background:#eef;cursor:pointer;user-select:none}th.sorted-up::after{content:' \\25B2'}\n"
	"th.sorted-down::after{content:' \\25BC'}tr:nth-child(even) td{background:#f6f6f6}\n"
	"td.name,th.name{text-align:left;font-family:monospace}\n"
	"td.bar{width:8em}td.bar span{display:block;height:.8em;background:#d62728}\n"
	"pre.src{background:#f8f8f8;border:1px solid #ddd;padding:.4em;overflow-x:auto;margin:.3em 0 1em}\n"
	"pre.src b{background:#ffe08a;font-weight:normal;display:block}\n"
	"svg{max-width:100%;height:auto}\n";

/* Click a column's heading to sort by it; again to reverse. Numeric cells
 * sort by data-v, others by their text. The column the rows come sorted
 * by (data-sorted, by decreasing value) gets its arrow on load. */
static const char page_script[] =
	"document.querySelectorAll('table.sortable').forEach(function (t) {\n"
	"  t.querySelectorAll('th[data-sorted]').forEach(function (th) { th.classList.add('sorted-down'); });\n"
	"  t.querySelectorAll('th').forEach(function (th, col) {\n"
	"    th.addEventListener('click', function () {\n"
	"      var down = !th.classList.contains('sorted-down');\n"
	"      t.querySelectorAll('th').forEach(function (h) { h.classList.remove('sorted-up', 'sorted-down'); });\n"
	"      th.classList.add(down ? 'sorted-down' : 'sorted-up');\n"
	"      var body = t.tBodies[0], rows = Array.prototype.slice.call(body.rows);\n"
	"      function key(r) { var c = r.cells[col]; var v = c.getAttribute('data-v');\n"
	"        return v === null ? c.textContent : parseFloat(v); }\n"
	"      rows.sort(function (a, b) { var x = key(a), y = key(b);\n"
	"        var d = typeof x === 'number' ? x - y : x.localeCompare(y); return down ? -d : d; });\n"
	"      rows.forEach(function (r) { body.appendChild(r); });\n"
	"    });\n"
	"  });\n"
	"});\n";

/* s as HTML text or attribute value; control characters (which no name
 * or source line should hold) as U+FFFD. */
static void html_text(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;
		switch (c) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&#39;", f); break;
		default:
			if (c < 0x20 && c != '\t')
				fputs("&#xFFFD;", f);
			else
				fputc(c, f);
		}
	}
}

static void cell_name(FILE *f, const char *s)
{
	fputs("<td class=\"name\">", f);
	html_text(f, s);
	fputs("</td>", f);
}

static void cell_number(FILE *f, double v, const char *fmt)
{
	fprintf(f, "<td data-v=\"%.17g\">", v);
	fprintf(f, fmt, v);
	fputs("</td>", f);
}

/* misses, share in percent and a bar as long as the share */
static void cells_misses(FILE *f, double misses, double share)
{
	cell_number(f, misses, "%.0f");
	cell_number(f, 100 * share, "%.1f%%");
	fprintf(f, "<td class=\"bar\"><span style=\"width:%.1f%%\"></span></td>", 100 * share);
}

/* <table class="sortable"><thead>...</thead><tbody>: headings separated
 * by '|'; a leading '<' marks a left-aligned (name) column, a leading '!'
 * the column the rows are sorted by. */
static void table_open(FILE *f, const char *headings)
{
	fputs("<table class=\"sortable\"><thead><tr>", f);
	for (const char *h = headings; *h;) {
		const char *end = strchr(h, '|');
		size_t len = end ? (size_t)(end - h) : strlen(h);
		int name = *h == '<', sorted = *h == '!';
		fprintf(f, "<th%s%s>%.*s</th>", name ? " class=\"name\"" : "", sorted ? " data-sorted" : "",
			(int)(len - name - sorted), h + name + sorted);
		h += len + (end != NULL);
	}
	fputs("</tr></thead><tbody>\n", f);
}

static void table_close(FILE *f)
{
	fputs("</tbody></table>\n", f);
}

static void section_summary(FILE *f, const struct report_html_in *in)
{
	const struct lp_report_info *ri = lp_report_info(in->r);

	fputs("<h1>locprof report: ", f);
	html_text(f, in->profile);
	fprintf(f, "</h1>\n<p>%zu samples, ", ri->samples);
	if (!ri->accesses_partial)
		fprintf(f, "%" PRIu64 " line accesses", ri->accesses);
	else if (ri->accesses)
		fprintf(f, "at least %" PRIu64 " line accesses (the run was cut short: counted up to the last flush)",
			ri->accesses);
	else
		fputs("line accesses not counted (the run was cut short before the first flush)", f);
	fprintf(f, " of %g bytes, %s.</p>\n", ri->line, in->cold ? "cold misses included" : "cold misses excluded");
	fputs("<nav><a href=\"#graph\">working-set graph</a><a href=\"#caches\">caches</a>", f);
	if (in->windows)
		fputs("<a href=\"#windows\">windows</a>", f);
	fputs("<a href=\"#pcs\">hot pcs</a><a href=\"#source\">hot source lines</a>"
	      "<a href=\"#objects\">data objects</a><a href=\"#object-pcs\">code by object</a></nav>\n",
	      f);
}

/* The library's SVG, without its XML declaration, inline. */
static int section_graph(FILE *f, const char *svg_path)
{
	FILE *svg = fopen(svg_path, "r");
	char *line = NULL;
	size_t cap = 0;

	fputs("<h2 id=\"graph\">Working-set graph</h2>\n", f);
	if (!svg) {
		cli_error("cannot read the graph '%s': %s", svg_path, strerror(errno));
		return -1;
	}
	while (getline(&line, &cap, svg) > 0)
		if (strncmp(line, "<?xml", 5))
			fputs(line, f);
	free(line);
	fclose(svg);
	fputs("<p class=\"note\">Miss ratio against cache size, fully associative: LRU by StatStack, random "
	      "replacement by StatCache; the named caches are marked.</p>\n",
	      f);
	return 0;
}

static void section_caches(FILE *f, const struct lp_report *r)
{
	const struct lp_report_cache *ca;
	size_t n = lp_report_caches(r, &ca);
	char b[32];

	fputs("<h2 id=\"caches\">Named caches</h2>\n", f);
	if (!n) {
		fputs("<p class=\"note\">No named cache (report --cache SPEC or --cache host).</p>\n", f);
		return;
	}
	table_open(f, "<cache|size|ways|line|LRU miss ratio|random miss ratio (FA)");
	for (size_t i = 0; i < n; i++) {
		fputs("<tr>", f);
		cell_name(f, ca[i].label);
		fprintf(f, "<td data-v=\"%" PRIu64 "\">%s</td>", ca[i].size, cli_format_size(ca[i].size, b, sizeof(b)));
		fprintf(f, "<td data-v=\"%" PRIu64 "\">%" PRIu64 "</td>", ca[i].ways, ca[i].ways);
		fprintf(f, "<td data-v=\"%" PRIu64 "\">%" PRIu64 "</td>", ca[i].line, ca[i].line);
		cell_number(f, ca[i].lru, "%.4f");
		cell_number(f, ca[i].random, "%.4f");
		fputs("</tr>\n", f);
	}
	table_close(f);
	fputs("<p class=\"note\">LRU: set-associative (placement model); random: fully associative. Ways 0: fully "
	      "associative.</p>\n",
	      f);
}

static void section_windows(FILE *f, const struct lp_report *r)
{
	const struct lp_report_info *ri = lp_report_info(r);
	const struct lp_report_window *w;
	size_t n = lp_report_windows(r, &w);
	char b[32];

	fprintf(f, "<h2 id=\"windows\">Miss ratio per time window</h2>\n<p class=\"note\">Random replacement at %s, "
		   "windows of %" PRIu64 " line accesses or more.</p>\n",
		cli_format_size(ri->at, b, sizeof(b)), ri->window_length);
	table_open(f, "window|start (line accesses)|miss ratio");
	for (size_t i = 0; i < n; i++) {
		fprintf(f, "<tr><td data-v=\"%zu\">%zu</td><td data-v=\"%" PRIu64 "\">%" PRIu64 "</td>", i, i,
			w[i].start, w[i].start);
		cell_number(f, w[i].ratio, "%.4f");
		fputs("</tr>\n", f);
	}
	table_close(f);
}

static void section_pcs(FILE *f, const struct lp_report *r)
{
	const struct lp_report_info *ri = lp_report_info(r);
	const struct lp_report_pc *pcs;
	size_t n = lp_report_pcs(r, &pcs);
	char b[32], pb[32];

	fprintf(f, "<h2 id=\"pcs\">Hot pcs</h2>\n<p class=\"note\">Predicted %s misses at %s (line accesses of the "
		   "whole run) by the pc of the access that misses.</p>\n",
		ri->hot_policy, cli_format_size(ri->at, b, sizeof(b)));
	table_open(f, "<pc|!misses|share|<|<function (file:line)");
	for (size_t i = 0; i < n; i++) {
		snprintf(pb, sizeof(pb), "%#" PRIx64, pcs[i].pc);
		fprintf(f, "<tr><td class=\"name\" data-v=\"%" PRIu64 "\">%s</td>", pcs[i].pc, pb);
		cells_misses(f, pcs[i].misses, pcs[i].share);
		cell_name(f, pcs[i].name ? pcs[i].name : "?");
		fputs("</tr>\n", f);
	}
	table_close(f);
}

/* Lines first - SOURCE_CONTEXT to line + SOURCE_CONTEXT of path, line
 * marked; a note when the file cannot be read. */
static void source_excerpt(FILE *f, const char *path, int line)
{
	FILE *src = fopen(path, "r");
	char *text = NULL;
	size_t cap = 0;
	ssize_t len;
	int no = 0;

	if (!src) {
		fputs("<p class=\"note\">source file not found: ", f);
		html_text(f, path);
		fputs("</p>\n", f);
		return;
	}
	fputs("<pre class=\"src\">", f);
	while ((len = getline(&text, &cap, src)) > 0 && ++no <= line + SOURCE_CONTEXT) {
		if (no < line - SOURCE_CONTEXT)
			continue;
		if (text[len - 1] == '\n')
			text[len - 1] = '\0';
		fprintf(f, no == line ? "<b>%6d  " : "%6d  ", no);
		html_text(f, text);
		fputs(no == line ? "</b>" : "\n", f);
	}
	fputs("</pre>\n", f);
	free(text);
	fclose(src);
}

/* The source line of each hot pc, in the hot pcs' order, one excerpt per
 * line however many of the pcs lie on it. */
static void section_source(FILE *f, const struct report_html_in *in)
{
	const struct lp_report_pc *pcs;
	size_t n = lp_report_pcs(in->r, &pcs), shown = 0;

	fputs("<h2 id=\"source\">Hot source lines</h2>\n", f);
	for (size_t i = 0; i < n && in->syms; i++) {
		struct lp_code_loc loc, prev;
		int seen = 0;

		if (!lp_symbols_pc(in->syms, pcs[i].pc, &loc) || !loc.path || loc.line <= 0)
			continue;
		for (size_t k = 0; k < i && !seen; k++)
			seen = lp_symbols_pc(in->syms, pcs[k].pc, &prev) && prev.path && prev.line == loc.line &&
			       !strcmp(prev.path, loc.path);
		if (seen)
			continue;
		fputs("<h3>", f);
		html_text(f, loc.file);
		fprintf(f, ":%d</h3>\n<p>pcs here:", loc.line);
		for (size_t k = i; k < n; k++) {
			if (k > i && !(lp_symbols_pc(in->syms, pcs[k].pc, &prev) && prev.path &&
				       prev.line == loc.line && !strcmp(prev.path, loc.path)))
				continue;
			fprintf(f, " %#" PRIx64 " (%.0f misses, %.1f%%)", pcs[k].pc, pcs[k].misses, 100 * pcs[k].share);
		}
		fputs("</p>\n", f);
		source_excerpt(f, loc.path, loc.line);
		shown++;
	}
	if (!shown)
		fputs("<p class=\"note\">No hot pc has a source line (the program was built without -g, or its "
		      "files are gone).</p>\n",
		      f);
}

static void section_objects(FILE *f, const struct lp_report *r)
{
	const struct lp_report_info *ri = lp_report_info(r);
	const struct lp_report_object *obj;
	size_t n = lp_report_objects(r, &obj);
	char b[32];

	fprintf(f, "<h2 id=\"objects\">Data objects</h2>\n<p class=\"note\">Predicted %s misses at %s by the data "
		   "object holding the address: heap blocks by allocation site (%zu heap blocks in the profile",
		ri->hot_policy, cli_format_size(ri->at, b, sizeof(b)), ri->heap_blocks);
	if (ri->touched_blocks_only)
		fprintf(f, ", the touched ones of %" PRIu64 " allocated", ri->run_allocs);
	fputs("), globals by symbol.</p>\n", f);
	table_open(f, "<object|!misses|share|<");
	for (size_t i = 0; i < n; i++) {
		fputs("<tr>", f);
		cell_name(f, obj[i].name);
		cells_misses(f, obj[i].misses, obj[i].share);
		fputs("</tr>\n", f);
	}
	table_close(f);
}

/* For each data object, the pcs that miss on it (lp_report_pairs). */
static void section_object_pcs(FILE *f, const struct lp_report *r)
{
	const struct lp_report_object *obj;
	const struct lp_report_pair *pr;
	size_t nobj = lp_report_objects(r, &obj), npr = lp_report_pairs(r, &pr), k = 0;
	char pb[32];

	fputs("<h2 id=\"object-pcs\">The code that misses on each data object</h2>\n<p class=\"note\">Each object's "
	      "predicted misses by the pc of the access that misses; share: of the object's misses.</p>\n",
	      f);
	for (size_t i = 0; i < nobj; i++) {
		fputs("<h3 class=\"object\">", f);
		html_text(f, obj[i].name);
		fprintf(f, " <small>(%.0f misses, %.1f%% of all)</small></h3>\n", obj[i].misses, 100 * obj[i].share);
		table_open(f, "<pc|!misses|share of the object|<|<function (file:line)");
		for (; k < npr && pr[k].object == i; k++) {
			snprintf(pb, sizeof(pb), "%#" PRIx64, pr[k].pc);
			fprintf(f, "<tr><td class=\"name\" data-v=\"%" PRIu64 "\">%s</td>", pr[k].pc, pb);
			cells_misses(f, pr[k].misses, pr[k].share);
			cell_name(f, pr[k].name ? pr[k].name : "?");
			fputs("</tr>\n", f);
		}
		table_close(f);
	}
}

static int write_page(FILE *f, const struct report_html_in *in)
{
	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>locprof report: ", f);
	html_text(f, in->profile);
	fprintf(f, "</title>\n<style>\n%s</style>\n</head>\n<body>\n", page_style);
	section_summary(f, in);
	if (section_graph(f, in->graph_svg) < 0)
		return -1;
	section_caches(f, in->r);
	if (in->windows)
		section_windows(f, in->r);
	section_pcs(f, in->r);
	section_source(f, in);
	section_objects(f, in->r);
	section_object_pcs(f, in->r);
	fprintf(f, "<script>\n%s</script>\n</body>\n</html>\n", page_script);
	return 0;
}

int report_html_write(const char *dir, const struct report_html_in *in)
{
	char path[4096], tmp[4096 + 32];
	FILE *f;
	int err, slot;

	if ((size_t)snprintf(path, sizeof(path), "%s/index.html", dir) >= sizeof(path)) {
		cli_error("directory name too long: '%s'", dir);
		return -1;
	}
	/* NAME.tmp.PID as every output (locprof/common.h): a signal that ends
	 * locprof removes it */
	snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid());
	if (!(f = fopen(tmp, "w"))) {
		cli_error("cannot write '%s': %s", path, strerror(errno));
		return -1;
	}
	slot = lp_tmp_track(tmp);
	err = write_page(f, in);
	if (ferror(f) && !err) {
		cli_error("cannot write '%s': %s", path, strerror(errno));
		err = -1;
	}
	if (fclose(f) != 0 && !err) {
		cli_error("cannot write '%s': %s", path, strerror(errno));
		err = -1;
	}
	if (!err && rename(tmp, path) < 0) {
		cli_error("cannot write '%s': %s", path, strerror(errno));
		err = -1;
	}
	if (err)
		unlink(tmp);
	if (slot >= 0)
		lp_tmp_untrack(slot);
	return err;
}
