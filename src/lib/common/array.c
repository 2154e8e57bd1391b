/* The growable array (array.h). */
#include "common/array.h"
#include "common/error.h"

#include <stdlib.h>

int lp_array_grow(void **items, size_t *cap, size_t need, size_t size, size_t first, size_t max,
		  const char *what)
{
	size_t ncap = *cap ? *cap : (first ? first : 1);
	void *p;

	if (need <= *cap)
		return 0;
	if (max && need > max)
		return lp_seterr(LP_ELIMIT, "more than %zu %s", max, what);
	while (ncap < need)
		ncap = ncap > SIZE_MAX / 2 ? need : ncap * 2;
	if (max && ncap > max)
		ncap = max;
	if (ncap > SIZE_MAX / size || !(p = realloc(*items, ncap * size)))
		return lp_seterr(LP_ENOMEM, "out of memory for %s", what);
	*items = p;
	*cap = ncap;
	return 0;
}
