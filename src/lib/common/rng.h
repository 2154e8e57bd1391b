/* Internal: the seeded pseudo-random generator every part of locprof uses,
 * so that runs with the same seed are reproducible bit for bit.
 * xoshiro256** (Blackman & Vigna), seeded through splitmix64. */
#ifndef LP_COMMON_RNG_H
#define LP_COMMON_RNG_H

#include <math.h>
#include <stdint.h>

struct lp_rng {
	uint64_t s[4];
};

static inline uint64_t lp_splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static inline void lp_rng_seed(struct lp_rng *r, uint64_t seed)
{
	for (int i = 0; i < 4; i++)
		r->s[i] = lp_splitmix64(&seed);
}

static inline uint64_t lp_rng_rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

static inline uint64_t lp_rng_next(struct lp_rng *r)
{
	uint64_t *s = r->s;
	uint64_t result = lp_rng_rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = lp_rng_rotl(s[3], 45);
	return result;
}

/* Uniform double in [0, 1). */
static inline double lp_rng_double(struct lp_rng *r)
{
	return (double)(lp_rng_next(r) >> 11) * 0x1.0p-53;
}

/* Uniform integer in [0, n), n > 0, without modulo bias worth measuring
 * (Lemire's multiply-shift). */
static inline uint64_t lp_rng_below(struct lp_rng *r, uint64_t n)
{
	return (uint64_t)(((unsigned __int128)lp_rng_next(r) * n) >> 64);
}

/* Geometric gap >= 1 with mean 1/p: the number of trials up to and
 * including the first success, each with probability p. This is what gives
 * every reference the same chance of being sampled. */
static inline uint64_t lp_rng_geometric(struct lp_rng *r, double p)
{
	double u;

	if (p >= 1.0)
		return 1;
	do
		u = lp_rng_double(r);
	while (u <= 0.0);
	return 1 + (uint64_t)floor(log(u) / log1p(-p));
}

#endif
