/* report --shared: the threads-and-caches tables (lp_report_placements(),
 * lp_report_thread_curves(), lp_report_sharing()) in text, CSV and JSON
 * (docs/commands/report.md, docs/formats.md "Report JSON"). */
#include "cli.h"

#include <locprof/report.h>

#include <inttypes.h>
#include <math.h>
#include <stdio.h>

static const char *const sharing_title[2] = { "true sharing", "false sharing" };

/* The cliff lines of one table row's intervals. */
static void text_row_cliffs(const char *what, uint64_t size, const struct lp_interval *lru,
			    const struct lp_interval *random)
{
	char b[32], where[96];

	cli_format_size(size, b, sizeof(b));
	snprintf(where, sizeof(where), "%s %s", what, b);
	if (lru->cliff)
		cli_text_cliff(where, "lru", lru, 0);
	if (random->cliff)
		cli_text_cliff(where, "random", random, 0);
}

/* The rows of one sharing table (false_sharing f), the top ones by misses
 * (lp_report_sharing() ranks them; top 0: all), the rest summed in a
 * line. --shared asked for these tables, so --top 0 does not hide them. */
static void text_sharing(const struct lp_report_sharing *sh, size_t ns, int f, uint64_t top)
{
	size_t shown = 0, rest = 0;
	double rest_misses = 0;

	printf("\n%s: coherence misses (reuses invalidated by another thread's write) by data object\n"
	       "and pc; line accesses of the whole run, in a cache that would have kept the line until\n"
	       "its reuse (a smaller one misses some of them anyway: the coh columns give each size's):\n",
	       sharing_title[f]);
	printf("%12s %8s %10s %10s  %-24s %-18s %-18s %s\n", "misses", "share", "threads", "writers", "object",
	       "pc that misses", "pc of the write", "functions (miss; write)");
	for (size_t i = 0; i < ns; i++) {
		char pb[32], wb[32];
		if (sh[i].false_sharing != f)
			continue;
		if (top && shown == top) {
			rest++;
			rest_misses += sh[i].misses;
			continue;
		}
		shown++;
		snprintf(pb, sizeof(pb), "%#" PRIx64, sh[i].pc);
		snprintf(wb, sizeof(wb), "%#" PRIx64, sh[i].wpc);
		printf("%12.0f %7.2f%% %10s %10s  %-24s %-18s %-18s %s; %s\n", sh[i].misses, 100 * sh[i].share,
		       sh[i].threads, sh[i].writers, sh[i].object, pb, wb, sh[i].pc_name, sh[i].wpc_name);
	}
	if (rest)
		printf("%12.0f %8s %10s %10s  (%zu rows more: --top %zu shows them; --format csv lists all)\n",
		       rest_misses, "", "", "", rest, (size_t)top + rest);
}

