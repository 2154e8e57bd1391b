/* locprof/sample.h - the StatCache sampler (Berg & Hagersten, section 3).
 *
 * Feed it a stream of references; it keeps a line-access clock per line
 * size, selects accesses with geometric gaps (every access has the same
 * probability `rate` of being selected), sets a watchpoint on the selected
 * line and, at the next access to that line, records the reuse distance.
 * Samples still watched at the end are kept as dangling.
 *
 * Several line sizes are sampled in one pass by independent samplers, one
 * per line size, each with its own clock, random stream (seed + index) and
 * watchpoints: a reference touches a different number of lines under each
 * line size, so their clocks differ and a shared selection could not give
 * every line access the same chance under all of them.
 */
#ifndef LOCPROF_SAMPLE_H
#define LOCPROF_SAMPLE_H

#include <locprof/profile.h>

#ifdef __cplusplus
extern "C" {
#endif

struct lp_sampler;

/* Sample into p, whose line_sizes, n_line_sizes, rate (0 < rate <= 1) and
 * seed must be set. p must outlive the sampler. */
int lp_sampler_new(struct lp_sampler **out, struct lp_profile *p);

/* Process references in order; allocation events go to the profile's
 * allocation list, timed by the references before them. Thread ids (any
 * value) are numbered 0, 1, ... in order of appearance in the samples,
 * the events and the references per thread, so that memory does not grow
 * with the largest id. */
int lp_sampler_feed(struct lp_sampler *s, const struct lp_ref *refs, size_t n);

/* Record the samples still watched as dangling, the access and reference
 * counts, and lp_profile_finish(p, p->window). Call once. */
int lp_sampler_finish(struct lp_sampler *s);

void lp_sampler_free(struct lp_sampler *s);

/* Line accesses of refs under a line size (for choosing a rate that gives
 * a target number of samples). */
uint64_t lp_line_accesses(const struct lp_ref *refs, size_t n, uint32_t line_size);

#ifdef __cplusplus
}
#endif
#endif
