/* log, log1p and floor for the tool, which links no libm: the sampler's
 * geometric gaps (common/rng.h, lp_rng_geometric) use them, and sharing
 * rng.h with the instrumentation runtime gives both backends the same
 * samples for the same seed and reference stream.
 *
 * Accuracy: a few ulp (checked against libm over 10^6 random arguments by
 * tests/vg/test-vg-math.c, which compiles this file natively). The gap is
 * floor(log(u) / log1p(-p)); a result one ulp off changes it only when the
 * quotient is within an ulp of an integer, so gaps agree with libm's except
 * at such ties.
 */
#include <stdint.h>

double log(double x);
double log1p(double x);
double floor(double x);

/* 2 atanh(s) = log((1+s)/(1-s)) for |s| <= 0.1716 (sqrt(2) bound): the odd
 * series converges by a factor s^2 <= 0.0295 a term, so 11 terms reach
 * 2^-53 relative error. */
static double atanh2(double s)
{
	double s2 = s * s, term = s, sum = 0;

	for (int k = 1; k <= 25; k += 2) {
		sum += term / k;
		term *= s2;
	}
	return 2 * sum;
}

static const double ln2_hi = 6.93147180369123816490e-01; /* ln 2, high 32 bits */
static const double ln2_lo = 1.90821492927058770002e-10; /* ln 2 - ln2_hi */

double log(double x)
{
	union { double d; uint64_t b; } u;
	uint64_t b;
	int e;

	if (!(x > 0)) /* 0, negative or NaN */
		return x == 0 ? -1.0 / 0.0 : 0.0 / 0.0;
	if (x == 1.0 / 0.0)
		return x;
	u.d = x;
	e = (int)((u.b >> 52) & 0x7ff);
	if (e == 0) { /* subnormal: scale up by 2^54 */
		u.d = x * 18014398509481984.0;
		e = (int)((u.b >> 52) & 0x7ff) - 54;
	}
	e -= 1023;
	b = (u.b & 0x000fffffffffffffull) | 0x3ff0000000000000ull; /* m in [1, 2) */
	u.b = b;
	if (u.d > 1.41421356237309504880) { /* m in [sqrt2/2, sqrt2) */
		u.d *= 0.5;
		e++;
	}
	return e * ln2_hi + (atanh2((u.d - 1) / (u.d + 1)) + e * ln2_lo);
}

double log1p(double x)
{
	/* log(1+x) = 2 atanh(x / (2 + x)), exact in x for small |x| (no
	 * rounding of 1 + x); larger arguments go through log. */
	if (x > -0.2928 && x < 0.4142)
		return atanh2(x / (2 + x));
	return log(1 + x);
}

double floor(double x)
{
	double t;

	if (!(x > -4503599627370496.0 && x < 4503599627370496.0)) /* |x| >= 2^52, NaN */
		return x;
	t = (double)(int64_t)x;
	return t > x ? t - 1 : t;
}
