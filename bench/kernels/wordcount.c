/* Word counting as a text tool does: P bytes of generated text (a
 * vocabulary of 4 096 made-up words, Zipf-like frequencies) tokenised,
 * each word looked up in a chained hash table of strdup'd keys and counted,
 * then the distinct words gathered into an array and sorted by count
 * with qsort. Hold-out kernel: not used to develop any model.
 * usage: wordcount [P]  (default 400000), or built with -DN=P */
#include "kernel.h"
#include <string.h>

#define NB 2048

struct word {
	char *text;
	long count;
	struct word *next;
};

static int by_count(const void *a, const void *b)
{
	const struct word *x = *(struct word *const *)a, *y = *(struct word *const *)b;

	return x->count != y->count ? (x->count < y->count) - (x->count > y->count) : strcmp(x->text, y->text);
}

int main(int argc, char **argv)
{
	long p = kernel_size(argc, argv, 400000, 64), n = 0, distinct = 0;
	char *text = kernel_alloc((size_t)p + 32);
	struct word **bucket = kernel_alloc(sizeof(*bucket) * NB);
	uint64_t st = 9;

	while (n < p) { /* word w of 4 096, drawn about as 1/w */
		double u = (double)(kernel_rand(&st) >> 11) / 9007199254740992.0;
		unsigned w = (unsigned)(4096.0 * u * u * u), len = 3 + w % 9;
		for (unsigned i = 0; i < len; i++)
			text[n++] = (char)('a' + (w * 2654435761u >> (i * 3 % 29)) % 26);
		text[n++] = ' ';
	}
	for (long i = 0; i < n;) {
		long s = i;
		while (i < n && text[i] != ' ')
			i++;
		uint64_t h = 1469598103934665603ull;
		for (long k = s; k < i; k++)
			h = (h ^ (unsigned char)text[k]) * 1099511628211ull;
		struct word **b = &bucket[h % NB], *e = *b;
		while (e && !(strncmp(e->text, text + s, (size_t)(i - s)) == 0 && e->text[i - s] == 0))
			e = e->next;
		if (!e) {
			e = kernel_alloc(sizeof(*e));
			e->text = strndup(text + s, (size_t)(i - s));
			e->next = *b;
			*b = e;
			distinct++;
		}
		e->count++;
		i++;
	}
	struct word **all = kernel_alloc(sizeof(*all) * (size_t)distinct);
	long k = 0;
	for (int b = 0; b < NB; b++)
		for (struct word *e = bucket[b]; e; e = e->next)
			all[k++] = e;
	qsort(all, (size_t)distinct, sizeof(*all), by_count);
	kernel_done("wordcount", p, (double)distinct + 1e-6 * (double)all[0]->count);
	return 0;
}
