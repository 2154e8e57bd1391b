/* Internal: the growable array of the library.
 *
 *	struct thing *v; size_t n, cap;
 *	if ((rc = LP_ARRAY_RESERVE(v, cap, n + 1, 64, "things")) < 0)
 *		return rc;
 *	v[n++] = x;
 *
 * makes room for at least `need` elements, doubling the capacity from
 * `first`; the elements past the old capacity are uninitialised. */
#ifndef LP_COMMON_ARRAY_H
#define LP_COMMON_ARRAY_H

#include <stddef.h>
#include <stdint.h>

/* *items holds *cap elements of `size` bytes; grow it (realloc, doubling
 * from `first`, at most `max` elements; 0: no limit) to hold `need`.
 * Returns 0, LP_ENOMEM ("out of memory for <what>") or LP_ELIMIT ("more
 * than <max> <what>"); *items and *cap are unchanged on error. */
int lp_array_grow(void **items, size_t *cap, size_t need, size_t size, size_t first, size_t max,
		  const char *what);

#define LP_ARRAY_RESERVE_MAX(items, cap, need, first, max, what)                                    \
	((need) <= (cap) ? 0                                                                       \
			 : lp_array_grow((void **)&(items), &(cap), (need), sizeof(*(items)), (first), \
					 (max), (what)))
#define LP_ARRAY_RESERVE(items, cap, need, first, what) LP_ARRAY_RESERVE_MAX(items, cap, need, first, 0, what)

/* Bisection over a sorted array: leaves lo at the first index in [lo, hi)
 * where `below`, an expression of the index variable i, is false (it must
 * be true at every index before that one and false after). lo and hi are
 * size_t lvalues; hi is changed too.
 *
 *	size_t lo = 0, hi = n;
 *	LP_BISECT(lo, hi, i, v[i] < x);   // lo: the first v[lo] >= x
 */
#define LP_BISECT(lo, hi, i, below)                      \
	do {                                             \
		while ((lo) < (hi)) {                    \
			size_t i = (lo) + ((hi) - (lo)) / 2; \
			if (below)                       \
				(lo) = i + 1;            \
			else                             \
				(hi) = i;                \
		}                                        \
	} while (0)

#endif
