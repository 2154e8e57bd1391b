/* Synthetic reference streams (locprof/synth.h).
 *
 * Assumptions: addresses are base + offset with 64-bit wrap-around; the
 * zipf sampler is Hörmann and Derflinger's rejection-inversion ("Rejection-
 * inversion to generate variates from monotone discrete distributions",
 * ACM TOMACS 1996), as in Apache Commons RNG: O(1) expected per draw for
 * any number of lines, and exact (no truncated CDF table). */
#include <locprof/synth.h>
#include "common/error.h"
#include "common/rng.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define NPLAIN 5 /* patterns a mix draws from */
#define MIX_REGION_SHIFT 36
#define THREAD_BURST 64

static const char *const pattern_names[] = { "seq", "cyclic", "uniform", "zipf", "strided", "mix" };

struct zipf {
	double s, n;
	double h_int_x1, h_int_n, shift;
};

struct gen {
	enum lp_synth_pattern pattern;
	uint64_t base, pc;
	uint64_t pos; /* seq, strided: byte offset; cyclic: line */
};

struct lp_synth {
	struct lp_synth_params p;
	struct lp_rng rng, kind_rng;
	uint64_t produced;
	uint64_t write_below; /* a reference is a write if next() < this */
	bool all_writes;
	struct zipf zipf;
	struct gen gens[NPLAIN];
	struct gen *cur;
	uint64_t phase_left;
};

/* ---- zipf by rejection-inversion ---------------------------------------- */

/* log1p(x)/x and expm1(x)/x, accurate near 0. */
static double helper1(double x)
{
	return fabs(x) > 1e-8 ? log1p(x) / x : 1 - x * (0.5 - x * (1.0 / 3 - 0.25 * x));
}

static double helper2(double x)
{
	return fabs(x) > 1e-8 ? expm1(x) / x : 1 + x * 0.5 * (1 + x / 3 * (1 + 0.25 * x));
}

static double zipf_h(const struct zipf *z, double x)
{
	return exp(-z->s * log(x));
}

/* H(x) = integral of x^-s, shifted so that it is smooth at s = 1. */
static double zipf_hint(const struct zipf *z, double x)
{
	double lx = log(x);
	return helper2((1 - z->s) * lx) * lx;
}

static double zipf_hint_inv(const struct zipf *z, double x)
{
	double t = x * (1 - z->s);
	if (t < -1)
		t = -1; /* guards against rounding; the answer is then clamped */
	return exp(helper1(t) * x);
}

static void zipf_init(struct zipf *z, double s, uint64_t n)
{
	z->s = s;
	z->n = (double)n;
	z->h_int_x1 = zipf_hint(z, 1.5) - 1;
	z->h_int_n = zipf_hint(z, z->n + 0.5);
	z->shift = 2 - zipf_hint_inv(z, zipf_hint(z, 2.5) - zipf_h(z, 2));
}

/* A rank in [1, n]. */
static uint64_t zipf_draw(const struct zipf *z, struct lp_rng *rng)
{
	for (;;) {
		double u = z->h_int_n + lp_rng_double(rng) * (z->h_int_x1 - z->h_int_n);
		double x = zipf_hint_inv(z, u);
		double k = floor(x + 0.5);

		if (k < 1)
			k = 1;
		else if (k > z->n)
			k = z->n;
		if (k - x <= z->shift || u >= zipf_hint(z, k + 0.5) - zipf_h(z, k))
			return (uint64_t)k;
	}
}

/* ---- parameters --------------------------------------------------------- */

void lp_synth_params_default(struct lp_synth_params *p, enum lp_synth_pattern pattern)
{
	memset(p, 0, sizeof(*p));
	p->pattern = pattern;
	p->count = 1000000;
	p->line_size = 64;
	p->elem_size = 8;
	p->base = 0x10000000;
	p->footprint = 1 << 20;
	p->lines = 16384;
	p->zipf_s = 1.0;
	p->stride = 4096;
	p->write_ratio = 0.25;
	p->threads = 1;
	p->pc = 0x401000;
	p->seed = 1;
	p->phase_len = 100000;
}

int lp_synth_pattern_parse(const char *name, enum lp_synth_pattern *out)
{
	for (size_t i = 0; i < sizeof(pattern_names) / sizeof(pattern_names[0]); i++)
		if (!strcmp(name, pattern_names[i])) {
			*out = (enum lp_synth_pattern)i;
			return 0;
		}
	return lp_seterr(LP_EINVAL, "unknown pattern '%s' (known: seq, cyclic, uniform, zipf, "
			 "strided, mix)", name);
}

const char *lp_synth_pattern_name(enum lp_synth_pattern pattern)
{
	return (unsigned)pattern <= LP_SYNTH_MIX ? pattern_names[pattern] : "?";
}

