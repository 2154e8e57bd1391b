/* Symbolisation with elfutils' libdwfl, behind two caches.
 *
 * Assumptions: a mapping of file offset O at address S places the ELF file
 * at S - O (true for the usual loaders, where segments keep p_vaddr -
 * p_offset constant); each file is reported once, at its lowest-offset
 * mapping. A mapping that records a build-id is used only if the file at
 * its path still has that build-id (a rebuilt binary would give wrong
 * names); such files are listed by lp_symbols_warning(). A --binary is a
 * non-PIE executable, used at its link addresses. Data symbols are ELF
 * STT_OBJECT symbols with a non-zero size (globals and statics; the stack
 * and the heap have none).
 *
 * Caches: attribution asks for the data object of every reference that is
 * not in a heap block (stack, globals), and libdwfl answers each question
 * by searching the module's symbol table. So the sized data symbols of all
 * modules are gathered once into an array sorted by address (each named
 * as libdwfl names its start address), and a lookup is a binary search.
 * pcs go through a hash table of the answers already given. Both are
 * checked against libdwfl itself in tests/unit/symbol. */
#include <locprof/symbol.h>

#include "common/error.h"
#include "common/hash.h"
#include "symbol/symbol-internal.h"

#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <gelf.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct dsym {
	uint64_t start, end; /* [start, end) */
	uint64_t maxend;     /* largest end among this entry and all before it */
	const char *name;    /* owned by libdwfl; NULL: ask libdwfl (see below) */
};

struct pcent {
	uint64_t pc;
	struct lp_code_loc loc;
	int found, used;
};

struct lp_symbols {
	Dwfl *dwfl;
	/* data symbols, sorted by start; built on first use */
	struct dsym *ds;
	size_t nds;
	int ds_built;
	size_t last; /* index of the last symbol found (+1; 0 = none) */
	/* pc -> answer */
	struct pcent *pcs;
	size_t pcmask, npcs;
	char *warning;
};

static char *debuginfo_path;
static const Dwfl_Callbacks callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &debuginfo_path,
};

/* Whether the ELF file at path has this GNU build-id. */
static int same_build_id(const char *path, const uint8_t *id, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), same = 0;
	const void *bits;
	Elf *elf;

	if (fd < 0)
		return 0;
	elf_version(EV_CURRENT);
	if ((elf = elf_begin(fd, ELF_C_READ_MMAP, NULL))) {
		ssize_t n = dwelf_elf_gnu_build_id(elf, &bits);

		same = n == (ssize_t)len && !memcmp(bits, id, len);
		elf_end(elf);
	}
	close(fd);
	return same;
}

/* Append "path" to the list of files whose build-id changed. */
static void note_stale(struct lp_symbols *s, const char *path, size_t *nstale)
{
	char *w;

	(*nstale)++;
	if (*nstale > 3)
		return;
	if (asprintf(&w, "%s%s'%s'", s->warning ? s->warning : "", s->warning ? ", " : "", path) < 0)
		return;
	free(s->warning);
	s->warning = w;
}

int lp_symbols_new(struct lp_symbols **out, const struct lp_mappings *maps, const char *binary)
{
	struct lp_symbols *s;
	size_t nstale = 0;
	int reported = 0;

	*out = NULL;
	if (!(s = calloc(1, sizeof(*s))))
		return lp_seterr(LP_ENOMEM, "out of memory");
	if (!(s->dwfl = dwfl_begin(&callbacks))) {
		free(s);
		return lp_seterr(LP_ENOMEM, "cannot start libdwfl: %s", dwfl_errmsg(-1));
	}
	dwfl_report_begin(s->dwfl);
	if (binary) {
		if (!dwfl_report_elf(s->dwfl, binary, binary, -1, 0, false)) {
			int err = lp_seterr(LP_EFORMAT, "cannot read symbols of '%s': %s", binary, dwfl_errmsg(-1));
			lp_symbols_free(s);
			return err;
		}
		reported++;
	}
	for (size_t i = 0; maps && i < maps->n; i++) {
		const struct lp_mapping *m = &maps->v[i];
		int first = 1;

		if (!m->path || m->path[0] != '/')
			continue;
		for (size_t j = 0; j < maps->n; j++)
			if (j != i && maps->v[j].path && !strcmp(maps->v[j].path, m->path) &&
			    (maps->v[j].file_offset < m->file_offset ||
			     (maps->v[j].file_offset == m->file_offset && j < i)))
				first = 0;
		if (!first)
			continue;
		if (m->build_id_len && !same_build_id(m->path, m->build_id, m->build_id_len)) {
			/* not the file that ran: its names would be wrong */
			note_stale(s, m->path, &nstale);
			continue;
		}
		/* an unreadable library only loses its names */
		if (dwfl_report_elf(s->dwfl, m->path, m->path, -1, m->start - m->file_offset, false))
			reported++;
	}
	dwfl_report_end(s->dwfl, NULL, NULL);
	if (nstale) {
		char *w;

		if (asprintf(&w, "%zu file%s changed since the run (build-id differs), no names from %s%s",
			     nstale, nstale > 1 ? "s" : "", s->warning, nstale > 3 ? ", ..." : "") >= 0) {
			free(s->warning);
			s->warning = w;
		}
	}
	if (!reported) {
		int err = lp_seterr(LP_EINVAL, "no binary to take symbols from%s%s",
				    s->warning ? ": " : "", s->warning ? s->warning : "");
		lp_symbols_free(s);
		return err;
	}
	*out = s;
	return 0;
}

