/* MemSpy time sampling (Martonosi, Gupta, Anderson, SIGMETRICS 1993).
 *
 * Rules:
 *  - Time is counted in references (trace records that are accesses).
 *    Sample k starts at reference s_k and covers R_k references; s_0 = 0,
 *    s_{k+1} = s_k + I_k. Fixed lengths: R_k = R, I_k = I. With
 *    random_lengths (paper section 7.2), R_k is uniform in [R/2, 3R/2]
 *    and I_k = R_k * I / R, so the sampling ratio stays R/I on average.
 *  - The sampled cache is simulated only inside samples; between samples
 *    it keeps its stale contents. Its state at the start of a sample is
 *    unknown, so a line access inside a sample is *unknown* when its
 *    outcome depends on that state: for LRU, when the line has not yet been
 *    accessed in this sample in its set and fewer than W distinct lines
 *    (W = ways) of the set have been. With W = 1 this is the paper's
 *    "first reference to each cache line [frame] within a sample"; once W
 *    distinct lines of a set have been seen, LRU makes them exactly the
 *    set's contents, so every later access to the set is a known hit or a
 *    known miss. Other policies are only accepted with W = 1 (their state
 *    cannot be known from the sample alone).
 *  - Equation 1: m = (Mk + mu*U) / (Hk + Mk + U), reported with mu = 0,
 *    0.5, 1; the bounds m(0.5) +- 0.5*U/N always hold, mu being a fraction.
 *  - Wood et al.: a generation of a frame starts with a miss that fills
 *    it and ends with the miss that replaces its line; dead time is the
 *    time from the last access to the line to that replacing miss. Only
 *    generations that start and end with known misses in the same sample
 *    are measured (the paper's "Sampled" column). mu_wood = sum dead /
 *    sum generation time (time in line accesses).
 *  - Lines-touched correction (our reading: the paper gives no formula).
 *    mu_wood estimates the fraction of the C frames that are dead at the
 *    start of a sample, C*mu_wood frames; a sample that touches only U_s
 *    frames (its unknown references) leaves C - U_s frames untouched, and
 *    live frames are by definition the ones about to be referenced, so we
 *    take the untouched frames to be dead ones first: the unknown misses
 *    of sample s are clamp(C*mu_wood - (C - U_s), 0, U_s). Long samples
 *    (U_s = C) give back mu_wood.
 *  - The truth comes from a full simulation of every reference with the
 *    same cache: the miss ratio overall, during samples, and the real miss
 *    ratio of the unknown references (true_mu). */
#include "sim/sim-internal.h"

#include "common/array.h"
#include "common/error.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { MS_BUF = 8192, MS_MAX_WAYS = 4096 };

struct lp_memspy {
	struct lp_memspy_params p;
	struct lp_cache *truth;
	uint64_t sets, ways, mask, C;
	int set_modulo;
	unsigned shift;
	/* sampled cache */
	uint64_t *tag, *last, *sid, *gstart;
	uint64_t *set_sid, *set_cnt;
	/* schedule */
	struct lp_rng rng;
	uint64_t t, next_start, cur_end, cur_sid;
	int in_sample;
	/* buffered line accesses */
	uint64_t buf[MS_BUF], bsid[MS_BUF];
	uint8_t hit[MS_BUF];
	size_t nb;
	uint64_t now;
	/* counts */
	uint64_t samples, sampled_refs;
	uint64_t hk, mk, u, u_true_miss;
	uint64_t *u_per_sample, u_cap;
	double dead, gen;
	uint64_t ngen;
	uint64_t acc, mis, sacc, smis;
};

