/* Collection: one run of a program at one problem size -> a run file.
 *
 * Every reference goes to the exact engine (per-pc LRU stack-distance
 * histograms for every block size at once) and to the stride tracker,
 * which measures each pc's stride at each level of its loop nest.
 *
 * Strides at run time (docs/prediction.md, "Reference groups"). Between two
 * consecutive references of a thread in the same function, control went
 * from pc a to pc b. In each loop L holding both, b either follows a in
 * L's acyclic body (same iteration) or it does not (L's back edge was
 * taken: a new iteration of L, and new instances of the loops inside L
 * that hold b). A loop holding b but not a was entered. Each loop keeps
 * the time of its last iteration and of its last entry; when pc b runs,
 * the outermost loop of its nest that iterated since b last ran gives the
 * level k of the step, and the stride at level k is b's address minus its
 * address at its first execution in the previous iteration of that loop.
 * The stride of a level is the most frequent step (Misra-Gries, 4
 * counters); under half of the steps: irregular ("~"). A perfect nest
 * (no reference between the end of an inner loop and the start of its
 * next instance) hides its outer iterations: those levels stay unknown
 * ("?") and their steps count at the inner level, a minority that does not
 * change its most frequent stride.
 *
 * Grouping (section 2.2 of the paper): pcs with the same innermost loop and
 * equal strides at every level form a group; then groups of different
 * object loops that come from one source loop (same function and depth,
 * and a source line in common among the loops' own pcs) merge when their
 * strides are equal at the loops they share and in an integer ratio (1:n
 * or n:1) at the loops they do not. pcs in no loop form one group per
 * function; pcs in no known code one group. */
#include "prediction/prediction-internal.h"

#include "common/array.h"
#include "common/error.h"
#include "common/htab.h"
#include "common/io.h"

#include <locprof/exact.h>

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MG_K 4
#define PLACE_PCS 256
#define PLACE_REFS (1u << 20)
#define PLACE_MAX_REFS (1u << 24) /* held at most, waiting to place the binary */

struct mg {
	int64_t v[MG_K];
	uint64_t c[MG_K];
	uint64_t total;
};

struct pcst {
	uint64_t pc;
	struct lp_pred_pc info;
	uint64_t refs, last_time;
	int seen, looked_up;
	unsigned kinds; /* bit k: made a reference of kind k (enum lp_ref_kind) */
	uint64_t base[XMAX_DEPTH];
	struct mg st[XMAX_DEPTH];
	/* walks: the first address, and runs of equal steps at the innermost
	 * level (a run ends at any other step or an entry), per step value:
	 * how many runs and steps (the biggest XRUN_K values by steps) */
	uint64_t first;
	int64_t rv;
	uint64_t rl;
	struct {
		int64_t v;
		uint64_t runs, steps;
	} run[MG_K];
};

struct pend {
	uint64_t addr, pc;
	uint32_t tid;
	uint8_t kind;
};

#define XPHASE_MAX 8 /* placements of a page averaged, at most */

struct lp_pred_collect {
	struct lp_pred_code *code;
	struct lp_exact *exact;
	/* page phases: for a block size B above the phase unit, more engines
	 * see the addresses shifted by k B / nph (k = 1 .. nph - 1) */
	uint64_t phase;
	struct lp_exact *shifted[16][XPHASE_MAX];
	size_t nph[16];
	struct lp_ref *sbuf;
	size_t sbufcap;
	size_t nblocks;
	uint64_t blocks[16];
	struct lp_pred_sets *setd[16];
	size_t nsetd;
	struct pcst *pcs;
	size_t npcs, cappcs;
	struct lp_htab pcidx; /* pc -> index in pcs[] */
	struct lp_htab last;  /* (tid, func) -> index of its last pc; UINT64_MAX: none */
	uint64_t *iter_time, *entry_time;
	size_t ntime; /* both hold ntime times, 0 until set */
	uint64_t now, references;
	struct pend *pend;
	size_t npend, cappend;
	int pending;
	size_t place_pcs, place_refs; /* the next try to place the binary */
	uint64_t last_pc;
	size_t last_idx;
	struct lp_pred_collect_summary sum;
};

