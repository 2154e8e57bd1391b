/* An array of P records of 256 bytes (four lines), of which each of 400
 * passes reads two fields: one in the record's first line and one in its
 * third. The lines touched are every other line, so they fall on half of
 * the sets of any cache, which then holds half as many of them as its
 * size says. Hold-out kernel: not used to develop any model.
 * usage: aosfield [P]  (default 1500), or built with -DN=P */
#include "kernel.h"

#define PASSES 400

struct record {
	double key;
	double pad1[15];
	double weight;
	double pad2[15];
};

int main(int argc, char **argv)
{
	long n = kernel_size(argc, argv, 1500, 2);
	struct record *r = kernel_alloc(sizeof(struct record[n]));
	double sum = 0;

	for (long i = 0; i < n; i++)
		r[i].key = (double)(i % 13), r[i].weight = (double)(i % 5);
	for (int p = 0; p < PASSES; p++)
		for (long i = 0; i < n; i++)
			sum += r[i].key * r[i].weight + p;
	kernel_done("aosfield", n, sum);
	free(r);
	return 0;
}
