/* locprof-pmu-probe: a test driver for the pmu backend's engine. Runs a
 * program, prints one line per sample ("begin end pc addr kind tid", end
 * "-" when dangling) to stdout, or to --out FILE; with --trace FILE also
 * every reference in the text trace format of docs/formats.md, so that the
 * samples can be checked against the full trace. The target's own output
 * and exit status pass through unchanged. Not installed. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "pmu-sampler.h"

struct out {
	FILE *samples, *trace;
	int dt;
};

static void on_sample(void *ctx, const struct lp_pmu_sample *s)
{
	struct out *o = ctx;
	static const char *how[] = { "-", "same", "page", "dr", "syscall" };

	if (o->dt) {
		/* Double trap: the overflow's reference and the clock at the
		 * breakpoint's insertion, then the usual fields. */
		fprintf(o->samples, "%llu %llu ", (unsigned long long)s->trigger, (unsigned long long)s->armed);
	}
	if (s->dangling)
		fprintf(o->samples, "%llu - 0x%llx 0x%llx %c %u -\n", (unsigned long long)s->begin,
			(unsigned long long)s->pc, (unsigned long long)s->addr, s->kind ? 'W' : 'R', s->tid);
	else
		fprintf(o->samples, "%llu %llu 0x%llx 0x%llx %c %u %s\n", (unsigned long long)s->begin,
			(unsigned long long)s->end, (unsigned long long)s->pc, (unsigned long long)s->addr,
			s->kind ? 'W' : 'R', s->tid, how[s->ended_by]);
}

static void on_ref(void *ctx, uint64_t time, uint32_t image, uint32_t itid, const struct lp_ref *r)
{
	struct out *o = ctx;

	fprintf(o->trace, "%c 0x%llx %llu 0x%llx %u\n", r->kind ? 'W' : 'R', (unsigned long long)r->addr,
		(unsigned long long)r->size, (unsigned long long)r->pc, r->tid);
}

