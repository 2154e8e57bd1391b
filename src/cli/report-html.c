/* report --html DIR: the tables of lp_report as one static page,
 * DIR/index.html, that a browser shows without a network: the style, the
 * script that sorts the tables and the working-set graph (the library's
 * SVG) are inline. Every table comes from the library (lp_report, its
 * lp_hotspots and lp_source_read); this file only lays them out. Every
 * string from the profile (file and function names, paths, source text)
 * goes through html_text(); none goes into the script, which reads the
 * numbers to sort by from the cells' data-v attributes. */
#include "report-html.h"

#include "cli.h"

#include <locprof/common.h>

#include <errno.h>
#include <inttypes.h>
#include <math.h>
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

/* A miss ratio with the half-width of its 95% interval (iv NULL: none),
 * and "cliff" where the report says one lies within sampling error. */
static void cell_ratio(FILE *f, double v, const struct lp_interval *iv)
{
	fprintf(f, "<td data-v=\"%.17g\">%.4f", v, v);
	if (iv) {
		double h = fmax(iv->hi - v, v - iv->lo);
		fprintf(f, " <small>\u00b1%.4f%s</small>", isfinite(h) ? h : 0, iv->cliff ? " cliff" : "");
	}
	fputs("</td>", f);
}

/* misses (with their 95% interval where it is not the count itself),
 * share in percent and a bar as long as the share */
static void cells_misses(FILE *f, double misses, double lo, double hi, double share)
{
	if (hi > lo)
		fprintf(f, "<td data-v=\"%.17g\">%.0f <small>[%.0f, %.0f]</small></td>", misses, misses, lo, hi);
	else
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
	double points, rate, expect;

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
	if (ri->samples && cli_few_samples(ri->samples, ri->accesses, &points, &rate, &expect))
		fprintf(f, "<p class=\"note\">Only %zu samples: each ratio is a share of them, known to within %.0f "
			   "points at worst; recording at --rate %g would give about %.0f.</p>\n",
			ri->samples, points, rate, expect);
	fputs("<nav><a href=\"#graph\">working-set graph</a><a href=\"#caches\">caches</a>", f);
	if (in->tl)
		fputs("<a href=\"#timeline\">time view</a>", f);
	if (in->windows)
		fputs("<a href=\"#windows\">windows</a>", f);
	fputs("<a href=\"#functions\">hot functions</a><a href=\"#source\">hot source lines</a>"
	      "<a href=\"#pcs\">hot pcs</a><a href=\"#objects\">data objects</a>"
	      "<a href=\"#object-pcs\">code by object</a><a href=\"#threads\">threads</a>",
	      f);
	if (lp_report_placements(in->r, &(const struct lp_report_placement *){ NULL }))
		fputs("<a href=\"#share\">threads and caches</a>", f);
	fputs("</nav>\n", f);
}

/* An SVG file the library wrote, without its XML declaration, inline. */
static int inline_svg(FILE *f, const char *svg_path)
{
	FILE *svg = fopen(svg_path, "r");
	char *line = NULL;
	size_t cap = 0;

	if (!svg) {
		cli_error("cannot read the graph '%s': %s", svg_path, strerror(errno));
		return -1;
	}
	while (getline(&line, &cap, svg) > 0)
		if (strncmp(line, "<?xml", 5))
			fputs(line, f);
	free(line);
	fclose(svg);
	return 0;
}

static int section_graph(FILE *f, const char *svg_path)
{
	fputs("<h2 id=\"graph\">Working-set graph</h2>\n", f);
	if (inline_svg(f, svg_path) < 0)
		return -1;
	fputs("<p class=\"note\">Miss ratio against cache size, fully associative: LRU by StatStack, random "
	      "replacement by StatCache; the named caches are marked.</p>\n",
	      f);
	return 0;
}

