/* A hash join as a database runs one: a build relation of P/4 tuples
 * (16-byte key and payload) hashed into chained buckets whose nodes come
 * from one arena in build order, then a probe relation of P tuples
 * streamed through it, keys skewed towards a hot fifth of the build
 * keys; matches summed. Hold-out kernel: not used to develop any model.
 * usage: hashjoin [P]  (default 400000), or built with -DN=P */
#include "kernel.h"

struct tuple {
	uint64_t key, payload;
};

struct node {
	struct tuple t;
	struct node *next;
};

int main(int argc, char **argv)
{
	long p = kernel_size(argc, argv, 400000, 64), nbuild = p / 4, nb = 1, matches = 0;
	while (nb < nbuild / 2)
		nb <<= 1;
	struct tuple *build = kernel_alloc(sizeof(*build) * (size_t)nbuild), *probe = kernel_alloc(sizeof(*probe) * (size_t)p);
	struct node *arena = kernel_alloc(sizeof(*arena) * (size_t)nbuild), **bucket = kernel_alloc(sizeof(*bucket) * (size_t)nb);
	uint64_t st = 5, sum = 0;

	for (long i = 0; i < nbuild; i++)
		build[i] = (struct tuple){ kernel_rand(&st) % (uint64_t)(2 * nbuild), (uint64_t)i };
	for (long i = 0; i < p; i++) {
		uint64_t r = kernel_rand(&st);
		uint64_t k = r % 5 ? build[(r >> 8) % (uint64_t)(nbuild / 5)].key : (r >> 8) % (uint64_t)(2 * nbuild);
		probe[i] = (struct tuple){ k, r };
	}
	for (long i = 0; i < nbuild; i++) {
		uint64_t h = (build[i].key * 0x9e3779b97f4a7c15ull >> 17) & (uint64_t)(nb - 1);
		arena[i] = (struct node){ build[i], bucket[h] };
		bucket[h] = &arena[i];
	}
	for (long i = 0; i < p; i++) {
		uint64_t h = (probe[i].key * 0x9e3779b97f4a7c15ull >> 17) & (uint64_t)(nb - 1);
		for (struct node *n = bucket[h]; n; n = n->next)
			if (n->t.key == probe[i].key) {
				matches++;
				sum += n->t.payload ^ probe[i].payload;
			}
	}
	kernel_done("hashjoin", p, (double)matches + 1e-12 * (double)sum);
	return 0;
}
