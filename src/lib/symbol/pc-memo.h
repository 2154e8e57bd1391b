/* Internal: the answers already given per pc (or any 64-bit key), for the
 * symbol lookups that libdwfl answers slowly: lp_symbols_pc() and the
 * allocation sites (alloc-site.c). A hash index from the key to an entry
 * of fixed size, with whether the lookup found something. Out of memory,
 * nothing more is remembered and the caller computes every answer (the
 * answers stay the same, only slower). tests/unit/symbol/test-pc-memo.c
 * checks it against a list searched linearly. */
#ifndef LP_SYMBOL_PC_MEMO_H
#define LP_SYMBOL_PC_MEMO_H

#include "common/htab.h"

#include <stddef.h>
#include <stdint.h>

struct lp_pc_memo {
	struct lp_htab idx;     /* key -> index in entries[] and found[] */
	unsigned char *entries; /* n entries of `size` bytes */
	unsigned char *found;   /* the lookup's result (0 or 1), per entry */
	size_t n, cap, capfound;
	size_t size;            /* bytes per entry */
	size_t first;           /* entries room is first made for */
};

/* An empty memo of entries of `size` bytes; allocates nothing yet. */
void lp_pc_memo_init(struct lp_pc_memo *m, size_t size, size_t first);
void lp_pc_memo_release(struct lp_pc_memo *m);
/* The remembered answer for key: 1 with the entry copied to out and the
 * lookup's result in *found; 0 when key was never remembered. */
int lp_pc_memo_find(struct lp_pc_memo *m, uint64_t key, void *out, int *found);
/* Remember entry and found for a key not yet remembered. 0, or LP_ENOMEM
 * (nothing remembered). */
int lp_pc_memo_add(struct lp_pc_memo *m, uint64_t key, const void *entry, int found);

#endif
