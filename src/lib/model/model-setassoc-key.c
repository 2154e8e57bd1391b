/* The groups of the set-associative placement model (model-setassoc.c)
 * and of its hot footprints (model-setassoc-hot.c): which samples' spans
 * are taken to place their lines alike.
 *
 * A sample's key is its pc and the octave of its span's lines (reuses of
 * one pc at very different distances see different layouts: a column's
 * rows, or the whole matrix); below SA_EXACT_LINES lines, the lines
 * themselves. A short span's lines on the walk are often a count, not a
 * share: a 2-D stencil's spans of 4 to 7 lines hold the same three lines
 * of the rows above and below and of the array written, and the rest next
 * to the reused line; pooled, the share on the walk (0.83) put five lines
 * in one set for every span of 6, 337 of 337 predicted misses at 16K:4:64
 * where none occur, and none for the spans of 5. A pc whose offsets at one
 * D are too few for a group of their own pools them over the octave
 * (lp_sa_octave_key()), then with the other pcs of the octave.
 * Keys: the pc below bit 56; above, 1 .. 15 lines, else 16 + the octave. */
#include "model/model-internal.h"

#include <math.h>

#define SA_EXACT_LINES 16

static uint64_t octave_bin(double lines)
{
	int b = 16 + ilogb(lines);

	return (uint64_t)(b < 63 ? b : 63);
}

uint64_t lp_sa_group_key(const struct lp_sample *x, double sd)
{
	double lines = floor(sd + 0.5) + 1;
	uint64_t bin = lines < SA_EXACT_LINES ? (uint64_t)lines : octave_bin(lines);

	return (x->pc & ((1ull << 56) - 1)) | bin << 56;
}

uint64_t lp_sa_octave_key(const struct lp_sample *x, double sd)
{
	return (x->pc & ((1ull << 56) - 1)) | octave_bin(floor(sd + 0.5) + 1) << 56;
}
