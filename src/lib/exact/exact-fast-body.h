/* The per-access loop of `fast`, instantiated once per instruction set by
 * exact-fast.c (which defines FB_SUFFIX, FB_ISA and FB_ATTR, then includes
 * this file). Everything here is inlined into one function per variant,
 * FB_NAME(fast_batch), compiled for that variant's target: the CPU picks
 * the variant once, at creation, so the hot loop has no indirect call and
 * no test of the CPU.
 *
 * FB_ISA: FB_GENERIC (baseline x86-64: SSE2, popcount by a library call),
 * FB_POPCNT (SSE2 + popcnt), FB_AVX2, FB_AVX512 (AVX-512F + VPOPCNTDQ). */

#define FB_CAT2(a, b) a##_##b
#define FB_CAT(a, b) FB_CAT2(a, b)
#define FB_NAME(x) FB_CAT(x, FB_SUFFIX)
#define FB_FN static inline __attribute__((always_inline)) FB_ATTR

/* Sum of the entries of a 16-entry node after position `off`, with no
 * branch on off (the scalar loop with a data-dependent bound mispredicted
 * at every level and was half of the time at M = 10^5, perf annotate). */
FB_FN uint32_t FB_NAME(node_tail)(const uint32_t *node, unsigned off)
{
#if FB_ISA == FB_AVX512
	__m512i v = _mm512_loadu_si512((const void *)node);
	__m512i idx = _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
	__mmask16 m = _mm512_cmpgt_epi32_mask(idx, _mm512_set1_epi32((int)off));

	return (uint32_t)_mm512_mask_reduce_add_epi32(m, v);
#elif FB_ISA == FB_AVX2
	__m256i o = _mm256_set1_epi32((int)off);
	__m256i lo = _mm256_loadu_si256((const __m256i *)node);
	__m256i hi = _mm256_loadu_si256((const __m256i *)(node + 8));
	__m256i i0 = _mm256_set_epi32(7, 6, 5, 4, 3, 2, 1, 0);
	__m256i i1 = _mm256_set_epi32(15, 14, 13, 12, 11, 10, 9, 8);
	__m256i a = _mm256_add_epi32(_mm256_and_si256(lo, _mm256_cmpgt_epi32(i0, o)),
				     _mm256_and_si256(hi, _mm256_cmpgt_epi32(i1, o)));
	__m128i b = _mm_add_epi32(_mm256_castsi256_si128(a), _mm256_extracti128_si256(a, 1));

	b = _mm_add_epi32(b, _mm_shuffle_epi32(b, 0x4e));
	b = _mm_add_epi32(b, _mm_shuffle_epi32(b, 0xb1));
	return (uint32_t)_mm_cvtsi128_si32(b);
#else
	static const lp_v4i idx[4] = { { 0, 1, 2, 3 }, { 4, 5, 6, 7 }, { 8, 9, 10, 11 }, { 12, 13, 14, 15 } };
	lp_v4i o = { (int32_t)off, (int32_t)off, (int32_t)off, (int32_t)off }, acc = { 0, 0, 0, 0 };

	for (int q = 0; q < 4; q++) {
		lp_v4i v;

		memcpy(&v, node + 4 * q, sizeof(v));
		acc += v & (idx[q] > o);
	}
	return (uint32_t)(acc[0] + acc[1] + acc[2] + acc[3]);
#endif
}

/* Ones of a 512-bit leaf strictly after bit 64 * wi + b, where
 * above = ~1 << b masks word wi. No branch depends on wi: a loop that
 * stopped at wi, or chose each word's mask with ?:, mispredicted on every
 * reuse (1.42x at M = 10^5 uniform once removed). With VPOPCNTDQ the eight
 * words are counted as one vector (1.11x more). */
FB_FN uint64_t FB_NAME(leaf_after)(const uint64_t *leaf, unsigned wi, uint64_t above)
{
#if FB_ISA == FB_AVX512
	__m512i v = _mm512_loadu_si512((const void *)leaf);
	__m512i widx = _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0);
	__m512i w = _mm512_set1_epi64((long long)wi);
	__mmask8 gt = _mm512_cmpgt_epi64_mask(widx, w), eq = _mm512_cmpeq_epi64_mask(widx, w);
	__m512i m = _mm512_mask_mov_epi64(_mm512_maskz_set1_epi64(gt, -1), eq,
					  _mm512_set1_epi64((long long)above));

	return (uint64_t)_mm512_reduce_add_epi64(_mm512_popcnt_epi64(_mm512_and_si512(v, m)));
#else
	uint64_t d = (uint64_t)__builtin_popcountll(leaf[wi] & above);

#pragma GCC unroll 8
	for (unsigned k = 0; k < LEAF_BITS / 64; k++) {
		uint64_t m = (uint64_t)(((int64_t)wi - (int64_t)k) >> 63); /* k > wi */

		d += (uint64_t)__builtin_popcountll(leaf[k] & m);
	}
	return d;
#endif
}