void lp_symbols_free(struct lp_symbols *s)
{
	if (!s)
		return;
	dwfl_end(s->dwfl);
	free(s->ds);
	free(s->pcs);
	free(s->warning);
	free(s);
}

const char *lp_symbols_warning(const struct lp_symbols *s)
{
	return s->warning;
}

/* ---- pcs ----------------------------------------------------------------- */

int lp_symbols_pc_dwfl(struct lp_symbols *s, uint64_t pc, struct lp_code_loc *out)
{
	Dwfl_Module *mod = dwfl_addrmodule(s->dwfl, pc);
	Dwfl_Line *line;

	memset(out, 0, sizeof(*out));
	if (!mod)
		return 0;
	out->function = dwfl_module_addrname(mod, pc);
	if ((line = dwfl_module_getsrc(mod, pc))) {
		const char *file = dwfl_lineinfo(line, NULL, &out->line, NULL, NULL, NULL);
		if (file) {
			const char *slash = strrchr(file, '/');
			out->file = slash ? slash + 1 : file;
		}
	}
	return out->function || out->file;
}

static int pc_cache_grow(struct lp_symbols *s)
{
	size_t cap = s->pcs ? 2 * (s->pcmask + 1) : 1024;
	struct pcent *n = calloc(cap, sizeof(*n));

	if (!n)
		return -1;
	for (size_t i = 0; s->pcs && i <= s->pcmask; i++) {
		size_t h;

		if (!s->pcs[i].used)
			continue;
		for (h = lp_hash64(s->pcs[i].pc) & (cap - 1); n[h].used; h = (h + 1) & (cap - 1))
			;
		n[h] = s->pcs[i];
	}
	free(s->pcs);
	s->pcs = n;
	s->pcmask = cap - 1;
	return 0;
}

int lp_symbols_pc(struct lp_symbols *s, uint64_t pc, struct lp_code_loc *out)
{
	size_t h;

	if (2 * (s->npcs + 1) > (s->pcs ? s->pcmask + 1 : 0) && pc_cache_grow(s) < 0)
		return lp_symbols_pc_dwfl(s, pc, out); /* out of memory: no cache */
	for (h = lp_hash64(pc) & s->pcmask; s->pcs[h].used; h = (h + 1) & s->pcmask)
		if (s->pcs[h].pc == pc) {
			*out = s->pcs[h].loc;
			return s->pcs[h].found;
		}
	s->pcs[h].used = 1;
	s->pcs[h].pc = pc;
	s->pcs[h].found = lp_symbols_pc_dwfl(s, pc, &s->pcs[h].loc);
	s->npcs++;
	*out = s->pcs[h].loc;
	return s->pcs[h].found;
}

/* ---- data ---------------------------------------------------------------- */

int lp_symbols_data_dwfl(struct lp_symbols *s, uint64_t addr, struct lp_data_sym *out)
{
	Dwfl_Module *mod = dwfl_addrmodule(s->dwfl, addr);
	GElf_Off off;
	GElf_Sym sym;
	Dwarf_Addr bias = 0;
	const char *name;

	memset(out, 0, sizeof(*out));
	if (!mod)
		return 0;
	name = dwfl_module_addrinfo(mod, addr, &off, &sym, NULL, NULL, &bias);
	if (!name || GELF_ST_TYPE(sym.st_info) != STT_OBJECT || !sym.st_size || off >= sym.st_size)
		return 0;
	out->name = name;
	out->start = addr - off;
	out->size = sym.st_size;
	return 1;
}

static int cmp_dsym(const void *x, const void *y)
{
	const struct dsym *a = x, *b = y;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return a->end < b->end ? -1 : a->end > b->end;
}

struct gather {
	struct lp_symbols *s;
	size_t cap;
	int err;
};

