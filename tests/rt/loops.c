/* Innermost loops that the pass versions (docs/runtime.md, "Loop
 * versioning"): affine accesses, computable trip counts, no calls. Built
 * with and without versioning (LOCPROF_PASS_LOOP_VERSION=0), the same seed
 * must give the same samples and reuse times (tests/cli/test-loop-version.sh).
 * Arrays are 4 KiB-aligned on the heap, so that both builds see the same
 * lines. Usage: loops N REPS. */
#include <stdio.h>
#include <stdlib.h>

static double *alloc(long n)
{
	double *p = aligned_alloc(4096, ((size_t)n * sizeof(double) + 4095) & ~(size_t)4095);
	for (long i = 0; i < n; i++)
		p[i] = (double)(i % 7);
	return p;
}

__attribute__((noinline)) static void interchange(double *c, const double *a, const double *b, long n)
{
	for (long i = 0; i < n; i++)
		for (long k = 0; k < n; k++)
			for (long j = 0; j < n; j++) /* vectorised */
				c[i * n + j] += a[i * n + k] * b[k * n + j];
}

__attribute__((noinline)) static void stencil(double *out, const double *in, long n)
{
	for (long i = 1; i < n - 1; i++)
		for (long j = 1; j < n - 1; j++)
			out[i * n + j] = 0.25 * (in[(i - 1) * n + j] + in[(i + 1) * n + j] + in[i * n + j - 1] +
						 in[i * n + j + 1]);
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 64, reps = argc > 2 ? atol(argv[2]) : 4;
	long big = n * n;
	double *a = alloc(big), *b = alloc(big), *c = alloc(big), *small = alloc(16);
	double s = 0;
	int *idx = aligned_alloc(4096, 4096);

	for (int i = 0; i < 1024; i++)
		idx[i] = (i * 37) % 1024;
	for (long r = 0; r < reps; r++) {
		/* A long streaming loop reusing a small array: its watches are in
		 * range at every entry. */
		for (long i = 0; i < big; i++)
			a[i] += b[i] * small[i & 15];
		for (long i = 0; i < 16; i++)
			small[i] += 1;
		/* Backwards, and with a loop-invariant stride (a column). */
		for (long i = big - 1; i >= 0; i--)
			c[i] = a[i] - c[i];
		for (long k = 0; k < n; k++)
			for (long i = 0; i < n; i++)
				s += b[i * n + k];
		/* A conditional block in the body, and a loop-invariant address. */
		for (long i = 0; i < big; i++) {
			if (a[i] > 3)
				b[i] = a[i] * 0.5;
			small[3] += 1;
		}
		/* Larger constant steps: 32 bytes (a shorter strip, its range
		 * still read from the shadow) and 256 bytes over a run of 256
		 * (c[i] to c[i + 31]: too wide for the shadow, the page counts). */
		for (long i = 0; i + 3 < big; i += 4)
			a[i + 1] += small[i & 15];
#pragma clang loop unroll(disable) vectorize(disable)
		for (long i = 0; i + 31 < big; i += 32)
			s += c[i] + c[i + 31];
		/* Short loops (fewer trips than the range query is worth). */
		for (long i = 0; i < n; i++)
			for (long j = 0; j < (i & 7); j++)
				s += c[i * n + j];
		/* Indirect: a[idx[i]] is out of the runs, checked one by one in
		 * the fast copy (as the column walk above is). */
		for (long i = 0; i < 1024 && i < big; i++)
			s += a[idx[i]];
		interchange(c, a, b, n / 2);
		stencil(b, c, n);
	}
	for (long i = 0; i < big; i++)
		s += a[i] + b[i] + c[i];
	printf("%g\n", s);
	return 0;
}
