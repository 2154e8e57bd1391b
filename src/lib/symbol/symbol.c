/* Symbolisation with elfutils' libdwfl, behind two caches.
 *
 * Assumptions: a mapping of file offset O at address S is the PT_LOAD
 * segment at that offset, placed by the loader with a constant bias (see
 * file_bias()); each file is reported once, at its lowest-offset mapping. A mapping that records a build-id is used only if the file at
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
 * pcs go through a memo of the answers already given (pc-memo.h). Both are
 * checked against libdwfl itself in tests/unit/symbol. */
#include <locprof/symbol.h>

#include "common/array.h"
#include "common/error.h"
#include "symbol/code-symbol.h"
#include "symbol/omp-encloser.h"
#include "symbol/pc-memo.h"
#include "symbol/symbol-internal.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <unistd.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct dsym {
	uint64_t start, end; /* [start, end) */
	uint64_t maxend;     /* largest end among this entry and all before it */
	const char *name;    /* owned by libdwfl; NULL: ask libdwfl (see below) */
};

/* Compilation units of a module by address range, for modules without
 * .debug_aranges (clang emits none unless asked), where libdwfl finds no
 * unit for any address. */
struct cuent {
	uint64_t lo, hi; /* DWARF addresses, [lo, hi) */
	Dwarf_Die die;
};

struct modcus {
	Dwfl_Module *mod;
	Dwarf_Addr bias;
	struct cuent *v;
	size_t n;
};

struct lp_symbols {
	Dwfl *dwfl;
	struct modcus *mcu;
	size_t nmcu, capmcu;
	/* data symbols, sorted by start; built on first use */
	struct dsym *ds;
	size_t nds;
	int ds_built;
	size_t last; /* index of the last symbol found (+1; 0 = none) */
	struct lp_pc_memo pcs; /* pc -> struct lp_code_loc */
	char *warning;
	struct lp_strpool names; /* readable names, labels */
	struct lp_pc_memo sites; /* pc -> the struct lp_alloc_site it names (alloc-site.c) */
	struct lp_alloc_wrappers wrappers; /* the program's own (alloc-site.c) */
	/* TLS symbols of every module, built on first use */
	struct tlsym {
		Dwfl_Module *mod;
		uint64_t start, end; /* offsets in the module's TLS segment */
		const char *name;
	} *tls;
	size_t ntls;
	int tls_built;
	/* each module's name as a person knows it (module_name()) */
	struct modname {
		Dwfl_Module *mod;
		const char *name;
		int shared;
	} *modnames;
	size_t nmodnames, capmodnames;
	struct lp_omp_enclosers *omp; /* outlined OpenMP regions, from the code */
	struct lp_code_symbols *code; /* the ELF symbols of pcs (code-symbol.h) */
};

static char *debuginfo_path;
static const Dwfl_Callbacks callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &debuginfo_path,
};

/* Where the ELF file mapped at m is loaded (the bias added to its
 * addresses), from its program headers: the mapping of file offset O at
 * address S belongs to the PT_LOAD segment whose page-aligned offset is O,
 * and the loader put that segment's page-aligned p_vaddr at S. (S - O is
 * wrong for lld's layouts, where p_vaddr - p_offset is 0x1000 or more.)
 * Also checks the GNU build-id when the mapping has one. Returns 1 and
 * sets *bias, 0 when the file cannot be read or has no such segment, -1
 * when its build-id differs, -2 when there is no file at its path. */
static int file_bias(const struct lp_mapping *m, uint64_t *bias)
{
	int fd = open(m->path, O_RDONLY | O_CLOEXEC), ret = 0;
	const uint64_t page = 4096;
	size_t nph = 0;
	Elf *elf;

	if (fd < 0)
		return errno == ENOENT ? -2 : 0;
	elf_version(EV_CURRENT);
	if (!(elf = elf_begin(fd, ELF_C_READ_MMAP, NULL)))
		goto out_fd;
	if (m->build_id_len) {
		const void *bits;
		ssize_t n = dwelf_elf_gnu_build_id(elf, &bits);

		if (n != (ssize_t)m->build_id_len || memcmp(bits, m->build_id, m->build_id_len)) {
			ret = -1;
			goto out_elf;
		}
	}
	if (elf_getphdrnum(elf, &nph) < 0)
		goto out_elf;
	/* the segment whose page-aligned offset is O, preferring an
	 * executable one (a page can hold the end of one segment and the
	 * start of the next, and the mappings recorded are the executable
	 * ones); else the one containing O */
	for (int pass = 0; pass < 3 && !ret; pass++)
		for (size_t i = 0; i < nph; i++) {
			GElf_Phdr ph;
			int hit;

			if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
				continue;
			if (pass < 2)
				hit = (ph.p_offset & ~(page - 1)) == (m->file_offset & ~(page - 1)) &&
				      (pass || (ph.p_flags & PF_X));
			else
				hit = ph.p_offset <= m->file_offset && m->file_offset < ph.p_offset + ph.p_filesz;
			if (hit) {
				*bias = m->start - ((ph.p_vaddr & ~(page - 1)) +
						    (m->file_offset - (ph.p_offset & ~(page - 1))));
				ret = 1;
				break;
			}
		}
out_elf:
	elf_end(elf);
out_fd:
	close(fd);
	return ret;
}

