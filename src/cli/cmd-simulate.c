/* locprof simulate: functional cache simulation of a trace. */
#include "cli.h"
#include "simulate-mt.h"

#include <locprof/report.h>
#include <locprof/sim.h>
#include <locprof/symbol.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
	"usage: locprof simulate TRACE --cache SPEC [--cache SPEC ...]\n"
	"       locprof simulate TRACE --level SPEC [--level SPEC ...]\n"
	"       locprof simulate TRACE --sizes LIST [--policy lru,fifo,random] [--line 64]\n"
	"       locprof simulate TRACE --private SPEC [--private SPEC] [--shared SPEC]\n"
	"                       [--cores N | --core-map T=C,...] [--protocol mesi|msi]\n"
	"       [--format text|csv|json] [--seed N] [--from FORMAT]\n"
	"       [--sample-length R (--sample-ratio F | --sample-interval I) [--random-lengths]]\n"
	"\n"
	"Simulate caches on a memory-reference trace (rules: docs/simulator.md).\n"
	"SPEC is SIZE:ASSOC:LINE[:POLICY], e.g. 32K:8:64:lru; ASSOC is a number\n"
	"(1 = direct mapped) or 'full'; POLICY is lru (default), fifo, random or\n"
	"plru. L1, L2 or L3 is that level of this machine's data caches, host all\n"
	"of them (as independent caches with --cache, a hierarchy with --level).\n"
	"\n"
	"  --cache SPEC         an independent cache (repeatable); misses are split\n"
	"                       into cold, capacity and conflict\n"
	"  --level SPEC         the next level of a hierarchy (repeatable, L1 first);\n"
	"                       each level sees the misses of the one above\n"
	"  --sizes LIST         working-set graph of fully-associative caches, in\n"
	"                       one pass: '1K..64M' (powers of two) or '32K,48K,1M'\n"
	"  --policy LIST        policies of the graph: lru, fifo, random (default lru)\n"
	"  --line BYTES         line size of the graph (default 64)\n"
	"  --private SPEC       several threads: a private cache of every core (L1,\n"
	"                       then L2 if given twice), kept coherent by invalidation\n"
	"  --shared SPEC        the last-level cache all cores share\n"
	"  --cores N            thread k (in order of appearance) on core k mod N\n"
	"                       (default: a core per thread)\n"
	"  --core-map T=C,...   thread id T on core C\n"
	"  --protocol P         mesi (default) or msi\n"
	"  --format FMT         text (default), csv (the shared curve CSV for --sizes)\n"
	"                       or json\n"
	"  --seed N             seed of the random policy and of random sample lengths\n"
	"                       (default 1)\n"
	"  -f, --from FORMAT    format of TRACE (lpt, text, lackey)\n"
	"\n"
	"MemSpy trace sampling (with --cache; LRU or direct-mapped caches):\n"
	"  --sample-length R    simulate samples of R references ...\n"
	"  --sample-ratio F     ... evenly spaced so that a fraction F is simulated\n"
	"  --sample-interval I  ... or one sample every I references\n"
	"  --random-lengths     draw each sample length uniformly in [R/2, 3R/2]\n"
	"The report gives known hits and misses, unknown references, the estimated\n"
	"miss ratio (Equation 1, mu = 0, 0.5, 1, and Wood et al.'s estimator) next\n"
	"to the true miss ratio overall and during samples.\n"
	"\n"
	"With --private, --attribute gives the first level's coherence misses per\n"
	"data object and per pc, split into false and true sharing.\n"
	"\n"
	"MemSpy attribution (with one --cache):\n"
	"  --attribute          misses and memory stall per (data object, function)\n"
	"                       pair, per data object, per function and per pc;\n"
	"                       heap blocks are named by their allocation site\n"
	"                       (symbols from the binaries the trace's mappings name)\n"
	"  --binary PATH        also take symbols from this non-PIE executable (for\n"
	"                       traces without mappings: text, lackey)\n"
	"  --alloc-fn NAME      name heap blocks past the program's allocation\n"
	"                       wrapper NAME (a glob; repeatable): its callers name\n"
	"                       the blocks it returns (docs/models.md, Data objects)\n"
	"  --miss-latency N     cycles per miss (default 100)\n"
	"  --compute-cost N     cycles per reference (default 1)\n"
	"  --top N              rows per table (default 20, 0 = all)\n"
	"\n"
	"A damaged trace gives results for the records read, a warning, status 3.\n";

enum { BATCH = 4096, MAX_CACHES = 16 };

static int run(int argc, char **argv);

const struct cli_command cmd_simulate = {
	.name = "simulate",
	.summary = "simulate caches, hierarchies, working-set graphs and MemSpy sampling",
	.usage = usage,
	.run = run,
};

enum fmt { FMT_TEXT = CLI_SIM_TEXT, FMT_CSV = CLI_SIM_CSV, FMT_JSON = CLI_SIM_JSON };
enum { SIMULATE_JSON_VERSION = CLI_SIMULATE_JSON_VERSION };

struct opts {
	const char *trace, *from;
	struct lp_cache_spec specs[MAX_CACHES];
	size_t nspecs;
	int hierarchy, graph;
	uint64_t *sizes;
	size_t nsizes;
	unsigned policies;
	uint64_t line, seed;
	enum fmt fmt;
	uint64_t sample_length, sample_interval;
	double sample_ratio;
	int random_lengths;
	int attribute;
	const char *binary;
	double miss_latency, compute_cost;
	uint64_t top;
	/* several threads (--private) */
	struct lp_mtsim_config mt;
	uint32_t *core_map;
};

static double pct(uint64_t a, uint64_t b)
{
	return b ? 100.0 * (double)a / (double)b : 0.0;
}

static double frac(uint64_t a, uint64_t b)
{
	return b ? (double)a / (double)b : 0.0;
}

