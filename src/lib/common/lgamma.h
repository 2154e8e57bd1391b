/* Internal: log-gamma without a shared global. */
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

#endif
