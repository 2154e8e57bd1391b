/* The exact engine: the registry of algorithms, per-access distances
 * (lp_distcalc) and the reference-consuming engine with histograms
 * (lp_exact), one lane per line size fed the same references. */
#include "exact/exact-internal.h"

static const struct lp_exact_algo *const stack_algos[] = {
	&lp_exact_algo_fast, &lp_exact_algo_naive, &lp_exact_algo_markers,
	&lp_exact_algo_bk,   &lp_exact_algo_avl,   &lp_exact_algo_prealloc,
};
#define N_STACK_ALGOS (sizeof(stack_algos) / sizeof(stack_algos[0]))

const char *lp_exact_algorithm_names(void)
{
	return "fast, naive, markers, bk, avl, prealloc";
}

static const struct lp_exact_algo *find_algo(const struct lp_exact_opts *o)
{
	if (o->kind == LP_DIST_REUSE)
		return &lp_exact_algo_reuse;
	if (!o->algorithm)
		return &lp_exact_algo_fast;
	for (size_t i = 0; i < N_STACK_ALGOS; i++)
		if (!strcmp(stack_algos[i]->name, o->algorithm))
			return stack_algos[i];
	return NULL;
}

int lp_exact_algorithm_known(const char *name)
{
	struct lp_exact_opts o = { .kind = LP_DIST_STACK, .algorithm = name };

	return name && find_algo(&o) != NULL;
}

struct lp_distcalc {
	const struct lp_exact_algo *algo;
	void *st;
};

int lp_distcalc_new(struct lp_distcalc **out, const struct lp_exact_opts *opts)
{
	struct lp_distcalc *c;
	const struct lp_exact_algo *a = find_algo(opts);
	int err;

	*out = NULL;
	if (!a)
		return lp_seterr(LP_EINVAL, "unknown stack distance algorithm '%s' (known: %s)",
				 opts->algorithm, lp_exact_algorithm_names());
	if (!(c = calloc(1, sizeof(*c))))
		return lp_seterr(LP_ENOMEM, "out of memory");
	c->algo = a;
	if ((err = a->create(&c->st, opts)) < 0) {
		free(c);
		return err;
	}
	*out = c;
	return 0;
}

int lp_distcalc_run(struct lp_distcalc *c, const uint64_t *lines, size_t n, uint64_t *dist,
		    size_t *done)
{
	size_t off = 0, k;
	int err = 0;

	while (off < n) {
		size_t m = n - off < LP_EXACT_BATCH ? n - off : LP_EXACT_BATCH;

		k = 0;
		err = c->algo->batch(c->st, lines + off, m, dist + off, &k);
		off += k;
		if (err < 0)
			break;
	}
	if (done)
		*done = off;
	return err;
}

size_t lp_distcalc_memory(const struct lp_distcalc *c)
{
	return sizeof(*c) + c->algo->memory(c->st);
}

void lp_distcalc_free(struct lp_distcalc *c)
{
	if (!c)
		return;
	c->algo->destroy(c->st);
	free(c);
}

/* ---- the engine ------------------------------------------------------- */

/* pc -> histogram, open addressing; pcs are few (thousands), so it starts
 * small and doubles. */
/* Per-pc histograms: pc -> index (the table), histograms in order of first
 * appearance. */
struct pc_map {
	struct lp_htab index; /* pc -> index in h and pc_of */
	struct lp_hist *h;
	uint64_t *pc_of;
	size_t n, cap_h, cap_pc;
};

struct lane {
	uint64_t line_size;
	int shift;
	struct lp_distcalc *calc;
	struct lp_hist hist;
	uint64_t accesses;
	struct pc_map pcs;
};

struct lp_exact {
	struct lane *lanes;
	size_t n_lanes;
	int per_pc;
	uint64_t refs;
	uint64_t *lines, *dist, *pcbuf;
};

