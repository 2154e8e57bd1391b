/* The --cache and --policy arguments of the commands that read a profile
 * (report, annotate, diff): SIZE:WAYS[:LINE] (WAYS 0 = fully associative,
 * LINE 64 by default), 'host' for every data cache of this machine, or L1,
 * L2, L3 for this machine's data cache of that level (from sysfs). */
#include "cli.h"

#include <locprof/report.h>

#include <string.h>

/* SIZE:WAYS[:LINE], LINE 64 by default. */
static int parse_spec(const char *spec, struct lp_report_cache *c)
{
	char buf[64];
	char *a, *b;

	if (strlen(spec) >= sizeof(buf))
		return -1;
	strcpy(buf, spec);
	memset(c, 0, sizeof(*c));
	a = strchr(buf, ':');
	if (!a)
		return -1;
	*a++ = '\0';
	b = strchr(a, ':');
	c->line = 64;
	if (b) {
		*b++ = '\0';
		if (cli_parse_size(b, &c->line) < 0 || !c->line)
			return -1;
	}
	if (cli_parse_size(buf, &c->size) < 0 || cli_parse_u64(a, &c->ways) < 0 || !c->size)
		return -1;
	snprintf(c->label, sizeof(c->label), "%s", spec);
	return 0;
}

enum { MAX_HOST = 16 };

static int cache_arg(const char *arg, struct lp_report_cache *caches, size_t cap, size_t *n)
{
	struct lp_host_cache host[MAX_HOST];
	unsigned level = 0;
	size_t nhost = 0, before = *n;

	if (strcmp(arg, "host") && !((arg[0] == 'L' || arg[0] == 'l') && arg[1] >= '1' && arg[1] <= '3' && !arg[2])) {
		if (*n >= cap || parse_spec(arg, &caches[*n]) < 0)
			return -1;
		(*n)++;
		return 0;
	}
	if (strcmp(arg, "host"))
		level = (unsigned)(arg[1] - '0');
	if (lp_host_caches(NULL, host, MAX_HOST, &nhost) < 0)
		nhost = 0;
	for (size_t i = 0; i < nhost && *n < cap; i++) {
		struct lp_report_cache *c = &caches[*n];

		if (level && host[i].level != level)
			continue;
		memset(c, 0, sizeof(*c));
		snprintf(c->label, sizeof(c->label), "%s", host[i].name);
		c->size = host[i].size;
		c->ways = host[i].ways;
		c->line = host[i].line;
		(*n)++;
		if (level)
			break;
	}
	return *n > before || !level ? 0 : -2;
}

int cli_report_cache_option(const struct cli_command *cmd, const char *arg, struct lp_report_cache *caches,
			    size_t cap, size_t *n)
{
	int err = cache_arg(arg, caches, cap, n);

	if (err == -2)
		return cli_usage_error(cmd, "this machine has no %s data cache", arg);
	if (err < 0)
		return cli_usage_error(cmd, "bad --cache '%s' (SIZE:WAYS:LINE, host, L1, L2 or L3)", arg);
	return 0;
}

int cli_report_policy_option(const struct cli_command *cmd, const char *arg, unsigned *policies)
{
	*policies = (strstr(arg, "lru") ? LP_REPORT_LRU : 0) | (strstr(arg, "random") ? LP_REPORT_RANDOM : 0);
	return *policies ? 0 : cli_usage_error(cmd, "bad --policy '%s' (lru, random)", arg);
}
