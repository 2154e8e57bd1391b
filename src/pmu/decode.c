/* Instruction decoding for the pmu backend with Zydis 4: which memory
 * references an instruction makes (decode.h says what counts) and their
 * addresses from a thread's registers, gathers and scatters included.
 *
 * Zydis reports every memory operand with its actions (read, write,
 * conditional) and visibility: hidden operands are the implicit ones
 * (stack of push/pop/call/ret/leave, [rsi]/[rdi] of string instructions),
 * so no per-instruction table is kept here, only the few corrections:
 * Zydis places the stack slot of push/call at [rsp] (the value before the
 * instruction), and xlat's [rbx + al] without its index. */
#include "decode.h"

#include <Zydis/Zydis.h>
#include <cpuid.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <locprof/common.h>
#include "common/error.h"

struct lp_pmu_decoder {
	ZydisDecoder z;
};

int lp_pmu_decoder_new(struct lp_pmu_decoder **out)
{
	struct lp_pmu_decoder *d = calloc(1, sizeof(*d));

	*out = NULL;
	if (!d)
		return lp_seterr(LP_ENOMEM, "out of memory");
	if (!ZYAN_SUCCESS(ZydisDecoderInit(&d->z, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64))) {
		free(d);
		return lp_seterr(LP_EIO, "zydis: cannot set up an x86-64 decoder");
	}
	*out = d;
	return 0;
}

void lp_pmu_decoder_free(struct lp_pmu_decoder *d)
{
	free(d);
}

static int is_string(ZydisMnemonic m)
{
	switch (m) {
	case ZYDIS_MNEMONIC_MOVSB: case ZYDIS_MNEMONIC_MOVSW: case ZYDIS_MNEMONIC_MOVSD: case ZYDIS_MNEMONIC_MOVSQ:
	case ZYDIS_MNEMONIC_STOSB: case ZYDIS_MNEMONIC_STOSW: case ZYDIS_MNEMONIC_STOSD: case ZYDIS_MNEMONIC_STOSQ:
	case ZYDIS_MNEMONIC_LODSB: case ZYDIS_MNEMONIC_LODSW: case ZYDIS_MNEMONIC_LODSD: case ZYDIS_MNEMONIC_LODSQ:
	case ZYDIS_MNEMONIC_CMPSB: case ZYDIS_MNEMONIC_CMPSW: case ZYDIS_MNEMONIC_CMPSD: case ZYDIS_MNEMONIC_CMPSQ:
	case ZYDIS_MNEMONIC_SCASB: case ZYDIS_MNEMONIC_SCASW: case ZYDIS_MNEMONIC_SCASD: case ZYDIS_MNEMONIC_SCASQ:
	case ZYDIS_MNEMONIC_INSB: case ZYDIS_MNEMONIC_INSW: case ZYDIS_MNEMONIC_INSD:
	case ZYDIS_MNEMONIC_OUTSB: case ZYDIS_MNEMONIC_OUTSW: case ZYDIS_MNEMONIC_OUTSD:
		return 1;
	default:
		return 0;
	}
}