void cli_text_share(const struct lp_report *r, int intervals, uint64_t top)
{
	const struct lp_report_info *in = lp_report_info(r);
	const struct lp_report_placement *pl;
	const struct lp_report_thread_curve *tc;
	const struct lp_report_sharing *sh;
	size_t np = lp_report_placements(r, &pl), nt = lp_report_thread_curves(r, &tc), ns = lp_report_sharing(r, &sh);
	int w = intervals ? 20 : 12;
	char b[32];

	if (!np) {
		/* lp_report_merge() sums the ranks' rows only where they line up */
		printf("\nthreads and caches: not summed: the profiles' placements differ (their numbers of threads); "
		       "--per-rank gives each profile's\n");
		return;
	}
	printf("\nthreads and caches: %" PRIu32 " threads%s; misses per line access of the whole process,\n"
	       "coherence misses (coh) included in lru and random:\n",
	       in->threads, in->shared_time ? "" : " (no shared time in this profile: every cache is the private view)");
	if (!isnan(in->together) && in->together < LP_SHARE_BURSTS)
		printf("the threads ran in bursts (together %.2f; 1: interleaved finely, 1/%" PRIu32 ": one at a time), as "
		       "more threads than free cores do: the shared and two-cache models assume finely interleaved threads "
		       "and are off where a reuse spans other threads' bursts, and another run, scheduled otherwise, gives "
		       "other shared and two-cache ratios (docs/models.md)\n",
		       in->together, in->threads);
	printf("%-10s %6s %8s %*s %9s %*s %9s\n", "placement", "caches", "size", w, "lru", "lru coh", w, "random",
	       "rand coh");
	for (size_t i = 0; i < np; i++) {
		cli_format_size(pl[i].size, b, sizeof(b));
		printf("%-10s %6" PRIu32 " %8s", pl[i].placement, pl[i].caches, b);
		cli_text_ratio(pl[i].lru, intervals ? &pl[i].lru_iv : NULL);
		printf(" %9.4f", pl[i].lru_coh);
		cli_text_ratio(pl[i].random, intervals ? &pl[i].random_iv : NULL);
		printf(" %9.4f\n", pl[i].random_coh);
	}
	printf("\nper thread, a private cache each (misses per line access of the thread):\n");
	printf("%8s %8s %8s %*s %9s %*s\n", "thread", "share", "size", w, "lru", "lru coh", w, "random");
	for (size_t i = 0; i < nt; i++) {
		cli_format_size(tc[i].size, b, sizeof(b));
		printf("%8" PRIu32 " %7.1f%% %8s", tc[i].tid, 100 * tc[i].share, b);
		cli_text_ratio(tc[i].lru, intervals ? &tc[i].lru_iv : NULL);
		printf(" %9.4f", tc[i].lru_coh);
		cli_text_ratio(tc[i].random, intervals ? &tc[i].random_iv : NULL);
		printf("\n");
	}
	if (intervals && (np || nt))
		printf("(\u00b1: the 95%% interval of each ratio, what another sampling seed could give, and at least "
		       "the models' resolution, %.4f; docs/models.md)\n",
		       LP_INTERVAL_MODEL);
	for (size_t i = 0; intervals && i < np; i++)
		text_row_cliffs(pl[i].placement, pl[i].size, &pl[i].lru_iv, &pl[i].random_iv);
	for (size_t i = 0; intervals && i < nt; i++) {
		char what[32];
		snprintf(what, sizeof(what), "thread %" PRIu32, tc[i].tid);
		text_row_cliffs(what, tc[i].size, &tc[i].lru_iv, &tc[i].random_iv);
	}
	for (int f = 1; f >= 0; f--)
		text_sharing(sh, ns, f, top);
}

void cli_csv_share(const struct lp_report *r)
{
	const struct lp_report_placement *pl;
	const struct lp_report_thread_curve *tc;
	const struct lp_report_sharing *sh;
	size_t np = lp_report_placements(r, &pl), nt = lp_report_thread_curves(r, &tc), ns = lp_report_sharing(r, &sh);
	char b1[512], b2[512], b3[512];

	printf("\n# threads and caches: misses per line access of the whole process\n");
	if (!isnan(lp_report_info(r)->together))
		printf("# threads ran together: %.4f (1: interleaved finely; below %.2f: in bursts)\n",
		       lp_report_info(r)->together, LP_SHARE_BURSTS);
	printf("placement,caches,size,lru_miss_ratio,lru_coherence,random_miss_ratio,random_coherence,"
	       "lru_miss_ratio_lo,lru_miss_ratio_hi,random_miss_ratio_lo,random_miss_ratio_hi,lru_cliff,random_cliff\n");
	for (size_t i = 0; i < np; i++)
		printf("%s,%" PRIu32 ",%" PRIu64 ",%.6f,%.6f,%.6f,%.6f,%.6f,%.6f,%.6f,%.6f,%d,%d\n", pl[i].placement,
		       pl[i].caches, pl[i].size, pl[i].lru, pl[i].lru_coh, pl[i].random, pl[i].random_coh,
		       pl[i].lru_iv.lo, pl[i].lru_iv.hi, pl[i].random_iv.lo, pl[i].random_iv.hi, pl[i].lru_iv.cliff,
		       pl[i].random_iv.cliff);
	printf("\n# per thread, a private cache each: misses per line access of the thread\n");
	printf("thread,share,size,lru_miss_ratio,lru_coherence,random_miss_ratio,"
	       "lru_miss_ratio_lo,lru_miss_ratio_hi,random_miss_ratio_lo,random_miss_ratio_hi,lru_cliff,random_cliff\n");
	for (size_t i = 0; i < nt; i++)
		printf("%" PRIu32 ",%.6f,%" PRIu64 ",%.6f,%.6f,%.6f,%.6f,%.6f,%.6f,%.6f,%d,%d\n", tc[i].tid, tc[i].share,
		       tc[i].size, tc[i].lru, tc[i].lru_coh, tc[i].random, tc[i].lru_iv.lo, tc[i].lru_iv.hi,
		       tc[i].random_iv.lo, tc[i].random_iv.hi, tc[i].lru_iv.cliff, tc[i].random_iv.cliff);
	printf("\n# coherence misses (true and false sharing), line accesses of the whole run, of a cache that "
	       "would have kept the line until its reuse\n");
	printf("sharing,object,pc,function,write_pc,write_function,threads,writers,misses,share\n");
	for (size_t i = 0; i < ns; i++)
		printf("%s,%s,%#" PRIx64 ",%s,%#" PRIx64 ",%s,\"%s\",\"%s\",%.1f,%.6f\n",
		       sh[i].false_sharing ? "false" : "true", cli_csv_field(sh[i].object, b1, sizeof(b1)), sh[i].pc,
		       cli_csv_field(sh[i].pc_name, b2, sizeof(b2)), sh[i].wpc,
		       cli_csv_field(sh[i].wpc_name, b3, sizeof(b3)), sh[i].threads, sh[i].writers, sh[i].misses,
		       sh[i].share);
}

