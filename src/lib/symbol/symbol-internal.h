/* Internal: the uncached libdwfl lookups behind lp_symbols_pc() and
 * lp_symbols_data(), kept callable so that tests can check the caches
 * against them. */
#ifndef LP_SYMBOL_INTERNAL_H
#define LP_SYMBOL_INTERNAL_H

#include <locprof/symbol.h>

int lp_symbols_pc_dwfl(struct lp_symbols *s, uint64_t pc, struct lp_code_loc *out);
int lp_symbols_data_dwfl(struct lp_symbols *s, uint64_t addr, struct lp_data_sym *out);
/* Sized data symbols in the cache (builds it). */
size_t lp_symbols_data_count(struct lp_symbols *s);
/* The address range of entry i < lp_symbols_data_count(). */
void lp_symbols_data_range(struct lp_symbols *s, size_t i, uint64_t *start, uint64_t *end);

#endif
