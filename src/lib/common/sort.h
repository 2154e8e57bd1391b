/* Internal: sorting arrays of plain numbers, faster than qsort(). */
#ifndef LP_COMMON_SORT_H
#define LP_COMMON_SORT_H

#include <stddef.h>
#include <stdint.h>

/* Ascending, in place. A least-significant-digit radix sort of the keys'
 * bytes (passes over bytes every key shares are skipped); below
 * LP_SORT_SMALL numbers an insertion sort; qsort() if the scratch array
 * cannot be had, so neither can fail. The models sort every resample's
 * reuse distances several times: with qsort() and a comparison callback,
 * sorting was a fifth of `report`'s time with intervals
 * (bench/report-speed.sh). */
void lp_sort_u64(uint64_t *v, size_t n);

/* Doubles in the order of <, -0.0 before 0.0; a NaN after +infinity
 * (before -infinity if its sign bit is set). */
void lp_sort_double(double *v, size_t n);

/* Records sorted by key, stably (equal keys keep their order): a sort by
 * (a, b) is a sort by b and then by a. 0, or LP_ENOMEM (no scratch). */
struct lp_sort_pair {
	uint64_t key, val;
};
int lp_sort_pairs(struct lp_sort_pair *v, size_t n);

/* The key of a double that orders as the double does (lp_sort_double()). */
uint64_t lp_sort_double_key(double x);

#define LP_SORT_SMALL 48

#endif
