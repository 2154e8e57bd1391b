/* locprof simulate --private/--shared: the multi-threaded simulation
 * (lp_mtsim, lp_coherence) and its text, CSV and JSON output. */
#include "simulate-mt.h"

#include <locprof/report.h>

#include <stdlib.h>
#include <string.h>

enum { BATCH = 4096 };

int cli_parse_core_map(const char *s, uint32_t **map, size_t *n)
{
	char *dup = strdup(s), *tok, *save = NULL;
	int ok = dup != NULL;

	*map = NULL;
	*n = 0;
	for (tok = ok ? strtok_r(dup, ",", &save) : NULL; tok && ok; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');
		uint64_t t, c;

		if (!eq) {
			ok = 0;
			break;
		}
		*eq = '\0';
		if (cli_parse_u64(tok, &t) < 0 || cli_parse_u64(eq + 1, &c) < 0 || t > 1u << 20 ||
		    c >= LP_MTSIM_MAX_CORES) {
			ok = 0;
			break;
		}
		if (t >= *n) {
			uint32_t *m = realloc(*map, (t + 1) * sizeof(*m));
			if (!m) {
				ok = 0;
				break;
			}
			for (size_t i = *n; i <= t; i++)
				m[i] = UINT32_MAX; /* not named */
			*map = m;
			*n = t + 1;
		}
		(*map)[t] = (uint32_t)c;
	}
	free(dup);
	if (ok && !*n)
		ok = 0;
	if (!ok) {
		free(*map);
		*map = NULL;
		*n = 0;
		return -1;
	}
	return 0;
}

void cli_simulate_json_row(int comma, const char *object, const char *function, uint64_t pc, const char *where)
{
	cli_jprintf("%s\n  {\"object\": ", comma ? "," : "");
	cli_json_string(object);
	cli_jprintf(", \"function\": ");
	cli_json_string(function);
	cli_jprintf(", \"pc\": %llu, \"where\": ", (unsigned long long)pc);
	cli_json_string(where);
}

static double ratio(uint64_t a, uint64_t b)
{
	return b ? (double)a / (double)b : 0.0;
}

static const char *level_name(const struct lp_mtsim *s, size_t k, char *buf, size_t len)
{
	if (lp_mtsim_level_shared(s, k))
		snprintf(buf, len, "LLC");
	else
		snprintf(buf, len, "L%zu", k + 1);
	return buf;
}

static void print_stats_row(const struct cli_mt_opts *o, const char *level, const char *spec, const char *thread,
			    const char *core, const struct lp_mtsim_stats *st, int first)
{
	unsigned long long v[] = { st->accesses, st->misses,	    st->cold,	       st->replacement,
				   st->coherence, st->false_sharing, st->true_sharing, st->invalidations,
				   st->upgrades, st->downgrades };

	if (o->fmt == CLI_SIM_CSV) {
		cli_jprintf("%s,%s,%s,%s,%llu,%llu,%.6f,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu\n", level, spec, thread,
		       core, v[0], v[1], ratio(st->misses, st->accesses), v[2], v[3], v[4], v[5], v[6], v[7], v[8],
		       v[9]);
	} else if (o->fmt == CLI_SIM_JSON) {
		cli_jprintf("%s{\"thread\": %s, \"core\": %s, \"accesses\": %llu, \"misses\": %llu, \"miss_ratio\": %.6f, "
		       "\"cold\": %llu, \"replacement\": %llu, \"coherence\": %llu, \"false_sharing\": %llu, "
		       "\"true_sharing\": %llu, \"invalidations\": %llu, \"upgrades\": %llu, \"downgrades\": %llu}",
		       first ? "" : ", ", strcmp(thread, "all") ? thread : "null", strcmp(core, "-") ? core : "null",
		       v[0], v[1], ratio(st->misses, st->accesses), v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9]);
	} else {
		cli_jprintf("%-5s %-16s %7s %5s %11llu %10llu %7.3f %10llu %10llu %10llu %10llu %10llu %10llu %9llu\n",
		       level, spec, thread, core, v[0], v[1], 100 * ratio(st->misses, st->accesses), v[2], v[3], v[4],
		       v[5], v[6], v[7], v[8]);
	}
}

