/* The phases of a phase-guided profile (record --phases): which samples
 * each phase holds, its share of the run, and a profile of each phase
 * alone for the models (locprof/model.h, "Phases").
 *
 * Assumptions: the intervals a phase groups behave alike, so its samples
 * pooled, whatever rate each interval was sampled at, estimate the
 * distribution of its reuse distances; a phase's share of the run is its
 * line accesses. A phase whose intervals all ran at rate 0 has no
 * samples and no estimate: the others take its share in proportion (the
 * run's curve then describes the sampled phases). */
#include "model/model-internal.h"

#include "common/error.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct lp_phases {
	const struct lp_profile *p;
	unsigned li;
	struct lp_phase_info *info;
	size_t n;
	size_t *iv_phase;     /* per interval of p: index into info */
	size_t *sample_phase; /* per sample of li (profile order): index, or SIZE_MAX */
	size_t first, nsamples, unphased;
};

void lp_phases_free(struct lp_phases *ph)
{
	if (!ph)
		return;
	free(ph->info);
	free(ph->iv_phase);
	free(ph->sample_phase);
	free(ph);
}

/* An interval's place: thread and start, ordered to find a sample's. */
struct iv_key {
	uint32_t tid;
	uint64_t begin;
	size_t index; /* into p->intervals */
};

static int cmp_key(const void *a, const void *b)
{
	const struct iv_key *x = a, *y = b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->begin < y->begin ? -1 : x->begin > y->begin;
}

/* The interval (index into p->intervals) of a sample of thread tid at
 * time t: the last of the thread's starting at or before t; SIZE_MAX if
 * none. */
static size_t interval_of(const struct iv_key *k, size_t n, uint32_t tid, uint64_t t)
{
	size_t lo = 0, hi = n;

	/* first position whose (tid, begin) > (tid, t) */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (k[mid].tid < tid || (k[mid].tid == tid && k[mid].begin <= t))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || k[lo - 1].tid != tid)
		return SIZE_MAX;
	return k[lo - 1].index;
}

static int assign_samples(struct lp_phases *ph)
{
	const struct lp_profile *p = ph->p;
	struct iv_key *k = malloc(p->n_intervals * sizeof(*k));

	if (!k)
		return lp_seterr(LP_ENOMEM, "out of memory");
	for (size_t i = 0; i < p->n_intervals; i++)
		k[i] = (struct iv_key){ p->intervals[i].tid, p->intervals[i].begin[ph->li], i };
	qsort(k, p->n_intervals, sizeof(*k), cmp_key);
	for (size_t i = 0; i < ph->nsamples; i++) {
		const struct lp_sample *s = &p->samples[ph->first + i];
		size_t iv = interval_of(k, p->n_intervals, s->tid, s->time);
		ph->sample_phase[i] = iv == SIZE_MAX ? SIZE_MAX : ph->iv_phase[iv];
		if (iv == SIZE_MAX)
			ph->unphased++;
		else
			ph->info[ph->iv_phase[iv]].samples++;
	}
	free(k);
	return 0;
}