/* ,"share":{...}: threads, placements, per-thread curves, sharing. */
/* ,"lru_interval":{...},"random_interval":{...} of a row (acc: the line
 * accesses its ratios are per) */
static void json_row_intervals(const struct lp_interval *lru, const struct lp_interval *random, double acc)
{
	cli_jprintf(",\"lru_interval\":{");
	cli_json_interval(lru, acc);
	cli_jprintf("},\"random_interval\":{");
	cli_json_interval(random, acc);
	cli_jprintf("}");
}

void cli_json_share(const struct lp_report *r, int intervals)
{
	const struct lp_report_info *in = lp_report_info(r);
	const struct lp_report_placement *pl;
	const struct lp_report_thread_curve *tc;
	const struct lp_report_sharing *sh;
	size_t np = lp_report_placements(r, &pl), nt = lp_report_thread_curves(r, &tc), ns = lp_report_sharing(r, &sh);

	cli_jprintf(",\"share\":{\"threads\":%" PRIu32 ",\"shared_time\":%s,", in->threads,
	       in->shared_time ? "true" : "false");
	if (!isnan(in->together))
		cli_jprintf("\"together\":%.6f,", in->together);
	cli_jprintf("\"placements\":[");
	for (size_t i = 0; i < np; i++) {
		cli_jprintf("%s{\"placement\":\"%s\",\"caches\":%" PRIu32 ",\"size\":%" PRIu64
		       ",\"lru\":%.6f,\"lru_coherence\":%.6f,\"random\":%.6f,\"random_coherence\":%.6f",
		       i ? "," : "", pl[i].placement, pl[i].caches, pl[i].size, pl[i].lru, pl[i].lru_coh, pl[i].random,
		       pl[i].random_coh);
		if (intervals)
			json_row_intervals(&pl[i].lru_iv, &pl[i].random_iv, (double)in->accesses);
		cli_jprintf("}");
	}
	cli_jprintf("],\"per_thread\":[");
	for (size_t i = 0; i < nt; i++) {
		cli_jprintf("%s{\"thread\":%" PRIu32 ",\"share\":%.6f,\"size\":%" PRIu64
		       ",\"lru\":%.6f,\"lru_coherence\":%.6f,\"random\":%.6f",
		       i ? "," : "", tc[i].tid, tc[i].share, tc[i].size, tc[i].lru, tc[i].lru_coh, tc[i].random);
		if (intervals)
			json_row_intervals(&tc[i].lru_iv, &tc[i].random_iv, (double)in->accesses * tc[i].share);
		cli_jprintf("}");
	}
	cli_jprintf("],\"sharing\":[");
	for (size_t i = 0; i < ns; i++) {
		cli_jprintf("%s{\"sharing\":\"%s\",\"object\":", i ? "," : "", sh[i].false_sharing ? "false" : "true");
		cli_json_string(sh[i].object);
		cli_jprintf(",\"pc\":%" PRIu64 ",\"function\":", sh[i].pc);
		cli_json_string(sh[i].pc_name);
		cli_jprintf(",\"write_pc\":%" PRIu64 ",\"write_function\":", sh[i].wpc);
		cli_json_string(sh[i].wpc_name);
		cli_jprintf(",\"threads\":");
		cli_json_string(sh[i].threads);
		cli_jprintf(",\"writers\":");
		cli_json_string(sh[i].writers);
		cli_jprintf(",\"misses\":%.1f,\"share\":%.6f}", sh[i].misses, sh[i].share);
	}
	cli_jprintf("]}");
}
