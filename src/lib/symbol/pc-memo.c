/* The per-pc memo of the symbol lookups (symbol/pc-memo.h). */
#include "symbol/pc-memo.h"

#include "common/array.h"
#include "common/error.h"

#include <stdlib.h>
#include <string.h>

void lp_pc_memo_init(struct lp_pc_memo *m, size_t size, size_t first)
{
	memset(m, 0, sizeof(*m));
	m->size = size;
	m->first = first ? first : 16;
}

void lp_pc_memo_release(struct lp_pc_memo *m)
{
	lp_htab_release(&m->idx);
	free(m->entries);
	free(m->found);
	lp_pc_memo_init(m, m->size, m->first);
}

int lp_pc_memo_find(struct lp_pc_memo *m, uint64_t key, void *out, int *found)
{
	uint64_t *i;

	if (!m->idx.s || !(i = lp_htab_find(&m->idx, key)))
		return 0;
	assert(*i < m->n);
	memcpy(out, m->entries + *i * m->size, m->size);
	*found = m->found[*i];
	return 1;
}

int lp_pc_memo_add(struct lp_pc_memo *m, uint64_t key, const void *entry, int found)
{
	size_t slots = 1;
	uint64_t *i;
	int err, isnew;

	/* the index's first size: a power of two holding `first` keys */
	while (slots < m->first + m->first / 3 + 1)
		slots *= 2;
	if ((!m->idx.s && (err = lp_htab_init(&m->idx, slots)) < 0) || (err = lp_htab_reserve(&m->idx, 1)) < 0 ||
	    (err = lp_array_grow((void **)&m->entries, &m->cap, m->n + 1, m->size, m->first, 0, "pc answers")) < 0 ||
	    (err = LP_ARRAY_RESERVE(m->found, m->capfound, m->n + 1, m->first, "pc answers")) < 0)
		return err;
	i = lp_htab_get(&m->idx, key, &isnew);
	assert(isnew);
	*i = m->n;
	memcpy(m->entries + m->n * m->size, entry, m->size);
	m->found[m->n++] = (unsigned char)(found != 0);
	return 0;
}
