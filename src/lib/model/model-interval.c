/* Confidence intervals of model outputs: a Poisson bootstrap over the
 * samples, around any model given as a function of a profile.
 *
 * Why this resampling. The sampler selects every line access
 * independently with the same probability (geometric gaps), so the
 * samples of a run are a thinned Poisson process over its accesses: run
 * again with another seed, each access is in the sample a Poisson number
 * of times with the same mean. The Poisson bootstrap mimics exactly that
 * on the samples at hand: every sample is kept k times, k ~ Poisson(1),
 * independently, with its time, address and reuse distance unchanged, and
 * the model is evaluated on the resampled profile from scratch. So every
 * step of the model (its windows and phases, the Kaplan-Meier imputation,
 * the stack distance estimates shared by all samples, the cut at the
 * cache size) sees its own sampling noise, and a cache size near a cliff
 * of the curve gets resamples on both sides of it, which is the case a
 * single number hides (docs/models.md, "Intervals").
 *
 * Assumptions, and where they bend:
 * - The samples are the only randomness: the program is deterministic
 *   and its trace fixed. The interval says what another sampler seed
 *   could have given, not what the model gets wrong on average (a model's
 *   bias is outside it: docs/models.md gives the measured coverage).
 * - Resampling can only repeat accesses that were sampled; a behaviour
 *   that no sample saw is in no resample either.
 * - A handful of resamples (the evaluation must stay instant): the
 *   interval is the union of the estimate +- t(B-1) sd of the resamples
 *   (a two-sided 95 % interval, the level statistics uses by default)
 *   and the range of the resamples, so that two clusters of resamples
 *   (a cliff) are covered whole, not averaged into the middle; it holds
 *   at least the binomial interval of a proportion e of the n samples,
 *   since 8 resamples estimate the sd with about 27 % relative error:
 *   e +- 1.96 sqrt(e (1 - e) / n) united with Wilson's score interval
 *   (the first has no width at 0 and 1, where 22 samples that all hit
 *   say only that the ratio is below 15 %; Wilson's lower end is above
 *   the first's near 0); and the half-width at least LP_INTERVAL_MODEL,
 *   the models' own resolution, which a profile of many samples would
 *   otherwise hide.
 */
#include <locprof/model.h>

#include "common/error.h"
#include "common/rng.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Poisson(1) by inversion: P(k) = e^-1 / k!; k > 12 has probability
 * below 1e-10 and is clamped. */
static unsigned poisson1(struct lp_rng *r)
{
	double u = lp_rng_double(r), p = exp(-1.0), c = p;
	unsigned k = 0;

	while (u >= c && k < 12) {
		k++;
		p /= k;
		c += p;
	}
	return k;
}

/* Student's t quantile at 97.5 % (a two-sided 95 % interval) for df
 * degrees of freedom: the interval's width for few resamples; beyond the
 * table, z + (z^3 + z) / (4 df), the first Cornish-Fisher term. */
static double t975(unsigned df)
{
	static const double t[] = { 12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
				    2.201,  2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
				    2.080,  2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042 };

	if (df == 0)
		return INFINITY;
	return df <= sizeof(t) / sizeof(t[0]) ? t[df - 1] : LP_INTERVAL_Z + 2.37 / (double)df;
}

int lp_profile_resample(struct lp_profile *out, const struct lp_profile *p, unsigned li, uint64_t seed)
{
	struct lp_rng rng;
	size_t first, n, m = 0, cap;
	struct lp_sample *s;

	lp_profile_line_samples(p, li, &first, &n);
	cap = 2 * n + 16;
	if (!(s = malloc(cap * sizeof(*s))))
		return lp_seterr(LP_ENOMEM, "out of memory");
	lp_rng_seed(&rng, seed);
	for (size_t i = 0; i < n; i++) {
		unsigned k = poisson1(&rng);
		if (m + k > cap) {
			struct lp_sample *t;
			cap = 2 * cap + k;
			if (!(t = realloc(s, cap * sizeof(*s)))) {
				free(s);
				return lp_seterr(LP_ENOMEM, "out of memory");
			}
			s = t;
		}
		/* copies stay in time order: the profile's order is kept */
		for (unsigned j = 0; j < k; j++)
			s[m++] = p->samples[first + i];
	}
	*out = *p;
	out->samples = s;
	out->n_samples = out->cap_samples = m;
	return 0;
}

