/* Internal: the function that encloses a clang-outlined OpenMP region,
 * found in the code (omp-encloser.c), for a binary without debug
 * information. */
#ifndef LP_SYMBOL_OMP_ENCLOSER_H
#define LP_SYMBOL_OMP_ENCLOSER_H

#include <elfutils/libdwfl.h>
#include <stdint.h>

/* What has been learnt of each module; NULL before the first question. */
struct lp_omp_enclosers;

/* The function whose code takes the address of the function starting at
 * `start` (an address in the running program) in module mod: 1 with its
 * ELF symbol name (owned by libdwfl) in *name and its start in *outer; 0
 * when no function does (or the module's code cannot be read). A
 * module's code is decoded on the first question about it; the other
 * answers come from that. LP_ENOMEM. */
int lp_omp_encloser(struct lp_omp_enclosers **e, Dwfl_Module *mod, uint64_t start, const char **name,
		    uint64_t *outer);
void lp_omp_enclosers_free(struct lp_omp_enclosers *e);

#endif
