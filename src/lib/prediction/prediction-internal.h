/* Internal: shared declarations of the prediction module (src/lib/prediction). */
#ifndef LP_PREDICTION_INTERNAL_H
#define LP_PREDICTION_INTERNAL_H

#include <locprof/prediction.h>

#include "common/io.h"

#include <stdio.h>

#define XMAX_DEPTH 16 /* loops kept per pc, innermost first */

/* ---- static analysis of binaries (prediction-code.c) --------------------------- */
struct lp_pred_code;

struct lp_pred_loop {
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
struct lp_pred_pc {
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

int lp_pred_code_new(struct lp_pred_code **out, const struct lp_mappings *maps, const char *binary);
void lp_pred_code_free(struct lp_pred_code *c);
/* Nonzero when pcs can be looked up (mappings given, or the binary placed). */
int lp_pred_code_placed(const struct lp_pred_code *c);
/* Place the binary (no mappings): find the load bias under which the
 * distinct runtime pcs land on instruction boundaries of its code, with at
 * least min_pcs of them there. LP_EINVAL when no bias does. */
int lp_pred_code_place(struct lp_pred_code *c, const uint64_t *pcs, size_t n, size_t min_pcs);
uint64_t lp_pred_code_bias(const struct lp_pred_code *c, int *inferred);
int lp_pred_code_lookup(struct lp_pred_code *c, uint64_t pc, struct lp_pred_pc *out);
int lp_pred_code_reach(const struct lp_pred_code *c, int loop, int a, int b);
size_t lp_pred_code_nloops(const struct lp_pred_code *c);
const struct lp_pred_loop *lp_pred_code_loop(const struct lp_pred_code *c, int id);
size_t lp_pred_code_nmodules(const struct lp_pred_code *c);
const char *lp_pred_code_module_path(const struct lp_pred_code *c, int m);
const char *lp_pred_code_func_name(const struct lp_pred_code *c, int f);
/* Source line of the access a pc stands for (outside the instrumentation
 * runtime); 0 if unknown. */
int lp_pred_code_srcline(struct lp_pred_code *c, const struct lp_pred_pc *p, const char **file, int *line);

/* ---- union-find over indices (groups of pcs, source loops) ------------------ */
/* p[x] is x's parent; a root is its own. Path halving on find; union keeps
 * the smaller index as the root, so roots are the first of their set. */
static inline size_t lp_pred_uf_find(size_t *p, size_t x)
{
	while (p[x] != x)
		x = p[x] = p[p[x]];
	return x;
}

static inline void lp_pred_uf_union(size_t *p, size_t a, size_t b)
{
	a = lp_pred_uf_find(p, a);
	b = lp_pred_uf_find(p, b);
	if (a != b)
		p[a > b ? a : b] = a < b ? a : b;
}

/* ---- text files ------------------------------------------------------------- */
/* Words in run and model files are separated by spaces; a word escapes
 * space, '%', tab and newline as %XX, and the empty string is "%-". */
void lp_pred_word_put(struct lp_out *f, const char *s);
/* The next line of a run or model file after its first, which it checks:
 * that must be "# locprof xpred KIND v1" (KIND: run, model); else an
 * LP_EVERSION (another version) or LP_EFORMAT error naming path as "a
 * locprof WHAT (v1)". Returns 1 with *line (and *lineno counting every
 * line), 0 at the end or a negative LP_E*. */
int lp_pred_getline(struct lp_in *in, size_t *lineno, char **line, const char *kind, const char *what,
		    const char *path);
/* Split a line into at most max words in place (decoded); returns count. */
int lp_pred_word_split(char *line, char **w, int max);

/* ---- runs (prediction-run.c) --------------------------------------------------- */
struct lp_pred_hent {
	double lo, hi; /* distance range, inclusive */
	double count;
};

struct lp_pred_hist {
	double cold;
	size_t n;
	struct lp_pred_hent *e; /* sorted by lo */
};

struct lp_pred_run_loop {
	int module;
	uint64_t header;
	int parent, depth, src;
	char *function, *where;
};

struct lp_pred_run_pc {
	int module;
	uint64_t vaddr;
	uint64_t refs;
	int group, loop;
	char *strides, *where, *function;
	struct lp_pred_hist *h; /* per block */
	/* walk (runs written by this version): the pc's first address, and the
	 * runs of its innermost stride: how many, and their steps in all */
	int has_walk;
	uint64_t first, wruns, wsteps;
};

struct lp_pred_run {
	double size;
	char *command;
	uint64_t references;
	size_t nblocks;
	uint64_t *blocks;
	size_t nmodules, capmodules;
	char **modules;
	size_t nloops, caploops;
	struct lp_pred_run_loop *loops;
	size_t npcs;
	struct lp_pred_run_pc *pcs;
};

void lp_pred_hist_release(struct lp_pred_hist *h);
/* dst += src */
int lp_pred_hist_merge(struct lp_pred_hist *dst, const struct lp_pred_hist *src);
double lp_pred_hist_finite(const struct lp_pred_hist *h);

/* ---- fit helpers ------------------------------------------------------------- */
struct lp_pred_quant {            /* one run's distribution, for quantile arithmetic */
	size_t n;
	const struct lp_pred_hent *e;
	double *cum;       /* cum[i] = fraction of mass before entry i; cum[n] = 1 */
	double total;
};

int lp_pred_quant_init(struct lp_pred_quant *q, const struct lp_pred_hent *e, size_t n);
void lp_pred_quant_release(struct lp_pred_quant *q);
double lp_pred_quant_quantile(const struct lp_pred_quant *q, double u);
double lp_pred_quant_mean(const struct lp_pred_quant *q, double u0, double u1);
double lp_pred_quant_cdf(const struct lp_pred_quant *q, double d); /* fraction of mass below d */

/* ---- set distances (prediction-sets.c) ------------------------------------------- */
struct lp_pred_sets;

int lp_pred_sets_new(struct lp_pred_sets **out, uint64_t sets, uint64_t line);
void lp_pred_sets_free(struct lp_pred_sets *e);
uint64_t lp_pred_sets_sets(const struct lp_pred_sets *e);
uint64_t lp_pred_sets_line(const struct lp_pred_sets *e);
/* One reference (every line it touches) by the pc of index pcidx. */
int lp_pred_sets_access(struct lp_pred_sets *e, const struct lp_ref *r, size_t pcidx);
/* The set-distance histogram of a pc index (NULL if it made no access). */
const struct lp_hist *lp_pred_sets_hist(const struct lp_pred_sets *e, size_t pcidx);

/* ---- strided placement (prediction-place.c) ---------------------------------------- */
/* Greatest common divisor (gcd(a, 0) = a). */
uint64_t lp_pred_place_gcd(uint64_t a, uint64_t b);
struct lp_pred_place_walk {
	double stride; /* bytes between consecutive accesses of the walk (> 0) */
	double lines;  /* distinct lines of one walk; < 2: no walk (random placement) */
	double stride1; /* bytes by which the next outer iteration moves the
			 * walk (0: unknown, or it does not move) */
};

/* Miss chances, in an LRU cache of `sets` sets of `ways` ways and `line`-byte
 * lines, of reuses at stack distances D[0..nd-1] by a group that walks as w
 * (NULL: random placement, the binomial model), into miss[]. */
/* The walk of group g at size P for level l's line size (0 if none). */
int lp_pred_model_walk(const struct lp_pred_model *m, size_t g, const struct lp_pred_level *l, double P,
		   struct lp_pred_place_walk *w);
int lp_pred_place_miss(const struct lp_pred_place_walk *w, uint64_t sets, uint64_t ways, uint64_t line, const double *D,
		size_t nd, double *miss);

#endif
