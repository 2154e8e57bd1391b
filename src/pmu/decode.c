/* Instruction decoding for the pmu backend with Capstone: which memory
 * references an instruction makes (decode.h says what counts) and their
 * addresses from a thread's registers. */
#include "decode.h"

#include <capstone/capstone.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <locprof/common.h>
#include "common/error.h"

struct lp_pmu_decoder {
	csh cs;
	cs_insn *scratch; /* one instruction buffer reused: decoding allocates nothing */
};

int lp_pmu_decoder_new(struct lp_pmu_decoder **out)
{
	struct lp_pmu_decoder *d = calloc(1, sizeof(*d));

	*out = NULL;
	if (!d)
		return lp_seterr(LP_ENOMEM, "out of memory");
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &d->cs) != CS_ERR_OK) {
		free(d);
		return lp_seterr(LP_EIO, "capstone: cannot open an x86-64 decoder");
	}
	cs_option(d->cs, CS_OPT_DETAIL, CS_OPT_ON);
	d->scratch = cs_malloc(d->cs);
	if (!d->scratch) {
		cs_close(&d->cs);
		free(d);
		return lp_seterr(LP_ENOMEM, "out of memory");
	}
	*out = d;
	return 0;
}

void lp_pmu_decoder_free(struct lp_pmu_decoder *d)
{
	if (!d)
		return;
	cs_free(d->scratch, 1);
	cs_close(&d->cs);
	free(d);
}

static int is_string_id(unsigned id)
{
	switch (id) {
	case X86_INS_MOVSB: case X86_INS_MOVSW: case X86_INS_MOVSD: case X86_INS_MOVSQ:
	case X86_INS_STOSB: case X86_INS_STOSW: case X86_INS_STOSD: case X86_INS_STOSQ:
	case X86_INS_LODSB: case X86_INS_LODSW: case X86_INS_LODSD: case X86_INS_LODSQ:
	case X86_INS_CMPSB: case X86_INS_CMPSW: case X86_INS_CMPSD: case X86_INS_CMPSQ:
	case X86_INS_SCASB: case X86_INS_SCASW: case X86_INS_SCASD: case X86_INS_SCASQ:
	case X86_INS_INSB: case X86_INS_INSW: case X86_INS_INSD:
	case X86_INS_OUTSB: case X86_INS_OUTSW: case X86_INS_OUTSD:
		return 1;
	}
	return 0;
}

/* Instructions whose memory operand is not a data access. */
static int no_access_id(unsigned id)
{
	switch (id) {
	case X86_INS_LEA: case X86_INS_NOP:
	case X86_INS_PREFETCH: case X86_INS_PREFETCHNTA: case X86_INS_PREFETCHT0:
	case X86_INS_PREFETCHT1: case X86_INS_PREFETCHT2: case X86_INS_PREFETCHW:
	case X86_INS_CLFLUSH: case X86_INS_CLFLUSHOPT: case X86_INS_CLWB:
		return 1;
	}
	return 0;
}

static void add_stack(struct lp_pmu_insn *insn, int base, int64_t disp, uint32_t size, uint8_t kind)
{
	struct lp_pmu_memop *m;

	if (insn->n_mem >= LP_PMU_MAX_MEM)
		return;
	m = &insn->mem[insn->n_mem++];
	memset(m, 0, sizeof(*m));
	m->base = base;
	m->disp = disp;
	m->scale = 1;
	m->size = size;
	m->kind = kind;
}

int lp_pmu_decode(struct lp_pmu_decoder *d, const uint8_t *code, size_t len, uint64_t pc,
		  struct lp_pmu_insn *insn)
{
	const uint8_t *p = code;
	uint64_t addr = pc;
	size_t left = len;
	cs_insn *ci = d->scratch;
	const cs_x86 *x;
	int string, stack_read = 0, stack_write = 0;
	uint32_t stack_size = 8;
	int pass;

