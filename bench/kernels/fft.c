/* Complex fast Fourier transform of n points, recursive mixed-radix
 * Cooley-Tukey (any n; fast when n has only small prime factors, e.g.
 * 2^a 3^b 5^c), out of place, with a table of the n twiddle factors. A
 * forward and an inverse transform, 2 times.
 * usage: fft [n]  (default 65536), or built with -DN=n */
#include <complex.h>
#include <math.h>
#include "kernel.h"

#define REPS 2

/* y[0..len) = DFT of x[0], x[s], x[2s], ...; tw[e] = exp(-+2 pi i e / n)
 * for the full length n, so this length's factor e is tw[e * (n / len)]. */
static void fft(const double complex *x, double complex *y, long len, long s,
		const double complex *tw, long n)
{
	long p = 2, m;

	if (len == 1) {
		y[0] = x[0];
		return;
	}
	while (len % p)
		p++;
	m = len / p;
	for (long r = 0; r < p; r++)
		fft(x + r * s, y + r * m, m, s * p, tw, n);
	for (long k = 0; k < m; k++) {
		double complex t[p];

		for (long q = 0; q < p; q++) {
			double complex acc = 0;
			for (long r = 0; r < p; r++)
				acc += y[r * m + k] * tw[(r * (k + q * m)) % len * (n / len)];
			t[q] = acc;
		}
		for (long q = 0; q < p; q++)
			y[q * m + k] = t[q];
	}
}

int main(int argc, char **argv)
{
	long n = kernel_size(argc, argv, 65536, 1);
	double complex *x = kernel_alloc(sizeof(double complex[n]));
	double complex *y = kernel_alloc(sizeof(double complex[n]));
	double complex *fw = kernel_alloc(sizeof(double complex[n]));
	double complex *bw = kernel_alloc(sizeof(double complex[n]));
	double sum = 0;

	for (long e = 0; e < n; e++) {
		fw[e] = cexp(-2 * M_PI * I * e / n);
		bw[e] = conj(fw[e]);
		x[e] = (double)(e % 13) - 6 + I * (double)(e % 7);
	}
	for (int r = 0; r < REPS; r++) {
		fft(x, y, n, 1, fw, n);
		fft(y, x, n, 1, bw, n);
		for (long e = 0; e < n; e++)
			x[e] /= n;
	}
	for (long e = 0; e < n; e += 17)
		sum += creal(x[e]) + cimag(y[e]) * 1e-6;
	kernel_done("fft", n, sum);
	free(x), free(y), free(fw), free(bw);
	return 0;
}
