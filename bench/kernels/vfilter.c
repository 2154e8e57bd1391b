/* A vertical 3-tap filter of a P x P float image walked column by column
 * (the loop order of a naive port from column-major code): each step
 * moves down one row, P floats further; with P a power of two every
 * pixel of a column lies in the same few cache sets. Twice over the
 * image, into a second one. Hold-out kernel: not used to develop any
 * model.
 * usage: vfilter [P]  (default 512), or built with -DN=P */
#include "kernel.h"

int main(int argc, char **argv)
{
	long n = kernel_size(argc, argv, 512, 4);
	float *in = kernel_alloc(sizeof(float) * (size_t)(n * n)), *out = kernel_alloc(sizeof(float) * (size_t)(n * n));
	double sum = 0;

	for (long i = 0; i < n * n; i++)
		in[i] = (float)(i % 13);
	for (int pass = 0; pass < 2; pass++) {
		for (long j = 0; j < n; j++)
			for (long i = 1; i < n - 1; i++)
				out[i * n + j] = 0.25f * in[(i - 1) * n + j] + 0.5f * in[i * n + j] + 0.25f * in[(i + 1) * n + j];
		float *t = in;
		in = out;
		out = t;
	}
	for (long i = 0; i < n * n; i++)
		sum += in[i];
	kernel_done("vfilter", n, sum);
	return 0;
}
