/* Encoding and decoding throughput of .lpt traces, against the floor of
 * copying the same records with memcpy.
 *
 * usage: bench-trace-throughput [-n REFS] [-d DIR]   (default 10^8, /tmp)
 *
 * For each synthetic pattern, the references are generated in batches
 * (not timed), written to DIR/bench-PATTERN.lpt (only lp_trace_write and
 * the final close are timed), then read back in batches of 64K (the whole
 * read loop is timed, from the page cache) and compared, by a hash, with
 * what was written. */
#include <locprof/locprof.h>

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum { BATCH = 65536 };

static double now(void)
{
	struct timespec ts;

	/* CPU time of this thread (user + system, so reading the file from
	 * the page cache counts): the VM is shared with other jobs, and wall
	 * time counts the slices they take */
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static uint64_t mix_in(uint64_t h, const struct lp_ref *r)
{
	h ^= r->addr + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
	h ^= r->pc * 31 + r->size * 7 + r->tid * 3 + r->kind;
	return h * 0xff51afd7ed558ccdULL;
}

struct row {
	const char *name;
	double enc_rate, dec_rate, copy_rate, bytes_per_ref;
};

static int run_one(struct lp_synth_params *p, const char *dir, struct row *row, struct lp_ref *buf,
		   struct lp_ref *dst)
{
	struct lp_trace_writer *w;
	struct lp_trace_reader *r;
	struct lp_synth *s;
	char path[4096];
	uint64_t h_in = 0, h_out = 0, got = 0;
	double t_enc = 0, t0;
	struct stat st;
	ssize_t n;
	size_t m;

	snprintf(path, sizeof(path), "%s/bench-%s.lpt", dir, lp_synth_pattern_name(p->pattern));
	if (lp_synth_new(&s, p) < 0 || lp_trace_writer_open(&w, path, NULL) < 0)
		goto fail;
	while ((m = lp_synth_fill(s, buf, BATCH)) > 0) {
		for (size_t i = 0; i < m; i++)
			h_in = mix_in(h_in, &buf[i]);
		t0 = now();
		if (lp_trace_write(w, buf, m) < 0)
			goto fail;
		t_enc += now() - t0;
	}
	lp_synth_free(s);
	t0 = now();
	if (lp_trace_writer_close(w) < 0)
		goto fail;
	t_enc += now() - t0;
	if (stat(path, &st) < 0)
		goto fail;

	if (lp_trace_reader_open(&r, path, NULL) < 0)
		goto fail;
	t0 = now();
	while ((n = lp_trace_read(r, buf, BATCH)) > 0)
		got += (uint64_t)n;
	double t_dec = now() - t0;
	if (n < 0)
		goto fail;
	lp_trace_reader_free(r);
	/* Second pass, untimed, to check the content. */
	if (lp_trace_reader_open(&r, path, NULL) < 0)
		goto fail;
	while ((n = lp_trace_read(r, buf, BATCH)) > 0)
		for (ssize_t i = 0; i < n; i++)
			h_out = mix_in(h_out, &buf[i]);
	lp_trace_reader_free(r);
	unlink(path);
	if (got != p->count || h_in != h_out) {
		fprintf(stderr, "bench: %s: decoded trace differs from the encoded one\n", path);
		return -1;
	}

	/* The floor: copying the records batch by batch, as a reader must at
	 * least do. */
	if (lp_synth_new(&s, p) < 0)
		goto fail;
	m = lp_synth_fill(s, buf, BATCH);
	lp_synth_free(s);
	t0 = now();
	for (uint64_t done = 0; done < p->count; done += m) {
		memcpy(dst, buf, m * sizeof(*buf));
		__asm__ volatile("" : : "r"(dst) : "memory");
	}
	double t_copy = now() - t0;

	row->name = lp_synth_pattern_name(p->pattern);
	row->enc_rate = (double)p->count / t_enc;
	row->dec_rate = (double)p->count / t_dec;
	row->copy_rate = (double)p->count / t_copy;
	row->bytes_per_ref = (double)st.st_size / (double)p->count;
	return 0;
fail:
	fprintf(stderr, "bench: %s: %s\n", path, lp_errmsg());
	return -1;
}

int main(int argc, char **argv)
{
	static const enum lp_synth_pattern patterns[] = { LP_SYNTH_UNIFORM, LP_SYNTH_ZIPF,
							  LP_SYNTH_SEQ, LP_SYNTH_STRIDED };
	uint64_t count = 100000000;
	const char *dir = "/tmp";
	struct row rows[4];
	struct lp_ref *buf = malloc(BATCH * sizeof(*buf)), *dst = malloc(BATCH * sizeof(*dst));
	int c;

	while ((c = getopt(argc, argv, "n:d:")) != -1) {
		switch (c) {
		case 'n': count = strtoull(optarg, NULL, 0); break;
		case 'd': dir = optarg; break;
		default:
			fprintf(stderr, "usage: bench-trace-throughput [-n REFS] [-d DIR]\n");
			return 2;
		}
	}
	if (!buf || !dst || !count)
		return 1;
	for (size_t i = 0; i < 4; i++) {
		struct lp_synth_params p;

		lp_synth_params_default(&p, patterns[i]);
		p.count = count;
		p.lines = 1 << 20;         /* uniform, zipf: 64 MiB of lines */
		p.footprint = 64u << 20;   /* seq, strided */
		p.stride = 4096 + 64;      /* strided: a new page and line every time */
		if (run_one(&p, dir, &rows[i], buf, dst) < 0)
			return 1;
	}
	printf("# lpt throughput, %llu references per pattern (64-byte lines, 8-byte elements, "
	       "25%% writes), per CPU second\n", (unsigned long long)count);
	printf("%-8s %12s %12s %12s %10s %10s\n", "pattern", "encode/s", "decode/s", "memcpy/s",
	       "bytes/ref", "dec/memcpy");
	for (size_t i = 0; i < 4; i++)
		printf("%-8s %11.1fM %11.1fM %11.1fM %10.3f %10.2f\n", rows[i].name,
		       rows[i].enc_rate / 1e6, rows[i].dec_rate / 1e6, rows[i].copy_rate / 1e6,
		       rows[i].bytes_per_ref, rows[i].dec_rate / rows[i].copy_rate);
	free(buf);
	free(dst);
	return 0;
}