/* Two counts side by side (docs/simulator.md): line accesses (a reference
 * that touches k lines is k of them) and references (one each, a miss when
 * any of its lines misses: Cachegrind's and the hardware counters' count). */
static void print_sim(const struct opts *o, struct lp_sim **sims, uint64_t refs, uint64_t racc)
{
	char buf[64];

	if (o->fmt == FMT_CSV) {
		printf("%s,spec,accesses,misses,miss_ratio,cold,capacity,conflict,ref_accesses,ref_misses,"
		       "ref_miss_ratio\n",
		       o->hierarchy ? "level" : "cache");
	} else if (o->fmt == FMT_JSON) {
		printf("{\"version\": %d, \"trace\": ", SIMULATE_JSON_VERSION);
		cli_json_string(o->trace);
		printf(", \"references\": %llu, \"ref_accesses\": %llu, \"%s\": [", (unsigned long long)refs,
		       (unsigned long long)racc, o->hierarchy ? "levels" : "caches");
	} else {
		printf("# locprof simulate %s: %llu references, %llu accesses per reference (a read-modify-write "
		       "is one)\n", o->trace, (unsigned long long)refs, (unsigned long long)racc);
		printf("# accesses, misses, miss%%: line accesses (a reference touching k lines is k);"
		       " ref-misses, ref-miss%%: per reference (a miss if any of its lines misses)\n");
		printf("%-6s %-20s %12s %12s %8s %12s %12s %12s %12s %9s\n", o->hierarchy ? "level" : "cache",
		       "spec", "accesses", "misses", "miss%", "cold", "capacity", "conflict", "ref-misses",
		       "ref-miss%");
	}
	for (size_t i = 0; i < o->nspecs; i++) {
		struct lp_level_stats st;
		char name[32];

		lp_sim_level_stats(o->hierarchy ? sims[0] : sims[i], o->hierarchy ? i : 0, &st);
		snprintf(name, sizeof(name), "%s%zu", o->hierarchy ? "L" : "C", i + 1);
		lp_cache_spec_format(&o->specs[i], buf, sizeof(buf));
		if (o->fmt == FMT_CSV)
			printf("%s,%s,%llu,%llu,%.6f,%llu,%llu,%llu,%llu,%llu,%.6f\n", name, buf,
			       (unsigned long long)st.accesses, (unsigned long long)st.misses,
			       frac(st.misses, st.accesses), (unsigned long long)st.cold,
			       (unsigned long long)st.capacity, (unsigned long long)st.conflict,
			       (unsigned long long)racc, (unsigned long long)st.ref_misses,
			       frac(st.ref_misses, racc));
		else if (o->fmt == FMT_JSON)
			printf("%s\n  {\"name\": \"%s\", \"spec\": \"%s\", \"accesses\": %llu, \"misses\": %llu, "
			       "\"miss_ratio\": %.6f, \"cold\": %llu, \"capacity\": %llu, \"conflict\": %llu, "
			       "\"ref_misses\": %llu, \"ref_miss_ratio\": %.6f}",
			       i ? "," : "", name, buf, (unsigned long long)st.accesses,
			       (unsigned long long)st.misses, frac(st.misses, st.accesses),
			       (unsigned long long)st.cold, (unsigned long long)st.capacity,
			       (unsigned long long)st.conflict, (unsigned long long)st.ref_misses,
			       frac(st.ref_misses, racc));
		else
			printf("%-6s %-20s %12llu %12llu %8.3f %12llu %12llu %12llu %12llu %9.3f\n", name, buf,
			       (unsigned long long)st.accesses, (unsigned long long)st.misses,
			       pct(st.misses, st.accesses), (unsigned long long)st.cold,
			       (unsigned long long)st.capacity, (unsigned long long)st.conflict,
			       (unsigned long long)st.ref_misses, pct(st.ref_misses, racc));
	}
	if (o->fmt == FMT_JSON)
		printf("\n]}\n");
}

/* A policy's misses at a point: per line access, and per reference. */
static uint64_t graph_misses(const struct lp_graph_point *pt, size_t p, int per_ref)
{
	if (per_ref)
		return p == 0 ? pt->lru_ref_misses : p == 1 ? pt->fifo_ref_misses : pt->random_ref_misses;
	return p == 0 ? pt->lru_misses : p == 1 ? pt->fifo_misses : pt->random_misses;
}

static void print_graph_csv(const struct opts *o, struct lp_graph *g)
{
	static const char *names[] = { "lru", "fifo", "random" };
	static const unsigned bits[] = { LP_GRAPH_LRU, LP_GRAPH_FIFO, LP_GRAPH_RANDOM };
	size_t n = lp_graph_sizes(g);

	printf("# locprof curve v1: locprof simulate --sizes, trace %s, line %llu\n", o->trace,
	       (unsigned long long)o->line);
	printf("curve,size_bytes,miss_ratio,misses,accesses\n");
	for (size_t p = 0; p < 3; p++) {
		if (!(o->policies & bits[p]))
			continue;
		/* per line access; cold misses excluded (docs/formats.md: first
		 * touches miss under every policy, the same count for all);
		 * per reference (NAME-ref: references with a missed line over
		 * the accesses per reference, docs/simulator.md) */
		for (int v = 0; v < 3; v++)
			for (size_t i = 0; i < n; i++) {
				struct lp_graph_point pt;
				uint64_t m, acc;
				lp_graph_point(g, i, &pt);
				m = graph_misses(&pt, p, v == 2);
				acc = v == 2 ? pt.ref_accesses : pt.accesses;
				if (v == 1) {
					m -= pt.cold;
					acc -= pt.cold;
				}
				printf("%s%s,%llu,%.6f,%llu,%llu\n", names[p], v == 1 ? "-nocold" : v == 2 ? "-ref" : "",
				       (unsigned long long)pt.size, frac(m, acc), (unsigned long long)m,
				       (unsigned long long)acc);
			}
	}
}

