/* The function that encloses a clang-outlined OpenMP region, from the
 * code alone (a binary built without -g).
 *
 * clang outlines the body of `#pragma omp parallel` into a local function
 * named `.omp_outlined.` (`.omp_outlined..1`, ... for the next ones),
 * and the function that held the pragma passes its address to
 * __kmpc_fork_call (or calls it directly, when the region runs
 * serialised): a rip-relative lea of the outlined function's address, or
 * in a non-PIE binary a mov of it as an immediate. Nothing else takes
 * that address. So the encloser is the function whose code refers to the
 * outlined function's start.
 *
 * Assumptions: functions are the module's sized STT_FUNC symbols, their
 * code in an executable section of the ELF file. Each module holding an
 * outlined function is decoded once, whole (Zydis, the project's x86
 * decoder); an undecodable byte is skipped. Where several functions refer
 * to a region (the encloser inlined into its callers), the one that is
 * not an outlined region itself and comes first in the symbol table is
 * taken. */
#include "symbol/omp-encloser.h"

#include "common/array.h"
#include "common/error.h"
#include "symbol/symbol-internal.h"

#include <Zydis/Zydis.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

struct ref {
	uint64_t target;  /* an outlined function's start (link address) */
	uint64_t outer;   /* the start of the function referring to it */
	const char *name; /* that function's symbol */
	int outlined;     /* that function is an outlined region too */
};

struct modinfo {
	Dwfl_Module *mod;
	struct ref *v; /* one per outlined function */
	size_t n;
};

struct lp_omp_enclosers {
	struct modinfo *m;
	size_t n, cap;
};

static int is_clang_outlined(const char *name)
{
	return name && !strncmp(name, ".omp_outlined.", 14);
}

static struct ref *ref_of(struct modinfo *mi, uint64_t target)
{
	for (size_t i = 0; i < mi->n; i++)
		if (mi->v[i].target == target)
			return &mi->v[i];
	return NULL;
}

/* The code of [addr, addr + size) in elf (link addresses), or NULL. */
static const uint8_t *code_at(Elf *elf, uint64_t addr, uint64_t size)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS || !(sh.sh_flags & SHF_EXECINSTR) ||
		    addr < sh.sh_addr || addr + size > sh.sh_addr + sh.sh_size)
			continue;
		d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf || addr - sh.sh_addr + size > d->d_size)
			return NULL;
		return (const uint8_t *)d->d_buf + (addr - sh.sh_addr);
	}
	return NULL;
}

/* Note the function [start, start + size) named name as referring to
 * every outlined function whose address its code takes. */
static void scan_function(const ZydisDecoder *dec, struct modinfo *mi, const uint8_t *p, uint64_t start,
			  uint64_t size, const char *name)
{
	ZydisDecoderContext ctx;
	ZydisDecodedInstruction in;
	ZydisDecodedOperand op[ZYDIS_MAX_OPERAND_COUNT];

	for (uint64_t off = 0; off < size;) {
		uint64_t addr = start + off;

		if (!ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(dec, &ctx, p + off, size - off, &in))) {
			off++;
			continue;
		}
		off += in.length;
		if (!(in.attributes & ZYDIS_ATTRIB_IS_RELATIVE) && in.mnemonic != ZYDIS_MNEMONIC_MOV)
			continue;
		if (!ZYAN_SUCCESS(ZydisDecoderDecodeOperands(dec, &ctx, &in, op, in.operand_count_visible)))
			continue;
		for (unsigned i = 0; i < in.operand_count_visible; i++) {
			ZyanU64 t = 0;
			struct ref *r;

			if (op[i].type == ZYDIS_OPERAND_TYPE_MEMORY && op[i].mem.base == ZYDIS_REGISTER_RIP) {
				if (!ZYAN_SUCCESS(ZydisCalcAbsoluteAddress(&in, &op[i], addr, &t)))
					continue;
			} else if (op[i].type == ZYDIS_OPERAND_TYPE_IMMEDIATE) {
				if (op[i].imm.is_relative) {
					if (!ZYAN_SUCCESS(ZydisCalcAbsoluteAddress(&in, &op[i], addr, &t)))
						continue;
				} else {
					t = op[i].imm.value.u;
				}
			} else {
				continue;
			}
			if (t == start || !(r = ref_of(mi, t)))
				continue;
			if (!r->name || (r->outlined && !is_clang_outlined(name))) {
				r->outer = start;
				r->name = name;
				r->outlined = is_clang_outlined(name);
			}
		}
	}
}

/* Decode module mod (its functions) and fill mi. */
static int learn_module(struct modinfo *mi)
{
	int nsym = dwfl_module_getsymtab(mi->mod);
	size_t cap = 0;
	ZydisDecoder dec;
	GElf_Addr bias = 0;
	Elf *elf = dwfl_module_getelf(mi->mod, &bias);

	if (!elf || nsym <= 0)
		return 0;
	/* the outlined functions first: most modules have none */
	for (int i = 1; i < nsym; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		const char *nm = dwfl_module_getsym_info(mi->mod, i, &sym, &addr, NULL, NULL, NULL);

		if (!is_clang_outlined(nm) || GELF_ST_TYPE(sym.st_info) != STT_FUNC || ref_of(mi, addr - bias))
			continue;
		if (LP_ARRAY_RESERVE(mi->v, cap, mi->n + 1, 8, "OpenMP regions") < 0)
			return LP_ENOMEM;
		mi->v[mi->n++] = (struct ref){ .target = addr - bias };
	}
	if (!mi->n || !ZYAN_SUCCESS(ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64)))
		return 0;
	for (int i = 1; i < nsym; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		const char *nm = dwfl_module_getsym_info(mi->mod, i, &sym, &addr, NULL, NULL, NULL);
		const uint8_t *p;

		if (!nm || GELF_ST_TYPE(sym.st_info) != STT_FUNC || !sym.st_size || sym.st_shndx == SHN_UNDEF ||
		    !(p = code_at(elf, addr - bias, sym.st_size)))
			continue;
		scan_function(&dec, mi, p, addr - bias, sym.st_size, nm);
	}
	return 0;
}

int lp_omp_encloser(struct lp_omp_enclosers **e, Dwfl_Module *mod, uint64_t start, const char **name,
		    uint64_t *outer)
{
	struct modinfo *mi = NULL;
	struct ref *r;
	GElf_Addr bias = 0;
	int err;

	if (!*e && !(*e = calloc(1, sizeof(**e))))
		return lp_seterr(LP_ENOMEM, "out of memory");
	for (size_t i = 0; i < (*e)->n; i++)
		if ((*e)->m[i].mod == mod)
			mi = &(*e)->m[i];
	if (!mi) {
		if (LP_ARRAY_RESERVE((*e)->m, (*e)->cap, (*e)->n + 1, 4, "modules") < 0)
			return LP_ENOMEM;
		mi = &(*e)->m[(*e)->n++];
		*mi = (struct modinfo){ .mod = mod };
		if ((err = learn_module(mi)) < 0)
			return err;
	}
	if (!dwfl_module_getelf(mod, &bias) || !(r = ref_of(mi, start - bias)) || !r->name)
		return 0;
	*name = r->name;
	*outer = r->outer + bias;
	return 1;
}

void lp_omp_enclosers_free(struct lp_omp_enclosers *e)
{
	if (!e)
		return;
	for (size_t i = 0; i < e->n; i++)
		free(e->m[i].v);
	free(e->m);
	free(e);
}