/* Slots of a bucket holding key, as a bit mask. */
FB_FN unsigned FB_NAME(match)(const struct lp_xbucket *b, uint64_t key)
{
#if FB_ISA == FB_AVX512
	__m512i v = _mm512_load_si512((const void *)b);

	return (unsigned)_mm512_cmpeq_epi64_mask(v, _mm512_set1_epi64((long long)key)) &
	       ((1u << LP_XB_SLOTS) - 1);
#elif FB_ISA == FB_AVX2
	__m256i k = _mm256_set1_epi64x((long long)key);
	__m256i a = _mm256_cmpeq_epi64(_mm256_loadu_si256((const __m256i *)b->key), k);
	__m256i c = _mm256_cmpeq_epi64(_mm256_loadu_si256((const __m256i *)(b->key + 1)), k);

	return (unsigned)_mm256_movemask_pd(_mm256_castsi256_pd(a)) |
	       (unsigned)_mm256_movemask_pd(_mm256_castsi256_pd(c)) << 1;
#else
	return lp_xbtab_match(b, key);
#endif
}

/* lp_xbtab_get() with this variant's match. */
FB_FN uint32_t *FB_NAME(get)(struct lp_xbtab *t, size_t bi, uint64_t key, int *isnew)
{
	if (__builtin_expect(key == LP_HTAB_EMPTY, 0)) {
		*isnew = !t->has_top;
		t->has_top = 1;
		return &t->top_val;
	}
	for (;;) {
		struct lp_xbucket *b = &t->b[bi];
		unsigned m = FB_NAME(match)(b, key);

		if (__builtin_expect(m != 0, 1)) {
			*isnew = 0;
			return &b->val[__builtin_ctz(m)];
		}
		if ((m = FB_NAME(match)(b, LP_HTAB_EMPTY)) != 0) {
			unsigned k = (unsigned)__builtin_ctz(m);

			b->key[k] = key;
			t->n++;
			*isnew = 1;
			return &b->val[k];
		}
		bi = bi + 1 == t->nb ? 0 : bi + 1;
	}
}

/* A reuse: the ones of B strictly after p (the stack distance), then clear
 * B(p) and set B(now), as one walk. Above the leaf, the walk stops at the
 * first level where p's and now's ancestors are the same entry: there the
 * -1 of p and the +1 of now cancel, and no entry after it can hold a one
 * (nothing lies after now). Short distances thus touch one or two levels
 * instead of all; walking all levels unconditionally measured 1.07x at
 * M = 10^5 uniform but 0.88x at 10^5 Zipf and 0.78x at 10^3 Zipf. */
FB_FN uint64_t FB_NAME(reuse)(struct fast *s, uint64_t p)
{
	const uint64_t *leaf = s->bits + (p / LEAF_BITS) * (LEAF_BITS / 64);
	unsigned wi = (unsigned)((p / 64) % (LEAF_BITS / 64));
	uint64_t now = s->now, d;
	size_t ip = (size_t)(p / LEAF_BITS), in = (size_t)(now / LEAF_BITS);

	d = FB_NAME(leaf_after)(leaf, wi, ~UINT64_C(1) << (p & 63));
	s->bits[p >> 6] &= ~(UINT64_C(1) << (p & 63));
	s->bits[now >> 6] |= UINT64_C(1) << (now & 63);
	for (int j = 0; j < s->nlevels && ip != in; j++) {
		uint32_t *node = s->lv[j] + (ip & ~(size_t)(FANOUT - 1));

		d += FB_NAME(node_tail)(node, (unsigned)(ip & (FANOUT - 1)));
		node[ip & (FANOUT - 1)]--;
		s->lv[j][in]++;
		ip /= FANOUT;
		in /= FANOUT;
	}
	return d;
}

/* The bucket of access i + PF_DIST is computed once, prefetched, and kept
 * in a ring until access i + PF_DIST is processed. */
static FB_ATTR int FB_NAME(fast_batch)(struct fast *s, const uint64_t *lines, size_t n,
				       uint64_t *dist, size_t *done)
{
	size_t ring[PF_DIST];
	int err;

	*done = 0;
	if (lp_xbtab_reserve(&s->ht, n) < 0)
		return LP_ENOMEM;
	for (size_t i = 0; i < PF_DIST && i < n; i++) {
		ring[i] = lp_xbtab_bucket(&s->ht, lines[i]);
		__builtin_prefetch(&s->ht.b[ring[i]], 1, 3);
	}
	for (size_t i = 0; i < n; i++) {
		size_t bi = ring[i % PF_DIST];
		uint32_t *v;
		int isnew;

		if (i + PF_DIST < n) {
			size_t nb = lp_xbtab_bucket(&s->ht, lines[i + PF_DIST]);

			ring[i % PF_DIST] = nb;
			__builtin_prefetch(&s->ht.b[nb], 1, 3);
		}
		if (s->now == s->cap && (err = fast_compact(s)) < 0) {
			*done = i;
			return err;
		}
		v = FB_NAME(get)(&s->ht, bi, lines[i], &isnew);
		if (isnew) {
			dist[i] = LP_DIST_COLD;
			fast_set(s, s->now);
		} else {
			dist[i] = FB_NAME(reuse)(s, *v);
		}
		*v = (uint32_t)s->now++;
	}
	*done = n;
	return 0;
}

#undef FB_FN
#undef FB_NAME
#undef FB_CAT
#undef FB_CAT2