/* Memory operands that are not data we could watch. */
static int no_access(ZydisMnemonic m)
{
	switch (m) {
	case ZYDIS_MNEMONIC_LEA: case ZYDIS_MNEMONIC_NOP:
	case ZYDIS_MNEMONIC_PREFETCH: case ZYDIS_MNEMONIC_PREFETCHNTA: case ZYDIS_MNEMONIC_PREFETCHT0:
	case ZYDIS_MNEMONIC_PREFETCHT1: case ZYDIS_MNEMONIC_PREFETCHT2: case ZYDIS_MNEMONIC_PREFETCHW:
	case ZYDIS_MNEMONIC_PREFETCHWT1:
	case ZYDIS_MNEMONIC_CLFLUSH: case ZYDIS_MNEMONIC_CLFLUSHOPT: case ZYDIS_MNEMONIC_CLWB:
	case ZYDIS_MNEMONIC_CLDEMOTE:
	case ZYDIS_MNEMONIC_VGATHERPF0DPD: case ZYDIS_MNEMONIC_VGATHERPF0DPS: case ZYDIS_MNEMONIC_VGATHERPF0QPD:
	case ZYDIS_MNEMONIC_VGATHERPF0QPS: case ZYDIS_MNEMONIC_VGATHERPF1DPD: case ZYDIS_MNEMONIC_VGATHERPF1DPS:
	case ZYDIS_MNEMONIC_VGATHERPF1QPD: case ZYDIS_MNEMONIC_VGATHERPF1QPS:
	case ZYDIS_MNEMONIC_VGATHERPF0HINTDPD: case ZYDIS_MNEMONIC_VGATHERPF0HINTDPS:
	case ZYDIS_MNEMONIC_VSCATTERPF0DPD: case ZYDIS_MNEMONIC_VSCATTERPF0DPS: case ZYDIS_MNEMONIC_VSCATTERPF0QPD:
	case ZYDIS_MNEMONIC_VSCATTERPF0QPS: case ZYDIS_MNEMONIC_VSCATTERPF1DPD: case ZYDIS_MNEMONIC_VSCATTERPF1DPS:
	case ZYDIS_MNEMONIC_VSCATTERPF1QPD: case ZYDIS_MNEMONIC_VSCATTERPF1QPS:
	case ZYDIS_MNEMONIC_VSCATTERPF0HINTDPD: case ZYDIS_MNEMONIC_VSCATTERPF0HINTDPS:
		return 1;
	default:
		return 0;
	}
}

/* XSAVE and XRSTOR in all their forms: Zydis gives the 576 bytes of the
 * legacy area and header; the area the CPU uses is as large as the
 * enabled state components (CPUID leaf 0xD: 2.7 KiB with AVX-512). The
 * dynamic loader's lazy binding saves it on the stack. */
static int xsave_family(ZydisMnemonic m)
{
	switch (m) {
	case ZYDIS_MNEMONIC_XSAVE: case ZYDIS_MNEMONIC_XSAVE64: case ZYDIS_MNEMONIC_XSAVEC:
	case ZYDIS_MNEMONIC_XSAVEC64: case ZYDIS_MNEMONIC_XSAVEOPT: case ZYDIS_MNEMONIC_XSAVEOPT64:
	case ZYDIS_MNEMONIC_XSAVES: case ZYDIS_MNEMONIC_XSAVES64: case ZYDIS_MNEMONIC_XRSTOR:
	case ZYDIS_MNEMONIC_XRSTOR64: case ZYDIS_MNEMONIC_XRSTORS: case ZYDIS_MNEMONIC_XRSTORS64:
		return 1;
	default:
		return 0;
	}
}

static uint32_t xsave_size(void)
{
	static uint32_t size;
	unsigned a, b, c, d;

	if (!size)
		size = __get_cpuid_count(0xd, 0, &a, &b, &c, &d) && b >= 576 ? b : 576;
	return size;
}

/* Gathers/scatters with 32-bit indices ("d" forms); the others have 64. */
static int dword_index(ZydisMnemonic m)
{
	switch (m) {
	case ZYDIS_MNEMONIC_VGATHERDPD: case ZYDIS_MNEMONIC_VGATHERDPS: case ZYDIS_MNEMONIC_VPGATHERDD:
	case ZYDIS_MNEMONIC_VPGATHERDQ: case ZYDIS_MNEMONIC_VSCATTERDPD: case ZYDIS_MNEMONIC_VSCATTERDPS:
	case ZYDIS_MNEMONIC_VPSCATTERDD: case ZYDIS_MNEMONIC_VPSCATTERDQ:
		return 1;
	default:
		return 0;
	}
}

