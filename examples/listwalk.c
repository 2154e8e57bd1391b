/* Summing N values stored in a linked list whose nodes are scattered in
 * memory (allocated, then linked in a random order) vs in an array.
 * usage: listwalk [list|array] [N]   (default list 300000) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct node {
	struct node *next;
	long value;
	char pad[48]; /* one node per 64-byte line, as in many real lists */
};

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "list";
	long n = argc > 2 ? atol(argv[2]) : 300000, rounds = 10, sum = 0;

	if (!strcmp(mode, "list")) {
		struct node *nodes = malloc(sizeof(*nodes) * (size_t)n), *head;
		long *order = malloc(sizeof(long) * (size_t)n);
		unsigned long x = 88172645463325252ul;
		for (long i = 0; i < n; i++)
			order[i] = i;
		for (long i = n - 1; i > 0; i--) { /* Fisher-Yates, xorshift */
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			long j = (long)(x % (unsigned long)(i + 1)), t = order[i];
			order[i] = order[j];
			order[j] = t;
		}
		for (long i = 0; i < n; i++) {
			nodes[order[i]].value = i;
			nodes[order[i]].next = i + 1 < n ? &nodes[order[i + 1]] : NULL;
		}
		head = &nodes[order[0]];
		for (long r = 0; r < rounds; r++)
			for (struct node *p = head; p; p = p->next)
				sum += p->value;
		free(order);
		free(nodes);
	} else if (!strcmp(mode, "array")) {
		long *v = malloc(sizeof(long) * (size_t)n);
		for (long i = 0; i < n; i++)
			v[i] = i;
		for (long r = 0; r < rounds; r++)
			for (long i = 0; i < n; i++)
				sum += v[i];
		free(v);
	} else {
		fprintf(stderr, "usage: listwalk [list|array] [N]\n");
		return 2;
	}
	printf("listwalk %s %ld: checksum %ld\n", mode, n, sum);
	return 0;
}
