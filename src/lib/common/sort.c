/* Radix sorts of 64-bit keys (common/sort.h). A double's bits, with the
 * sign bit flipped for positives and every bit flipped for negatives,
 * order as unsigned integers as the doubles do: the double sort maps,
 * sorts and maps back. */
#include "common/sort.h"

#include "common/error.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Records of `size` bytes whose first 8 are the key: 8 (the keys alone)
 * or 16 (struct lp_sort_pair). Always inlined, so that each caller's
 * constant size makes the moves plain loads and stores. */
static inline __attribute__((always_inline)) uint64_t key_at(const unsigned char *v, size_t i, size_t size)
{
	uint64_t k;

	memcpy(&k, v + i * size, sizeof(k));
	return k;
}

static inline __attribute__((always_inline)) void insertion(unsigned char *v, size_t n, size_t size)
{
	unsigned char x[16];

	for (size_t i = 1; i < n; i++) {
		uint64_t k = key_at(v, i, size);
		size_t j = i;
		memcpy(x, v + i * size, size);
		while (j > 0 && key_at(v, j - 1, size) > k) {
			memcpy(v + j * size, v + (j - 1) * size, size);
			j--;
		}
		memcpy(v + j * size, x, size);
	}
}

/* A byte's counts into the offsets of its buckets (exclusive prefix
 * sums); 0 when every key has the same byte there (leave the pass out). */
static int bucket_offsets(size_t c[256], size_t n)
{
	size_t sum = 0;

	for (size_t b = 0; b < 256; b++) {
		size_t k = c[b];
		if (k == n)
			return 0;
		c[b] = sum;
		sum += k;
	}
	return 1;
}

/* The eight byte passes, each a stable counting sort from one array into
 * the other; a byte that all keys share leaves the order as it is. */
static inline __attribute__((always_inline)) void radix(unsigned char *v, unsigned char *tmp, size_t n,
							size_t size)
{
	size_t count[8][256];
	unsigned char *from = v, *to = tmp;

	memset(count, 0, sizeof(count));
	for (size_t i = 0; i < n; i++)
		for (int d = 0; d < 8; d++)
			count[d][(key_at(v, i, size) >> (8 * d)) & 0xff]++;
	for (int d = 0; d < 8; d++) {
		size_t *c = count[d];
		if (!bucket_offsets(c, n))
			continue;
		for (size_t i = 0; i < n; i++)
			memcpy(to + c[(key_at(from, i, size) >> (8 * d)) & 0xff]++ * size, from + i * size, size);
		unsigned char *t = from;
		from = to;
		to = t;
	}
	if (from != v)
		memcpy(v, from, n * size);
}

static void insertion_u64(uint64_t *v, size_t n)
{
	insertion((unsigned char *)v, n, sizeof(*v));
}

static void radix_u64(uint64_t *v, uint64_t *tmp, size_t n)
{
	radix((unsigned char *)v, (unsigned char *)tmp, n, sizeof(*v));
}

void lp_sort_u64(uint64_t *v, size_t n)
{
	uint64_t *tmp;

	if (n < LP_SORT_SMALL) {
		insertion_u64(v, n);
		return;
	}
	if (!(tmp = malloc(n * sizeof(*tmp)))) {
		qsort(v, n, sizeof(*v), cmp_u64);
		return;
	}
	radix_u64(v, tmp, n);
	free(tmp);
}

uint64_t lp_sort_double_key(double x)
{
	uint64_t u;

	memcpy(&u, &x, sizeof(u));
	return u >> 63 ? ~u : u | (1ull << 63);
}

static double key_double(uint64_t u)
{
	double x;

	u = u >> 63 ? u & ~(1ull << 63) : ~u;
	memcpy(&x, &u, sizeof(x));
	return x;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

void lp_sort_double(double *v, size_t n)
{
	uint64_t *k;

	if (n < 2)
		return;
	/* keys in an array of their own: a double's storage is not read
	 * through an integer pointer (strict aliasing) */
	if (!(k = malloc(2 * n * sizeof(*k)))) {
		qsort(v, n, sizeof(*v), cmp_double);
		return;
	}
	for (size_t i = 0; i < n; i++)
		k[i] = lp_sort_double_key(v[i]);
	if (n < LP_SORT_SMALL)
		insertion_u64(k, n);
	else
		radix_u64(k, k + n, n);
	for (size_t i = 0; i < n; i++)
		v[i] = key_double(k[i]);
	free(k);
}

int lp_sort_pairs(struct lp_sort_pair *v, size_t n)
{
	struct lp_sort_pair *tmp;

	_Static_assert(offsetof(struct lp_sort_pair, key) == 0 && sizeof(*v) == 16, "key first, 16 bytes");
	if (n < LP_SORT_SMALL) {
		insertion((unsigned char *)v, n, sizeof(*v));
		return 0;
	}
	/* no fallback: qsort() is not stable */
	if (!(tmp = malloc(n * sizeof(*tmp))))
		return lp_seterr(LP_ENOMEM, "out of memory");
	radix((unsigned char *)v, (unsigned char *)tmp, n, sizeof(*v));
	free(tmp);
	return 0;
}