/* Files whose names are left out, for the warning: how many, and the
 * first three by path. */
struct file_list {
	size_t n;
	char *names;
};

static void note_file(struct file_list *l, const char *path)
{
	char *w;

	if (++l->n > 3)
		return;
	if (asprintf(&w, "%s%s'%s'", l->names ? l->names : "", l->names ? ", " : "", path) < 0)
		return;
	free(l->names);
	l->names = w;
}

/* Append "N files WHY, no names from 'a', 'b', ..." to the warning. */
static void warn_files(struct lp_symbols *s, struct file_list *l, const char *why)
{
	char *w;

	if (l->n && asprintf(&w, "%s%s%zu file%s %s, no names from %s%s", s->warning ? s->warning : "",
			     s->warning ? "; " : "", l->n, l->n > 1 ? "s" : "", why, l->names ? l->names : "",
			     l->n > 3 ? ", ..." : "") >= 0) {
		free(s->warning);
		s->warning = w;
	}
	free(l->names);
	l->names = NULL;
}

int lp_symbols_new(struct lp_symbols **out, const struct lp_mappings *maps, const char *binary)
{
	struct lp_symbols *s;
	struct file_list stale = { 0 }, missing = { 0 };
	int reported = 0;

	*out = NULL;
	if (!(s = calloc(1, sizeof(*s))))
		return lp_seterr(LP_ENOMEM, "out of memory");
	if (!(s->dwfl = dwfl_begin(&callbacks))) {
		free(s);
		return lp_seterr(LP_ENOMEM, "cannot start libdwfl: %s", dwfl_errmsg(-1));
	}
	lp_pc_memo_init(&s->pcs, sizeof(struct lp_code_loc), 256);
	lp_pc_memo_init(&s->sites, sizeof(struct lp_alloc_site), 64);
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
		uint64_t bias = 0;
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
		switch (file_bias(m, &bias)) {
		case -1:
			/* not the file that ran: its names would be wrong */
			note_file(&stale, m->path);
			continue;
		case -2:
			/* moved or deleted since the run */
			note_file(&missing, m->path);
			continue;
		case 0:
			/* unreadable, or no segment there: the usual layout */
			bias = m->start - m->file_offset;
			break;
		}
		/* an unreadable library only loses its names */
		if (dwfl_report_elf(s->dwfl, m->path, m->path, -1, bias, false))
			reported++;
	}
	dwfl_report_end(s->dwfl, NULL, NULL);
	warn_files(s, &stale, "changed since the run (build-id differs)");
	warn_files(s, &missing, "of the run no longer there");
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
	for (size_t i = 0; i < s->nmcu; i++)
		free(s->mcu[i].v);
	free(s->mcu);
	free(s->ds);
	lp_pc_memo_release(&s->pcs);
	lp_pc_memo_release(&s->sites);
	lp_alloc_wrappers_release(&s->wrappers);
	free(s->tls);
	free(s->modnames);
	lp_omp_enclosers_free(s->omp);
	lp_code_symbols_free(s->code);
	free(s->warning);
	lp_strpool_release(&s->names);
	free(s);
}

const char *lp_symbols_warning(const struct lp_symbols *s)
{
	return s->warning;
}

/* ---- modules ---------------------------------------------------------------- */

static const char *basename_of(const char *path)
{
	const char *slash = path ? strrchr(path, '/') : NULL;

	return slash ? slash + 1 : path;
}

/* The DT_SONAME of mod's ELF file, or NULL. */
static const char *soname_of(Dwfl_Module *mod)
{
	GElf_Addr bias = 0;
	Elf *elf = dwfl_module_getelf(mod, &bias);
	Elf_Scn *scn = NULL;

	while (elf && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC || !sh.sh_entsize ||
		    !(d = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Dyn dyn;

			if (!gelf_getdyn(d, (int)i, &dyn) || dyn.d_tag == DT_NULL)
				break;
			if (dyn.d_tag == DT_SONAME)
				return elf_strptr(elf, sh.sh_link, dyn.d_un.d_val);
		}
	}
	return NULL;
}

