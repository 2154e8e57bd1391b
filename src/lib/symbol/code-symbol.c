/* The ELF symbol of a pc, with the answer for the last pc remembered over
 * the range where it cannot change (code-symbol.h). */
#include "symbol/code-symbol.h"

#include "common/array.h"

#include <gelf.h>
#include <stdlib.h>

/* A module's symbols, sorted by address: where the next candidate
 * starts, and whether any could answer at all. elfutils answers with a
 * sized symbol that holds the pc, else with a sizeless one below it that
 * lies above the end of every sized symbol below it, else with none; so
 * where no sized symbol holds the pc (maxend: the largest end of the
 * sized ones up to each symbol) and no sizeless one lies at or above that
 * end (lastzero: the highest sizeless one up to each), the answer is none
 * without asking (a sizeless one also answers only within its section,
 * so "none" is the answer more often than this test says, never less). */
struct sym_at {
	uint64_t start, end; /* end = start for a sizeless symbol */
};
struct mod_starts {
	Dwfl_Module *mod;
	struct sym_at *v;
	uint64_t *maxend, *lastzero; /* per entry of v, over v[0..i] */
	size_t n;
};

struct lp_code_symbols {
	struct mod_starts *mods;
	size_t nmods, capmods;
	/* the last answer and the pcs [lo, hi) of mod that get it too */
	Dwfl_Module *mod;
	uint64_t lo, hi;
	const char *name;
};

static int cmp_sym(const void *x, const void *y)
{
	const struct sym_at *a = x, *b = y;
	return a->start < b->start ? -1 : a->start > b->start;
}

/* mod's sorted symbol addresses, read on first use; NULL out of memory */
static const struct mod_starts *starts_of(struct lp_code_symbols *cs, Dwfl_Module *mod)
{
	struct mod_starts *m;
	int nsym;

	for (size_t i = 0; i < cs->nmods; i++)
		if (cs->mods[i].mod == mod)
			return &cs->mods[i];
	if (LP_ARRAY_RESERVE(cs->mods, cs->capmods, cs->nmods + 1, 8, "modules") < 0)
		return NULL;
	nsym = dwfl_module_getsymtab(mod);
	m = &cs->mods[cs->nmods];
	*m = (struct mod_starts){ .mod = mod };
	if (nsym > 1 && (!(m->v = malloc((size_t)nsym * sizeof(*m->v))) ||
			 !(m->maxend = malloc((size_t)nsym * sizeof(*m->maxend))) ||
			 !(m->lastzero = malloc((size_t)nsym * sizeof(*m->lastzero))))) {
		free(m->v);
		free(m->maxend);
		return NULL;
	}
	for (int i = 1; i < nsym; i++) {
		GElf_Sym sym;
		GElf_Addr addr;

		if (dwfl_module_getsym_info(mod, i, &sym, &addr, NULL, NULL, NULL))
			m->v[m->n++] = (struct sym_at){ addr, addr + sym.st_size };
	}
	qsort(m->v, m->n, sizeof(*m->v), cmp_sym);
	for (size_t i = 0; i < m->n; i++) {
		uint64_t e = i ? m->maxend[i - 1] : 0, z = i ? m->lastzero[i - 1] : 0;
		int zero = m->v[i].end == m->v[i].start;

		m->maxend[i] = !zero && m->v[i].end > e ? m->v[i].end : e;
		m->lastzero[i] = zero ? m->v[i].start + 1 : z; /* +1: 0 is none */
	}
	cs->nmods++;
	return m;
}

/* The number of symbols that start at or below pc. */
static size_t at_or_below(const struct mod_starts *m, uint64_t pc)
{
	size_t lo = 0, hi = m->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (m->v[mid].start <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* No symbol can answer for pc (k symbols at or below it). */
static int none_can_answer(const struct mod_starts *m, size_t k, uint64_t pc)
{
	return !k || (m->maxend[k - 1] <= pc && (!m->lastzero[k - 1] || m->lastzero[k - 1] - 1 < m->maxend[k - 1]));
}

const char *lp_code_symbol(struct lp_code_symbols **cs, Dwfl_Module *mod, uint64_t pc)
{
	const struct mod_starts *m;
	GElf_Off off = 0;
	GElf_Sym sym;
	const char *name;
	uint64_t hi;

	size_t k;

	if (*cs && (*cs)->mod == mod && pc >= (*cs)->lo && pc < (*cs)->hi)
		return (*cs)->name;
	if (!*cs && !(*cs = calloc(1, sizeof(**cs))))
		return dwfl_module_addrinfo(mod, pc, &off, &sym, NULL, NULL, NULL);
	(*cs)->mod = NULL;
	if (!(m = starts_of(*cs, mod)))
		return dwfl_module_addrinfo(mod, pc, &off, &sym, NULL, NULL, NULL);
	k = at_or_below(m, pc);
	name = none_can_answer(m, k, pc) ? NULL : dwfl_module_addrinfo(mod, pc, &off, &sym, NULL, NULL, NULL);
	/* no symbol starts in [pc, hi): the same candidates, none that holds
	 * pc ends in it but the one found. A sizeless symbol answers only
	 * within its own section, which may end sooner: not remembered (rare) */
	hi = k < m->n ? m->v[k].start : UINT64_MAX;
	if (name && sym.st_size && off < sym.st_size && pc - off + sym.st_size < hi)
		hi = pc - off + sym.st_size;
	else if (name)
		hi = pc + 1;
	(*cs)->mod = mod;
	(*cs)->lo = pc;
	(*cs)->hi = hi;
	(*cs)->name = name;
	return name;
}

void lp_code_symbols_free(struct lp_code_symbols *cs)
{
	if (!cs)
		return;
	for (size_t i = 0; i < cs->nmods; i++) {
		free(cs->mods[i].v);
		free(cs->mods[i].maxend);
		free(cs->mods[i].lastzero);
	}
	free(cs->mods);
	free(cs);
}
