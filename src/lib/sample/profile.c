/* The in-memory profile and its .lpp reader and writer (docs/formats.md). */
#include <locprof/profile.h>

#include "common/array.h"
#include "common/error.h"
#include "common/io.h"
#include "sample/profile-chunk.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

int lp_profile_new(struct lp_profile **out)
{
	struct lp_profile *p = calloc(1, sizeof(*p));

	if (!p)
		return lp_seterr(LP_ENOMEM, "out of memory");
	p->mpi_rank = -1;
	if (lp_profile_set_str(&p->command, "") < 0 || lp_profile_set_str(&p->host, "") < 0 ||
	    lp_profile_set_str(&p->source, "") < 0) {
		lp_profile_free(p);
		return LP_ENOMEM;
	}
	*out = p;
	return 0;
}

void lp_profile_free(struct lp_profile *p)
{
	if (!p)
		return;
	free(p->command);
	free(p->host);
	free(p->source);
	free(p->region);
	free(p->thread_refs);
	free(p->samples);
	free(p->allocs);
	free(p->stacks);
	free(p->tls);
	free(p->intervals);
	for (unsigned i = 0; i < LP_PROFILE_MAX_LINE_SIZES; i++)
		free(p->windows[i].v);
	lp_mappings_release(&p->mappings);
	free(p);
}

int lp_profile_set_str(char **field, const char *s)
{
	char *c = strdup(s ? s : "");

	if (!c)
		return lp_seterr(LP_ENOMEM, "out of memory");
	free(*field);
	*field = c;
	return 0;
}

int lp_profile_add_sample(struct lp_profile *p, const struct lp_sample *s)
{
	int err = LP_ARRAY_RESERVE(p->samples, p->cap_samples, p->n_samples + 1, 1024, "samples");

	if (err < 0)
		return err;
	p->samples[p->n_samples++] = *s;
	return 0;
}

int lp_profile_add_alloc(struct lp_profile *p, const struct lp_alloc_event *e)
{
	int err;

	if (e->kind != LP_EV_ALLOC && e->kind != LP_EV_FREE)
		return lp_seterr(LP_EINVAL, "allocation event of kind %u", e->kind);
	if ((err = LP_ARRAY_RESERVE(p->allocs, p->cap_allocs, p->n_allocs + 1, 256, "allocation events")) < 0)
		return err;
	p->allocs[p->n_allocs++] = *e;
	return 0;
}

int lp_profile_add_stack(struct lp_profile *p, const uint64_t *frames, unsigned n, uint32_t *id)
{
	struct lp_alloc_stack *st;
	int err;

	if (!n || n > LP_ALLOC_STACK_MAX)
		return lp_seterr(LP_EINVAL, "call stack of %u frames", n);
	if (p->n_stacks >= LP_ALLOC_STACKS_MAX)
		return lp_seterr(LP_EINVAL, "more than %u call stacks", LP_ALLOC_STACKS_MAX);
	if ((err = LP_ARRAY_RESERVE(p->stacks, p->cap_stacks, p->n_stacks + 1, 64, "call stacks")) < 0)
		return err;
	st = &p->stacks[p->n_stacks++];
	memset(st, 0, sizeof(*st));
	memcpy(st->frames, frames, n * sizeof(*frames));
	st->n = n;
	*id = (uint32_t)p->n_stacks;
	return 0;
}

int lp_profile_add_tls(struct lp_profile *p, const struct lp_tls_block *b)
{
	int err;

	if ((err = LP_ARRAY_RESERVE(p->tls, p->cap_tls, p->n_tls + 1, 16, "TLS segments")) < 0)
		return err;
	p->tls[p->n_tls++] = *b;
	return 0;
}

const struct lp_alloc_stack *lp_profile_event_stack(const struct lp_profile *p, const struct lp_alloc_event *e)
{
	return e->stack && e->stack <= p->n_stacks ? &p->stacks[e->stack - 1] : NULL;
}

int lp_profile_add_interval(struct lp_profile *p, const struct lp_phase_interval *iv)
{
	int err;

	if (iv->phase >= LP_PHASE_MAX || !(iv->rate >= 0.0 && iv->rate <= 1.0))
		return lp_seterr(LP_EINVAL, "phase interval with phase %u, rate %g", iv->phase, iv->rate);
	if ((err = LP_ARRAY_RESERVE(p->intervals, p->cap_intervals, p->n_intervals + 1, 256,
				    "phase intervals")) < 0)
		return err;
	p->intervals[p->n_intervals++] = *iv;
	return 0;
}

int lp_profile_set_thread_refs(struct lp_profile *p, uint32_t tid, uint64_t refs)
{
	if (tid >= p->n_threads) {
		size_t cap = p->n_threads; /* thread_refs holds at least its n_threads */
		int err = LP_ARRAY_RESERVE(p->thread_refs, cap, (size_t)tid + 1, 8, "thread counts");

		if (err < 0)
			return err;
		memset(p->thread_refs + p->n_threads, 0, ((size_t)tid + 1 - p->n_threads) * sizeof(*p->thread_refs));
		p->n_threads = tid + 1;
	}
	p->thread_refs[tid] = refs;
	return 0;
}

static int cmp_sample(const void *a, const void *b)
{
	const struct lp_sample *x = a, *y = b;

	if (x->line_idx != y->line_idx)
		return x->line_idx < y->line_idx ? -1 : 1;
	return x->time < y->time ? -1 : x->time > y->time;
}

int lp_profile_count_partial(const struct lp_profile *p, unsigned li)
{
	size_t first, n;

	if (li >= p->n_line_sizes)
		return 0;
	lp_profile_line_samples(p, li, &first, &n);
	/* sorted by (line_idx, time): the last one is the latest */
	return n && p->samples[first + n - 1].time >= p->accesses[li];
}

