/* Messages about a profile that was read, shared by the commands that
 * read one (dump, report). */
#include "cli.h"

#include <locprof/profile.h>

#include <inttypes.h>

void cli_warn_profile(const struct lp_profile *p, const char *path)
{
	if (!p->n_samples)
		cli_warn("'%s' holds no samples: miss ratios are unknown", path);
	for (unsigned li = 0; li < p->n_line_sizes; li++) {
		const struct lp_window_set *ws = &p->windows[li];
		/* not lengthened: the asked length, or one window over a run
		 * shorter than it */
		if (!p->window || ws->length <= p->window || ws->n < 2)
			continue;
		cli_warn("'%s': %u-byte lines: windows of %" PRIu64 " line accesses, not %" PRIu64
			 " (at most %u windows over %" PRIu64 " line accesses)",
			 path, p->line_sizes[li], ws->length, p->window, LP_PROFILE_MAX_WINDOWS,
			 p->accesses[li]);
		return;
	}
}
