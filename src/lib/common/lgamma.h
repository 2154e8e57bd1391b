/* Internal: log-gamma without a shared global, and log-factorials. */
#ifndef LP_COMMON_LGAMMA_H
#define LP_COMMON_LGAMMA_H

#include <math.h>

/* ln |Gamma(x)|. lgamma() stores the sign in the global signgam, a data
 * race once models run on several threads (the resamples of the
 * intervals, model-interval.c); lgamma_r() returns it instead. */
static inline double lp_lgamma(double x)
{
	int sign;

	return lgamma_r(x, &sign);
}

/* ln x! = lp_lgamma(x + 1), the same double: from a table filled once per
 * process for whole x below 2^16, else from lgamma_r(). The set-associative
 * walk model's hypergeometric pmfs call it nine times per sampled reuse of
 * a sparse walk, always on whole numbers (lgamma.c). */
double lp_log_factorial(double x);

#endif