static int gather_module(Dwfl_Module *mod, void **user, const char *name, Dwarf_Addr base, void *arg)
{
	struct gather *g = arg;
	struct lp_symbols *s = g->s;
	int n = dwfl_module_getsymtab(mod);

	(void)user;
	(void)name;
	(void)base;
	for (int i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		const char *nm = dwfl_module_getsym_info(mod, i, &sym, &addr, NULL, NULL, NULL);

		if (!nm || GELF_ST_TYPE(sym.st_info) != STT_OBJECT || !sym.st_size ||
		    sym.st_shndx == SHN_UNDEF || addr + sym.st_size < addr)
			continue;
		if (s->nds == g->cap) {
			size_t cap = g->cap ? 2 * g->cap : 256;
			struct dsym *v = realloc(s->ds, cap * sizeof(*v));

			if (!v) {
				g->err = LP_ENOMEM;
				return DWARF_CB_ABORT;
			}
			s->ds = v;
			g->cap = cap;
		}
		s->ds[s->nds++] = (struct dsym){ .start = addr, .end = addr + sym.st_size, .name = nm };
	}
	return DWARF_CB_OK;
}

/* Sorted, one entry per address range. Where several symbols share a
 * range (aliases such as environ and __environ), the entry takes the name
 * libdwfl gives its start, as libdwfl prefers one binding over another;
 * a symbol alone on its range is named by itself (asking libdwfl for every
 * symbol would cost O(symbols) each: libdwfl scans the symbol table). Where
 * symbols overlap (nested or partly overlapping objects, which C compilers
 * do not emit but hand-written assembly may), the entry has no name and
 * lookups that land in it ask libdwfl, so the cache never answers
 * differently from libdwfl (tests/unit/symbol/test-symbol-cache.c checks
 * every range's edges against it, for this process and its libraries). */
static int build_data_syms(struct lp_symbols *s)
{
	struct gather g = { .s = s };
	size_t k = 0;
	uint64_t maxend = 0;

	s->ds_built = 1;
	dwfl_getmodules(s->dwfl, gather_module, &g, 0);
	if (g.err) {
		free(s->ds);
		s->ds = NULL;
		s->nds = 0;
		return g.err;
	}
	qsort(s->ds, s->nds, sizeof(*s->ds), cmp_dsym);
	for (size_t i = 0; i < s->nds; i++) {
		struct lp_data_sym ans;

		if (k && s->ds[k - 1].start == s->ds[i].start && s->ds[k - 1].end == s->ds[i].end) {
			/* an alias: the name is libdwfl's choice */
			struct dsym *d = &s->ds[k - 1];

			if (lp_symbols_data_dwfl(s, d->start, &ans) && ans.start == d->start &&
			    ans.size == d->end - d->start)
				d->name = ans.name;
			else
				d->name = NULL;
			continue;
		}
		s->ds[k++] = s->ds[i];
	}
	s->nds = k;
	for (size_t i = 0; i < s->nds; i++) {
		struct dsym *d = &s->ds[i];

		if ((i > 0 && d->start < maxend) || (i + 1 < s->nds && s->ds[i + 1].start < d->end))
			d->name = NULL; /* overlaps another */
		if (d->end > maxend)
			maxend = d->end;
		d->maxend = maxend;
	}
	return 0;
}

int lp_symbols_data(struct lp_symbols *s, uint64_t addr, struct lp_data_sym *out)
{
	size_t lo = 0, hi;
	const struct dsym *d;

	if (!s->ds_built && build_data_syms(s) < 0)
		return lp_symbols_data_dwfl(s, addr, out);
	/* consecutive references often touch the same object */
	if (s->last && addr >= s->ds[s->last - 1].start && addr < s->ds[s->last - 1].end) {
		d = &s->ds[s->last - 1];
		goto found;
	}
	/* last entry with start <= addr, then back while an earlier entry
	 * could still contain addr (nested symbols) */
	hi = s->nds;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (s->ds[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i > 0 && s->ds[i - 1].maxend > addr; i--) {
		if (addr < s->ds[i - 1].end) {
			d = &s->ds[i - 1];
			s->last = i;
			goto found;
		}
	}
	memset(out, 0, sizeof(*out));
	return 0;
found:
	if (!d->name)
		return lp_symbols_data_dwfl(s, addr, out);
	out->name = d->name;
	out->start = d->start;
	out->size = d->end - d->start;
	return 1;
}

size_t lp_symbols_data_count(struct lp_symbols *s)
{
	if (!s->ds_built)
		build_data_syms(s);
	return s->nds;
}

void lp_symbols_data_range(struct lp_symbols *s, size_t i, uint64_t *start, uint64_t *end)
{
	*start = s->ds[i].start;
	*end = s->ds[i].end;
}
