/* Allocation events of the valgrind backend (tests/cli/test-valgrind-allocs.sh):
 * many short-lived blocks, a few hot arrays, a block grown by realloc, and
 * blocks freed untouched.
 *
 *  - N rounds: each allocates a 40-byte node (make_node), writes and reads
 *    it a little, frees it: most are never sampled;
 *  - 777-byte blocks allocated and freed at once, never touched by the
 *    program: no sample can fall in them, so with touched-blocks-only
 *    events none of them may appear in the profile;
 *  - hot arrays A (make_a, 96 KiB) and B (make_b, 48 KiB) swept many times;
 *  - array C: allocated small by make_c, then grown by realloc in grow_c
 *    (the block moves) to 64 KiB and swept: its samples belong to grow_c's
 *    call site.
 * Functions are noinline so that each call site is in its own function. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NOINLINE __attribute__((noinline))
/* after the call: no tail call, so the call site is in the function */
#define KEEP(p) __asm__ volatile("" : : "r"(p) : "memory")

struct node {
	long v[5];
};

NOINLINE static struct node *make_node(long i)
{
	struct node *n = malloc(sizeof(*n));
	if (n)
		for (int k = 0; k < 5; k++)
			n->v[k] = i + k;
	return n;
}

NOINLINE static void *untouched(void)
{
	void *p = malloc(777);
	KEEP(p);
	return p;
}

NOINLINE static long *make_a(size_t n)
{
	long *p = calloc(n, sizeof(long));
	KEEP(p);
	return p;
}

NOINLINE static long *make_b(size_t n)
{
	long *p = malloc(n * sizeof(long));
	KEEP(p);
	return p;
}

NOINLINE static long *make_c(void)
{
	long *p = malloc(64);
	KEEP(p);
	return p;
}

NOINLINE static long *grow_c(long *c, size_t n)
{
	long *p = realloc(c, n * sizeof(long));
	KEEP(p);
	return p;
}

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 20000, sweeps = argc > 2 ? atol(argv[2]) : 30;
	size_t na = 12288, nb = 6144, nc = 8192;
	volatile long sum = 0;
	long *a, *b, *c;

	for (long i = 0; i < rounds; i++) {
		struct node *n = make_node(i);
		void *u = untouched();
		if (!n || !u)
			return 1;
		sum += n->v[i % 5];
		free(u);
		free(n);
	}
	a = make_a(na);
	b = make_b(nb);
	c = make_c();
	if (!a || !b || !c)
		return 1;
	c = grow_c(c, nc);
	if (!c)
		return 1;
	memset(b, 0, nb * sizeof(long));
	memset(c, 0, nc * sizeof(long));
	for (long s = 0; s < sweeps; s++) {
		for (size_t i = 0; i < na; i += 8)
			sum += a[i];
		for (size_t i = 0; i < nb; i += 8)
			sum += b[i];
		for (size_t i = 0; i < nc; i += 8)
			sum += c[i];
	}
	printf("%ld\n", (long)sum);
	free(a);
	free(b);
	free(c);
	return 0;
}
