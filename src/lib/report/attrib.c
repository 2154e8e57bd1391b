/* MemSpy-style attribution of references and misses.
 *
 * Assumptions: one cache (the level the programmer tunes for); every
 * reference is charged compute_cost cycles and every miss miss_latency
 * cycles, to the reference's pc, function and data object. Data objects:
 * a live heap block (from LP_EV_ALLOC to LP_EV_FREE) is named by the call
 * site that allocated it, or, when the trace carries the allocation's
 * call stack (LP_EV_FRAME records after it), by its first frame outside
 * the allocator's wrappers (lp_symbols_alloc_site), so all blocks from
 * one site form one object as in MemSpy; otherwise a global or static variable from the ELF symbol
 * table; otherwise "(other)" (stack, unknown). A miss is cold when its line
 * was never accessed before, a replacement miss otherwise. A reference
 * straddling lines charges each line's miss to the same pc and object.
 * This path looks up symbols and tables per reference; it is meant for
 * attribution runs, not for the fast simulator. */
#include "report/report-internal.h"

#include <locprof/profile.h>

#include "common/array.h"
#include "common/error.h"
#include "common/hash.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* u64 -> u32, open addressing at a load of at most 1/2; value 0 = empty
 * slot. Not lp_htab (16-byte slots, load up to 3/4): the lookups run per
 * reference, and `locprof simulate --attribute` took 1.13x to 1.15x the CPU
 * time with it (paired runs, medians). */
struct umap {
	uint64_t *k;
	uint32_t *v;
	size_t cap, n;
};

static uint32_t umap_get(const struct umap *m, uint64_t key)
{
	if (!m->cap)
		return 0;
	for (size_t h = lp_hash64(key) & (m->cap - 1);; h = (h + 1) & (m->cap - 1)) {
		if (!m->v[h])
			return 0;
		if (m->k[h] == key)
			return m->v[h];
	}
}

static int umap_put(struct umap *m, uint64_t key, uint32_t val)
{
	size_t h;

	if (2 * (m->n + 1) > m->cap) {
		struct umap o = *m;
		m->cap = o.cap ? 2 * o.cap : 256;
		m->k = malloc(m->cap * sizeof(*m->k));
		m->v = calloc(m->cap, sizeof(*m->v));
		if (!m->k || !m->v) {
			free(m->k);
			free(m->v);
			*m = o;
			return LP_ENOMEM;
		}
		m->n = 0;
		for (size_t i = 0; i < o.cap; i++)
			if (o.v[i])
				umap_put(m, o.k[i], o.v[i]);
		free(o.k);
		free(o.v);
	}
	for (h = lp_hash64(key) & (m->cap - 1); m->v[h] && m->k[h] != key; h = (h + 1) & (m->cap - 1))
		;
	if (!m->v[h])
		m->n++;
	m->k[h] = key;
	m->v[h] = val;
	return 0;
}

static void umap_release(struct umap *m)
{
	free(m->k);
	free(m->v);
}

struct counts {
	uint64_t refs, accesses, misses, cold, repl;
};

struct pcrec {
	uint64_t pc;
	uint32_t func;
	char *where;
	struct counts c;
};

struct pair {
	uint32_t obj, func;
	struct counts c;
};

struct block {
	uint64_t start, end;
	uint32_t obj;
};

struct lp_attrib {
	struct lp_attrib_params p;
	struct lp_symbols *syms;
	struct lp_cache *cache;
	unsigned shift;
	char **objs, **funcs;
	size_t nobjs, nfuncs, capobjs, capfuncs;
	struct pcrec *pcs;
	size_t npcs, cappcs;
	struct pair *pairs;
	size_t npairs, cappairs;
	struct umap pc_map, pair_map, site_map, stack_map, oname_map, sym_map, fname_map, seen;
	/* the stack of the allocation just read, while its frames come */
	uint64_t stk[LP_ALLOC_STACK_MAX];
	unsigned nstk;
	uint64_t stk_block; /* its block's start */
	struct block *blocks;
	size_t nblocks, capblocks;
	struct lp_attrib_row *rows;
	struct counts total;
	struct lp_hotspots *hotspots;
};

