/* Internal: the ELF symbol that holds a pc, as dwfl_module_addrinfo()
 * names it, without its cost on pcs in ascending order. elfutils looks
 * through a module's symbols one by one on every call (linear in them),
 * and a stripped program names its code by thousands of them, most of its
 * pcs by none (gcc's cc1: 28 902 dynamic symbols; a report of its 118 128
 * samples took 30 s, all but 0.6 s in those lookups). So the answer for
 * the last pc is kept with the range of pcs that must get the same one:
 * from that pc to the next symbol's start (no other symbol can become a
 * candidate there), and within the symbol that holds it. The hot spots
 * ask for their pcs in ascending order. tests/unit/symbol/test-symbol-cache.c
 * compares every answer with dwfl_module_addrinfo()'s. */
#ifndef LP_SYMBOL_CODE_SYMBOL_H
#define LP_SYMBOL_CODE_SYMBOL_H

#include <elfutils/libdwfl.h>
#include <stdint.h>

struct lp_code_symbols;

/* The symbol's name, or NULL (as dwfl_module_addrinfo()); *cs is made on
 * first use (out of memory: every call searches, with the same answers). */
const char *lp_code_symbol(struct lp_code_symbols **cs, Dwfl_Module *mod, uint64_t pc);
void lp_code_symbols_free(struct lp_code_symbols *cs);

#endif
