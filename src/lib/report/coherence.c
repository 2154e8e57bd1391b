/* Coherence misses by data object and instruction.
 *
 * Assumptions: the multi-threaded simulation's rules (sim.h,
 * docs/simulator.md); the first level's coherence misses are the ones a
 * programmer removes (by padding or by moving data), so they are the ones
 * charged. A miss is charged to the pc that missed and to the data object
 * holding the first byte it touched in the line, named as lp_attrib names
 * objects, with the heap blocks live at that moment: the trace is fed to
 * the simulation in runs between allocation events, and the misses of a
 * run are named before the next event changes the blocks. */
#include "report/report-internal.h"

#include "common/array.h"
#include "common/error.h"
#include "common/htab.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct lp_coherence {
	struct lp_mtsim *sim;
	struct lp_attrib *names; /* object and pc names, heap blocks */
	struct lp_coherence_row *objs, *pcs, *sorted;
	size_t nobjs, capobjs, npcs, cappcs, capwriters;
	uint32_t *obj_row;       /* object id -> row + 1 */
	size_t cap_obj_row;
	struct lp_htab pc_row;   /* pc -> row */
	char **writer_names;     /* per pc row: writer_where, owned */
};

int lp_coherence_new(struct lp_coherence **out, const struct lp_mtsim_config *cfg, struct lp_symbols *syms)
{
	struct lp_mtsim_config mc = *cfg;
	struct lp_attrib_params ap = { .cache = cfg->priv[0], .seed = cfg->seed };
	struct lp_coherence *c;
	int err;

	*out = NULL;
	if (!(c = calloc(1, sizeof(*c))))
		return lp_seterr(LP_ENOMEM, "out of memory");
	mc.flags |= LP_MTSIM_EVENTS;
	if ((err = lp_mtsim_new(&c->sim, &mc)) < 0 || (err = lp_attrib_new(&c->names, &ap, syms)) < 0)
		goto out_free;
	if (lp_htab_init(&c->pc_row, 64) < 0) {
		err = lp_seterr(LP_ENOMEM, "out of memory");
		goto out_free;
	}
	*out = c;
	return 0;
out_free:
	lp_coherence_free(c);
	return err;
}

void lp_coherence_free(struct lp_coherence *c)
{
	if (!c)
		return;
	lp_mtsim_free(c->sim);
	lp_attrib_free(c->names);
	for (size_t i = 0; i < c->npcs; i++)
		free(c->writer_names[i]);
	free(c->writer_names);
	free(c->objs);
	free(c->pcs);
	free(c->sorted);
	free(c->obj_row);
	if (c->pc_row.s)
		lp_htab_release(&c->pc_row);
	free(c);
}

const struct lp_mtsim *lp_coherence_sim(const struct lp_coherence *c)
{
	return c->sim;
}

/* The thread number (order of appearance) of thread id tid, as a bit. */
static uint64_t thread_bit(const struct lp_mtsim *s, uint32_t tid)
{
	size_t n = lp_mtsim_threads(s);

	for (size_t i = 0; i < n; i++)
		if (lp_mtsim_thread_id(s, i) == tid)
			return i < 64 ? UINT64_C(1) << i : 0;
	return 0;
}

static void charge(struct lp_coherence_row *r, const struct lp_mtsim_event *e, uint64_t tbit, uint64_t wbit)
{
	r->coherence++;
	if (e->false_sharing)
		r->false_sharing++;
	else
		r->true_sharing++;
	r->threads |= tbit;
	r->writers |= wbit;
	r->writer_pc = e->writer_pc;
}

static int object_row(struct lp_coherence *c, const struct lp_mtsim_event *e, struct lp_coherence_row **out)
{
	const char *name;
	uint32_t id;
	int err;

	if ((err = lp_attrib_object_name(c->names, e->addr, &id, &name)) < 0)
		return err;
	if (id >= c->cap_obj_row) {
		size_t old = c->cap_obj_row;
		if (LP_ARRAY_RESERVE(c->obj_row, c->cap_obj_row, (size_t)id + 1, 64, "objects") < 0)
			return lp_seterr(LP_ENOMEM, "out of memory");
		memset(c->obj_row + old, 0, (c->cap_obj_row - old) * sizeof(*c->obj_row));
	}
	if (!c->obj_row[id]) {
		if (LP_ARRAY_RESERVE(c->objs, c->capobjs, c->nobjs + 1, 16, "objects") < 0)
			return lp_seterr(LP_ENOMEM, "out of memory");
		c->objs[c->nobjs] = (struct lp_coherence_row){ .object = name, .function = "", .where = "" };
		c->obj_row[id] = (uint32_t)++c->nobjs;
	}
	*out = &c->objs[c->obj_row[id] - 1];
	return 0;
}