void lp_profile_line_samples(const struct lp_profile *p, unsigned li, size_t *first, size_t *n)
{
	size_t lo = 0, hi = p->n_samples, a, b;

	/* samples are sorted by line_idx: two binary searches */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (p->samples[mid].line_idx < li)
			lo = mid + 1;
		else
			hi = mid;
	}
	a = lo;
	hi = p->n_samples;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (p->samples[mid].line_idx <= li)
			lo = mid + 1;
		else
			hi = mid;
	}
	b = lo;
	*first = a;
	*n = b - a;
}

int lp_profile_line_index(const struct lp_profile *p, uint32_t line_size)
{
	for (unsigned i = 0; i < p->n_line_sizes; i++)
		if (p->line_sizes[i] == line_size)
			return (int)i;
	return -1;
}

uint64_t lp_profile_window_length(uint64_t total, uint64_t len)
{
	uint64_t shortest;

	if (!total)
		total = 1;
	if (!len || len > total)
		len = total;
	/* ceil(total / MAX) without total + MAX - 1, which could wrap */
	shortest = total / LP_PROFILE_MAX_WINDOWS + (total % LP_PROFILE_MAX_WINDOWS != 0);
	return len < shortest ? shortest : len;
}

uint64_t lp_profile_window_count(uint64_t total, uint64_t len)
{
	uint64_t n = total / len + (total % len != 0);

	return n ? n : 1;
}

int lp_profile_finish(struct lp_profile *p, uint64_t window)
{
	if (!window)
		window = p->window;
	for (size_t i = 0; i < p->n_samples; i++)
		if (p->samples[i].time >= LP_PROFILE_CLOCK_MAX || p->samples[i].line_idx >= p->n_line_sizes)
			return lp_seterr(LP_EINVAL, "sample %zu: time or line size out of range", i);
	if (p->n_samples > 1)
		qsort(p->samples, p->n_samples, sizeof(*p->samples), cmp_sample);
	for (unsigned li = 0; li < p->n_line_sizes; li++) {
		struct lp_window_set *ws = &p->windows[li];
		size_t first, n, nw;
		uint64_t total = p->accesses[li], len;

		lp_profile_line_samples(p, li, &first, &n);
		/* A profile cut short may lack the counts: the clock reached at
		 * least the last sampled access. */
		if (n && p->samples[first + n - 1].time >= total)
			total = p->samples[first + n - 1].time + 1;
		len = lp_profile_window_length(total, window);
		nw = (size_t)lp_profile_window_count(total, len);
		free(ws->v);
		ws->n = 0;
		ws->length = len;
		if (!(ws->v = calloc(nw, sizeof(*ws->v))))
			return lp_seterr(LP_ENOMEM, "out of memory");
		ws->n = nw;
		for (size_t w = 0; w < nw; w++) {
			uint64_t start = (uint64_t)w * len;
			ws->v[w].accesses = total - start < len ? total - start : len;
			ws->v[w].first = first;
		}
		for (size_t i = first; i < first + n; i++) {
			size_t w = (size_t)(p->samples[i].time / len);
			assert(w < nw);
			if (!ws->v[w].n)
				ws->v[w].first = i;
			ws->v[w].n++;
		}
		/* empty windows point where the next sample would be */
		for (size_t w = 0, next = first; w < nw; w++) {
			if (ws->v[w].n)
				next = ws->v[w].first + ws->v[w].n;
			else
				ws->v[w].first = next;
		}
	}
	return 0;
}

/* ---- writing --------------------------------------------------------- */

struct chunkbuf {
	uint8_t *p;
	size_t n, cap;
};

static uint8_t *cb_room(struct chunkbuf *b, size_t n)
{
	if (LP_ARRAY_RESERVE(b->p, b->cap, b->n + n, 4096, "a profile chunk") < 0)
		return NULL;
	b->n += n;
	return b->p + b->n - n;
}

static int cb_u32(struct chunkbuf *b, uint32_t v)
{
	uint8_t *d = cb_room(b, 4);
	if (!d)
		return LP_ENOMEM;
	lp_put_u32(d, v);
	return 0;
}

static int cb_u64(struct chunkbuf *b, uint64_t v)
{
	uint8_t *d = cb_room(b, 8);
	if (!d)
		return LP_ENOMEM;
	lp_put_u64(d, v);
	return 0;
}

static int cb_str(struct chunkbuf *b, const char *s)
{
	size_t n = strlen(s);
	uint8_t *d;

	if (n > UINT32_MAX / 2 || cb_u32(b, (uint32_t)n) < 0 || !(d = cb_room(b, n)))
		return LP_ENOMEM;
	memcpy(d, s, n);
	return 0;
}

static void cb_begin(struct chunkbuf *b)
{
	b->n = LP_CHUNK_HEADER_SIZE; /* room for the header; cap >= 4096 after first use */
}

static int cb_emit(struct chunkbuf *b, struct lp_out *o, uint32_t tag)
{
	size_t len = b->n - LP_CHUNK_HEADER_SIZE;

	if (len > LP_CHUNK_MAX_PAYLOAD)
		return lp_seterr(LP_ELIMIT, "profile chunk of %zu bytes is too large", len);
	lp_chunk_seal(b->p, tag, (uint32_t)len);
	return lp_out_write(o, b->p, b->n);
}

static uint64_t double_bits(double d)
{
	uint64_t u;
	memcpy(&u, &d, sizeof(u));
	return u;
}

static double bits_double(uint64_t u)
{
	double d;
	memcpy(&d, &u, sizeof(d));
	return d;
}

