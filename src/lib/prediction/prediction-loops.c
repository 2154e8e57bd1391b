/* Natural loops of one function's control-flow graph and their nesting
 * (the assumptions are at the top of prediction-code.c):
 *   1. depth-first search from the entry, then from every block it does not
 *      reach, all under a virtual root: postorder and DFS trees;
 *   2. the predecessors of each block within its tree;
 *   3. dominators (Cooper, Harvey & Kennedy), in reverse postorder;
 *   4. one natural loop per header h of back edges u -> h (h dominates u);
 *   5. nesting: a loop's parent is the smallest larger loop holding its
 *      header; loops are registered globally, parents first;
 *   6. each loop's acyclic body (its own blocks and its child loops as
 *      nodes, back edges removed) and the reach bitsets over it. */
#include "prediction/prediction-code.h"

#include "common/array.h"
#include "common/error.h"

#include <stdlib.h>
#include <string.h>

/* The working state of the analysis of one function of nb blocks; the
 * virtual root is block nb. */
struct loopwork {
	const struct xfunc *f;
	int nb, root;
	int npo;
	int *po;     /* postorder number of each block (and the root) */
	int *order;  /* blocks in postorder */
	int *tree;   /* the DFS root of each block's tree */
	int *npred;  /* predecessors of each block within its tree ... */
	int *poff;   /* ... at pred[poff[b] .. poff[b] + npred[b]) */
	int *pred;
	int *idom;   /* immediate dominator of each block */
	int nl;      /* loops found (local ids 0 .. nl-1) */
	int *hdr;    /* header block of each loop */
	int *lid;    /* loop of each header block, -1 */
	unsigned char **body; /* body[l][b]: block b is in loop l */
	size_t *bsize;        /* blocks of each loop */
	int *ord;    /* loops by body size, smallest first */
	int *par;    /* parent loop (local id), -1 */
	int *gid;    /* global id of each loop */
};

static void loopwork_release(struct loopwork *w)
{
	if (w->body)
		for (int l = 0; l <= w->nb; l++)
			free(w->body[l]);
	free(w->body);
	free(w->bsize);
	free(w->hdr);
	free(w->lid);
	free(w->po);
	free(w->order);
	free(w->tree);
	free(w->npred);
	free(w->poff);
	free(w->pred);
	free(w->idom);
	free(w->ord);
	free(w->par);
	free(w->gid);
}

/* 1. Postorder and trees: from the entry, then from every block not yet
 * reached (all children of the virtual root). */
static int loops_dfs(struct loopwork *w)
{
	const struct xfunc *f = w->f;
	int nb = w->nb;
	int *stack = malloc((size_t)(nb + 1) * sizeof(*stack));
	int *sidx = malloc((size_t)(nb + 1) * sizeof(*sidx));
	unsigned char *seen = calloc((size_t)(nb + 1), 1);

	if (!stack || !sidx || !seen) {
		free(stack);
		free(sidx);
		free(seen);
		return -1;
	}
	for (int r = 0; r < nb; r++) {
		int sp = 0;
		if (seen[r])
			continue;
		seen[r] = 1;
		w->tree[r] = r;
		stack[sp] = r;
		sidx[sp++] = 0;
		while (sp) {
			int b = stack[sp - 1];
			if (sidx[sp - 1] < f->nsucc[b]) {
				int s = f->succ[b][sidx[sp - 1]++];
				if (!seen[s]) {
					seen[s] = 1;
					w->tree[s] = r;
					stack[sp] = s;
					sidx[sp++] = 0;
				}
			} else {
				w->po[b] = w->npo;
				w->order[w->npo++] = b;
				sp--;
			}
		}
	}
	w->po[w->root] = w->npo;
	free(stack);
	free(sidx);
	free(seen);
	return 0;
}

/* 2. Predecessors (the root counts as a predecessor of each DFS root).
 * Edges between trees are left out: a tree that starts at a block the entry
 * does not reach (a switch case, or the nop padding after a jump) must not
 * change the dominators of the code the entry reaches. */
