/* Internal: shared declarations of the prediction module (src/lib/xpred). */
#ifndef LP_XPRED_INTERNAL_H
#define LP_XPRED_INTERNAL_H

#include <locprof/prediction.h>

#include <stdio.h>

#define XMAX_DEPTH 16 /* loops kept per pc, innermost first */

/* ---- static analysis of binaries (xpred-code.c) --------------------------- */
struct xcode;

struct xloop {
	int module, func;
	uint64_t header; /* link-time address of the header block */
	int parent;      /* global loop id, -1 for an outermost loop */
	int depth;       /* 1 = outermost */
	int nnodes;      /* nodes of the loop's acyclic body: blocks and child loops */
	int node_in_parent;
	int *block_node;  /* per block of the function: node index if the block is
			   * directly in this loop, else -1 */
	uint64_t *reach;  /* nnodes x words bitset: reach[a] has b if b follows a */
	size_t words;
};

/* Static facts about one pc. */
struct xpc {
	int module;      /* -1: in no known binary */
	uint64_t vaddr;  /* link-time address */
	int func;        /* -1: in no known function */
	int depth;       /* loops containing it (at most XMAX_DEPTH kept) */
	int loop[XMAX_DEPTH];            /* global loop ids, innermost first */
	int node[XMAX_DEPTH];            /* its node in each loop's body */
	unsigned char isblock[XMAX_DEPTH]; /* that node is a block, not an inner loop */
	uint64_t line_addr; /* address to take the source line from (the call
			     * before a return address) */
};

int xcode_new(struct xcode **out, const struct lp_mappings *maps, const char *binary);
void xcode_free(struct xcode *c);
/* Nonzero when pcs can be looked up (mappings given, or the binary placed). */
int xcode_placed(const struct xcode *c);
/* Place the binary (no mappings): find the load bias under which the
 * distinct runtime pcs land on instruction boundaries of its code, with at
 * least min_pcs of them there. LP_EINVAL when no bias does. */
int xcode_place(struct xcode *c, const uint64_t *pcs, size_t n, size_t min_pcs);
uint64_t xcode_bias(const struct xcode *c, int *inferred);
int xcode_lookup(struct xcode *c, uint64_t pc, struct xpc *out);
int xcode_reach(const struct xcode *c, int loop, int a, int b);
size_t xcode_nloops(const struct xcode *c);
const struct xloop *xcode_loop(const struct xcode *c, int id);
size_t xcode_nmodules(const struct xcode *c);
const char *xcode_module_path(const struct xcode *c, int m);
const char *xcode_func_name(const struct xcode *c, int f);
/* Source line of the access a pc stands for (outside the instrumentation
 * runtime); 0 if unknown. */
int xcode_srcline(struct xcode *c, const struct xpc *p, const char **file, int *line);

/* ---- text files ------------------------------------------------------------- */
/* Words in run and model files are separated by spaces; a word escapes
 * space, '%', tab and newline as %XX, and the empty string is "%-". */
void xw_put(FILE *f, const char *s);
/* Split a line into at most max words in place (decoded); returns count. */
int xw_split(char *line, char **w, int max);

/* ---- runs (xpred-run.c) --------------------------------------------------- */
struct xhent {
	double lo, hi; /* distance range, inclusive */
	double count;
};

struct xhist {
	double cold;
	size_t n;
	struct xhent *e; /* sorted by lo */
};

struct xrun_loop {
	int module;
	uint64_t header;
	int parent, depth, src;
	char *function, *where;
};

struct xrun_pc {
	int module;
	uint64_t vaddr;
	uint64_t refs;
	int group, loop;
	char *strides, *where, *function;
	struct xhist *h; /* per block */
	/* walk (runs written by this version): the pc's first address, and the
	 * runs of its innermost stride: how many, and their steps in all */
	int has_walk;
	uint64_t first, wruns, wsteps;
};

struct lp_xrun {
	double size;
	char *command;
	uint64_t references;
	size_t nblocks;
	uint64_t *blocks;
	size_t nmodules;
	char **modules;
	size_t nloops;
	struct xrun_loop *loops;
	size_t npcs;
	struct xrun_pc *pcs;
};

void xhist_release(struct xhist *h);
/* dst += src */
int xhist_merge(struct xhist *dst, const struct xhist *src);
double xhist_finite(const struct xhist *h);

/* ---- fit helpers ------------------------------------------------------------- */
struct xq {            /* one run's distribution, for quantile arithmetic */
	size_t n;
	const struct xhent *e;
	double *cum;       /* cum[i] = fraction of mass before entry i; cum[n] = 1 */
	double total;
};

int xq_init(struct xq *q, const struct xhent *e, size_t n);
void xq_release(struct xq *q);
double xq_quantile(const struct xq *q, double u);
double xq_mean(const struct xq *q, double u0, double u1);
double xq_cdf(const struct xq *q, double d); /* fraction of mass below d */

/* ---- set distances (xpred-sets.c) ------------------------------------------- */
struct xsets;

int xsets_new(struct xsets **out, uint64_t sets, uint64_t line);
void xsets_free(struct xsets *e);
uint64_t xsets_sets(const struct xsets *e);
uint64_t xsets_line(const struct xsets *e);
/* One reference (every line it touches) by the pc of index pcidx. */
int xsets_access(struct xsets *e, const struct lp_ref *r, size_t pcidx);
/* The set-distance histogram of a pc index (NULL if it made no access). */
const struct lp_hist *xsets_hist(const struct xsets *e, size_t pcidx);

/* ---- strided placement (xpred-place.c) ---------------------------------------- */
/* Greatest common divisor (gcd(a, 0) = a). */
uint64_t xplace_gcd(uint64_t a, uint64_t b);
struct xplace_walk {
	double stride; /* bytes between consecutive accesses of the walk (> 0) */
	double lines;  /* distinct lines of one walk; < 2: no walk (random placement) */
	double stride1; /* bytes by which the next outer iteration moves the
			 * walk (0: unknown, or it does not move) */
};

/* Miss chances, in an LRU cache of `sets` sets of `ways` ways and `line`-byte
 * lines, of reuses at stack distances D[0..nd-1] by a group that walks as w
 * (NULL: random placement, the binomial model), into miss[]. */
/* The walk of group g at size P for level l's line size (0 if none). */
int xmodel_walk(const struct lp_xmodel *m, size_t g, const struct lp_xlevel *l, double P,
		   struct xplace_walk *w);
int xplace_miss(const struct xplace_walk *w, uint64_t sets, uint64_t ways, uint64_t line, const double *D,
		size_t nd, double *miss);

#endif
