/* The alignment of a placement group's own sampled lines, for the groups
 * whose spans showed too few lines for a layout (lp_sa_group_info.aligned):
 * the largest 2^k lines (k <= SA_ALIGN_MAX) modulo which SA_ALIGN_SHARE of
 * the group's sampled lines are alike, read from SA_ALIGN_MIN samples or
 * more. Lines placed at random are alike modulo 2 for 7 or 8 of 8 samples
 * with probability 7 %, modulo 4 0.04 %. Where a pc's lines are all at one
 * offset of their pages (a list of page-aligned nodes), its spans' lines
 * may be too: the layout no sample showed that
 * lp_statstack_setassoc_unseen() bounds (docs/models.md, "Where no sample
 * shows the layout"). */
#include "model/model-internal.h"

#include "common/error.h"
#include "common/sort.h"

#include <stdlib.h>

#define SA_ALIGN_MIN 8
#define SA_ALIGN_SHARE 0.8
#define SA_ALIGN_MAX 20

/* The largest 2^k modulo which SA_ALIGN_SHARE of lines v[0, n) are alike
 * (v is overwritten), 1 where none is. */
static uint64_t alignment_of(const struct lp_sample *s, const size_t *idx, size_t n, unsigned shift, uint64_t *v)
{
	for (unsigned k = SA_ALIGN_MAX; k >= 1; k--) {
		size_t run = 1, best = 1;
		for (size_t j = 0; j < n; j++)
			v[j] = (s[idx[j]].addr >> shift) & ((1ull << k) - 1);
		lp_sort_u64(v, n);
		for (size_t j = 1; j < n; j++) {
			run = v[j] == v[j - 1] ? run + 1 : 1;
			best = run > best ? run : best;
		}
		if ((double)best >= SA_ALIGN_SHARE * (double)n)
			return 1ull << k;
	}
	return 1;
}

int lp_sa_group_alignment(struct lp_sa_group_info *g, size_t ng, const size_t *start, const size_t *order,
			  const struct lp_sample *s, unsigned shift, size_t min_pairs)
{
	size_t most = 0;
	uint64_t *v;

	for (size_t k = 0; k < ng; k++)
		most = start[k + 1] - start[k] > most ? start[k + 1] - start[k] : most;
	if (!(v = malloc((most ? most : 1) * sizeof(*v))))
		return lp_seterr(LP_ENOMEM, "out of memory");
	for (size_t k = 0; k < ng; k++) {
		size_t n = start[k + 1] - start[k];
		g[k].aligned = g[k].pairs >= min_pairs || n < SA_ALIGN_MIN
				       ? 1
				       : alignment_of(s, order + start[k], n, shift, v);
	}
	free(v);
	return 0;
}
