/* One cache: geometry, SPEC parsing, storage and the hash index.
 *
 * Rules of the simulation are in docs/simulator.md; the replacement
 * policies each live in their own policy-*.c file. */
#include "sim/sim-internal.h"

#include "common/error.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct lp_policy *const policies[] = {
	&lp_policy_lru,
	&lp_policy_fifo,
	&lp_policy_random,
	&lp_policy_plru,
};

static const struct lp_policy *policy_find(const char *name)
{
	for (size_t i = 0; i < sizeof(policies) / sizeof(policies[0]); i++)
		if (!strcmp(policies[i]->name, name))
			return policies[i];
	return NULL;
}

const char *lp_cache_policy_names(void)
{
	return "lru, fifo, random, plru";
}

/* "32K", "1.5M", "64KiB", "4096": powers of 1024. The library has its own
 * copy of the CLI's parser because the library must not depend on the CLI. */
int lp_parse_size_bytes(const char *s, uint64_t *out)
{
	char *end;
	double v;
	uint64_t mult = 1;

	if (!*s || !(isdigit((unsigned char)*s) || *s == '.'))
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || v < 0)
		return -1;
	switch (toupper((unsigned char)*end)) {
	case 'K': mult = 1ULL << 10; end++; break;
	case 'M': mult = 1ULL << 20; end++; break;
	case 'G': mult = 1ULL << 30; end++; break;
	case 'T': mult = 1ULL << 40; end++; break;
	default: break;
	}
	if (mult > 1 && (*end == 'i' || *end == 'I'))
		end++;
	if (*end == 'B' || *end == 'b')
		end++;
	if (*end)
		return -1;
	v *= (double)mult;
	if (v >= 18446744073709551615.0 || v != (double)(uint64_t)v)
		return -1;
	*out = (uint64_t)v;
	return 0;
}

static int is_pow2(uint64_t x)
{
	return x && !(x & (x - 1));
}

int lp_cache_spec_check(const struct lp_cache_spec *spec)
{
	const struct lp_policy *pol = policy_find(spec->policy);
	uint64_t lines, ways;

	if (!pol)
		return lp_seterr(LP_EINVAL, "unknown replacement policy '%s' (known: %s)",
				 spec->policy, lp_cache_policy_names());
	if (!spec->size)
		return lp_seterr(LP_EINVAL, "cache size must not be zero");
	if (!spec->line)
		return lp_seterr(LP_EINVAL, "line size must not be zero");
	if (!is_pow2(spec->line))
		return lp_seterr(LP_EINVAL, "line size %llu is not a power of two",
				 (unsigned long long)spec->line);
	if (spec->size % spec->line)
		return lp_seterr(LP_EINVAL, "cache size %llu is not a multiple of the line size %llu",
				 (unsigned long long)spec->size, (unsigned long long)spec->line);
	lines = spec->size / spec->line;
	ways = spec->assoc ? spec->assoc : lines;
	if (ways > lines)
		return lp_seterr(LP_EINVAL, "associativity %llu is more than the %llu lines of the cache",
				 (unsigned long long)ways, (unsigned long long)lines);
	if (spec->size % (ways * spec->line))
		return lp_seterr(LP_EINVAL,
				 "cache size %llu is not a multiple of assoc x line = %llu x %llu = %llu bytes",
				 (unsigned long long)spec->size, (unsigned long long)ways,
				 (unsigned long long)spec->line,
				 (unsigned long long)(ways * spec->line));
	if (pol->needs_pow2_ways && !is_pow2(ways))
		return lp_seterr(LP_EINVAL, "policy %s needs a power-of-two number of ways, not %llu",
				 pol->name, (unsigned long long)ways);
	if (lines >= LP_NONE32)
		return lp_seterr(LP_ELIMIT, "%llu lines: at most %u lines a cache",
				 (unsigned long long)lines, LP_NONE32 - 1);
	return 0;
}

int lp_cache_spec_parse(struct lp_cache_spec *spec, const char *s)
{
	char buf[128], *field[5], *p;
	size_t nf = 0;
	char *endp;

	memset(spec, 0, sizeof(*spec));
	if (strlen(s) >= sizeof(buf))
		return lp_seterr(LP_EINVAL, "cache spec '%.20s...' is too long", s);
	strcpy(buf, s);
	for (p = buf, field[nf++] = p; *p; p++) {
		if (*p == ':') {
			*p = '\0';
			if (nf == 5)
				return lp_seterr(LP_EINVAL, "cache spec '%s' has too many fields (SIZE:ASSOC:LINE[:POLICY])", s);
			field[nf++] = p + 1;
		}
	}
	if (nf < 3)
		return lp_seterr(LP_EINVAL, "cache spec '%s' is not SIZE:ASSOC:LINE[:POLICY]", s);
	if (lp_parse_size_bytes(field[0], &spec->size))
		return lp_seterr(LP_EINVAL, "bad cache size '%s' in '%s'", field[0], s);
	if (!strcmp(field[1], "full")) {
		spec->assoc = 0;
	} else {
		errno = 0;
		spec->assoc = strtoull(field[1], &endp, 10);
		if (errno || !*field[1] || *endp || !isdigit((unsigned char)*field[1]))
			return lp_seterr(LP_EINVAL, "bad associativity '%s' in '%s' (a number, or 'full')", field[1], s);
		if (!spec->assoc)
			return lp_seterr(LP_EINVAL, "associativity must not be zero (1 = direct mapped, 'full' = fully associative)");
	}
	if (lp_parse_size_bytes(field[2], &spec->line))
		return lp_seterr(LP_EINVAL, "bad line size '%s' in '%s'", field[2], s);
	if (nf == 4) {
		if (strlen(field[3]) >= LP_POLICY_NAME_MAX || !policy_find(field[3]))
			return lp_seterr(LP_EINVAL, "unknown replacement policy '%s' (known: %s)",
					 field[3], lp_cache_policy_names());
		strcpy(spec->policy, field[3]);
	} else {
		strcpy(spec->policy, "lru");
	}
	return lp_cache_spec_check(spec);
}

