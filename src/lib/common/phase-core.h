/* Online phase classification (record --phases; docs/runtime.md, "Phase
 * detection"), shared by the instrumentation runtime and the unit tests.
 *
 * A phase is code that runs with the same mix of instructions (Sherwood et
 * al.; ScarPhase, Sembrant et al.). The runtime cuts each thread's
 * references into intervals of a fixed number of references, and takes
 * about LP_PHASE_TICKS pcs per interval at random (the countdown ticks the
 * hot path already has). Each pc is hashed into one of LP_PHASE_BUCKETS
 * counters: the interval's signature, a pc vector as ScarPhase's. At the
 * end of an interval the signature, normalised to sum 1, is compared with
 * the centroid of every known phase by Manhattan distance (0 for the same
 * mix, 2 for disjoint code): the nearest phase within the threshold takes
 * it (and its centroid moves towards it), else it starts a new phase.
 * When the table is full the nearest phase takes it whatever the
 * distance.
 *
 * Why the centroid and not the first interval's signature: with 256 pcs an
 * interval's signature is noisy (each bucket binomial), and the mean of
 * the phase's intervals has a fraction of that noise, so a threshold can
 * be tight without splitting a phase.
 *
 * Freestanding: header-only, static inline, no libc call, no allocation.
 */
#ifndef LP_COMMON_PHASE_CORE_H
#define LP_COMMON_PHASE_CORE_H

#include <stdint.h>

#define LP_PHASE_BUCKETS 32
#define LP_PHASE_TABLE_MAX 64
/* pcs taken per interval (the tick rate is chosen so) */
#define LP_PHASE_TICKS 256
/* Default threshold: 0.5 of the distance's range of 2. Two intervals of
 * one loop nest differ by about 0.1 to 0.25 at 256 ticks (binomial noise);
 * two kernels sharing no pc are 2 apart. */
#define LP_PHASE_THRESHOLD 0.5
/* A centroid is the mean of at most this many intervals, then it follows
 * the phase's latest ones (an exponential mean) */
#define LP_PHASE_CENTROID_SPAN 64

struct lp_phase_sig {
	uint32_t count[LP_PHASE_BUCKETS];
	uint32_t total;
};

struct lp_phase_table {
	uint32_t n;
	float centroid[LP_PHASE_TABLE_MAX][LP_PHASE_BUCKETS];
	uint32_t intervals[LP_PHASE_TABLE_MAX]; /* intervals classified into it */
};

static inline uint32_t lp_phase_bucket(uint64_t pc)
{
	/* Fibonacci hashing: the top bits mix every bit of the pc */
	return (uint32_t)((pc * 0x9e3779b97f4a7c15ull) >> 59) & (LP_PHASE_BUCKETS - 1);
}

static inline void lp_phase_sig_add(struct lp_phase_sig *s, uint64_t pc)
{
	s->count[lp_phase_bucket(pc)]++;
	s->total++;
}

/* Manhattan distance between the normalised signature s and a centroid. */
static inline double lp_phase_distance(const struct lp_phase_sig *s, const float *c)
{
	double d = 0, inv = s->total ? 1.0 / s->total : 0;

	for (int b = 0; b < LP_PHASE_BUCKETS; b++) {
		double x = s->count[b] * inv - c[b];
		d += x < 0 ? -x : x;
	}
	return d;
}

/* The phase of an interval whose signature is s (s->total > 0), adding a
 * phase or moving a centroid. */
static inline uint32_t lp_phase_classify(struct lp_phase_table *t, const struct lp_phase_sig *s,
					 double threshold)
{
	uint32_t best = 0, k;
	double bd = 1e300, inv = 1.0 / s->total, w;

	for (uint32_t p = 0; p < t->n; p++) {
		double d = lp_phase_distance(s, t->centroid[p]);
		if (d < bd) {
			bd = d;
			best = p;
		}
	}
	if (t->n == 0 || (bd > threshold && t->n < LP_PHASE_TABLE_MAX)) {
		best = t->n++;
		t->intervals[best] = 0;
		for (int b = 0; b < LP_PHASE_BUCKETS; b++)
			t->centroid[best][b] = 0;
	}
	k = ++t->intervals[best];
	w = 1.0 / (k < LP_PHASE_CENTROID_SPAN ? k : LP_PHASE_CENTROID_SPAN);
	for (int b = 0; b < LP_PHASE_BUCKETS; b++)
		t->centroid[best][b] += (float)(w * (s->count[b] * inv - t->centroid[best][b]));
	return best;
}

#endif