int lp_phases_new(struct lp_phases **out, const struct lp_profile *p, unsigned li)
{
	struct lp_phases *ph;
	size_t *index = NULL;
	double sampled = 0;
	int err = LP_ENOMEM;

	*out = NULL;
	if (li >= p->n_line_sizes || !p->n_intervals)
		return lp_seterr(LP_EINVAL, "the profile has no phases of line size number %u", li);
	if (!(ph = calloc(1, sizeof(*ph))))
		return lp_seterr(LP_ENOMEM, "out of memory");
	ph->p = p;
	ph->li = li;
	lp_profile_line_samples(p, li, &ph->first, &ph->nsamples);
	if (!(ph->iv_phase = malloc(p->n_intervals * sizeof(*ph->iv_phase))) ||
	    !(ph->sample_phase = malloc((ph->nsamples ? ph->nsamples : 1) * sizeof(*ph->sample_phase))) ||
	    !(ph->info = calloc(p->n_intervals, sizeof(*ph->info))) ||
	    !(index = malloc(LP_PHASE_MAX * sizeof(*index))))
		goto out_free;
	for (size_t id = 0; id < LP_PHASE_MAX; id++)
		index[id] = SIZE_MAX;
	/* phases numbered in order of first appearance */
	for (size_t i = 0; i < p->n_intervals; i++) {
		const struct lp_phase_interval *iv = &p->intervals[i];
		if (index[iv->phase] == SIZE_MAX) {
			index[iv->phase] = ph->n;
			ph->info[ph->n++].id = iv->phase;
		}
		struct lp_phase_info *in = &ph->info[index[iv->phase]];
		ph->iv_phase[i] = index[iv->phase];
		in->accesses += iv->accesses[li];
		in->references += iv->references;
		in->intervals++;
	}
	if ((err = assign_samples(ph)) < 0)
		goto out_free;
	for (size_t k = 0; k < ph->n; k++)
		if (ph->info[k].samples)
			sampled += (double)ph->info[k].accesses;
	for (size_t k = 0; k < ph->n; k++)
		ph->info[k].weight = ph->info[k].samples && sampled > 0 ? ph->info[k].accesses / sampled : 0;
	free(index);
	*out = ph;
	return 0;
out_free:
	free(index);
	lp_phases_free(ph);
	return err == LP_ENOMEM ? lp_seterr(LP_ENOMEM, "out of memory") : err;
}

size_t lp_phases_count(const struct lp_phases *ph)
{
	return ph->n;
}

const struct lp_phase_info *lp_phases_info(const struct lp_phases *ph, size_t k)
{
	return &ph->info[k];
}

const size_t *lp_phases_interval_phase(const struct lp_phases *ph)
{
	return ph->iv_phase;
}

size_t lp_phases_unphased(const struct lp_phases *ph)
{
	return ph->unphased;
}

int lp_phases_profile(const struct lp_phases *ph, size_t k, struct lp_profile *out)
{
	size_t m = 0, want = ph->info[k].samples;
	struct lp_sample *s = malloc((want ? want : 1) * sizeof(*s));

	if (!s)
		return lp_seterr(LP_ENOMEM, "out of memory");
	for (size_t i = 0; i < ph->nsamples; i++)
		if (ph->sample_phase[i] == k)
			s[m++] = ph->p->samples[ph->first + i];
	*out = *ph->p;
	out->samples = s;
	out->n_samples = out->cap_samples = m;
	out->window = UINT64_MAX;
	return 0;
}

double lp_phases_weigh(const struct lp_phases *ph, const double *v)
{
	double sum = 0, w = 0;

	for (size_t k = 0; k < ph->n; k++) {
		if (ph->info[k].weight <= 0)
			continue;
		sum += ph->info[k].weight * v[k];
		w += ph->info[k].weight;
	}
	return w > 0 ? sum : NAN;
}

/* The highest rate of each phase's intervals, and its samples taken at
 * that rate (the pool its other intervals draw from), with the interval
 * each comes from. */
struct pool {
	double top;     /* highest rate */
	size_t *s;      /* sample indices (into the line size's samples) */
	size_t *iv;     /* their interval */
	size_t n, next; /* next: the one the next copy takes */
};

static int build_pools(const struct lp_phases *ph, const struct iv_key *k, struct pool *pl)
{
	const struct lp_profile *p = ph->p;

	for (size_t i = 0; i < p->n_intervals; i++) {
		struct pool *q = &pl[ph->iv_phase[i]];
		if (p->intervals[i].rate > q->top)
			q->top = p->intervals[i].rate;
	}
	for (size_t k2 = 0; k2 < ph->n; k2++)
		if (!(pl[k2].s = malloc((ph->info[k2].samples + 1) * sizeof(size_t))) ||
		    !(pl[k2].iv = malloc((ph->info[k2].samples + 1) * sizeof(size_t))))
			return lp_seterr(LP_ENOMEM, "out of memory");
	for (size_t i = 0; i < ph->nsamples; i++) {
		const struct lp_sample *s = &p->samples[ph->first + i];
		size_t iv = interval_of(k, p->n_intervals, s->tid, s->time);
		struct pool *q;
		if (iv == SIZE_MAX)
			continue;
		q = &pl[ph->iv_phase[iv]];
		if (p->intervals[iv].rate >= q->top) {
			q->s[q->n] = i;
			q->iv[q->n++] = iv;
		}
	}
	return 0;
}