int lp_pred_collect_new(struct lp_pred_collect **out, const struct lp_pred_collect_config *cfg)
{
	struct lp_pred_collect *c;
	struct lp_exact_config ec = { 0 };
	int rc;

	*out = NULL;
	if (!cfg->nblocks || cfg->nblocks > 16)
		return lp_seterr(LP_EINVAL, "1 to 16 block sizes");
	for (size_t i = 0; i < cfg->nblocks; i++) {
		uint64_t b = cfg->blocks[i];
		if (!b || (b & (b - 1)) || b > (1ull << 40))
			return lp_seterr(LP_EINVAL, "block size %" PRIu64 " is not a power of two", b);
		for (size_t j = 0; j < i; j++)
			if (cfg->blocks[j] == b)
				return lp_seterr(LP_EINVAL, "block size %" PRIu64 " given twice", b);
	}
	if (cfg->nsetd > 16)
		return lp_seterr(LP_EINVAL, "at most 16 set-distance geometries");
	for (size_t i = 0; i < cfg->nsetd; i++) {
		const struct lp_pred_setspec *q = &cfg->setd[i];
		if (!q->sets || q->sets >= (1ull << 31) || !q->line || (q->line & (q->line - 1)) ||
		    q->line >= (1ull << 32))
			return lp_seterr(LP_EINVAL, "set distances of %" PRIu64 " sets of %" PRIu64
					 "-byte lines: sets must be 1 to 2^31-1, the line a power of two below 4G",
					 q->sets, q->line);
		for (size_t j = 0; j < i; j++)
			if (cfg->setd[j].sets == q->sets && cfg->setd[j].line == q->line)
				return lp_seterr(LP_EINVAL, "set distances of %" PRIu64 "x%" PRIu64 " given twice",
						 q->sets, q->line);
	}
	if (!(c = calloc(1, sizeof(*c))))
		return lp_seterr(LP_ENOMEM, "out of memory");
	for (size_t i = 0; i < cfg->nsetd; i++) {
		if ((rc = lp_pred_sets_new(&c->setd[i], cfg->setd[i].sets, cfg->setd[i].line)) < 0)
			goto fail;
		c->nsetd++;
	}
	c->nblocks = cfg->nblocks;
	memcpy(c->blocks, cfg->blocks, cfg->nblocks * sizeof(*cfg->blocks));
	ec.kind = LP_DIST_STACK;
	ec.line_sizes = c->blocks;
	ec.n_line_sizes = c->nblocks;
	ec.per_pc = 1;
	if ((rc = lp_exact_new(&c->exact, &ec)) < 0)
		goto fail;
	c->phase = cfg->phase;
	for (size_t b = 0; b < c->nblocks; b++) {
		uint64_t nph = c->phase && c->blocks[b] > c->phase ? c->blocks[b] / c->phase : 1;
		c->nph[b] = nph > XPHASE_MAX ? XPHASE_MAX : (size_t)nph;
		for (size_t k = 1; k < c->nph[b]; k++) {
			struct lp_exact_config sc = ec;
			sc.line_sizes = &c->blocks[b];
			sc.n_line_sizes = 1;
			if ((rc = lp_exact_new(&c->shifted[b][k], &sc)) < 0)
				goto fail;
		}
	}
	if ((cfg->maps && cfg->maps->n) || cfg->binary) {
		if ((rc = lp_pred_code_new(&c->code, cfg->maps, cfg->binary)) < 0)
			goto fail;
		c->pending = !lp_pred_code_placed(c->code);
	}
	if (lp_htab_init(&c->pcidx, 1024) < 0 || lp_htab_init(&c->last, 64) < 0) {
		rc = lp_seterr(LP_ENOMEM, "out of memory");
		goto fail;
	}
	c->last_idx = SIZE_MAX;
	c->place_pcs = PLACE_PCS;
	c->place_refs = PLACE_REFS;
	*out = c;
	return 0;
fail:
	lp_pred_collect_free(c);
	return rc;
}

void lp_pred_collect_free(struct lp_pred_collect *c)
{
	if (!c)
		return;
	lp_pred_code_free(c->code);
	lp_exact_free(c->exact);
	for (size_t b = 0; b < 16; b++)
		for (size_t k = 0; k < XPHASE_MAX; k++)
			lp_exact_free(c->shifted[b][k]);
	free(c->sbuf);
	for (size_t i = 0; i < c->nsetd; i++)
		lp_pred_sets_free(c->setd[i]);
	free(c->pcs);
	lp_htab_release(&c->pcidx);
	lp_htab_release(&c->last);
	free(c->iter_time);
	free(c->entry_time);
	free(c->pend);
	free(c);
}

/* ---- pcs ------------------------------------------------------------------- */

static int grow_times(struct lp_pred_collect *c)
{
	size_t n = c->code ? lp_pred_code_nloops(c->code) : 0;

	size_t cap_iter = c->ntime, cap_entry = c->ntime;

	if (n <= c->ntime)
		return 0;
	if (LP_ARRAY_RESERVE(c->iter_time, cap_iter, n, 16, "loop times") < 0 ||
	    LP_ARRAY_RESERVE(c->entry_time, cap_entry, n, 16, "loop times") < 0)
		return lp_seterr(LP_ENOMEM, "out of memory");
	memset(c->iter_time + c->ntime, 0, (cap_iter - c->ntime) * sizeof(*c->iter_time));
	memset(c->entry_time + c->ntime, 0, (cap_entry - c->ntime) * sizeof(*c->entry_time));
	c->ntime = cap_iter;
	return 0;
}

static int lookup(struct lp_pred_collect *c, struct pcst *s)
{
	s->looked_up = 1;
	s->info.module = -1;
	s->info.func = -1;
	if (!c->code || !lp_pred_code_placed(c->code))
		return 0;
	lp_pred_code_lookup(c->code, s->pc, &s->info);
	return grow_times(c);
}

