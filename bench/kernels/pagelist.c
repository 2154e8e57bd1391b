/* A linked list of P nodes, each at the start of its own 4 KiB page of
 * one block, linked in a pseudo-random order and walked 60 times: every
 * node in the same set of a cache of 4 KiB ways, visited in no order the
 * addresses show. Hold-out kernel: not used to develop any model.
 * usage: pagelist [P]  (default 400), or built with -DN=P */
#include "kernel.h"

#define PAGE 4096
#define WALKS 60

struct node {
	struct node *next;
	double value;
};

int main(int argc, char **argv)
{
	long n = kernel_size(argc, argv, 400, 2);
	char *block = kernel_alloc((size_t)n * PAGE);
	long *order = kernel_alloc(sizeof(long[n]));
	uint64_t st = 21;
	double sum = 0;

	for (long i = 0; i < n; i++)
		order[i] = i;
	for (long i = n - 1; i > 0; i--) {
		long j = (long)(kernel_rand(&st) % (uint64_t)(i + 1)), t = order[i];
		order[i] = order[j], order[j] = t;
	}
	for (long i = 0; i < n; i++) {
		struct node *a = (struct node *)(block + order[i] * PAGE);
		a->next = (struct node *)(block + order[(i + 1) % n] * PAGE);
		a->value = (double)(i % 11);
	}
	for (int w = 0; w < WALKS; w++) {
		const struct node *a = (const struct node *)(block + order[0] * PAGE);
		for (long i = 0; i < n * 50; i++) {
			sum += a->value;
			a = a->next;
		}
	}
	kernel_done("pagelist", n, sum);
	free(block), free(order);
	return 0;
}