/* A module as a person names it: a library by its soname (DT_SONAME:
 * libgomp.so.1, the name programs link against, where the file may be
 * libgomp.so.1.0.0), else by its file's base name. *shared: whether it is
 * a shared library (a soname, or a file name with ".so"). Remembered per
 * module. */
static const char *module_name(struct lp_symbols *s, Dwfl_Module *mod, int *shared)
{
	const char *file, *so, *name;
	struct modname *m;

	for (size_t i = 0; i < s->nmodnames; i++)
		if (s->modnames[i].mod == mod) {
			*shared = s->modnames[i].shared;
			return s->modnames[i].name;
		}
	file = basename_of(dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
	so = soname_of(mod);
	name = lp_strpool_add(&s->names, so ? so : file);
	*shared = so || (file && strstr(file, ".so"));
	if (!name || LP_ARRAY_RESERVE(s->modnames, s->capmodnames, s->nmodnames + 1, 8, "modules") < 0)
		return name ? name : file; /* out of memory: not remembered */
	m = &s->modnames[s->nmodnames++];
	*m = (struct modname){ .mod = mod, .name = name, .shared = *shared };
	return name;
}

/* ---- pcs ----------------------------------------------------------------- */

/* Inlined code of locprof's own runtime: the instrumentation callbacks
 * that record a reference. A pc the runtime recorded lies in (or returns
 * to) such code when the compiler inlined it (locprof cc with LTO), and
 * the place of the reference is where that code was inlined. */
static int runtime_function(const char *name)
{
	return name && (!strncmp(name, "lp_rt_", 6) || !strncmp(name, "__sanitizer_cov_", 16) ||
			!strncmp(name, "__tsan_", 7));
}

static const char *die_name(Dwarf_Die *die)
{
	Dwarf_Attribute attr;

	if (dwarf_attr_integrate(die, DW_AT_name, &attr))
		return dwarf_formstring(&attr);
	return NULL;
}

static int cmp_cuent(const void *x, const void *y)
{
	const struct cuent *a = x, *b = y;

	return a->lo < b->lo ? -1 : a->lo > b->lo;
}

static struct modcus *module_cus(struct lp_symbols *s, Dwfl_Module *mod)
{
	struct modcus *m;
	Dwarf_CU *cu = NULL;
	Dwarf *dw;
	size_t cap = 0;

	for (size_t i = 0; i < s->nmcu; i++)
		if (s->mcu[i].mod == mod)
			return &s->mcu[i];
	if (LP_ARRAY_RESERVE(s->mcu, s->capmcu, s->nmcu + 1, 8, "modules") < 0)
		return NULL;
	m = &s->mcu[s->nmcu++];
	memset(m, 0, sizeof(*m));
	m->mod = mod;
	if (!(dw = dwfl_module_getdwarf(mod, &m->bias)))
		return m;
	for (;;) {
		Dwarf_CU *next;
		Dwarf_Die die;
		Dwarf_Addr base, lo, hi;
		uint8_t type;
		ptrdiff_t off = 0;

		if (dwarf_get_units(dw, cu, &next, NULL, &type, &die, NULL) != 0)
			break;
		cu = next;
		if (dwarf_tag(&die) != DW_TAG_compile_unit)
			continue;
		while ((off = dwarf_ranges(&die, off, &base, &lo, &hi)) > 0) {
			if (hi <= lo)
				continue;
			if (LP_ARRAY_RESERVE(m->v, cap, m->n + 1, 16, "compilation units") < 0)
				return m;
			m->v[m->n++] = (struct cuent){ .lo = lo, .hi = hi, .die = die };
		}
	}
	qsort(m->v, m->n, sizeof(*m->v), cmp_cuent);
	return m;
}

/* The compilation unit of pc: libdwfl's (from .debug_aranges), else ours. */
static int cu_of(struct lp_symbols *s, Dwfl_Module *mod, uint64_t pc, Dwarf_Die *out, Dwarf_Addr *bias)
{
	Dwarf_Die *d = dwfl_module_addrdie(mod, pc, bias);
	struct modcus *m;
	size_t lo = 0, hi;

	if (d) {
		*out = *d;
		return 1;
	}
	if (!(m = module_cus(s, mod)) || !m->n)
		return 0;
	*bias = m->bias;
	hi = m->n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (m->v[mid].lo <= pc - m->bias)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i > 0; i--)
		if (pc - m->bias < m->v[i - 1].hi) {
			*out = m->v[i - 1].die;
			return 1;
		}
	return 0;
}

/* The line table's answer for addr; 0 when it has no line there (line 0
 * is compiler-generated code). */
