/* libFuzzer harness: the .lpp profile reader (docs/formats.md,
 * "Profiles") and the models that read a profile: StatStack and
 * StatCache (their windows and phases), per-sample miss probabilities,
 * and the data objects of the allocation events.
 *
 * A mutated chunk would almost always fail its CRC, so the harness makes
 * every chunk's CRC good before reading, unless bit 0 of the header's
 * last byte (flags, ignored by the reader) is set. */
#include "fuzz-util.h"

#include <locprof/model.h>
#include <locprof/profile.h>

#include "sample/profile-chunk.h"

#include <string.h>

static void fix_crcs(uint8_t *d, size_t size)
{
	size_t at = LP_LPP_FILE_HEADER_SIZE;

	while (size - at >= LP_CHUNK_HEADER_SIZE) {
		uint32_t len = lp_get_u32(d + at + 4);
		if (len > size - at - LP_CHUNK_HEADER_SIZE)
			break;
		lp_chunk_seal(d + at, lp_get_u32(d + at), len);
		at += LP_CHUNK_HEADER_SIZE + len;
	}
}

static void run_models(const struct lp_profile *p)
{
	static const double lines[] = { 1, 64, 512, 1e6 };
	double ratio[4];

	for (unsigned li = 0; li < p->n_line_sizes; li++) {
		struct lp_statstack *ss;
		struct lp_statcache *sc;
		size_t first, n;
		double *prob;

		lp_profile_line_samples(p, li, &first, &n);
		if (!(prob = malloc((n + 1) * sizeof(*prob))))
			abort();
		if (lp_statstack_new(&ss, p, li, 0, li & 1) == 0) {
			for (size_t i = 0; i < 4; i++)
				(void)lp_statstack_miss_ratio(ss, lines[i]);
			(void)lp_statstack_setassoc_miss_ratio(ss, 64, 8);
			lp_statstack_sample_miss(ss, 64, 8, prob);
			lp_statstack_free(ss);
		}
		if (lp_statcache_new(&sc, p, li, 0, li & 1) == 0) {
			lp_statcache_curve(sc, lines, 4, ratio);
			lp_statcache_sample_miss(sc, 512, prob);
			lp_statcache_free(sc);
		}
		free(prob);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *copy = malloc(size ? size : 1);
	struct lp_profile *p;
	struct lp_objects *o;

	if (!copy)
		abort();
	memcpy(copy, data, size);
	if (size >= LP_LPP_FILE_HEADER_SIZE && !(copy[15] & 1))
		fix_crcs(copy, size);
	lp_profile_read(&p, fuzz_file(copy, size));
	free(copy);
	if (!p)
		return 0;
	run_models(p);
	if (lp_objects_new(&o, p) == 0) {
		uint64_t start, len, pc;
		for (size_t i = 0; i < p->n_samples && i < 64; i++)
			lp_objects_find_tid(o, p->samples[i].addr, p->samples[i].time, p->samples[i].tid,
					    &start, &len, &pc);
		lp_objects_free(o);
	}
	lp_profile_free(p);
	return 0;
}
