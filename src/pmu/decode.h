/* The pmu backend's view of one x86-64 instruction: which memory references
 * it makes and how to compute their addresses from the registers.
 *
 * What counts as one "memory reference" follows what the PMU events
 * MEM_INST_RETIRED.ALL_LOADS / ALL_STORES see, made exact per access so that
 * the step counter and a full trace agree (docs/pmu.md, "What is counted"):
 *  - every explicit memory operand that is read is one read, every one that
 *    is written is one write; a read-modify-write operand (add [m], 1) is one
 *    read followed by one write of the same address;
 *  - implicit stack accesses count: push/call write 8 bytes below rsp,
 *    pop/ret read 8 bytes at rsp, leave reads [rbp];
 *  - string instructions (movs, stos, lods, cmps, scas, ins, outs) access
 *    [rsi] and/or [rdi]; with a rep prefix each iteration is one instance
 *    (reads before writes), and an iteration with rcx == 0 accesses nothing;
 *  - lea, nop with a memory operand, prefetch* and clflush access no data
 *    (lea computes an address; the others are hints the PMU does not retire
 *    as loads we could watch) and count nothing.
 * Gather/scatter with a vector index are counted as one access at base+disp.
 */
#ifndef LP_PMU_DECODE_H
#define LP_PMU_DECODE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/user.h>

#define LP_PMU_MAX_INSN 15
#define LP_PMU_MAX_MEM 6

/* Register numbers are Capstone's x86_reg values, kept opaque here. */
struct lp_pmu_memop {
	int seg, base, index; /* 0 when absent */
	int scale;
	int64_t disp;
	uint32_t size;
	uint8_t kind;    /* LP_REF_READ or LP_REF_WRITE */
	uint8_t rip_rel; /* disp is relative to the next instruction */
	uint8_t addr32;  /* 0x67 prefix: the address wraps at 32 bits */
};

enum lp_pmu_insn_flag {
	LP_PMU_INSN_SYSCALL = 1 << 0, /* syscall / sysenter / int 0x80 */
	LP_PMU_INSN_REP = 1 << 1,     /* string op with a rep/repe/repne prefix */
	LP_PMU_INSN_STRING = 1 << 2,  /* movs/stos/lods/cmps/scas/ins/outs */
	LP_PMU_INSN_INT3 = 1 << 3,
};

struct lp_pmu_insn {
	uint64_t pc;
	uint32_t len;
	uint32_t flags;
	uint32_t id;    /* Capstone instruction id, for diagnostics */
	int n_mem;
	struct lp_pmu_memop mem[LP_PMU_MAX_MEM]; /* in execution order */
	char text[64];  /* "mov qword ptr [rax], rbx", for messages */
};

/* One reference made by an instruction, addresses resolved. */
struct lp_pmu_access {
	uint64_t addr;
	uint32_t size;
	uint8_t kind;
};

struct lp_pmu_decoder;

int lp_pmu_decoder_new(struct lp_pmu_decoder **out);
void lp_pmu_decoder_free(struct lp_pmu_decoder *d);

/* Decode the instruction at code[0..len) located at pc. Returns 0 or
 * LP_EPARSE when the bytes are not a valid instruction. */
int lp_pmu_decode(struct lp_pmu_decoder *d, const uint8_t *code, size_t len, uint64_t pc,
		  struct lp_pmu_insn *insn);

/* Value of a Capstone register in regs, sub-registers included; returns
 * LP_EINVAL for a register we cannot read from user_regs_struct (vector
 * registers, for gather index). */
int lp_pmu_reg_value(int reg, const struct user_regs_struct *regs, uint64_t *value);

/* The references one execution of insn makes with these registers: for a
 * rep string instruction, one iteration (none when rcx == 0). Returns the
 * number written to out (at most LP_PMU_MAX_MEM). */
int lp_pmu_insn_accesses(const struct lp_pmu_insn *insn, const struct user_regs_struct *regs,
			 struct lp_pmu_access *out);

#endif