static void loops_preds(struct loopwork *w)
{
	const struct xfunc *f = w->f;
	int nb = w->nb;

	for (int r = 0; r < nb; r++)
		if (w->tree[r] == r)
			w->npred[r]++; /* the virtual root's edge to r */
	for (int b = 0; b < nb; b++)
		for (int k = 0; k < f->nsucc[b]; k++)
			if (w->tree[f->succ[b][k]] == w->tree[b])
				w->npred[f->succ[b][k]]++;
	for (int b = 0; b < nb; b++)
		w->poff[b + 1] = w->poff[b] + w->npred[b];
	memset(w->npred, 0, (size_t)(nb + 2) * sizeof(*w->npred));
	for (int r = 0; r < nb; r++)
		if (w->tree[r] == r)
			w->pred[w->poff[r] + w->npred[r]++] = w->root;
	for (int b = 0; b < nb; b++)
		for (int k = 0; k < f->nsucc[b]; k++) {
			int s = f->succ[b][k];
			if (w->tree[s] == w->tree[b])
				w->pred[w->poff[s] + w->npred[s]++] = b;
		}
}

static int dom_intersect(const int *idom, const int *po, int a, int b)
{
	while (a != b) {
		while (po[a] < po[b])
			a = idom[a];
		while (po[b] < po[a])
			b = idom[b];
	}
	return a;
}

/* 3. Dominators, iterated in reverse postorder to a fixed point. */
static void loops_dominators(struct loopwork *w)
{
	for (int b = 0; b <= w->nb; b++)
		w->idom[b] = -1;
	w->idom[w->root] = w->root;
	for (int changed = 1; changed;) {
		changed = 0;
		for (int i = w->npo - 1; i >= 0; i--) {
			int b = w->order[i], nd = -1;
			for (int k = w->poff[b]; k < w->poff[b] + w->npred[b]; k++) {
				int p = w->pred[k];
				if (w->idom[p] < 0)
					continue;
				nd = nd < 0 ? p : dom_intersect(w->idom, w->po, p, nd);
			}
			if (nd >= 0 && w->idom[b] != nd) {
				w->idom[b] = nd;
				changed = 1;
			}
		}
	}
}

/* 4. Back edges u -> h (h dominates u), one loop per header: its body is
 * h and every block that reaches u backwards without passing h. */
static int loops_natural(struct loopwork *w)
{
	const struct xfunc *f = w->f;
	int nb = w->nb;
	int *work = malloc((size_t)(nb + 1) * sizeof(*work));

	if (!work)
		return -1;
	for (int b = 0; b < nb; b++)
		w->lid[b] = -1;
	for (int u = 0; u < nb; u++)
		for (int k = 0; k < f->nsucc[u]; k++) {
			int h = f->succ[u][k], d = u, sp = 0;
			while (d != h && d != w->root && d >= 0 && w->idom[d] != d)
				d = w->idom[d];
			if (d != h)
				continue;
			if (w->lid[h] < 0) {
				if (!(w->body[w->nl] = calloc((size_t)nb, 1))) {
					free(work);
					return -1;
				}
				w->hdr[w->nl] = h;
				w->lid[h] = w->nl++;
				w->body[w->lid[h]][h] = 1;
			}
			unsigned char *bd = w->body[w->lid[h]];
			if (!bd[u]) {
				bd[u] = 1;
				work[sp++] = u;
			}
			while (sp) {
				int x = work[--sp];
				for (int q = w->poff[x]; q < w->poff[x] + w->npred[x]; q++) {
					int p = w->pred[q];
					if (p != w->root && !bd[p]) {
						bd[p] = 1;
						work[sp++] = p;
					}
				}
			}
		}
	free(work);
	return 0;
}

static int cmp_int_desc_size(const void *a, const void *b, void *arg)
{
	const size_t *sz = arg;
	int x = *(const int *)a, y = *(const int *)b;
	return sz[x] < sz[y] ? -1 : sz[x] > sz[y];
}

/* 5a. Nesting by body size: a loop's parent is the smallest larger loop
 * holding its header; each block's innermost loop (a local id for now). */
