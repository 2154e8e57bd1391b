/* Array of structs vs struct of arrays: a particle update that reads two
 * of eight fields. With AoS every 64-byte line brings one particle's eight
 * fields of which two are used; with SoA a line brings eight useful values.
 * usage: layout [aos|soa] [N]   (default aos 2000000) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct particle {
	double x, vx, y, vy, z, vz, mass, charge;
};

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "aos";
	long n = argc > 2 ? atol(argv[2]) : 2000000, steps = 10;
	double sum = 0;

	if (!strcmp(mode, "aos")) {
		struct particle *p = calloc((size_t)n, sizeof(*p));
		for (long i = 0; i < n; i++)
			p[i].vx = (double)(i % 13);
		for (long s = 0; s < steps; s++)
			for (long i = 0; i < n; i++)
				p[i].x += 0.01 * p[i].vx;
		for (long i = 0; i < n; i++)
			sum += p[i].x;
		free(p);
	} else if (!strcmp(mode, "soa")) {
		double *x = calloc((size_t)n, sizeof(double)), *vx = calloc((size_t)n, sizeof(double));
		for (long i = 0; i < n; i++)
			vx[i] = (double)(i % 13);
		for (long s = 0; s < steps; s++)
			for (long i = 0; i < n; i++)
				x[i] += 0.01 * vx[i];
		for (long i = 0; i < n; i++)
			sum += x[i];
		free(x);
		free(vx);
	} else {
		fprintf(stderr, "usage: layout [aos|soa] [N]\n");
		return 2;
	}
	printf("layout %s %ld: checksum %.6g\n", mode, n, sum);
	return 0;
}