static void print_graph(const struct opts *o, struct lp_graph *g, uint64_t refs)
{
	static const struct { unsigned bit; const char *name; } pols[] = {
		{ LP_GRAPH_LRU, "lru" }, { LP_GRAPH_FIFO, "fifo" }, { LP_GRAPH_RANDOM, "random" },
	};
	size_t n = lp_graph_sizes(g);
	char buf[32];

	if (o->fmt == FMT_CSV) {
		print_graph_csv(o, g);
		return;
	}
	if (o->fmt == FMT_JSON) {
		struct lp_graph_point pt0 = { 0 };
		if (n)
			lp_graph_point(g, 0, &pt0);
		printf("{\"version\": %d, \"trace\": ", SIMULATE_JSON_VERSION);
		cli_json_string(o->trace);
		printf(", \"references\": %llu, \"ref_accesses\": %llu, \"line\": %llu, \"points\": [",
		       (unsigned long long)refs, (unsigned long long)pt0.ref_accesses, (unsigned long long)o->line);
		for (size_t i = 0; i < n; i++) {
			struct lp_graph_point pt;
			lp_graph_point(g, i, &pt);
			printf("%s\n  {\"size\": %llu, \"accesses\": %llu, \"cold\": %llu", i ? "," : "",
			       (unsigned long long)pt.size, (unsigned long long)pt.accesses,
			       (unsigned long long)pt.cold);
			for (size_t p = 0; p < 3; p++) {
				uint64_t m = graph_misses(&pt, p, 0), rm = graph_misses(&pt, p, 1);
				if (o->policies & pols[p].bit)
					printf(", \"%s_misses\": %llu, \"%s_miss_ratio\": %.6f, \"%s_ref_misses\": %llu, "
					       "\"%s_ref_miss_ratio\": %.6f",
					       pols[p].name, (unsigned long long)m, pols[p].name, frac(m, pt.accesses),
					       pols[p].name, (unsigned long long)rm, pols[p].name, frac(rm, pt.ref_accesses));
			}
			printf("}");
		}
		printf("\n]}\n");
		return;
	}
	printf("# locprof simulate %s: %llu references, fully associative, line %llu; miss ratio %%"
	       " per line access (POLICY) and per reference (POLICY/ref)\n",
	       o->trace, (unsigned long long)refs, (unsigned long long)o->line);
	printf("%10s %12s", "size", "accesses");
	for (size_t p = 0; p < 3; p++)
		if (o->policies & pols[p].bit)
			printf(" %10s", pols[p].name);
	for (size_t p = 0; p < 3; p++)
		if (o->policies & pols[p].bit)
			printf(" %9s/ref", pols[p].name);
	printf("\n");
	for (size_t i = 0; i < n; i++) {
		struct lp_graph_point pt;
		lp_graph_point(g, i, &pt);
		printf("%10s %12llu", cli_format_size(pt.size, buf, sizeof(buf)),
		       (unsigned long long)pt.accesses);
		for (int v = 0; v < 2; v++)
			for (size_t p = 0; p < 3; p++)
				if (o->policies & pols[p].bit)
					printf(v ? " %13.3f" : " %10.3f",
					       pct(graph_misses(&pt, p, v), v ? pt.ref_accesses : pt.accesses));
		printf("\n");
	}
}

