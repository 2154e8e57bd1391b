/* Machine descriptions: the levels of a memory hierarchy (caches and TLBs)
 * that predictions are made for.
 *
 * Built in: the two machines of Marin & Mellor-Crummey's Table 1 and the
 * host read from sysfs. The Itanium2's L1D and L1 TLB are kept although the
 * paper does not predict them (floating-point loads bypass them there). The
 * R12000's TLB entries map two 16 KB pages each: 64 entries of 32 KB. */
#include <locprof/prediction.h>
#include <locprof/sim.h>

#include "common/array.h"
#include "common/error.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

uint64_t lp_pred_level_sets(const struct lp_pred_level *l)
{
	if (!l->assoc || l->assoc >= l->blocks)
		return 1;
	return l->blocks / l->assoc;
}

uint64_t lp_pred_level_ways(const struct lp_pred_level *l)
{
	if (!l->assoc || l->assoc >= l->blocks)
		return l->blocks;
	return l->assoc;
}

static const char *const builtin[][2] = {
	{ "itanium2", "name itanium2\n"
		      "cache L1 16K 4 64\n"
		      "cache L2 256K 8 128\n"
		      "cache L3 1536K 6 128\n"
		      "tlb TLB1 32 16K\n"
		      "tlb TLB2 128 16K\n" },
	{ "r12000", "name r12000\n"
		    "cache L1 32K 2 32\n"
		    "cache L2 8M 2 128\n"
		    "tlb TLB 64 32K\n" },
};

const char *lp_machine_builtin_names(void)
{
	return "itanium2, r12000, host";
}

int lp_machine_builtin(struct lp_machine *m, const char *name)
{
	if (!strcmp(name, "host"))
		return lp_machine_host(m, NULL);
	for (size_t i = 0; i < sizeof(builtin) / sizeof(builtin[0]); i++)
		if (!strcmp(name, builtin[i][0]))
			return lp_machine_parse(m, builtin[i][1], name);
	return lp_seterr(LP_EINVAL, "no built-in machine '%s' (built in: %s)", name,
			 lp_machine_builtin_names());
}

int lp_machine_get(struct lp_machine *m, const char *name_or_path)
{
	if (!strchr(name_or_path, '/') && access(name_or_path, F_OK) != 0)
		return lp_machine_builtin(m, name_or_path);
	return lp_machine_read(m, name_or_path);
}

/* "16K", "1.5M", "4096" in bytes (powers of 1024). */
static int parse_size(const char *s, uint64_t *out)
{
	char *end;
	double v = strtod(s, &end), mul = 1;

	if (end == s || !(v > 0))
		return -1;
	switch (toupper((unsigned char)*end)) {
	case 'K': mul = 1024.0; end++; break;
	case 'M': mul = 1024.0 * 1024; end++; break;
	case 'G': mul = 1024.0 * 1024 * 1024; end++; break;
	default: break;
	}
	if (*end == 'i' || *end == 'I')
		end++;
	if (*end == 'B' || *end == 'b')
		end++;
	if (*end)
		return -1;
	v *= mul;
	/* the range first: converting a double beyond uint64_t is undefined */
	if (!(v <= 1e18) || v != (double)(uint64_t)v)
		return -1;
	*out = (uint64_t)v;
	return 0;
}

static int pow2(uint64_t x)
{
	return x && !(x & (x - 1));
}

static int add_level(struct lp_machine *m, const char *what, unsigned line, const char *name,
		     int kind, uint64_t blocks, uint64_t assoc, uint64_t block)
{
	struct lp_pred_level *l;

	if (m->n == LP_MACHINE_MAX_LEVELS)
		return lp_seterr(LP_ELIMIT, "%s:%u: at most %d levels", what, line, LP_MACHINE_MAX_LEVELS);
	if (strlen(name) >= LP_PRED_NAME_MAX)
		return lp_seterr(LP_EINVAL, "%s:%u: level name '%s' too long", what, line, name);
	for (size_t i = 0; i < m->n; i++)
		if (!strcmp(m->level[i].name, name))
			return lp_seterr(LP_EINVAL, "%s:%u: level '%s' given twice", what, line, name);
	if (!pow2(block))
		return lp_seterr(LP_EINVAL, "%s:%u: %s size %llu is not a power of two", what, line,
				 kind == LP_PRED_LEVEL_TLB ? "page" : "line", (unsigned long long)block);
	if (!blocks)
		return lp_seterr(LP_EINVAL, "%s:%u: level '%s' holds no %s", what, line, name,
				 kind == LP_PRED_LEVEL_TLB ? "entry" : "line");
	if (assoc && (assoc > blocks || blocks % assoc))
		return lp_seterr(LP_EINVAL, "%s:%u: %llu %s do not split into sets of %llu ways", what,
				 line, (unsigned long long)blocks,
				 kind == LP_PRED_LEVEL_TLB ? "entries" : "lines", (unsigned long long)assoc);
	l = &m->level[m->n++];
	memset(l, 0, sizeof(*l));
	snprintf(l->name, sizeof(l->name), "%s", name);
	l->kind = kind;
	l->blocks = blocks;
	l->assoc = assoc == blocks ? 0 : assoc;
	l->block = block;
	return 0;
}

