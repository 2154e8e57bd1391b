/* Internal: a fast 64-bit mixer for hash tables keyed by line or pc.
 * Line numbers are highly regular (consecutive, strided), so the low bits
 * must depend on all input bits: this is the murmur3 finaliser. */
#ifndef LP_COMMON_HASH_H
#define LP_COMMON_HASH_H

#include <stdint.h>

static inline uint64_t lp_hash64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

#endif
