/* Binary search tree of P nodes (32 bytes each, one malloc per node, keys
 * inserted in pseudo-random order, so neighbouring nodes in memory are
 * unrelated in the tree), then 2 P lookups of random keys: pointer chasing
 * in which the top levels are hot and the leaves cold. Hold-out kernel:
 * not used to develop any model.
 * usage: bst [P]  (default 50000), or built with -DN=P */
#include "kernel.h"

struct node {
	uint64_t key;
	uint64_t value;
	struct node *left, *right;
};

int main(int argc, char **argv)
{
	long p = kernel_size(argc, argv, 50000, 16);
	struct node **nodes = kernel_alloc(sizeof(struct node *[p]));
	struct node *root = NULL;
	uint64_t st = 5;
	double sum = 0;

	for (long i = 0; i < p; i++) {
		struct node *n = kernel_alloc(sizeof(*n)), **at = &root;
		n->key = kernel_rand(&st) % (uint64_t)(4 * p);
		n->value = (uint64_t)i;
		while (*at)
			at = n->key < (*at)->key ? &(*at)->left : &(*at)->right;
		*at = nodes[i] = n;
	}
	for (long i = 0; i < 2 * p; i++) {
		uint64_t k = kernel_rand(&st) % (uint64_t)(4 * p);
		const struct node *n = root;
		while (n && n->key != k)
			n = k < n->key ? n->left : n->right;
		sum += n ? (double)n->value : 0;
	}
	kernel_done("bst", p, sum);
	for (long i = 0; i < p; i++)
		free(nodes[i]);
	free(nodes);
	return 0;
}
