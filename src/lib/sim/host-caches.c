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

/* The host's cache h as a SPEC (LRU); LP_EINVAL with the SPEC's reason
 * when the simulator cannot take its geometry. */
static int host_named(const struct lp_host_cache *h, struct lp_named_cache *out)
{
	memset(out, 0, sizeof(*out));
	snprintf(out->name, sizeof(out->name), "%s", h->name);
	out->spec = (struct lp_cache_spec){ .size = h->size, .assoc = h->ways, .line = h->line };
	strcpy(out->spec.policy, "lru");
	if (lp_cache_spec_check(&out->spec) < 0)
		return lp_seterr(LP_EINVAL, "host %s (%llu bytes, %llu ways, %llu-byte lines): %s", h->name,
				 (unsigned long long)h->size, (unsigned long long)h->ways,
				 (unsigned long long)h->line, lp_errmsg());
	return 0;
}

int lp_cache_arg_parse(const char *arg, const char *sysfs_root, struct lp_named_cache *out, size_t cap,
		       size_t *n)
{
	struct lp_host_cache host[16];
	size_t nh = 0, k = 0;
	unsigned level = 0;
	int err;

	*n = 0;
	if (!cap)
		return lp_seterr(LP_ELIMIT, "no room for the cache '%s'", arg);
	if ((arg[0] == 'L' || arg[0] == 'l') && arg[1] >= '1' && arg[1] <= '3' && !arg[2])
		level = (unsigned)(arg[1] - '0');
	else if (strcmp(arg, "host")) {
		memset(out, 0, sizeof(*out));
		snprintf(out->name, sizeof(out->name), "%s", arg);
		if ((err = lp_cache_spec_parse(&out->spec, arg)) < 0)
			return err;
		*n = 1;
		return 0;
	}
	if ((err = lp_host_caches(sysfs_root, host, sizeof(host) / sizeof(host[0]), &nh)) < 0)
		return err;
	if (!nh)
		return lp_seterr(LP_EINVAL, "cannot read this machine's caches (no %s/devices/system/cpu/cpu0/cache)",
				 sysfs_root ? sysfs_root : "/sys");
	for (size_t i = 0; i < nh; i++) {
		if (level && host[i].level != level)
			continue;
		if (k == cap)
			return lp_seterr(LP_ELIMIT, "'%s': more than %zu caches", arg, cap);
		if ((err = host_named(&host[i], &out[k])) < 0)
			return err;
		k++;
	}
	if (!k)
		return lp_seterr(LP_EINVAL, "this machine has no L%u data cache", level);
	*n = k;
	return 0;
}
