/* Replacement policy: least recently used.
 *
 * Rules: the victim is the way used least recently; invalid ways go
 * first. Three representations of the same order:
 *  - up to 16 ways (every L1/L2-like cache): an age byte per way, 0 = most
 *    recent, ways-1 = the victim, kept as one 16-byte vector per set. An
 *    access to the way of age a makes every younger way one older and
 *    itself 0, which is one SSE2 compare and subtract; the victim is the
 *    byte equal to ways-1 (compare + movemask). Hit and miss take the same
 *    path (the way is the matching tag's, or else the victim's; the tag is
 *    stored either way), so the loop has no branch on the outcome, which
 *    the stamp scan below had (plus a mispredicted early exit of the tag
 *    scan at every hit). The ages start as 0..ways-1 on invalid ways, so
 *    invalid ways are always older than valid ones and are filled first.
 *    (32K:8:64 on bench-sim-throughput: see docs/simulator.md.)
 *  - 17..32 ways: a time stamp per way, set on every hit or fill; the
 *    victim is the smallest stamp (invalid ways have stamp 0).
 *  - larger sets: a doubly-linked recency list per set (way numbers); a
 *    hit or a fill moves the way to the head; the victim is the tail.
 *    Invalid ways start at the tail and are never touched until filled. */
#include "sim/sim-internal.h"

#include <emmintrin.h>
#include <stdlib.h>
#include <string.h>

#define AGE_WAYS 16

static int lru_init(struct lp_cache *c)
{
	uint64_t n = c->sets * c->ways;

	if (c->ways <= AGE_WAYS) {
		if (!(c->ages = aligned_alloc(16, c->sets * 16)))
			return LP_ENOMEM;
		for (uint64_t s = 0; s < c->sets; s++)
			for (unsigned w = 0; w < 16; w++)
				/* unused bytes stay at 0x7f: never younger than an
				 * accessed way, never equal to ways-1 */
				c->ages[s * 16 + w] = w < c->ways ? (uint8_t)w : 0x7f;
		return 0;
	}
	if (c->ways <= LP_SCAN_WAYS) {
		c->stamp = calloc(n, sizeof(*c->stamp));
		return c->stamp ? 0 : LP_ENOMEM;
	}

	c->prev = malloc(n * sizeof(*c->prev));
	c->next = malloc(n * sizeof(*c->next));
	c->head = malloc(c->sets * sizeof(*c->head));
	c->tail = malloc(c->sets * sizeof(*c->tail));
	if (!c->prev || !c->next || !c->head || !c->tail)
		return LP_ENOMEM;
	for (uint64_t s = 0; s < c->sets; s++) {
		uint32_t *p = c->prev + s * c->ways, *nx = c->next + s * c->ways;
		for (uint64_t w = 0; w < c->ways; w++) {
			p[w] = w ? (uint32_t)(w - 1) : LP_NONE32;
			nx[w] = w + 1 < c->ways ? (uint32_t)(w + 1) : LP_NONE32;
		}
		c->head[s] = 0;
		c->tail[s] = (uint32_t)(c->ways - 1);
	}
	return 0;
}

/* ---- up to 16 ways: age bytes ------------------------------------------ */

/* Byte w all ones: clears the age of the accessed way. */
static const uint8_t age_clear[16][16] __attribute__((aligned(16))) = {
#define ROW(w) { [w] = 0xff }
	ROW(0), ROW(1), ROW(2),  ROW(3),  ROW(4),  ROW(5),  ROW(6),  ROW(7),
	ROW(8), ROW(9), ROW(10), ROW(11), ROW(12), ROW(13), ROW(14), ROW(15),
#undef ROW
};

/* One line access; W is a constant in the specialised copies below (the
 * tag compares unroll) and c->ways in the generic one. Returns 1 on a hit. */
static inline __attribute__((always_inline)) unsigned
lru_age_access(struct lp_cache *c, uint64_t line, uint64_t W)
{
	const uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
	uint64_t set = lp_cache_set_of(c, line), *t = c->tags + set * W;
	uint8_t *ab = c->ages + set * 16;
	unsigned m = 0, victim, w, sel;

#pragma GCC unroll 16
	for (uint64_t k = 0; k < W; k++)
		m |= (unsigned)(t[k] == line) << k;
	if (W <= 8) {
		/* the ages as 8 bytes of one u64 (SWAR) */
		uint64_t A, x, z, age;

		memcpy(&A, ab, 8);
		x = A ^ (ones * (W - 1));
		z = (x - ones) & ~x & highs; /* lowest flag: the byte equal to W-1 */
		victim = (unsigned)__builtin_ctzll(z) >> 3;
		/* select without a branch: hit or miss is data, and gcc turns
		 * ?: into a mispredicted jump here */
		sel = (unsigned)-(int)(m != 0);
		w = ((unsigned)__builtin_ctz(m | 0x10000) & sel) | (victim & ~sel);
		age = (A >> (8 * w)) & 0xff;
		/* per byte: 0x80 + age - 1 - A_k has its top bit iff A_k < age
		 * (no borrow crosses bytes: every A_k <= 0x7f) */
		A += (((ones * (0x7f + age)) - A) & highs) >> 7;
		A &= ~(UINT64_C(0xff) << (8 * w));
		memcpy(ab, &A, 8);
	} else {
		__m128i a = _mm_load_si128((const __m128i *)ab);
		unsigned age;

		victim = (unsigned)__builtin_ctz((unsigned)_mm_movemask_epi8(
			_mm_cmpeq_epi8(a, _mm_set1_epi8((char)(W - 1)))));
		sel = (unsigned)-(int)(m != 0);
		w = ((unsigned)__builtin_ctz(m | 0x10000) & sel) | (victim & ~sel);
		age = ab[w];
		a = _mm_sub_epi8(a, _mm_cmpgt_epi8(_mm_set1_epi8((char)age), a));
		a = _mm_andnot_si128(_mm_load_si128((const __m128i *)age_clear[w]), a);
		_mm_store_si128((__m128i *)ab, a);
	}
	t[w] = line;
	return m != 0;
}

