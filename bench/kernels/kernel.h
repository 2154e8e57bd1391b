/* Shared by the kernels of bench/kernels/: the problem size, taken from the
 * command line (one binary for every size) or fixed when compiled with
 * -DN=<size> (one binary per size, as scientific codes often are built),
 * allocation that fails loudly, and a checksum printed at the end so that
 * the compiler keeps the work. Deterministic: no clock, no rand(). */
#ifndef LOCPROF_KERNEL_H
#define LOCPROF_KERNEL_H
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* The size P: N when compiled with -DN=P (argv[1] is then ignored), else
 * argv[1], else dflt; at least min. */
static inline long kernel_size(int argc, char **argv, long dflt, long min)
{
	long p;
#ifdef N
	(void)argc, (void)argv, (void)dflt;
	p = N;
#else
	p = argc > 1 ? strtol(argv[1], NULL, 10) : dflt;
#endif
	if (p < min) {
		fprintf(stderr, "%s: size must be at least %ld\n", argv[0], min);
		exit(2);
	}
	return p;
}

static inline void *kernel_alloc(size_t bytes)
{
	void *p = calloc(1, bytes);

	if (!p) {
		fprintf(stderr, "kernel: out of memory (%zu bytes)\n", bytes);
		exit(1);
	}
	return p;
}

/* splitmix64: a reproducible stream of pseudo-random numbers */
static inline uint64_t kernel_rand(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static inline void kernel_done(const char *name, long p, double checksum)
{
	printf("%s %ld: %.6g\n", name, p, checksum);
}
#endif
