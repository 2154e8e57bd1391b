/* Needleman-Wunsch alignment of two sequences of length P, its score
 * table of (P+1)^2 ints filled in wavefront order (anti-diagonal by
 * anti-diagonal), as parallel codes order it: each cell reads its left,
 * upper and upper-left neighbours, so every access of a diagonal is a row
 * apart from the last. Hold-out kernel: not used to develop any model.
 * usage: nw [P]  (default 600), or built with -DN=P */
#include "kernel.h"

int main(int argc, char **argv)
{
	long p = kernel_size(argc, argv, 600, 8), w = p + 1;
	char *a = kernel_alloc((size_t)p), *b = kernel_alloc((size_t)p);
	int *score = kernel_alloc(sizeof(int) * w * w);
	uint64_t st = 13;

	for (long i = 0; i < p; i++) {
		a[i] = "ACGT"[kernel_rand(&st) & 3];
		b[i] = "ACGT"[kernel_rand(&st) & 3];
	}
	for (long i = 0; i < w; i++)
		score[i * w] = score[i] = (int)(-2 * i);
	for (long d = 2; d <= 2 * p; d++) {
		long lo = d - p > 1 ? d - p : 1, hi = d - 1 < p ? d - 1 : p;
		for (long i = lo; i <= hi; i++) {
			long j = d - i;
			int diag = score[(i - 1) * w + j - 1] + (a[i - 1] == b[j - 1] ? 1 : -1);
			int up = score[(i - 1) * w + j] - 2, left = score[i * w + j - 1] - 2;
			int best = diag > up ? diag : up;
			score[i * w + j] = best > left ? best : left;
		}
	}
	kernel_done("nw", p, (double)score[w * w - 1]);
	return 0;
}
