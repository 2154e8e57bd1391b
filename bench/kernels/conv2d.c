/* 5 x 5 convolution of a P x (P + 3) image of floats (rows of 4(P + 3)
 * bytes, not a multiple of the line) into a second image, 3 times: every
 * output pixel reads a 5 x 5 window, so each input row is reused by five
 * output rows. Hold-out kernel: not used to develop any model.
 * usage: conv2d [P]  (default 300), or built with -DN=P */
#include "kernel.h"

#define REPS 3
#define K 5

int main(int argc, char **argv)
{
	long h = kernel_size(argc, argv, 300, K), w = h + 3;
	float (*in)[w] = kernel_alloc(sizeof(float[h][w]));
	float (*out)[w] = kernel_alloc(sizeof(float[h][w]));
	float f[K][K];
	double sum = 0;

	for (int a = 0; a < K; a++)
		for (int c = 0; c < K; c++)
			f[a][c] = (float)(1 + a * c) / 100.0f;
	for (long i = 0; i < h; i++)
		for (long j = 0; j < w; j++)
			in[i][j] = (float)((i * 13 + j * 7) % 31);
	for (int r = 0; r < REPS; r++)
		for (long i = 0; i + K <= h; i++)
			for (long j = 0; j + K <= w; j++) {
				float acc = 0;
				for (int a = 0; a < K; a++)
					for (int c = 0; c < K; c++)
						acc += f[a][c] * in[i + a][j + c];
				out[i][j] = acc + (float)r;
			}
	for (long i = 0; i < h; i += 3)
		sum += out[i][(i * 5) % (w - K)];
	kernel_done("conv2d", h, sum);
	free(in), free(out);
	return 0;
}
