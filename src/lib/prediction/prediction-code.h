/* Internal to the loop finder: the binaries (prediction-binary.c), their
 * decoding and control-flow graphs (prediction-cfg.c), natural loops
 * (prediction-loops.c) and the lookups of pcs (prediction-code.c). */
#ifndef LP_PREDICTION_CODE_H
#define LP_PREDICTION_CODE_H

#include "prediction/prediction-internal.h"

#include <Zydis/Zydis.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <libelf.h>

/* What an instruction does to control flow. */
enum { K_NORMAL, K_CALL, K_JMP, K_JMPI, K_JCC, K_END };

struct xsec {
	uint64_t addr, size;
	const uint8_t *data;
};

struct xsym {
	uint64_t start, size;
	const char *name;
	int func; /* global function id, -1 until first used */
};

struct xmod {
	char *path;
	int fd;
	Elf *elf;
	int is_dyn;
	struct xsec *secs;
	size_t nsecs, secs_cap;
	struct xsym *syms;
	size_t nsyms, syms_cap;
	Dwfl *dwfl;
	Dwfl_Module *dmod;
	int lines_failed;
};

struct xrange {
	uint64_t start, end; /* runtime [start, end) */
	int module;
	uint64_t bias;
};

struct xfunc {
	int module;
	uint64_t start, size;
	const char *name;
	int state; /* 0 not analysed, 1 done, -1 failed */
	int nb;
	uint64_t *bstart, *bend;
	int (*succ)[2];
	unsigned char *nsucc;
	int *inner; /* innermost global loop of each block, -1 */
	size_t nins;
	uint64_t *ins_addr;
	unsigned char *ins_len, *ins_kind;
};

struct lp_pred_code {
	ZydisDecoder dec;
	struct xmod *mods;
	size_t nmods, capmods;
	struct xrange *ranges;
	size_t nranges, capranges;
	int placed, inferred;
	uint64_t bias;
	struct xfunc *funcs;
	size_t nfuncs, capfuncs;
	struct lp_pred_loop *loops;
	size_t nloops, caploops;
};

/* ---- binaries (prediction-binary.c) ---------------------------------------- */
/* Open an x86-64 ELF file: its executable sections and function symbols. */
int lp_pred_mod_open(struct xmod *m, const char *path);
/* Sort the symbols by address, dropping aliases. */
void lp_pred_mod_sort(struct xmod *m);
void lp_pred_mod_close(struct xmod *m);
const struct xsec *lp_pred_mod_sec(const struct xmod *m, uint64_t vaddr);
struct xsym *lp_pred_mod_sym(struct xmod *m, uint64_t vaddr);
/* Load bias of module m from a mapping of file offset `off` at `start`. */
int lp_pred_mod_bias(const struct xmod *m, uint64_t start, uint64_t off, uint64_t *bias);
/* Source line of a link-time address (DWARF); 0 if unknown. */
int lp_pred_mod_line(struct xmod *md, uint64_t addr, const char **file, int *line);

/* ---- decoding and the graph (prediction-cfg.c) ------------------------------ */
int lp_pred_func_decode(struct lp_pred_code *c, struct xfunc *f);
int lp_pred_func_cfg(struct lp_pred_code *c, struct xfunc *f);
/* Index of the instruction starting at a, or -1. */
long lp_pred_ins_at(const struct xfunc *f, uint64_t a);
/* The jump target of instruction i (direct jumps only). */
uint64_t lp_pred_ins_target(struct lp_pred_code *c, const struct xfunc *f, size_t i);
int lp_pred_block_of(const struct xfunc *f, uint64_t a);

/* ---- loops (prediction-loops.c) --------------------------------------------- */
/* Find the loops of function fid and register them in c->loops. */
int lp_pred_func_loops(struct lp_pred_code *c, struct xfunc *f, int fid);

#endif