static const char *size_str(uint64_t v, char *b, size_t len)
{
	static const char suf[] = "KMGT";
	int i = -1;

	while (v && !(v & 1023) && i < 3) {
		v >>= 10;
		i++;
	}
	if (i < 0)
		snprintf(b, len, "%llu", (unsigned long long)v);
	else
		snprintf(b, len, "%llu%c", (unsigned long long)v, suf[i]);
	return b;
}

const char *lp_cache_spec_format(const struct lp_cache_spec *spec, char *buf, size_t len)
{
	char a[32], b[32], w[32];

	if (spec->assoc)
		snprintf(w, sizeof(w), "%llu", (unsigned long long)spec->assoc);
	else
		strcpy(w, "full");
	snprintf(buf, len, "%s:%s:%s:%s", size_str(spec->size, a, sizeof(a)), w,
		 size_str(spec->line, b, sizeof(b)), spec->policy);
	return buf;
}

uint64_t lp_cache_spec_ways(const struct lp_cache_spec *spec)
{
	return spec->assoc ? spec->assoc : spec->size / spec->line;
}

uint64_t lp_cache_spec_sets(const struct lp_cache_spec *spec)
{
	return spec->size / spec->line / lp_cache_spec_ways(spec);
}

int lp_cache_new(struct lp_cache **out, const struct lp_cache_spec *spec, uint64_t seed)
{
	struct lp_cache *c;
	uint64_t n;
	int err;

	*out = NULL;
	if ((err = lp_cache_spec_check(spec)) < 0)
		return err;
	if (!(c = calloc(1, sizeof(*c))))
		return lp_seterr(LP_ENOMEM, "out of memory");
	c->spec = *spec;
	c->pol = policy_find(spec->policy);
	c->ways = lp_cache_spec_ways(spec);
	c->sets = lp_cache_spec_sets(spec);
	c->set_mask = c->sets - 1;
	c->set_modulo = !is_pow2(c->sets);
	lp_rng_seed(&c->rng, seed);
	n = c->sets * c->ways;
	if (!(c->tags = malloc(n * sizeof(*c->tags))))
		goto out_nomem;
	for (uint64_t i = 0; i < n; i++)
		c->tags[i] = LP_NO_LINE;
	if (c->ways > LP_SCAN_WAYS) {
		uint64_t cap = 16;
		while (cap < 2 * n)
			cap <<= 1;
		if (!(c->index = calloc(cap, sizeof(*c->index))))
			goto out_nomem;
		c->index_mask = cap - 1;
	}
	if (c->pol->init(c) < 0)
		goto out_nomem;
	*out = c;
	return 0;
out_nomem:
	lp_cache_free(c);
	return lp_seterr(LP_ENOMEM, "out of memory for a %llu-line cache", (unsigned long long)n);
}

void lp_cache_free(struct lp_cache *c)
{
	if (!c)
		return;
	free(c->tags);
	free(c->index);
	free(c->prev);
	free(c->next);
	free(c->head);
	free(c->tail);
	free(c->bits);
	free(c->stamp);
	free(c->ages);
	free(c);
}

/* Linear probing with backward-shift deletion: no tombstones, so probe
 * lengths stay short however long the simulation runs. */
void lp_cache_index_replace(struct lp_cache *c, uint64_t slot, uint64_t line)
{
	uint64_t old = c->tags[slot], mask = c->index_mask, h;

	if (old != LP_NO_LINE) {
		for (h = lp_hash64(old) & mask; c->index[h] != slot + 1; h = (h + 1) & mask)
			;
		for (uint64_t j = h;;) {
			uint32_t v;
			uint64_t home;

			j = (j + 1) & mask;
			if (!(v = c->index[j]))
				break;
			home = lp_hash64(c->tags[v - 1]) & mask;
			/* move v back to h unless its home lies cyclically in (h, j] */
			if ((j > h && (home <= h || home > j)) || (j < h && home <= h && home > j)) {
				c->index[h] = v;
				h = j;
			}
		}
		c->index[h] = 0;
	}
	c->tags[slot] = line;
	for (h = lp_hash64(line) & mask; c->index[h]; h = (h + 1) & mask)
		;
	c->index[h] = (uint32_t)(slot + 1);
}

size_t lp_cache_access_lines(struct lp_cache *c, const uint64_t *lines, size_t n, uint8_t *hit,
			     uint64_t *miss_out)
{
	return c->pol->batch(c, lines, n, hit, miss_out);
}

void lp_cache_counts(const struct lp_cache *c, uint64_t *accesses, uint64_t *misses)
{
	*accesses = c->accesses;
	*misses = c->misses;
}