int lp_memspy_new(struct lp_memspy **out, const struct lp_memspy_params *p)
{
	struct lp_memspy *m;
	uint64_t n;
	int err;

	*out = NULL;
	if ((err = lp_cache_spec_check(&p->cache)) < 0)
		return err;
	if (!p->sample_length)
		return lp_seterr(LP_EINVAL, "sample length must not be zero");
	if (p->sample_interval < p->sample_length)
		return lp_seterr(LP_EINVAL, "sample interval %llu is shorter than the sample length %llu",
				 (unsigned long long)p->sample_interval, (unsigned long long)p->sample_length);
	if (lp_cache_spec_ways(&p->cache) > 1 && strcmp(p->cache.policy, "lru"))
		return lp_seterr(LP_EINVAL, "sampling needs LRU replacement or a direct-mapped cache: "
				 "a %s set's state cannot be known from the sample alone", p->cache.policy);
	if (lp_cache_spec_ways(&p->cache) > MS_MAX_WAYS)
		return lp_seterr(LP_ELIMIT, "sampling simulates at most %d ways", MS_MAX_WAYS);
	if (!(m = calloc(1, sizeof(*m))))
		return lp_seterr(LP_ENOMEM, "out of memory");
	m->p = *p;
	if ((err = lp_cache_new(&m->truth, &p->cache, p->seed)) < 0)
		goto out_free;
	m->ways = lp_cache_spec_ways(&p->cache);
	m->sets = lp_cache_spec_sets(&p->cache);
	m->mask = m->sets - 1;
	m->set_modulo = (m->sets & m->mask) != 0; /* line % sets, as lp_cache does */
	m->C = m->sets * m->ways;
	m->shift = lp_log2_u64(p->cache.line);
	n = m->C;
	m->tag = malloc(n * sizeof(uint64_t));
	m->last = calloc(n, sizeof(uint64_t));
	m->sid = calloc(n, sizeof(uint64_t));
	m->gstart = malloc(n * sizeof(uint64_t));
	m->set_sid = calloc(m->sets, sizeof(uint64_t));
	m->set_cnt = calloc(m->sets, sizeof(uint64_t));
	if (!m->tag || !m->last || !m->sid || !m->gstart || !m->set_sid || !m->set_cnt) {
		err = lp_seterr(LP_ENOMEM, "out of memory");
		goto out_free;
	}
	for (uint64_t i = 0; i < n; i++) {
		m->tag[i] = LP_NO_LINE;
		m->gstart[i] = UINT64_MAX;
	}
	lp_rng_seed(&m->rng, p->seed ^ 0x6d656d737079ULL);
	*out = m;
	return 0;
out_free:
	lp_memspy_free(m);
	return err;
}

void lp_memspy_free(struct lp_memspy *m)
{
	if (!m)
		return;
	lp_cache_free(m->truth);
	free(m->tag);
	free(m->last);
	free(m->sid);
	free(m->gstart);
	free(m->set_sid);
	free(m->set_cnt);
	free(m->u_per_sample);
	free(m);
}

/* One line access inside sample sid at time now; truth_hit from the full
 * simulation. */
static void sampled_access(struct lp_memspy *m, uint64_t line, uint64_t sid, uint64_t now, int truth_hit)
{
	uint64_t set = m->set_modulo ? line % m->sets : line & m->mask, base = set * m->ways, v = UINT64_MAX;

	if (m->set_sid[set] != sid) {
		m->set_sid[set] = sid;
		m->set_cnt[set] = 0;
	}
	for (uint64_t w = 0; w < m->ways; w++)
		if (m->tag[base + w] == line) {
			v = base + w;
			break;
		}
	if (v != UINT64_MAX && m->sid[v] == sid) {
		m->hk++;
		m->last[v] = now;
		return;
	}
	if (m->set_cnt[set] < m->ways) {
		/* unknown: the outcome depends on the state before the sample */
		if (v == UINT64_MAX) {
			v = base;
			for (uint64_t w = 0; w < m->ways; w++) {
				uint64_t s = base + w;
				if (m->tag[s] == LP_NO_LINE) {
					v = s;
					break;
				}
				/* never evict a line already seen in this sample */
				if (m->sid[v] == sid || (m->sid[s] != sid && m->last[s] < m->last[v]))
					v = s;
			}
			m->tag[v] = line;
		}
		m->sid[v] = sid;
		m->set_cnt[set]++;
		m->last[v] = now;
		m->gstart[v] = UINT64_MAX;
		m->u++;
		m->u_per_sample[m->samples - 1]++;
		m->u_true_miss += !truth_hit;
		return;
	}
	/* known miss: every way holds a line of this sample; evict the LRU one */
	v = base;
	for (uint64_t w = 1; w < m->ways; w++)
		if (m->last[base + w] < m->last[v])
			v = base + w;
	if (m->gstart[v] != UINT64_MAX) {
		m->dead += (double)(now - m->last[v]);
		m->gen += (double)(now - m->gstart[v]);
		m->ngen++;
	}
	m->tag[v] = line;
	m->sid[v] = sid;
	m->last[v] = now;
	m->gstart[v] = now;
	m->mk++;
}

