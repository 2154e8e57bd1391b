// The shapes of code the pass must get right (src/pass/):
// calls inside loops, exceptions thrown through instrumented frames,
// vectorised loops, recursion, setjmp/longjmp, a loop over a struct array.
// Deterministic: the same references at every run, so that the pass and
// SanitizerCoverage builds can be compared reference for reference.
// usage: passmix N
#include <csetjmp>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <vector>

static std::jmp_buf env;
static double sink;

__attribute__((noinline)) static double dot(const double *a, const double *b, int n)
{
	double s = 0;
	for (int i = 0; i < n; i++)
		s += a[i] * b[i];
	return s;
}

__attribute__((noinline)) static void axpy(double *y, const double *x, double k, int n)
{
	for (int i = 0; i < n; i++) // vectorised: 16-byte loads and stores
		y[i] += k * x[i];
}

__attribute__((noinline)) static int check(int v)
{
	if (v % 97 == 13)
		throw std::runtime_error("thirteen");
	return v * 3;
}

__attribute__((noinline)) static long fib(const int *memo, int n)
{
	return n < 2 ? memo[n] : fib(memo, n - 1) + fib(memo, n - 2);
}

// Not a function whose entry block ends in unreachable: SanitizerCoverage
// leaves those out (the pass does not), and the test compares the two.
__attribute__((noinline)) static void jump(int *cell)
{
	*cell += 1;
	if (*cell > 0)
		std::longjmp(env, 1);
}

struct P {
	int key;
	double w;
	char tag;
};

int main(int argc, char **argv)
{
	int n = argc > 1 ? std::atoi(argv[1]) : 1000;
	std::vector<double> a(n), b(n);
	std::vector<P> ps(n);
	int memo[2] = { 0, 1 };
	volatile int cell = 0;
	long caught = 0, total = 0;

	for (int i = 0; i < n; i++) {
		a[i] = i % 7;
		b[i] = i % 5;
		ps[i] = { i * 31 % n, i * 0.5, (char)(i & 0x7f) };
	}
	for (int r = 0; r < 20; r++) {
		axpy(a.data(), b.data(), 0.5, n);
		sink += dot(a.data(), b.data(), n);
		for (int i = 0; i < n; i++) {
			try {
				total += check(ps[i].key + r); // a call in the middle of the block
				ps[i].w += ps[ps[i].key].w;
			} catch (const std::exception &) {
				caught++;
				ps[i].tag ^= 1;
			}
		}
	}
	total += fib(memo, 15);
	if (setjmp(env) == 0)
		jump((int *)&cell);
	total += cell;
	std::printf("%ld %ld %.1f\n", total, caught, sink);
	return 0;
}