static void print_memspy(const struct opts *o, struct lp_memspy **ms)
{
	char buf[64];

	if (o->fmt == FMT_CSV)
		printf("cache,metric,value\n");
	else if (o->fmt == FMT_JSON) {
		printf("{\"version\": %d, \"trace\": ", SIMULATE_JSON_VERSION);
		cli_json_string(o->trace);
		printf(", \"sample_length\": %llu, \"sample_interval\": %llu, "
		       "\"random_lengths\": %s, \"caches\": [",
		       (unsigned long long)o->sample_length, (unsigned long long)o->sample_interval,
		       o->random_lengths ? "true" : "false");
	}
	for (size_t i = 0; i < o->nspecs; i++) {
		struct lp_memspy_result r;
		struct { const char *name; double v; } rows[] = {
			{ "true_miss_ratio", 0 }, { "true_miss_ratio_samples", 0 },
			{ "estimate_mu0", 0 }, { "estimate_mu05", 0 }, { "estimate_mu1", 0 },
			{ "bound", 0 }, { "estimate_wood", 0 }, { "estimate_wood_touched", 0 },
			{ "wood_mu", 0 }, { "wood_touched_mu", 0 }, { "true_mu", 0 },
			{ "gens_per_line_sample", 0 },
		};
		struct { const char *name; uint64_t v; } counts[] = {
			{ "references", 0 }, { "samples", 0 }, { "sampled_references", 0 },
			{ "known_hits", 0 }, { "known_misses", 0 }, { "unknown", 0 },
			{ "generations", 0 }, { "accesses", 0 }, { "misses", 0 },
		};

		lp_memspy_result(ms[i], &r);
		rows[0].v = r.true_miss_ratio;
		rows[1].v = r.true_miss_ratio_samples;
		rows[2].v = r.m_mu0;
		rows[3].v = r.m_mu05;
		rows[4].v = r.m_mu1;
		rows[5].v = r.bound;
		rows[6].v = r.m_wood;
		rows[7].v = r.m_wood_touched;
		rows[8].v = r.wood_mu;
		rows[9].v = r.wood_touched_mu;
		rows[10].v = r.true_mu;
		rows[11].v = r.gens_per_line_sample;
		counts[0].v = r.references;
		counts[1].v = r.samples;
		counts[2].v = r.sampled_references;
		counts[3].v = r.known_hits;
		counts[4].v = r.known_misses;
		counts[5].v = r.unknown;
		counts[6].v = r.generations;
		counts[7].v = r.accesses;
		counts[8].v = r.misses;
		lp_cache_spec_format(&o->specs[i], buf, sizeof(buf));
		if (o->fmt == FMT_CSV || o->fmt == FMT_JSON) {
			if (o->fmt == FMT_JSON)
				printf("%s\n  {\"spec\": \"%s\"", i ? "," : "", buf);
			for (size_t k = 0; k < sizeof(counts) / sizeof(*counts); k++) {
				if (o->fmt == FMT_CSV)
					printf("%s,%s,%llu\n", buf, counts[k].name, (unsigned long long)counts[k].v);
				else
					printf(", \"%s\": %llu", counts[k].name, (unsigned long long)counts[k].v);
			}
			for (size_t k = 0; k < sizeof(rows) / sizeof(*rows); k++) {
				if (o->fmt == FMT_CSV)
					printf("%s,%s,%.6f\n", buf, rows[k].name, rows[k].v);
				else if (isnan(rows[k].v))
					printf(", \"%s\": null", rows[k].name);
				else
					printf(", \"%s\": %.6f", rows[k].name, rows[k].v);
			}
			if (o->fmt == FMT_JSON)
				printf("}");
			continue;
		}
		printf("# MemSpy sampling of %s, cache %s (%llu lines)\n", o->trace, buf,
		       (unsigned long long)r.lines);
		printf("#   %llu samples of %s%llu references every %llu (ratio %.4f); %llu of %llu references simulated\n",
		       (unsigned long long)r.samples, o->random_lengths ? "~" : "",
		       (unsigned long long)o->sample_length, (unsigned long long)o->sample_interval,
		       (double)o->sample_length / (double)o->sample_interval,
		       (unsigned long long)r.sampled_references, (unsigned long long)r.references);
		printf("%-40s %10s\n", "", "miss %");
		printf("%-40s %10.4f\n", "true, whole trace", 100 * r.true_miss_ratio);
		printf("%-40s %10.4f\n", "true, during samples", 100 * r.true_miss_ratio_samples);
		printf("%-40s %10.4f\n", "estimate mu=0", 100 * r.m_mu0);
		printf("%-40s %10.4f  +- %.4f (Eq. 1)\n", "estimate mu=0.5", 100 * r.m_mu05, 100 * r.bound);
		printf("%-40s %10.4f\n", "estimate mu=1", 100 * r.m_mu1);
		printf("%-40s %10.4f  (mu %.4f)\n", "estimate Wood et al.", 100 * r.m_wood, r.wood_mu);
		printf("%-40s %10.4f  (mu %.4f)\n", "estimate Wood et al., lines touched", 100 * r.m_wood_touched,
		       r.wood_touched_mu);
		printf("%-40s %10.4f\n", "true mu of the unknown references", r.true_mu);
		printf("known hits %llu, known misses %llu, unknown %llu; %llu generations, %.4f per line per sample\n",
		       (unsigned long long)r.known_hits, (unsigned long long)r.known_misses,
		       (unsigned long long)r.unknown, (unsigned long long)r.generations, r.gens_per_line_sample);
	}
	if (o->fmt == FMT_JSON)
		printf("\n]}\n");
}

/* The source lines by misses, grouped as `locprof report` and `locprof
 * annotate` group a profile's (lp_hotspots): the text table only when the
 * trace's pcs have line information. */
static void print_attrib_lines(const struct opts *o, struct lp_attrib *a)
{
	const struct lp_hotspots *h;
	const struct lp_source_line *l;
	size_t n = 0;
	char b1[512];

	if (lp_attrib_hotspots(a, &h) < 0)
		cli_warn("no source lines: %s", lp_errmsg());
	else
		n = lp_hotspots_lines(h, &l);
	if (o->top && n > o->top)
		n = o->top;
	if (o->fmt == FMT_JSON)
		printf(", \"lines\": [");
	else if (o->fmt == FMT_TEXT && n)
		printf("\n## source lines\n%-40s %10s %10s %7s %7s\n", "file:line", "accesses", "misses", "miss%",
		       "share%");
	for (size_t i = 0; i < n; i++) {
		char where[300];

		snprintf(where, sizeof(where), "%s:%d", l[i].file, l[i].line);
		if (o->fmt == FMT_CSV) {
			printf("lines,,,,%s,,%.0f,%.0f,,,,,%.6f\n", cli_csv_field(where, b1, sizeof(b1)), l[i].accesses,
			       l[i].misses, l[i].share);
		} else if (o->fmt == FMT_JSON) {
			printf("%s\n  {\"file\": ", i ? "," : "");
			cli_json_string(l[i].file);
			printf(", \"path\": ");
			cli_json_string(l[i].path);
			printf(", \"line\": %d, \"accesses\": %.0f, \"misses\": %.0f, \"share\": %.6f}", l[i].line,
			       l[i].accesses, l[i].misses, l[i].share);
		} else {
			printf("%-40s %10.0f %10.0f %7.2f %7.1f\n", where, l[i].accesses, l[i].misses,
			       l[i].accesses > 0 ? 100 * l[i].misses / l[i].accesses : 0.0, 100 * l[i].share);
		}
	}
	if (o->fmt == FMT_JSON)
		printf("%s]", n ? "\n" : "");
}