static int add_name(char ***v, size_t *n, size_t *cap, char *name, uint32_t *id)
{
	if (!name || LP_ARRAY_RESERVE(*v, *cap, *n + 1, 16, "names") < 0) {
		free(name);
		/* the constant, not lp_seterr()'s value: callers read *id
		 * whenever the result is not negative */
		lp_seterr(LP_ENOMEM, "out of memory");
		return LP_ENOMEM;
	}
	(*v)[*n] = name;
	*id = (uint32_t)(*n)++;
	return 0;
}

int lp_attrib_new(struct lp_attrib **out, const struct lp_attrib_params *p, struct lp_symbols *syms)
{
	struct lp_attrib *a;
	uint32_t id;
	int err;

	*out = NULL;
	if (!(a = calloc(1, sizeof(*a))))
		return lp_seterr(LP_ENOMEM, "out of memory");
	a->p = *p;
	a->syms = syms;
	if ((err = lp_cache_new(&a->cache, &p->cache, p->seed)) < 0)
		goto out_free;
	a->shift = (unsigned)__builtin_ctzll(p->cache.line);
	if ((err = add_name(&a->objs, &a->nobjs, &a->capobjs, strdup("(other)"), &id)) < 0)
		goto out_free;
	*out = a;
	return 0;
out_free:
	lp_attrib_free(a);
	return err;
}

void lp_attrib_free(struct lp_attrib *a)
{
	if (!a)
		return;
	lp_cache_free(a->cache);
	for (size_t i = 0; i < a->nobjs; i++)
		free(a->objs[i]);
	for (size_t i = 0; i < a->nfuncs; i++)
		free(a->funcs[i]);
	for (size_t i = 0; i < a->npcs; i++)
		free(a->pcs[i].where);
	free(a->objs);
	free(a->funcs);
	free(a->pcs);
	free(a->pairs);
	free(a->blocks);
	free(a->rows);
	lp_hotspots_free(a->hotspots);
	umap_release(&a->pc_map);
	umap_release(&a->pair_map);
	umap_release(&a->site_map);
	umap_release(&a->stack_map);
	umap_release(&a->oname_map);
	umap_release(&a->sym_map);
	umap_release(&a->fname_map);
	umap_release(&a->seen);
	free(a);
}

/* Function id of a name (names are interned). */
static int func_id(struct lp_attrib *a, const char *name, uint32_t *id)
{
	uint64_t h = lp_hash64(name[0]);
	uint32_t v;
	int err;

	for (const char *c = name; *c; c++)
		h = lp_hash64(h ^ (unsigned char)*c);
	/* collisions of the 64-bit hash are resolved by probing with h+1 */
	for (;; h++) {
		if (!(v = umap_get(&a->fname_map, h)))
			break;
		if (!strcmp(a->funcs[v - 1], name)) {
			*id = v - 1;
			return 0;
		}
	}
	if ((err = add_name(&a->funcs, &a->nfuncs, &a->capfuncs, strdup(name), id)) < 0)
		return err;
	return umap_put(&a->fname_map, h, *id + 1) < 0 ? lp_seterr(LP_ENOMEM, "out of memory") : 0;
}

