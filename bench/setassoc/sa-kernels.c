/* Kernels whose data layouts decide their set-associative misses, for
 * bench/setassoc-accuracy.sh: usage `sa-kernels KERNEL [ARGS]`.
 *
 *   colwalk ROWS COLS REPS   sum a ROWS x COLS matrix of doubles column by
 *                            column (row-major: a column is a walk of
 *                            stride COLS * 8 bytes)
 *   rowwalk ROWS COLS REPS   the same matrix row by row
 *   matmul N                 C = A B, i-j-k order (B walked by columns)
 *   matmul-ikj N             C = A B, i-k-j order (all rows)
 *   stencil ROWS COLS REPS   5-point Jacobi sweeps between two grids
 *   arrays BYTES REPS        a[i] = b[i] + c[i] over three arrays of BYTES / 3
 *                            in all, swept REPS times
 *   random BYTES N           N reads at random places of a BYTES array
 *   bitrev M REPS            y[reverse(i)] = x[i] over 2^M doubles, REPS
 *                            times (an FFT's reordering)
 *   vfilter ROWS COLS REPS   a vertical 9-tap filter over a ROWS x COLS
 *                            float image, column by column
 *   table N REPS             N records of 256 bytes (three fields read and
 *                            two written) beside a table of 16 doubles
 *                            4 KiB apart, entry i % 16 read with record i
 *
 * Each prints a checksum so that nothing is optimised away. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double *new_doubles(size_t n)
{
	double *p = malloc(n * sizeof(*p));

	if (!p) {
		fprintf(stderr, "sa-kernels: out of memory\n");
		exit(1);
	}
	for (size_t i = 0; i < n; i++)
		p[i] = (double)(i % 7) * 0.5;
	return p;
}

static double colwalk(long rows, long cols, long reps)
{
	double *a = new_doubles((size_t)(rows * cols)), s = 0;

	for (long r = 0; r < reps; r++)
		for (long j = 0; j < cols; j++)
			for (long i = 0; i < rows; i++)
				s += a[i * cols + j];
	free(a);
	return s;
}

static double rowwalk(long rows, long cols, long reps)
{
	double *a = new_doubles((size_t)(rows * cols)), s = 0;

	for (long r = 0; r < reps; r++)
		for (long i = 0; i < rows; i++)
			for (long j = 0; j < cols; j++)
				s += a[i * cols + j];
	free(a);
	return s;
}

static double matmul(long n, int ikj)
{
	double *a = new_doubles((size_t)(n * n)), *b = new_doubles((size_t)(n * n)), *c = new_doubles((size_t)(n * n));
	double s = 0;

	memset(c, 0, (size_t)(n * n) * sizeof(*c));
	if (!ikj) {
		for (long i = 0; i < n; i++)
			for (long j = 0; j < n; j++) {
				double t = 0;
				for (long k = 0; k < n; k++)
					t += a[i * n + k] * b[k * n + j];
				c[i * n + j] = t;
			}
	} else {
		for (long i = 0; i < n; i++)
			for (long k = 0; k < n; k++) {
				double t = a[i * n + k];
				for (long j = 0; j < n; j++)
					c[i * n + j] += t * b[k * n + j];
			}
	}
	for (long i = 0; i < n * n; i++)
		s += c[i];
	free(a);
	free(b);
	free(c);
	return s;
}

static double stencil(long rows, long cols, long reps)
{
	double *u = new_doubles((size_t)(rows * cols)), *v = new_doubles((size_t)(rows * cols)), s = 0;

	for (long r = 0; r < reps; r++) {
		for (long i = 1; i < rows - 1; i++)
			for (long j = 1; j < cols - 1; j++)
				v[i * cols + j] = 0.2 * (u[i * cols + j] + u[(i - 1) * cols + j] + u[(i + 1) * cols + j] +
							 u[i * cols + j - 1] + u[i * cols + j + 1]);
		double *t = u;
		u = v;
		v = t;
	}
	for (long i = 0; i < rows * cols; i++)
		s += u[i];
	free(u);
	free(v);
	return s;
}

static double arrays(long bytes, long reps)
{
	long n = bytes / 3 / 8;
	double *a = new_doubles((size_t)n), *b = new_doubles((size_t)n), *c = new_doubles((size_t)n), s = 0;

	for (long r = 0; r < reps; r++)
		for (long i = 0; i < n; i++)
			a[i] = b[i] + c[i] * 0.5;
	for (long i = 0; i < n; i++)
		s += a[i];
	free(a);
	free(b);
	free(c);
	return s;
}

static double randomwalk(long bytes, long n)
{
	long m = bytes / 8;
	double *a = new_doubles((size_t)m), s = 0;
	uint64_t x = 88172645463325252ull;

	for (long i = 0; i < n; i++) {
		x ^= x << 13; /* xorshift64: the places, not a load of a table */
		x ^= x >> 7;
		x ^= x << 17;
		s += a[x % (uint64_t)m];
	}
	free(a);
	return s;
}

