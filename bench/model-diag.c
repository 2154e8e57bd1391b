/* bench-model-diag: per-sample comparison of StatStack's estimated stack
 * distance with the exact one, to find where the model goes wrong.
 *
 * usage: bench-model-diag [--shared | --thread T] TRACE RATE [WINDOW] > samples.tsv
 * Prints one line per finite sample of 64-byte lines: time, reuse
 * distance, exact stack distance of the reuse, StatStack's estimate, pc,
 * thread. A multi-threaded trace as a cache sees it (lp_share_view()):
 * --shared, one cache shared by all its threads (the shared clock and the
 * first access by any thread), against the exact stack distance in the
 * interleaved stream; --thread T, the private cache of trace thread T
 * alone, against the exact stack distance in T's own stream; --group K/N,
 * the cache of group K when the threads are split into N groups as
 * `report --shared` splits them (lp_share_placement_split()), against the
 * group's own interleaved stream: then each line also gives the sample's
 * exact reuse distance in that stream (reuse_true); --cache SPEC (one
 * thread's trace), a set-associative cache: each line also gives whether
 * the sample's reuse missed in an lp_cache simulation of SPEC over the
 * whole stream (sa_true: 1, 0; cold misses do not occur for a reuse) and
 * the placement model's miss chance for it (sa_est,
 * lp_statstack_sample_miss()), to find the reuses whose set placement the
 * model misreads. Loads the whole trace in memory (meant for traces of a
 * few million references). */
