/* Reading a profile and computing its report, for the commands that
 * format one (report, annotate, diff): the same warnings and errors in
 * all of them; and several profiles, the ranks of an MPI job, with the
 * report of the whole job. */
#include "cli.h"

#include <locprof/profile.h>
#include <locprof/report.h>
#include <locprof/symbol.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* --alloc-fn NAME: the program's allocation wrappers the user names. */
enum { MAX_ALLOC_FNS = 64 };
static const char *alloc_fns[MAX_ALLOC_FNS];
static size_t nalloc_fns;

int cli_alloc_fn_option(const struct cli_command *cmd, const char *name)
{
	if (!*name)
		return cli_usage_error(cmd, "--alloc-fn needs a function's name");
	if (nalloc_fns == MAX_ALLOC_FNS)
		return cli_usage_error(cmd, "at most %d --alloc-fn", MAX_ALLOC_FNS);
	alloc_fns[nalloc_fns++] = name;
	return 0;
}

int cli_tell_alloc_fns(struct lp_symbols *s)
{
	return lp_symbols_alloc_wrappers(s, alloc_fns, nalloc_fns);
}

/* The profile's allocation stacks and the user's wrappers, for naming
 * heap blocks past the program's own allocation wrappers. */
static int tell_alloc_wrappers(struct lp_symbols *s, const struct lp_profile *p)
{
	for (size_t i = 0; i < p->n_stacks; i++)
		if (lp_symbols_alloc_stack(s, p->stacks[i].frames, p->stacks[i].n) < 0)
			return -1;
	/* the call sites of allocations without a stack (the valgrind
	 * backend's, say), for the calls on one line */
	for (size_t i = 0; i < p->n_allocs; i++)
		if (p->allocs[i].kind == LP_EV_ALLOC && !p->allocs[i].stack && p->allocs[i].pc &&
		    lp_symbols_alloc_call(s, p->allocs[i].pc) < 0)
			return -1;
	return cli_tell_alloc_fns(s);
}

/* The binaries the profile's mappings name, for pc, allocation-site and
 * global names; without them (a profile of a program whose files are gone
 * or were rebuilt) pcs stay addresses. Tried once: the warnings once. */
struct lp_symbols *cli_report_symbols(struct cli_report *l)
{
	if (l->syms_tried)
		return l->syms;
	l->syms_tried = 1;
	if (!l->p->mappings.n)
		return NULL;
	if (lp_symbols_new(&l->syms, &l->p->mappings, NULL) < 0) {
		cli_warn("pcs are not symbolised: %s", lp_errmsg());
		return NULL;
	}
	if (lp_symbols_warning(l->syms))
		cli_warn("%s", lp_symbols_warning(l->syms));
	if (tell_alloc_wrappers(l->syms, l->p) < 0)
		cli_warn("heap blocks are named without looking through the program's allocation wrappers: %s",
			 lp_errmsg());
	return l->syms;
}

int cli_report_load(struct cli_report *l, const char *path, uint64_t line, struct lp_report_params pa)
{
	int li, err;

	*l = (struct cli_report){ .status = CLI_OK, .path = path };
	err = lp_profile_read(&l->p, path);
	if (!l->p) {
		cli_error("%s", lp_errmsg());
		return CLI_ERROR;
	}
	if (err < 0) {
		cli_warn("%s", lp_errmsg());
		l->status = CLI_PARTIAL;
	}
	cli_warn_profile(l->p, path);
	li = line ? lp_profile_line_index(l->p, (uint32_t)line) : 0;
	if (li < 0 || !l->p->n_line_sizes) {
		cli_error("the profile %s has no line size %" PRIu64, path, line);
		return CLI_ERROR;
	}
	for (size_t i = 0; i < pa.ncaches; i++)
		if (pa.caches[i].line != l->p->line_sizes[li])
			cli_warn("cache %s has %" PRIu64 "-byte lines; the profile's are %u bytes", pa.caches[i].label,
				 pa.caches[i].line, l->p->line_sizes[li]);
	pa.line_index = (unsigned)li;
	pa.syms = pa.top || pa.share ? cli_report_symbols(l) : NULL;
	if (lp_report_new(&l->r, l->p, &pa) < 0) {
		cli_error("%s", lp_errmsg());
		return CLI_ERROR;
	}
	return l->status;
}

