/* The --cache and --policy arguments of the commands that read a profile
 * (report, annotate, diff): a cache is what cli_cache_arg() takes (SPEC,
 * L1, L2, L3 or host, the same syntax and messages as simulate's), as a
 * report's named cache. */
#include "cli.h"

#include <locprof/report.h>
#include <locprof/sim.h>

#include <string.h>

enum { MAX_NAMED = 32 };

/* ASSOC 0 is taken for full (what report accepted first). The models are
 * LRU's and random replacement's (--policy), so a SPEC names no other
 * policy. */
int cli_report_cache_option(const struct cli_command *cmd, const char *arg, struct lp_report_cache *caches,
			    size_t cap, size_t *n)
{
	struct lp_named_cache nc[MAX_NAMED];
	char buf[128];
	const char *colon = strchr(arg, ':'), *label = arg; /* a SPEC as written */
	size_t got;
	int rc;

	if (colon && colon[1] == '0' && (colon[2] == ':' || !colon[2]) && strlen(arg) + 4 < sizeof(buf)) {
		snprintf(buf, sizeof(buf), "%.*sfull%s", (int)(colon + 1 - arg), arg, colon + 2);
		arg = buf;
	}
	if (*n >= cap)
		return cli_usage_error(cmd, "more than %zu caches", cap);
	if ((rc = cli_cache_arg(cmd, arg, nc, cap - *n < MAX_NAMED ? cap - *n : MAX_NAMED, &got)) != 0)
		return rc;
	for (size_t i = 0; i < got; i++) {
		struct lp_report_cache *c = &caches[(*n)++];

		if (strcmp(nc[i].spec.policy, "lru"))
			return cli_usage_error(cmd, "bad cache '%s': %s predicts LRU and random replacement (--policy), not %s",
					       label, cmd->name, nc[i].spec.policy);
		memset(c, 0, sizeof(*c));
		snprintf(c->label, sizeof(c->label), "%s", colon ? label : nc[i].name);
		c->size = nc[i].spec.size;
		c->ways = nc[i].spec.assoc;
		c->line = nc[i].spec.line;
	}
	return 0;
}

int cli_report_policy_option(const struct cli_command *cmd, const char *arg, unsigned *policies)
{
	*policies = (strstr(arg, "lru") ? LP_REPORT_LRU : 0) | (strstr(arg, "random") ? LP_REPORT_RANDOM : 0);
	return *policies ? 0 : cli_usage_error(cmd, "bad --policy '%s' (lru, random)", arg);
}