/* ASTK chunks: the allocation stacks, in id order. */
static int write_stacks(struct chunkbuf *b, struct lp_out *o, const struct lp_profile *p, uint32_t *nchunks)
{
	for (size_t i = 0; i < p->n_stacks; i += LP_STACKS_PER_CHUNK) {
		size_t n = p->n_stacks - i < LP_STACKS_PER_CHUNK ? p->n_stacks - i : LP_STACKS_PER_CHUNK;
		int err;

		cb_begin(b);
		if (cb_u32(b, LP_STACK_CHUNK_VERSION) < 0 || cb_u32(b, (uint32_t)i + 1) < 0 ||
		    cb_u32(b, (uint32_t)n) < 0)
			return LP_ENOMEM;
		for (size_t j = 0; j < n; j++) {
			const struct lp_alloc_stack *st = &p->stacks[i + j];
			if (cb_u32(b, st->n) < 0)
				return LP_ENOMEM;
			for (uint32_t k = 0; k < st->n; k++)
				if (cb_u64(b, st->frames[k]) < 0)
					return LP_ENOMEM;
		}
		if ((err = cb_emit(b, o, LP_CHUNK_ALLOC_STACKS)) < 0)
			return err;
		(*nchunks)++;
	}
	return 0;
}

/* TLSB: the threads' TLS segments, one chunk. */
static int write_tls(struct chunkbuf *b, struct lp_out *o, const struct lp_profile *p, uint32_t *nchunks)
{
	int err;

	if (!p->n_tls)
		return 0;
	cb_begin(b);
	if (cb_u32(b, LP_TLS_CHUNK_VERSION) < 0 || cb_u32(b, (uint32_t)p->n_tls) < 0)
		return LP_ENOMEM;
	for (size_t i = 0; i < p->n_tls; i++)
		if (cb_u64(b, p->tls[i].start) < 0 || cb_u64(b, p->tls[i].size) < 0 ||
		    cb_u64(b, p->tls[i].image) < 0 || cb_u32(b, p->tls[i].tid) < 0 || cb_u32(b, 0) < 0)
			return LP_ENOMEM;
	if ((err = cb_emit(b, o, LP_CHUNK_TLS)) < 0)
		return err;
	(*nchunks)++;
	return 0;
}

/* ALOC: the allocation events, LP_ALLOCS_PER_CHUNK a chunk. */
static int write_allocs(struct chunkbuf *b, struct lp_out *o, const struct lp_profile *p, uint32_t *nchunks)
{
	for (size_t i = 0; i < p->n_allocs; i += LP_ALLOCS_PER_CHUNK) {
		size_t n = p->n_allocs - i < LP_ALLOCS_PER_CHUNK ? p->n_allocs - i : LP_ALLOCS_PER_CHUNK;
		uint8_t *d;
		int err;

		cb_begin(b);
		if (cb_u32(b, LP_ALLOC_CHUNK_VERSION) < 0 || cb_u32(b, (uint32_t)n) < 0 ||
		    !(d = cb_room(b, n * LP_ALLOC_RECORD_SIZE)))
			return LP_ENOMEM;
		for (size_t j = 0; j < n; j++)
			lp_alloc_encode(d + j * LP_ALLOC_RECORD_SIZE, &p->allocs[i + j]);
		if ((err = cb_emit(b, o, LP_CHUNK_ALLOCS)) < 0)
			return err;
		(*nchunks)++;
	}
	return 0;
}

/* The optional chunks after the events: ALSM, REGN. */
static int write_summaries(const struct lp_profile *p, struct chunkbuf *b, struct lp_out *o,
			   uint32_t *nchunks)
{
	int err;

	if (p->alloc_flags) {
		cb_begin(b);
		if (cb_u32(b, LP_ALLOC_SUMMARY_VERSION) < 0 || cb_u32(b, p->alloc_flags) < 0 ||
		    cb_u64(b, p->alloc_total) < 0 || cb_u64(b, p->free_total) < 0 ||
		    cb_u64(b, p->alloc_bytes) < 0)
			return LP_ENOMEM;
		if ((err = cb_emit(b, o, LP_CHUNK_ALLOC_SUMMARY)) < 0)
			return err;
		(*nchunks)++;
	}
	if (p->region) {
		cb_begin(b);
		if (cb_u32(b, LP_REGION_VERSION) < 0 || cb_str(b, p->region) < 0 ||
		    cb_u64(b, p->region_skipped) < 0 || cb_u64(b, p->region_entries) < 0)
			return LP_ENOMEM;
		if ((err = cb_emit(b, o, LP_CHUNK_REGION)) < 0)
			return err;
		(*nchunks)++;
	}
	return 0;
}

/* One PHAS chunk's payload: n intervals from iv. */
static int write_phases(struct chunkbuf *b, const struct lp_profile *p, const struct lp_phase_interval *iv,
			size_t n)
{
	cb_begin(b);
	if (cb_u32(b, LP_PHASE_CHUNK_VERSION) < 0 || cb_u32(b, p->n_line_sizes) < 0 ||
	    cb_u64(b, p->phase_interval) < 0 || cb_u32(b, (uint32_t)n) < 0)
		return lp_seterr(LP_ENOMEM, "out of memory");
	for (size_t j = 0; j < n; j++) {
		if (cb_u32(b, iv[j].tid) < 0 || cb_u32(b, iv[j].phase) < 0 ||
		    cb_u64(b, double_bits(iv[j].rate)) < 0 || cb_u64(b, iv[j].references) < 0)
			return lp_seterr(LP_ENOMEM, "out of memory");
		for (unsigned li = 0; li < p->n_line_sizes; li++)
			if (cb_u64(b, iv[j].begin[li]) < 0 || cb_u64(b, iv[j].accesses[li]) < 0)
				return lp_seterr(LP_ENOMEM, "out of memory");
	}
	return 0;
}