static int line_of(Dwarf_Die *cu, uint64_t addr, struct lp_code_loc *out)
{
	Dwarf_Line *line = dwarf_getsrc_die(cu, addr);
	const char *file;
	int ln = 0;

	if (!line || !(file = dwarf_linesrc(line, NULL, NULL)) || dwarf_lineno(line, &ln) < 0 || ln <= 0)
		return 0;
	out->path = file;
	out->file = basename_of(file);
	out->line = ln;
	if (dwarf_linecol(line, &out->column) < 0)
		out->column = 0;
	return 1;
}

/* The nearest line record with a line before addr in its sequence, else
 * after it (within 64 records): where the compiler marked code as line 0
 * (code shared by several lines, moved by the optimiser), the line it
 * belongs to is the nearest one around it. 1 when found. */
static int nearest_line(Dwarf_Die *cu, uint64_t addr, struct lp_code_loc *out)
{
	Dwarf_Lines *lines;
	size_t n, lo = 0, hi;

	if (dwarf_getsrclines(cu, &lines, &n) != 0 || !n)
		return 0;
	hi = n;
	while (lo < hi) { /* first record after addr */
		size_t mid = (lo + hi) / 2;
		Dwarf_Addr a = 0;

		dwarf_lineaddr(dwarf_onesrcline(lines, mid), &a);
		if (a <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (int dir = -1; dir <= 1; dir += 2)
		for (size_t i = lo, k = 0; k < 64; k++) {
			Dwarf_Line *l;
			bool end = false;
			Dwarf_Addr a = 0;

			if (dir < 0 ? i == 0 : i >= n)
				break;
			l = dwarf_onesrcline(lines, dir < 0 ? --i : i++);
			if (dwarf_lineendsequence(l, &end) == 0 && end)
				break;
			if (dwarf_lineaddr(l, &a) == 0 && line_of(cu, a, out))
				return 1;
		}
	return 0;
}

/* The chain of functions (subprogram, then inlined subroutines, outermost
 * first) whose code ranges contain addr, at most max of them. (libdw's
 * dwarf_getscopes fails with "no address value" on the inlined runtime of
 * clang's LTO output, whose abstract origins lie in other units.) */
static int fn_chain(Dwarf_Die *parent, uint64_t addr, Dwarf_Die *chain, int n, int max)
{
	Dwarf_Die c;

	if (dwarf_child(parent, &c) != 0)
		return n;
	do {
		int tag = dwarf_tag(&c);

		switch (tag) {
		case DW_TAG_namespace:
		case DW_TAG_module:
		case DW_TAG_class_type:
		case DW_TAG_structure_type:
		case DW_TAG_union_type:
			/* no code range of their own; C++ methods inside */
			if (dwarf_haschildren(&c)) {
				int m = fn_chain(&c, addr, chain, n, max);

				if (m > n)
					return m;
			}
			continue;
		case DW_TAG_subprogram:
		case DW_TAG_inlined_subroutine:
		case DW_TAG_lexical_block:
			if (dwarf_haspc(&c, addr) <= 0)
				continue;
			if (tag != DW_TAG_lexical_block && n < max)
				chain[n++] = c;
			return fn_chain(&c, addr, chain, n, max);
		default:
			continue;
		}
	} while (dwarf_siblingof(&c, &c) == 0);
	return n;
}

static Dwarf_Word die_udata(Dwarf_Die *die, int name)
{
	Dwarf_Attribute attr;
	Dwarf_Word v = 0;

	if (!dwarf_attr_integrate(die, name, &attr) || dwarf_formudata(&attr, &v) != 0)
		return 0;
	return v;
}

/* The function a clang-outlined OpenMP region (`.omp_outlined.`, a
 * subprogram of the unit) was written in: the function defined last
 * before the region's line in the same file, among the unit's functions
 * and those in its namespaces (*best: its line so far). 1 when found. */
static int omp_enclosing(Dwarf_Die *parent, Dwarf_Die *region, Dwarf_Word *best, Dwarf_Die *found)
{
	Dwarf_Word file = die_udata(region, DW_AT_decl_file), line = die_udata(region, DW_AT_decl_line);
	int any = 0;
	Dwarf_Die c;

	if (dwarf_child(parent, &c) != 0)
		return 0;
	do {
		const char *fn;
		Dwarf_Word l;

		if (dwarf_tag(&c) == DW_TAG_namespace) {
			any |= omp_enclosing(&c, region, best, found);
			continue;
		}
		if (dwarf_tag(&c) != DW_TAG_subprogram || dwarf_hasattr(&c, DW_AT_declaration) ||
		    die_udata(&c, DW_AT_decl_file) != file || (l = die_udata(&c, DW_AT_decl_line)) > line ||
		    l < *best)
			continue;
		fn = die_name(&c);
		if (!fn || lp_name_omp_outlined(fn))
			continue;
		*best = l;
		*found = c;
		any = 1;
	} while (dwarf_siblingof(&c, &c) == 0);
	return any;
}

/* The readable name of a function's DIE: its linkage name (C++) demangled,
 * else its name; a clang-outlined OpenMP region after the function that
 * encloses it. */
static const char *die_fn_name(struct lp_symbols *s, Dwarf_Die *cu, Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	const char *name = NULL;
	Dwarf_Word best = 0;
	Dwarf_Die outer;

	if (dwarf_attr_integrate(die, DW_AT_linkage_name, &attr) ||
	    dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr))
		name = dwarf_formstring(&attr);
	if (!name)
		name = die_name(die);
	if (name && !strncmp(name, ".omp_outlined.", 14) && omp_enclosing(cu, die, &best, &outer))
		return lp_name_omp_region(&s->names, die_fn_name(s, cu, &outer));
	return lp_name_readable(&s->names, name);
}

/* The call site of an inlined subroutine's DIE (in the function it was
 * inlined into). 1 when known. */
static int call_site(Dwarf_Die *cu, Dwarf_Die *die, const char **file, const char **path, int *line,
		     int *column)
{
	Dwarf_Files *files = NULL;
	size_t nfiles = 0;
	Dwarf_Word f, l;

	if (dwarf_getsrcfiles(cu, &files, &nfiles) < 0 || !dwarf_hasattr(die, DW_AT_call_file) ||
	    (f = die_udata(die, DW_AT_call_file)) >= nfiles || !(l = die_udata(die, DW_AT_call_line)))
		return 0;
	*file = basename_of(dwarf_filesrc(files, f, NULL, NULL));
	if (path)
		*path = dwarf_filesrc(files, f, NULL, NULL);
	*line = (int)l;
	if (column)
		*column = (int)die_udata(die, DW_AT_call_column);
	return *file != NULL;
}

/* A relative source path (as clang writes the name a file was compiled
 * by) joined to the unit's compilation directory, so that it names the
 * file wherever locprof runs; path itself when that fails. */
static const char *absolute_path(struct lp_symbols *s, Dwarf_Die *cu, const char *path)
{
	Dwarf_Attribute attr;
	const char *dir = dwarf_attr(cu, DW_AT_comp_dir, &attr) ? dwarf_formstring(&attr) : NULL;
	const char *joined;
	char *full;

	if (!dir || asprintf(&full, "%s/%s", dir, path) < 0)
		return path;
	joined = lp_strpool_add(&s->names, full);
	free(full);
	return joined ? joined : path;
}

/* Whether a and b name the same OpenMP region: clang inlines a region's
 * body (.omp_outlined._debug__) into its outlined function, and both are
 * "main [omp region]"; "main [omp region] in main [omp region]" says
 * nothing more than its first half. */
static int same_omp_region(const char *a, const char *b)
{
	static const char tag[] = " [omp region]";
	size_t n = a ? strlen(a) : 0;

	return a && b && n >= sizeof(tag) - 1 && !strcmp(a + n - (sizeof(tag) - 1), tag) && !strcmp(a, b);
}

/* out->label from the other fields: the function and its line, or
 * without a line, the function in a shared library after the library's
 * name ("libgomp.so.1:gomp_barrier_wait_end"). */
static void make_label(struct lp_symbols *s, struct lp_code_loc *out)
{
	char *l = NULL, *c = NULL;
	int err;

	if (!out->function)
		return;
	if (out->file)
		err = asprintf(&l, "%s (%s:%d)", out->function, out->file, out->line);
	else if (out->module)
		err = asprintf(&l, "%s:%s", out->module, out->function);
	else
		err = asprintf(&l, "%s", out->function);
	if (err < 0)
		return;
	if (out->caller && out->caller_file)
		err = asprintf(&c, "%s in %s (%s:%d)", l, out->caller, out->caller_file, out->caller_line);
	else if (out->caller)
		err = asprintf(&c, "%s in %s", l, out->caller);
	out->label = lp_strpool_add(&s->names, err >= 0 && c ? c : l);
	free(c);
	free(l);
}

/* A clang-outlined OpenMP region without debug information, named after
 * the function whose code takes its address (omp-encloser.c), through
 * nested regions: "relax [omp region]". NULL when none is found. */
static const char *omp_region_by_code(struct lp_symbols *s, Dwfl_Module *mod, uint64_t pc)
{
	GElf_Off off = 0;
	GElf_Sym sym;
	const char *name = dwfl_module_addrinfo(mod, pc, &off, &sym, NULL, NULL, NULL);
	uint64_t start = pc - off;

	for (int depth = 0; name && !strncmp(name, ".omp_outlined.", 14); depth++)
		if (depth == 8 || lp_omp_encloser(&s->omp, mod, start, &name, &start) <= 0)
			return NULL;
	return name ? lp_name_omp_region(&s->names, lp_name_readable(&s->names, name)) : NULL;
}

/* The function and the source line of pc. The function is the innermost
 * one that contains pc, inlined or not (DWARF scopes), after stepping out
 * of inlined runtime callbacks; its place is the line table's, or for a
 * function we stepped out of, the call site of the inlined code. Where the
 * line table has no line for pc (line 0: compiler-generated code, such as
 * the instruction after a call, which is what a recorded return address
 * points at), pc - 1 is used instead, for the line and the scopes, and
 * failing that the nearest line record. Code inlined into a function
 * names that function and the line of the call there (the outermost
 * inlined call; an outlined OpenMP region's own inlined body counts as
 * the region). Without DWARF: the ELF symbol only (a clang-outlined
 * OpenMP region: after the function whose code refers to it). */
int lp_symbols_pc_dwfl(struct lp_symbols *s, uint64_t pc, struct lp_code_loc *out)
{
	Dwfl_Module *mod = dwfl_addrmodule(s->dwfl, pc);
	Dwarf_Die cudie, chain[64];
	Dwarf_Addr bias = 0;
	int n = 0, k, base = 0, have_cu = 0, shared = 0;
	const char *symbol, *module;

	memset(out, 0, sizeof(*out));
	if (!mod)
		return 0;
	module = module_name(s, mod, &shared);
	out->module = shared ? module : NULL;
	symbol = lp_code_symbol(&s->code, mod, pc);
	out->function = lp_name_readable(&s->names, symbol);
	if ((have_cu = cu_of(s, mod, pc, &cudie, &bias))) {
		uint64_t addr = pc - bias;

		if (!line_of(&cudie, addr, out)) {
			if (line_of(&cudie, addr - 1, out))
				addr--;
			else
				nearest_line(&cudie, addr, out);
		}
		n = fn_chain(&cudie, addr, chain, 0, (int)(sizeof(chain) / sizeof(chain[0])));
	}
	if (n <= 0) {
		const char *region = symbol && !strncmp(symbol, ".omp_outlined.", 14) ? omp_region_by_code(s, mod, pc)
										     : NULL;
		if (region)
			out->function = region;
		goto out;
	}
	/* k: the innermost frame that is not an inlined runtime callback;
	 * the place of a callback is its call site, in the next frame out */
	for (k = n - 1; k > 0 && dwarf_tag(&chain[k]) == DW_TAG_inlined_subroutine &&
			runtime_function(die_name(&chain[k]));
	     k--)
		call_site(&cudie, &chain[k], &out->file, &out->path, &out->line, &out->column);
	if (die_name(&chain[k]))
		out->function = die_fn_name(s, &cudie, &chain[k]);
	while (base + 1 < k && lp_name_omp_outlined(die_name(&chain[base + 1])))
		base++;
	if (k > base && !same_omp_region(out->function, die_fn_name(s, &cudie, &chain[0]))) {
		out->caller = die_fn_name(s, &cudie, &chain[0]);
		if (!call_site(&cudie, &chain[base + 1], &out->caller_file, NULL, &out->caller_line, NULL))
			out->caller_file = NULL;
		if (!out->file && out->caller_file) { /* no line of its own: the call's */
			out->file = out->caller_file;
			call_site(&cudie, &chain[base + 1], &out->caller_file, &out->path, &out->caller_line, NULL);
			out->line = out->caller_line;
		}
	}
out:
	if (out->path && out->path[0] != '/' && have_cu)
		out->path = absolute_path(s, &cudie, out->path);
	make_label(s, out);
	return out->function || out->file;
}

int lp_symbols_pc(struct lp_symbols *s, uint64_t pc, struct lp_code_loc *out)
{
	int found;

	if (lp_pc_memo_find(&s->pcs, pc, out, &found))
		return found;
	found = lp_symbols_pc_dwfl(s, pc, out);
	lp_pc_memo_add(&s->pcs, pc, out, found); /* out of memory: not remembered */
	return found;
}

int lp_symbols_inline_first(struct lp_symbols *s, uint64_t pc, int (*skip)(struct lp_symbols *, const char *),
			    struct lp_alloc_site *out, const char **path)
{
	Dwfl_Module *mod = dwfl_addrmodule(s->dwfl, pc);
	Dwarf_Die cudie, chain[64];
	struct lp_code_loc loc;
	Dwarf_Addr bias = 0;
	uint64_t addr;
	int n;

	if (!mod || !cu_of(s, mod, pc, &cudie, &bias))
		return 0;
	addr = pc - bias;
	memset(&loc, 0, sizeof(loc));
	if (!line_of(&cudie, addr, &loc) && line_of(&cudie, addr - 1, &loc))
		addr--;
	n = fn_chain(&cudie, addr, chain, 0, (int)(sizeof(chain) / sizeof(chain[0])));
	for (int k = n - 1; k >= 0; k--) {
		const char *name = die_name(&chain[k]) ? die_fn_name(s, &cudie, &chain[k]) : NULL, *p = NULL;

		if (!name || runtime_function(die_name(&chain[k])) || skip(s, name))
			continue;
		out->function = name;
		out->file = NULL;
		out->line = 0;
		out->column = 0;
		if (k == n - 1) {
			out->file = loc.file;
			out->line = loc.line;
			p = loc.path;
		} else {
			call_site(&cudie, &chain[k + 1], &out->file, &p, &out->line, NULL);
		}
		if (path)
			*path = p && p[0] != '/' ? absolute_path(s, &cudie, p) : p;
		/* the function it is inlined into, at its call */
		out->caller = k > 0 && die_name(&chain[k - 1]) ? die_fn_name(s, &cudie, &chain[k - 1]) : NULL;
		out->caller_file = NULL;
		out->caller_line = 0;
		if (out->caller)
			call_site(&cudie, &chain[k], &out->caller_file, NULL, &out->caller_line, NULL);
		return k == n - 1 ? 2 : 1;
	}
	return 0;
}

/* The C++ standard library's own functions (inlined into the program's
 * code as the STL always is). */
static int std_library_name(struct lp_symbols *s, const char *f)
{
	(void)s;
	return !strncmp(f, "std::", 5) || !strncmp(f, "__gnu_cxx::", 11) || !strncmp(f, "__cxxabiv1::", 12) ||
	       !strncmp(f, "__gnu_debug::", 13);
}

int lp_symbols_own_line(struct lp_symbols *s, uint64_t pc, const char **function, const char **path, int *line)
{
	struct lp_alloc_site f;

	/* 2: the innermost frame is the program's, its line the pc's own */
	if (lp_symbols_inline_first(s, pc, std_library_name, &f, path) != 1 || !*path)
		return 0;
	*function = f.function;
	*line = f.line;
	return 1;
}

struct lp_alloc_wrappers *lp_symbols_wrappers(struct lp_symbols *s)
{
	return &s->wrappers;
}

void lp_symbols_forget_sites(struct lp_symbols *s)
{
	lp_pc_memo_release(&s->sites); /* empty again, ready for use */
}

int lp_symbols_site_cached(struct lp_symbols *s, uint64_t pc, struct lp_alloc_site *out,
			   int (*compute)(struct lp_symbols *, uint64_t, struct lp_alloc_site *))
{
	int found;

	if (lp_pc_memo_find(&s->sites, pc, out, &found))
		return found;
	found = compute(s, pc, out);
	lp_pc_memo_add(&s->sites, pc, out, found); /* out of memory: not remembered */
	return found;
}

/* Calls visit(arg, mod, name, sym, addr) for each entry of a module's
 * symbol table (the null entry 0 skipped; name NULL where libdwfl has
 * none); a visit that returns non-zero stops the walk with DWARF_CB_ABORT. */
typedef int (*symtab_visit)(void *arg, Dwfl_Module *mod, const char *name, const GElf_Sym *sym, GElf_Addr addr);

static int walk_symtab(Dwfl_Module *mod, symtab_visit visit, void *arg)
{
	int n = dwfl_module_getsymtab(mod);

	for (int i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		const char *nm = dwfl_module_getsym_info(mod, i, &sym, &addr, NULL, NULL, NULL);

		if (visit(arg, mod, nm, &sym, addr))
			return DWARF_CB_ABORT;
	}
	return DWARF_CB_OK;
}

struct tls_gather {
	struct lp_symbols *s;
	size_t cap;
};

static int tls_symbol(void *arg, Dwfl_Module *mod, const char *nm, const GElf_Sym *sym, GElf_Addr addr)
{
	struct tls_gather *g = arg;
	struct lp_symbols *s = g->s;

	(void)addr;
	if (!nm || GELF_ST_TYPE(sym->st_info) != STT_TLS || sym->st_shndx == SHN_UNDEF)
		return 0;
	if (LP_ARRAY_RESERVE(s->tls, g->cap, s->ntls + 1, 32, "TLS symbols") < 0)
		return -1;
	s->tls[s->ntls++] =
		(struct tlsym){ mod, sym->st_value, sym->st_value + (sym->st_size ? sym->st_size : 1), nm };
	return 0;
}

static int gather_tls(Dwfl_Module *mod, void **user, const char *name, Dwarf_Addr base, void *arg)
{
	(void)user;
	(void)name;
	(void)base;
	return walk_symtab(mod, tls_symbol, arg);
}

int lp_symbols_tls(struct lp_symbols *s, uint64_t image, uint64_t offset, const char **name)
{
	Dwfl_Module *mod = dwfl_addrmodule(s->dwfl, image);

	if (!s->tls_built) {
		struct tls_gather g = { .s = s };

		s->tls_built = 1;
		dwfl_getmodules(s->dwfl, gather_tls, &g, 0);
	}
	for (size_t i = 0; mod && i < s->ntls; i++)
		if (s->tls[i].mod == mod && offset >= s->tls[i].start && offset < s->tls[i].end) {
			*name = lp_symbols_readable(s, s->tls[i].name);
			return 1;
		}
	return 0;
}

const char *lp_symbols_readable(struct lp_symbols *s, const char *name)
{
	const char *r = lp_name_readable(&s->names, name);

	return r ? r : name;
}

const char *lp_symbols_module(struct lp_symbols *s, uint64_t pc)
{
	Dwfl_Module *mod = dwfl_addrmodule(s->dwfl, pc);
	int shared;

	return mod ? module_name(s, mod, &shared) : NULL;
}

int lp_symbols_pc_file_address(struct lp_symbols *s, uint64_t pc, const char **module, uint64_t *address)
{
	Dwfl_Module *mod = s ? dwfl_addrmodule(s->dwfl, pc) : NULL;
	GElf_Addr bias = 0;
	const char *name;
	int shared;

	/* the load bias maps the run's address back to the file's (0 for a
	 * fixed-address executable) */
	if (mod && dwfl_module_getelf(mod, &bias) && (name = module_name(s, mod, &shared)) && pc >= bias) {
		*module = name;
		*address = pc - (uint64_t)bias;
		return 1;
	}
	return 0;
}

int lp_symbols_pc_address(struct lp_symbols *s, uint64_t pc, char *buf, size_t len)
{
	const char *module;
	uint64_t address;

	if (lp_symbols_pc_file_address(s, pc, &module, &address)) {
		snprintf(buf, len, "%s+%#" PRIx64, module, address);
		return 1;
	}
	snprintf(buf, len, "%#" PRIx64, pc);
	return 0;
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
	uint64_t *zero; /* addresses of symbols without a size */
	size_t nzero, capzero;
};

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

	return a < b ? -1 : a > b;
}

