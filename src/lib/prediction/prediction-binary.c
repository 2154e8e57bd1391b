/* The binaries the pcs belong to: ELF files with their executable sections
 * and sized function symbols, where they are loaded, and the source lines
 * of their code (DWARF, through libdw). */
#include "common/array.h"
#include "prediction/prediction-code.h"

#include "common/error.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int lp_pred_mod_open(struct xmod *m, const char *path)
{
	Elf_Scn *scn = NULL;
	GElf_Ehdr eh;
	size_t shstr;
	int have_symtab = 0;

	memset(m, 0, sizeof(*m));
	m->fd = -1;
	if (!(m->path = strdup(path)))
		return lp_seterr(LP_ENOMEM, "out of memory");
	if ((m->fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return lp_seterr_errno("cannot open binary '%s'", path);
	if (!(m->elf = elf_begin(m->fd, ELF_C_READ_MMAP, NULL)) || elf_kind(m->elf) != ELF_K_ELF ||
	    !gelf_getehdr(m->elf, &eh) || eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_machine != EM_X86_64)
		return lp_seterr(LP_EFORMAT, "'%s' is not an x86-64 ELF file", path);
	m->is_dyn = eh.e_type == ET_DYN;
	if (elf_getshdrstrndx(m->elf, &shstr) < 0)
		return lp_seterr(LP_EFORMAT, "'%s': no section names", path);
	/* executable sections, then symbols (.symtab, else .dynsym) */
	while ((scn = elf_nextscn(m->elf, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_SYMTAB)
			have_symtab = 1;
		if (sh.sh_type == SHT_PROGBITS && (sh.sh_flags & SHF_EXECINSTR) && sh.sh_size) {
			Elf_Data *d = elf_getdata(scn, NULL);
			int err;
			if (!d || !d->d_buf || d->d_size < sh.sh_size)
				continue;
			if ((err = LP_ARRAY_RESERVE(m->secs, m->secs_cap, m->nsecs + 1, 16, "code sections")) < 0)
				return err;
			m->secs[m->nsecs++] = (struct xsec){ sh.sh_addr, sh.sh_size, d->d_buf };
		}
	}
	scn = NULL;
	while ((scn = elf_nextscn(m->elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != (have_symtab ? SHT_SYMTAB : SHT_DYNSYM) ||
		    !sh.sh_entsize || !(d = elf_getdata(scn, NULL)))
			continue;
		size_t n = sh.sh_size / sh.sh_entsize;
		for (size_t i = 0; i < n; i++) {
			GElf_Sym s;
			const char *name;
			int err;
			if (!gelf_getsym(d, (int)i, &s) || GELF_ST_TYPE(s.st_info) != STT_FUNC ||
			    !s.st_size || s.st_shndx == SHN_UNDEF)
				continue;
			if (!(name = elf_strptr(m->elf, sh.sh_link, s.st_name)))
				name = "?";
			if ((err = LP_ARRAY_RESERVE(m->syms, m->syms_cap, m->nsyms + 1, 256, "symbols")) < 0)
				return err;
			m->syms[m->nsyms++] = (struct xsym){ s.st_value, s.st_size, name, -1 };
		}
	}
	return 0;
}

static int cmp_sym(const void *a, const void *b)
{
	const struct xsym *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->size > y->size ? -1 : x->size < y->size; /* larger first */
}

void lp_pred_mod_sort(struct xmod *m)
{
	size_t k = 0;

	qsort(m->syms, m->nsyms, sizeof(*m->syms), cmp_sym);
	for (size_t i = 0; i < m->nsyms; i++)
		if (!k || m->syms[i].start != m->syms[k - 1].start)
			m->syms[k++] = m->syms[i];
	m->nsyms = k;
}

void lp_pred_mod_close(struct xmod *m)
{
	if (m->dwfl)
		dwfl_end(m->dwfl);
	if (m->elf)
		elf_end(m->elf);
	if (m->fd >= 0)
		close(m->fd);
	free(m->secs);
	free(m->syms);
	free(m->path);
}

const struct xsec *lp_pred_mod_sec(const struct xmod *m, uint64_t vaddr)
{
	for (size_t i = 0; i < m->nsecs; i++)
		if (vaddr >= m->secs[i].addr && vaddr - m->secs[i].addr < m->secs[i].size)
			return &m->secs[i];
	return NULL;
}

struct xsym *lp_pred_mod_sym(struct xmod *m, uint64_t vaddr)
{
	size_t lo = 0, hi = m->nsyms;

	LP_BISECT(lo, hi, i, m->syms[i].start <= vaddr);
	/* syms[lo-1] starts at or before vaddr; an earlier, larger symbol may
	 * still contain it (nested local symbols) */
	for (size_t i = lo; i-- > 0 && lo - i <= 4;)
		if (vaddr - m->syms[i].start < m->syms[i].size)
			return &m->syms[i];
	return NULL;
}

/* Load bias of module m from a mapping of file offset `off` at `start`. */
int lp_pred_mod_bias(const struct xmod *m, uint64_t start, uint64_t off, uint64_t *bias)
{
	size_t n;

	if (elf_getphdrnum(m->elf, &n) < 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(m->elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		uint64_t a = ph.p_align > 1 ? ph.p_align : 4096;
		if ((ph.p_offset & ~(a - 1)) <= off && off < ph.p_offset + ph.p_filesz) {
			*bias = start - off + ph.p_offset - ph.p_vaddr;
			return 0;
		}
	}
	return -1;
}

/* An instrumentation callback, whose call site is the access's line. */
static int is_callback(const char *name)
{
	return name && (!strncmp(name, "__sanitizer_cov_load", 20) || !strncmp(name, "__sanitizer_cov_store", 21) ||
			!strncmp(name, "__tsan_read", 11) || !strncmp(name, "__tsan_write", 12) ||
			!strncmp(name, "__tsan_unaligned", 16));
}

/* A source file of locprof's runtime (inlined into instrumented code). */
static int is_runtime_file(const char *f)
{
	const char *base = strrchr(f, '/') ? strrchr(f, '/') + 1 : f;
	size_t n = strlen(base);

	return strstr(f, "src/rt/") || !strcmp(base, "rt.h") ||
	       (!strncmp(base, "rt-", 3) && n > 2 && !strcmp(base + n - 2, ".c"));
}

/* The compile unit holding addr. libdw finds it through .debug_aranges,
 * which clang does not emit; so the units are searched with dwarf_haspc. */
static Dwarf_Die *cu_of(struct xmod *md, uint64_t addr, Dwarf_Die *out)
{
	Dwarf_Addr bias = 0;
	Dwarf *dw;
	Dwarf_Die *cu;
	Dwarf_Off off = 0, next;
	size_t hsize;

	if ((cu = dwfl_module_addrdie(md->dmod, addr, &bias))) {
		*out = *cu;
		return out;
	}
	if (!(dw = dwfl_module_getdwarf(md->dmod, &bias)))
		return NULL;
	while (dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		if (dwarf_offdie(dw, off + hsize, out) && dwarf_haspc(out, addr - bias) == 1)
			return out;
		off = next;
	}
	return NULL;
}

/* Line of addr: the call site of an inlined instrumentation callback
 * around it, else the line table's. 1 if found outside the runtime. */
int lp_pred_mod_line(struct xmod *md, uint64_t addr, const char **file, int *line)
{
	Dwarf_Die cubuf, *cu, *scopes = NULL;
	Dwarf_Line *dl;
	int n;

	if (!(cu = cu_of(md, addr, &cubuf)))
		return 0;
	if ((n = dwarf_getscopes(cu, addr, &scopes)) > 0) {
		for (int i = 0; i < n; i++) {
			Dwarf_Attribute a;
			Dwarf_Word fidx, ln;
			Dwarf_Files *files;
			size_t nfiles;
			const char *f;
			if (dwarf_tag(&scopes[i]) != DW_TAG_inlined_subroutine || !is_callback(dwarf_diename(&scopes[i])))
				continue;
			if (!dwarf_attr(&scopes[i], DW_AT_call_file, &a) || dwarf_formudata(&a, &fidx) != 0 ||
			    !dwarf_attr(&scopes[i], DW_AT_call_line, &a) || dwarf_formudata(&a, &ln) != 0 ||
			    dwarf_getsrcfiles(cu, &files, &nfiles) != 0 || fidx >= nfiles ||
			    !(f = dwarf_filesrc(files, fidx, NULL, NULL)) || !ln)
				break;
			free(scopes);
			*file = f;
			*line = (int)ln;
			return !is_runtime_file(f);
		}
		free(scopes);
	}
	if ((dl = dwarf_getsrc_die(cu, addr))) {
		const char *f = dwarf_linesrc(dl, NULL, NULL);
		if (f && dwarf_lineno(dl, line) == 0 && *line > 0) {
			*file = f;
			return !is_runtime_file(f);
		}
	}
	return 0;
}