static int is_vector(ZydisRegister r)
{
	ZydisRegisterClass c = ZydisRegisterGetClass(r);

	return c == ZYDIS_REGCLASS_XMM || c == ZYDIS_REGCLASS_YMM || c == ZYDIS_REGCLASS_ZMM;
}

/* Number of zmm holding vector register r, or -1. */
static int vec_num(int r)
{
	if (r >= ZYDIS_REGISTER_XMM0 && r <= ZYDIS_REGISTER_XMM31)
		return r - ZYDIS_REGISTER_XMM0;
	if (r >= ZYDIS_REGISTER_YMM0 && r <= ZYDIS_REGISTER_YMM31)
		return r - ZYDIS_REGISTER_YMM0;
	if (r >= ZYDIS_REGISTER_ZMM0 && r <= ZYDIS_REGISTER_ZMM31)
		return r - ZYDIS_REGISTER_ZMM0;
	return -1;
}

/* Element count and mask of a gather/scatter's VSIB operand m. */
static void vsib_setup(const ZydisDecodedInstruction *in, const ZydisDecodedOperand *op, struct lp_pmu_memop *m)
{
	unsigned idx_bits = ZydisRegisterGetWidth(ZYDIS_MACHINE_MODE_LONG_64, (ZydisRegister)m->index);
	unsigned data_bits = 0;
	int data = -1;

	m->vsib = 1;
	m->idx_bytes = dword_index(in->mnemonic) ? 4 : 8;
	/* The data register: the first explicit vector register operand
	 * (gathers: the destination; scatters: the source). The AVX2 forms
	 * have a vector mask as their last explicit operand. */
	for (int i = 0; i < in->operand_count_visible && data < 0; i++)
		if (op[i].type == ZYDIS_OPERAND_TYPE_REGISTER && is_vector(op[i].reg.value))
			data = i;
	if (data >= 0)
		data_bits = op[data].size;
	m->n_elem = (uint8_t)(idx_bits / (8u * m->idx_bytes));
	if (data_bits && m->size && data_bits / (8u * m->size) < m->n_elem)
		m->n_elem = (uint8_t)(data_bits / (8u * m->size));
	if (in->encoding == ZYDIS_INSTRUCTION_ENCODING_EVEX) {
		m->mask = in->avx.mask.reg != ZYDIS_REGISTER_K0 ? in->avx.mask.reg : 0;
		m->mask_vec = 0;
	} else {
		for (int i = in->operand_count_visible - 1; i > data; i--)
			if (op[i].type == ZYDIS_OPERAND_TYPE_REGISTER && is_vector(op[i].reg.value)) {
				m->mask = op[i].reg.value;
				m->mask_vec = 1;
				break;
			}
	}
}

int lp_pmu_decode(struct lp_pmu_decoder *d, const uint8_t *code, size_t len, uint64_t pc,
		  struct lp_pmu_insn *insn)
{
	ZydisDecodedInstruction in;
	ZydisDecodedOperand op[ZYDIS_MAX_OPERAND_COUNT];
	int string;