/* The sample chunk of samples [first, first + LP_SAMPLES_PER_CHUNK): SMPL,
 * or with shared time SMPX (each SMPL record and its shared-time fields). */
static int write_samples(const struct lp_profile *p, size_t first, struct chunkbuf *b, struct lp_out *o)
{
	size_t n = p->n_samples - first < LP_SAMPLES_PER_CHUNK ? p->n_samples - first : LP_SAMPLES_PER_CHUNK;
	size_t base = LP_SAMPLE_RECORD_SIZE_V4;
	size_t rec = base + (p->shared ? LP_SAMPLE_X_FIELDS : 0) + (p->shared && p->masks ? LP_SAMPLE_XM_FIELDS : 0);
	uint8_t *d;

	cb_begin(b);
	if ((p->shared && cb_u32(b, (uint32_t)rec) < 0) || cb_u32(b, (uint32_t)n) < 0 ||
	    !(d = cb_room(b, n * rec)))
		return LP_ENOMEM;
	for (size_t j = 0; j < n; j++) {
		const struct lp_sample *s = &p->samples[first + j];

		lp_sample_encode(d + j * rec, s);
		lp_put_u64(d + j * rec + LP_SAMPLE_RECORD_SIZE, s->reuse_addr);
		if (p->shared)
			lp_sample_x_encode(d + j * rec + base, s);
		if (p->shared && p->masks)
			lp_sample_xm_encode(d + j * rec + base + LP_SAMPLE_X_FIELDS, s);
	}
	return cb_emit(b, o, p->shared ? LP_CHUNK_SAMPLES_X : LP_CHUNK_SAMPLES);
}

int lp_profile_write(const struct lp_profile *p, const char *path)
{
	struct chunkbuf b = { 0 };
	struct lp_out *o;
	uint8_t hdr[LP_LPP_FILE_HEADER_SIZE];
	uint32_t nchunks = 0;
	int err;

	if (!cb_room(&b, 4096))
		return lp_seterr(LP_ENOMEM, "out of memory");
	if ((err = lp_out_open(&o, path)) < 0)
		goto out_buf;
	lp_lpp_file_header(hdr, LP_PROFILE_VERSION);
	if ((err = lp_out_write(o, hdr, sizeof(hdr))) < 0)
		goto out_abort;

	err = LP_ENOMEM;
	cb_begin(&b);
	if (cb_u32(&b, p->n_line_sizes) < 0)
		goto out_abort;
	for (unsigned i = 0; i < p->n_line_sizes; i++)
		if (cb_u32(&b, p->line_sizes[i]) < 0)
			goto out_abort;
	if (cb_u64(&b, double_bits(p->rate)) < 0 || cb_u64(&b, p->target_samples) < 0 ||
	    cb_u64(&b, p->seed) < 0 || cb_u64(&b, p->window) < 0 ||
	    cb_u64(&b, (uint64_t)p->date) < 0 || cb_str(&b, p->command) < 0 ||
	    cb_str(&b, p->host) < 0 || cb_str(&b, p->source) < 0)
		goto out_abort;
	if ((err = cb_emit(&b, o, LP_CHUNK_META)) < 0)
		goto out_abort;
	nchunks++;
	if (p->mpi_rank >= 0) {
		err = LP_ENOMEM;
		cb_begin(&b);
		if (cb_u32(&b, LP_RANK_CHUNK_VERSION) < 0 || cb_u32(&b, p->mpi_rank) < 0 ||
		    cb_u32(&b, p->mpi_size) < 0)
			goto out_abort;
		if ((err = cb_emit(&b, o, LP_CHUNK_RANK)) < 0)
			goto out_abort;
		nchunks++;
	}

	for (size_t i = 0; i < p->n_samples; i += LP_SAMPLES_PER_CHUNK) {
		if ((err = write_samples(p, i, &b, o)) < 0)
			goto out_abort;
		nchunks++;
	}

	err = LP_ENOMEM;
	cb_begin(&b);
	if (cb_u32(&b, p->n_line_sizes) < 0)
		goto out_abort;
	for (unsigned i = 0; i < p->n_line_sizes; i++)
		if (cb_u64(&b, p->accesses[i]) < 0)
			goto out_abort;
	if (cb_u64(&b, p->references) < 0 || cb_u32(&b, p->n_threads) < 0)
		goto out_abort;
	for (uint32_t t = 0; t < p->n_threads; t++)
		if (cb_u64(&b, p->thread_refs[t]) < 0)
			goto out_abort;
	if ((err = cb_emit(&b, o, LP_CHUNK_COUNTS)) < 0)
		goto out_abort;
	nchunks++;

	for (unsigned li = 0; li < p->n_line_sizes; li++) {
		const struct lp_window_set *ws = &p->windows[li];
		err = LP_ENOMEM;
		cb_begin(&b);
		if (cb_u32(&b, li) < 0 || cb_u64(&b, ws->length) < 0 || cb_u64(&b, ws->n) < 0)
			goto out_abort;
		for (size_t w = 0; w < ws->n; w++)
			if (cb_u64(&b, ws->v[w].first) < 0 || cb_u64(&b, ws->v[w].n) < 0 ||
			    cb_u64(&b, ws->v[w].accesses) < 0)
				goto out_abort;
		if ((err = cb_emit(&b, o, LP_CHUNK_WINDOWS)) < 0)
			goto out_abort;
		nchunks++;
	}

	err = LP_ENOMEM;
	cb_begin(&b);
	if (cb_u32(&b, (uint32_t)p->mappings.n) < 0)
		goto out_abort;
	for (size_t i = 0; i < p->mappings.n; i++) {
		const struct lp_mapping *m = &p->mappings.v[i];
		uint8_t *d;
		if (cb_u64(&b, m->start) < 0 || cb_u64(&b, m->end) < 0 ||
		    cb_u64(&b, m->file_offset) < 0 || !(d = cb_room(&b, 1 + LP_BUILD_ID_MAX)))
			goto out_abort;
		d[0] = m->build_id_len;
		memcpy(d + 1, m->build_id, LP_BUILD_ID_MAX);
		if (cb_str(&b, m->path) < 0)
			goto out_abort;
	}
	if ((err = cb_emit(&b, o, LP_CHUNK_MAPPINGS)) < 0)
		goto out_abort;
	nchunks++;

	if ((err = write_stacks(&b, o, p, &nchunks)) < 0 || (err = write_tls(&b, o, p, &nchunks)) < 0 ||
	    (err = write_allocs(&b, o, p, &nchunks)) < 0)
		goto out_abort;
	if ((err = write_summaries(p, &b, o, &nchunks)) < 0)
		goto out_abort;

	for (size_t i = 0; i < p->n_intervals; i += LP_PHASES_PER_CHUNK) {
		size_t n = p->n_intervals - i < LP_PHASES_PER_CHUNK ? p->n_intervals - i : LP_PHASES_PER_CHUNK;
		if ((err = write_phases(&b, p, p->intervals + i, n)) < 0 || (err = cb_emit(&b, o, LP_CHUNK_PHASES)) < 0)
			goto out_abort;
		nchunks++;
	}

	err = LP_ENOMEM;
	cb_begin(&b);
	if (cb_u32(&b, nchunks) < 0)
		goto out_abort;
	if ((err = cb_emit(&b, o, LP_CHUNK_END)) < 0)
		goto out_abort;
	err = lp_out_close(o);
	goto out_buf;
out_abort:
	if (err == LP_ENOMEM)
		lp_seterr(LP_ENOMEM, "out of memory");
	lp_out_abort(o);
out_buf:
	free(b.p);
	return err;
}

