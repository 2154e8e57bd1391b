/* How far from each cache size a cliff of the curves could lie: the
 * sizes around it at which report evaluates the curves for its
 * steepness check (report-profile.c, widen_steep()).
 *
 * Why. A group of reuses that all span about the same lines (a stencil's
 * sweeps, a loop over an array) makes the curve drop at once where the
 * cache holds their stack distance. The model's stack distances are
 * estimates from the samples' reuse distances, and the estimate of a long
 * span rests on the few samples whose reuses are longer than most of it:
 * a 3-D stencil whose 16 003 lines fit 1M (heat3d 40, 1 000 samples at
 * 1e-3) had its sweeps' stack distance put at 14 700 to 18 700 lines on
 * three seeds, so the drop at 1M was below, at or 16 % above it. The
 * resamples of a seed whose samples happen to agree show little of that
 * (8 of them estimate a spread with 27 % error), and a fixed slack of
 * 15 % missed the seed that was 16 % off.
 *
 * What is measured. For each size, the probes are the profile's samples
 * whose estimated stack distance is nearest the size in lines (up to
 * SLACK_PROBES, within a factor SLACK_REACH); the sampling error of each
 * probe's estimate is known from the samples in its span's windows
 * (lp_statstack_distinct_sd(): each window's share of reuses that reach
 * past the span is a ratio of Poisson counts). Their mean relative error
 * e says that the stack distances near the size could be a factor
 * exp(+-z e) off (z of a 95 % interval), and a curve whose distances are a
 * factor f high drops at f times the size it should: the size's ratio
 * could be the estimate's anywhere from size exp(-z e) to size exp(z e).
 * The slack is that range, at least LP_REPORT_SLACK_STEPS
 * LP_REPORT_SLACK_STEP either side (the model's own bias, which no
 * sampling error shows: a stencil's rows, docs/models.md "Intervals")
 * and at most a factor SLACK_REACH.
 *
 * Assumptions: the probes' spans stand for the reuses whose stack
 * distance is near the size (the ones a cliff there is made of); their
 * errors move together (the same windows' samples), so their mean, not a
 * smaller pooled one, is the error of the cliff's position. */
#include "report/report-internal.h"

#include "common/error.h"

#include <math.h>
#include <stdlib.h>

#define SLACK_PROBES 8
#define SLACK_REACH 2.0

struct lp_report_slack {
	double *lo, *hi; /* the slack of size j: factors on it */
};

struct by_sd {
	double sd;
	size_t i;
};

static int cmp_by_sd(const void *a, const void *b)
{
	const struct by_sd *x = a, *y = b;
	return x->sd < y->sd ? -1 : x->sd > y->sd ? 1 : (x->i > y->i) - (x->i < y->i);
}

/* The mean relative sampling error of the stack distance estimates
 * nearest `lines` (in log, within SLACK_REACH) of the sorted v[0, m); 0
 * where no estimate is that near. */
static double error_near(const struct lp_statstack *ss, const struct lp_sample *s, const struct by_sd *v,
			 size_t m, double lines)
{
	size_t hi = 0, lo, k = 0;
	double sum = 0;

	while (hi < m && v[hi].sd < lines)
		hi++;
	lo = hi; /* v[lo - 1] below, v[hi] at or above */
	while (k < SLACK_PROBES) {
		double below = lo ? log(lines / v[lo - 1].sd) : INFINITY;
		double above = hi < m ? log(v[hi].sd / lines) : INFINITY;
		const struct by_sd *x;

		if (!(fmin(below, above) <= log(SLACK_REACH)))
			break;
		x = below < above ? &v[--lo] : &v[hi++];
		sum += lp_statstack_distinct_sd(ss, s[x->i].time + 1, s[x->i].time + s[x->i].reuse) / x->sd;
		k++;
	}
	return k ? sum / (double)k : 0;
}

int lp_report_slack_new(struct lp_report_slack **out, const struct lp_statstack *ss, const struct lp_profile *p,
			unsigned li, const double *lines, size_t n)
{
	struct lp_report_slack *s = calloc(1, sizeof(*s));
	size_t first, ns, m = 0;
	double *sd = NULL;
	struct by_sd *v = NULL;
	int err = 0;

	lp_profile_line_samples(p, li, &first, &ns);
	if (!s || !(s->lo = malloc((n ? n : 1) * sizeof(*s->lo))) || !(s->hi = malloc((n ? n : 1) * sizeof(*s->hi))) ||
	    !(sd = malloc((ns ? ns : 1) * sizeof(*sd))) || !(v = malloc((ns ? ns : 1) * sizeof(*v)))) {
		err = lp_seterr(LP_ENOMEM, "out of memory");
		lp_report_slack_free(s);
		goto out;
	}
	lp_statstack_sample_sd(ss, sd);
	for (size_t i = 0; i < ns; i++)
		if (isfinite(sd[i]) && sd[i] > 0)
			v[m++] = (struct by_sd){ sd[i], first + i };
	qsort(v, m, sizeof(*v), cmp_by_sd);
	for (size_t j = 0; j < n; j++) {
		double f = exp(LP_INTERVAL_Z * error_near(ss, p->samples, v, m, lines[j]));

		s->lo[j] = fmax(1 / SLACK_REACH, fmin(1 - LP_REPORT_SLACK_STEPS * LP_REPORT_SLACK_STEP, 1 / f));
		s->hi[j] = fmin(SLACK_REACH, fmax(1 + LP_REPORT_SLACK_STEPS * LP_REPORT_SLACK_STEP, f));
	}
	*out = s;
out:
	free(sd);
	free(v);
	return err;
}

void lp_report_slack_free(struct lp_report_slack *s)
{
	if (!s)
		return;
	free(s->lo);
	free(s->hi);
	free(s);
}

double lp_report_slack_factor(const struct lp_report_slack *s, size_t j, int k)
{
	double lo = s ? s->lo[j] : 1 - LP_REPORT_SLACK_STEPS * LP_REPORT_SLACK_STEP;
	double hi = s ? s->hi[j] : 1 + LP_REPORT_SLACK_STEPS * LP_REPORT_SLACK_STEP;
	double f = (double)(k - LP_REPORT_SLACK_STEPS) / LP_REPORT_SLACK_STEPS;

	/* even steps, as many below the size as above it */
	return f < 0 ? 1 + f * (1 - lo) : 1 + f * (hi - 1);
}
