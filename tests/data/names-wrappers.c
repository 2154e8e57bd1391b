/* Heap blocks behind a program's own allocation wrappers
 * (tests/cli/test-names-wrappers.sh): xmalloc, called from two lines of
 * main, allocates the grid and the index; alloc_pair(), called once,
 * allocates two arrays on lines of its own; pool_take(), a wrapper by no
 * name, serves the nodes (the user names it with --alloc-fn). */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) static void *xmalloc(size_t n)
{
	void *p = malloc(n);

	if (!p) {
		fputs("out of memory\n", stderr);
		exit(1);
	}
	return p;
}

static double *pair_a, *pair_b;

__attribute__((noinline)) static void alloc_pair(size_t n)
{
	pair_a = malloc(n * sizeof(double));
	pair_b = malloc(n * sizeof(double));
	if (!pair_a || !pair_b)
		exit(1);
}

__attribute__((noinline)) static long *pool_take(size_t n)
{
	long *p = xmalloc(n * sizeof(long));

	__asm__ volatile("" ::: "memory");
	return p;
}

__attribute__((noinline)) static long *make_nodes(size_t n)
{
	long *v = pool_take(n);

	for (size_t i = 0; i < n; i++)
		v[i] = (long)i;
	return v;
}

int main(int argc, char **argv)
{
	size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 1 << 19;
	double *grid = xmalloc(n * sizeof(double));
	unsigned *idx = xmalloc(n * sizeof(unsigned));
	long *nodes = make_nodes(n);
	double s = 0;

	alloc_pair(n);
	for (size_t i = 0; i < n; i++) {
		grid[i] = (double)i;
		idx[i] = (unsigned)((i * 2654435761u) % n);
		pair_a[i] = pair_b[i] = 1.0;
	}
	for (int r = 0; r < 4; r++)
		for (size_t i = 0; i < n; i++)
			s += grid[idx[i]] + pair_a[i] * pair_b[i] + (double)nodes[(i * 7919) % n];
	printf("%g\n", s);
	free(grid);
	free(idx);
	free(nodes);
	free(pair_a);
	free(pair_b);
	return 0;
}
