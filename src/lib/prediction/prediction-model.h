/* Internal to the scalable models: the model's representation, shared by
 * prediction-model.c (lifetime and accessors), prediction-bins.c (fitting one
 * group at one block size), prediction-model-fit.c (groups across runs),
 * prediction-predict.c (evaluation), prediction-calibrate.c (placement
 * calibration) and prediction-model-file.c (model files). */
#ifndef LP_PREDICTION_MODEL_H
#define LP_PREDICTION_MODEL_H

#include "prediction/prediction-internal.h"

struct xbm {
	int valid;
	struct lp_pred_fit acc, cold, rest;
	size_t nconst;
	double *cd;
	struct lp_pred_fit *ck;
	size_t nbins;
	struct lp_pred_fit *cnt; /* accesses of each bin of the rest */
	struct lp_pred_fit *dist;
	size_t cd_cap, ck_cap, cnt_cap, dist_cap; /* a model file read: LP_ARRAY_RESERVE */
};

struct xgroup {
	char *function, *where, *strides;
	int loop;
	size_t npcs;
	struct lp_pred_fit refs;
	struct xbm *bm;    /* per block */
	struct lp_pred_placement *cal; /* per block (set-distance keys only) */
	double *mrefs;     /* per run */
	struct lp_pred_hist *mh;  /* per run x block */
	/* strided walk (docs/prediction.md, "Strided placement"): measured in
	 * every run; its combined stride (bytes) and accesses per walk, as
	 * functions of P, and as measured */
	int walk, walk1;
	struct lp_pred_fit wstride, wlen, wstride1;
	double *mwstride, *mwlen, *mwstride1; /* per run (stride1 < 0: none) */
};

struct xmloop {
	char *function, *where;
	int parent, depth;
};

struct lp_pred_model {
	struct lp_pred_basis basis;
	char *command;
	size_t nsizes;
	double *sizes;
	size_t nblocks;
	uint64_t *blocks;
	double range, tolerance;
	unsigned max_depth;
	struct lp_pred_fit footprint;  /* distinct blocks of the program at the smallest block size */
	uint64_t fblock;           /* that block size; 0 if no footprint */
	double *total;     /* per run */
	struct lp_pred_fit refs;
	size_t ngroups, groups_cap;
	struct xgroup *g;
	size_t nloops, loops_cap;
	struct xmloop *loops;
	struct lp_pred_join_info join; /* how fit joined the runs (zero when read from a file) */
};

/* ---- runs joined into groups (prediction-join.c) ---------------------------- */
/* One key per pc (or loop) that is the same access (or loop) in every run:
 * the binary and link-time address when every run ran the same binary;
 * otherwise the source location, kind and stride shape. */
struct lp_pred_jkey {
	const char *module; /* binary's identity, or the source key */
	uint64_t addr;
};

struct lp_pred_join {
	struct lp_pred_run **runs;
	size_t n;
	int force_source;           /* join by source location even runs of one binary */
	int by_source;              /* keys are source locations */
	size_t nbinaries;           /* distinct main binaries of the runs */
	struct lp_pred_jkey *pk, *lk; /* pc keys, loop keys */
	size_t npk, cappk, nlk, caplk;
	char **owned;               /* key strings */
	size_t nowned, capowned;
	size_t **pcmap, **loopmap; /* per run: the key of each pc, of each loop */
	size_t *gp, *lsrc;         /* union-find over pc keys, over loop keys */
	size_t *gof, *lof;         /* model group of each pc key, model loop of each loop key */
};

/* Keys of every pc and loop of the runs; LP_EINVAL (naming the runs) when
 * the runs come from different binaries and some cannot be joined by
 * source location (no source locations in the file, or none in DWARF). */
int lp_pred_join_keys(struct lp_pred_join *x);
/* Union pcs grouped together in any run, and object loops of one source
 * loop; -1 when out of memory. */
int lp_pred_join_unite(struct lp_pred_join *x);
/* The model's loop of run r's loop l. */
size_t lp_pred_join_loop_of(const struct lp_pred_join *x, size_t r, size_t l);
/* After the groups are measured: m->join, and LP_EINVAL naming the runs and
 * pcs when a run's references are not joined with every other run's. */
int lp_pred_join_check(struct lp_pred_model *m, const struct lp_pred_join *x);
void lp_pred_join_release(struct lp_pred_join *x);

/* Index of a block size (or set-distance key) in m->blocks, or -1. */
long lp_pred_model_block_index(const struct lp_pred_model *m, uint64_t block);
/* A fitted function of the problem size, evaluated at P. */
double lp_pred_model_eval(const struct lp_pred_model *m, const struct lp_pred_fit *f, double P);
/* Fit group g's model at block size index b (prediction-bins.c). */
int lp_pred_model_fit_block(struct lp_pred_model *m, struct xgroup *g, size_t b);
/* Miss chance of a reuse at stack distance d: in a fully-associative LRU
 * cache of `blocks` blocks; in a set-associative one (the binomial model);
 * under a placement LP_PRED_PLACE_* (prediction-calibrate.c). */
double lp_pred_miss_fa(double d, uint64_t blocks);
double lp_pred_miss_sa(double d, uint64_t sets, uint64_t ways);
double lp_pred_miss_place(int place, double D, uint64_t sets, uint64_t ways);
/* The set-distance key collected for level l's geometry, or 0. */
uint64_t lp_pred_model_setd_key(const struct lp_pred_model *m, const struct lp_pred_level *l);

#endif