/* Index of pc's state, created on first sight; SIZE_MAX on failure. */
static size_t pc_index(struct lp_pred_collect *c, uint64_t pc)
{
	uint64_t *idx;
	int isnew;

	if (pc == c->last_pc && c->last_idx != SIZE_MAX)
		return c->last_idx;
	if ((idx = lp_htab_find(&c->pcidx, pc))) {
		c->last_pc = pc;
		return c->last_idx = (size_t)*idx;
	}
	if (LP_ARRAY_RESERVE(c->pcs, c->cappcs, c->npcs + 1, 256, "pcs") < 0 || lp_htab_reserve(&c->pcidx, 1) < 0)
		return SIZE_MAX;
	struct pcst *s = &c->pcs[c->npcs];
	memset(s, 0, sizeof(*s));
	s->pc = pc;
	*lp_htab_get(&c->pcidx, pc, &isnew) = c->npcs;
	if (!c->pending && lookup(c, s) < 0)
		return SIZE_MAX;
	c->last_pc = pc;
	return c->last_idx = c->npcs++;
}

/* The last pc run by thread tid in function func: a value of the table. */
static uint64_t *last_slot(struct lp_pred_collect *c, uint32_t tid, int func)
{
	uint64_t key = (uint64_t)tid << 32 | (uint32_t)(func + 1), *v;
	int isnew;

	if (lp_htab_reserve(&c->last, 1) < 0)
		return NULL;
	v = lp_htab_get(&c->last, key, &isnew);
	if (isnew)
		*v = UINT64_MAX;
	return v;
}

static void mg_add(struct mg *m, int64_t v)
{
	m->total++;
	for (int i = 0; i < MG_K; i++)
		if (m->c[i] && m->v[i] == v) {
			m->c[i]++;
			return;
		}
	for (int i = 0; i < MG_K; i++)
		if (!m->c[i]) {
			m->v[i] = v;
			m->c[i] = 1;
			return;
		}
	for (int i = 0; i < MG_K; i++)
		m->c[i]--;
}

/* Control went from a (may be NULL) to b: record loop iterations and entries. */
static void classify(struct lp_pred_collect *c, const struct lp_pred_pc *A, const struct lp_pred_pc *B)
{
	int entered = B->depth, j = 0, cm = 0;

	if (A) {
		while (cm < A->depth && cm < B->depth &&
		       A->loop[A->depth - 1 - cm] == B->loop[B->depth - 1 - cm])
			cm++;
		entered = B->depth - cm; /* the loops of b not holding a */
		for (int t = 0; t < cm; t++) {
			int ja = A->depth - 1 - t, na = A->node[ja], nb;
			j = B->depth - 1 - t;
			nb = B->node[j];
			if (na == nb) {
				if (!B->isblock[j])
					continue; /* both in one inner loop: look inside */
				if (B->vaddr <= A->vaddr)
					c->iter_time[B->loop[j]] = c->now; /* back to the same block */
				entered = j;
				break;
			}
			if (!lp_pred_code_reach(c->code, B->loop[j], na, nb))
				c->iter_time[B->loop[j]] = c->now;
			entered = j;
			break;
		}
	}
	for (int k = 0; k < entered; k++)
		c->entry_time[B->loop[k]] = c->now;
}

static void run_end(struct pcst *s)
{
	int best = -1;

	if (!s->rl)
		return;
	for (int i = 0; i < MG_K; i++)
		if (s->run[i].runs && s->run[i].v == s->rv) {
			s->run[i].runs++;
			s->run[i].steps += s->rl;
			s->rl = 0;
			return;
		}
	for (int i = 0; i < MG_K; i++)
		if (best < 0 || s->run[i].steps < s->run[best].steps)
			best = i;
	if (!s->run[best].runs || s->run[best].steps < s->rl) {
		s->run[best].v = s->rv;
		s->run[best].runs = 1;
		s->run[best].steps = s->rl;
	}
	s->rl = 0;
}

static void strides(struct lp_pred_collect *c, struct pcst *s, uint64_t addr)
{
	const struct lp_pred_pc *B = &s->info;
	int d = B->depth, kin = -1, kit = -1;

	if (!s->seen) {
		s->seen = 1;
		s->first = addr;
		for (int k = 0; k < d; k++)
			s->base[k] = addr;
		return;
	}
	for (int k = d - 1; k >= 0; k--)
		if (c->entry_time[B->loop[k]] > s->last_time) {
			kin = k;
			break;
		}
	for (int k = d - 1; k >= 0; k--)
		if (c->iter_time[B->loop[k]] > s->last_time) {
			kit = k;
			break;
		}
	if (kit == 0 && kin < 0) {
		int64_t v = (int64_t)(addr - s->base[0]);
		if (s->rl && v == s->rv) {
			s->rl++;
		} else {
			run_end(s);
			s->rv = v;
			s->rl = 1;
		}
	} else {
		run_end(s);
	}
	if (kit > kin) {
		mg_add(&s->st[kit], (int64_t)(addr - s->base[kit]));
		for (int k = 0; k <= kit; k++)
			s->base[k] = addr;
	} else {
		for (int k = 0; k <= kin; k++)
			s->base[k] = addr;
	}
}

