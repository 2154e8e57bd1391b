/* Whether a program was built with `locprof cc`, read from its ELF file with
 * libelf, so that `record` can refuse an uninstrumented program before it
 * runs instead of after.
 *
 * The runtime leaves two marks: its section LP_RT_SECTION (src/rt/rt-core.c),
 * which `strip` keeps because it is allocated, and its symbols - the
 * callbacks the compiler calls (__sanitizer_cov_load*, __tsan_read*, ...)
 * and the runtime's own lp_rt_* functions - which only an unstripped file
 * still names. Either is enough. */
#include "common/error.h"

#include <locprof/symbol.h>

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <string.h>
#include <unistd.h>

#define LP_RT_SECTION ".locprof_rt"

static int runtime_symbol(const char *name)
{
	static const char *const prefixes[] = { "__sanitizer_cov_load", "__sanitizer_cov_store",
						"__tsan_read", "__tsan_write", "lp_rt_" };

	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(name, prefixes[i], strlen(prefixes[i])))
			return 1;
	return 0;
}

/* 1 if a symbol table of the section scn names the runtime. */
static int symtab_names_runtime(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t n;

	if (!data || !sh->sh_entsize)
		return 0;
	n = sh->sh_size / sh->sh_entsize;
	for (size_t i = 0; i < n; i++) {
		GElf_Sym sym;
		const char *name;

		if (!gelf_getsym(data, (int)i, &sym))
			break;
		name = elf_strptr(elf, sh->sh_link, sym.st_name);
		if (name && runtime_symbol(name))
			return 1;
	}
	return 0;
}

int lp_binary_instrumented(const char *path)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	int fd, found = 0, err = 0;
	Elf *elf;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return lp_seterr_errno("cannot open '%s'", path);
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF || elf_getshdrstrndx(elf, &shstrndx) < 0) {
		err = lp_seterr(LP_EFORMAT, "'%s' is not an ELF file", path);
		goto out;
	}
	while (!found && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh))
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (name && !strcmp(name, LP_RT_SECTION))
			found = 1;
		else if (sh.sh_type == SHT_SYMTAB || sh.sh_type == SHT_DYNSYM)
			found = symtab_names_runtime(elf, scn, &sh);
	}
out:
	elf_end(elf);
	close(fd);
	return err ? err : found;
}
