/* The bit-count hierarchy of bk and prealloc (exact-internal.h):
 * allocation. Its walk is inline in exact-internal.h (the hot path). */
#include "exact/exact-internal.h"

int lp_bitsum_init(struct lp_bitsum *b, int top, uint64_t words)
{
	memset(b, 0, sizeof(*b));
	assert(top >= 0 && top < LP_BITSUM_MAX_LEVELS && words <= UINT64_C(1) << top);
	b->top = top;
	if (!(b->bits = calloc((size_t)words, sizeof(uint64_t))))
		return LP_ENOMEM;
	for (int j = 0; j <= top; j++)
		if (!(b->lv[j] = calloc((size_t)((UINT64_C(1) << top) >> j), sizeof(uint32_t))))
			return LP_ENOMEM;
	return 0;
}

void lp_bitsum_release(struct lp_bitsum *b)
{
	for (int j = 0; j <= b->top; j++)
		free(b->lv[j]);
	free(b->bits);
	memset(b, 0, sizeof(*b));
}