static int track(struct lp_pred_collect *c, uint64_t pc, uint64_t addr, uint32_t tid, unsigned kind)
{
	size_t idx = pc_index(c, pc);
	struct pcst *s;

	if (idx == SIZE_MAX)
		return lp_seterr(LP_ENOMEM, "out of memory");
	s = &c->pcs[idx];
	s->refs++;
	s->kinds |= 1u << (kind & 7);
	c->now++;
	if (s->info.func >= 0) {
		uint64_t *slot = last_slot(c, tid, s->info.func);
		if (!slot)
			return lp_seterr(LP_ENOMEM, "out of memory");
		if (s->info.depth) {
			classify(c, *slot != UINT64_MAX ? &c->pcs[*slot].info : NULL, &s->info);
			strides(c, s, addr);
		}
		*slot = idx;
	}
	s->last_time = c->now;
	return 0;
}

/* Replay the held references (after placing the binary, or giving up). */
static int replay(struct lp_pred_collect *c)
{
	int rc = 0;

	c->pending = 0;
	for (size_t i = 0; i < c->npcs; i++) {
		c->pcs[i].refs = 0;
		if ((rc = lookup(c, &c->pcs[i])) < 0)
			return rc;
	}
	c->last_idx = SIZE_MAX;
	for (size_t i = 0; i < c->npend && !rc; i++)
		rc = track(c, c->pend[i].pc, c->pend[i].addr, c->pend[i].tid, c->pend[i].kind);
	free(c->pend);
	c->pend = NULL;
	c->npend = c->cappend = 0;
	return rc;
}

/* Try to place the binary from the pcs seen so far. A trace may start with
 * many pcs of other code (the loader, under valgrind): then the references
 * stay held and the next try comes with twice as many. `last`: no later
 * try; give up (the pcs stay in no known binary). */
static int flush_pending(struct lp_pred_collect *c, int last)
{
	uint64_t *pcs;
	int rc = 0;

	if (!c->pending)
		return 0;
	if (!(pcs = malloc((c->npcs + 1) * sizeof(*pcs))))
		return lp_seterr(LP_ENOMEM, "out of memory");
	for (size_t i = 0; i < c->npcs; i++)
		pcs[i] = c->pcs[i].pc;
	/* early tries want 32 pcs in the binary: a few pcs of other code can
	 * fall on its instructions by chance; the last try takes what there is */
	if (c->npcs)
		rc = lp_pred_code_place(c->code, pcs, c->npcs, last ? 2 : 32);
	free(pcs);
	if (rc == LP_EINVAL && !last && c->npend < PLACE_MAX_REFS) {
		c->place_pcs *= 2;
		c->place_refs *= 2;
		return 0;
	}
	if (rc == LP_EINVAL)
		c->sum.place_failed = 1;
	else if (rc < 0)
		return rc;
	return replay(c);
}

int lp_pred_collect_feed(struct lp_pred_collect *c, const struct lp_ref *refs, size_t n)
{
	int rc;

	if ((rc = lp_exact_feed(c->exact, refs, n)) < 0)
		return rc;
	for (size_t b = 0; b < c->nblocks; b++)
		for (size_t k = 1; k < c->nph[b]; k++) {
			uint64_t shift = k * (c->blocks[b] / c->nph[b]);
			if (LP_ARRAY_RESERVE(c->sbuf, c->sbufcap, n, n, "shifted references") < 0)
				return lp_seterr(LP_ENOMEM, "out of memory");
			for (size_t i = 0; i < n; i++) {
				c->sbuf[i] = refs[i];
				c->sbuf[i].addr += shift;
			}
			if ((rc = lp_exact_feed(c->shifted[b][k], c->sbuf, n)) < 0)
				return rc;
		}
	for (size_t i = 0; i < n; i++) {
		const struct lp_ref *r = &refs[i];
		if (!lp_ref_is_access(r))
			continue;
		c->references++;
		if (c->nsetd) {
			size_t idx = pc_index(c, r->pc);
			if (idx == SIZE_MAX)
				return lp_seterr(LP_ENOMEM, "out of memory");
			for (size_t k = 0; k < c->nsetd; k++)
				if ((rc = lp_pred_sets_access(c->setd[k], r, idx)) < 0)
					return rc;
		}
		if (c->pending) {
			if (LP_ARRAY_RESERVE(c->pend, c->cappend, c->npend + 1, 4096, "held references") < 0)
				return lp_seterr(LP_ENOMEM, "out of memory");
			c->pend[c->npend++] = (struct pend){ r->addr, r->pc, r->tid, r->kind };
			if (pc_index(c, r->pc) == SIZE_MAX)
				return lp_seterr(LP_ENOMEM, "out of memory");
			if ((c->npcs >= c->place_pcs || c->npend >= c->place_refs) && (rc = flush_pending(c, 0)) < 0)
				return rc;
			continue;
		}
		if ((rc = track(c, r->pc, r->addr, r->tid, r->kind)) < 0)
			return rc;
	}
	return 0;
}

