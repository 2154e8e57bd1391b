/* The host's data caches, as Linux describes them in sysfs
 * (Documentation/ABI/testing/sysfs-devices-system-cpu): one directory per
 * cache of cpu0, index0, index1, ..., each with level, type, size ("48K"),
 * ways_of_associativity and coherency_line_size. cpu0 stands for every
 * core: the caches a thread sees are the same kind on every core of the
 * machines locprof runs on. */
#include <locprof/sim.h>

#include "common/error.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The first line of a sysfs file, without its newline. */
static int read_line(const char *dir, const char *name, char *buf, size_t len)
{
	char path[4200];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (!(f = fopen(path, "r")))
		return -1;
	if (!fgets(buf, (int)len, f)) {
		fclose(f);
		return -1;
	}
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

/* "48K", "2048K", "32M", "64": a count with an optional binary suffix, as
 * sysfs writes sizes; 0 only where zero_ok. */
static int parse_count(const char *s, int zero_ok, uint64_t *out)
{
	char *end;
	unsigned long long v;
	unsigned shift = 0;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (end == s || errno || *s == '-')
		return -1;
	switch (*end) {
	case 'K': shift = 10; end++; break;
	case 'M': shift = 20; end++; break;
	case 'G': shift = 30; end++; break;
	default: break;
	}
	if (*end || (!v && !zero_ok) || v > (UINT64_MAX >> shift))
		return -1;
	*out = (uint64_t)v << shift;
	return 0;
}

int lp_host_caches(const char *sysfs_root, struct lp_host_cache *out, size_t cap, size_t *n)
{
	*n = 0;
	if (!sysfs_root)
		sysfs_root = "/sys";
	if (strlen(sysfs_root) > 4000)
		return lp_seterr(LP_EINVAL, "sysfs root too long");
	for (int i = 0; i < 64 && *n < cap; i++) {
		char dir[4100], level[8], type[16], size[24], ways[24], line[24];
		struct lp_host_cache c;

		snprintf(dir, sizeof(dir), "%s/devices/system/cpu/cpu0/cache/index%d", sysfs_root, i);
		if (read_line(dir, "level", level, sizeof(level)) < 0)
			break;
		if (read_line(dir, "type", type, sizeof(type)) < 0 || !strcmp(type, "Instruction") ||
		    read_line(dir, "size", size, sizeof(size)) < 0 ||
		    read_line(dir, "ways_of_associativity", ways, sizeof(ways)) < 0 ||
		    read_line(dir, "coherency_line_size", line, sizeof(line)) < 0)
			continue;
		memset(&c, 0, sizeof(c));
		if (parse_count(level, 0, &c.size) < 0 || c.size > 9)
			continue;
		c.level = (unsigned)c.size;
		/* ways 0: fully associative, as in lp_report_cache */
		if (parse_count(size, 0, &c.size) < 0 || parse_count(ways, 1, &c.ways) < 0 ||
		    parse_count(line, 0, &c.line) < 0)
			continue;
		snprintf(c.type, sizeof(c.type), "%s", type);
		snprintf(c.name, sizeof(c.name), "L%s %s", level, size);
		out[(*n)++] = c;
	}
	return 0;
}