int lp_machine_parse(struct lp_machine *m, const char *text, const char *what)
{
	char *copy = strdup(text), *save = NULL;
	unsigned line = 0;
	int rc = 0;

	memset(m, 0, sizeof(*m));
	if (!copy)
		return lp_seterr(LP_ENOMEM, "out of memory");
	snprintf(m->name, sizeof(m->name), "%s", what);
	for (char *l = strtok_r(copy, "\n", &save); l && !rc; l = strtok_r(NULL, "\n", &save)) {
		char *tok[8], *s2 = NULL, *hash = strchr(l, '#');
		int nt = 0;
		uint64_t a, b, c = 0;

		line++;
		if (hash)
			*hash = 0;
		for (char *t = strtok_r(l, " \t\r", &s2); t && nt < 8; t = strtok_r(NULL, " \t\r", &s2))
			tok[nt++] = t;
		if (!nt)
			continue;
		if (!strcmp(tok[0], "name") && nt == 2) {
			snprintf(m->name, sizeof(m->name), "%s", tok[1]);
		} else if (!strcmp(tok[0], "cache") && nt == 5) {
			/* cache NAME SIZE ASSOC LINE */
			if (parse_size(tok[2], &a) < 0 || parse_size(tok[4], &b) < 0)
				rc = lp_seterr(LP_EPARSE, "%s:%u: bad size in 'cache %s %s %s %s'", what, line,
					       tok[1], tok[2], tok[3], tok[4]);
			else if (strcmp(tok[3], "full") && parse_size(tok[3], &c) < 0)
				rc = lp_seterr(LP_EPARSE, "%s:%u: bad associativity '%s' (a number or 'full')",
					       what, line, tok[3]);
			else if (a % b)
				rc = lp_seterr(LP_EINVAL, "%s:%u: cache size %s is not a multiple of the line %s",
					       what, line, tok[2], tok[4]);
			else
				rc = add_level(m, what, line, tok[1], LP_PRED_LEVEL_CACHE, a / b, c, b);
		} else if (!strcmp(tok[0], "tlb") && (nt == 4 || nt == 5)) {
			/* tlb NAME ENTRIES PAGE [ASSOC] */
			if (parse_size(tok[2], &a) < 0 || parse_size(tok[3], &b) < 0)
				rc = lp_seterr(LP_EPARSE, "%s:%u: bad number in 'tlb %s %s %s'", what, line,
					       tok[1], tok[2], tok[3]);
			else if (nt == 5 && strcmp(tok[4], "full") && parse_size(tok[4], &c) < 0)
				rc = lp_seterr(LP_EPARSE, "%s:%u: bad associativity '%s'", what, line, tok[4]);
			else
				rc = add_level(m, what, line, tok[1], LP_PRED_LEVEL_TLB, a, c, b);
		} else {
			rc = lp_seterr(LP_EPARSE,
				       "%s:%u: expected 'name N', 'cache NAME SIZE ASSOC LINE' or "
				       "'tlb NAME ENTRIES PAGE [ASSOC]'", what, line);
		}
	}
	free(copy);
	if (!rc && !m->n)
		rc = lp_seterr(LP_EINVAL, "%s: no cache or tlb level", what);
	return rc;
}

int lp_machine_read(struct lp_machine *m, const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t cap = 0, n = 0;
	int rc;

	memset(m, 0, sizeof(*m));
	if (!f)
		return lp_seterr_errno("cannot open machine file '%s'", path);
	for (;;) {
		if (LP_ARRAY_RESERVE_MAX(buf, cap, n + 4096 + 1, 8192, 1u << 20, "machine file bytes") < 0) {
			free(buf);
			fclose(f);
			return lp_seterr(LP_ELIMIT, "machine file '%s' is too large", path);
		}
		size_t r = fread(buf + n, 1, 4096, f);
		n += r;
		if (r < 4096)
			break;
	}
	fclose(f);
	buf[n] = 0;
	if (memchr(buf, 0, n)) {
		free(buf);
		return lp_seterr(LP_EFORMAT, "'%s' is not a machine file (binary content)", path);
	}
	rc = lp_machine_parse(m, buf, path);
	free(buf);
	return rc;
}

/* The host's data caches from sysfs (lp_host_caches, the reader report
 * uses too), by level, and a 64-entry TLB of the page size. */
int lp_machine_host(struct lp_machine *m, const char *sysfs_root)
{
	struct lp_host_cache c[16];
	char name[16];
	size_t n;
	long page = sysconf(_SC_PAGESIZE);
	int rc;

	memset(m, 0, sizeof(*m));
	snprintf(m->name, sizeof(m->name), "host");
	if ((rc = lp_host_caches(sysfs_root, c, sizeof(c) / sizeof(c[0]), &n)) < 0)
		return rc;
	for (unsigned lvl = 1; lvl <= 4; lvl++)
		for (size_t i = 0; i < n; i++) {
			uint64_t ways = c[i].ways;
			if (c[i].level != lvl)
				continue;
			if (c[i].size % c[i].line)
				return lp_seterr(LP_EFORMAT, "host %s: size not a multiple of the line", c[i].name);
			if (ways && (c[i].size / c[i].line) % ways)
				ways = 0;
			snprintf(name, sizeof(name), "L%u", lvl);
			if ((rc = add_level(m, "host", 0, name, LP_PRED_LEVEL_CACHE, c[i].size / c[i].line,
					    ways, c[i].line)) < 0)
				return rc;
		}
	if (!m->n)
		return lp_seterr(LP_EUNSUPPORTED, "%s: no data cache described",
				 sysfs_root ? sysfs_root : "/sys");
	return add_level(m, "host", 0, "TLB", LP_PRED_LEVEL_TLB, 64, 0, page > 0 ? (uint64_t)page : 4096);
}

int lp_machine_add_cache(struct lp_machine *m, const char *name, uint64_t size, uint64_t assoc, uint64_t line)
{
	if (!line || size % line)
		return lp_seterr(LP_EINVAL, "cache %s: size %llu is not a multiple of the line %llu", name,
				 (unsigned long long)size, (unsigned long long)line);
	return add_level(m, m->name, 0, name, LP_PRED_LEVEL_CACHE, size / line, assoc, line);
}