	memset(insn, 0, sizeof(*insn));
	if (!cs_disasm_iter(d->cs, &p, &left, &addr, ci))
		return lp_seterr(LP_EPARSE, "cannot decode the instruction at 0x%llx",
				 (unsigned long long)pc);
	x = &ci->detail->x86;
	insn->pc = pc;
	insn->len = ci->size;
	insn->id = ci->id;
	snprintf(insn->text, sizeof(insn->text), "%.15s %.46s", ci->mnemonic, ci->op_str);

	switch (ci->id) {
	case X86_INS_SYSCALL: case X86_INS_SYSENTER:
		insn->flags |= LP_PMU_INSN_SYSCALL;
		break;
	case X86_INS_INT:
		if (x->op_count == 1 && x->operands[0].type == X86_OP_IMM && x->operands[0].imm == 0x80)
			insn->flags |= LP_PMU_INSN_SYSCALL;
		break;
	case X86_INS_INT3:
		insn->flags |= LP_PMU_INSN_INT3;
		break;
	case X86_INS_PUSH: case X86_INS_PUSHFQ: case X86_INS_CALL:
		stack_write = 1;
		break;
	case X86_INS_PUSHF: /* 66-prefixed pushf writes 2 bytes */
		stack_write = 1;
		stack_size = 2;
		break;
	case X86_INS_POP: case X86_INS_POPFQ: case X86_INS_RET:
		stack_read = 1;
		break;
	case X86_INS_POPF:
		stack_read = 1;
		stack_size = 2;
		break;
	}
	if ((ci->id == X86_INS_PUSH || ci->id == X86_INS_POP) && x->op_count == 1 &&
	    x->operands[0].size == 2)
		stack_size = 2;

	/* SSE movsd/cmpsd share ids with the string forms; the string forms are
	 * the ones whose operands are all memory. */
	string = is_string_id(ci->id);
	if (string && (ci->id == X86_INS_MOVSD || ci->id == X86_INS_CMPSD)) {
		for (int i = 0; i < x->op_count; i++)
			if (x->operands[i].type != X86_OP_MEM)
				string = 0;
	}
	if (string) {
		insn->flags |= LP_PMU_INSN_STRING;
		if (x->prefix[0] == X86_PREFIX_REP || x->prefix[0] == X86_PREFIX_REPNE)
			insn->flags |= LP_PMU_INSN_REP;
	}
	if (no_access_id(ci->id))
		return 0;

	/* Reads first, then writes: the order the hardware performs them and
	 * the order a trace lists them. */
	for (pass = 0; pass < 2; pass++) {
		uint8_t want = pass == 0 ? CS_AC_READ : CS_AC_WRITE;

		for (int i = 0; i < x->op_count; i++) {
			const cs_x86_op *op = &x->operands[i];
			uint8_t access = op->access;
			struct lp_pmu_memop *m;

			if (op->type != X86_OP_MEM)
				continue;
			/* Capstone leaves access unset for a few forms; a memory
			 * operand that is neither is taken as a read. */
			if (!(access & (CS_AC_READ | CS_AC_WRITE)))
				access = CS_AC_READ;
			if (!(access & want) || insn->n_mem >= LP_PMU_MAX_MEM)
				continue;
			m = &insn->mem[insn->n_mem++];
			m->seg = op->mem.segment == X86_REG_INVALID ? 0 : op->mem.segment;
			m->base = op->mem.base == X86_REG_INVALID ? 0 : op->mem.base;
			m->index = op->mem.index == X86_REG_INVALID ? 0 : op->mem.index;
			m->scale = op->mem.scale ? op->mem.scale : 1;
			m->disp = op->mem.disp;
			m->size = op->size ? op->size : 1;
			m->kind = pass == 0 ? LP_REF_READ : LP_REF_WRITE;
			m->rip_rel = op->mem.base == X86_REG_RIP;
			m->addr32 = x->addr_size == 4;
		}
		if (pass == 0 && stack_read)
			add_stack(insn, X86_REG_RSP, 0, stack_size, LP_REF_READ);
		if (pass == 0 && ci->id == X86_INS_LEAVE)
			add_stack(insn, X86_REG_RBP, 0, 8, LP_REF_READ);
		if (pass == 1 && stack_write)
			add_stack(insn, X86_REG_RSP, -(int64_t)stack_size, stack_size, LP_REF_WRITE);
	}
	return 0;
}