static int pc_rec(struct lp_attrib *a, uint64_t pc, uint32_t *out)
{
	uint32_t v = umap_get(&a->pc_map, pc), fid;
	struct lp_code_loc loc = { 0 };
	char buf[300], *where = NULL;
	int err;

	if (v) {
		*out = v - 1;
		return 0;
	}
	if (a->syms)
		lp_symbols_pc(a->syms, pc, &loc);
	if (loc.function) {
		err = func_id(a, loc.function, &fid);
	} else {
		lp_symbols_pc_address(a->syms, pc, buf, sizeof(buf));
		err = func_id(a, buf, &fid);
	}
	if (err < 0)
		return err;
	if (loc.file && loc.caller && loc.caller_file)
		err = asprintf(&where, "%s:%d in %s (%s:%d)", loc.file, loc.line, loc.caller, loc.caller_file,
			       loc.caller_line);
	else if (loc.file)
		err = asprintf(&where, "%s:%d", loc.file, loc.line);
	if (loc.file && err < 0)
		return lp_seterr(LP_ENOMEM, "out of memory");
	if (!where && !(where = strdup("")))
		return lp_seterr(LP_ENOMEM, "out of memory");
	if (LP_ARRAY_RESERVE(a->pcs, a->cappcs, a->npcs + 1, 64, "pcs") < 0) {
		free(where);
		return lp_seterr(LP_ENOMEM, "out of memory");
	}
	a->pcs[a->npcs] = (struct pcrec){ .pc = pc, .func = fid, .where = where };
	*out = (uint32_t)a->npcs++;
	return umap_put(&a->pc_map, pc, *out + 1) < 0 ? lp_seterr(LP_ENOMEM, "out of memory") : 0;
}

static uint64_t name_hash(const char *name)
{
	uint64_t h = lp_hash64(name[0]);

	for (const char *c = name; *c; c++)
		h = lp_hash64(h ^ (unsigned char)*c);
	return h;
}

/* The heap object of this name (interned: sites and stacks that name
 * the same place are one object): its index, or a negative LP_E*. */
static int64_t heap_object_named(struct lp_attrib *a, const struct lp_alloc_site *as)
{
	char nb[256], *name;
	uint32_t v, id;
	uint64_t h;
	int err;

	lp_symbols_alloc_site_name(a->syms, as, nb, sizeof(nb));
	if (asprintf(&name, "heap@%s", nb) < 0)
		return lp_seterr(LP_ENOMEM, "out of memory");
	/* collisions of the 64-bit hash are resolved by probing with h+1 */
	for (h = name_hash(name); (v = umap_get(&a->oname_map, h)); h++)
		if (!strcmp(a->objs[v - 1], name)) {
			free(name);
			return v - 1;
		}
	if ((err = add_name(&a->objs, &a->nobjs, &a->capobjs, name, &id)) < 0)
		return err;
	if (umap_put(&a->oname_map, h, id + 1) < 0)
		return lp_seterr(LP_ENOMEM, "out of memory");
	return id;
}

/* The object named by an allocation site: its index, or a negative LP_E*. */
static int64_t heap_object(struct lp_attrib *a, uint64_t site)
{
	uint32_t v = umap_get(&a->site_map, site);
	struct lp_alloc_site as;
	int64_t id;

	if (v)
		return v - 1;
	/* the call site alone: named as a one-frame stack (the column
	 * telling two allocations on one line apart where stacks say so) */
	lp_symbols_alloc_site(a->syms, &site, 1, &as);
	if ((id = heap_object_named(a, &as)) < 0)
		return id;
	if (umap_put(&a->site_map, site, (uint32_t)id + 1) < 0)
		return lp_seterr(LP_ENOMEM, "out of memory");
	return id;
}

/* The object named by a call stack (frames[0] the call site). */
static int64_t heap_object_stack(struct lp_attrib *a, const uint64_t *frames, unsigned n)
{
	uint64_t h = n;
	struct lp_alloc_site as;
	uint32_t v;
	int64_t id;

	for (unsigned i = 0; i < n; i++)
		h = lp_hash64(h ^ frames[i]);
	/* a collision of two stacks' 64-bit hashes would merge their objects */
	if ((v = umap_get(&a->stack_map, h)))
		return v - 1;
	lp_symbols_alloc_site(a->syms, frames, n, &as);
	if ((id = heap_object_named(a, &as)) < 0)
		return id;
	if (umap_put(&a->stack_map, h, (uint32_t)id + 1) < 0)
		return lp_seterr(LP_ENOMEM, "out of memory");
	return id;
}