	memset(insn, 0, sizeof(*insn));
	if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(&d->z, code, len, &in, op)))
		return lp_seterr(LP_EPARSE, "cannot decode the instruction at 0x%llx", (unsigned long long)pc);
	insn->pc = pc;
	insn->len = in.length;
	insn->id = (uint32_t)in.mnemonic;
	snprintf(insn->text, sizeof(insn->text), "%s", ZydisMnemonicGetString(in.mnemonic));

	switch (in.mnemonic) {
	case ZYDIS_MNEMONIC_SYSCALL: case ZYDIS_MNEMONIC_SYSENTER:
		insn->flags |= LP_PMU_INSN_SYSCALL;
		break;
	case ZYDIS_MNEMONIC_INT:
		if (in.operand_count_visible >= 1 && op[0].type == ZYDIS_OPERAND_TYPE_IMMEDIATE && op[0].imm.value.u == 0x80)
			insn->flags |= LP_PMU_INSN_SYSCALL;
		break;
	case ZYDIS_MNEMONIC_INT3:
		insn->flags |= LP_PMU_INSN_INT3;
		break;
	case ZYDIS_MNEMONIC_CPUID:
		insn->flags |= LP_PMU_INSN_CPUID;
		break;
	default:
		break;
	}
	/* SSE movsd/cmpsd share mnemonics with the string forms, whose
	 * operands are all hidden. */
	string = is_string(in.mnemonic) && in.operand_count_visible == 0;
	if (string) {
		insn->flags |= LP_PMU_INSN_STRING;
		if (in.attributes & (ZYDIS_ATTRIB_HAS_REP | ZYDIS_ATTRIB_HAS_REPE | ZYDIS_ATTRIB_HAS_REPNE))
			insn->flags |= LP_PMU_INSN_REP;
	}
	if (no_access(in.mnemonic))
		return 0;

	/* Reads first, then writes: the order the hardware performs them and
	 * the order a trace lists them. */
	for (int pass = 0; pass < 2; pass++) {
		for (int i = 0; i < in.operand_count; i++) {
			const ZydisDecodedOperand *o = &op[i];
			int rd = (o->actions & (ZYDIS_OPERAND_ACTION_READ | ZYDIS_OPERAND_ACTION_CONDREAD)) != 0;
			int wr = (o->actions & (ZYDIS_OPERAND_ACTION_WRITE | ZYDIS_OPERAND_ACTION_CONDWRITE)) != 0;
			struct lp_pmu_memop *m;

			if (o->type != ZYDIS_OPERAND_TYPE_MEMORY ||
			    (o->mem.type != ZYDIS_MEMOP_TYPE_MEM && o->mem.type != ZYDIS_MEMOP_TYPE_VSIB))
				continue;
			if (!(pass == 0 ? rd : wr) || insn->n_mem >= LP_PMU_MAX_MEM)
				continue;
			m = &insn->mem[insn->n_mem++];
			m->seg = o->mem.segment == ZYDIS_REGISTER_FS || o->mem.segment == ZYDIS_REGISTER_GS ? o->mem.segment : 0;
			m->base = o->mem.base != ZYDIS_REGISTER_NONE ? o->mem.base : 0;
			m->index = o->mem.index != ZYDIS_REGISTER_NONE ? o->mem.index : 0;
			m->scale = o->mem.scale ? o->mem.scale : 1;
			m->disp = o->mem.disp.has_displacement ? o->mem.disp.value : 0;
			m->size = o->size >= 8 ? o->size / 8u : 1;
			if (xsave_family(in.mnemonic)) {
				m->size = xsave_size();
				insn->flags |= LP_PMU_INSN_WIDE;
			}
			m->kind = pass == 0 ? LP_REF_READ : LP_REF_WRITE;
			m->rip_rel = o->mem.base == ZYDIS_REGISTER_RIP || o->mem.base == ZYDIS_REGISTER_EIP;
			/* 0x67 sizes explicit addresses; the stack of an
			 * "addr32 call" (in glibc's _start) is still rsp. */
			m->addr32 = in.address_width == 32 && o->visibility == ZYDIS_OPERAND_VISIBILITY_EXPLICIT;
			if (in.mnemonic == ZYDIS_MNEMONIC_XLAT && !m->index) {
				m->index = ZYDIS_REGISTER_AL;
				m->scale = 1;
			}
			/* push, call, pushf, enter: Zydis names the slot by rsp
			 * before the instruction; the write is just below. */
			if (pass == 1 && o->visibility == ZYDIS_OPERAND_VISIBILITY_HIDDEN && !rd &&
			    (m->base == ZYDIS_REGISTER_RSP || m->base == ZYDIS_REGISTER_ESP) &&
			    (in.mnemonic == ZYDIS_MNEMONIC_PUSH || in.mnemonic == ZYDIS_MNEMONIC_CALL ||
			     in.mnemonic == ZYDIS_MNEMONIC_PUSHF || in.mnemonic == ZYDIS_MNEMONIC_PUSHFD ||
			     in.mnemonic == ZYDIS_MNEMONIC_PUSHFQ || in.mnemonic == ZYDIS_MNEMONIC_ENTER))
				m->below = 1;
			if (o->mem.type == ZYDIS_MEMOP_TYPE_VSIB) {
				vsib_setup(&in, op, m);
				insn->flags |= LP_PMU_INSN_VSIB;
			}
		}
	}
	return 0;
}

