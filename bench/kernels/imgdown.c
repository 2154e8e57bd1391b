/* Image downscaling and flipping as a thumbnailer does: a P x P image of
 * 32-bit RGBA pixels averaged 2 x 2 into a (P/2) x (P/2) one (two input
 * rows per output row, per-channel arithmetic), then the small image
 * flipped vertically in place, row by row through memcpy and a row
 * buffer. Three times. Hold-out kernel: not used to develop any model.
 * usage: imgdown [P]  (default 600), or built with -DN=P */
#include "kernel.h"
#include <string.h>

static uint32_t avg4(uint32_t a, uint32_t b, uint32_t c, uint32_t d)
{
	uint32_t r = 0;

	for (int s = 0; s < 32; s += 8)
		r |= ((((a >> s) & 255) + ((b >> s) & 255) + ((c >> s) & 255) + ((d >> s) & 255)) / 4) << s;
	return r;
}

int main(int argc, char **argv)
{
	long n = kernel_size(argc, argv, 600, 4) & ~1L, h = n / 2;
	uint32_t *img = kernel_alloc(sizeof(uint32_t) * (size_t)(n * n)), *small = kernel_alloc(sizeof(uint32_t) * (size_t)(h * h));
	uint32_t *row = kernel_alloc(sizeof(uint32_t) * (size_t)h);
	double sum = 0;

	for (long i = 0; i < n * n; i++)
		img[i] = (uint32_t)(i * 2654435761u);
	for (int rep = 0; rep < 3; rep++) {
		for (long y = 0; y < h; y++)
			for (long x = 0; x < h; x++) {
				const uint32_t *p = img + 2 * y * n + 2 * x;
				small[y * h + x] = avg4(p[0], p[1], p[n], p[n + 1]);
			}
		for (long y = 0; y < h / 2; y++) {
			memcpy(row, small + y * h, sizeof(*row) * (size_t)h);
			memcpy(small + y * h, small + (h - 1 - y) * h, sizeof(*row) * (size_t)h);
			memcpy(small + (h - 1 - y) * h, row, sizeof(*row) * (size_t)h);
		}
		img[rep] ^= small[rep];
	}
	for (long i = 0; i < h * h; i++)
		sum += small[i] & 255;
	kernel_done("imgdown", n, sum);
	return 0;
}