static int loops_nesting(struct loopwork *w, struct xfunc *f)
{
	int nl = w->nl, nb = w->nb;

	w->bsize = calloc((size_t)nl, sizeof(*w->bsize));
	w->ord = malloc((size_t)nl * sizeof(*w->ord));
	w->par = malloc((size_t)nl * sizeof(*w->par));
	if (!w->bsize || !w->ord || !w->par)
		return -1;
	for (int l = 0; l < nl; l++) {
		for (int b = 0; b < nb; b++)
			w->bsize[l] += w->body[l][b];
		w->ord[l] = l;
	}
	qsort_r(w->ord, (size_t)nl, sizeof(*w->ord), cmp_int_desc_size, w->bsize);
	for (int i = 0; i < nl; i++) {
		int l = w->ord[i];
		w->par[l] = -1;
		for (int j = i + 1; j < nl; j++)
			if (w->body[w->ord[j]][w->hdr[l]] && w->bsize[w->ord[j]] > w->bsize[l]) {
				w->par[l] = w->ord[j];
				break;
			}
	}
	/* innermost loop of each block: the smallest holding it */
	for (int i = nl - 1; i >= 0; i--)
		for (int b = 0; b < nb; b++)
			if (w->body[w->ord[i]][b])
				f->inner[b] = w->ord[i];
	return 0;
}

/* 5b. Register the loops globally, parents before children (largest
 * first), and turn f->inner into global ids. */
static int loops_register(struct lp_pred_code *c, struct loopwork *w, struct xfunc *f, int fid)
{
	int nl = w->nl;

	if (LP_ARRAY_RESERVE(c->loops, c->caploops, c->nloops + (size_t)nl, 16, "loops") < 0)
		return -1;
	int base = (int)c->nloops;
	if (!(w->gid = malloc((size_t)nl * sizeof(*w->gid))))
		return -1;
	for (int i = nl - 1, k = 0; i >= 0; i--, k++)
		w->gid[w->ord[i]] = base + k;
	for (int i = nl - 1; i >= 0; i--) {
		int l = w->ord[i];
		struct lp_pred_loop *L = &c->loops[w->gid[l]];
		memset(L, 0, sizeof(*L));
		L->module = f->module;
		L->func = fid;
		L->header = f->bstart[w->hdr[l]];
		L->parent = w->par[l] >= 0 ? w->gid[w->par[l]] : -1;
		L->depth = L->parent >= 0 ? c->loops[L->parent].depth + 1 : 1;
		L->node_in_parent = -1;
	}
	c->nloops += (size_t)nl;
	for (int b = 0; b < w->nb; b++)
		if (f->inner[b] >= 0)
			f->inner[b] = w->gid[f->inner[b]];
	return 0;
}

/* 6a. The nodes of loop l's acyclic body: its own blocks and its child
 * loops, in reverse postorder of the block or the child's header; sets
 * L->block_node, the children's node_in_parent and L->nnodes. nodeblk and
 * key have room for nb + nl nodes. */
static int loop_nodes(struct lp_pred_code *c, const struct loopwork *w, const struct xfunc *f, int l,
		      int *nodeblk, int *key)
{
	struct lp_pred_loop *L = &c->loops[w->gid[l]];
	int nn = 0, g = w->gid[l];

	if (!(L->block_node = malloc((size_t)w->nb * sizeof(*L->block_node))))
		return -1;
	for (int b = 0; b < w->nb; b++) {
		L->block_node[b] = -1;
		if (f->inner[b] == g)
			nodeblk[nn++] = b; /* a block node */
	}
	for (int m2 = 0; m2 < w->nl; m2++)
		if (w->par[m2] == l)
			nodeblk[nn++] = -1 - m2; /* a child loop node */
	/* sort nodes by reverse postorder (descending po) */
	for (int i = 0; i < nn; i++)
		key[i] = nodeblk[i] >= 0 ? w->po[nodeblk[i]] : w->po[w->hdr[-1 - nodeblk[i]]];
	for (int i = 1; i < nn; i++)
		for (int j = i; j > 0 && key[j] > key[j - 1]; j--) {
			int t = key[j];
			key[j] = key[j - 1];
			key[j - 1] = t;
			t = nodeblk[j];
			nodeblk[j] = nodeblk[j - 1];
			nodeblk[j - 1] = t;
		}
	for (int i = 0; i < nn; i++) {
		if (nodeblk[i] >= 0)
			L->block_node[nodeblk[i]] = i;
		else
			c->loops[w->gid[-1 - nodeblk[i]]].node_in_parent = i;
	}
	L->nnodes = nn;
	return 0;
}

/* 6b. reach[a] has b when control goes from node a to node b inside one
 * iteration of loop l (the nodes are a topological order of the acyclic
 * body, so one pass from the last node back fills it). cnt and lst have
 * room for nb + nl + 1 entries. */