int lp_pmu_reg_value(int reg, const struct user_regs_struct *r, uint64_t *v)
{
	ZydisRegister big;
	unsigned width;
	uint64_t x;

	switch (reg) {
	case ZYDIS_REGISTER_FS: *v = r->fs_base; return 0;
	case ZYDIS_REGISTER_GS: *v = r->gs_base; return 0;
	case ZYDIS_REGISTER_DS: case ZYDIS_REGISTER_ES: case ZYDIS_REGISTER_SS: case ZYDIS_REGISTER_CS:
		*v = 0; /* flat in 64-bit mode */
		return 0;
	}
	big = ZydisRegisterGetLargestEnclosing(ZYDIS_MACHINE_MODE_LONG_64, (ZydisRegister)reg);
	width = ZydisRegisterGetWidth(ZYDIS_MACHINE_MODE_LONG_64, (ZydisRegister)reg);
	switch (big) {
	case ZYDIS_REGISTER_RAX: x = r->rax; break;
	case ZYDIS_REGISTER_RBX: x = r->rbx; break;
	case ZYDIS_REGISTER_RCX: x = r->rcx; break;
	case ZYDIS_REGISTER_RDX: x = r->rdx; break;
	case ZYDIS_REGISTER_RSI: x = r->rsi; break;
	case ZYDIS_REGISTER_RDI: x = r->rdi; break;
	case ZYDIS_REGISTER_RBP: x = r->rbp; break;
	case ZYDIS_REGISTER_RSP: x = r->rsp; break;
	case ZYDIS_REGISTER_R8: x = r->r8; break;
	case ZYDIS_REGISTER_R9: x = r->r9; break;
	case ZYDIS_REGISTER_R10: x = r->r10; break;
	case ZYDIS_REGISTER_R11: x = r->r11; break;
	case ZYDIS_REGISTER_R12: x = r->r12; break;
	case ZYDIS_REGISTER_R13: x = r->r13; break;
	case ZYDIS_REGISTER_R14: x = r->r14; break;
	case ZYDIS_REGISTER_R15: x = r->r15; break;
	case ZYDIS_REGISTER_RIP: x = r->rip; break;
	default:
		return LP_EINVAL;
	}
	if (reg == ZYDIS_REGISTER_AH || reg == ZYDIS_REGISTER_BH || reg == ZYDIS_REGISTER_CH ||
	    reg == ZYDIS_REGISTER_DH)
		x >>= 8;
	if (width < 64)
		x &= (1ULL << width) - 1;
	*v = x;
	return 0;
}

static int64_t vec_index(const struct lp_pmu_vregs *v, int reg, unsigned i, unsigned bytes)
{
	int n = vec_num(reg);
	int32_t d;
	int64_t q;

	if (n < 0 || (i + 1) * bytes > 64)
		return 0;
	if (bytes == 4) {
		memcpy(&d, &v->zmm[n][4 * i], 4);
		return d;
	}
	memcpy(&q, &v->zmm[n][8 * i], 8);
	return q;
}

static int elem_enabled(const struct lp_pmu_memop *m, const struct lp_pmu_vregs *v, unsigned i)
{
	int n;

	if (!m->mask)
		return 1;
	if (!m->mask_vec)
		return m->mask >= ZYDIS_REGISTER_K0 && m->mask <= ZYDIS_REGISTER_K7 &&
		       ((v->k[m->mask - ZYDIS_REGISTER_K0] >> i) & 1);
	/* AVX2: the sign bit of element i (elements of the data size). */
	n = vec_num(m->mask);
	return n >= 0 && (i + 1) * m->size <= 64 && (v->zmm[n][(i + 1) * m->size - 1] & 0x80);
}

