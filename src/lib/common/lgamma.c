/* ln x! from a table: the set-associative walk model's hypergeometric
 * pmfs (model-setassoc-walk.c) take nine log-factorials of whole numbers
 * below a region's line count for every sampled reuse of a sparse walk,
 * millions per `report` with intervals. lgamma_r() took 7 % of that
 * report's CPU time (20 000 samples, four caches, 4 096-line regions);
 * a lookup takes a load.
 *
 * The table holds lgamma_r(n + 1) itself, so results are the same to the
 * last bit as without it. It is filled once, under pthread_once(), by
 * whichever thread first asks: 2^16 entries, 512 KiB, about 2 ms. */
#include "common/lgamma.h"

#include <pthread.h>

#define LOG_FACT_TABLE (1u << 16)

static double log_fact[LOG_FACT_TABLE];
static pthread_once_t log_fact_once = PTHREAD_ONCE_INIT;

static void fill_log_fact(void)
{
	for (unsigned n = 0; n < LOG_FACT_TABLE; n++)
		log_fact[n] = lp_lgamma((double)n + 1);
}

double lp_log_factorial(double x)
{
	if (x >= 0 && x < LOG_FACT_TABLE && x == floor(x)) {
		pthread_once(&log_fact_once, fill_log_fact);
		return log_fact[(unsigned)x];
	}
	return lp_lgamma(x + 1);
}
