/* Internal: the exponential sums of StatCache's equation. */
#ifndef LP_COMMON_EXP_SUM_H
#define LP_COMMON_EXP_SUM_H

#include <stddef.h>

/* Adds sum w_i (1 - e^(-k_i a)) to *s and sum w_i k_i e^(-k_i a) to *d over
 * i < n; w NULL weighs every k_i 1. Two exponentials at a time where
 * glibc's vector math library is linked (exp-sum.c). */
void lp_exp_sums(const double *k, const double *w, size_t n, double a, double *s, double *d);

#endif
