/* The pmu backend's view of one x86-64 instruction: which memory references
 * it makes and how to compute their addresses from the registers.
 * Decoded with Zydis 4 (docs/dependencies.md says why not Capstone 4).
 *
 * What counts as one "memory reference" follows what the PMU events
 * MEM_INST_RETIRED.ALL_LOADS / ALL_STORES see, made exact per access so that
 * the step counter and a full trace agree (docs/pmu.md, "What is counted"):
 *  - every explicit memory operand that is read is one read, every one that
 *    is written is one write; a read-modify-write operand (add [m], 1) is one
 *    read followed by one write of the same address; conditional accesses
 *    (cmpxchg's write, masked AVX-512 loads and stores) count as made;
 *  - implicit stack accesses count: push/call write 8 bytes below rsp,
 *    pop/ret read 8 bytes at rsp, leave reads [rbp];
 *  - string instructions (movs, stos, lods, cmps, scas, ins, outs) access
 *    [rsi] and/or [rdi]; with a rep prefix each iteration is one instance
 *    (reads before writes), and an iteration with rcx == 0 accesses nothing;
 *  - a gather or scatter makes one access per element its mask enables, at
 *    base + index[i]*scale + disp (the index and mask are vector/opmask
 *    registers: the caller passes them);
 *  - lea, nop with a memory operand, prefetch*, clflush*, clwb, cldemote
 *    and the bound-table forms access no data we could watch.
 */
#ifndef LP_PMU_DECODE_H
#define LP_PMU_DECODE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/user.h>

#define LP_PMU_MAX_INSN 15
#define LP_PMU_MAX_MEM 6   /* memory operands of one instruction */
#define LP_PMU_MAX_ACC 24  /* references of one execution: a 16-element gather and more */

/* Register numbers are Zydis's ZydisRegister values, kept opaque here. */
struct lp_pmu_memop {
	int seg, base, index; /* 0 when absent */
	int scale;
	int64_t disp;
	uint32_t size;   /* bytes (of one element for a gather/scatter) */
	uint8_t kind;    /* LP_REF_READ or LP_REF_WRITE */
	uint8_t rip_rel; /* disp is relative to the next instruction */
	uint8_t addr32;  /* 0x67 prefix: the address wraps at 32 bits */
	uint8_t below;   /* push, call: the access is at rsp - size */
	/* Gather/scatter (VSIB): index is a vector register of n_elem
	 * indices of idx_bytes each; mask is k1..k7 or, for the AVX2 forms,
	 * a vector register whose element sign bits enable (0: all). */
	uint8_t vsib, idx_bytes, n_elem, mask_vec;
	int mask;
};

enum lp_pmu_insn_flag {
	LP_PMU_INSN_SYSCALL = 1 << 0, /* syscall / sysenter / int 0x80 */
	LP_PMU_INSN_REP = 1 << 1,     /* string op with a rep/repe/repne prefix */
	LP_PMU_INSN_STRING = 1 << 2,  /* movs/stos/lods/cmps/scas/ins/outs */
	LP_PMU_INSN_INT3 = 1 << 3,
	LP_PMU_INSN_VSIB = 1 << 4,    /* gather/scatter: needs the vector registers */
	LP_PMU_INSN_WIDE = 1 << 5,    /* xsave/xrstor family: the decoded access is the
	                                 largest area; the CPU may touch less of it */
	LP_PMU_INSN_CPUID = 1 << 6,   /* run by the tracer, not stepped (run-insn.c) */
};

struct lp_pmu_insn {
	uint64_t pc;
	uint32_t len;
	uint32_t flags;
	uint32_t id;    /* Zydis mnemonic, for diagnostics */
	int n_mem;
	struct lp_pmu_memop mem[LP_PMU_MAX_MEM]; /* in execution order */
	char text[32];  /* the mnemonic, for messages */
};

/* One reference made by an instruction, addresses resolved. */
struct lp_pmu_access {
	uint64_t addr;
	uint32_t size;
	uint8_t kind;
};

/* The vector and opmask registers of a thread, for gathers and scatters. */
struct lp_pmu_vregs {
	uint8_t zmm[32][64]; /* zmm0..31; xmm/ymm are their low bytes */
	uint64_t k[8];
};

/* Where the XSAVE components live in the standard (non-compacted) format
 * that PTRACE_GETREGSET(NT_X86_XSTATE) returns: off[i] for component i
 * (2 YMM_Hi128, 5 opmask, 6 ZMM_Hi256, 7 Hi16_ZMM), 0 when absent. */
struct lp_pmu_xsave_layout {
	uint32_t off[8];
};

struct lp_pmu_decoder;

int lp_pmu_decoder_new(struct lp_pmu_decoder **out);
void lp_pmu_decoder_free(struct lp_pmu_decoder *d);

/* Decode the instruction at code[0..len) located at pc. Returns 0 or
 * LP_EPARSE when the bytes are not a valid instruction. */
int lp_pmu_decode(struct lp_pmu_decoder *d, const uint8_t *code, size_t len, uint64_t pc,
		  struct lp_pmu_insn *insn);

/* Value of a general-purpose, segment-base or rip register (Zydis number),
 * sub-registers included; LP_EINVAL for any other. */
int lp_pmu_reg_value(int reg, const struct user_regs_struct *regs, uint64_t *value);

/* The references one execution of insn makes with these registers: for a
 * rep string instruction, one iteration (none when rcx == 0). v gives the
 * vector registers for gathers and scatters; without it (NULL) a gather
 * counts as one access at base + disp. Returns the number written to out
 * (at most LP_PMU_MAX_ACC). */
int lp_pmu_insn_accesses(const struct lp_pmu_insn *insn, const struct user_regs_struct *regs,
			 const struct lp_pmu_vregs *v, struct lp_pmu_access *out);

/* The host's XSAVE layout (CPUID leaf 0xD). */
void lp_pmu_xsave_layout_host(struct lp_pmu_xsave_layout *l);

/* Fill v from an XSAVE image (standard format) of len bytes. Components
 * the header's XSTATE_BV marks as in their initial state are zero.
 * LP_EINVAL when the image is too short for the layout. */
int lp_pmu_vregs_parse(const uint8_t *xsave, size_t len, const struct lp_pmu_xsave_layout *l,
		       struct lp_pmu_vregs *v);

#endif