int lp_pmu_insn_accesses(const struct lp_pmu_insn *insn, const struct user_regs_struct *regs,
			 const struct lp_pmu_vregs *vr, struct lp_pmu_access *out)
{
	int n = 0;

	if ((insn->flags & LP_PMU_INSN_REP) && regs->rcx == 0)
		return 0;
	for (int i = 0; i < insn->n_mem; i++) {
		const struct lp_pmu_memop *m = &insn->mem[i];
		uint64_t a = 0, v, seg = 0;

		if (m->rip_rel)
			a = insn->pc + insn->len;
		else if (m->base && lp_pmu_reg_value(m->base, regs, &v) == 0)
			a = v;
		if (m->seg && lp_pmu_reg_value(m->seg, regs, &v) == 0)
			seg = v;
		if (m->vsib && vr) {
			for (unsigned e = 0; e < m->n_elem && n < LP_PMU_MAX_ACC; e++) {
				uint64_t x;

				if (!elem_enabled(m, vr, e))
					continue;
				x = a + (uint64_t)vec_index(vr, m->index, e, m->idx_bytes) * (uint64_t)m->scale +
				    (uint64_t)m->disp;
				if (m->addr32)
					x = (uint32_t)x;
				out[n++] = (struct lp_pmu_access){ x + seg, m->size, m->kind };
			}
			continue;
		}
		if (m->index && !m->vsib && lp_pmu_reg_value(m->index, regs, &v) == 0)
			a += v * (uint64_t)m->scale;
		a += (uint64_t)m->disp;
		if (m->below)
			a -= m->size;
		if (m->addr32)
			a = (uint32_t)a;
		if (n < LP_PMU_MAX_ACC)
			out[n++] = (struct lp_pmu_access){ a + seg, m->size, m->kind };
	}
	return n;
}

void lp_pmu_xsave_layout_host(struct lp_pmu_xsave_layout *l)
{
	unsigned a, b, c, d;

	memset(l, 0, sizeof(*l));
	for (unsigned i = 2; i < 8; i++)
		if (__get_cpuid_count(0xd, i, &a, &b, &c, &d) && a)
			l->off[i] = b;
}

int lp_pmu_vregs_parse(const uint8_t *x, size_t len, const struct lp_pmu_xsave_layout *l, struct lp_pmu_vregs *v)
{
	static const unsigned sz[8] = { 0, 0, 16 * 16, 0, 0, 8 * 8, 16 * 32, 16 * 64 };
	uint64_t bv;

	memset(v, 0, sizeof(*v));
	if (len < 576)
		return LP_EINVAL;
	memcpy(&bv, x + 512, 8); /* XSTATE_BV: components not in their initial state */
	for (int i = 0; i < 16 && (bv & 2); i++)
		memcpy(v->zmm[i], x + 160 + 16 * i, 16); /* legacy area: xmm0..15 */
	for (unsigned c = 2; c < 8; c++) {
		if (!sz[c] || !l->off[c] || !(bv & (1ULL << c)))
			continue;
		if (l->off[c] + sz[c] > len)
			return LP_EINVAL;
		for (int i = 0; i < 16; i++) {
			const uint8_t *p = x + l->off[c];

			switch (c) {
			case 2: memcpy(&v->zmm[i][16], p + 16 * i, 16); break;
			case 5: if (i < 8) memcpy(&v->k[i], p + 8 * i, 8); break;
			case 6: memcpy(&v->zmm[i][32], p + 32 * i, 32); break;
			case 7: memcpy(v->zmm[16 + i], p + 64 * i, 64); break;
			}
		}
	}
	return 0;
}