static void print_attrib(const struct opts *o, struct lp_attrib *a)
{
	static const struct { enum lp_attrib_view v; const char *name; } views[] = {
		{ LP_ATTRIB_PAIRS, "pairs" }, { LP_ATTRIB_OBJECTS, "objects" },
		{ LP_ATTRIB_FUNCTIONS, "functions" }, { LP_ATTRIB_PCS, "pcs" },
	};
	struct lp_attrib_row total;
	char spec[64], b1[256], b2[256];

	lp_attrib_total(a, &total);
	lp_cache_spec_format(&o->specs[0], spec, sizeof(spec));
	if (o->fmt == FMT_CSV)
		printf("table,object,function,pc,where,refs,accesses,misses,cold,replacement,stall,compute,stall_share\n");
	else if (o->fmt == FMT_JSON) {
		printf("{\"version\": %d, \"trace\": ", SIMULATE_JSON_VERSION);
		cli_json_string(o->trace);
		printf(", \"cache\": \"%s\", \"miss_latency\": %g, \"compute_cost\": %g, "
		       "\"refs\": %llu, \"misses\": %llu, \"stall\": %.0f, \"compute\": %.0f",
		       spec, o->miss_latency, o->compute_cost, (unsigned long long)total.refs,
		       (unsigned long long)total.misses, total.stall, total.compute);
	}
	else
		printf("# MemSpy attribution of %s, cache %s: %llu references, %llu misses; "
		       "%g cycles a miss, %g a reference: stall %.0f, compute %.0f cycles (%.1f%% stall)\n",
		       o->trace, spec, (unsigned long long)total.refs, (unsigned long long)total.misses,
		       o->miss_latency, o->compute_cost, total.stall, total.compute,
		       total.stall + total.compute > 0 ? 100 * total.stall / (total.stall + total.compute) : 0.0);
	for (size_t t = 0; t < 4; t++) {
		const struct lp_attrib_row *rows;
		size_t n = lp_attrib_rows(a, views[t].v, &rows);

		int w1 = 28, w2 = 24; /* text columns: as wide as the longest name shown */

		if (o->top && n > o->top)
			n = o->top;
		for (size_t i = 0; i < n; i++) {
			int l1 = t == 3 ? 19 + (int)strlen(rows[i].where) : (int)strlen(rows[i].object);
			int l2 = (int)strlen(rows[i].function);

			w1 = l1 > w1 ? l1 : w1;
			w2 = l2 > w2 ? l2 : w2;
		}
		if (o->fmt == FMT_JSON)
			printf(", \"%s\": [", views[t].name);
		else if (o->fmt == FMT_TEXT) {
			static const char *titles[] = {
				"memory stall per (data object, procedure)", "data objects",
				"procedures: memory stall vs compute", "instructions",
			};
			printf("\n## %s\n", titles[t]);
			if (t == 2)
				printf("%-36s %10s %10s %7s %12s %12s %7s\n", "procedure", "refs", "misses", "miss%",
				       "stall", "compute", "stall%");
			else
				printf("%-*s %-*s %10s %10s %10s %10s %7s\n", w1, t == 3 ? "pc (file:line)" : "data object",
				       t == 1 ? 24 : w2, t == 3 || t == 0 ? "procedure" : "", "refs", "misses", "cold",
				       "repl", "stall%");
		}
		for (size_t i = 0; i < n; i++) {
			const struct lp_attrib_row *r = &rows[i];
			if (o->fmt == FMT_CSV) {
				printf("%s,%s,", views[t].name, cli_csv_field(r->object, b1, sizeof(b1)));
				printf("%s,0x%llx,%s,%llu,%llu,%llu,%llu,%llu,%.0f,%.0f,%.6f\n",
				       cli_csv_field(r->function, b2, sizeof(b2)), (unsigned long long)r->pc, r->where,
				       (unsigned long long)r->refs, (unsigned long long)r->accesses,
				       (unsigned long long)r->misses, (unsigned long long)r->cold,
				       (unsigned long long)r->replacement, r->stall, r->compute, r->share);
			} else if (o->fmt == FMT_JSON) {
				cli_simulate_json_row(i > 0, r->object, r->function, r->pc, r->where);
				printf(", \"refs\": %llu, \"misses\": %llu, \"cold\": %llu, \"replacement\": %llu, "
				       "\"stall\": %.0f, \"compute\": %.0f, \"stall_share\": %.6f}",
				       (unsigned long long)r->refs, (unsigned long long)r->misses,
				       (unsigned long long)r->cold, (unsigned long long)r->replacement, r->stall,
				       r->compute, r->share);
			} else if (t == 2) {
				printf("%-36s %10llu %10llu %7.2f %12.0f %12.0f %7.1f\n", r->function,
				       (unsigned long long)r->refs, (unsigned long long)r->misses,
				       pct(r->misses, r->accesses), r->stall, r->compute,
				       r->stall + r->compute > 0 ? 100 * r->stall / (r->stall + r->compute) : 0.0);
			} else {
				char where[300];
				if (t == 3)
					snprintf(where, sizeof(where), "0x%llx %s", (unsigned long long)r->pc, r->where);
				printf("%-*s %-*s %10llu %10llu %10llu %10llu %7.1f\n", w1, t == 3 ? where : r->object,
				       t == 1 ? 24 : w2, r->function, (unsigned long long)r->refs,
				       (unsigned long long)r->misses,
				       (unsigned long long)r->cold, (unsigned long long)r->replacement, 100 * r->share);
			}
		}
		if (o->fmt == FMT_JSON)
			printf("\n]");
	}
	print_attrib_lines(o, a);
	if (o->fmt == FMT_JSON)
		printf("}\n");
}