/* Index of the first block with start > addr. */
static size_t block_upper(const struct lp_attrib *a, uint64_t addr)
{
	size_t lo = 0, hi = a->nblocks;

	LP_BISECT(lo, hi, i, a->blocks[i].start <= addr);
	return lo;
}

static int object_of(struct lp_attrib *a, uint64_t addr, uint32_t *out)
{
	size_t i = block_upper(a, addr);
	struct lp_data_sym ds;
	uint32_t v;

	if (i && addr < a->blocks[i - 1].end) {
		*out = a->blocks[i - 1].obj;
		return 0;
	}
	*out = 0;
	if (!a->syms || !lp_symbols_data(a->syms, addr, &ds))
		return 0;
	if ((v = umap_get(&a->sym_map, ds.start))) {
		*out = v - 1;
		return 0;
	}
	if (add_name(&a->objs, &a->nobjs, &a->capobjs, strdup(lp_symbols_readable(a->syms, ds.name)), out) < 0)
		return LP_ENOMEM;
	return umap_put(&a->sym_map, ds.start, *out + 1) < 0 ? lp_seterr(LP_ENOMEM, "out of memory") : 0;
}

static int pair_rec(struct lp_attrib *a, uint32_t obj, uint32_t func, struct pair **out)
{
	uint64_t key = (uint64_t)obj << 32 | func;
	uint32_t v = umap_get(&a->pair_map, key);

	if (!v) {
		if (LP_ARRAY_RESERVE(a->pairs, a->cappairs, a->npairs + 1, 64, "object-function pairs") < 0)
			return lp_seterr(LP_ENOMEM, "out of memory");
		a->pairs[a->npairs] = (struct pair){ .obj = obj, .func = func };
		v = (uint32_t)++a->npairs;
		if (umap_put(&a->pair_map, key, v) < 0)
			return lp_seterr(LP_ENOMEM, "out of memory");
	}
	*out = &a->pairs[v - 1];
	return 0;
}

/* The allocation whose frames were read is named by its whole stack. */
static int close_stack(struct lp_attrib *a)
{
	unsigned n = a->nstk;
	size_t i;
	int64_t obj;

	a->nstk = 0;
	if (n < 2)
		return 0;
	if ((obj = heap_object_stack(a, a->stk, n)) < 0)
		return (int)obj;
	i = block_upper(a, a->stk_block);
	if (i && a->blocks[i - 1].start == a->stk_block)
		a->blocks[i - 1].obj = (uint32_t)obj;
	return 0;
}

static int alloc_event(struct lp_attrib *a, const struct lp_ref *r)
{
	size_t i;
	int64_t obj;
	int err;

	if (r->kind == LP_EV_FRAME) {
		if (a->nstk && a->nstk < LP_ALLOC_STACK_MAX)
			a->stk[a->nstk++] = r->pc;
		return 0;
	}
	if (a->nstk && (err = close_stack(a)) < 0)
		return err;
	if (r->kind != LP_EV_ALLOC && r->kind != LP_EV_FREE)
		return 0;
	i = block_upper(a, r->addr);
	if (r->kind == LP_EV_FREE) {
		if (i && a->blocks[i - 1].start == r->addr) {
			memmove(&a->blocks[i - 1], &a->blocks[i], (a->nblocks - i) * sizeof(*a->blocks));
			a->nblocks--;
		}
		return 0;
	}
	if (!r->size)
		return 0;
	if ((obj = heap_object(a, r->pc)) < 0)
		return (int)obj;
	/* its frames, if the trace has them, follow */
	a->stk[0] = r->pc;
	a->nstk = 1;
	a->stk_block = r->addr;
	if (i && a->blocks[i - 1].start == r->addr) { /* a block we missed the free of */
		a->blocks[i - 1].end = r->addr + r->size;
		a->blocks[i - 1].obj = (uint32_t)obj;
		return 0;
	}
	if (LP_ARRAY_RESERVE(a->blocks, a->capblocks, a->nblocks + 1, 64, "heap blocks") < 0)
		return lp_seterr(LP_ENOMEM, "out of memory");
	memmove(&a->blocks[i + 1], &a->blocks[i], (a->nblocks - i) * sizeof(*a->blocks));
	a->blocks[i] = (struct block){ .start = r->addr, .end = r->addr + r->size, .obj = (uint32_t)obj };
	a->nblocks++;
	return 0;
}