/* ---- grouping and the run file ------------------------------------------------ */

enum { ST_UNKNOWN = 0, ST_IRREGULAR = 1, ST_VALUE = 2 };

struct stride {
	int kind;
	int64_t v;
};

static struct stride stride_of(const struct mg *m)
{
	struct stride s = { ST_UNKNOWN, 0 };
	int best = -1;

	if (!m->total)
		return s;
	for (int i = 0; i < MG_K; i++)
		if (m->c[i] && (best < 0 || m->c[i] > m->c[best]))
			best = i;
	if (best < 0 || m->c[best] * 2 < m->total) {
		s.kind = ST_IRREGULAR;
		return s;
	}
	s.kind = ST_VALUE;
	s.v = m->v[best];
	return s;
}

static int stride_eq(struct stride a, struct stride b)
{
	return a.kind == b.kind && (a.kind != ST_VALUE || a.v == b.v);
}

static int stride_ratio(struct stride a, struct stride b)
{
	if (a.kind != b.kind)
		return 0;
	if (a.kind != ST_VALUE || a.v == b.v)
		return 1;
	if (!a.v || !b.v)
		return 0;
	return a.v % b.v == 0 || b.v % a.v == 0;
}

struct pcout {
	struct lp_pred_srcloc loc;
	struct stride st[XMAX_DEPTH];
};

static void fmt_strides(const struct pcst *s, const struct pcout *o, char *buf, size_t len)
{
	size_t k = 0;

	buf[0] = 0;
	for (int l = 0; l < s->info.depth && k + 24 < len; l++) {
		const char *sep = l ? "," : "";
		if (o->st[l].kind == ST_UNKNOWN)
			k += (size_t)snprintf(buf + k, len - k, "%s?", sep);
		else if (o->st[l].kind == ST_IRREGULAR)
			k += (size_t)snprintf(buf + k, len - k, "%s~", sep);
		else
			k += (size_t)snprintf(buf + k, len - k, "%s%" PRId64, sep, o->st[l].v);
	}
	if (!s->info.depth)
		snprintf(buf, len, "-");
}

/* The per-pc histograms of block b averaged over its phases (the base
 * engine's and the shifted ones'): counts become means, written as
 * decimals. */
static int put_phased(struct lp_pred_collect *c, struct lp_out *f, size_t b)
{
	size_t np = c->npcs, nph = c->nph[b];
	double **acc = calloc(np + 1, sizeof(*acc)), *cold = calloc(np + 1, sizeof(*cold));
	size_t *nbins = calloc(np + 1, sizeof(*nbins));
	int rc = 0;

	if (!acc || !cold || !nbins) {
		rc = lp_seterr(LP_ENOMEM, "out of memory");
		goto out;
	}
	for (size_t k = 0; k < nph && !rc; k++) {
		struct lp_exact *e = k ? c->shifted[b][k] : c->exact;
		size_t bi = k ? 0 : b, n = lp_exact_pc_count(e, bi);
		for (size_t j = 0; j < n; j++) {
			uint64_t pc;
			const struct lp_hist *h = lp_exact_pc_hist(e, bi, j, &pc);
			size_t idx = pc_index(c, pc), nb = lp_hist_nbins(h);
			if (idx == SIZE_MAX || idx >= np) {
				rc = lp_seterr(LP_ENOMEM, "out of memory");
				break;
			}
			if (nb > nbins[idx]) {
				double *na = realloc(acc[idx], nb * sizeof(*na));
				if (!na) {
					rc = lp_seterr(LP_ENOMEM, "out of memory");
					break;
				}
				memset(na + nbins[idx], 0, (nb - nbins[idx]) * sizeof(*na));
				acc[idx] = na;
				nbins[idx] = nb;
			}
			if (!acc[idx] && !(acc[idx] = calloc(1, sizeof(double)))) {
				rc = lp_seterr(LP_ENOMEM, "out of memory");
				break;
			}
			cold[idx] += (double)lp_hist_cold(h);
			for (size_t i = 0; i < nb; i++)
				acc[idx][i] += (double)lp_hist_bin_count(h, i);
		}
	}
	for (size_t idx = 0; idx < np && !rc; idx++) {
		if (!acc[idx])
			continue;
		lp_out_printf(f, "hist %zu %" PRIu64 " %.17g", idx, c->blocks[b], cold[idx] / (double)nph);
		for (size_t i = 0; i < nbins[idx]; i++) {
			uint64_t lo, hi;
			if (!acc[idx][i])
				continue;
			lp_hist_bin_range(i, &lo, &hi);
			if (lo == hi)
				lp_out_printf(f, " %" PRIu64 ":%.17g", lo, acc[idx][i] / (double)nph);
			else
				lp_out_printf(f, " %" PRIu64 "-%" PRIu64 ":%.17g", lo, hi, acc[idx][i] / (double)nph);
		}
		lp_out_write(f, "\n", 1);
	}
out:
	for (size_t i = 0; acc && i < np; i++)
		free(acc[i]);
	free(acc);
	free(cold);
	free(nbins);
	return rc;
}