static inline __attribute__((always_inline)) size_t
lru_age_batch_body(struct lp_cache *c, const uint64_t *lines, size_t n, uint8_t *hit,
		   uint64_t *miss_out, uint64_t W)
{
	size_t nm = 0;

	/* three loops, so that the tests of hit and miss_out are out of them */
	if (hit && miss_out) {
		for (size_t i = 0; i < n; i++) {
			unsigned h = lru_age_access(c, lines[i], W);

			hit[i] = (uint8_t)h;
			miss_out[nm] = lines[i]; /* nm <= i < n: in bounds */
			nm += !h;
		}
	} else if (miss_out) {
		for (size_t i = 0; i < n; i++) {
			unsigned h = lru_age_access(c, lines[i], W);

			miss_out[nm] = lines[i];
			nm += !h;
		}
	} else {
		for (size_t i = 0; i < n; i++) {
			unsigned h = lru_age_access(c, lines[i], W);

			if (hit)
				hit[i] = (uint8_t)h;
			nm += !h;
		}
	}
	c->accesses += n;
	c->misses += nm;
	return nm;
}

#define AGE_BATCH(W)                                                                          \
	static size_t lru_age_batch_##W(struct lp_cache *c, const uint64_t *lines, size_t n,   \
					uint8_t *hit, uint64_t *miss_out)                       \
	{                                                                                      \
		return lru_age_batch_body(c, lines, n, hit, miss_out, W);                      \
	}
AGE_BATCH(2)
AGE_BATCH(4)
AGE_BATCH(8)
AGE_BATCH(16)

static size_t lru_age_batch_any(struct lp_cache *c, const uint64_t *lines, size_t n, uint8_t *hit,
				uint64_t *miss_out)
{
	return lru_age_batch_body(c, lines, n, hit, miss_out, c->ways);
}

/* ---- 17 ways and more: stamps or lists ----------------------------------- */

static inline void lru_touch(struct lp_cache *c, uint64_t set, uint64_t way)
{
	uint32_t w = (uint32_t)way;
	uint32_t *p, *nx;

	if (c->ways <= LP_SCAN_WAYS) {
		c->stamp[set * c->ways + way] = ++c->clock;
		return;
	}
	if (c->head[set] == w)
		return;
	p = c->prev + set * c->ways;
	nx = c->next + set * c->ways;
	/* unlink (w is not the head, so it has a predecessor) */
	nx[p[w]] = nx[w];
	if (nx[w] != LP_NONE32)
		p[nx[w]] = p[w];
	else
		c->tail[set] = p[w];
	/* push at the head */
	p[w] = LP_NONE32;
	nx[w] = c->head[set];
	p[c->head[set]] = w;
	c->head[set] = w;
}

static inline uint64_t lru_victim(struct lp_cache *c, uint64_t set)
{
	if (c->ways <= LP_SCAN_WAYS) {
		const uint64_t *st = c->stamp + set * c->ways;
		uint64_t v = 0;
		for (uint64_t w = 1; w < c->ways; w++)
			if (st[w] < st[v])
				v = w;
		return v;
	}
	return c->tail[set];
}

LP_SIM_DEFINE_BATCH(lru_big_batch, lru_touch, lru_victim, lru_touch)

static size_t lru_batch(struct lp_cache *c, const uint64_t *lines, size_t n, uint8_t *hit,
			uint64_t *miss_out)
{
	/* one switch per batch, none per line */
	switch (c->ways) {
	case 2: return lru_age_batch_2(c, lines, n, hit, miss_out);
	case 4: return lru_age_batch_4(c, lines, n, hit, miss_out);
	case 8: return lru_age_batch_8(c, lines, n, hit, miss_out);
	case 16: return lru_age_batch_16(c, lines, n, hit, miss_out);
	default:
		if (c->ways <= AGE_WAYS)
			return lru_age_batch_any(c, lines, n, hit, miss_out);
		return lru_big_batch(c, lines, n, hit, miss_out);
	}
}

const struct lp_policy lp_policy_lru = {
	.name = "lru",
	.init = lru_init,
	.batch = lru_batch,
};
