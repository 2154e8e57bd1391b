/* locprof/synth.h - synthetic reference streams with known locality.
 *
 * Each pattern has a locality that is known in closed form, so that the
 * analyses can be checked against it, and benchmarks can produce 10^8
 * references in memory without files. The same parameters and seed give
 * the same stream, bit for bit, on every machine.
 *
 * Patterns (addresses are base + an offset; a "line" is line_size bytes):
 *   seq      sweep footprint bytes in elem_size steps, then start over
 *   cyclic   one access to each of `lines` lines in order, then start over
 *   uniform  a line drawn uniformly from `lines` lines
 *   zipf     line of rank k (k = 1..lines, line k-1) with probability
 *            proportional to k^-s (rejection-inversion, O(1) per draw)
 *   strided  offset i*stride modulo footprint, for the i-th reference
 *   mix      phases of phase_len references; each phase runs one of the
 *            five patterns above, drawn by the seeded generator; every
 *            pattern resumes where its previous phase stopped, in its own
 *            region (base + j * 2^36 for the j-th pattern) with its own pc
 * Every reference is a write with probability write_ratio (an independent
 * generator, so the addresses do not depend on it). Threads take turns in
 * bursts of 64 references: reference i belongs to thread (i / 64) % threads.
 * The pc of pattern j (seq = 0, cyclic, uniform, zipf, strided) is pc + 16*j.
 */
#ifndef LOCPROF_SYNTH_H
#define LOCPROF_SYNTH_H

#include <locprof/common.h>

#ifdef __cplusplus
extern "C" {
#endif

enum lp_synth_pattern {
	LP_SYNTH_SEQ,
	LP_SYNTH_CYCLIC,
	LP_SYNTH_UNIFORM,
	LP_SYNTH_ZIPF,
	LP_SYNTH_STRIDED,
	LP_SYNTH_MIX,
};

struct lp_synth_params {
	enum lp_synth_pattern pattern;
	uint64_t count;      /* references in the stream */
	uint64_t line_size;  /* bytes, a power of two (default 64) */
	uint64_t elem_size;  /* bytes per access (default 8) */
	uint64_t base;       /* first address (default 0x10000000) */
	uint64_t footprint;  /* seq, strided: bytes covered (default 1 MiB) */
	uint64_t lines;      /* cyclic, uniform, zipf: lines (default 16384) */
	double zipf_s;       /* zipf exponent, > 0 (default 1.0) */
	uint64_t stride;     /* strided: bytes (default 4096) */
	double write_ratio;  /* in [0, 1] (default 0.25) */
	uint32_t threads;    /* >= 1 (default 1) */
	uint64_t pc;         /* pc of the first pattern (default 0x401000) */
	uint64_t seed;       /* (default 1) */
	uint64_t phase_len;  /* mix: references per phase (default 100000) */
};

struct lp_synth;

/* Fill p with the defaults above for a pattern. */
void lp_synth_params_default(struct lp_synth_params *p, enum lp_synth_pattern pattern);

/* Pattern by name ("seq", ...); LP_EINVAL when unknown. */
int lp_synth_pattern_parse(const char *name, enum lp_synth_pattern *out);
const char *lp_synth_pattern_name(enum lp_synth_pattern pattern);

/* Check the parameters (LP_EINVAL with a message naming the bad one) and
 * start a stream. */
int lp_synth_new(struct lp_synth **out, const struct lp_synth_params *p);

/* Fill up to cap references; returns how many (0 once count references
 * have been produced). Allocates nothing. */
size_t lp_synth_fill(struct lp_synth *s, struct lp_ref *buf, size_t cap);

void lp_synth_free(struct lp_synth *s);

#ifdef __cplusplus
}
#endif
#endif
