/* Hot spots by source line, source file and function: misses charged to
 * pcs (predicted from a profile's samples by lp_report, simulated on a
 * trace by lp_attrib) grouped by the place the debug information gives
 * each pc. One grouping for every command, so that `report`, `annotate`
 * and `simulate --attribute` rank lines and functions the same way.
 *
 * A pc lies on the line of the innermost function that holds it, inlined
 * or not (lp_symbols_pc()), so a line of a header inlined into a loop is
 * that header's line, as in cg_annotate; its function row names the
 * function it was inlined into. Pcs without line information count in the
 * functions and the totals only; pc 0 (unknown) in the totals only.
 * Hot spots of samples (lp_hotspots_new_sampled()) also sum the squares
 * of the samples' misses, which give each row its interval. */
#include <locprof/report.h>

#include "common/array.h"
#include "common/error.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct pc_charge {
	uint64_t pc;
	double accesses, misses, misses_sq;
};

/* One symbolised pc: the keys of its line and function rows, and of its
 * row among the program's own lines (own_path NULL: its own line is). */
struct placed {
	const char *path, *function, *caller, *own_path;
	int line, own_line;
	double accesses, misses, misses_sq;
};

struct lp_hotspots {
	struct lp_symbols *syms;
	double weight; /* line accesses per recorded sample; 0: exact counts */
	double copies; /* adds per recorded sample (lp_hotspots_new_sampled()) */
	struct pc_charge *pcs;
	size_t npcs, cappcs;
	double total_accesses, total_misses;
	char **strs; /* every string the rows point to */
	size_t nstrs, capstrs;
	struct lp_source_line *byfile, *lines; /* by (path, line); by misses */
	size_t nlines;
	struct lp_source_file *files;
	size_t nfiles;
	struct lp_source_function *functions;
	size_t nfunctions;
	struct lp_source_line *own; /* the program's own lines, by misses */
	size_t nown;
	struct placed *placed; /* every pc's place, kept for lp_hotspots_merge() */
	size_t nplaced;
};

int lp_hotspots_new(struct lp_hotspots **out, struct lp_symbols *syms)
{
	if (!(*out = calloc(1, sizeof(**out))))
		return lp_seterr(LP_ENOMEM, "out of memory");
	(*out)->syms = syms;
	return 0;
}

int lp_hotspots_new_sampled(struct lp_hotspots **out, struct lp_symbols *syms, double weight, double copies)
{
	int err = lp_hotspots_new(out, syms);

	if (err >= 0 && weight > 0) {
		(*out)->copies = copies > 1 ? copies : 1;
		(*out)->weight = weight * (*out)->copies;
	}
	return err;
}

void lp_hotspots_free(struct lp_hotspots *h)
{
	if (!h)
		return;
	for (size_t i = 0; i < h->nstrs; i++)
		free(h->strs[i]);
	free(h->strs);
	free(h->pcs);
	free(h->byfile);
	free(h->lines);
	free(h->files);
	free(h->functions);
	free(h->own);
	free(h->placed);
	free(h);
}

int lp_hotspots_add(struct lp_hotspots *h, uint64_t pc, double accesses, double misses)
{
	h->total_accesses += accesses;
	h->total_misses += misses;
	if (!pc)
		return 0;
	if (LP_ARRAY_RESERVE(h->pcs, h->cappcs, h->npcs + 1, 256, "pcs") < 0)
		return lp_seterr(LP_ENOMEM, "out of memory");
	h->pcs[h->npcs++] = (struct pc_charge){ pc, accesses, misses, h->weight > 0 ? misses * misses * h->copies : 0 };
	return 0;
}

/* A copy of s owned by h (NULL stays NULL). */
static const char *keep(struct lp_hotspots *h, const char *s, int *err)
{
	char *c;

	if (!s || *err)
		return NULL;
	if (LP_ARRAY_RESERVE(h->strs, h->capstrs, h->nstrs + 1, 64, "names") < 0 || !(c = strdup(s))) {
		*err = lp_seterr(LP_ENOMEM, "out of memory");
		return NULL;
	}
	return h->strs[h->nstrs++] = c;
}

static int strcmp0(const char *a, const char *b)
{
	return a && b ? strcmp(a, b) : (a != NULL) - (b != NULL);
}

static int cmp_pc(const void *x, const void *y)
{
	const struct pc_charge *a = x, *b = y;
	return a->pc < b->pc ? -1 : a->pc > b->pc;
}