static void section_caches(FILE *f, const struct lp_report *r, int intervals)
{
	const struct lp_report_cache *ca;
	size_t n = lp_report_caches(r, &ca);
	char b[32];

	fputs("<h2 id=\"caches\">Named caches</h2>\n", f);
	if (!n) {
		fputs("<p class=\"note\">No named cache (report --cache SPEC or --cache host).</p>\n", f);
		return;
	}
	table_open(f, "<cache|size|ways|line|LRU miss ratio|random miss ratio");
	for (size_t i = 0; i < n; i++) {
		fputs("<tr>", f);
		cell_name(f, ca[i].label);
		fprintf(f, "<td data-v=\"%" PRIu64 "\">%s</td>", ca[i].size, cli_format_size(ca[i].size, b, sizeof(b)));
		fprintf(f, "<td data-v=\"%" PRIu64 "\">%" PRIu64 "</td>", ca[i].ways, ca[i].ways);
		fprintf(f, "<td data-v=\"%" PRIu64 "\">%" PRIu64 "</td>", ca[i].line, ca[i].line);
		cell_ratio(f, ca[i].lru, intervals ? &ca[i].lru_iv : NULL);
		cell_ratio(f, ca[i].random, intervals ? &ca[i].random_iv : NULL);
		fputs("</tr>\n", f);
	}
	table_close(f);
	fputs("<p class=\"note\">LRU: set-associative (placement model); random: fully associative. Ways 0: fully "
	      "associative. \u00b1: the 95% interval, what another sampling seed could give (at least the models' resolution, a "
	      "quarter of a point); cliff: a cliff of the "
	      "curve lies within sampling error.</p>\n",
	      f);
}

/* report --shared: the placements of the threads onto caches, each
 * thread's private cache, and the coherence misses, false sharing first
 * (docs/commands/report.md, "Threads and caches"). */
static void section_share(FILE *f, const struct lp_report *r, int intervals)
{
	const struct lp_report_placement *pl;
	const struct lp_report_thread_curve *tc;
	const struct lp_report_sharing *sh;
	size_t np = lp_report_placements(r, &pl), nt = lp_report_thread_curves(r, &tc), ns = lp_report_sharing(r, &sh);
	char b[32], pb[32], wb[32];

	if (!np)
		return;
	fputs("<h2 id=\"share\">Threads and caches</h2>\n<p class=\"note\">Misses per line access of the whole "
	      "process with its threads on one shared cache, two caches or a private cache each; coherence misses "
	      "(another cache's thread wrote the line before a reuse that would have hit) included.</p>\n",
	      f);
	table_open(f, "<placement|caches|size|LRU miss ratio|LRU coherence|random miss ratio|random coherence");
	for (size_t i = 0; i < np; i++) {
		fputs("<tr>", f);
		cell_name(f, pl[i].placement);
		fprintf(f, "<td data-v=\"%" PRIu32 "\">%" PRIu32 "</td>", pl[i].caches, pl[i].caches);
		fprintf(f, "<td data-v=\"%" PRIu64 "\">%s</td>", pl[i].size, cli_format_size(pl[i].size, b, sizeof(b)));
		cell_ratio(f, pl[i].lru, intervals ? &pl[i].lru_iv : NULL);
		cell_number(f, pl[i].lru_coh, "%.4f");
		cell_ratio(f, pl[i].random, intervals ? &pl[i].random_iv : NULL);
		cell_number(f, pl[i].random_coh, "%.4f");
		fputs("</tr>\n", f);
	}
	table_close(f);
	fputs("<p class=\"note\">Each thread alone on a private cache, per line access of the thread.</p>\n", f);
	table_open(f, "!thread|share|size|LRU miss ratio|LRU coherence|random miss ratio");
	for (size_t i = 0; i < nt; i++) {
		fprintf(f, "<tr><td data-v=\"%" PRIu32 "\">%" PRIu32 "</td>", tc[i].tid, tc[i].tid);
		cell_number(f, 100 * tc[i].share, "%.1f%%");
		fprintf(f, "<td data-v=\"%" PRIu64 "\">%s</td>", tc[i].size, cli_format_size(tc[i].size, b, sizeof(b)));
		cell_ratio(f, tc[i].lru, intervals ? &tc[i].lru_iv : NULL);
		cell_number(f, tc[i].lru_coh, "%.4f");
		cell_ratio(f, tc[i].random, intervals ? &tc[i].random_iv : NULL);
		fputs("</tr>\n", f);
	}
	table_close(f);
	fputs("<h3 id=\"sharing\">False sharing and true sharing</h3>\n<p class=\"note\">Reuses that another "
	      "thread's write invalidated, by data object, the pc that misses and the pc of the write; false "
	      "sharing: the reuse touched none of the bytes the other threads wrote. Misses: line accesses of the "
	      "whole run.</p>\n",
	      f);
	table_open(f, "<sharing|<object|!misses|share|<|<pc that misses|<pc of the write|<threads|<writers");
	for (size_t i = 0; i < ns; i++) {
		snprintf(pb, sizeof(pb), "%#" PRIx64, sh[i].pc);
		snprintf(wb, sizeof(wb), "%#" PRIx64, sh[i].wpc);
		fputs("<tr>", f);
		cell_name(f, sh[i].false_sharing ? "false sharing" : "true sharing");
		cell_name(f, sh[i].object);
		cells_misses(f, sh[i].misses, sh[i].misses, sh[i].misses, sh[i].share);
		fputs("<td class=\"name\">", f);
		html_text(f, pb);
		fputs(" ", f);
		html_text(f, sh[i].pc_name);
		fputs("</td><td class=\"name\">", f);
		html_text(f, wb);
		fputs(" ", f);
		html_text(f, sh[i].wpc_name);
		fputs("</td>", f);
		cell_name(f, sh[i].threads);
		cell_name(f, sh[i].writers);
		fputs("</tr>\n", f);
	}
	table_close(f);
}