void lp_profile_resample_release(struct lp_profile *r)
{
	free(r->samples);
	r->samples = NULL;
	r->n_samples = r->cap_samples = 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* The Wilson score interval [*lo, *hi] of a proportion e of n trials at
 * 95 % (Wilson 1927): the binomial floor of an estimate from n samples. */
static void wilson(double e, double n, double *lo, double *hi)
{
	double z2 = LP_INTERVAL_Z * LP_INTERVAL_Z, d = 1 + z2 / n;
	double centre = (e + z2 / (2 * n)) / d;
	double half = LP_INTERVAL_Z / d * sqrt(fmax(e * (1 - e), 0.0) / n + z2 / (4 * n * n));

	*lo = fmax(0.0, centre - half);
	*hi = fmin(1.0, centre + half);
}

/* The interval of one output from its estimate e and B resampled values
 * v (sorted here), and whether it is wide because of a cliff: n is the
 * number of samples, whose binomial noise sqrt(e (1 - e) / n) is what a
 * smooth ratio of n samples spreads by. */
static void interval_of(double e, double *v, unsigned B, double n, struct lp_interval *out)
{
	double mean = 0, var = 0, half, lo, hi, range, noise, wlo = 1, whi = 0;
	unsigned used = 0;

	*out = (struct lp_interval){ .lo = e, .hi = e, .below = NAN, .above = NAN };
	if (!isfinite(e))
		return;
	for (unsigned b = 0; b < B; b++)
		if (isfinite(v[b]))
			v[used++] = v[b];
	if (used < 2)
		return;
	qsort(v, used, sizeof(*v), cmp_double);
	for (unsigned b = 0; b < used; b++)
		mean += v[b];
	mean /= used;
	for (unsigned b = 0; b < used; b++)
		var += (v[b] - mean) * (v[b] - mean);
	/* A ratio of n samples is at least as noisy as a proportion of n
	 * (StatStack's is one: the share of samples whose stack distance
	 * reaches the cache size): the binomial interval is a floor, which
	 * keeps a handful of resamples that happen to agree from giving too
	 * narrow an interval. */
	noise = n > 0 ? sqrt(fmax(e * (1 - e), 0.0) / n) : 0;
	if (n > 0 && e >= 0 && e <= 1)
		wilson(e, n, &wlo, &whi);
	half = fmax(fmax(t975(used - 1) * sqrt(var / (used - 1)), LP_INTERVAL_Z * noise), LP_INTERVAL_MODEL);
	lo = fmin(fmin(e - half, wlo), v[0]);
	hi = fmax(fmax(e + half, whi), v[used - 1]);
	out->lo = fmax(0.0, lo);
	out->hi = fmin(1.0, hi);
	/* A cliff: the resamples spread far beyond the binomial noise (the
	 * range of 12 normal draws is about 3.3 sd; a cliff moves a whole
	 * group of samples across the cache size at once) and by at least
	 * LP_INTERVAL_CLIFF; below/above are the lowest and highest values
	 * the estimate and the resamples took. */
	range = fmax(e, v[used - 1]) - fmin(e, v[0]);
	if (n > 0 && range >= LP_INTERVAL_CLIFF && range > LP_INTERVAL_CLIFF_NOISE * noise) {
		out->cliff = 1;
		out->below = fmin(e, v[0]);
		out->above = fmax(e, v[used - 1]);
	}
}

/* The resamples' evaluations, shared by the threads that run them: each
 * takes the next resample number until none is left, so the values are
 * the same whatever the number of threads (each resample's seed is drawn
 * beforehand, in order). */
struct eval_job {
	const struct lp_profile *p;
	unsigned li;
	lp_model_fn fn;
	void *ctx;
	const uint64_t *seeds;
	double *val; /* B rows of n values */
	size_t n;
	unsigned B;
	atomic_uint next;
	pthread_mutex_t lock; /* err and msg: the first failure */
	int err;
	char msg[256];
};

static void *eval_resamples(void *arg)
{
	struct eval_job *j = arg;
	unsigned b;

	while ((b = atomic_fetch_add(&j->next, 1)) < j->B) {
		struct lp_profile r;
		int err = lp_profile_resample(&r, j->p, j->li, j->seeds[b]);

		if (err >= 0) {
			err = j->fn(&r, j->ctx, j->val + (size_t)b * j->n);
			lp_profile_resample_release(&r);
		}
		if (err < 0) {
			/* the message is this thread's: copied for the caller */
			pthread_mutex_lock(&j->lock);
			if (!j->err) {
				j->err = err;
				snprintf(j->msg, sizeof(j->msg), "%s", lp_errmsg());
			}
			pthread_mutex_unlock(&j->lock);
			atomic_store(&j->next, j->B); /* the others stop too */
		}
	}
	return NULL;
}

/* Evaluates the B resamples on up to `jobs` threads (this one among
 * them); a thread that cannot be started leaves its share to the others. */
static int eval_all(struct eval_job *j, unsigned jobs)
{
	pthread_t tid[LP_INTERVAL_MAX_JOBS];
	unsigned started = 0;

	if (jobs > j->B)
		jobs = j->B;
	if (jobs > LP_INTERVAL_MAX_JOBS)
		jobs = LP_INTERVAL_MAX_JOBS;
	for (unsigned t = 1; t < jobs; t++)
		if (pthread_create(&tid[started], NULL, eval_resamples, j) == 0)
			started++;
	eval_resamples(j);
	for (unsigned t = 0; t < started; t++)
		pthread_join(tid[t], NULL);
	if (j->err)
		return lp_seterr(j->err, "%s", j->msg);
	return 0;
}

int lp_model_intervals(const struct lp_profile *p, const struct lp_interval_params *ip, lp_model_fn fn,
		       void *ctx, const double *est, size_t n, struct lp_interval *out)
{
	unsigned B = ip->resamples ? ip->resamples : LP_INTERVAL_RESAMPLES;
	uint64_t seed = ip->seed, *seeds = NULL;
	struct eval_job j = { .p = p, .li = ip->li, .fn = fn, .ctx = ctx, .n = n, .B = B };
	size_t first, ns;
	double *val, *v = NULL;
	int err;

	if (!n)
		return 0;
	if (!(val = malloc(n * B * sizeof(*val))) || !(v = malloc(B * sizeof(*v))) ||
	    !(seeds = malloc(B * sizeof(*seeds)))) {
		free(val);
		free(v);
		return lp_seterr(LP_ENOMEM, "out of memory");
	}
	for (unsigned b = 0; b < B; b++)
		seeds[b] = lp_splitmix64(&seed);
	j.seeds = seeds;
	j.val = val;
	atomic_init(&j.next, 0);
	pthread_mutex_init(&j.lock, NULL);
	err = eval_all(&j, ip->jobs ? ip->jobs : 1);
	pthread_mutex_destroy(&j.lock);
	if (err < 0)
		goto out;
	lp_profile_line_samples(p, ip->li, &first, &ns);
	for (size_t i = 0; i < n; i++) {
		for (unsigned b = 0; b < B; b++)
			v[b] = val[(size_t)b * n + i];
		interval_of(est[i], v, B, (double)(ip->floor_samples ? ip->floor_samples : ns), &out[i]);
	}
out:
	free(val);
	free(v);
	free(seeds);
	return err;
}