static void flush(struct lp_memspy *m)
{
	lp_cache_access_lines(m->truth, m->buf, m->nb, m->hit, NULL);
	for (size_t i = 0; i < m->nb; i++) {
		uint64_t now = m->now++;
		m->acc++;
		m->mis += !m->hit[i];
		if (!m->bsid[i])
			continue;
		m->sacc++;
		m->smis += !m->hit[i];
		sampled_access(m, m->buf[i], m->bsid[i], now, m->hit[i]);
	}
	m->nb = 0;
}

static int start_sample(struct lp_memspy *m)
{
	uint64_t r = m->p.sample_length, iv = m->p.sample_interval;
	int rc;

	if (m->p.random_lengths) {
		uint64_t lo = r / 2 ? r / 2 : 1, hi = r + r / 2;
		uint64_t len = lo + lp_rng_below(&m->rng, hi - lo + 1);
		iv = (uint64_t)((double)len * (double)iv / (double)r + 0.5);
		if (iv < len)
			iv = len;
		r = len;
	}
	if ((rc = LP_ARRAY_RESERVE(m->u_per_sample, m->u_cap, m->samples + 1, 64, "MemSpy samples")) < 0)
		return rc;
	m->u_per_sample[m->samples++] = 0;
	m->cur_sid = m->samples;
	m->cur_end = m->t + r;
	m->next_start = m->t + iv;
	m->in_sample = 1;
	return 0;
}

int lp_memspy_refs(struct lp_memspy *m, const struct lp_ref *refs, size_t n)
{
	int err;

	for (size_t i = 0; i < n; i++) {
		uint64_t first, last;

		if (!lp_ref_is_access(&refs[i]))
			continue;
		if (m->in_sample && m->t == m->cur_end)
			m->in_sample = 0;
		if (m->t == m->next_start) {
			/* the sample state must not change under buffered accesses */
			flush(m);
			if ((err = start_sample(m)) < 0)
				return err;
		}
		if (m->in_sample)
			m->sampled_refs++;
		m->t++;
		lp_ref_lines(&refs[i], m->shift, &first, &last);
		for (uint64_t x = first;; x++) {
			m->buf[m->nb] = x;
			m->bsid[m->nb++] = m->in_sample ? m->cur_sid : 0;
			if (m->nb == MS_BUF)
				flush(m);
			if (x == last)
				break;
		}
	}
	return 0;
}

static double ratio(double a, double b)
{
	return b > 0 ? a / b : 0.0;
}

void lp_memspy_result(struct lp_memspy *m, struct lp_memspy_result *o)
{
	double N, d, touched = 0;

	flush(m); /* pending accesses; flushing changes no result */
	memset(o, 0, sizeof(*o));
	o->references = m->t;
	o->samples = m->samples;
	o->sampled_references = m->sampled_refs;
	o->lines = m->C;
	o->known_hits = m->hk;
	o->known_misses = m->mk;
	o->unknown = m->u;
	N = (double)(m->hk + m->mk + m->u);
	o->m_mu0 = ratio((double)m->mk, N);
	o->m_mu05 = ratio((double)m->mk + 0.5 * (double)m->u, N);
	o->m_mu1 = ratio((double)(m->mk + m->u), N);
	o->bound = ratio(0.5 * (double)m->u, N);
	o->generations = m->ngen;
	d = m->gen > 0 ? m->dead / m->gen : NAN;
	o->wood_mu = d;
	if (m->gen > 0) {
		for (uint64_t s = 0; s < m->samples; s++) {
			double us = (double)m->u_per_sample[s];
			double x = (double)m->C * d - ((double)m->C - us);
			touched += x < 0 ? 0 : x > us ? us : x;
		}
		o->wood_touched_mu = ratio(touched, (double)m->u);
		o->m_wood = ratio((double)m->mk + d * (double)m->u, N);
		o->m_wood_touched = ratio((double)m->mk + touched, N);
	} else {
		o->wood_touched_mu = o->m_wood = o->m_wood_touched = NAN;
	}
	o->gens_per_line_sample = ratio((double)m->ngen, (double)m->samples * (double)m->C);
	o->accesses = m->acc;
	o->misses = m->mis;
	o->true_miss_ratio = ratio((double)m->mis, (double)m->acc);
	o->sample_accesses = m->sacc;
	o->sample_misses = m->smis;
	o->true_miss_ratio_samples = ratio((double)m->smis, (double)m->sacc);
	o->true_mu = ratio((double)m->u_true_miss, (double)m->u);
}