/* ---- reading --------------------------------------------------------- */

/* A cursor over one chunk's payload; any overrun marks it bad. */
struct cur {
	const uint8_t *p;
	size_t n, pos;
	int bad;
};

static const uint8_t *cur_take(struct cur *c, size_t n)
{
	if (c->bad || c->n - c->pos < n) {
		c->bad = 1;
		return NULL;
	}
	c->pos += n;
	return c->p + c->pos - n;
}

static uint32_t cur_u32(struct cur *c)
{
	const uint8_t *d = cur_take(c, 4);
	return d ? lp_get_u32(d) : 0;
}

static uint64_t cur_u64(struct cur *c)
{
	const uint8_t *d = cur_take(c, 8);
	return d ? lp_get_u64(d) : 0;
}

static int cur_str(struct cur *c, char **field)
{
	uint32_t n = cur_u32(c);
	const uint8_t *d = cur_take(c, n);
	char *s;

	if (!d)
		return 0;
	if (!(s = malloc((size_t)n + 1)))
		return lp_seterr(LP_ENOMEM, "out of memory");
	memcpy(s, d, n);
	s[n] = '\0';
	free(*field);
	*field = s;
	return 0;
}

/* A bad META changes nothing: a line size of 0 must not outlive the
 * chunk that is refused. */
static int parse_meta(struct lp_profile *p, struct cur *c)
{
	uint32_t n = cur_u32(c), sizes[LP_PROFILE_MAX_LINE_SIZES];

	if (n == 0 || n > LP_PROFILE_MAX_LINE_SIZES) {
		c->bad = 1;
		return 0;
	}
	for (uint32_t i = 0; i < n; i++) {
		sizes[i] = cur_u32(c);
		if (sizes[i] == 0 || (sizes[i] & (sizes[i] - 1)))
			c->bad = 1;
	}
	if (c->bad)
		return 0;
	p->n_line_sizes = n;
	memcpy(p->line_sizes, sizes, n * sizeof(*sizes));
	p->rate = bits_double(cur_u64(c));
	p->target_samples = cur_u64(c);
	p->seed = cur_u64(c);
	p->window = cur_u64(c);
	p->date = (int64_t)cur_u64(c);
	if (cur_str(c, &p->command) < 0 || cur_str(c, &p->host) < 0 || cur_str(c, &p->source) < 0)
		return LP_ENOMEM;
	if (c->bad)
		p->n_line_sizes = 0;
	return 0;
}

/* A distance after time stays on the clock (or is dangling). */
static int clock_ok(uint64_t time, uint64_t reuse)
{
	return time < LP_PROFILE_CLOCK_MAX &&
	       (reuse == LP_REUSE_DANGLING || reuse < LP_PROFILE_CLOCK_MAX - time);
}

/* SMPL (extended = 0): u32 count, records of base bytes (48, and from
 * version 4 the reuse address: 56); SMPX (extended = 1): u32 record size,
 * u32 count, records with the shared-time fields after the base ones (and,
 * where long enough, the thread masks: the profile has them when every
 * SMPX chunk does). */