/* The time view: the plot of lp_timeline_svg (the miss ratio over time
 * with the phases as bands), then each phase's share, ratios and top
 * functions. */
static int section_timeline(FILE *f, const struct report_html_in *in)
{
	const struct lp_timeline_phase *ph;
	const struct lp_report_cache *ca;
	size_t nph = lp_timeline_phases(in->tl, &ph), nc = lp_timeline_caches(in->tl, &ca);
	char head[1024];
	int len;

	fputs("<h2 id=\"timeline\">Time view</h2>\n", f);
	if (inline_svg(f, in->timeline_svg) < 0)
		return -1;
	if (!nph) {
		fputs("<p class=\"note\">Miss ratio per line access in each StatCache window of the first thread "
		      "(random replacement); a profile recorded with <code>record --phases</code> has its phases "
		      "marked.</p>\n",
		      f);
		return 0;
	}
	fprintf(f, "<p class=\"note\">Miss ratio per line access over the first thread's run, from each phase's "
		   "model (%s); the phases of <code>record --phases</code> as bands. Each phase's top functions by "
		   "misses in %s.</p>\n",
		lp_timeline_policy(in->tl) == LP_REPORT_LRU ? "LRU, set-associative" : "random replacement",
		ca[0].label);
	len = snprintf(head, sizeof(head), "phase|share|intervals|samples");
	for (size_t c = 0; c < nc && len < (int)sizeof(head) - 64; c++) {
		/* a heading is HTML between the table's separators */
		head[len++] = '|';
		for (const char *l = ca[c].label; *l && len < (int)sizeof(head) - 64; l++)
			head[len++] = strchr("|<>&\"", *l) ? '_' : *l;
		head[len] = 0;
	}
	snprintf(head + len, sizeof(head) - (size_t)len, "|<top functions");
	table_open(f, head);
	for (size_t k = 0; k < nph; k++) {
		fprintf(f, "<tr><td data-v=\"%u\">%u</td>", ph[k].info.id, ph[k].info.id);
		fprintf(f, "<td data-v=\"%.6f\">%.1f%%</td>", ph[k].info.weight, 100 * ph[k].info.weight);
		fprintf(f, "<td data-v=\"%zu\">%zu</td><td data-v=\"%zu\">%zu</td>", ph[k].info.intervals,
			ph[k].info.intervals, ph[k].info.samples, ph[k].info.samples);
		for (size_t c = 0; c < nc; c++)
			cell_number(f, ph[k].ratio[c], "%.4f");
		fputs("<td class=\"name\">", f);
		for (size_t j = 0; j < ph[k].ntop; j++) {
			fputs(j ? ", " : "", f);
			html_text(f, ph[k].top[j].label);
			fprintf(f, " %.0f%%", 100 * ph[k].top[j].share);
		}
		fputs(ph[k].ntop ? "</td></tr>\n" : "-</td></tr>\n", f);
	}
	table_close(f);
	return 0;
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
		   "whole run) by the pc of the access that misses; in brackets each row's 95%% interval, its sampling "
		   "error.</p>\n",
		ri->hot_policy, cli_format_size(ri->at, b, sizeof(b)));
	table_open(f, "<pc|!misses|share|<|<function (file:line)");
	for (size_t i = 0; i < n; i++) {
		snprintf(pb, sizeof(pb), "%#" PRIx64, pcs[i].pc);
		fprintf(f, "<tr><td class=\"name\" data-v=\"%" PRIu64 "\">%s</td>", pcs[i].pc, pb);
		cells_misses(f, pcs[i].misses, pcs[i].misses_lo, pcs[i].misses_hi, pcs[i].share);
		cell_name(f, pcs[i].name ? pcs[i].name : "?");
		fputs("</tr>\n", f);
	}
	table_close(f);
}

