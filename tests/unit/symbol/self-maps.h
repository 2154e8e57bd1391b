/* This process's file mappings from /proc/self/maps, as a trace or a
 * profile records them, for the symbol tests. */
#ifndef LP_TEST_SELF_MAPS_H
#define LP_TEST_SELF_MAPS_H

#include <locprof/mapping.h>

/* exec_only: the executable mappings only, as the recorders keep. */
static inline void lp_test_self_maps(struct lp_mappings *m, int exec_only)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[1024];

	assert_non_null(f);
	memset(m, 0, sizeof(*m));
	while (fgets(line, sizeof(line), f)) {
		unsigned long long a, b, off;
		char perm[8], path[512] = "";

		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %511s", &a, &b, perm, &off, path) < 4 ||
		    path[0] != '/' || (exec_only && perm[2] != 'x'))
			continue;
		assert_int_equal(lp_mappings_add(m, a, b, off, path, NULL, 0), 0);
	}
	fclose(f);
}

#endif