static int cmp_place_line(const void *x, const void *y)
{
	const struct placed *a = x, *b = y;
	int c = strcmp0(a->path, b->path);
	return c ? c : a->line - b->line;
}

static int cmp_place_function(const void *x, const void *y)
{
	const struct placed *a = x, *b = y;
	int c = strcmp0(a->function, b->function);
	return c ? c : strcmp0(a->caller, b->caller);
}

static int cmp_misses(double a, double b)
{
	return a != b ? (a > b ? -1 : 1) : 0;
}

static int cmp_line_misses(const void *x, const void *y)
{
	const struct lp_source_line *a = x, *b = y;
	int c = cmp_misses(a->misses, b->misses);
	if (!c)
		c = cmp_misses(a->accesses, b->accesses);
	if (!c)
		c = strcmp(a->path, b->path);
	return c ? c : a->line - b->line;
}

static int cmp_file_misses(const void *x, const void *y)
{
	const struct lp_source_file *a = x, *b = y;
	int c = cmp_misses(a->misses, b->misses);
	if (!c)
		c = cmp_misses(a->accesses, b->accesses);
	return c ? c : strcmp(a->path, b->path);
}

static int cmp_function_misses(const void *x, const void *y)
{
	const struct lp_source_function *a = x, *b = y;
	int c = cmp_misses(a->misses, b->misses);
	if (!c)
		c = cmp_misses(a->accesses, b->accesses);
	return c ? c : strcmp(a->label, b->label);
}

static double share(const struct lp_hotspots *h, double misses)
{
	return h->total_misses > 0 ? misses / h->total_misses : 0.0;
}