static int pc_row(struct lp_coherence *c, const struct lp_mtsim_event *e, const char *object,
		  struct lp_coherence_row **out)
{
	uint64_t *v;
	int isnew, err;

	if (lp_htab_reserve(&c->pc_row, 1) < 0)
		return lp_seterr(LP_ENOMEM, "out of memory");
	v = lp_htab_get(&c->pc_row, e->pc, &isnew);
	if (isnew) {
		const char *fn, *where;
		if (LP_ARRAY_RESERVE(c->pcs, c->cappcs, c->npcs + 1, 16, "pcs") < 0 ||
		    LP_ARRAY_RESERVE(c->writer_names, c->capwriters, c->npcs + 1, 16, "pcs") < 0)
			return lp_seterr(LP_ENOMEM, "out of memory");
		if ((err = lp_attrib_pc_name(c->names, e->pc, &fn, &where)) < 0)
			return err;
		c->pcs[c->npcs] = (struct lp_coherence_row){ .object = object, .function = fn, .where = where,
							     .pc = e->pc };
		c->writer_names[c->npcs] = NULL;
		*v = c->npcs++;
	}
	*out = &c->pcs[*v];
	return 0;
}

/* Charge the logged coherence misses of the first level. */
static int charge_events(struct lp_coherence *c)
{
	const struct lp_mtsim_event *ev;
	size_t n = lp_mtsim_events(c->sim, &ev);
	int err;

	for (size_t i = 0; i < n; i++) {
		const struct lp_mtsim_event *e = &ev[i];
		struct lp_coherence_row *o = NULL, *p = NULL;
		uint64_t tbit, wbit;

		if (e->level)
			continue;
		tbit = thread_bit(c->sim, e->tid);
		wbit = thread_bit(c->sim, e->writer_tid);
		if ((err = object_row(c, e, &o)) < 0 || (err = pc_row(c, e, o->object, &p)) < 0)
			return err;
		charge(o, e, tbit, wbit);
		charge(p, e, tbit, wbit);
	}
	lp_mtsim_events_clear(c->sim);
	return 0;
}

int lp_coherence_refs(struct lp_coherence *c, const struct lp_ref *refs, size_t n)
{
	size_t i = 0;
	int err;

	while (i < n) {
		size_t j = i;

		while (j < n && lp_ref_is_access(&refs[j]))
			j++;
		/* the first access after an allocation's frames closes its
		 * call stack, which names the block */
		if (j > i && (err = lp_attrib_track(c->names, &refs[i])) < 0)
			return err;
		if ((err = lp_mtsim_refs(c->sim, refs + i, j - i)) < 0 || (err = charge_events(c)) < 0)
			return err;
		if (j < n && (err = lp_attrib_track(c->names, &refs[j])) < 0)
			return err;
		i = j + 1;
	}
	return 0;
}

static int cmp_rows(const void *x, const void *y)
{
	const struct lp_coherence_row *a = x, *b = y;
	int d;

	if (a->coherence != b->coherence)
		return a->coherence > b->coherence ? -1 : 1;
	if ((d = strcmp(a->object, b->object)))
		return d;
	return a->pc < b->pc ? -1 : a->pc > b->pc;
}

/* "function (file:line)" of the writer pc of pc row i. */
static int writer_name(struct lp_coherence *c, struct lp_coherence_row *r, size_t i)
{
	const char *fn, *where;
	int err;

	free(c->writer_names[i]);
	c->writer_names[i] = NULL;
	if ((err = lp_attrib_pc_name(c->names, r->writer_pc, &fn, &where)) < 0)
		return err;
	if ((*where ? asprintf(&c->writer_names[i], "%s (%s)", fn, where)
		    : asprintf(&c->writer_names[i], "%s", fn)) < 0) {
		c->writer_names[i] = NULL;
		return lp_seterr(LP_ENOMEM, "out of memory");
	}
	r->writer_where = c->writer_names[i];
	return 0;
}

size_t lp_coherence_rows(struct lp_coherence *c, enum lp_coherence_view view,
			 const struct lp_coherence_row **rows)
{
	struct lp_coherence_row *src = view == LP_COHERENCE_PCS ? c->pcs : c->objs;
	size_t n = view == LP_COHERENCE_PCS ? c->npcs : c->nobjs;

	for (size_t i = 0; i < n; i++)
		if (view != LP_COHERENCE_PCS || writer_name(c, &src[i], i) < 0)
			src[i].writer_where = "";
	free(c->sorted);
	if (!(c->sorted = malloc((n + 1) * sizeof(*c->sorted)))) {
		*rows = NULL;
		return 0;
	}
	if (n) /* src is NULL without rows, and memcpy(dst, NULL, 0) is undefined */
		memcpy(c->sorted, src, n * sizeof(*src));
	if (n > 1)
		qsort(c->sorted, n, sizeof(*c->sorted), cmp_rows);
	*rows = c->sorted;
	return n;
}
