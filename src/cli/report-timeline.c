/* report --timeline: the time view (lp_timeline, computed by the library)
 * as text, CSV and JSON. Text shows runs of intervals of one phase on one
 * line; CSV and JSON give every interval (or window). */
#include "report-timeline.h"

#include <locprof/sim.h>

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

enum { MAX_DEFAULT_CACHES = 8 };

int report_timeline_build(struct lp_timeline **out, struct cli_report *l, const struct lp_report_cache *caches,
			  size_t ncaches, unsigned policies, int cold, int fill, uint64_t window, size_t top)
{
	struct lp_report_cache host[MAX_DEFAULT_CACHES];
	struct lp_host_cache hc[MAX_DEFAULT_CACHES];
	uint32_t line = (uint32_t)lp_report_info(l->r)->line;
	size_t nh = 0;

	if (!ncaches) {
		/* the host's data and unified caches, as --cache host */
		if (lp_host_caches(NULL, hc, MAX_DEFAULT_CACHES, &nh) < 0)
			nh = 0;
		for (size_t i = 0; i < nh; i++) {
			if (hc[i].type[0] == 'I')
				continue;
			struct lp_report_cache *c = &host[ncaches++];
			memset(c, 0, sizeof(*c));
			snprintf(c->label, sizeof(c->label), "%s", hc[i].name);
			c->size = hc[i].size;
			c->ways = hc[i].ways;
			c->line = line;
		}
		if (!ncaches) {
			memset(host, 0, sizeof(host[0]));
			snprintf(host[0].label, sizeof(host[0].label), "32K:8:%u", line);
			host[0].size = 32768;
			host[0].ways = 8;
			host[0].line = line;
			ncaches = 1;
		}
		caches = host;
	}
	/* each phase's top functions are named in every form of the time
	 * view (text, CSV, JSON, SVG, HTML) whatever --top is; a constant-rate
	 * profile's view names none, and needs no symbols */
	struct lp_timeline_params pa = {
		.line_index = (unsigned)lp_profile_line_index(l->p, line),
		.caches = caches, .ncaches = ncaches,
		.policy = policies & LP_REPORT_LRU ? LP_REPORT_LRU : LP_REPORT_RANDOM,
		.cold = cold, .fill = fill, .window = window, .top = top ? top : 3,
		.syms = l->p->n_intervals ? cli_report_symbols(l) : NULL,
	};
	if (lp_timeline_new(out, l->p, &pa) < 0) {
		cli_error("timeline: %s", lp_errmsg());
		return CLI_ERROR;
	}
	return CLI_OK;
}

static const char *policy_words(const struct lp_timeline *t)
{
	const struct lp_timeline_phase *ph;

	if (!lp_timeline_phases(t, &ph))
		return "StatCache's windows (random replacement)";
	return lp_timeline_policy(t) == LP_REPORT_LRU ? "each phase's model (LRU, set-associative by the placement model)"
						       : "each phase's model (random replacement, StatCache)";
}

static void text_phases(const struct lp_timeline *t)
{
	const struct lp_timeline_phase *ph;
	const struct lp_report_cache *ca;
	size_t nph = lp_timeline_phases(t, &ph), nc = lp_timeline_caches(t, &ca);

	printf("phase    share  intervals  samples");
	for (size_t c = 0; c < nc; c++)
		printf("  %12.12s", ca[c].label);
	printf("  top functions (misses in %s)\n", ca[0].label);
	for (size_t k = 0; k < nph; k++) {
		printf("%5u  %6.1f%%  %9zu  %7zu", ph[k].info.id, ph[k].info.weight * 100, ph[k].info.intervals,
		       ph[k].info.samples);
		for (size_t c = 0; c < nc; c++)
			printf("  %11.2f%%", ph[k].ratio[c] * 100);
		printf("  ");
		for (size_t j = 0; j < ph[k].ntop; j++)
			printf("%s%s %.0f%%", j ? ", " : "", ph[k].top[j].label, ph[k].top[j].share * 100);
		printf("%s\n", ph[k].ntop ? "" : "-");
	}
	printf("%-34s", "whole run");
	for (size_t c = 0; c < nc; c++)
		printf("  %11.2f%%", lp_timeline_run(t)[c] * 100);
	printf("\n");
}

void report_timeline_text(const struct lp_timeline *t)
{
	const struct lp_timeline_row *r;
	const struct lp_timeline_phase *ph;
	const struct lp_report_cache *ca;
	size_t nr = lp_timeline_rows(t, &r), nph = lp_timeline_phases(t, &ph), nc = lp_timeline_caches(t, &ca);

	printf("\ntime view: miss ratio per line access from %s\n", policy_words(t));
	if (nph) {
		text_phases(t);
		if (lp_timeline_unphased(t))
			printf("(%zu samples of threads without intervals are in no phase)\n", lp_timeline_unphased(t));
	}
	printf("\nthread  %14s  %14s  phase  intervals", "start", "line accesses");
	for (size_t c = 0; c < nc; c++)
		printf("  %12.12s", ca[c].label);
	printf("\n");
	for (size_t i = 0; i < nr;) {
		size_t j = i + 1;
		uint64_t len = r[i].accesses;
		/* a run of one phase's intervals (windows: one each) */
		while (r[i].phase != LP_TIMELINE_NO_PHASE && j < nr && r[j].tid == r[i].tid && r[j].phase == r[i].phase)
			len += r[j++].accesses;
		printf("%6" PRIu32 "  %14" PRIu64 "  %14" PRIu64 "  ", r[i].tid, r[i].start, len);
		if (r[i].phase == LP_TIMELINE_NO_PHASE)
			printf("%5s", "-");
		else
			printf("%5u", ph[r[i].phase].info.id);
		printf("  %9zu", j - i);
		for (size_t c = 0; c < nc; c++)
			printf("  %11.2f%%", r[i].ratio[c] * 100);
		printf("\n");
		i = j;
	}
}