/* Each pc's place, with its charges merged per pc. */
static int place_pcs(struct lp_hotspots *h, struct placed **out, size_t *n)
{
	struct placed *v;
	size_t m = 0;
	int err = 0;

	if (h->npcs)
		qsort(h->pcs, h->npcs, sizeof(*h->pcs), cmp_pc);
	if (!(v = calloc(h->npcs + 1, sizeof(*v))))
		return lp_seterr(LP_ENOMEM, "out of memory");
	for (size_t i = 0; i < h->npcs && !err; i++) {
		struct lp_code_loc loc = { 0 };
		char hex[300], *in_lib = NULL;
		const char *own_fn, *own_path = NULL;
		int own_line = 0;

		if (i && h->pcs[i].pc == h->pcs[i - 1].pc) {
			v[m - 1].accesses += h->pcs[i].accesses;
			v[m - 1].misses += h->pcs[i].misses;
			v[m - 1].misses_sq += h->pcs[i].misses_sq;
			continue;
		}
		if (h->syms)
			lp_symbols_pc(h->syms, h->pcs[i].pc, &loc);
		lp_symbols_pc_address(h->syms, h->pcs[i].pc, hex, sizeof(hex));
		/* a shared library's function after the library's soname */
		if (loc.function && loc.module && asprintf(&in_lib, "%s:%s", loc.module, loc.function) < 0)
			err = lp_seterr(LP_ENOMEM, "out of memory");
		/* the program's line that called inlined std:: code */
		if (!h->syms || !loc.file || !lp_symbols_own_line(h->syms, h->pcs[i].pc, &own_fn, &own_path, &own_line))
			own_path = NULL;
		v[m] = (struct placed){ .path = loc.file ? keep(h, loc.path ? loc.path : loc.file, &err) : NULL,
					.line = loc.file ? loc.line : 0, .own_path = keep(h, own_path, &err),
					.own_line = own_line,
					.function = keep(h, in_lib ? in_lib : loc.function ? loc.function : hex, &err),
					.caller = keep(h, loc.caller, &err),
					.accesses = h->pcs[i].accesses, .misses = h->pcs[i].misses,
					.misses_sq = h->pcs[i].misses_sq };
		free(in_lib);
		m++;
	}
	if (err) {
		free(v);
		return err;
	}
	*out = v;
	*n = m;
	return 0;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

/* The line rows (by file, and by misses) and the file rows. */
static int group_lines(struct lp_hotspots *h, struct placed *v, size_t n)
{
	size_t k = 0;

	qsort(v, n, sizeof(*v), cmp_place_line);
	if (!(h->byfile = calloc(n + 1, sizeof(*h->byfile))) || !(h->lines = calloc(n + 1, sizeof(*h->lines))) ||
	    !(h->files = calloc(n + 1, sizeof(*h->files))))
		return lp_seterr(LP_ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++) {
		struct lp_source_line *l = k ? &h->byfile[k - 1] : NULL;

		if (!v[i].path)
			continue;
		if (l && !strcmp(l->path, v[i].path) && l->line == v[i].line) {
			l->accesses += v[i].accesses;
			l->misses += v[i].misses;
			l->misses_sq += v[i].misses_sq;
			continue;
		}
		h->byfile[k++] = (struct lp_source_line){ .path = v[i].path, .file = base_name(v[i].path),
							  .line = v[i].line, .accesses = v[i].accesses,
							  .misses = v[i].misses, .misses_sq = v[i].misses_sq };
	}
	h->nlines = k;
	for (size_t i = 0; i < k; i++) {
		struct lp_source_line *l = &h->byfile[i];
		struct lp_source_file *f = h->nfiles ? &h->files[h->nfiles - 1] : NULL;

		l->share = share(h, l->misses);
		lp_report_count_interval(l->misses, l->misses_sq, h->weight, &l->misses_lo, &l->misses_hi);
		if (!f || strcmp(f->path, l->path)) {
			f = &h->files[h->nfiles++];
			*f = (struct lp_source_file){ .path = l->path, .file = l->file, .first = i };
		}
		f->accesses += l->accesses;
		f->misses += l->misses;
		f->misses_sq += l->misses_sq;
		f->nlines++;
	}
	for (size_t i = 0; i < h->nfiles; i++) {
		struct lp_source_file *f = &h->files[i];

		f->share = share(h, f->misses);
		lp_report_count_interval(f->misses, f->misses_sq, h->weight, &f->misses_lo, &f->misses_hi);
	}
	memcpy(h->lines, h->byfile, k * sizeof(*h->lines));
	qsort(h->lines, k, sizeof(*h->lines), cmp_line_misses);
	qsort(h->files, h->nfiles, sizeof(*h->files), cmp_file_misses);
	return 0;
}

static int group_functions(struct lp_hotspots *h, struct placed *v, size_t n)
{
	int err = 0;

	qsort(v, n, sizeof(*v), cmp_place_function);
	if (!(h->functions = calloc(n + 1, sizeof(*h->functions))))
		return lp_seterr(LP_ENOMEM, "out of memory");
	for (size_t i = 0; i < n && !err; i++) {
		struct lp_source_function *f = h->nfunctions ? &h->functions[h->nfunctions - 1] : NULL;
		char *label;

		if (f && !strcmp(f->function, v[i].function) && !strcmp0(f->caller, v[i].caller)) {
			f->accesses += v[i].accesses;
			f->misses += v[i].misses;
			f->misses_sq += v[i].misses_sq;
			continue;
		}
		f = &h->functions[h->nfunctions++];
		*f = (struct lp_source_function){ .function = v[i].function, .caller = v[i].caller,
						  .accesses = v[i].accesses, .misses = v[i].misses,
						  .misses_sq = v[i].misses_sq };
		f->label = v[i].function;
		if (v[i].caller && asprintf(&label, "%s in %s", v[i].function, v[i].caller) < 0) {
			err = lp_seterr(LP_ENOMEM, "out of memory");
		} else if (v[i].caller) {
			f->label = keep(h, label, &err);
			free(label);
		}
	}
	if (err)
		return err;
	for (size_t i = 0; i < h->nfunctions; i++) {
		struct lp_source_function *f = &h->functions[i];

		f->share = share(h, f->misses);
		lp_report_count_interval(f->misses, f->misses_sq, h->weight, &f->misses_lo, &f->misses_hi);
	}
	qsort(h->functions, h->nfunctions, sizeof(*h->functions), cmp_function_misses);
	return 0;
}

/* The program's own lines: each pc's line, or where its innermost
 * function is the C++ standard library's, the line of the program's code
 * that called into it (std::map's _M_lower_bound at basic_string.h:1064
 * is count_words's wc.cpp:67); none when no pc is in such code. */
static int cmp_own_line(const void *x, const void *y)
{
	const struct placed *a = x, *b = y;
	int c = strcmp0(a->own_path ? a->own_path : a->path, b->own_path ? b->own_path : b->path);
	return c ? c : (a->own_path ? a->own_line : a->line) - (b->own_path ? b->own_line : b->line);
}

static int group_own_lines(struct lp_hotspots *h, struct placed *v, size_t n)
{
	size_t k = 0, any = 0;

	for (size_t i = 0; i < n; i++)
		any += v[i].own_path && v[i].misses > 0;
	if (!any)
		return 0;
	qsort(v, n, sizeof(*v), cmp_own_line);
	if (!(h->own = calloc(n + 1, sizeof(*h->own))))
		return lp_seterr(LP_ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++) {
		const char *path = v[i].own_path ? v[i].own_path : v[i].path;
		int line = v[i].own_path ? v[i].own_line : v[i].line;
		struct lp_source_line *l = k ? &h->own[k - 1] : NULL;
		if (!path)
			continue;
		if (!l || strcmp(l->path, path) || l->line != line) {
			l = &h->own[k++];
			*l = (struct lp_source_line){ .path = path, .file = base_name(path), .line = line };
		}
		l->accesses += v[i].accesses;
		l->misses += v[i].misses;
		l->misses_sq += v[i].misses_sq;
	}
	for (size_t i = 0; i < k; i++) {
		h->own[i].share = share(h, h->own[i].misses);
		lp_report_count_interval(h->own[i].misses, h->own[i].misses_sq, h->weight, &h->own[i].misses_lo,
					 &h->own[i].misses_hi);
	}
	qsort(h->own, k, sizeof(*h->own), cmp_line_misses);
	h->nown = k;
	return 0;
}

/* The line, file and function rows of the places v (n of them), which h
 * keeps (freed with it, on error too). */
static int group_placed(struct lp_hotspots *h, struct placed *v, size_t n)
{
	int err;

	h->placed = v;
	h->nplaced = n;
	if ((err = group_lines(h, v, n)) >= 0 && (err = group_functions(h, v, n)) >= 0)
		err = group_own_lines(h, v, n);
	return err < 0 ? err : 0;
}

int lp_hotspots_finish(struct lp_hotspots *h)
{
	struct placed *v = NULL;
	size_t n = 0;
	int err;

	if (h->byfile || h->functions)
		return lp_seterr(LP_EINVAL, "the hot spots were already grouped");
	if ((err = place_pcs(h, &v, &n)) < 0)
		return err;
	return group_placed(h, v, n);
}

int lp_hotspots_merge(struct lp_hotspots **out, const struct lp_hotspots *const *parts, size_t n)
{
	struct lp_hotspots *h;
	struct placed *v;
	size_t all = 0, k = 0;
	int err = 0;

	*out = NULL;
	for (size_t i = 0; i < n; i++) {
		if (!parts[i]->byfile)
			return lp_seterr(LP_EINVAL, "hot spots to merge must be grouped first");
		all += parts[i]->nplaced;
	}
	if ((err = lp_hotspots_new(&h, NULL)) < 0)
		return err;
	if (!(v = calloc(all + 1, sizeof(*v)))) {
		lp_hotspots_free(h);
		return lp_seterr(LP_ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < n; i++) {
		h->total_accesses += parts[i]->total_accesses;
		h->total_misses += parts[i]->total_misses;
		if (parts[i]->weight > h->weight)
			h->weight = parts[i]->weight;
		for (size_t j = 0; j < parts[i]->nplaced; j++, k++) {
			const struct placed *p = &parts[i]->placed[j];
			v[k] = (struct placed){ .path = keep(h, p->path, &err), .line = p->line,
						.own_path = keep(h, p->own_path, &err), .own_line = p->own_line,
						.function = keep(h, p->function, &err), .caller = keep(h, p->caller, &err),
						.accesses = p->accesses, .misses = p->misses,
						.misses_sq = p->misses_sq };
		}
	}
	if (err || (err = group_placed(h, v, all)) < 0) {
		if (err && !h->placed)
			free(v);
		lp_hotspots_free(h);
		return err;
	}
	*out = h;
	return 0;
}

size_t lp_hotspots_lines(const struct lp_hotspots *h, const struct lp_source_line **out)
{
	*out = h->lines;
	return h->nlines;
}

size_t lp_hotspots_files(const struct lp_hotspots *h, const struct lp_source_file **out)
{
	*out = h->files;
	return h->nfiles;
}

size_t lp_hotspots_file_lines(const struct lp_hotspots *h, size_t file, const struct lp_source_line **out)
{
	if (file >= h->nfiles) {
		*out = NULL;
		return 0;
	}
	*out = h->byfile + h->files[file].first;
	return h->files[file].nlines;
}

size_t lp_hotspots_functions(const struct lp_hotspots *h, const struct lp_source_function **out)
{
	*out = h->functions;
	return h->nfunctions;
}

size_t lp_hotspots_own_lines(const struct lp_hotspots *h, const struct lp_source_line **out)
{
	*out = h->own;
	return h->nown;
}

void lp_hotspots_totals(const struct lp_hotspots *h, double *accesses, double *misses)
{
	*accesses = h->total_accesses;
	*misses = h->total_misses;
}
