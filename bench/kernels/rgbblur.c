/* Separable 5-tap blur of a P x P image of 3-byte RGB pixels: a
 * horizontal pass into a second image, a vertical pass back, twice.
 * A pixel is one 3-byte reference per channel group; one in 64/3 of them
 * straddles two lines. Hold-out kernel: not used to develop any model.
 * usage: rgbblur [P]  (default 400), or built with -DN=P */
#include "kernel.h"

struct rgb {
	unsigned char r, g, b;
};

static struct rgb mix(struct rgb a, struct rgb b, struct rgb c, struct rgb d, struct rgb e)
{
	struct rgb o;
	o.r = (unsigned char)((a.r + 4 * b.r + 6 * c.r + 4 * d.r + e.r) >> 4);
	o.g = (unsigned char)((a.g + 4 * b.g + 6 * c.g + 4 * d.g + e.g) >> 4);
	o.b = (unsigned char)((a.b + 4 * b.b + 6 * c.b + 4 * d.b + e.b) >> 4);
	return o;
}

int main(int argc, char **argv)
{
	long p = kernel_size(argc, argv, 400, 8);
	struct rgb *img = kernel_alloc(sizeof(struct rgb) * p * p), *tmp = kernel_alloc(sizeof(struct rgb) * p * p);
	uint64_t st = 5;
	double sum = 0;

	for (long i = 0; i < p * p; i++) {
		uint64_t r = kernel_rand(&st);
		img[i].r = (unsigned char)r;
		img[i].g = (unsigned char)(r >> 8);
		img[i].b = (unsigned char)(r >> 16);
	}
	for (int pass = 0; pass < 2; pass++) {
		for (long y = 0; y < p; y++)
			for (long x = 2; x < p - 2; x++) {
				struct rgb *row = img + y * p;
				tmp[y * p + x] = mix(row[x - 2], row[x - 1], row[x], row[x + 1], row[x + 2]);
			}
		for (long y = 2; y < p - 2; y++)
			for (long x = 0; x < p; x++)
				img[y * p + x] = mix(tmp[(y - 2) * p + x], tmp[(y - 1) * p + x], tmp[y * p + x],
						     tmp[(y + 1) * p + x], tmp[(y + 2) * p + x]);
	}
	for (long i = 0; i < p * p; i += 7)
		sum += img[i].r + img[i].g + img[i].b;
	kernel_done("rgbblur", p, sum);
	return 0;
}
