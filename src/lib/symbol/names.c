/* Readable function names: C++ demangling, OpenMP outlined regions, and
 * the string pool that owns every name lp_symbols hands out.
 *
 * Demangling is libiberty's (the GNU toolchain's own demangler, as used by
 * binutils and gdb), asked for the name without its parameter list; the
 * template arguments are then shown as <...> so that a table row reads
 * `std::vector<...>::_M_realloc_insert<...>` rather than a 200-character
 * type. An OpenMP region that a compiler outlined into a function of its
 * own is named after the function that encloses it, `work [omp region]`:
 * gcc names the outlined function `work._omp_fn.N` (C++: the mangled name
 * with that suffix); clang names it `.omp_outlined.`, and the enclosing
 * function comes from the debug information (symbol.c) or, without it,
 * from the code that takes the region's address (omp-encloser.c). */
#include "symbol/symbol-internal.h"

#include <libiberty/demangle.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OMP_SUFFIX " [omp region]"

static uint64_t str_hash(const char *s)
{
	uint64_t h = 1469598103934665603ULL; /* FNV-1a */

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

static int pool_grow(struct lp_strpool *p)
{
	size_t cap = p->v ? 2 * (p->mask + 1) : 256;
	char **n = calloc(cap, sizeof(*n));

	if (!n)
		return -1;
	for (size_t i = 0; p->v && i <= p->mask; i++) {
		size_t h;

		if (!p->v[i])
			continue;
		for (h = str_hash(p->v[i]) & (cap - 1); n[h]; h = (h + 1) & (cap - 1))
			;
		n[h] = p->v[i];
	}
	free(p->v);
	p->v = n;
	p->mask = cap - 1;
	return 0;
}

const char *lp_strpool_add(struct lp_strpool *p, const char *s)
{
	size_t h;

	if (!s)
		return NULL;
	if (2 * (p->n + 1) > (p->v ? p->mask + 1 : 0) && pool_grow(p) < 0)
		return NULL;
	for (h = str_hash(s) & p->mask; p->v[h]; h = (h + 1) & p->mask)
		if (!strcmp(p->v[h], s))
			return p->v[h];
	if (!(p->v[h] = strdup(s)))
		return NULL;
	p->n++;
	return p->v[h];
}

void lp_strpool_release(struct lp_strpool *p)
{
	for (size_t i = 0; p->v && i <= p->mask; i++)
		free(p->v[i]);
	free(p->v);
	memset(p, 0, sizeof(*p));
}

/* Whether s (inside a demangled name) starts an operator whose name holds
 * angle brackets: operator<, <<, <=, <=>, >, >>, >=, ->, ->*. Returns the
 * length of the operator's symbol after "operator", else 0. */
static size_t angle_operator(const char *s)
{
	if (strncmp(s, "operator", 8))
		return 0;
	s += 8;
	if (!strncmp(s, "<=>", 3) || !strncmp(s, "->*", 3))
		return 3;
	if (!strncmp(s, "<<", 2) || !strncmp(s, ">>", 2) || !strncmp(s, "<=", 2) || !strncmp(s, ">=", 2) ||
	    !strncmp(s, "->", 2))
		return 2;
	return *s == '<' || *s == '>';
}

/* The name with every outermost template argument list replaced by <...>
 * (in place: the result is never longer). */
static void elide_templates(char *name)
{
	char *out = name;
	int depth = 0;

	for (const char *s = name; *s;) {
		size_t op = depth ? 0 : angle_operator(s);

		if (op) {
			memmove(out, s, 8 + op);
			out += 8 + op;
			s += 8 + op;
			continue;
		}
		if (*s == '<') {
			if (!depth++) {
				memcpy(out, "<...", 4);
				out += 4;
			}
		} else if (*s == '>' && depth) {
			if (!--depth)
				*out++ = '>';
		} else if (!depth) {
			*out++ = *s;
		}
		s++;
	}
	*out = '\0';
}

/* The length of a scope's parameter list at s ('('), with the
 * qualifiers after it, when "::" follows (a local entity's enclosing
 * function: `make_recs(std::unordered_map<...> const&, long)::$_0`), else
 * 0. */
static size_t scope_params(const char *s)
{
	static const char *const quals[] = { " const", " volatile", " &&", " &" };
	const char *e = s;
	int depth = 0;

	do {
		depth += *e == '(';
		depth -= *e == ')';
		e++;
	} while (*e && depth);
	for (int again = 1; again;) {
		again = 0;
		for (size_t k = 0; k < sizeof(quals) / sizeof(quals[0]); k++)
			if (!strncmp(e, quals[k], strlen(quals[k]))) {
				e += strlen(quals[k]);
				again = 1;
			}
	}
	return depth == 0 && !strncmp(e, "::", 2) ? (size_t)(e - s) : 0;
}

/* The name without the parameter lists of its enclosing scopes and
 * without ABI tags (`[abi:cxx11]`), in place: a lambda reads
 * `make_recs::$_0::operator()`, as a function reads without its own
 * parameters. Braces (gcc's `{lambda(int)#1}`) are kept whole. */
static void elide_scope_params(char *name)
{
	char *out = name;
	int braces = 0;

	for (const char *s = name; *s;) {
		size_t skip = 0;
		braces += *s == '{';
		braces -= *s == '}' && braces;
		if (!braces && *s == '(' && !(s - name >= 8 && !strncmp(s - 8, "operator", 8)))
			skip = scope_params(s);
		else if (!braces && !strncmp(s, "[abi:", 5) && strchr(s, ']'))
			skip = (size_t)(strchr(s, ']') - s) + 1;
		if (skip) {
			s += skip;
			continue;
		}
		*out++ = *s++;
	}
	*out = '\0';
}

/* The demangled form of a C++ name, without parameters and with its
 * template arguments elided; NULL when name is not mangled (C, main). */
static char *demangle(const char *name)
{
	char *d;

	if (strncmp(name, "_Z", 2))
		return NULL;
	if (!(d = cplus_demangle(name, DMGL_ANSI)))
		return NULL;
	elide_templates(d);
	elide_scope_params(d);
	return d;
}

int lp_name_omp_outlined(const char *name)
{
	return name && (!strncmp(name, ".omp_outlined.", 14) || strstr(name, "._omp_fn.") != NULL);
}

const char *lp_name_readable(struct lp_strpool *p, const char *name)
{
	const char *omp = name ? strstr(name, "._omp_fn.") : NULL;
	char *base = NULL, *d, *full = NULL;
	const char *ans;

	if (!name)
		return NULL;
	if (omp && omp > name && (base = strndup(name, (size_t)(omp - name))))
		name = base;
	d = demangle(name);
	if (omp && asprintf(&full, "%s" OMP_SUFFIX, d ? d : name) < 0)
		full = NULL;
	ans = lp_strpool_add(p, full ? full : d ? d : name);
	free(full);
	free(d);
	free(base);
	return ans;
}

const char *lp_name_omp_region(struct lp_strpool *p, const char *enclosing)
{
	char *full;
	const char *ans;

	if (!enclosing || asprintf(&full, "%s" OMP_SUFFIX, enclosing) < 0)
		return NULL;
	ans = lp_strpool_add(p, full);
	free(full);
	return ans;
}