#include <locprof/exact.h>
#include <locprof/model.h>
#include <locprof/sample.h>
#include <locprof/sim.h>
#include <locprof/trace.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	struct lp_trace_reader *r;
	struct lp_ref *refs = NULL;
	size_t n = 0, cap = 0;
	ssize_t got;

	int shared = argc > 1 && !strcmp(argv[1], "--shared");
	int alone = argc > 2 && !strcmp(argv[1], "--thread");
	int grouped = argc > 2 && !strcmp(argv[1], "--group");
	int setassoc = argc > 2 && !strcmp(argv[1], "--cache");
	uint32_t thread = alone ? (uint32_t)strtoul(argv[2], NULL, 0) : 0, gk = 0, gn = 1;
	struct lp_cache_spec spec = { 0 };

	if (grouped && sscanf(argv[2], "%u/%u", &gk, &gn) != 2)
		gn = 0;
	if (setassoc && lp_cache_spec_parse(&spec, argv[2]) < 0) {
		fprintf(stderr, "bench-model-diag: %s\n", lp_errmsg());
		return 2;
	}
	argc -= shared + 2 * alone + 2 * grouped + 2 * setassoc;
	argv += shared + 2 * alone + 2 * grouped + 2 * setassoc;
	if (argc < 3 || (grouped && (gn == 0 || gk >= gn))) {
		fprintf(stderr, "usage: bench-model-diag [--shared | --thread T | --group K/N | --cache SPEC] TRACE RATE "
				"[WINDOW]\n");
		return 2;
	}
	if (lp_trace_reader_open(&r, argv[1], NULL) < 0) {
		fprintf(stderr, "bench-model-diag: %s\n", lp_errmsg());
		return 1;
	}
	for (;;) {
		if (n + 65536 > cap) {
			cap = cap ? 2 * cap : 1 << 20;
			refs = realloc(refs, cap * sizeof(*refs));
			if (!refs)
				return 1;
		}
		got = lp_trace_read(r, refs + n, 65536);
		if (got <= 0)
			break;
		n += (size_t)got;
	}
	lp_trace_reader_free(r);

	/* line accesses (--thread: T's alone; --group: the group's); the
	 * sampler numbers the threads in order of appearance: T's number is
	 * `group`. --group needs the number of threads first. */
	size_t nl = 0, capl = n + 16, nall = 0;
	uint64_t *lines = malloc(capl * sizeof(*lines));
	uint32_t seen[1024], nseen = 0, group = UINT32_MAX;
	struct lp_share_placement gpl = { 0 };
	if (grouped) {
		for (size_t i = 0; i < n; i++) {
			uint32_t k = 0;
			if (!lp_ref_is_access(&refs[i]) && refs[i].kind != LP_EV_ALLOC && refs[i].kind != LP_EV_FREE)
				continue;
			while (k < nseen && seen[k] != refs[i].tid)
				k++;
			if (k == nseen && nseen < 1024)
				seen[nseen++] = refs[i].tid;
		}
		if (lp_share_placement_split(&gpl, nseen, gn) < 0)
			return 1;
		nseen = 0;
	}
	/* --group: at[j] = the group's line accesses before line access j of all threads */
	uint64_t *at = grouped ? malloc(capl * sizeof(*at)) : NULL;
	for (size_t i = 0; i < n; i++) {
		int event = refs[i].kind == LP_EV_ALLOC || refs[i].kind == LP_EV_FREE;
		if (lp_ref_is_access(&refs[i]) || event) {
			uint32_t k = 0;
			while (k < nseen && seen[k] != refs[i].tid)
				k++;
			if (k == nseen && nseen < 1024)
				seen[nseen++] = refs[i].tid;
			if (refs[i].tid == thread)
				group = k;
		}
		if (!lp_ref_is_access(&refs[i]) || (alone && refs[i].tid != thread))
			continue;
		uint64_t a = refs[i].addr >> 6, b = (refs[i].addr + refs[i].size - 1) >> 6;
		if (grouped) {
			uint32_t k = 0;
			while (k < nseen && seen[k] != refs[i].tid)
				k++;
			for (uint64_t l = a; l <= b; l++) {
				if (nall == capl) {
					capl *= 2;
					lines = realloc(lines, capl * sizeof(*lines));
					at = realloc(at, capl * sizeof(*at));
				}
				at[nall++] = nl;
				if (gpl.group[k < gpl.nthreads ? k : 0] == gk)
					lines[nl++] = l;
			}
			continue;
		}
		for (uint64_t l = a; l <= b; l++) {
			if (nl == capl)
				lines = realloc(lines, (capl *= 2) * sizeof(*lines));
			lines[nl++] = l;
		}
	}
	uint64_t *dist = malloc(nl * sizeof(*dist));
	struct lp_distcalc *dc;
	struct lp_exact_opts o = {.kind = LP_DIST_STACK};
	if (lp_distcalc_new(&dc, &o) < 0 || lp_distcalc_run(dc, lines, nl, dist, NULL) < 0) {
		fprintf(stderr, "bench-model-diag: %s\n", lp_errmsg());
		return 1;
	}
	lp_distcalc_free(dc);

	struct lp_profile *p;
	struct lp_sampler *s;
	lp_profile_new(&p);
	p->n_line_sizes = 1;
	p->line_sizes[0] = 64;
	p->rate = atof(argv[2]);
	p->seed = 1;
	p->window = argc > 3 ? strtoull(argv[3], NULL, 0) : 200000;
	if (lp_sampler_new(&s, p) < 0 || lp_sampler_feed(s, refs, n) < 0 || lp_sampler_finish(s) < 0) {
		fprintf(stderr, "bench-model-diag: %s\n", lp_errmsg());
		return 1;
	}
	lp_sampler_free(s);
	if (shared || alone || grouped) {
		struct lp_share_placement pl;
		struct lp_profile *q;
		uint32_t nt = lp_share_threads(p);
		if (alone && group >= nt) {
			fprintf(stderr, "bench-model-diag: no thread %u\n", thread);
			return 1;
		}
		if (lp_share_placement_split(&pl, nt, shared ? 1 : grouped ? gn : nt) < 0 ||
		    lp_share_view(&q, p, 0, &pl, shared ? 0 : grouped ? gk : group) < 0) {
			fprintf(stderr, "bench-model-diag: %s\n", lp_errmsg());
			return 1;
		}
		lp_share_placement_release(&pl);
		lp_profile_free(p);
		p = q;
	}

	struct lp_statstack *m;
	if (lp_statstack_new(&m, p, 0, argc > 4 ? strtoull(argv[4], NULL, 0) : 0, 0) < 0) {
		fprintf(stderr, "bench-model-diag: %s\n", lp_errmsg());
		return 1;
	}
	size_t first, ns;
	lp_profile_line_samples(p, 0, &first, &ns);
	double *sd = malloc((ns + 1) * sizeof(*sd));
	lp_statstack_sample_sd(m, sd);
	if (grouped) {
		/* the sample's access in the group's stream, and its next one */
		printf("time\treuse\treuse_true\tsd_true\tsd_est\tpc\ttid\n");
		for (size_t i = 0; i < ns; i++) {
			const struct lp_sample *x = &p->samples[first + i];
			if (x->reuse == LP_REUSE_DANGLING || x->stime >= nall)
				continue;
			size_t j = at[x->stime], t = j + 1;
			while (t < nl && lines[t] != lines[j])
				t++;
			if (t >= nl)
				continue;
			printf("%llu\t%llu\t%zu\t%llu\t%.1f\t0x%llx\t%u\n", (unsigned long long)x->time,
			       (unsigned long long)x->reuse, t - j - 1, (unsigned long long)dist[t], sd[i],
			       (unsigned long long)x->pc, x->tid);
		}
		ns = 0;
	}
	if (setassoc) {
		/* the reuse's outcome in the simulated cache, and the model's chance */
		struct lp_cache *c;
		uint8_t *hit = malloc(nl + 1);
		double *prob = malloc((ns + 1) * sizeof(*prob));
		if (!hit || !prob || lp_cache_new(&c, &spec, 1) < 0 ||
		    lp_statstack_sample_miss(m, lp_cache_spec_sets(&spec), lp_cache_spec_ways(&spec), prob) < 0) {
			fprintf(stderr, "bench-model-diag: %s\n", lp_errmsg());
			return 1;
		}
		lp_cache_access_lines(c, lines, nl, hit, NULL);
		lp_cache_free(c);
		printf("time\treuse\tsd_true\tsd_est\tsa_true\tsa_est\tpc\taddr\n");
		for (size_t i = 0; i < ns; i++) {
			const struct lp_sample *x = &p->samples[first + i];
			uint64_t t = x->time + x->reuse + 1;
			if (x->reuse == LP_REUSE_DANGLING || t >= nl)
				continue;
			printf("%llu\t%llu\t%llu\t%.1f\t%d\t%.4f\t0x%llx\t0x%llx\n", (unsigned long long)x->time,
			       (unsigned long long)x->reuse, (unsigned long long)dist[t], sd[i], !hit[t], prob[i],
			       (unsigned long long)x->pc, (unsigned long long)x->addr);
		}
		free(hit);
		free(prob);
		ns = 0;
	}
	if (!grouped && !setassoc)
		printf("time\treuse\tsd_true\tsd_est\tpc\ttid\n");
	for (size_t i = 0; i < ns; i++) {
		const struct lp_sample *x = &p->samples[first + i];
		if (x->reuse == LP_REUSE_DANGLING)
			continue;
		uint64_t t = x->time + x->reuse + 1;
		printf("%llu\t%llu\t%llu\t%.1f\t0x%llx\t%u\n", (unsigned long long)x->time,
		       (unsigned long long)x->reuse, (unsigned long long)dist[t], sd[i],
		       (unsigned long long)x->pc, x->tid);
	}
	lp_statstack_free(m);
	lp_profile_free(p);
	free(sd);
	free(dist);
	free(lines);
	free(at);
	lp_share_placement_release(&gpl);
	free(refs);
	return 0;
}