static int parse_policies(const char *s, unsigned *out)
{
	char *dup = strdup(s), *tok, *save = NULL;
	int ok = 1;

	*out = 0;
	if (!dup)
		return -1;
	for (tok = strtok_r(dup, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (!strcmp(tok, "lru"))
			*out |= LP_GRAPH_LRU;
		else if (!strcmp(tok, "fifo"))
			*out |= LP_GRAPH_FIFO;
		else if (!strcmp(tok, "random"))
			*out |= LP_GRAPH_RANDOM;
		else
			ok = 0;
	}
	free(dup);
	return ok && *out ? 0 : -1;
}

/* The allocation stacks of the trace at path (each LP_EV_ALLOC's call site
 * and the LP_EV_FRAME records after it), told to s so that it can tell
 * the program's allocation wrappers (lp_symbols_alloc_stack): a second
 * reading of the file before the simulation's, since the simulation names
 * each block as it is allocated. Standard input cannot be read twice:
 * there only the --alloc-fn names count. */
static void tell_trace_stacks(const char *path, const char *from, struct lp_symbols *s)
{
	struct lp_trace_reader *rd = NULL;
	struct lp_ref *buf = malloc(BATCH * sizeof(*buf));
	uint64_t frames[LP_ALLOC_STACK_MAX];
	unsigned n = 0;
	ssize_t got;

	if (!buf || !strcmp(path, "-") || lp_trace_reader_open(&rd, path, from) < 0)
		goto out;
	while ((got = lp_trace_read(rd, buf, BATCH)) > 0)
		for (ssize_t i = 0; i < got; i++) {
			if (buf[i].kind == LP_EV_FRAME) {
				if (n && n < LP_ALLOC_STACK_MAX)
					frames[n++] = buf[i].pc;
				continue;
			}
			if (n > 1)
				lp_symbols_alloc_stack(s, frames, n);
			else if (n == 1)
				lp_symbols_alloc_call(s, frames[0]);
			n = 0;
			if (buf[i].kind == LP_EV_ALLOC && buf[i].size)
				frames[n++] = buf[i].pc;
		}
	if (n > 1)
		lp_symbols_alloc_stack(s, frames, n);
	else if (n == 1)
		lp_symbols_alloc_call(s, frames[0]);
out:
	lp_trace_reader_free(rd);
	free(buf);
}

/* Symbols for --attribute: the binaries the trace's mappings name (an .lpt
 * from `locprof record --mode trace` carries them), plus --binary. None at
 * all only costs the names (pcs and objects are then shown as addresses),
 * unless --binary was given and cannot be read. */
int cli_simulate_symbols(const char *binary, const char *trace, const char *from, struct lp_trace_reader *rd,
			 struct lp_symbols **syms)
{
	const struct lp_mappings *maps = lp_trace_reader_mappings(rd);

	if (maps && !maps->n)
		maps = NULL;
	if (!maps && !binary) {
		cli_note("the trace carries no mappings: pcs and data objects are shown as addresses "
			 "(give the executable with --binary)");
		return 0;
	}
	if (lp_symbols_new(syms, maps, binary) < 0) {
		if (binary) {
			cli_error("%s", lp_errmsg());
			return -1;
		}
		cli_warn("no symbols: %s", lp_errmsg());
		return 0;
	}
	if (lp_symbols_warning(*syms))
		cli_warn("%s", lp_symbols_warning(*syms));
	tell_trace_stacks(trace, from, *syms);
	cli_tell_alloc_fns(*syms);
	return 0;
}

/* The options of several threads (--private ...); -1 to go on, else the
 * exit status. */
static int parse_mt_option(int c, const char *arg, struct opts *o)
{
	switch (c) {
	case 'P':
	case 'H': {
		struct lp_named_cache nc[2];
		size_t k;
		int rc = cli_cache_arg(&cmd_simulate, arg, nc, 1, &k);
		if (rc)
			return rc;
		if (c == 'H') {
			o->mt.shared = nc[0].spec;
			o->mt.has_shared = 1;
		} else if (o->mt.npriv == LP_MTSIM_MAX_PRIVATE) {
			return cli_usage_error(&cmd_simulate, "at most %d --private levels", LP_MTSIM_MAX_PRIVATE);
		} else {
			o->mt.priv[o->mt.npriv++] = nc[0].spec;
		}
		return -1;
	}
	case 'N': {
		uint64_t v;
		if (cli_parse_u64(arg, &v) < 0 || !v || v > LP_MTSIM_MAX_CORES)
			return cli_usage_error(&cmd_simulate, "bad core count '%s' (1 to %d)", arg,
					       LP_MTSIM_MAX_CORES);
		o->mt.cores = (uint32_t)v;
		return -1;
	}
	case 'm':
		free(o->core_map);
		if (cli_parse_core_map(arg, &o->core_map, &o->mt.ncore_map) < 0)
			return cli_usage_error(&cmd_simulate, "bad core map '%s' (THREAD=CORE,..., cores 0 to %d)",
					       arg, LP_MTSIM_MAX_CORES - 1);
		o->mt.core_map = o->core_map;
		return -1;
	case 'O':
		if (!strcmp(arg, "mesi"))
			o->mt.protocol = LP_MTSIM_MESI;
		else if (!strcmp(arg, "msi"))
			o->mt.protocol = LP_MTSIM_MSI;
		else
			return cli_usage_error(&cmd_simulate, "unknown protocol '%s' (mesi, msi)", arg);
		return -1;
	}
	return -1;
}

/* Options into *o; returns -1 to go on, else the exit status. */
static int parse_options(int argc, char **argv, struct opts *o, int *ncache, int *nlevel)
{
	static const struct option longopts[] = {
		{ "cache", required_argument, NULL, 'c' },
		{ "level", required_argument, NULL, 'l' },
		{ "sizes", required_argument, NULL, 's' },
		{ "policy", required_argument, NULL, 'p' },
		{ "line", required_argument, NULL, 'L' },
		{ "format", required_argument, NULL, 'F' },
		{ "seed", required_argument, NULL, 'S' },
		{ "from", required_argument, NULL, 'f' },
		{ "sample-length", required_argument, NULL, 'R' },
		{ "sample-ratio", required_argument, NULL, 'r' },
		{ "sample-interval", required_argument, NULL, 'I' },
		{ "random-lengths", no_argument, NULL, 'D' },
		{ "attribute", no_argument, NULL, 'A' },
		{ "binary", required_argument, NULL, 'B' },
		{ "alloc-fn", required_argument, NULL, 'a' },
		{ "miss-latency", required_argument, NULL, 'M' },
		{ "compute-cost", required_argument, NULL, 'C' },
		{ "top", required_argument, NULL, 'T' },
		{ "private", required_argument, NULL, 'P' },
		{ "shared", required_argument, NULL, 'H' },
		{ "cores", required_argument, NULL, 'N' },
		{ "core-map", required_argument, NULL, 'm' },
		{ "protocol", required_argument, NULL, 'O' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int c;

	while ((c = cli_getopt(argc, argv, "f:h", longopts)) != -1) {
		switch (c) {
		case 'c':
		case 'l': {
			struct lp_named_cache nc[MAX_CACHES];
			size_t k;
			int rc = cli_cache_arg(&cmd_simulate, optarg, nc, MAX_CACHES - o->nspecs, &k);
			if (rc)
				return rc;
			for (size_t i = 0; i < k; i++)
				o->specs[o->nspecs++] = nc[i].spec;
			*(c == 'c' ? ncache : nlevel) += k;
			break;
		}
		case 's':
			free(o->sizes);
			o->sizes = NULL;
			if (cli_parse_size_list(optarg, &o->sizes, &o->nsizes) < 0)
				return cli_usage_error(&cmd_simulate, "bad size list '%s'", optarg);
			o->graph = 1;
			break;
		case 'p':
			if (parse_policies(optarg, &o->policies) < 0)
				return cli_usage_error(&cmd_simulate, "bad policy list '%s' (known: lru, fifo, random)", optarg);
			break;
		case 'L':
			if (cli_parse_size(optarg, &o->line) < 0 || !o->line || (o->line & (o->line - 1)))
				return cli_usage_error(&cmd_simulate, "bad line size '%s' (a power of two)", optarg);
			break;
		case 'F':
			if (!strcmp(optarg, "text"))
				o->fmt = FMT_TEXT;
			else if (!strcmp(optarg, "csv"))
				o->fmt = FMT_CSV;
			else if (!strcmp(optarg, "json"))
				o->fmt = FMT_JSON;
			else
				return cli_usage_error(&cmd_simulate, "unknown format '%s' (text, csv, json)", optarg);
			break;
		case 'S':
			if (cli_parse_u64(optarg, &o->seed) < 0)
				return cli_usage_error(&cmd_simulate, "bad seed '%s'", optarg);
			break;
		case 'f':
			if (!lp_trace_format_known(optarg))
				return cli_usage_error(&cmd_simulate, "unknown format '%s' (known: %s)", optarg,
						       lp_trace_format_names());
			o->from = optarg;
			break;
		case 'R':
			if (cli_parse_size(optarg, &o->sample_length) < 0 || !o->sample_length)
				return cli_usage_error(&cmd_simulate, "bad sample length '%s'", optarg);
			break;
		case 'r':
			if (cli_parse_double(optarg, &o->sample_ratio) < 0 || !(o->sample_ratio > 0 && o->sample_ratio <= 1))
				return cli_usage_error(&cmd_simulate, "bad sample ratio '%s' (0 < F <= 1)", optarg);
			break;
		case 'I':
			if (cli_parse_size(optarg, &o->sample_interval) < 0 || !o->sample_interval)
				return cli_usage_error(&cmd_simulate, "bad sample interval '%s'", optarg);
			break;
		case 'D': o->random_lengths = 1; break;
		case 'A': o->attribute = 1; break;
		case 'B': o->binary = optarg; break;
		case 'a':
			if (cli_alloc_fn_option(&cmd_simulate, optarg))
				return CLI_USAGE;
			break;
		case 'M':
			if (cli_parse_double(optarg, &o->miss_latency) < 0 || o->miss_latency < 0)
				return cli_usage_error(&cmd_simulate, "bad miss latency '%s'", optarg);
			break;
		case 'C':
			if (cli_parse_double(optarg, &o->compute_cost) < 0 || o->compute_cost < 0)
				return cli_usage_error(&cmd_simulate, "bad compute cost '%s'", optarg);
			break;
		case 'T':
			if (cli_parse_u64(optarg, &o->top) < 0)
				return cli_usage_error(&cmd_simulate, "bad row count '%s'", optarg);
			break;
		case 'P':
		case 'H':
		case 'N':
		case 'm':
		case 'O': {
			int rc = parse_mt_option(c, optarg, o);
			if (rc >= 0)
				return rc;
			break;
		}
		case 'h': return cli_print_usage(&cmd_simulate);
		default: return cli_usage_error(&cmd_simulate, "%s", cli_getopt_error());
		}
	}
	return -1;
}

/* Checks the combination of options; returns -1 to go on, else the exit
 * status. */
static int check_options(int argc, char **argv, struct opts *o, int ncache, int nlevel, int *sampling)
{
	if (argc - optind != 1)
		return cli_usage_error(&cmd_simulate, "simulate takes one trace");
	o->trace = argv[optind];
	if (o->mt.npriv || o->mt.has_shared || o->mt.cores || o->core_map) {
		if (!o->mt.npriv || ncache || nlevel || o->graph)
			return cli_usage_error(&cmd_simulate, "--shared, --cores and --core-map go with --private, "
							      "and --private with no --cache, --level or --sizes");
		if (o->mt.cores && o->core_map)
			return cli_usage_error(&cmd_simulate, "give --cores or --core-map, not both");
		if (o->sample_length || o->sample_ratio > 0 || o->sample_interval || o->random_lengths)
			return cli_usage_error(&cmd_simulate, "sampling works with --cache");
		if (o->binary && !o->attribute)
			return cli_usage_error(&cmd_simulate, "--binary goes with --attribute");
		o->mt.seed = o->seed;
		*sampling = 0;
		return -1;
	}
	if ((ncache > 0) + (nlevel > 0) + o->graph != 1)
		return cli_usage_error(&cmd_simulate, "give exactly one of --cache, --level, --sizes or --private");
	o->hierarchy = nlevel > 0;
	*sampling = o->sample_length || o->sample_ratio > 0 || o->sample_interval || o->random_lengths;
	if (*sampling) {
		if (!ncache)
			return cli_usage_error(&cmd_simulate, "sampling works with --cache");
		if (!o->sample_length || (o->sample_ratio > 0) == (o->sample_interval > 0))
			return cli_usage_error(&cmd_simulate, "sampling needs --sample-length and one of --sample-ratio or --sample-interval");
		if (o->sample_ratio > 0)
			o->sample_interval = (uint64_t)((double)o->sample_length / o->sample_ratio + 0.5);
		if (o->sample_interval < o->sample_length)
			return cli_usage_error(&cmd_simulate, "the sample interval is shorter than the sample length");
	}
	if ((o->attribute || o->binary) && (ncache != 1 || *sampling || !o->attribute))
		return cli_usage_error(&cmd_simulate, o->attribute ? "--attribute takes exactly one --cache and no sampling"
								  : "--binary goes with --attribute");
	return -1;
}

struct engines {
	struct lp_symbols *syms;
	struct lp_attrib *attrib;
	struct lp_sim *sims[MAX_CACHES];
	struct lp_memspy *ms[MAX_CACHES];
	struct lp_graph *g;
	uint64_t graph_refs; /* the memory references the graph was fed */
	size_t nsims;
};

/* The simulators the options ask for; -1 after an error message. */
static int engines_open(const struct opts *o, int sampling, struct lp_trace_reader *rd, struct engines *en)
{
	if (o->attribute) {
		struct lp_attrib_params ap = { .cache = o->specs[0], .seed = o->seed,
					       .miss_latency = o->miss_latency, .compute_cost = o->compute_cost };

		if (cli_simulate_symbols(o->binary, o->trace, o->from, rd, &en->syms) < 0)
			return -1;
		if (lp_attrib_new(&en->attrib, &ap, en->syms) < 0)
			goto out_err;
	} else if (o->graph) {
		if (lp_graph_new(&en->g, o->sizes, o->nsizes, o->line, o->policies, o->seed) < 0)
			goto out_err;
	} else if (sampling) {
		for (size_t i = 0; i < o->nspecs; i++) {
			struct lp_memspy_params p = { .cache = o->specs[i], .sample_length = o->sample_length,
						      .sample_interval = o->sample_interval,
						      .random_lengths = o->random_lengths, .seed = o->seed };
			if (lp_memspy_new(&en->ms[i], &p) < 0)
				goto out_err;
		}
	} else if (o->hierarchy) {
		if (lp_sim_new(&en->sims[0], o->specs, o->nspecs, o->seed, LP_SIM_3C) < 0)
			goto out_err;
		en->nsims = 1;
	} else {
		for (size_t i = 0; i < o->nspecs; i++, en->nsims++)
			if (lp_sim_new(&en->sims[i], &o->specs[i], 1, o->seed, LP_SIM_3C) < 0)
				goto out_err;
	}
	return 0;
out_err:
	cli_error("%s", lp_errmsg());
	return -1;
}

static int engines_feed(const struct opts *o, struct engines *en, const struct lp_ref *buf, size_t n)
{
	int err = 0;

	if (en->g) {
		err = lp_graph_refs(en->g, buf, n);
		/* the graph counts none; the reader's records are events too */
		for (size_t i = 0; i < n; i++)
			en->graph_refs += (uint64_t)lp_ref_is_access(&buf[i]);
	}
	if (en->attrib)
		err = lp_attrib_refs(en->attrib, buf, n);
	for (size_t i = 0; i < en->nsims && !err; i++)
		err = lp_sim_refs(en->sims[i], buf, n);
	for (size_t i = 0; i < o->nspecs && en->ms[i] && !err; i++)
		err = lp_memspy_refs(en->ms[i], buf, n);
	return err;
}

static void engines_free(struct engines *en)
{
	lp_graph_free(en->g);
	lp_attrib_free(en->attrib);
	lp_symbols_free(en->syms);
	for (size_t i = 0; i < MAX_CACHES; i++) {
		lp_sim_free(en->sims[i]);
		lp_memspy_free(en->ms[i]);
	}
}

static int run(int argc, char **argv)
{
	struct opts o = { .line = 64, .seed = 1, .policies = LP_GRAPH_LRU, .miss_latency = 100,
			  .compute_cost = 1, .top = 20 };
	struct engines en = { 0 };
	struct lp_trace_reader *rd = NULL;
	struct lp_ref *buf = NULL;
	int status, ncache = 0, nlevel = 0, sampling = 0;
	ssize_t n;

	if ((status = parse_options(argc, argv, &o, &ncache, &nlevel)) >= 0 ||
	    (status = check_options(argc, argv, &o, ncache, nlevel, &sampling)) >= 0)
		goto out;
	status = CLI_ERROR;
	if (lp_trace_reader_open(&rd, o.trace, o.from) < 0) {
		cli_error("%s", lp_errmsg());
		goto out;
	}
	if (o.mt.npriv) {
		struct cli_mt_opts mo = { .trace = o.trace, .from = o.from, .cfg = o.mt, .fmt = (enum cli_sim_fmt)o.fmt,
					  .attribute = o.attribute, .binary = o.binary, .top = o.top };
		status = cli_simulate_mt(&mo, rd);
		goto out;
	}
	if (engines_open(&o, sampling, rd, &en) < 0)
		goto out;
	if (!(buf = malloc(BATCH * sizeof(*buf)))) {
		cli_error("out of memory");
		goto out;
	}
	status = CLI_OK;
	while ((n = lp_trace_read(rd, buf, BATCH)) > 0) {
		if (engines_feed(&o, &en, buf, (size_t)n) < 0) {
			cli_error("%s", lp_errmsg());
			status = CLI_ERROR;
			goto out;
		}
	}
	if (n < 0 && (status = cli_trace_read_failed((int)n, rd)) == CLI_ERROR)
		goto out;
	if (en.attrib) {
		print_attrib(&o, en.attrib);
	} else if (en.g) {
		print_graph(&o, en.g, en.graph_refs);
	} else if (sampling) {
		print_memspy(&o, en.ms);
	} else {
		print_sim(&o, en.sims, lp_sim_references(en.sims[0]), lp_sim_ref_accesses(en.sims[0]));
	}
out:
	lp_trace_reader_free(rd);
	free(buf);
	engines_free(&en);
	free(o.sizes);
	free(o.core_map);
	return status;
}
