/* report --shared: the threads-and-caches tables (lp_report_placements(),
 * lp_report_thread_curves(), lp_report_sharing()) in text, CSV and JSON
 * (docs/commands/report.md, docs/formats.md "Report JSON"). */
#include "cli.h"

#include <locprof/report.h>

#include <inttypes.h>
#include <stdio.h>

static const char *const sharing_title[2] = { "true sharing", "false sharing" };

void cli_text_share(const struct lp_report *r)
{
	const struct lp_report_info *in = lp_report_info(r);
	const struct lp_report_placement *pl;
	const struct lp_report_thread_curve *tc;
	const struct lp_report_sharing *sh;
	size_t np = lp_report_placements(r, &pl), nt = lp_report_thread_curves(r, &tc), ns = lp_report_sharing(r, &sh);
	char b[32];

	printf("\nthreads and caches: %" PRIu32 " threads%s; misses per line access of the whole process,\n"
	       "coherence misses (coh) included in lru and random:\n",
	       in->threads, in->shared_time ? "" : " (no shared time in this profile: every cache is the private view)");
	printf("%-10s %6s %8s %9s %9s %9s %9s\n", "placement", "caches", "size", "lru", "lru coh", "random",
	       "rand coh");
	for (size_t i = 0; i < np; i++) {
		cli_format_size(pl[i].size, b, sizeof(b));
		printf("%-10s %6" PRIu32 " %8s %9.4f %9.4f %9.4f %9.4f\n", pl[i].placement, pl[i].caches, b, pl[i].lru,
		       pl[i].lru_coh, pl[i].random, pl[i].random_coh);
	}
	printf("\nper thread, a private cache each (misses per line access of the thread):\n");
	printf("%8s %8s %8s %9s %9s %9s\n", "thread", "share", "size", "lru", "lru coh", "random");
	for (size_t i = 0; i < nt; i++) {
		cli_format_size(tc[i].size, b, sizeof(b));
		printf("%8" PRIu32 " %7.1f%% %8s %9.4f %9.4f %9.4f\n", tc[i].tid, 100 * tc[i].share, b, tc[i].lru,
		       tc[i].lru_coh, tc[i].random);
	}
	for (int f = 1; f >= 0; f--) {
		printf("\n%s: coherence misses (reuses invalidated by another thread's write) by data object\n"
		       "and pc; line accesses of the whole run:\n", sharing_title[f]);
		printf("%12s %8s %10s %10s  %-24s %-18s %-18s %s\n", "misses", "share", "threads", "writers",
		       "object", "pc that misses", "pc of the write", "functions (miss; write)");
		for (size_t i = 0; i < ns; i++) {
			char pb[32], wb[32];
			if (sh[i].false_sharing != f)
				continue;
			snprintf(pb, sizeof(pb), "%#" PRIx64, sh[i].pc);
			snprintf(wb, sizeof(wb), "%#" PRIx64, sh[i].wpc);
			printf("%12.0f %7.2f%% %10s %10s  %-24s %-18s %-18s %s; %s\n", sh[i].misses,
			       100 * sh[i].share, sh[i].threads, sh[i].writers, sh[i].object, pb, wb, sh[i].pc_name,
			       sh[i].wpc_name);
		}
	}
}

