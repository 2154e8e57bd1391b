/* bench-trace-interleave: the threads of a multi-threaded trace run again
 * finely interleaved, as on cores of their own, for the shared-cache
 * models' check (bench/mt-accuracy.sh INTERLEAVE=N).
 *
 * usage: bench-trace-interleave IN OUT [BURST] [SEED]
 *
 * A recording on a machine with fewer cores than threads runs them one
 * at a time in time slices of many thousand references
 * (`lp_share_together()` measures it), which is not the interleaving the
 * shared-cache models assume, nor the one a machine with a core per
 * thread gives. This writes each thread's records in its own order, the
 * threads taking turns in bursts of 1 to 2 BURST - 1 accesses (default
 * BURST 4: 1 to 7), drawn at random (SEED, default 1) so that no thread
 * keeps a fixed phase against another.
 *
 * Assumptions:
 * - A thread may not start before the records that came before its first
 *   one in the recording (its creation): it joins the turns once the
 *   records written reach that point, or when no thread that has joined
 *   has records left (its creator waits for it).
 * - Otherwise the threads run at one speed, whatever their order in the
 *   recording: the program's synchronisation is not known from the trace,
 *   so a thread may run ahead of a barrier; for kernels whose threads do
 *   equal work between barriers, as the ones checked, they stay together.
 * - Each thread's own records keep their order and content, so its
 *   private view (its reuse distances) is the recording's; only the
 *   shared view changes, the same in the samples and in the simulation.
 * Loads the whole trace in memory (meant for traces of tens of millions
 * of records). */
#include <locprof/trace.h>

#include "common/rng.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct thread {
	size_t *at;     /* indices of its records in the recording */
	size_t n, next; /* records, and the next one to write */
	int joined;
};

/* Every record of the trace r; NULL on error (lp_errmsg()). */
static struct lp_ref *read_all(struct lp_trace_reader *r, size_t *n)
{
	struct lp_ref *refs = NULL;
	size_t cap = 0;
	ssize_t got;

	*n = 0;
	for (;;) {
		if (*n + 65536 > cap) {
			struct lp_ref *v = realloc(refs, (cap = cap ? 2 * cap : 1 << 20) * sizeof(*refs));
			if (!v) {
				free(refs);
				return NULL;
			}
			refs = v;
		}
		if ((got = lp_trace_read(r, refs + *n, 65536)) <= 0)
			break;
		*n += (size_t)got;
	}
	return got < 0 ? (free(refs), NULL) : refs;
}

/* Each thread's records, by the recording's thread numbers (0 .. nt-1). */
static struct thread *split(const struct lp_ref *refs, size_t n, uint32_t *nt)
{
	struct thread *t;

	*nt = 0;
	for (size_t i = 0; i < n; i++)
		*nt = refs[i].tid + 1 > *nt ? refs[i].tid + 1 : *nt;
	if (!(t = calloc(*nt ? *nt : 1, sizeof(*t))))
		return NULL;
	for (size_t i = 0; i < n; i++)
		t[refs[i].tid].n++;
	for (uint32_t k = 0; k < *nt; k++) {
		if (!(t[k].at = malloc((t[k].n ? t[k].n : 1) * sizeof(size_t))))
			return NULL;
		t[k].n = 0;
	}
	for (size_t i = 0; i < n; i++)
		t[refs[i].tid].at[t[refs[i].tid].n++] = i;
	return t;
}

/* Thread k writes a burst of `burst` accesses (and the events among them)
 * into out; returns the recording's index of the last record written. */
static size_t write_burst(struct thread *k, const struct lp_ref *refs, uint64_t burst, struct lp_ref *out,
			  size_t *nout, size_t frontier)
{
	while (k->next < k->n && burst > 0) {
		size_t i = k->at[k->next++];
		out[(*nout)++] = refs[i];
		burst -= lp_ref_is_access(&refs[i]);
		frontier = i > frontier ? i : frontier;
	}
	return frontier;
}

int main(int argc, char **argv)
{
	struct lp_trace_reader *r;
	struct lp_trace_writer *w;
	struct lp_ref *refs, *out;
	struct thread *t;
	struct lp_rng rng;
	size_t n, nout = 0, frontier = 0;
	uint64_t burst = argc > 3 ? strtoull(argv[3], NULL, 10) : 4;
	uint32_t nt;

	if (argc < 3 || burst < 1) {
		fprintf(stderr, "usage: bench-trace-interleave IN OUT [BURST] [SEED]\n");
		return 2;
	}
	lp_rng_seed(&rng, argc > 4 ? strtoull(argv[4], NULL, 10) : 1);
	if (lp_trace_reader_open(&r, argv[1], NULL) < 0 || !(refs = read_all(r, &n)) || !(t = split(refs, n, &nt)) ||
	    !(out = malloc((n ? n : 1) * sizeof(*out)))) {
		fprintf(stderr, "bench-trace-interleave: %s: %s\n", argv[1], lp_errmsg());
		return 1;
	}
	while (nout < n) {
		int wrote = 0;
		for (uint32_t k = 0; k < nt; k++) {
			if (!t[k].joined && t[k].n && t[k].at[0] <= frontier + 1)
				t[k].joined = 1;
			if (!t[k].joined || t[k].next >= t[k].n)
				continue;
			frontier = write_burst(&t[k], refs, 1 + lp_rng_below(&rng, 2 * burst - 1), out, &nout, frontier);
			wrote = 1;
		}
		if (!wrote) { /* the threads that joined wait: the next one starts */
			uint32_t first = nt;
			for (uint32_t k = 0; k < nt; k++)
				if (!t[k].joined && t[k].n && (first == nt || t[k].at[0] < t[first].at[0]))
					first = k;
			if (first == nt)
				break;
			t[first].joined = 1;
		}
	}
	/* the mappings, so that the report names the pcs as the recording's */
	if (lp_trace_writer_open(&w, argv[2], NULL) < 0) {
		fprintf(stderr, "bench-trace-interleave: %s: %s\n", argv[2], lp_errmsg());
		return 1;
	}
	if (lp_trace_writer_set_mappings(w, lp_trace_reader_mappings(r)) < 0 || lp_trace_write(w, out, nout) < 0) {
		fprintf(stderr, "bench-trace-interleave: %s: %s\n", argv[2], lp_errmsg());
		lp_trace_writer_abort(w);
		return 1;
	}
	if (lp_trace_writer_close(w) < 0) {
		fprintf(stderr, "bench-trace-interleave: %s: %s\n", argv[2], lp_errmsg());
		return 1;
	}
	lp_trace_reader_free(r);
	for (uint32_t k = 0; k < nt; k++)
		free(t[k].at);
	free(t);
	free(out);
	free(refs);
	fprintf(stderr, "bench-trace-interleave: %zu records of %u threads, bursts of 1 to %llu accesses\n", nout, nt,
		(unsigned long long)(2 * burst - 1));
	return 0;
}