static double bitrev(long m, long reps)
{
	long n = 1L << m;
	double *x = new_doubles((size_t)n), *y = new_doubles((size_t)n), *t, s = 0;

	for (long r = 0; r < reps; r++) {
		for (long i = 0; i < n; i++) {
			long j = 0;
			for (long b = 0; b < m; b++)
				j |= ((i >> b) & 1) << (m - 1 - b);
			y[j] = x[i];
		}
		t = x, x = y, y = t;
	}
	for (long i = 0; i < n; i += 17)
		s += x[i];
	free(x);
	free(y);
	return s;
}

static double vfilter(long rows, long cols, long reps)
{
	float *in = malloc((size_t)((rows + 8) * cols) * sizeof(*in)), *out = malloc((size_t)(rows * cols) * sizeof(*out));
	double s = 0;

	if (!in || !out) {
		fprintf(stderr, "sa-kernels: out of memory\n");
		exit(1);
	}
	for (long i = 0; i < (rows + 8) * cols; i++)
		in[i] = (float)(i % 11);
	for (long r = 0; r < reps; r++)
		for (long j = 0; j < cols; j++)
			for (long i = 0; i < rows; i++) {
				float t = 0;
				for (long k = 0; k < 9; k++)
					t += in[(i + k) * cols + j] / (float)(k + 1);
				out[i * cols + j] = t;
			}
	for (long i = 0; i < rows * cols; i += 13)
		s += out[i];
	free(in);
	free(out);
	return s;
}

struct record {
	double f[32];
};

static double table(long n, long reps)
{
	struct record *p = calloc((size_t)n, sizeof(*p));
	double *tab = new_doubles(16 * 512), s = 0;

	if (!p) {
		fprintf(stderr, "sa-kernels: out of memory\n");
		exit(1);
	}
	for (long i = 0; i < n; i++)
		p[i].f[0] = (double)i, p[i].f[8] = (double)(i % 3), p[i].f[16] = 1;
	for (long r = 0; r < reps; r++)
		for (long i = 0; i < n; i++) {
			p[i].f[0] += p[i].f[8] * 0.5 + tab[(i & 15) * 512];
			p[i].f[16] += p[i].f[0] * 1e-3;
		}
	for (long i = 0; i < n; i += 7)
		s += p[i].f[16];
	free(p);
	free(tab);
	return s;
}

int main(int argc, char **argv)
{
	long v[3] = { 0, 0, 0 };
	double s;

	if (argc < 2) {
		fprintf(stderr, "usage: sa-kernels KERNEL [ARGS] (see the source)\n");
		return 2;
	}
	for (int i = 2; i < argc && i < 5; i++)
		v[i - 2] = strtol(argv[i], NULL, 0);
	if (!strcmp(argv[1], "colwalk"))
		s = colwalk(v[0], v[1], v[2]);
	else if (!strcmp(argv[1], "rowwalk"))
		s = rowwalk(v[0], v[1], v[2]);
	else if (!strcmp(argv[1], "matmul"))
		s = matmul(v[0], 0);
	else if (!strcmp(argv[1], "matmul-ikj"))
		s = matmul(v[0], 1);
	else if (!strcmp(argv[1], "stencil"))
		s = stencil(v[0], v[1], v[2]);
	else if (!strcmp(argv[1], "arrays"))
		s = arrays(v[0], v[1]);
	else if (!strcmp(argv[1], "random"))
		s = randomwalk(v[0], v[1]);
	else if (!strcmp(argv[1], "bitrev"))
		s = bitrev(v[0], v[1]);
	else if (!strcmp(argv[1], "vfilter"))
		s = vfilter(v[0], v[1], v[2]);
	else if (!strcmp(argv[1], "table"))
		s = table(v[0], v[1]);
	else {
		fprintf(stderr, "sa-kernels: unknown kernel '%s'\n", argv[1]);
		return 2;
	}
	printf("%s %.6g\n", argv[1], s);
	return 0;
}