static int parse_samples(struct lp_profile *p, struct cur *c, int extended, uint32_t version)
{
	uint32_t base = version >= 4 ? LP_SAMPLE_RECORD_SIZE_V4 : LP_SAMPLE_RECORD_SIZE;
	uint32_t rec = extended ? cur_u32(c) : base, n = cur_u32(c);
	const uint8_t *d;
	struct lp_sample s;

	if (rec < base + (extended ? LP_SAMPLE_X_FIELDS : 0) || rec > 4096) {
		c->bad = 1;
		return 0;
	}
	if (!(d = cur_take(c, (size_t)n * rec)))
		return 0;
	if (extended) {
		int first = !p->shared;
		p->shared = 1;
		p->masks = rec >= base + LP_SAMPLE_X_FIELDS + LP_SAMPLE_XM_FIELDS && (first || p->masks);
	}
	for (uint32_t i = 0; i < n; i++) {
		const uint8_t *r = d + (size_t)i * rec;

		memset(&s, 0, sizeof(s));
		lp_sample_decode(&s, r);
		if (version >= 4)
			s.reuse_addr = lp_get_u64(r + LP_SAMPLE_RECORD_SIZE);
		if (extended)
			lp_sample_x_decode(&s, r + base);
		if (extended && rec >= base + LP_SAMPLE_X_FIELDS + LP_SAMPLE_XM_FIELDS)
			lp_sample_xm_decode(&s, r + base + LP_SAMPLE_X_FIELDS);
		else if (!extended)
			s.coh = LP_COH_NONE;
		if (s.line_idx >= p->n_line_sizes || s.kind > LP_REF_WRITE || s.part > LP_PART_NEXT ||
		    s.coh > LP_COH_UNUSED || !clock_ok(s.time, s.reuse) ||
		    (extended && (!clock_ok(s.stime, s.sreuse) || !clock_ok(s.stime, s.sown)))) {
			c->bad = 1;
			return 0;
		}
		/* an address outside the line is not the reuse's: unknown */
		if (s.reuse_addr && (s.reuse_addr ^ s.addr) >= p->line_sizes[s.line_idx])
			s.reuse_addr = 0;
		if (lp_profile_add_sample(p, &s) < 0)
			return LP_ENOMEM;
	}
	return 0;
}

static int parse_counts(struct lp_profile *p, struct cur *c)
{
	uint32_t n = cur_u32(c), nt;
	uint64_t accesses[LP_PROFILE_MAX_LINE_SIZES];

	if (n != p->n_line_sizes) {
		c->bad = 1;
		return 0;
	}
	for (uint32_t i = 0; i < n; i++)
		if ((accesses[i] = cur_u64(c)) > LP_PROFILE_CLOCK_MAX)
			c->bad = 1;
	if (c->bad)
		return 0;
	memcpy(p->accesses, accesses, n * sizeof(*accesses));
	p->references = cur_u64(c);
	nt = cur_u32(c);
	/* each thread takes 8 bytes: a bad count cannot make us allocate
	 * more than the chunk could hold */
	if (c->bad || (uint64_t)nt * 8 > c->n - c->pos) {
		c->bad = 1;
		return 0;
	}
	for (uint32_t t = 0; t < nt; t++)
		if (lp_profile_set_thread_refs(p, t, cur_u64(c)) < 0)
			return LP_ENOMEM;
	return 0;
}

static int parse_mappings(struct lp_profile *p, struct cur *c)
{
	uint32_t n = cur_u32(c);

	for (uint32_t i = 0; i < n && !c->bad; i++) {
		uint64_t start = cur_u64(c), end = cur_u64(c), off = cur_u64(c);
		const uint8_t *id = cur_take(c, 1 + LP_BUILD_ID_MAX);
		char *path = NULL;
		int err;
		if (!id || id[0] > LP_BUILD_ID_MAX || end < start) {
			c->bad = 1;
			break;
		}
		if (cur_str(c, &path) < 0)
			return LP_ENOMEM;
		if (c->bad) {
			free(path);
			break;
		}
		err = lp_mappings_add(&p->mappings, start, end, off, path, id + 1, id[0]);
		free(path);
		if (err < 0)
			return lp_seterr(err, "out of memory");
	}
	return 0;
}

/* ALOC: a later chunk version is skipped whole (its records may differ),
 * as unknown chunks are. */
static int parse_allocs(struct lp_profile *p, struct cur *c)
{
	uint32_t version = cur_u32(c), n;
	const uint8_t *d;
	struct lp_alloc_event e;

	if (c->bad || version != LP_ALLOC_CHUNK_VERSION) {
		c->pos = c->n;
		return 0;
	}
	n = cur_u32(c);
	if (!(d = cur_take(c, (size_t)n * LP_ALLOC_RECORD_SIZE)))
		return 0;
	for (uint32_t i = 0; i < n; i++) {
		lp_alloc_decode(&e, d + (size_t)i * LP_ALLOC_RECORD_SIZE);
		if (e.kind != LP_EV_ALLOC && e.kind != LP_EV_FREE) {
			c->bad = 1;
			return 0;
		}
		if (lp_profile_add_alloc(p, &e) < 0)
			return LP_ENOMEM;
	}
	return 0;
}

/* ASTK: stacks continue the table in id order; a chunk out of order (a
 * lost one before it) or of a later version is skipped whole, and the
 * events naming its stacks then have none. */
static int parse_stacks(struct lp_profile *p, struct cur *c)
{
	uint32_t version = cur_u32(c), first = cur_u32(c), n = cur_u32(c);

	if (c->bad || version != LP_STACK_CHUNK_VERSION || first != p->n_stacks + 1) {
		c->pos = c->n;
		return 0;
	}
	for (uint32_t i = 0; i < n && !c->bad; i++) {
		uint64_t frames[LP_ALLOC_STACK_MAX];
		uint32_t depth = cur_u32(c), id;

		if (c->bad || !depth || depth > LP_ALLOC_STACK_MAX) {
			c->bad = 1;
			return 0;
		}
		for (uint32_t k = 0; k < depth; k++)
			frames[k] = cur_u64(c);
		if (c->bad)
			return 0;
		if (lp_profile_add_stack(p, frames, depth, &id) < 0)
			return LP_ENOMEM;
	}
	return 0;
}