static int loop_reach(struct lp_pred_code *c, const struct loopwork *w, const struct xfunc *f, int l,
		      int *cnt, int *lst)
{
	struct lp_pred_loop *L = &c->loops[w->gid[l]];
	int nn = L->nnodes, nb = w->nb, g = w->gid[l];
	int *bn = L->block_node, *node = malloc((size_t)nb * sizeof(*node));

	L->words = ((size_t)nn + 63) / 64;
	if (!node || !(L->reach = calloc((size_t)nn * L->words, sizeof(*L->reach)))) {
		free(node);
		return -1;
	}
	/* node of each block of the body at this loop's level, and the blocks
	 * bucketed by node */
	for (int b = 0; b < nb; b++) {
		node[b] = -1;
		if (!w->body[l][b])
			continue;
		if (bn[b] >= 0) {
			node[b] = bn[b];
		} else {
			int x = f->inner[b];
			while (x >= 0 && c->loops[x].parent != g)
				x = c->loops[x].parent;
			node[b] = x >= 0 ? c->loops[x].node_in_parent : -1;
		}
	}
	for (int i = 0; i <= nn; i++)
		cnt[i] = 0;
	for (int b = 0; b < nb; b++)
		if (node[b] >= 0)
			cnt[node[b] + 1]++;
	for (int i = 0; i < nn; i++)
		cnt[i + 1] += cnt[i];
	for (int b = 0; b < nb; b++)
		if (node[b] >= 0)
			lst[cnt[node[b]]++] = b;
	/* cnt[i] is now the end of node i's blocks; node i starts at cnt[i-1]
	 * (0 for i = 0) */
	for (int i = nn - 1; i >= 0; i--) {
		uint64_t *ri = L->reach + (size_t)i * L->words;
		ri[i / 64] |= 1ull << (i % 64);
		for (int q = i ? cnt[i - 1] : 0; q < cnt[i]; q++) {
			int b = lst[q];
			for (int k = 0; k < f->nsucc[b]; k++) {
				int s = f->succ[b][k], ns;
				if (!w->body[l][s] || s == w->hdr[l])
					continue;
				ns = node[s];
				if (ns < 0 || ns == i)
					continue;
				const uint64_t *rs = L->reach + (size_t)ns * L->words;
				for (size_t v = 0; v < L->words; v++)
					ri[v] |= rs[v];
			}
		}
	}
	free(node);
	return 0;
}

static int loops_bodies(struct lp_pred_code *c, const struct loopwork *w, const struct xfunc *f)
{
	int *a = malloc((size_t)(w->nb + w->nl + 1) * sizeof(*a));
	int *b = malloc((size_t)(w->nb + w->nl + 1) * sizeof(*b));
	int rc = a && b ? 0 : -1;

	for (int l = 0; l < w->nl && rc == 0; l++)
		if ((rc = loop_nodes(c, w, f, l, b, a)) == 0)
			rc = loop_reach(c, w, f, l, a, b);
	free(a);
	free(b);
	return rc;
}

int lp_pred_func_loops(struct lp_pred_code *c, struct xfunc *f, int fid)
{
	struct loopwork w = { .f = f, .nb = f->nb, .root = f->nb };
	size_t n1 = (size_t)f->nb + 1;
	int rc = -1;

	w.po = malloc(n1 * sizeof(*w.po));
	w.order = malloc(n1 * sizeof(*w.order));
	w.tree = malloc(n1 * sizeof(*w.tree));
	w.idom = malloc(n1 * sizeof(*w.idom));
	w.npred = calloc(n1 + 1, sizeof(*w.npred));
	w.poff = calloc(n1 + 1, sizeof(*w.poff));
	w.pred = malloc((3 * (size_t)f->nb + 1) * sizeof(*w.pred));
	w.hdr = malloc(n1 * sizeof(*w.hdr));
	w.lid = malloc(n1 * sizeof(*w.lid));
	w.body = calloc(n1, sizeof(*w.body));
	if (!w.po || !w.order || !w.tree || !w.idom || !w.npred || !w.poff || !w.pred || !w.hdr || !w.lid ||
	    !w.body || loops_dfs(&w) < 0)
		goto out;
	loops_preds(&w);
	loops_dominators(&w);
	if (loops_natural(&w) < 0)
		goto out;
	if (w.nl && (loops_nesting(&w, f) < 0 || loops_register(c, &w, f, fid) < 0 ||
		     loops_bodies(c, &w, f) < 0))
		goto out;
	rc = 0;
out:
	loopwork_release(&w);
	return rc;
}