static void usage(FILE *f)
{
	fprintf(f, "usage: locprof-pmu-probe [--counter step|pmu|pmu-sw] [--period N] [--seed N]\n"
		   "         [--sample-start step|double-trap] [--skid-miss]\n"
		   "         [--max-skid N] [--emulate-skid N] [--line N] [--watch auto|dr|page]\n"
		   "         [--trace FILE] [--out FILE] [--stats] [--aslr] -- PROGRAM [ARGS...]\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "counter", 1, 0, 'c' }, { "period", 1, 0, 'p' }, { "seed", 1, 0, 's' },
		{ "max-skid", 1, 0, 'k' }, { "emulate-skid", 1, 0, 'e' }, { "line", 1, 0, 'l' },
		{ "watch", 1, 0, 'w' }, { "trace", 1, 0, 't' }, { "out", 1, 0, 'o' },
		{ "stats", 0, 0, 'S' }, { "sample-start", 1, 0, 'D' }, { "skid-miss", 0, 0, 'M' }, { "aslr", 0, 0, 'A' }, { "help", 0, 0, 'h' }, { 0, 0, 0, 0 },
	};
	struct lp_pmu_options o = LP_PMU_OPTIONS_DEFAULT;
	struct lp_pmu_hooks h = { 0 };
	struct lp_pmu_stats st;
	struct out out = { stdout, NULL, 0 };
	int c, status, err, stats = 0;

	while ((c = getopt_long(argc, argv, "+", opts, NULL)) != -1) {
		switch (c) {
		case 'c': o.counter = optarg; break;
		case 'p': o.period = strtod(optarg, NULL); break;
		case 's': o.seed = strtoull(optarg, NULL, 0); break;
		case 'k': o.max_skid = (unsigned)strtoul(optarg, NULL, 0); break;
		case 'e': o.emulate_skid = (unsigned)strtoul(optarg, NULL, 0); break;
		case 'l': o.line_size = (unsigned)strtoul(optarg, NULL, 0); break;
		case 'w':
			if (!strcmp(optarg, "dr"))
				o.watch = LP_PMU_WATCH_DR;
			else if (!strcmp(optarg, "page"))
				o.watch = LP_PMU_WATCH_PAGE;
			else if (!strcmp(optarg, "auto"))
				o.watch = LP_PMU_WATCH_AUTO;
			else {
				fprintf(stderr, "locprof-pmu-probe: error: unknown watch mechanism '%s'\n", optarg);
				return 2;
			}
			break;
		case 't':
			if (!(out.trace = fopen(optarg, "we"))) {
				fprintf(stderr, "locprof-pmu-probe: error: cannot open '%s': %s\n", optarg, strerror(errno));
				return 2;
			}
			h.on_ref = on_ref;
			break;
		case 'o':
			if (!(out.samples = fopen(optarg, "we"))) {
				fprintf(stderr, "locprof-pmu-probe: error: cannot open '%s': %s\n", optarg, strerror(errno));
				return 2;
			}
			break;
		case 'S': stats = 1; break;
		case 'M': o.skid_miss = 1; break;
		case 'D':
			if (!strcmp(optarg, "double-trap"))
				o.sample_start = LP_PMU_START_DOUBLE_TRAP;
			else if (!strcmp(optarg, "step"))
				o.sample_start = LP_PMU_START_STEP;
			else {
				fprintf(stderr, "locprof-pmu-probe: error: unknown sample start '%s' (step, double-trap)\n",
					optarg);
				return 2;
			}
			break;
		case 'A': o.no_aslr = 0; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return 2;
	}
	if (o.max_skid < o.emulate_skid)
		o.max_skid = o.emulate_skid;
	out.dt = o.sample_start == LP_PMU_START_DOUBLE_TRAP;
	h.ctx = &out;
	h.on_sample = on_sample;
	fflush(stdout);
	err = lp_pmu_run(&o, &h, argv + optind, &st, &status);
	if (out.trace)
		fclose(out.trace);
	if (out.samples != stdout)
		fclose(out.samples);
	if (err < 0) {
		fprintf(stderr, "locprof-pmu-probe: error: %s%s\n", lp_errmsg(),
			err != LP_EUNSUPPORTED ? "" : strstr(lp_errmsg(), "precise sampling") ?
			"; --sample-start step works without it" : "; use --counter step (exact, slow) instead");
		return 125;
	}
	if (stats) {
		const struct { const char *name; uint64_t v; } f[] = {
			{ "refs", st.refs }, { "steps", st.steps }, { "skid_steps", st.skid_steps },
			{ "samples", st.samples }, { "missed", st.missed }, { "no_slot", st.no_slot },
			{ "unwatchable", st.unwatchable }, { "undecoded", st.undecoded },
			{ "decode_misses", st.decode_misses }, { "partial", st.partial }, { "page_hits", st.page_hits }, { "dr_hits", st.dr_hits },
			{ "same_hits", st.same_hits }, { "syscall_hits", st.syscall_hits },
			{ "dangling", st.dangling }, { "false_faults", st.false_faults },
			{ "target_signals", st.target_signals }, { "injected", st.injected },
			{ "world_stops", st.world_stops }, { "held_checks", st.held_checks },
			{ "stale_faults", st.stale_faults }, { "exposed", st.exposed },
			{ "precise_ip", (uint64_t)(int64_t)st.precise_ip }, { "dt_inserted", st.dt_inserted },
			{ "dt_hits", st.dt_hits }, { "dt_replaced", st.dt_replaced },
			{ "dt_norecord", st.dt_norecord }, { "dt_nomem", st.dt_nomem },
			{ "dt_stale", st.dt_stale }, { "dt_forks", st.dt_forks },
			{ "dt_stepped", st.dt_stepped },
			{ "ring_samples", st.ring_samples }, { "ring_lost", st.ring_lost },
			{ "ring_throttled", st.ring_throttled }, { "ring_damaged", st.ring_damaged },
		};

		for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++)
			fprintf(stderr, "%s%s %lld", i ? " " : "", f[i].name, (long long)f[i].v);
		fputc('\n', stderr);
	}
	fflush(stdout);
	if (WIFSIGNALED(status)) {
		/* Die the same way, so the caller sees the same status. */
		signal(WTERMSIG(status), SIG_DFL);
		raise(WTERMSIG(status));
	}
	return WEXITSTATUS(status);
}