/* TLSB: a later version is skipped whole. */
static int parse_tls(struct lp_profile *p, struct cur *c)
{
	uint32_t version = cur_u32(c), n = cur_u32(c);

	if (c->bad || version != LP_TLS_CHUNK_VERSION) {
		c->pos = c->n;
		return 0;
	}
	for (uint32_t i = 0; i < n && !c->bad; i++) {
		struct lp_tls_block b;

		b.start = cur_u64(c);
		b.size = cur_u64(c);
		b.image = cur_u64(c);
		b.tid = cur_u32(c);
		cur_u32(c);
		if (!c->bad && lp_profile_add_tls(p, &b) < 0)
			return LP_ENOMEM;
	}
	return 0;
}

/* ALSM: what the events are, and the run's totals; a later version is
 * skipped whole. The last one wins. */
static void parse_alloc_summary(struct lp_profile *p, struct cur *c)
{
	uint32_t version = cur_u32(c);

	if (c->bad || version != LP_ALLOC_SUMMARY_VERSION) {
		c->pos = c->n;
		return;
	}
	p->alloc_flags = cur_u32(c);
	p->alloc_total = cur_u64(c);
	p->free_total = cur_u64(c);
	p->alloc_bytes = cur_u64(c);
}

/* REGN: the region of interest; a later version is skipped whole. */
static int parse_region(struct lp_profile *p, struct cur *c)
{
	uint32_t version = cur_u32(c);
	char *region = NULL;

	if (c->bad || version != LP_REGION_VERSION) {
		c->pos = c->n;
		return 0;
	}
	if (cur_str(c, &region) < 0)
		return lp_seterr(LP_ENOMEM, "out of memory");
	if (c->bad) {
		free(region);
		return 0;
	}
	free(p->region);
	p->region = region;
	p->region_skipped = cur_u64(c);
	p->region_entries = cur_u64(c);
	return 0;
}

/* PHAS: a later section version is skipped whole; an interval with a
 * phase id out of range, a rate outside [0, 1] or a clock past
 * LP_PROFILE_CLOCK_MAX makes the chunk damaged. */
static int parse_phases(struct lp_profile *p, struct cur *c)
{
	uint32_t version = cur_u32(c), nl, n;
	struct lp_phase_interval iv;

	if (c->bad || version != LP_PHASE_CHUNK_VERSION) {
		c->pos = c->n;
		return 0;
	}
	nl = cur_u32(c);
	p->phase_interval = cur_u64(c);
	n = cur_u32(c);
	if (c->bad || nl != p->n_line_sizes || (uint64_t)n * (24 + 16 * (uint64_t)nl) != c->n - c->pos) {
		c->bad = 1;
		return 0;
	}
	for (uint32_t i = 0; i < n; i++) {
		memset(&iv, 0, sizeof(iv));
		iv.tid = cur_u32(c);
		iv.phase = cur_u32(c);
		iv.rate = bits_double(cur_u64(c));
		iv.references = cur_u64(c);
		for (uint32_t li = 0; li < nl; li++) {
			iv.begin[li] = cur_u64(c);
			iv.accesses[li] = cur_u64(c);
			if (iv.begin[li] >= LP_PROFILE_CLOCK_MAX || iv.accesses[li] >= LP_PROFILE_CLOCK_MAX - iv.begin[li])
				c->bad = 1;
		}
		if (c->bad || iv.phase >= LP_PHASE_MAX || !(iv.rate >= 0.0 && iv.rate <= 1.0)) {
			c->bad = 1;
			return 0;
		}
		if (lp_profile_add_interval(p, &iv) < 0)
			return LP_ENOMEM;
	}
	return 0;
}

/* RANK: a later version is skipped whole; a rank outside the world is
 * damage. */
static void parse_rank(struct lp_profile *p, struct cur *c)
{
	uint32_t version = cur_u32(c), rank, size;

	if (c->bad || version != LP_RANK_CHUNK_VERSION) {
		c->pos = c->n;
		return;
	}
	rank = cur_u32(c);
	size = cur_u32(c);
	if (c->bad || rank > INT32_MAX || (size && rank >= size)) {
		c->bad = 1;
		return;
	}
	p->mpi_rank = (int32_t)rank;
	p->mpi_size = size;
}

/* After the end chunk: two profiles concatenated, or junk, is damage
 * (LP_ECORRUPT) rather than silence; the reader stops at the first end
 * chunk. */
static int after_end(struct lp_in *in, const char *path)
{
	const uint8_t *rest;
	ssize_t got = lp_in_peek(in, &rest, 1);

	if (got < 0)
		return (int)got;
	if (got > 0)
		return lp_seterr(LP_ECORRUPT, "'%s': data after the end chunk at byte %llu ignored", path,
				 (unsigned long long)lp_in_offset(in));
	return 0;
}

/* The chunks after the samples and counts; unknown tags with a good
 * checksum are skipped: later versions may add chunks. */
static int parse_other(struct lp_profile *p, uint32_t tag, struct cur *c)
{
	switch (tag) {
	case LP_CHUNK_MAPPINGS: return parse_mappings(p, c);
	case LP_CHUNK_ALLOCS: return parse_allocs(p, c);
	case LP_CHUNK_ALLOC_SUMMARY: parse_alloc_summary(p, c); return 0;
	case LP_CHUNK_ALLOC_STACKS: return parse_stacks(p, c);
	case LP_CHUNK_TLS: return parse_tls(p, c);
	case LP_CHUNK_REGION: return parse_region(p, c);
	case LP_CHUNK_PHASES: return parse_phases(p, c);
	case LP_CHUNK_RANK: parse_rank(p, c); return 0;
	default: return 0;
	}
}

