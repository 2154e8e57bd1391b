/* Accesses at constant offsets from one pointer, the pass's check merging
 * (docs/runtime.md, "Check merging"): fields of list nodes and tree nodes
 * read and written near each other, in the same block and in blocks the
 * first dominates, with calls, loop back edges and samples in between,
 * and a node larger than one window (448 bytes) so that one base has
 * several clusters; and elements of arrays at a variable index plus a
 * constant (a[j], a[j + 1], p[j].x, p[j].z with an int j: one window
 * per cluster of them, the index sign-extended as the GEP does). Built with and without merging
 * (LOCPROF_PASS_CHECK_MERGE=0), the same seed must give the same samples
 * (tests/cli/test-check-merge.sh). Nodes are 4 KiB-aligned blocks of one
 * array, so that both builds see the same lines. Usage: fields N REPS. */
#include <stdio.h>
#include <stdlib.h>

struct node {
	long key;
	long pad[5];
	struct node *next;
	long val;
	long more[60]; /* the node spans 544 bytes: two clusters */
	struct node *left, *right;
};

static long sink;

__attribute__((noinline)) static void touch(struct node *n)
{
	/* A callee between two accesses of one cluster: it may sample. */
	n->pad[1] += n->key;
	sink += n->more[3];
}

__attribute__((noinline)) static long walk(struct node *head, long reps)
{
	long s = 0;
	for (long r = 0; r < reps; r++)
		for (struct node *n = head; n; n = n->next) {
			s += n->key + n->pad[2];
			if (n->key & 1) { /* a block the first dominates */
				n->val += s;
				s ^= n->more[7];
			} else {
				s += n->more[55]; /* the second cluster */
				n->more[56] = s;
			}
			if ((n->key & 7) == 3)
				touch(n); /* then the same fields again */
			s += n->val + n->pad[4] + n->more[1];
		}
	return s;
}

__attribute__((noinline)) static struct node *insert(struct node *root, struct node *n)
{
	struct node **at = &root;
	while (*at)
		at = n->key < (*at)->key ? &(*at)->left : &(*at)->right;
	*at = n;
	return root;
}

__attribute__((noinline)) static long search(struct node *root, long key)
{
	long depth = 0;
	while (root && root->key != key) {
		depth += root->val & 3;
		root = key < root->key ? root->left : root->right;
	}
	return root ? depth + root->more[59] : -1;
}

struct pt {
	long x, y, z;
};

__attribute__((noinline)) static long indexed(long *a, const int *idx, struct pt *p, long n, long reps)
{
	long s = 0;
	for (long r = 0; r < reps; r++)
		for (long i = 0; i < n; i++) {
			int j = idx[i]; /* indirect: the loop is not versioned */
			s += a[j] + a[j + 1];
			a[j + 2] = s;
			s += p[j].x * p[j].z;
			p[j].y += s;
			s ^= a[j + 100]; /* 800 bytes on: another cluster */
			if (s & 1)
				s += a[j + 1] - p[j].y; /* a block the first dominates */
		}
	return s;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000, reps = argc > 2 ? atol(argv[2]) : 4;
	struct node *nodes = aligned_alloc(4096, (size_t)n * 4096);
	struct node *head = NULL, *root = NULL;
	long s = 0;

	for (long i = 0; i < n; i++) {
		struct node *x = (struct node *)((char *)nodes + i * 4096);
		x->key = (i * 7919) % n;
		x->val = i;
		for (int j = 0; j < 5; j++)
			x->pad[j] = j;
		for (int j = 0; j < 60; j++)
			x->more[j] = i ^ j;
		x->left = x->right = NULL;
		/* a shuffled list */
		x->next = head;
		head = x;
		root = insert(root, x);
	}
	s += walk(head, reps);
	long *arr = aligned_alloc(4096, ((size_t)n * 8 + 4096) & ~(size_t)4095);
	struct pt *pts = aligned_alloc(4096, ((size_t)n * sizeof(struct pt) + 4095) & ~(size_t)4095);
	int *idx = aligned_alloc(4096, ((size_t)n * sizeof(int) + 4095) & ~(size_t)4095);
	for (long i = 0; i < n + 100; i++)
		arr[i] = i;
	for (long i = 0; i < n; i++) {
		pts[i].x = pts[i].y = pts[i].z = i;
		idx[i] = (int)((i * 7919) % (n - 100 > 0 ? n - 100 : 1));
	}
	s += indexed(arr, idx, pts, n, reps);
	for (long r = 0; r < reps; r++)
		for (long k = 0; k < n; k++)
			s += search(root, (k * 31) % n);
	printf("%ld %ld\n", s, sink);
	return 0;
}
