/* locprof dump: print a .lpp profile. */
#include "cli.h"

#include <locprof/profile.h>

#include <inttypes.h>
#include <string.h>
#include <stdlib.h>
#include <time.h>

/* lp_sample.coh in words. */
static const char *coh_name(uint8_t coh)
{
	static const char *const names[] = { "none", "true", "false", "unused" };
	return coh < 4 ? names[coh] : "?";
}

static void dump_json_dist(uint64_t d)
{
	if (d == LP_REUSE_DANGLING)
		cli_jprintf("null");
	else
		cli_jprintf("%" PRIu64, d);
}

static const char usage[] =
	"usage: locprof dump PROFILE.lpp [--format text|json]\n"
	"\n"
	"Print a profile: its metadata, counts, windows, mappings, every\n"
	"sample (time, pc, address, kind, thread, line size, reuse distance or\n"
	"'dangling', the pc of the reusing access and, last, the address it\n"
	"touched) and every allocation event (alloc or free, time or '-' when\n"
	"unknown, thread,\n"
	"address, size, call site; an allocation's callers, when recorded, on\n"
	"the next line). A damaged or truncated profile is printed as far as it\n"
	"is readable, with a warning (status 3).\n"
	"\n"
	"  -F, --format FMT   text (default) or json\n"
	"  -h, --help         this help\n";

static int run(int argc, char **argv);

const struct cli_command cmd_dump = {
	.name = "dump",
	.summary = "print the contents of a profile",
	.usage = usage,
	.run = run,
};

static void dump_json(const struct lp_profile *p)
{
	cli_jprintf("{\"command\":");
	cli_json_string(p->command);
	cli_jprintf(",\"host\":");
	cli_json_string(p->host);
	cli_jprintf(",\"source\":");
	cli_json_string(p->source);
	if (p->mpi_rank >= 0)
		cli_jprintf(",\"mpi_rank\":%" PRId32 ",\"mpi_size\":%" PRIu32, p->mpi_rank, p->mpi_size);
	cli_jprintf(",\"date\":%" PRId64 ",\"rate\":%.17g,\"target_samples\":%" PRIu64 ",\"seed\":%" PRIu64
	       ",\"window\":%" PRIu64 ",\"references\":%" PRIu64 ",\n \"line_sizes\":[",
	       p->date, p->rate, p->target_samples, p->seed, p->window, p->references);
	for (unsigned i = 0; i < p->n_line_sizes; i++)
		cli_jprintf("%s{\"bytes\":%u,\"accesses\":%" PRIu64 ",\"windows\":%zu}", i ? "," : "",
		       p->line_sizes[i], p->accesses[i], p->windows[i].n);
	cli_jprintf("],\n");
	if (p->region) {
		cli_jprintf(" \"region\":{\"what\":");
		cli_json_string(p->region);
		cli_jprintf(",\"entries\":%" PRIu64 ",\"skipped\":%" PRIu64 "},\n", p->region_entries,
		       p->region_skipped);
	}
	cli_jprintf(" \"thread_refs\":[");
	for (uint32_t t = 0; t < p->n_threads; t++)
		cli_jprintf("%s%" PRIu64, t ? "," : "", p->thread_refs[t]);
	cli_jprintf("],\n \"mappings\":[");
	for (size_t i = 0; i < p->mappings.n; i++) {
		const struct lp_mapping *m = &p->mappings.v[i];
		cli_jprintf("%s{\"start\":%" PRIu64 ",\"end\":%" PRIu64 ",\"offset\":%" PRIu64 ",\"path\":",
		       i ? "," : "", m->start, m->end, m->file_offset);
		cli_json_string(m->path);
		cli_jprintf("}");
	}
	cli_jprintf("],\n \"samples\":[");
	for (size_t i = 0; i < p->n_samples; i++) {
		const struct lp_sample *s = &p->samples[i];
		cli_jprintf("%s\n  {\"time\":%" PRIu64 ",\"pc\":%" PRIu64 ",\"addr\":%" PRIu64
		       ",\"kind\":\"%c\",\"tid\":%u,\"line\":%u,\"reuse\":",
		       i ? "," : "", s->time, s->pc, s->addr, s->kind ? 'W' : 'R', s->tid,
		       p->line_sizes[s->line_idx]);
		if (s->reuse == LP_REUSE_DANGLING)
			cli_jprintf("null");
		else
			cli_jprintf("%" PRIu64, s->reuse);
		cli_jprintf(",\"reuse_pc\":%" PRIu64 ",\"reuse_addr\":%" PRIu64, s->reuse_pc, s->reuse_addr);
		if (p->shared) {
			cli_jprintf(",\"stime\":%" PRIu64 ",\"sreuse\":", s->stime);
			dump_json_dist(s->sreuse);
			cli_jprintf(",\"sown\":");
			dump_json_dist(s->sown);
			cli_jprintf(",\"stid\":%u,\"coh\":\"%s\",\"wtid\":%u,\"wpc\":%" PRIu64, s->stid,
			       coh_name(s->coh), s->wtid, s->wpc);
		}
		cli_jprintf("}");
	}
	cli_jprintf("\n ],\n \"alloc_flags\":%u,", p->alloc_flags);
	if (p->alloc_flags & LP_ALLOCS_TOTALS)
		cli_jprintf("\"alloc_totals\":{\"allocs\":%" PRIu64 ",\"frees\":%" PRIu64 ",\"bytes\":%" PRIu64 "},",
		       p->alloc_total, p->free_total, p->alloc_bytes);
	cli_jprintf("\n \"allocations\":[");
	for (size_t i = 0; i < p->n_allocs; i++) {
		const struct lp_alloc_event *e = &p->allocs[i];
		const struct lp_alloc_stack *st;
		cli_jprintf("%s\n  {\"event\":\"%s\",\"time\":", i ? "," : "",
		       e->kind == LP_EV_ALLOC ? "alloc" : "free");
		if (e->time == LP_TIME_UNKNOWN)
			cli_jprintf("null");
		else
			cli_jprintf("%" PRIu64, e->time);
		cli_jprintf(",\"tid\":%u,\"addr\":%" PRIu64 ",\"size\":%" PRIu64 ",\"pc\":%" PRIu64, e->tid,
		       e->addr, e->size, e->pc);
		if ((st = lp_profile_event_stack(p, e))) {
			cli_jprintf(",\"stack\":[");
			for (uint32_t k = 0; k < st->n; k++)
				cli_jprintf("%s%" PRIu64, k ? "," : "", st->frames[k]);
			cli_jprintf("]");
		}
		cli_jprintf("}");
	}
	cli_jprintf("\n]}\n");
}