int lp_attrib_refs(struct lp_attrib *a, const struct lp_ref *refs, size_t n)
{
	int err;

	for (size_t i = 0; i < n; i++) {
		const struct lp_ref *r = &refs[i];
		uint32_t pci = 0, obj = 0;
		struct pair *pr = NULL;
		uint64_t first, last;

		if (!lp_ref_is_access(r)) {
			if ((err = alloc_event(a, r)) < 0)
				return err;
			continue;
		}
		if (a->nstk && (err = close_stack(a)) < 0)
			return err;
		if ((err = pc_rec(a, r->pc, &pci)) < 0 || (err = object_of(a, r->addr, &obj)) < 0 ||
		    (err = pair_rec(a, obj, a->pcs[pci].func, &pr)) < 0)
			return err;
		struct counts *cs[3] = { &a->pcs[pci].c, &pr->c, &a->total };
		for (int k = 0; k < 3; k++)
			cs[k]->refs++;
		first = r->addr >> a->shift;
		last = (r->addr + (r->size ? r->size - 1 : 0)) >> a->shift;
		if (last < first)
			last = UINT64_MAX >> a->shift;
		for (uint64_t l = first;; l++) {
			uint8_t hit;
			int cold = 0;

			lp_cache_access_lines(a->cache, &l, 1, &hit, NULL);
			if (!hit && !umap_get(&a->seen, l + 1)) {
				cold = 1;
				if (umap_put(&a->seen, l + 1, 1) < 0)
					return lp_seterr(LP_ENOMEM, "out of memory");
			}
			for (int k = 0; k < 3; k++) {
				cs[k]->accesses++;
				cs[k]->misses += !hit;
				cs[k]->cold += (uint64_t)cold;
				cs[k]->repl += (uint64_t)(!hit && !cold);
			}
			if (l == last)
				break;
		}
	}
	return 0;
}

static void fill_row(const struct lp_attrib *a, struct lp_attrib_row *row, const struct counts *c)
{
	double total_stall = (double)a->total.misses * a->p.miss_latency;

	row->refs = c->refs;
	row->accesses = c->accesses;
	row->misses = c->misses;
	row->cold = c->cold;
	row->replacement = c->repl;
	row->stall = (double)c->misses * a->p.miss_latency;
	row->compute = (double)c->refs * a->p.compute_cost;
	row->share = total_stall > 0 ? row->stall / total_stall : 0.0;
}

static int cmp_rows(const void *x, const void *y)
{
	const struct lp_attrib_row *a = x, *b = y;
	int c;

	if (a->stall != b->stall)
		return a->stall > b->stall ? -1 : 1;
	if (a->refs != b->refs)
		return a->refs > b->refs ? -1 : 1;
	if ((c = strcmp(a->object, b->object)))
		return c;
	if ((c = strcmp(a->function, b->function)))
		return c;
	return a->pc < b->pc ? -1 : a->pc > b->pc;
}

static void add_counts(struct counts *d, const struct counts *s)
{
	d->refs += s->refs;
	d->accesses += s->accesses;
	d->misses += s->misses;
	d->cold += s->cold;
	d->repl += s->repl;
}