/* The misses charged to line `line` of the file at path, from the hot
 * spots' lines (all of them, not only the top ones); 0 when none. */
static double line_misses(const struct lp_source_line *l, size_t n, const char *path, int line)
{
	for (size_t i = 0; i < n; i++)
		if (l[i].line == line && !strcmp(l[i].path, path))
			return l[i].misses;
	return 0;
}

/* Lines hot - SOURCE_CONTEXT to hot + SOURCE_CONTEXT of the source file,
 * each with its misses, the hot line marked; a note when the file cannot
 * be read. */
static void source_excerpt(FILE *f, const struct lp_source_line *all, size_t nall, const struct lp_source_line *hot)
{
	struct lp_source_text *text = NULL;
	int first = hot->line - SOURCE_CONTEXT > 1 ? hot->line - SOURCE_CONTEXT : 1;

	if (lp_source_read(&text, hot->path, NULL, 0) < 0) {
		fputs("<p class=\"note\">", f);
		html_text(f, lp_errmsg());
		fputs("</p>\n", f);
		return;
	}
	fputs("<pre class=\"src\">", f);
	for (int no = first; no <= hot->line + SOURCE_CONTEXT && (size_t)no <= text->n; no++) {
		double m = line_misses(all, nall, hot->path, no);
		char misses[32] = "";

		if (m > 0)
			snprintf(misses, sizeof(misses), "%.0f", m);
		fprintf(f, no == hot->line ? "<b>%12s %6d  " : "%12s %6d  ", misses, no);
		html_text(f, text->lines[no - 1]);
		fputs(no == hot->line ? "</b>" : "\n", f);
	}
	fputs("</pre>\n", f);
	lp_source_free(text);
}

/* The hot source lines (lp_hotspots: every pc's misses by line), as a
 * table and then each in its source, annotated with the lines' misses. */
static void section_source(FILE *f, const struct report_html_in *in)
{
	const struct lp_hotspots *h = lp_report_hotspots(in->r);
	const struct lp_source_line *l;
	size_t nall = h ? lp_hotspots_lines(h, &l) : 0, n = nall < in->top ? nall : in->top;

	fputs("<h2 id=\"source\">Hot source lines</h2>\n", f);
	if (!n) {
		fputs("<p class=\"note\">No pc has a source line (the program was built without -g, or its files are "
		      "gone).</p>\n",
		      f);
		return;
	}
	fputs("<p class=\"note\">Predicted misses of each line's pcs; line accesses estimated from the samples. Below, "
	      "each line with misses in its source, with the misses of the lines around it.</p>\n",
	      f);
	table_open(f, "<line|!misses|share|<|line accesses|<path");
	for (size_t i = 0; i < n; i++) {
		fprintf(f, "<tr><td class=\"name\">");
		html_text(f, l[i].file);
		fprintf(f, ":%d</td>", l[i].line);
		cells_misses(f, l[i].misses, l[i].misses_lo, l[i].misses_hi, l[i].share);
		cell_number(f, l[i].accesses, "%.0f");
		cell_name(f, l[i].path);
		fputs("</tr>\n", f);
	}
	table_close(f);
	for (size_t i = 0; i < n && l[i].misses > 0; i++) {
		fputs("<h3>", f);
		html_text(f, l[i].file);
		fprintf(f, ":%d <small>(%.0f misses, %.1f%%)</small></h3>\n", l[i].line, l[i].misses, 100 * l[i].share);
		source_excerpt(f, l, nall, &l[i]);
	}
}

