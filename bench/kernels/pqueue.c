/* A binary-heap priority queue of 16-byte (priority, payload) records, as
 * event-driven simulators keep one: P pushes, then 4 P operations that pop
 * the minimum and push a later event. Sifting walks from a node to its
 * parent or child, i to 2i: strides that double down the heap.
 * Hold-out kernel: not used to develop any model.
 * usage: pqueue [P]  (default 100000), or built with -DN=P */
#include "kernel.h"

struct ev {
	uint64_t t, id;
};

static void push(struct ev *h, long *n, struct ev e)
{
	long i = (*n)++;
	while (i > 0 && h[(i - 1) / 2].t > e.t) {
		h[i] = h[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h[i] = e;
}

static struct ev pop(struct ev *h, long *n)
{
	struct ev top = h[0], last = h[--*n];
	long i = 0;
	for (;;) {
		long c = 2 * i + 1;
		if (c >= *n)
			break;
		if (c + 1 < *n && h[c + 1].t < h[c].t)
			c++;
		if (h[c].t >= last.t)
			break;
		h[i] = h[c];
		i = c;
	}
	h[i] = last;
	return top;
}

int main(int argc, char **argv)
{
	long p = kernel_size(argc, argv, 100000, 64), n = 0;
	struct ev *h = kernel_alloc(sizeof(struct ev) * (p + 1));
	uint64_t st = 23, sum = 0;

	for (long i = 0; i < p; i++)
		push(h, &n, (struct ev){ kernel_rand(&st) % 1000000, (uint64_t)i });
	for (long k = 0; k < 4 * p; k++) {
		struct ev e = pop(h, &n);
		sum += e.id;
		e.t += 1 + kernel_rand(&st) % 100000;
		push(h, &n, e);
	}
	kernel_done("pqueue", p, (double)sum);
	return 0;
}
