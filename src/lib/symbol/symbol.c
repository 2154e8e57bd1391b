/* Symbolisation with elfutils' libdwfl.
 *
 * Assumptions: a mapping of file offset O at address S places the ELF file
 * at S - O (true for the usual loaders, where segments keep p_vaddr -
 * p_offset constant); each file is reported once, at its lowest-offset
 * mapping. A --binary is a non-PIE executable, used at its link addresses.
 * Data symbols are ELF STT_OBJECT symbols with a non-zero size (globals and
 * statics; the stack and the heap have none). */
#include <locprof/symbol.h>

#include "common/error.h"

#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

struct lp_symbols {
	Dwfl *dwfl;
};

static char *debuginfo_path;
static const Dwfl_Callbacks callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &debuginfo_path,
};

int lp_symbols_new(struct lp_symbols **out, const struct lp_mappings *maps, const char *binary)
{
	struct lp_symbols *s;
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
		/* an unreadable library only loses its names */
		if (first && dwfl_report_elf(s->dwfl, m->path, m->path, -1, m->start - m->file_offset, false))
			reported++;
	}
	dwfl_report_end(s->dwfl, NULL, NULL);
	if (!reported) {
		lp_symbols_free(s);
		return lp_seterr(LP_EINVAL, "no binary to take symbols from");
	}
	*out = s;
	return 0;
}

void lp_symbols_free(struct lp_symbols *s)
{
	if (!s)
		return;
	dwfl_end(s->dwfl);
	free(s);
}

int lp_symbols_pc(struct lp_symbols *s, uint64_t pc, struct lp_code_loc *out)
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

int lp_symbols_data(struct lp_symbols *s, uint64_t addr, struct lp_data_sym *out)
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