static void pc_map_release(struct pc_map *m)
{
	for (size_t i = 0; i < m->n; i++)
		lp_hist_release(&m->h[i]);
	lp_htab_release(&m->index);
	free(m->h);
	free(m->pc_of);
	memset(m, 0, sizeof(*m));
}

static struct lp_hist *pc_map_get(struct pc_map *m, uint64_t pc)
{
	uint64_t *k = m->index.s ? lp_htab_find(&m->index, pc) : NULL;
	int isnew;

	if (k)
		return &m->h[*k];
	if ((!m->index.s && lp_htab_init(&m->index, 64) < 0) || lp_htab_reserve(&m->index, 1) < 0 ||
	    LP_ARRAY_RESERVE(m->h, m->cap_h, m->n + 1, 64, "per-pc histograms") < 0 ||
	    LP_ARRAY_RESERVE(m->pc_of, m->cap_pc, m->n + 1, 64, "per-pc histograms") < 0)
		return NULL;
	k = lp_htab_get(&m->index, pc, &isnew);
	assert(isnew);
	*k = m->n;
	lp_hist_init(&m->h[m->n], 0);
	m->pc_of[m->n] = pc;
	return &m->h[m->n++];
}

int lp_exact_new(struct lp_exact **out, const struct lp_exact_config *cfg)
{
	static const uint64_t default_line = 64;
	const uint64_t *sizes = cfg->line_sizes ? cfg->line_sizes : &default_line;
	size_t n = cfg->line_sizes ? cfg->n_line_sizes : 1;
	struct lp_exact_opts o = { .kind = cfg->kind, .algorithm = cfg->algorithm,
				   .prealloc_n = cfg->prealloc_n };
	struct lp_exact *e;
	int err;

	*out = NULL;
	if (!n)
		return lp_seterr(LP_EINVAL, "no line size given");
	for (size_t i = 0; i < n; i++)
		if (!sizes[i] || (sizes[i] & (sizes[i] - 1)) || sizes[i] > (UINT64_C(1) << 40))
			return lp_seterr(LP_EINVAL, "line size %llu is not a power of two between 1 and 2^40",
					 (unsigned long long)sizes[i]);
	if (!(e = calloc(1, sizeof(*e))))
		return lp_seterr(LP_ENOMEM, "out of memory");
	e->per_pc = cfg->per_pc;
	e->lines = malloc(LP_EXACT_BATCH * sizeof(*e->lines));
	e->dist = malloc(LP_EXACT_BATCH * sizeof(*e->dist));
	e->pcbuf = malloc(LP_EXACT_BATCH * sizeof(*e->pcbuf));
	e->lanes = calloc(n, sizeof(*e->lanes));
	if (!e->lines || !e->dist || !e->pcbuf || !e->lanes) {
		err = lp_seterr(LP_ENOMEM, "out of memory");
		goto out_free;
	}
	for (size_t i = 0; i < n; i++) {
		struct lane *l = &e->lanes[i];

		l->line_size = sizes[i];
		l->shift = __builtin_ctzll(sizes[i]);
		e->n_lanes = i + 1;
		if ((err = lp_hist_init(&l->hist, LP_HIST_NBINS)) < 0)
			goto out_free;
		if ((err = lp_distcalc_new(&l->calc, &o)) < 0)
			goto out_free;
	}
	*out = e;
	return 0;
out_free:
	lp_exact_free(e);
	return err;
}

void lp_exact_free(struct lp_exact *e)
{
	if (!e)
		return;
	for (size_t i = 0; i < e->n_lanes; i++) {
		lp_distcalc_free(e->lanes[i].calc);
		lp_hist_release(&e->lanes[i].hist);
		pc_map_release(&e->lanes[i].pcs);
	}
	free(e->lanes);
	free(e->lines);
	free(e->dist);
	free(e->pcbuf);
	free(e);
}