void cli_csv_share(const struct lp_report *r)
{
	const struct lp_report_placement *pl;
	const struct lp_report_thread_curve *tc;
	const struct lp_report_sharing *sh;
	size_t np = lp_report_placements(r, &pl), nt = lp_report_thread_curves(r, &tc), ns = lp_report_sharing(r, &sh);
	char b1[512], b2[512], b3[512];

	printf("\n# threads and caches: misses per line access of the whole process\n");
	printf("placement,caches,size,lru_miss_ratio,lru_coherence,random_miss_ratio,random_coherence\n");
	for (size_t i = 0; i < np; i++)
		printf("%s,%" PRIu32 ",%" PRIu64 ",%.6f,%.6f,%.6f,%.6f\n", pl[i].placement, pl[i].caches, pl[i].size,
		       pl[i].lru, pl[i].lru_coh, pl[i].random, pl[i].random_coh);
	printf("\n# per thread, a private cache each: misses per line access of the thread\n");
	printf("thread,share,size,lru_miss_ratio,lru_coherence,random_miss_ratio\n");
	for (size_t i = 0; i < nt; i++)
		printf("%" PRIu32 ",%.6f,%" PRIu64 ",%.6f,%.6f,%.6f\n", tc[i].tid, tc[i].share, tc[i].size, tc[i].lru,
		       tc[i].lru_coh, tc[i].random);
	printf("\n# coherence misses (true and false sharing), line accesses of the whole run\n");
	printf("sharing,object,pc,function,write_pc,write_function,threads,writers,misses,share\n");
	for (size_t i = 0; i < ns; i++)
		printf("%s,%s,%#" PRIx64 ",%s,%#" PRIx64 ",%s,\"%s\",\"%s\",%.1f,%.6f\n",
		       sh[i].false_sharing ? "false" : "true", cli_csv_field(sh[i].object, b1, sizeof(b1)), sh[i].pc,
		       cli_csv_field(sh[i].pc_name, b2, sizeof(b2)), sh[i].wpc,
		       cli_csv_field(sh[i].wpc_name, b3, sizeof(b3)), sh[i].threads, sh[i].writers, sh[i].misses,
		       sh[i].share);
}

/* ,"share":{...}: threads, placements, per-thread curves, sharing. */
void cli_json_share(const struct lp_report *r)
{
	const struct lp_report_info *in = lp_report_info(r);
	const struct lp_report_placement *pl;
	const struct lp_report_thread_curve *tc;
	const struct lp_report_sharing *sh;
	size_t np = lp_report_placements(r, &pl), nt = lp_report_thread_curves(r, &tc), ns = lp_report_sharing(r, &sh);

	printf(",\"share\":{\"threads\":%" PRIu32 ",\"shared_time\":%s,\"placements\":[", in->threads,
	       in->shared_time ? "true" : "false");
	for (size_t i = 0; i < np; i++)
		printf("%s{\"placement\":\"%s\",\"caches\":%" PRIu32 ",\"size\":%" PRIu64
		       ",\"lru\":%.6f,\"lru_coherence\":%.6f,\"random\":%.6f,\"random_coherence\":%.6f}",
		       i ? "," : "", pl[i].placement, pl[i].caches, pl[i].size, pl[i].lru, pl[i].lru_coh, pl[i].random,
		       pl[i].random_coh);
	printf("],\"per_thread\":[");
	for (size_t i = 0; i < nt; i++)
		printf("%s{\"thread\":%" PRIu32 ",\"share\":%.6f,\"size\":%" PRIu64
		       ",\"lru\":%.6f,\"lru_coherence\":%.6f,\"random\":%.6f}",
		       i ? "," : "", tc[i].tid, tc[i].share, tc[i].size, tc[i].lru, tc[i].lru_coh, tc[i].random);
	printf("],\"sharing\":[");
	for (size_t i = 0; i < ns; i++) {
		printf("%s{\"sharing\":\"%s\",\"object\":", i ? "," : "", sh[i].false_sharing ? "false" : "true");
		cli_json_string(sh[i].object);
		printf(",\"pc\":%" PRIu64 ",\"function\":", sh[i].pc);
		cli_json_string(sh[i].pc_name);
		printf(",\"write_pc\":%" PRIu64 ",\"write_function\":", sh[i].wpc);
		cli_json_string(sh[i].wpc_name);
		printf(",\"threads\":");
		cli_json_string(sh[i].threads);
		printf(",\"writers\":");
		cli_json_string(sh[i].writers);
		printf(",\"misses\":%.1f,\"share\":%.6f}", sh[i].misses, sh[i].share);
	}
	printf("]}");
}
