/* LZ77 match finding with hash chains, as deflate does: P bytes of
 * generated text (words drawn from a small vocabulary), a 32 KiB window,
 * a head table of 2^15 chain starts and a prev array over the window, at
 * most 32 candidates per position, matches compared byte by byte.
 * Hold-out kernel: not used to develop any model.
 * usage: lz77 [P]  (default 1000000), or built with -DN=P */
#include "kernel.h"
#include <string.h>

#define WSIZE 32768
#define HBITS 15
#define MAXCHAIN 32
#define MINMATCH 3
#define MAXMATCH 258

static const char *words[] = { "the ", "of ", "cache ", "line ", "miss ", "reuse ", "distance ", "and ",
			       "stack ", "sample ", "profile ", "memory ", "to ", "a ", "set ", "way ",
			       "random ", "replacement ", "model ", "ratio ", "in ", "is ", "for ", "with " };

int main(int argc, char **argv)
{
	long p = kernel_size(argc, argv, 1000000, 1024);
	unsigned char *text = kernel_alloc((size_t)p + MAXMATCH);
	int *head = kernel_alloc(sizeof(int) << HBITS), *prev = kernel_alloc(sizeof(int) * WSIZE);
	uint64_t st = 7;
	long n = 0, matched = 0, literals = 0;

	while (n < p) {
		const char *w = words[kernel_rand(&st) % (sizeof(words) / sizeof(words[0]))];
		size_t len = strlen(w);
		if (n + (long)len > p)
			len = (size_t)(p - n);
		memcpy(text + n, w, len);
		n += (long)len;
	}
	for (long i = 0; i < (1 << HBITS); i++)
		head[i] = -1;
	for (long i = 0; i + MINMATCH <= p;) {
		unsigned h = ((text[i] << 10) ^ (text[i + 1] << 5) ^ text[i + 2]) & ((1u << HBITS) - 1);
		long best = 0, cand = head[h];
		for (int chain = 0; chain < MAXCHAIN && cand >= 0 && i - cand < WSIZE; chain++) {
			long l = 0, lim = p - i < MAXMATCH ? p - i : MAXMATCH;
			while (l < lim && text[cand + l] == text[i + l])
				l++;
			if (l > best)
				best = l;
			cand = prev[cand % WSIZE];
		}
		long step = best >= MINMATCH ? best : 1;
		for (long k = 0; k < step && i + MINMATCH <= p; k++, i++) {
			unsigned hk = ((text[i] << 10) ^ (text[i + 1] << 5) ^ text[i + 2]) & ((1u << HBITS) - 1);
			prev[i % WSIZE] = head[hk];
			head[hk] = (int)i;
		}
		if (best >= MINMATCH)
			matched += best;
		else
			literals++;
	}
	kernel_done("lz77", p, (double)matched + 1e-3 * (double)literals);
	return 0;
}