static void put_hist(struct lp_out *f, size_t idx, uint64_t key, const struct lp_hist *h)
{
	size_t nbins = lp_hist_nbins(h);

	lp_out_printf(f, "hist %zu %" PRIu64 " %" PRIu64, idx, key, lp_hist_cold(h));
	for (size_t bin = 0; bin < nbins; bin++) {
		uint64_t cnt = lp_hist_bin_count(h, bin), lo, hi;
		if (!cnt)
			continue;
		lp_hist_bin_range(bin, &lo, &hi);
		if (lo == hi)
			lp_out_printf(f, " %" PRIu64 ":%" PRIu64, lo, cnt);
		else
			lp_out_printf(f, " %" PRIu64 "-%" PRIu64 ":%" PRIu64, lo, hi, cnt);
	}
	lp_out_write(f, "\n", 1);
}

/* How the pcs of a run are grouped (section 2.2 of the paper): per pc its
 * source line and strides; the loops that hold pcs, their source lines and
 * which object loops are one source loop; the groups. */
struct grouping {
	size_t np, nl, ngroups;
	struct pcout *po;  /* per pc */
	size_t *gp, *gid;  /* per pc: union-find of groups, group number */
	size_t *lsrc;      /* per loop: union-find of source loops */
	int *lused, *lout; /* per loop: holds pcs; its number in the file (-1) */
	int *lmin, *lmax;  /* per loop: source lines in lfile */
	const char **lfile;
};

static void grouping_release(struct grouping *w)
{
	free(w->po);
	free(w->gp);
	free(w->gid);
	free(w->lsrc);
	free(w->lused);
	free(w->lout);
	free(w->lmin);
	free(w->lmax);
	free(w->lfile);
}

static int grouping_init(struct lp_pred_collect *c, struct grouping *w)
{
	size_t np = c->npcs, nl = c->code ? lp_pred_code_nloops(c->code) : 0;

	w->np = np;
	w->nl = nl;
	w->po = calloc(np + 1, sizeof(*w->po));
	w->gp = malloc((np + 1) * sizeof(*w->gp));
	w->gid = malloc((np + 1) * sizeof(*w->gid));
	w->lsrc = malloc((nl + 1) * sizeof(*w->lsrc));
	w->lused = calloc(nl + 1, sizeof(*w->lused));
	w->lout = malloc((nl + 1) * sizeof(*w->lout));
	w->lmin = malloc((nl + 1) * sizeof(*w->lmin));
	w->lmax = malloc((nl + 1) * sizeof(*w->lmax));
	w->lfile = calloc(nl + 1, sizeof(*w->lfile));
	if (!w->po || !w->gp || !w->gid || !w->lsrc || !w->lused || !w->lout || !w->lmin || !w->lmax || !w->lfile)
		return lp_seterr(LP_ENOMEM, "out of memory");
	for (size_t i = 0; i < np; i++) {
		struct pcst *s = &c->pcs[i];
		if (s->info.module >= 0)
			lp_pred_code_srcline(c->code, &s->info, &w->po[i].loc);
		for (int l = 0; l < s->info.depth; l++)
			w->po[i].st[l] = stride_of(&s->st[l]);
		w->gp[i] = i;
	}
	return 0;
}

static void group_loops(const struct lp_pred_collect *c, struct grouping *w)
{
	struct pcout *po = w->po;
	size_t np = w->np, nl = w->nl, *lsrc = w->lsrc;
	int *lused = w->lused, *lmin = w->lmin, *lmax = w->lmax;
	const char **lfile = w->lfile;

	/* loops: used ones, their source lines, and source-loop identity */
	for (size_t l = 0; l < nl; l++) {
		lsrc[l] = l;
		lmin[l] = 0;
		lmax[l] = 0;
	}
	for (size_t i = 0; i < np; i++)
		for (int k = 0; k < c->pcs[i].info.depth; k++) {
			int l = c->pcs[i].info.loop[k];
			lused[l] = 1;
			if (po[i].loc.file && (!lfile[l] || !strcmp(lfile[l], po[i].loc.file))) {
				lfile[l] = po[i].loc.file;
				if (!lmin[l] || po[i].loc.line < lmin[l])
					lmin[l] = po[i].loc.line;
				if (po[i].loc.line > lmax[l])
					lmax[l] = po[i].loc.line;
			}
		}
	/* two object loops are one source loop when their own pcs share a line */
	for (size_t i = 0; i < np; i++) {
		const struct lp_pred_pc *a = &c->pcs[i].info;
		if (!a->depth || !po[i].loc.file)
			continue;
		for (size_t j = i + 1; j < np; j++) {
			const struct lp_pred_pc *b = &c->pcs[j].info;
			if (!b->depth || !po[j].loc.file || b->loop[0] == a->loop[0] || b->func != a->func ||
			    b->depth != a->depth || po[j].loc.line != po[i].loc.line || strcmp(po[j].loc.file, po[i].loc.file))
				continue;
			lp_pred_uf_union(lsrc, (size_t)a->loop[0], (size_t)b->loop[0]);
		}
	}
}