/* Misses by function, with the function code was inlined into. */
static void section_functions(FILE *f, const struct report_html_in *in)
{
	const struct lp_hotspots *h = lp_report_hotspots(in->r);
	const struct lp_source_function *fn;
	size_t n = h ? lp_hotspots_functions(h, &fn) : 0;

	if (n > in->top)
		n = in->top;
	fputs("<h2 id=\"functions\">Hot functions</h2>\n<p class=\"note\">Predicted misses of each function's pcs; "
	      "code inlined from elsewhere is its function in the function it was inlined into.</p>\n",
	      f);
	table_open(f, "<function|!misses|share|<|line accesses");
	for (size_t i = 0; i < n; i++) {
		fputs("<tr>", f);
		cell_name(f, fn[i].label);
		cells_misses(f, fn[i].misses, fn[i].misses_lo, fn[i].misses_hi, fn[i].share);
		cell_number(f, fn[i].accesses, "%.0f");
		fputs("</tr>\n", f);
	}
	table_close(f);
}

/* Per thread: line accesses and predicted LRU misses in each cache. */
static void section_threads(FILE *f, const struct lp_report *r)
{
	const struct lp_report_thread *t;
	const struct lp_report_cache *c;
	size_t nt = lp_report_threads(r, &t), nc = lp_report_thread_caches(r, &c);

	fputs("<h2 id=\"threads\">Threads</h2>\n<p class=\"note\">Each thread's references (exact, where the profile "
	      "counts them per thread), samples, the line accesses they stand for, and its predicted LRU misses in "
	      "each cache (set-associative by the placement model).</p>\n",
	      f);
	fputs("<table class=\"sortable\"><thead><tr><th data-sorted>thread</th><th>references</th><th>samples</th>"
	      "<th>line accesses</th>",
	      f);
	for (size_t k = 0; k < nc; k++) {
		fputs("<th>misses in ", f);
		html_text(f, c[k].label);
		fputs("</th>", f);
	}
	fputs("</tr></thead><tbody>\n", f);
	for (size_t i = 0; i < nt; i++) {
		fprintf(f, "<tr><td data-v=\"%" PRIu32 "\">%" PRIu32 "</td>", t[i].tid, t[i].tid);
		fprintf(f, "<td data-v=\"%" PRIu64 "\">%" PRIu64 "</td>", t[i].references, t[i].references);
		fprintf(f, "<td data-v=\"%zu\">%zu</td>", t[i].samples, t[i].samples);
		cell_number(f, t[i].accesses, "%.0f");
		for (size_t k = 0; k < nc; k++)
			cell_number(f, t[i].misses[k], "%.0f");
		fputs("</tr>\n", f);
	}
	table_close(f);
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
		cells_misses(f, obj[i].misses, obj[i].misses_lo, obj[i].misses_hi, obj[i].share);
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
			cells_misses(f, pr[k].misses, pr[k].misses_lo, pr[k].misses_hi, pr[k].share);
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
	section_caches(f, in->r, in->intervals);
	if (in->tl && section_timeline(f, in) < 0)
		return -1;
	if (in->windows)
		section_windows(f, in->r);
	section_functions(f, in);
	section_source(f, in);
	section_pcs(f, in->r);
	section_objects(f, in->r);
	section_object_pcs(f, in->r);
	section_threads(f, in->r);
	section_share(f, in->r, in->intervals);
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