static void dump_text(const struct lp_profile *p)
{
	char date[64] = "";
	time_t t = (time_t)p->date;
	struct tm tm;

	if (gmtime_r(&t, &tm))
		strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", &tm);
	printf("command: %s\nhost: %s\ndate: %s\nsource: %s\n", p->command, p->host, date, p->source);
	if (p->mpi_rank >= 0 && p->mpi_size)
		printf("MPI rank: %" PRId32 " of %" PRIu32 "\n", p->mpi_rank, p->mpi_size);
	else if (p->mpi_rank >= 0)
		printf("MPI rank: %" PRId32 " (world size unknown)\n", p->mpi_rank);
	printf("rate: %.6g  target samples: %" PRIu64 "  seed: %" PRIu64 "  window: %" PRIu64 "\n",
	       p->rate, p->target_samples, p->seed, p->window);
	printf("references: %" PRIu64 "  threads: %u\n", p->references, p->n_threads);
	if (p->region)
		printf("region: %s; entered %" PRIu64 " time%s, %" PRIu64 " references outside it left out\n",
		       p->region, p->region_entries, p->region_entries == 1 ? "" : "s", p->region_skipped);
	for (uint32_t i = 0; i < p->n_threads; i++)
		printf("  thread %u: %" PRIu64 " references\n", i, p->thread_refs[i]);
	for (unsigned i = 0; i < p->n_line_sizes; i++) {
		size_t first, n, dangling = 0;
		lp_profile_line_samples(p, i, &first, &n);
		for (size_t j = first; j < first + n; j++)
			dangling += p->samples[j].reuse == LP_REUSE_DANGLING;
		printf("line %u: %" PRIu64 " line accesses, %zu samples (%zu dangling), %zu windows of %" PRIu64
		       "\n",
		       p->line_sizes[i], p->accesses[i], n, dangling, p->windows[i].n, p->windows[i].length);
	}
	for (size_t i = 0; i < p->mappings.n; i++)
		printf("mapping %#" PRIx64 "-%#" PRIx64 " +%#" PRIx64 " %s\n", p->mappings.v[i].start,
		       p->mappings.v[i].end, p->mappings.v[i].file_offset, p->mappings.v[i].path);
	if (p->n_allocs) {
		size_t frees = 0;
		for (size_t i = 0; i < p->n_allocs; i++)
			frees += p->allocs[i].kind == LP_EV_FREE;
		printf("allocation events: %zu (%zu allocs, %zu frees)\n", p->n_allocs, p->n_allocs - frees,
		       frees);
	}
	if (p->alloc_flags & LP_ALLOCS_TOUCHED)
		printf("allocation events of touched blocks only\n");
	if (p->alloc_flags & LP_ALLOCS_TOTALS)
		printf("allocations in the run: %" PRIu64 " (%" PRIu64 " frees, %" PRIu64 " bytes)\n",
		       p->alloc_total, p->free_total, p->alloc_bytes);
	if (p->n_intervals) {
		/* record --phases: the intervals' phases, counted by id */
		uint32_t nph = 0;
		uint8_t *seen = calloc(LP_PHASE_MAX, 1);
		for (size_t i = 0; seen && i < p->n_intervals; i++)
			if (!seen[p->intervals[i].phase]++)
				nph++;
		free(seen);
		printf("phase intervals: %zu of %" PRIu64 " references, %u phases\n", p->n_intervals,
		       p->phase_interval, nph);
	}
	printf("# line time pc addr kind tid reuse reuse_pc%s reuse_addr\n",
	       p->shared ? " stime sreuse stid coh wtid wpc" : "");
	for (size_t i = 0; i < p->n_samples; i++) {
		const struct lp_sample *s = &p->samples[i];
		printf("%u %" PRIu64 " %#" PRIx64 " %#" PRIx64 " %c %u ", p->line_sizes[s->line_idx], s->time,
		       s->pc, s->addr, s->kind ? 'W' : 'R', s->tid);
		if (s->reuse == LP_REUSE_DANGLING)
			printf("dangling -");
		else
			printf("%" PRIu64 " %#" PRIx64, s->reuse, s->reuse_pc);
		if (p->shared) {
			printf(" %" PRIu64 " ", s->stime);
			if (s->sreuse == LP_REUSE_DANGLING)
				printf("dangling");
			else
				printf("%" PRIu64, s->sreuse);
			printf(" %u %s %u %#" PRIx64, s->stid, coh_name(s->coh), s->wtid, s->wpc);
		}
		if (s->reuse_addr)
			printf(" %#" PRIx64 "\n", s->reuse_addr);
		else
			printf(" -\n");
	}
	if (!p->n_allocs)
		return;
	printf("# event time tid addr size pc (then the callers of pc, when recorded)\n");
	for (size_t i = 0; i < p->n_allocs; i++) {
		const struct lp_alloc_event *e = &p->allocs[i];
		const struct lp_alloc_stack *st;
		printf("%s ", e->kind == LP_EV_ALLOC ? "alloc" : "free");
		if (e->time == LP_TIME_UNKNOWN)
			printf("-");
		else
			printf("%" PRIu64, e->time);
		printf(" %u %#" PRIx64 " %" PRIu64 " %#" PRIx64 "\n", e->tid, e->addr, e->size, e->pc);
		if ((st = lp_profile_event_stack(p, e))) {
			printf("  callers");
			for (uint32_t k = 1; k < st->n; k++)
				printf(" %#" PRIx64, st->frames[k]);
			printf("\n");
		}
	}
}

static int run(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "format", required_argument, NULL, 'F' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *format = "text";
	struct lp_profile *p;
	int c, err, status = CLI_OK;

	while ((c = cli_getopt(argc, argv, "F:h", opts)) != -1) {
		switch (c) {
		case 'F': format = optarg; break;
		case 'h': return cli_print_usage(&cmd_dump);
		default: return cli_usage_error(&cmd_dump, "%s", cli_getopt_error());
		}
	}
	if (argc - optind != 1)
		return cli_usage_error(&cmd_dump, "dump takes one profile");
	if (strcmp(format, "text") && strcmp(format, "json"))
		return cli_usage_error(&cmd_dump, "unknown format '%s' (text, json)", format);
	err = lp_profile_read(&p, argv[optind]);
	if (!p) {
		cli_error("%s", lp_errmsg());
		return CLI_ERROR;
	}
	if (err < 0) {
		cli_warn("%s", lp_errmsg());
		status = CLI_PARTIAL;
	}
	cli_warn_profile(p, argv[optind]);
	if (!strcmp(format, "json"))
		dump_json(p);
	else
		dump_text(p);
	lp_profile_free(p);
	return status;
}
