/* Direct N-body forces, P bodies stored as an array of 56-byte structs
 * (position, velocity, mass: every other body straddles two 64-byte
 * lines), 3 steps of all pairs: for each body i, a sweep over every body
 * j, so that the whole array is reused once per i. Hold-out kernel: not
 * used to develop any model.
 * usage: nbody [P]  (default 400), or built with -DN=P */
#include "kernel.h"

#include <math.h>

#define STEPS 3

struct body {
	double x, y, z, vx, vy, vz, m;
};

int main(int argc, char **argv)
{
	long n = kernel_size(argc, argv, 400, 2);
	struct body *b = kernel_alloc(sizeof(struct body[n]));
	uint64_t st = 3;
	double sum = 0;

	for (long i = 0; i < n; i++) {
		b[i].x = (double)(kernel_rand(&st) % 1000);
		b[i].y = (double)(kernel_rand(&st) % 1000);
		b[i].z = (double)(kernel_rand(&st) % 1000);
		b[i].m = 1 + (double)(kernel_rand(&st) % 10);
	}
	for (int s = 0; s < STEPS; s++) {
		for (long i = 0; i < n; i++) {
			double ax = 0, ay = 0, az = 0;
			for (long j = 0; j < n; j++) {
				double dx = b[j].x - b[i].x, dy = b[j].y - b[i].y, dz = b[j].z - b[i].z;
				double r2 = dx * dx + dy * dy + dz * dz + 1e-3;
				double f = b[j].m / (r2 * sqrt(r2));
				ax += f * dx, ay += f * dy, az += f * dz;
			}
			b[i].vx += 1e-3 * ax, b[i].vy += 1e-3 * ay, b[i].vz += 1e-3 * az;
		}
		for (long i = 0; i < n; i++)
			b[i].x += b[i].vx, b[i].y += b[i].vy, b[i].z += b[i].vz;
	}
	for (long i = 0; i < n; i++)
		sum += b[i].x + b[i].vy;
	kernel_done("nbody", n, sum);
	free(b);
	return 0;
}