/* Copies into interval i of samples of its phase's pool: about
 * (top - rate) x its line accesses of them. */
static int fill_interval(const struct lp_phases *ph, size_t i, struct pool *q, struct lp_sample **v, size_t *n,
			 size_t *cap, double *carry)
{
	const struct lp_profile *p = ph->p;
	const struct lp_phase_interval *to = &p->intervals[i];
	double want = (q->top - to->rate) * (double)to->accesses[ph->li] + *carry;
	size_t m = want > 0 ? (size_t)want : 0;

	*carry = want - (double)m;
	if (!q->n || !m)
		return 0;
	if (*n + m > *cap) {
		size_t nc = 2 * (*n + m);
		struct lp_sample *t = realloc(*v, nc * sizeof(*t));
		if (!t)
			return lp_seterr(LP_ENOMEM, "out of memory");
		*v = t;
		*cap = nc;
	}
	for (size_t j = 0; j < m; j++) {
		size_t src = q->s[q->next], from = q->iv[q->next];
		const struct lp_phase_interval *fi = &p->intervals[from];
		struct lp_sample s = p->samples[ph->first + src];
		uint64_t off = s.time - fi->begin[ph->li], len = fi->accesses[ph->li] ? fi->accesses[ph->li] : 1;

		q->next = (q->next + 1) % q->n;
		s.time = to->begin[ph->li] + (uint64_t)((double)off / (double)len * (double)to->accesses[ph->li]);
		if (s.time >= to->begin[ph->li] + to->accesses[ph->li] && to->accesses[ph->li])
			s.time = to->begin[ph->li] + to->accesses[ph->li] - 1;
		s.tid = to->tid;
		if (s.reuse != LP_REUSE_DANGLING && s.reuse >= LP_PROFILE_CLOCK_MAX - s.time)
			continue;
		(*v)[(*n)++] = s;
	}
	return 0;
}

static int cmp_time(const void *a, const void *b)
{
	const struct lp_sample *x = a, *y = b;

	return x->time < y->time ? -1 : x->time > y->time;
}

int lp_phases_expand(const struct lp_phases *ph, struct lp_profile *out)
{
	const struct lp_profile *p = ph->p;
	struct pool *pl = calloc(ph->n ? ph->n : 1, sizeof(*pl));
	double *carry = calloc(ph->n ? ph->n : 1, sizeof(*carry));
	struct iv_key *k = malloc((p->n_intervals ? p->n_intervals : 1) * sizeof(*k));
	size_t n = ph->nsamples, cap = 2 * ph->nsamples + 64;
	struct lp_sample *v = malloc(cap * sizeof(*v));
	int err = 0;

	if (!pl || !carry || !k || !v) {
		err = lp_seterr(LP_ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < p->n_intervals; i++)
		k[i] = (struct iv_key){ p->intervals[i].tid, p->intervals[i].begin[ph->li], i };
	qsort(k, p->n_intervals, sizeof(*k), cmp_key);
	if ((err = build_pools(ph, k, pl)) < 0)
		goto out;
	if (n)
		memcpy(v, p->samples + ph->first, n * sizeof(*v));
	/* in time order, so that each phase's copies cycle through its pool
	 * as the run goes on */
	for (size_t j = 0; j < p->n_intervals && err >= 0; j++) {
		size_t i = k[j].index, kk = ph->iv_phase[i];
		err = fill_interval(ph, i, &pl[kk], &v, &n, &cap, &carry[kk]);
	}
	if (err < 0)
		goto out;
	/* the models read the samples of one line size sorted by time */
	qsort(v, n, sizeof(*v), cmp_time);
	*out = *p;
	out->samples = v;
	out->n_samples = out->cap_samples = n;
	v = NULL;
out:
	for (size_t i = 0; pl && i < ph->n; i++) {
		free(pl[i].s);
		free(pl[i].iv);
	}
	free(pl);
	free(carry);
	free(k);
	free(v);
	return err;
}