int lp_pmu_reg_value(int reg, const struct user_regs_struct *r, uint64_t *v)
{
	switch (reg) {
	case X86_REG_RAX: *v = r->rax; return 0;
	case X86_REG_RBX: *v = r->rbx; return 0;
	case X86_REG_RCX: *v = r->rcx; return 0;
	case X86_REG_RDX: *v = r->rdx; return 0;
	case X86_REG_RSI: *v = r->rsi; return 0;
	case X86_REG_RDI: *v = r->rdi; return 0;
	case X86_REG_RBP: *v = r->rbp; return 0;
	case X86_REG_RSP: *v = r->rsp; return 0;
	case X86_REG_R8: *v = r->r8; return 0;
	case X86_REG_R9: *v = r->r9; return 0;
	case X86_REG_R10: *v = r->r10; return 0;
	case X86_REG_R11: *v = r->r11; return 0;
	case X86_REG_R12: *v = r->r12; return 0;
	case X86_REG_R13: *v = r->r13; return 0;
	case X86_REG_R14: *v = r->r14; return 0;
	case X86_REG_R15: *v = r->r15; return 0;
	case X86_REG_RIP: *v = r->rip; return 0;
	case X86_REG_EAX: *v = (uint32_t)r->rax; return 0;
	case X86_REG_EBX: *v = (uint32_t)r->rbx; return 0;
	case X86_REG_ECX: *v = (uint32_t)r->rcx; return 0;
	case X86_REG_EDX: *v = (uint32_t)r->rdx; return 0;
	case X86_REG_ESI: *v = (uint32_t)r->rsi; return 0;
	case X86_REG_EDI: *v = (uint32_t)r->rdi; return 0;
	case X86_REG_EBP: *v = (uint32_t)r->rbp; return 0;
	case X86_REG_ESP: *v = (uint32_t)r->rsp; return 0;
	case X86_REG_R8D: *v = (uint32_t)r->r8; return 0;
	case X86_REG_R9D: *v = (uint32_t)r->r9; return 0;
	case X86_REG_R10D: *v = (uint32_t)r->r10; return 0;
	case X86_REG_R11D: *v = (uint32_t)r->r11; return 0;
	case X86_REG_R12D: *v = (uint32_t)r->r12; return 0;
	case X86_REG_R13D: *v = (uint32_t)r->r13; return 0;
	case X86_REG_R14D: *v = (uint32_t)r->r14; return 0;
	case X86_REG_R15D: *v = (uint32_t)r->r15; return 0;
	case X86_REG_EIP: *v = (uint32_t)r->rip; return 0;
	case X86_REG_AL: *v = (uint8_t)r->rax; return 0; /* xlat */
	case X86_REG_FS: *v = r->fs_base; return 0;
	case X86_REG_GS: *v = r->gs_base; return 0;
	case X86_REG_DS: case X86_REG_ES: case X86_REG_SS: case X86_REG_CS:
		*v = 0; /* flat in 64-bit mode */
		return 0;
	}
	return LP_EINVAL;
}

int lp_pmu_insn_accesses(const struct lp_pmu_insn *insn, const struct user_regs_struct *regs,
			 struct lp_pmu_access *out)
{
	int n = 0;

	if ((insn->flags & LP_PMU_INSN_REP) && regs->rcx == 0)
		return 0;
	for (int i = 0; i < insn->n_mem; i++) {
		const struct lp_pmu_memop *m = &insn->mem[i];
		uint64_t a = 0, v;

		if (m->rip_rel)
			a = insn->pc + insn->len;
		else if (m->base && lp_pmu_reg_value(m->base, regs, &v) == 0)
			a = v;
		if (m->index && lp_pmu_reg_value(m->index, regs, &v) == 0)
			a += v * (uint64_t)m->scale;
		a += (uint64_t)m->disp;
		if (m->addr32)
			a = (uint32_t)a;
		if (m->seg && lp_pmu_reg_value(m->seg, regs, &v) == 0)
			a += v;
		out[n].addr = a;
		out[n].size = m->size;
		out[n].kind = m->kind;
		n++;
	}
	return n;
}