static int data_symbol(void *arg, Dwfl_Module *mod, const char *nm, const GElf_Sym *sym, GElf_Addr addr)
{
	struct gather *g = arg;
	struct lp_symbols *s = g->s;

	(void)mod;
	if (nm && !sym->st_size && sym->st_shndx != SHN_UNDEF && GELF_ST_TYPE(sym->st_info) != STT_FILE &&
	    GELF_ST_TYPE(sym->st_info) != STT_SECTION) {
		if (LP_ARRAY_RESERVE(g->zero, g->capzero, g->nzero + 1, 64, "data symbols") < 0) {
			g->err = LP_ENOMEM;
			return -1;
		}
		g->zero[g->nzero++] = addr;
	}
	if (!nm || GELF_ST_TYPE(sym->st_info) != STT_OBJECT || !sym->st_size || sym->st_shndx == SHN_UNDEF ||
	    addr + sym->st_size < addr)
		return 0;
	if (LP_ARRAY_RESERVE(s->ds, g->cap, s->nds + 1, 256, "data symbols") < 0) {
		g->err = LP_ENOMEM;
		return -1;
	}
	s->ds[s->nds++] = (struct dsym){ .start = addr, .end = addr + sym->st_size, .name = nm };
	return 0;
}

static int gather_module(Dwfl_Module *mod, void **user, const char *name, Dwarf_Addr base, void *arg)
{
	(void)user;
	(void)name;
	(void)base;
	return walk_symtab(mod, data_symbol, arg);
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
		free(g.zero);
		free(s->ds);
		s->ds = NULL;
		s->nds = 0;
		return g.err;
	}
	qsort(s->ds, s->nds, sizeof(*s->ds), cmp_dsym);
	if (g.nzero)
		qsort(g.zero, g.nzero, sizeof(*g.zero), cmp_u64);
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
		/* a global symbol without a size at the same address (__TMC_END__,
		 * _edata) can win libdwfl's choice over a local object there */
		if (g.nzero && bsearch(&d->start, g.zero, g.nzero, sizeof(*g.zero), cmp_u64))
			d->name = NULL;
		if (d->end > maxend)
			maxend = d->end;
		d->maxend = maxend;
	}
	free(g.zero);
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