static void group_pcs(const struct lp_pred_collect *c, struct grouping *w)
{
	struct pcout *po = w->po;
	size_t np = w->np, *gp = w->gp, *lsrc = w->lsrc, *gid = w->gid, ngroups = 0;

	/* groups: same innermost loop, equal strides */
	for (size_t i = 0; i < np; i++) {
		const struct lp_pred_pc *a = &c->pcs[i].info;
		for (size_t j = i + 1; j < np; j++) {
			const struct lp_pred_pc *b = &c->pcs[j].info;
			int same = 0;
			if (lp_pred_uf_find(gp, i) == lp_pred_uf_find(gp, j))
				continue;
			if (a->module < 0 || b->module < 0) {
				same = a->module < 0 && b->module < 0;
			} else if (!a->depth || !b->depth) {
				same = !a->depth && !b->depth && a->func == b->func && a->func >= 0;
			} else if (a->depth == b->depth &&
				   lp_pred_uf_find(lsrc, (size_t)a->loop[0]) == lp_pred_uf_find(lsrc, (size_t)b->loop[0])) {
				same = 1;
				for (int l = 0; l < a->depth && same; l++)
					same = a->loop[l] == b->loop[l] ? stride_eq(po[i].st[l], po[j].st[l])
									: stride_ratio(po[i].st[l], po[j].st[l]);
			}
			if (same)
				lp_pred_uf_union(gp, i, j);
		}
	}
	for (size_t i = 0; i < np; i++)
		gid[i] = SIZE_MAX;
	for (size_t i = 0; i < np; i++) {
		size_t r = lp_pred_uf_find(gp, i);
		if (gid[r] == SIZE_MAX)
			gid[r] = ngroups++;
		gid[i] = gid[r];
	}
	w->ngroups = ngroups;
}

/* The run file's header, modules, loops and pcs. */
static void write_head(const struct lp_pred_collect *c, struct lp_out *f, const struct grouping *w, double size,
		       const char *command, uint64_t bias, int inferred)
{
	struct pcout *po = w->po;
	size_t np = w->np, nl = w->nl, *lsrc = w->lsrc, *gid = w->gid;
	int *lused = w->lused, *lout = w->lout, *lmin = w->lmin, *lmax = w->lmax;
	const char **lfile = w->lfile;
	char buf[512];

	lp_out_printf(f, "# locprof xpred run v2\n");
	lp_out_printf(f, "size %.17g\n", size);
	lp_out_printf(f, "command ");
	lp_pred_word_put(f, command ? command : "");
	lp_out_printf(f, "\nreferences %" PRIu64 "\n", c->references);
	lp_out_printf(f, "blocks");
	for (size_t b = 0; b < c->nblocks; b++)
		lp_out_printf(f, " %" PRIu64, c->blocks[b]);
	for (size_t b = 0; b < c->nsetd; b++)
		lp_out_printf(f, " %" PRIu64, LP_PRED_KEY(lp_pred_sets_sets(c->setd[b]), lp_pred_sets_line(c->setd[b])));
	lp_out_printf(f, "\nbias 0x%" PRIx64 " %s\n", bias, inferred ? "inferred" : "mappings");
	for (size_t m = 0; c->code && m < lp_pred_code_nmodules(c->code); m++) {
		lp_out_printf(f, "module %zu ", m);
		lp_pred_word_put(f, lp_pred_code_module_path(c->code, (int)m));
		lp_pred_code_module_id(c->code, (int)m, buf, sizeof(buf));
		lp_out_printf(f, " %s\n", buf);
	}
	{
		int k = 0;
		for (size_t l = 0; l < nl; l++)
			lout[l] = lused[l] ? k++ : -1;
		for (size_t l = 0; l < nl; l++) {
			const struct lp_pred_loop *L;
			if (!lused[l])
				continue;
			L = lp_pred_code_loop(c->code, (int)l);
			if (lfile[l])
				snprintf(buf, sizeof(buf), "%s:%d-%d", lfile[l], lmin[l], lmax[l]);
			else
				snprintf(buf, sizeof(buf), "0x%" PRIx64, L->header);
			lp_out_printf(f, "loop %d %d 0x%" PRIx64 " %d %d %d ", lout[l], L->module, L->header,
				L->parent >= 0 ? lout[L->parent] : -1, L->depth,
				lout[lp_pred_uf_find(lsrc, l)]);
			lp_pred_word_put(f, lp_pred_code_func_name(c->code, L->func));
			lp_out_write(f, " ", 1);
			lp_pred_word_put(f, buf);
			lp_out_write(f, "\n", 1);
		}
	}
	for (size_t i = 0; i < np; i++) {
		const struct pcst *s = &c->pcs[i];
		char st[256];
		fmt_strides(s, &po[i], st, sizeof(st));
		if (po[i].loc.file)
			snprintf(buf, sizeof(buf), "%s:%d", po[i].loc.file, po[i].loc.line);
		else
			buf[0] = 0;
		lp_out_printf(f, "pc %zu %d 0x%" PRIx64 " %" PRIu64 " %zu %d %s ", i, s->info.module,
			s->info.module >= 0 ? s->info.vaddr : s->pc, s->refs, gid[i],
			s->info.depth ? lout[s->info.loop[0]] : -1, st);
		lp_pred_word_put(f, buf);
		lp_out_write(f, " ", 1);
		lp_pred_word_put(f, s->info.func >= 0 ? lp_pred_code_func_name(c->code, s->info.func) : "");
		lp_out_write(f, "\n", 1);
		/* where the source has the access, to join runs of other builds */
		if (po[i].loc.file) {
			snprintf(buf, sizeof(buf), "%s:%d:%d%s", po[i].loc.file, po[i].loc.line, po[i].loc.col,
				 po[i].loc.chain);
			const char *kinds[4] = { "-", "R", "W", "RW" };
			lp_out_printf(f, "src %zu %s ", i,
				      kinds[((s->kinds >> LP_REF_READ) & 1) | ((s->kinds >> LP_REF_WRITE) & 1) << 1]);
			lp_pred_word_put(f, buf);
			lp_out_write(f, "\n", 1);
		}
	}
}