static int flush(struct lp_exact *e, struct lane *l, size_t n)
{
	size_t done = 0;
	int err = lp_distcalc_run(l->calc, e->lines, n, e->dist, &done);

	l->accesses += done;
	for (size_t i = 0; i < done; i++) {
		if (lp_hist_add_one(&l->hist, e->dist[i]) < 0)
			return LP_ENOMEM;
	}
	if (e->per_pc) {
		for (size_t i = 0; i < done; i++) {
			struct lp_hist *h = pc_map_get(&l->pcs, e->pcbuf[i]);

			if (!h || lp_hist_add_one(h, e->dist[i]) < 0)
				return lp_seterr(LP_ENOMEM, "out of memory for per-pc histograms");
		}
	}
	return err;
}

static int feed_lane(struct lp_exact *e, struct lane *l, const struct lp_ref *refs, size_t n)
{
	size_t k = 0;
	int err;

	for (size_t i = 0; i < n; i++) {
		const struct lp_ref *r = &refs[i];
		uint64_t first, last, end;

		if (!lp_ref_is_access(r))
			continue;
		/* The bytes past 2^64 do not exist: an access running off the
		 * top of the address space stops at the last line. */
		end = r->size ? r->size - 1 : 0;
		end = end > UINT64_MAX - r->addr ? UINT64_MAX : r->addr + end;
		first = r->addr >> l->shift;
		last = end >> l->shift;
		for (uint64_t x = first;; x++) {
			e->lines[k] = x;
			e->pcbuf[k] = r->pc;
			if (++k == LP_EXACT_BATCH) {
				if ((err = flush(e, l, k)) < 0)
					return err;
				k = 0;
			}
			if (x == last)
				break;
		}
	}
	return k ? flush(e, l, k) : 0;
}

int lp_exact_feed(struct lp_exact *e, const struct lp_ref *refs, size_t n)
{
	int err;

	for (size_t i = 0; i < e->n_lanes; i++)
		if ((err = feed_lane(e, &e->lanes[i], refs, n)) < 0)
			return err;
	for (size_t i = 0; i < n; i++)
		e->refs += lp_ref_is_access(&refs[i]);
	return 0;
}

uint64_t lp_exact_references(const struct lp_exact *e) { return e->refs; }
size_t lp_exact_n_line_sizes(const struct lp_exact *e) { return e->n_lanes; }
uint64_t lp_exact_line_size(const struct lp_exact *e, size_t i) { return e->lanes[i].line_size; }
uint64_t lp_exact_line_accesses(const struct lp_exact *e, size_t i) { return e->lanes[i].accesses; }
uint64_t lp_exact_distinct_lines(const struct lp_exact *e, size_t i) { return e->lanes[i].hist.cold; }
const struct lp_hist *lp_exact_hist(const struct lp_exact *e, size_t i) { return &e->lanes[i].hist; }
size_t lp_exact_pc_count(const struct lp_exact *e, size_t i) { return e->lanes[i].pcs.n; }

const struct lp_hist *lp_exact_pc_hist(const struct lp_exact *e, size_t i, size_t k, uint64_t *pc)
{
	const struct pc_map *m = &e->lanes[i].pcs;

	if (k >= m->n)
		return NULL;
	if (pc)
		*pc = m->pc_of[k];
	return &m->h[k];
}

size_t lp_exact_memory(const struct lp_exact *e)
{
	size_t total = sizeof(*e) + 3 * LP_EXACT_BATCH * sizeof(uint64_t);

	for (size_t i = 0; i < e->n_lanes; i++) {
		const struct lane *l = &e->lanes[i];

		total += lp_distcalc_memory(l->calc) + l->hist.cap * sizeof(uint64_t);
		for (size_t k = 0; k < l->pcs.n; k++)
			total += l->pcs.h[k].cap * sizeof(uint64_t);
		total += (l->pcs.index.s ? lp_htab_memory(&l->pcs.index) : 0) +
			 l->pcs.cap_h * sizeof(struct lp_hist) + l->pcs.cap_pc * sizeof(uint64_t);
	}
	return total;
}
