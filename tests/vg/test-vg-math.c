/* The valgrind tool's log/log1p/floor (src/vg/vg-math.c, compiled here with
 * its functions renamed lpvg_*) against libm: relative error within a few
 * ulp, and the sampler's geometric gaps floor(log(u) / log1p(-p)) equal to
 * libm's for a million random u at rates 1e-1..1e-6. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>

double lpvg_log(double x);
double lpvg_log1p(double x);
double lpvg_floor(double x);

int main(void)
{
	uint64_t x = 88172645463325252ull;
	double worst_log = 0, worst_log1p = 0;
	long gap_diff = 0, n = 0;
	static const double rates[] = { 0.5, 1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6 };
	static const double fl[] = { -2.5, -2.0, -0.5, 0.0, 0.5, 1.0, 3.99, 1e300, -1e300 };

	for (int i = 0; i < 1000000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		double u = (double)(x >> 11) * 0x1.0p-53;
		if (u <= 0)
			continue;
		double e = fabs(lpvg_log(u) - log(u)) / fabs(log(u) ? log(u) : 1);
		worst_log = e > worst_log ? e : worst_log;
		double p = rates[i % 7] * u;
		e = fabs(lpvg_log1p(-p) - log1p(-p)) / fabs(log1p(-p));
		worst_log1p = e > worst_log1p ? e : worst_log1p;
		double r = rates[i % 7];
		gap_diff += floor(log(u) / log1p(-r)) != lpvg_floor(lpvg_log(u) / lpvg_log1p(-r));
		n++;
	}
	for (unsigned i = 0; i < sizeof(fl) / sizeof(fl[0]); i++)
		if (lpvg_floor(fl[i]) != floor(fl[i])) {
			printf("FAIL: floor(%g) = %g\n", fl[i], lpvg_floor(fl[i]));
			return 1;
		}
	if (lpvg_log(1.0) != 0.0 || !isinf(lpvg_log(0.0)) || lpvg_log(4.9e-324) > -744.0) {
		printf("FAIL: log special values\n");
		return 1;
	}
	printf("log %.3g, log1p %.3g relative error; %ld of %ld gaps differ\n", worst_log, worst_log1p,
	       gap_diff, n);
	/* 8 ulp = 1.8e-15; a differing gap needs a quotient within an ulp of an
	 * integer: at most a handful in a million. */
	return worst_log < 1.8e-15 && worst_log1p < 1.8e-15 && gap_diff <= 5 ? 0 : 1;
}