int lp_profile_read(struct lp_profile **out, const char *path)
{
	struct lp_profile *p = NULL;
	struct lp_in *in;
	uint8_t hdr[LP_LPP_FILE_HEADER_SIZE], ch[LP_CHUNK_HEADER_SIZE];
	uint8_t *payload = NULL;
	uint64_t window = 0;
	uint32_t nchunks = 0;
	int have_meta = 0, ended = 0, status = 0, err;
	ssize_t got;

	*out = NULL;
	if ((err = lp_in_open(&in, path)) < 0)
		return err;
	if ((got = lp_in_read(in, hdr, sizeof(hdr))) < 0) {
		err = (int)got;
		goto out_in;
	}
	if (got >= 4 && !memcmp(hdr, "\x89LPT", 4)) {
		/* the commonest mistake: a trace where a profile was meant */
		err = lp_seterr(LP_EFORMAT, "'%s' is a locprof trace, not a profile: 'locprof simulate' and "
				"'locprof stackdist' read it, 'locprof sample' makes a profile of it", path);
		goto out_in;
	}
	if (got < 8 || memcmp(hdr, LP_LPP_MAGIC, 8)) {
		err = lp_seterr(LP_EFORMAT, "'%s' is not a locprof profile (bad magic)", path);
		goto out_in;
	}
	if (got < (ssize_t)sizeof(hdr)) {
		err = lp_seterr(LP_ETRUNCATED, "'%s': profile truncated in its header", path);
		goto out_in;
	}
	if (lp_get_u32(hdr + 8) < LP_PROFILE_VERSION_MIN || lp_get_u32(hdr + 8) > LP_PROFILE_VERSION) {
		err = lp_seterr(LP_EVERSION, "'%s' is a version %u profile; this locprof reads versions %u to %u",
				path, lp_get_u32(hdr + 8), LP_PROFILE_VERSION_MIN, LP_PROFILE_VERSION);
		goto out_in;
	}
	if ((err = lp_profile_new(&p)) < 0)
		goto out_in;

	while (!ended) {
		uint64_t at = lp_in_offset(in);
		uint32_t tag, len;
		struct cur c;

		if ((got = lp_in_read(in, ch, sizeof(ch))) < 0) {
			err = (int)got;
			goto out_free;
		}
		if (got < (ssize_t)sizeof(ch)) {
			status = lp_seterr(LP_ETRUNCATED,
					   "'%s': profile truncated at byte %llu (no end chunk); "
					   "read %zu samples",
					   path, (unsigned long long)at, p->n_samples);
			break;
		}
		tag = lp_get_u32(ch);
		len = lp_get_u32(ch + 4);
		if (len > LP_CHUNK_MAX_PAYLOAD) {
			status = lp_seterr(LP_ECORRUPT, "'%s': bad chunk header at byte %llu",
					   path, (unsigned long long)at);
			break;
		}
		free(payload);
		if (!(payload = malloc(len ? len : 1))) {
			err = lp_seterr(LP_ENOMEM, "out of memory");
			goto out_free;
		}
		if ((got = lp_in_read(in, payload, len)) < 0) {
			err = (int)got;
			goto out_free;
		}
		if (got < (ssize_t)len) {
			status = lp_seterr(LP_ETRUNCATED,
					   "'%s': profile truncated at byte %llu (inside a chunk); "
					   "read %zu samples",
					   path, (unsigned long long)lp_in_offset(in), p->n_samples);
			break;
		}
		if (lp_chunk_check(ch, payload) < 0) {
			status = lp_seterr(LP_ECORRUPT,
					   "'%s': damaged chunk at byte %llu (checksum); read %zu samples",
					   path, (unsigned long long)at, p->n_samples);
			break;
		}
		c = (struct cur){ payload, len, 0, 0 };
		err = 0;
		if (!have_meta && tag != LP_CHUNK_META) {
			c.bad = 1;
		} else if (tag == LP_CHUNK_META) {
			if (have_meta)
				c.bad = 1;
			else
				err = parse_meta(p, &c);
			have_meta = 1;
		} else if (tag == LP_CHUNK_SAMPLES || tag == LP_CHUNK_SAMPLES_X) {
			err = parse_samples(p, &c, tag == LP_CHUNK_SAMPLES_X, lp_get_u32(hdr + 8));
		} else if (tag == LP_CHUNK_COUNTS) {
			err = parse_counts(p, &c);
		} else if (tag == LP_CHUNK_WINDOWS) {
			uint32_t li = cur_u32(&c);
			uint64_t l = cur_u64(&c);
			if (li >= p->n_line_sizes || l == 0)
				c.bad = 1;
			else if (!window)
				window = l;
			c.pos = c.n; /* per-window lists are rebuilt from the samples */
		} else if (tag == LP_CHUNK_END) {
			if (cur_u32(&c) != nchunks)
				c.bad = 1;
			ended = 1;
		} else {
			err = parse_other(p, tag, &c);
		}
		if (err < 0)
			goto out_free;
		if (c.bad || c.pos != c.n) {
			status = lp_seterr(LP_ECORRUPT, "'%s': malformed chunk '%.4s' at byte %llu",
					   path, (const char *)ch, (unsigned long long)at);
			break;
		}
		nchunks++;
	}
	if (ended && !status && (status = after_end(in, path)) < 0 && status != LP_ECORRUPT) {
		err = status;
		goto out_free;
	}
	if (!p->n_line_sizes) {
		/* no metadata, or damaged: nothing a caller could use */
		err = status ? status : lp_seterr(LP_ECORRUPT, "'%s': profile has no metadata", path);
		goto out_free;
	}
	if ((err = lp_profile_finish(p, window)) < 0)
		goto out_free;
	free(payload);
	lp_in_free(in);
	*out = p;
	return status;
out_free:
	free(payload);
	lp_profile_free(p);
out_in:
	lp_in_free(in);
	return err;
}