static void print_header(const struct cli_mt_opts *o, const struct lp_mtsim *s)
{
	const char *proto = o->cfg.protocol == LP_MTSIM_MSI ? "msi" : "mesi";
	size_t nt = lp_mtsim_threads(s);

	if (o->fmt == CLI_SIM_CSV) {
		cli_jprintf("level,spec,thread,core,accesses,misses,miss_ratio,cold,replacement,coherence,false_sharing,"
		       "true_sharing,invalidations,upgrades,downgrades\n");
		return;
	}
	if (o->fmt == CLI_SIM_JSON) {
		cli_jprintf("{\"version\": %d, \"trace\": ", CLI_SIMULATE_JSON_VERSION);
		cli_json_string(o->trace);
		cli_jprintf(", \"references\": %llu, \"protocol\": \"%s\", \"cores\": %u, \"threads\": [",
		       (unsigned long long)lp_mtsim_references(s), proto, lp_mtsim_cores(s));
		for (size_t i = 0; i < nt; i++)
			cli_jprintf("%s{\"thread\": %u, \"core\": %u}", i ? ", " : "", lp_mtsim_thread_id(s, i),
			       lp_mtsim_thread_core(s, i));
		cli_jprintf("], \"mt_levels\": [");
		return;
	}
	cli_jprintf("# locprof simulate %s: %llu references, %zu threads on %u cores (%s), %s\n", o->trace,
	       (unsigned long long)lp_mtsim_references(s), nt, lp_mtsim_cores(s),
	       o->cfg.core_map ? "--core-map" : o->cfg.cores ? "round-robin" : "one core per thread",
	       o->cfg.protocol == LP_MTSIM_MSI ? "MSI" : "MESI");
	cli_jprintf("# line accesses; misses = cold + repl (capacity or conflict) + coherence (invalidated by another "
	       "core's write),\n# coherence = false + true sharing; inval: copies this thread's writes removed; "
	       "rules: docs/simulator.md\n");
	cli_jprintf("%-5s %-16s %7s %5s %11s %10s %7s %10s %10s %10s %10s %10s %10s %9s\n", "level", "spec", "thread",
	       "core", "accesses", "misses", "miss%", "cold", "repl", "coherence", "false", "true", "inval",
	       "upgrades");
}

static void print_levels(const struct cli_mt_opts *o, const struct lp_mtsim *s)
{
	size_t nt = lp_mtsim_threads(s);

	print_header(o, s);
	for (size_t k = 0; k < lp_mtsim_levels(s); k++) {
		struct lp_mtsim_stats st;
		char name[32], spec[64];

		level_name(s, k, name, sizeof(name));
		lp_cache_spec_format(lp_mtsim_level_spec(s, k), spec, sizeof(spec));
		if (o->fmt == CLI_SIM_JSON)
			cli_jprintf("%s\n {\"name\": \"%s\", \"spec\": \"%s\", \"shared\": %s, \"per_thread\": [", k ? "," : "",
			       name, spec, lp_mtsim_level_shared(s, k) ? "true" : "false");
		for (size_t i = 0; i < nt; i++) {
			char tid[16], core[16];
			snprintf(tid, sizeof(tid), "%u", lp_mtsim_thread_id(s, i));
			snprintf(core, sizeof(core), "%u", lp_mtsim_thread_core(s, i));
			lp_mtsim_thread_stats(s, k, (uint32_t)i, &st);
			print_stats_row(o, name, spec, tid, core, &st, i == 0);
		}
		lp_mtsim_thread_stats(s, k, LP_MTSIM_ALL, &st);
		if (o->fmt == CLI_SIM_JSON)
			cli_jprintf("], \"total\": ");
		print_stats_row(o, name, spec, "all", "-", &st, 1);
		if (o->fmt == CLI_SIM_JSON)
			cli_jprintf("}");
	}
	if (o->fmt == CLI_SIM_JSON)
		cli_jprintf("\n]");
}

/* "0,1" from a bit set of thread numbers, as their ids. */
static const char *thread_list(const struct lp_mtsim *s, uint64_t bits, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < 64 && i < lp_mtsim_threads(s) && used + 12 < len; i++)
		if (bits >> i & 1)
			used += (size_t)snprintf(buf + used, len - used, "%s%u", used ? "," : "",
						 lp_mtsim_thread_id(s, i));
	return buf;
}

