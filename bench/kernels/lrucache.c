/* A software LRU cache, as servers and interpreters keep one: a chained
 * hash table of malloc'd entries and a doubly linked recency list, room
 * for P/4 entries, 4 P lookups of keys drawn with a skew (most lookups hit
 * a hot set, the rest scatter over 4 P keys); a miss evicts the list's
 * tail and inserts a new entry. Pointer chasing through nodes that
 * malloc places in the order they were created.
 * Hold-out kernel: not used to develop any model.
 * usage: lrucache [P]  (default 100000), or built with -DN=P */
#include "kernel.h"

struct entry {
	uint64_t key, value;
	struct entry *hnext, *prev, *next;
};

int main(int argc, char **argv)
{
	long p = kernel_size(argc, argv, 100000, 64);
	long cap = p / 4, nb = 1, used = 0, hits = 0;
	while (nb < cap)
		nb <<= 1;
	struct entry **bucket = kernel_alloc(sizeof(*bucket) * nb), head = { 0 };
	uint64_t st = 3, sum = 0;

	head.prev = head.next = &head;
	for (long q = 0; q < 4 * p; q++) {
		uint64_t r = kernel_rand(&st), key;
		double u = (double)(r >> 11) / 9007199254740992.0;
		key = (uint64_t)(u * u * (double)(4 * p)) + 1;
		struct entry **b = &bucket[(key * 0x9e3779b97f4a7c15ull >> 20) & (uint64_t)(nb - 1)], *e = *b;
		while (e && e->key != key)
			e = e->hnext;
		if (e) {
			hits++;
			e->prev->next = e->next; /* move to the front */
			e->next->prev = e->prev;
		} else {
			if (used == cap) { /* evict the tail */
				e = head.prev;
				e->prev->next = &head;
				head.prev = e->prev;
				struct entry **pb = &bucket[(e->key * 0x9e3779b97f4a7c15ull >> 20) & (uint64_t)(nb - 1)];
				while (*pb != e)
					pb = &(*pb)->hnext;
				*pb = e->hnext;
			} else {
				e = kernel_alloc(sizeof(*e));
				used++;
			}
			e->key = key;
			e->value = key * 3;
			e->hnext = *b;
			*b = e;
		}
		e->next = head.next;
		e->prev = &head;
		head.next->prev = e;
		head.next = e;
		sum += e->value;
	}
	kernel_done("lrucache", p, (double)hits + 1e-9 * (double)sum);
	return 0;
}