/* Walks, then the histograms: stack distances per block size, set
 * distances per geometry. */
static int write_walks_hists(struct lp_pred_collect *c, struct lp_out *f, const struct grouping *w)
{
	struct pcout *po = w->po;
	size_t np = w->np;
	int rc;

	/* walks: first address; runs and steps of the innermost stride */
	for (size_t i = 0; i < np; i++) {
		struct pcst *s = &c->pcs[i];
		uint64_t runs = 0, steps = 0;
		if (!s->seen || s->info.module < 0)
			continue;
		run_end(s);
		if (s->info.depth && po[i].st[0].kind == ST_VALUE)
			for (int k = 0; k < MG_K; k++)
				if (s->run[k].runs && s->run[k].v == po[i].st[0].v) {
					runs = s->run[k].runs;
					steps = s->run[k].steps;
				}
		lp_out_printf(f, "walk %zu 0x%" PRIx64 " %" PRIu64 " %" PRIu64 "\n", i, s->first, runs, steps);
	}
	for (size_t b = 0; b < c->nblocks; b++) {
		size_t n = lp_exact_pc_count(c->exact, b);
		if (c->nph[b] > 1) {
			if ((rc = put_phased(c, f, b)) < 0)
				return rc;
			continue;
		}
		for (size_t k = 0; k < n; k++) {
			uint64_t pc;
			const struct lp_hist *h = lp_exact_pc_hist(c->exact, b, k, &pc);
			size_t idx = pc_index(c, pc);
			if (idx == SIZE_MAX)
				return lp_seterr(LP_ENOMEM, "out of memory");
			put_hist(f, idx, c->blocks[b], h);
		}
	}
	for (size_t b = 0; b < c->nsetd; b++) {
		uint64_t key = LP_PRED_KEY(lp_pred_sets_sets(c->setd[b]), lp_pred_sets_line(c->setd[b]));
		for (size_t k = 0; k < c->npcs; k++) {
			const struct lp_hist *h = lp_pred_sets_hist(c->setd[b], k);
			if (h)
				put_hist(f, k, key, h);
		}
	}
	return 0;
}

int lp_pred_collect_write(struct lp_pred_collect *c, const char *path, double size, const char *command)
{
	struct grouping w = { 0 };
	struct lp_out *f = NULL;
	uint64_t bias = 0;
	int rc, inferred = 0;

	if ((rc = flush_pending(c, 1)) < 0)
		return rc;
	if ((rc = grouping_init(c, &w)) < 0)
		goto out;
	group_loops(c, &w);
	group_pcs(c, &w);
	if ((rc = lp_out_open(&f, path)) < 0)
		goto out;
	if (c->code)
		bias = lp_pred_code_bias(c->code, &inferred);
	write_head(c, f, &w, size, command, bias, inferred);
	if ((rc = write_walks_hists(c, f, &w)) < 0)
		goto out;
	lp_out_printf(f, "end\n");
	rc = lp_out_close(f);
	f = NULL;
	if (rc < 0)
		goto out;
	c->sum.references = c->references;
	c->sum.pcs = w.np;
	c->sum.groups = w.ngroups;
	for (size_t i = 0; i < w.np; i++)
		c->sum.pcs_placed += c->pcs[i].info.module >= 0;
	for (size_t l = 0; l < w.nl; l++)
		c->sum.loops += w.lused[l] != 0;
	c->sum.bias = bias;
	c->sum.bias_inferred = inferred;
	c->sum.pcs_placed = c->sum.place_failed ? 0 : c->sum.pcs_placed;
out:
	lp_out_abort(f);
	grouping_release(&w);
	return rc;
}

void lp_pred_collect_summary(const struct lp_pred_collect *c, struct lp_pred_collect_summary *out)
{
	*out = c->sum;
}
