/* The 95% interval of a count estimated from samples: a hot pc's, data
 * object's, source line's or function's misses.
 *
 * A row's misses are Y = sum of y_i over its samples, y_i = p_i / rate,
 * p_i in [0, 1] the sample's miss probability: a Horvitz-Thompson sum
 * over a Poisson sample of the run's line accesses, with variance about
 * V = sum of y_i^2. A row of a dozen samples is common (a program's
 * hottest pc at a rate of 10^-4), where Y +- 1.96 sqrt(V) goes below 0
 * and is too short above, so the interval is the gamma interval of Fay
 * and Feuer (Statistics in Medicine 16, 1997) for weighted sums of
 * Poisson counts:
 *   lo = V / (2 Y) * chi2inv(0.025; 2 Y^2 / V)
 *   hi = (V + w^2) / (2 (Y + w)) * chi2inv(0.975; 2 (Y + w)^2 / (V + w^2))
 * with w = 1 / rate, the most one more sample can add. With every p_i
 * 1 it is the exact (Garwood) Poisson interval of the number of samples
 * times w; with Y = 0, [0, 3.69 w]. It holds the row's sampling error
 * only: the models' own error on a sample (a stack distance estimated
 * from the whole profile) comes on top, and is what the curves'
 * intervals show. */
#include <locprof/report.h>

#include <gsl/gsl_cdf.h>
#include <math.h>

/* The p quantile of chi-square with df >= 2 degrees of freedom (a sum of
 * Poisson counts: df = 2 Y^2 / V >= 2). GSL's inverse fails to converge
 * from about 10^5 degrees of freedom (NaN, and its default error handler
 * aborts the process), so above 1000 the Wilson-Hilferty approximation
 * stands in: its relative error there is under 10^-5. */
static double chi2_quantile(double p, double df)
{
	double z, c;

	if (df < 1) /* below 2 only by rounding or averaged copies */
		df = 1;
	if (df <= 1000)
		return gsl_cdf_chisq_Pinv(p, df);
	z = gsl_cdf_ugaussian_Pinv(p);
	c = 1 - 2 / (9 * df) + z * sqrt(2 / (9 * df));
	return df * c * c * c;
}

void lp_report_count_interval(double sum, double sum_sq, double weight, double *lo, double *hi)
{
	double v, df;

	if (!(weight > 0) || !(sum >= 0) || !(sum_sq >= 0)) { /* exact: no sampling */
		*lo = *hi = sum;
		return;
	}
	*lo = 0;
	if (sum > 0 && sum_sq > 0) {
		df = 2 * sum * sum / sum_sq;
		*lo = sum_sq / (2 * sum) * chi2_quantile(0.025, df);
	}
	v = sum_sq + weight * weight;
	df = 2 * (sum + weight) * (sum + weight) / v;
	*hi = v / (2 * (sum + weight)) * chi2_quantile(0.975, df);
	if (!(*lo >= 0 && *lo <= sum)) /* rounding at huge counts */
		*lo = *lo > sum ? sum : 0;
	if (!isfinite(*hi))
		*hi = sum;
	if (*hi < sum)
		*hi = sum;
}
