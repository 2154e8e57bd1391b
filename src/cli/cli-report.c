/* Reading a profile and computing its report, for the commands that
 * format one (report, annotate, diff): the same warnings and errors in
 * all of them. */
#include "cli.h"

#include <locprof/profile.h>
#include <locprof/report.h>
#include <locprof/symbol.h>

#include <inttypes.h>

/* The binaries the profile's mappings name, for pc, allocation-site and
 * global names; without them (a profile of a program whose files are gone
 * or were rebuilt) pcs stay addresses. */
static struct lp_symbols *report_symbols(const struct lp_profile *p)
{
	struct lp_symbols *syms = NULL;

	if (!p->mappings.n)
		return NULL;
	if (lp_symbols_new(&syms, &p->mappings, NULL) < 0) {
		cli_warn("pcs are not symbolised: %s", lp_errmsg());
		return NULL;
	}
	if (lp_symbols_warning(syms))
		cli_warn("%s", lp_symbols_warning(syms));
	return syms;
}

int cli_report_load(struct cli_report *l, const char *path, uint64_t line, struct lp_report_params pa)
{
	int li, err;

	*l = (struct cli_report){ .status = CLI_OK };
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
	if (pa.top || pa.share)
		l->syms = report_symbols(l->p);
	pa.line_index = (unsigned)li;
	pa.syms = l->syms;
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
