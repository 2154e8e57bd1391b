/* Open-addressing hash table (linear probing, 16-byte slots, a table of
 * the next power of two above P slots) filled to 70% with pseudo-random
 * keys, then 4 P lookups, half of keys present and half absent: reads
 * spread at random over the table, each followed by a short run of
 * neighbouring slots. Hold-out kernel: not used to develop any model.
 * usage: hashprobe [P]  (default 200000), or built with -DN=P */
#include "kernel.h"

struct slot {
	uint64_t key; /* 0: empty */
	uint64_t value;
};

static uint64_t hash(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	return k ^ (k >> 33);
}

int main(int argc, char **argv)
{
	long p = kernel_size(argc, argv, 200000, 64);
	uint64_t size = 1, st = 99, found = 0;
	while (size < (uint64_t)p)
		size <<= 1;
	struct slot *t = kernel_alloc(size * sizeof(*t));
	uint64_t mask = size - 1, nkeys = size * 7 / 10;

	for (uint64_t i = 0; i < nkeys; i++) {
		uint64_t k = (kernel_rand(&st) | 1), h = hash(k) & mask;
		while (t[h].key && t[h].key != k)
			h = (h + 1) & mask;
		t[h].key = k, t[h].value = i;
	}
	st = 99;
	uint64_t miss_state = 7;
	for (long i = 0; i < 4 * p; i++) {
		/* even i: a key inserted (the insert stream replayed), odd: a
		 * key never inserted (even keys are never inserted) */
		uint64_t k = i & 1 ? kernel_rand(&miss_state) & ~1ull : (kernel_rand(&st) | 1);
		if (!(i & 1) && (uint64_t)(i / 2 + 1) % nkeys == 0)
			st = 99;
		uint64_t h = hash(k) & mask;
		while (t[h].key && t[h].key != k)
			h = (h + 1) & mask;
		found += t[h].key == k ? t[h].value : 0;
	}
	kernel_done("hashprobe", p, (double)found);
	free(t);
	return 0;
}