void cli_report_release(struct cli_report *l)
{
	lp_report_free(l->r);
	lp_symbols_free(l->syms);
	lp_profile_free(l->p);
	*l = (struct cli_report){ 0 };
}

/* By rank; profiles without one after those with, by path. */
static int cmp_rank(const void *a, const void *b)
{
	const struct cli_report *x = a, *y = b;
	int32_t rx = x->p->mpi_rank, ry = y->p->mpi_rank;

	if ((rx < 0) != (ry < 0))
		return rx < 0 ? 1 : -1;
	if (rx != ry)
		return rx < ry ? -1 : 1;
	return strcmp(x->path, y->path);
}

const char *cli_rank_label(const struct lp_profile *p, char *buf, size_t len)
{
	if (p->mpi_rank < 0)
		snprintf(buf, len, "no MPI rank");
	else if (p->mpi_size)
		snprintf(buf, len, "rank %" PRId32 " of %" PRIu32, p->mpi_rank, p->mpi_size);
	else
		snprintf(buf, len, "rank %" PRId32, p->mpi_rank);
	return buf;
}

int cli_profiles_distinct(const struct cli_command *cmd, char *const *paths, size_t n)
{
	struct stat *st = calloc(n ? n : 1, sizeof(*st));
	char *ok = calloc(n ? n : 1, 1);
	int ret = CLI_OK;

	if (!st || !ok) {
		free(st);
		free(ok);
		return CLI_OK; /* the load will say out of memory */
	}
	for (size_t i = 0; i < n; i++)
		ok[i] = stat(paths[i], &st[i]) == 0;
	for (size_t i = 0; i < n && ret == CLI_OK; i++)
		for (size_t j = 0; j < i && ret == CLI_OK; j++)
			if (!strcmp(paths[i], paths[j]) ||
			    (ok[i] && ok[j] && st[i].st_dev == st[j].st_dev && st[i].st_ino == st[j].st_ino))
				ret = cli_usage_error(cmd, "'%s' is given twice: its samples would be summed twice",
						      paths[i]);
	free(st);
	free(ok);
	return ret;
}

int cli_reports_load(struct cli_reports *rs, char *const *paths, size_t n, uint64_t line,
		     struct lp_report_params pa)
{
	struct lp_report **parts;
	int st;

	*rs = (struct cli_reports){ .status = CLI_OK };
	if (!(rs->v = calloc(n, sizeof(*rs->v)))) {
		cli_error("out of memory");
		return CLI_ERROR;
	}
	for (size_t i = 0; i < n; i++, rs->n++) {
		if ((st = cli_report_load(&rs->v[i], paths[i], line, pa)) == CLI_ERROR) {
			rs->n++;
			return CLI_ERROR;
		}
		if (st != CLI_OK)
			rs->status = st;
	}
	if (n == 1) {
		rs->r = rs->v[0].r;
		return rs->status;
	}
	qsort(rs->v, n, sizeof(*rs->v), cmp_rank);
	for (size_t i = 1; i < n; i++)
		if (rs->v[i].p->mpi_rank >= 0 && rs->v[i].p->mpi_rank == rs->v[i - 1].p->mpi_rank)
			cli_warn("two profiles of rank %" PRId32 ": both are summed", rs->v[i].p->mpi_rank);
	if (!(parts = malloc(n * sizeof(*parts)))) {
		cli_error("out of memory");
		return CLI_ERROR;
	}
	for (size_t i = 0; i < n; i++)
		parts[i] = rs->v[i].r;
	if (lp_report_merge(&rs->merged, parts, n, pa.top) < 0) {
		cli_error("%s", lp_errmsg());
		free(parts);
		return CLI_ERROR;
	}
	free(parts);
	rs->r = rs->merged;
	return rs->status;
}

void cli_reports_release(struct cli_reports *rs)
{
	lp_report_free(rs->merged);
	for (size_t i = 0; i < rs->n; i++)
		cli_report_release(&rs->v[i]);
	free(rs->v);
	*rs = (struct cli_reports){ 0 };
}