static int check(const struct lp_synth_params *p)
{
	if ((unsigned)p->pattern > LP_SYNTH_MIX)
		return lp_seterr(LP_EINVAL, "unknown pattern %d", (int)p->pattern);
	if (!p->line_size || (p->line_size & (p->line_size - 1)))
		return lp_seterr(LP_EINVAL, "line size %llu is not a power of two",
				 (unsigned long long)p->line_size);
	if (!p->elem_size)
		return lp_seterr(LP_EINVAL, "element size must be at least 1 byte");
	if (p->footprint < p->elem_size)
		return lp_seterr(LP_EINVAL, "footprint %llu is smaller than an element (%llu bytes)",
				 (unsigned long long)p->footprint, (unsigned long long)p->elem_size);
	if (!p->lines || p->lines > UINT64_MAX / p->line_size || p->lines > (1ULL << 53))
		return lp_seterr(LP_EINVAL, "number of lines must be in 1..2^53 and lines x line "
				 "size must fit in 64 bits");
	if (!p->stride)
		return lp_seterr(LP_EINVAL, "stride must be at least 1 byte");
	if (!(p->zipf_s > 0) || !isfinite(p->zipf_s))
		return lp_seterr(LP_EINVAL, "zipf exponent must be a positive number");
	if (!(p->write_ratio >= 0 && p->write_ratio <= 1))
		return lp_seterr(LP_EINVAL, "write ratio must be between 0 and 1");
	if (!p->threads)
		return lp_seterr(LP_EINVAL, "number of threads must be at least 1");
	if (!p->phase_len)
		return lp_seterr(LP_EINVAL, "phase length must be at least 1 reference");
	return 0;
}

int lp_synth_new(struct lp_synth **out, const struct lp_synth_params *p)
{
	struct lp_synth *s;
	int err = check(p);

	if (err < 0)
		return err;
	if (!(s = calloc(1, sizeof(*s))))
		return LP_ENOMEM;
	s->p = *p;
	lp_rng_seed(&s->rng, p->seed);
	lp_rng_seed(&s->kind_rng, p->seed ^ 0x6b696e64ULL /* "kind" */);
	s->all_writes = p->write_ratio >= 1;
	s->write_below = (uint64_t)ldexp(p->write_ratio, 64);
	if (p->write_ratio < 1 && s->write_below == 0 && p->write_ratio > 0)
		s->write_below = 1;
	zipf_init(&s->zipf, p->zipf_s, p->lines);
	for (int j = 0; j < NPLAIN; j++) {
		s->gens[j].pattern = (enum lp_synth_pattern)j;
		s->gens[j].pc = p->pc + 16 * (uint64_t)j;
		s->gens[j].base = p->base;
		if (p->pattern == LP_SYNTH_MIX)
			s->gens[j].base += (uint64_t)j << MIX_REGION_SHIFT;
	}
	if (p->pattern != LP_SYNTH_MIX) {
		s->cur = &s->gens[p->pattern];
		s->phase_left = UINT64_MAX;
	}
	*out = s;
	return 0;
}

void lp_synth_free(struct lp_synth *s)
{
	free(s);
}

/* ---- generation --------------------------------------------------------- */

static inline uint64_t next_offset(struct lp_synth *s, struct gen *g)
{
	const struct lp_synth_params *p = &s->p;
	uint64_t off;

	switch (g->pattern) {
	case LP_SYNTH_SEQ:
		off = g->pos;
		g->pos += p->elem_size;
		if (g->pos >= p->footprint)
			g->pos = 0;
		return off;
	case LP_SYNTH_CYCLIC:
		off = g->pos * p->line_size;
		if (++g->pos == p->lines)
			g->pos = 0;
		return off;
	case LP_SYNTH_UNIFORM:
		return lp_rng_below(&s->rng, p->lines) * p->line_size;
	case LP_SYNTH_ZIPF:
		return (zipf_draw(&s->zipf, &s->rng) - 1) * p->line_size;
	case LP_SYNTH_STRIDED:
		off = g->pos;
		g->pos = (uint64_t)(((unsigned __int128)g->pos + p->stride) % p->footprint);
		return off;
	default:
		return 0;
	}
}

size_t lp_synth_fill(struct lp_synth *s, struct lp_ref *buf, size_t cap)
{
	const struct lp_synth_params *p = &s->p;
	uint64_t left = p->count - s->produced;
	size_t n = cap < left ? cap : (size_t)left;

	for (size_t i = 0; i < n; i++) {
		struct lp_ref *r = &buf[i];
		uint64_t t = s->produced + i;

		if (s->phase_left == 0 || !s->cur) {
			s->cur = &s->gens[lp_rng_below(&s->rng, NPLAIN)];
			s->phase_left = p->phase_len;
		}
		s->phase_left--;
		r->addr = s->cur->base + next_offset(s, s->cur);
		r->pc = s->cur->pc;
		r->size = p->elem_size;
		r->tid = p->threads > 1 ? (uint32_t)((t / THREAD_BURST) % p->threads) : 0;
		r->kind = (s->all_writes || lp_rng_next(&s->kind_rng) < s->write_below)
				  ? LP_REF_WRITE : LP_REF_READ;
	}
	s->produced += n;
	return n;
}