size_t lp_attrib_rows(struct lp_attrib *a, enum lp_attrib_view view, const struct lp_attrib_row **rows)
{
	size_t n = view == LP_ATTRIB_PAIRS ? a->npairs : view == LP_ATTRIB_OBJECTS ? a->nobjs
		 : view == LP_ATTRIB_FUNCTIONS ? a->nfuncs : a->npcs;
	struct counts *agg = NULL;
	size_t k = 0;

	free(a->rows);
	a->rows = calloc(n ? n : 1, sizeof(*a->rows));
	*rows = a->rows;
	if (!a->rows)
		return 0;
	if (view == LP_ATTRIB_OBJECTS || view == LP_ATTRIB_FUNCTIONS) {
		if (!(agg = calloc(n ? n : 1, sizeof(*agg))))
			return 0;
		for (size_t i = 0; i < a->npairs; i++)
			add_counts(&agg[view == LP_ATTRIB_OBJECTS ? a->pairs[i].obj : a->pairs[i].func],
				   &a->pairs[i].c);
	}
	for (size_t i = 0; i < n; i++) {
		struct lp_attrib_row *row = &a->rows[k];
		const struct counts *c;

		row->where = "";
		row->object = "";
		row->function = "";
		switch (view) {
		case LP_ATTRIB_PAIRS:
			row->object = a->objs[a->pairs[i].obj];
			row->function = a->funcs[a->pairs[i].func];
			c = &a->pairs[i].c;
			break;
		case LP_ATTRIB_OBJECTS:
			row->object = a->objs[i];
			c = &agg[i];
			break;
		case LP_ATTRIB_FUNCTIONS:
			row->function = a->funcs[i];
			c = &agg[i];
			break;
		default:
			row->function = a->funcs[a->pcs[i].func];
			row->where = a->pcs[i].where;
			row->pc = a->pcs[i].pc;
			c = &a->pcs[i].c;
		}
		if (!c->refs)
			continue; /* an object with no reference (e.g. "(other)") */
		fill_row(a, row, c);
		k++;
	}
	free(agg);
	qsort(a->rows, k, sizeof(*a->rows), cmp_rows);
	return k;
}

void lp_attrib_total(const struct lp_attrib *a, struct lp_attrib_row *out)
{
	memset(out, 0, sizeof(*out));
	out->object = out->function = out->where = "";
	fill_row(a, out, &a->total);
}

/* The pcs' accesses and misses by source line and function: the grouping
 * `locprof report` and `locprof annotate` use for a profile's predicted
 * misses, here over the simulated ones. */
int lp_attrib_hotspots(struct lp_attrib *a, const struct lp_hotspots **out)
{
	int err;

	*out = NULL;
	lp_hotspots_free(a->hotspots);
	if ((err = lp_hotspots_new(&a->hotspots, a->syms)) < 0)
		return err;
	for (size_t i = 0; i < a->npcs; i++)
		if ((err = lp_hotspots_add(a->hotspots, a->pcs[i].pc, (double)a->pcs[i].c.accesses,
					   (double)a->pcs[i].c.misses)) < 0)
			return err;
	if ((err = lp_hotspots_finish(a->hotspots)) < 0)
		return err;
	*out = a->hotspots;
	return 0;
}

/* ---- names for other attributions (report-internal.h) -------------------- */

int lp_attrib_track(struct lp_attrib *a, const struct lp_ref *event)
{
	if (!lp_ref_is_access(event))
		return alloc_event(a, event);
	return a->nstk ? close_stack(a) : 0;
}

int lp_attrib_object_name(struct lp_attrib *a, uint64_t addr, uint32_t *id, const char **name)
{
	int err = object_of(a, addr, id);

	if (err < 0)
		return err;
	*name = a->objs[*id];
	return 0;
}

int lp_attrib_pc_name(struct lp_attrib *a, uint64_t pc, const char **function, const char **where)
{
	uint32_t i;
	int err = pc_rec(a, pc, &i);

	if (err < 0)
		return err;
	*function = a->funcs[a->pcs[i].func];
	*where = a->pcs[i].where;
	return 0;
}