void report_timeline_csv(const struct lp_timeline *t)
{
	const struct lp_timeline_row *r;
	const struct lp_timeline_phase *ph;
	const struct lp_report_cache *ca;
	size_t nr = lp_timeline_rows(t, &r), nph = lp_timeline_phases(t, &ph), nc = lp_timeline_caches(t, &ca);
	char b[512];

	printf("\n# time view: miss ratio per line access from %s\n", policy_words(t));
	printf("timeline_thread,start,line_accesses,phase,rate,cache,miss_ratio\n");
	for (size_t i = 0; i < nr; i++)
		for (size_t c = 0; c < nc; c++) {
			printf("%" PRIu32 ",%" PRIu64 ",%" PRIu64 ",", r[i].tid, r[i].start, r[i].accesses);
			if (r[i].phase == LP_TIMELINE_NO_PHASE)
				printf(",");
			else
				printf("%u,", ph[r[i].phase].info.id);
			printf("%g,%s,%.6f\n", r[i].rate, cli_csv_field(ca[c].label, b, sizeof(b)), r[i].ratio[c]);
		}
	if (!nph)
		return;
	printf("\nphase,share,line_accesses,intervals,samples,cache,miss_ratio\n");
	for (size_t k = 0; k < nph; k++)
		for (size_t c = 0; c < nc; c++)
			printf("%u,%.6f,%" PRIu64 ",%zu,%zu,%s,%.6f\n", ph[k].info.id, ph[k].info.weight, ph[k].info.accesses,
			       ph[k].info.intervals, ph[k].info.samples, cli_csv_field(ca[c].label, b, sizeof(b)),
			       ph[k].ratio[c]);
	printf("\nphase,function,misses,share\n");
	for (size_t k = 0; k < nph; k++)
		for (size_t j = 0; j < ph[k].ntop; j++)
			printf("%u,%s,%.1f,%.6f\n", ph[k].info.id, cli_csv_field(ph[k].top[j].label, b, sizeof(b)),
			       ph[k].top[j].misses, ph[k].top[j].share);
}

static void json_ratio(double v)
{
	if (isfinite(v))
		cli_jprintf("%.6f", v);
	else
		cli_jprintf("null");
}

void report_timeline_json(const struct lp_timeline *t)
{
	const struct lp_timeline_row *r;
	const struct lp_timeline_phase *ph;
	const struct lp_report_cache *ca;
	size_t nr = lp_timeline_rows(t, &r), nph = lp_timeline_phases(t, &ph), nc = lp_timeline_caches(t, &ca);

	cli_jprintf(",\"timeline\":{\"caches\":[");
	for (size_t c = 0; c < nc; c++) {
		cli_jprintf("%s", c ? "," : "");
		cli_json_string(ca[c].label);
	}
	cli_jprintf("],\"run\":[");
	for (size_t c = 0; c < nc; c++) {
		cli_jprintf("%s", c ? "," : "");
		json_ratio(lp_timeline_run(t)[c]);
	}
	cli_jprintf("],\"phases\":[");
	for (size_t k = 0; k < nph; k++) {
		cli_jprintf("%s{\"phase\":%u,\"share\":%.6f,\"line_accesses\":%" PRIu64 ",\"intervals\":%zu,\"samples\":%zu,"
		       "\"miss_ratio\":[",
		       k ? "," : "", ph[k].info.id, ph[k].info.weight, ph[k].info.accesses, ph[k].info.intervals,
		       ph[k].info.samples);
		for (size_t c = 0; c < nc; c++) {
			cli_jprintf("%s", c ? "," : "");
			json_ratio(ph[k].ratio[c]);
		}
		cli_jprintf("],\"functions\":[");
		for (size_t j = 0; j < ph[k].ntop; j++) {
			cli_jprintf("%s{\"function\":", j ? "," : "");
			cli_json_string(ph[k].top[j].label);
			cli_jprintf(",\"misses\":%.1f,\"share\":%.6f}", ph[k].top[j].misses, ph[k].top[j].share);
		}
		cli_jprintf("]}");
	}
	cli_jprintf("],\"rows\":[");
	for (size_t i = 0; i < nr; i++) {
		cli_jprintf("%s{\"thread\":%" PRIu32 ",\"start\":%" PRIu64 ",\"line_accesses\":%" PRIu64 ",\"phase\":", i ? "," : "",
		       r[i].tid, r[i].start, r[i].accesses);
		if (r[i].phase == LP_TIMELINE_NO_PHASE)
			cli_jprintf("null");
		else
			cli_jprintf("%u", ph[r[i].phase].info.id);
		cli_jprintf(",\"rate\":%g,\"miss_ratio\":[", r[i].rate);
		for (size_t c = 0; c < nc; c++) {
			cli_jprintf("%s", c ? "," : "");
			json_ratio(r[i].ratio[c]);
		}
		cli_jprintf("]}");
	}
	cli_jprintf("]}");
}
