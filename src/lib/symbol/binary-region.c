/* What `record` reads from a program's ELF file about its region of
 * interest before the run: whether it marks one (locprof/roi.h leaves the
 * note section LP_ROI_NOTE), and where a function named by --start-at or
 * --stop-at begins. Read with libelf, as lp_binary_instrumented() does. */
#include "common/error.h"

#include <locprof/symbol.h>

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <libiberty/demangle.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LP_ROI_NOTE ".note.locprof.roi"

struct elf_file {
	int fd;
	Elf *elf;
	size_t shstrndx;
};

static int elf_file_open(struct elf_file *f, const char *path)
{
	f->fd = open(path, O_RDONLY | O_CLOEXEC);
	f->elf = NULL;
	if (f->fd < 0)
		return lp_seterr_errno("cannot open '%s'", path);
	elf_version(EV_CURRENT);
	f->elf = elf_begin(f->fd, ELF_C_READ_MMAP, NULL);
	if (!f->elf || elf_kind(f->elf) != ELF_K_ELF || elf_getshdrstrndx(f->elf, &f->shstrndx) < 0) {
		elf_end(f->elf);
		close(f->fd);
		return lp_seterr(LP_EFORMAT, "'%s' is not an ELF file", path);
	}
	return 0;
}

static void elf_file_close(struct elf_file *f)
{
	elf_end(f->elf);
	close(f->fd);
}

int lp_binary_marks_region(const char *path)
{
	struct elf_file f;
	Elf_Scn *scn = NULL;
	int found = 0, err;

	if ((err = elf_file_open(&f, path)) < 0)
		return err;
	while (!found && (scn = elf_nextscn(f.elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (gelf_getshdr(scn, &sh) && (name = elf_strptr(f.elf, f.shstrndx, sh.sh_name)))
			found = !strcmp(name, LP_ROI_NOTE);
	}
	elf_file_close(&f);
	return found;
}

/* Whether the symbol sym is what the user called name: its own name, or
 * for C++ its demangled name without or with its parameters. */
static int names_function(const char *sym, const char *name)
{
	char *d;
	int same;

	if (!strcmp(sym, name))
		return 1;
	if (strncmp(sym, "_Z", 2))
		return 0;
	d = cplus_demangle(sym, DMGL_ANSI);
	same = d && !strcmp(d, name);
	free(d);
	if (same)
		return 1;
	d = cplus_demangle(sym, DMGL_ANSI | DMGL_PARAMS);
	same = d && !strcmp(d, name);
	free(d);
	return same;
}

/* Whether sym is a copy gcc made of function name and entered in its
 * place ("mk2.constprop.0", "f.isra.0", "g.part.0", "h.lto_priv.0", and
 * chains of them): -O2 renames a static function that way, and the user
 * knows it by the source's name. A ".cold" part is not an entry. */
static int names_clone(const char *sym, const char *name)
{
	static const char *const kinds[] = { "constprop.", "isra.", "part.", "lto_priv." };
	size_t len = strlen(name);
	const char *p;
	int any = 0;

	if (strncmp(sym, name, len))
		return 0;
	for (p = sym + len; *p == '.';) {
		size_t k = 0, nk = sizeof(kinds) / sizeof(kinds[0]);

		while (k < nk && strncmp(p + 1, kinds[k], strlen(kinds[k])))
			k++;
		if (k == nk)
			return 0;
		p += 1 + strlen(kinds[k]);
		if (!(*p >= '0' && *p <= '9'))
			return 0;
		while (*p >= '0' && *p <= '9')
			p++;
		any = 1;
	}
	return any && !*p;
}

/* Look through one symbol table for name (clones: for gcc's copies of
 * it instead); 1 when found (out filled), 0 if not, -1 when several
 * functions answer. */
static int symtab_function(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, const char *name, int clones,
			   struct lp_binary_function *out)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t n;
	int found = 0;

	if (!data || !sh->sh_entsize)
		return 0;
	n = sh->sh_size / sh->sh_entsize;
	for (size_t i = 0; i < n; i++) {
		GElf_Sym sym;
		const char *s;

		if (!gelf_getsym(data, (int)i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
		    sym.st_shndx == SHN_UNDEF || !sym.st_value)
			continue;
		s = elf_strptr(elf, sh->sh_link, sym.st_name);
		if (!s || !(clones ? names_clone(s, name) : names_function(s, name)))
			continue;
		if (found && out->addr != sym.st_value)
			return -1; /* two functions by that name */
		if (!found) {
			char *d = strncmp(s, "_Z", 2) ? NULL : cplus_demangle(s, DMGL_ANSI | DMGL_PARAMS);
			out->addr = sym.st_value;
			snprintf(out->symbol, sizeof(out->symbol), "%s", s);
			snprintf(out->display, sizeof(out->display), "%s", d ? d : s);
			free(d);
		}
		found = 1;
	}
	return found;
}

int lp_binary_function(const char *path, const char *name, struct lp_binary_function *out)
{
	struct elf_file f;
	Elf_Scn *scn = NULL;
	GElf_Ehdr eh;
	int found = 0, err, tables = 0;

	memset(out, 0, sizeof(*out));
	if ((err = elf_file_open(&f, path)) < 0)
		return err;
	/* .symtab first: it names static functions too; .dynsym when
	 * stripped; then gcc's renamed copies (mk2.constprop.0) in .symtab */
	for (int pass = 0; pass < 3 && !found; pass++) {
		scn = NULL;
		while (!found && (scn = elf_nextscn(f.elf, scn))) {
			GElf_Shdr sh;
			if (!gelf_getshdr(scn, &sh) || sh.sh_type != (pass == 1 ? SHT_DYNSYM : SHT_SYMTAB))
				continue;
			tables += pass < 2;
			found = symtab_function(f.elf, scn, &sh, name, pass == 2, out);
		}
	}
	out->pie = gelf_getehdr(f.elf, &eh) && eh.e_type == ET_DYN;
	elf_file_close(&f);
	if (found < 0)
		return lp_seterr(LP_EINVAL, "'%s' names several functions in '%s'", name, path);
	if (!found)
		return lp_seterr(LP_EINVAL, "no function '%s' in '%s'%s", name, path,
				 tables ? "" : " (it has no symbol table)");
	return 0;
}