static void print_coherence_table(const struct cli_mt_opts *o, struct lp_coherence *c, enum lp_coherence_view v)
{
	const struct lp_mtsim *s = lp_coherence_sim(c);
	const struct lp_coherence_row *rows;
	size_t n = lp_coherence_rows(c, v, &rows);
	const char *vname = v == LP_COHERENCE_PCS ? "pcs" : "objects";
	char b1[512], b2[512], th[128], wr[128];

	if (o->top && n > o->top)
		n = o->top;
	if (o->fmt == CLI_SIM_JSON)
		cli_jprintf(", \"%s\": [", vname);
	else if (o->fmt == CLI_SIM_TEXT && v == LP_COHERENCE_OBJECTS)
		cli_jprintf("\n## false sharing and true sharing per data object (L1 coherence misses)\n%-32s %10s %10s "
		       "%10s %7s %-10s %s\n",
		       "data object", "coherence", "false", "true", "false%", "threads", "writers");
	else if (o->fmt == CLI_SIM_TEXT)
		cli_jprintf("\n## false sharing and true sharing per instruction (L1 coherence misses)\n%-40s %-24s %10s "
		       "%10s %10s %-10s %s\n",
		       "pc (file:line)", "data object", "coherence", "false", "true", "threads", "last invalidating write");
	for (size_t i = 0; i < n; i++) {
		const struct lp_coherence_row *r = &rows[i];

		thread_list(s, r->threads, th, sizeof(th));
		thread_list(s, r->writers, wr, sizeof(wr));
		if (o->fmt == CLI_SIM_CSV) {
			cli_jprintf("%s,%s,", vname, cli_csv_field(r->object, b1, sizeof(b1)));
			cli_jprintf("%s,0x%llx,%s,%llu,%llu,%llu,", cli_csv_field(r->function, b2, sizeof(b2)),
			       (unsigned long long)r->pc, cli_csv_field(r->where, b1, sizeof(b1)),
			       (unsigned long long)r->coherence, (unsigned long long)r->false_sharing,
			       (unsigned long long)r->true_sharing);
			cli_jprintf("%s,", cli_csv_field(th, b1, sizeof(b1)));
			cli_jprintf("%s,0x%llx,", cli_csv_field(wr, b1, sizeof(b1)), (unsigned long long)r->writer_pc);
			cli_jprintf("%s\n", cli_csv_field(r->writer_where, b1, sizeof(b1)));
		} else if (o->fmt == CLI_SIM_JSON) {
			cli_simulate_json_row(i > 0, r->object, r->function, r->pc, r->where);
			cli_jprintf(", \"coherence\": %llu, \"false_sharing\": %llu, \"true_sharing\": %llu, \"threads\": \"%s\", "
			       "\"writers\": \"%s\", \"writer_pc\": %llu, \"writer\": ",
			       (unsigned long long)r->coherence, (unsigned long long)r->false_sharing,
			       (unsigned long long)r->true_sharing, th, wr, (unsigned long long)r->writer_pc);
			cli_json_string(r->writer_where);
			cli_jprintf("}");
		} else if (v == LP_COHERENCE_OBJECTS) {
			cli_jprintf("%-32s %10llu %10llu %10llu %7.1f %-10s %s\n", r->object, (unsigned long long)r->coherence,
			       (unsigned long long)r->false_sharing, (unsigned long long)r->true_sharing,
			       100 * ratio(r->false_sharing, r->coherence), th, wr);
		} else {
			snprintf(b1, sizeof(b1), "0x%llx %s", (unsigned long long)r->pc, r->where);
			cli_jprintf("%-40s %-24s %10llu %10llu %10llu %-10s %s\n", b1, r->object,
			       (unsigned long long)r->coherence, (unsigned long long)r->false_sharing,
			       (unsigned long long)r->true_sharing, th, r->writer_where);
		}
	}
	if (o->fmt == CLI_SIM_JSON)
		cli_jprintf("\n]");
}

static void print_coherence(const struct cli_mt_opts *o, struct lp_coherence *c)
{
	if (o->fmt == CLI_SIM_CSV)
		cli_jprintf("\nview,object,function,pc,where,coherence,false_sharing,true_sharing,threads,writers,"
		       "writer_pc,writer\n");
	if (o->fmt == CLI_SIM_JSON)
		cli_jprintf(", \"coherence\": {\"level\": \"L1\"");
	print_coherence_table(o, c, LP_COHERENCE_OBJECTS);
	print_coherence_table(o, c, LP_COHERENCE_PCS);
	if (o->fmt == CLI_SIM_JSON)
		cli_jprintf("}");
}

int cli_simulate_mt(const struct cli_mt_opts *o, struct lp_trace_reader *rd)
{
	struct lp_symbols *syms = NULL;
	struct lp_coherence *coh = NULL;
	struct lp_mtsim *sim = NULL;
	struct lp_ref *buf = NULL;
	int status = CLI_ERROR;
	ssize_t n;

	if (o->attribute) {
		if (cli_simulate_symbols(o->binary, o->trace, o->from, rd, &syms) < 0)
			goto out;
		if (lp_coherence_new(&coh, &o->cfg, syms) < 0)
			goto out_err;
	} else if (lp_mtsim_new(&sim, &o->cfg) < 0) {
		goto out_err;
	}
	if (!(buf = malloc(BATCH * sizeof(*buf)))) {
		cli_error("out of memory");
		goto out;
	}
	while ((n = lp_trace_read(rd, buf, BATCH)) > 0)
		if ((coh ? lp_coherence_refs(coh, buf, (size_t)n) : lp_mtsim_refs(sim, buf, (size_t)n)) < 0)
			goto out_err;
	status = CLI_OK;
	if (n < 0 && (status = cli_trace_read_failed((int)n, rd)) == CLI_ERROR)
		goto out;
	print_levels(o, coh ? lp_coherence_sim(coh) : sim);
	if (coh)
		print_coherence(o, coh);
	if (o->fmt == CLI_SIM_JSON)
		cli_jprintf("}\n");
	goto out;
out_err:
	cli_error("%s", lp_errmsg());
	status = CLI_ERROR;
out:
	free(buf);
	lp_coherence_free(coh);
	lp_mtsim_free(sim);
	lp_symbols_free(syms);
	return status;
}
