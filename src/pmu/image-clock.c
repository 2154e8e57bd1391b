/* Process images and their clocks: each address space is an image with
 * its own reference clock (the references of its threads only) and thread
 * numbers; the engine's per-thread and per-address-space state. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "engine.h"
#include "unwind.h"

struct pmu_aspace *lp_pmu_aspace_get(struct lp_pmu_proc *p)
{
	if (!p->watch) {
		struct pmu_aspace *as = calloc(1, sizeof(*as));

		if (as && lp_pmu_watches_init(&as->watches) < 0) {
			free(as);
			as = NULL;
		}
		p->watch = as;
	}
	return p->watch;
}

struct pmu_thread_state *lp_pmu_thread_state(struct lp_pmu_thread *t)
{
	if (!t->eng) {
		struct pmu_thread_state *x = calloc(1, sizeof(struct pmu_thread_state));

		if (x)
			x->sample_k = -1;
		t->eng = x;
	}
	return t->eng;
}

/* References thread t made since it joined its current image. */
static uint64_t image_thread_refs(struct pmu_engine *e, struct lp_pmu_thread *t)
{
	struct pmu_thread_state *x = t->eng;
	uint64_t total;

	if (!x)
		return 0;
	total = e->c->ops->stepping ? x->refs : e->c->ops->thread_time(e->c, t->tid);
	return total > x->base ? total - x->base : 0;
}

/* The clock of t's image: the references of its threads only. */
uint64_t lp_pmu_image_now(struct pmu_engine *e, struct lp_pmu_proc *p)
{
	struct pmu_aspace *as = p->watch;
	uint64_t sum = as ? as->dead : 0;

	for (int i = 0; i < e->sup.n; i++)
		if (e->sup.t[i]->proc == p)
			sum += image_thread_refs(e, e->sup.t[i]);
	return sum;
}

/* Give t its place in image p (a new thread, or the one that exec'd). */
void lp_pmu_image_join(struct pmu_engine *e, struct lp_pmu_thread *t, struct pmu_aspace *as)
{
	struct pmu_thread_state *x = lp_pmu_thread_state(t);

	if (!x || !as)
		return;
	x->itid = as->nthreads++;
	x->image = as->image;
	x->base = e->c->ops->stepping ? x->refs : e->c->ops->thread_time(e->c, t->tid);
}

/* Thread t leaves its image (exit, or exec into a new one): keep its count. */
void lp_pmu_image_leave(struct pmu_engine *e, struct lp_pmu_thread *t)
{
	struct pmu_aspace *as = t->proc ? t->proc->watch : NULL;
	struct pmu_thread_state *x = t->eng;
	uint64_t r;

	if (!as || !x)
		return;
	r = image_thread_refs(e, t);
	as->dead += r;
	if (x->itid >= as->tr_cap) {
		size_t cap = as->tr_cap ? as->tr_cap : 8;
		uint64_t *v;

		while (cap <= x->itid)
			cap *= 2;
		v = realloc(as->thread_refs, cap * sizeof(*v));
		if (!v) {
			e->err = lp_seterr(LP_ENOMEM, "out of memory");
			return;
		}
		memset(v + as->tr_cap, 0, (cap - as->tr_cap) * sizeof(*v));
		as->thread_refs = v;
		as->tr_cap = cap;
	}
	as->thread_refs[x->itid] = r;
	x->base += r; /* nothing counted twice if it joins another image */
}

/* A new image starts in p (first thread t). */
int lp_pmu_image_start(struct pmu_engine *e, struct lp_pmu_proc *p, struct lp_pmu_thread *t, uint32_t parent,
		       int ppid, int exec)
{
	struct pmu_aspace *as = lp_pmu_aspace_get(p);
	struct lp_pmu_image img;

	if (!as || !lp_pmu_thread_state(t))
		return lp_seterr(LP_ENOMEM, "out of memory");
	as->image = e->next_image++;
	lp_pmu_image_join(e, t, as);
	img.id = as->image;
	img.parent = parent;
	img.pid = p->pid;
	img.ppid = ppid;
	if (exec) {
		/* Same process, so the same parent: ask the kernel. */
		char path[64], buf[512], *rp;
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%d/stat", (int)p->pid);
		if ((f = fopen(path, "re"))) {
			if (fgets(buf, sizeof(buf), f) && (rp = strrchr(buf, ')')))
				sscanf(rp + 1, " %*c %d", &img.ppid);
			fclose(f);
		}
	}
	img.exec = exec;
	if (e->h->on_image)
		e->h->on_image(e->h->ctx, &img);
	if (e->h->on_maps)
		e->h->on_maps(e->h->ctx, as->image, p->pid);
	return 0;
}

void lp_pmu_image_release(void *ctx, struct lp_pmu_proc *p)
{
	struct pmu_engine *e = ctx;
	struct pmu_aspace *as = p->watch;
	struct lp_pmu_image_end end;

	/* Its text goes with it, and our breakpoint in it. */
	if (e->bp.proc == p)
		e->bp.active = 0;
	for (unsigned i = 0; i < DT_OLD; i++)
		if (e->old_bp[i].proc == p)
			e->old_bp[i].proc = NULL;
	if (!as)
		return;
	/* The address space is going: what is still watched is dangling.
	 * Its threads have all left (lp_pmu_on_thread_leave), so its count is final. */
	{
		struct lp_watch *w;
		uint64_t pos = 0;

		while ((w = lp_watch_table_next(&as->watches.t, &pos)))
			lp_pmu_emit_sample(e, &lp_pmu_watch_of(&as->watches, w)->s);
		lp_pmu_watches_clear(&as->watches);
	}
	memset(&end, 0, sizeof(end));
	end.id = as->image;
	end.pid = p->pid;
	end.refs = as->dead;
	end.threads = as->nthreads;
	if (as->tr_cap < as->nthreads) {
		/* Every thread that left has its entry; make the rest 0. */
		uint64_t *v = realloc(as->thread_refs, as->nthreads * sizeof(*v));

		if (v) {
			memset(v + as->tr_cap, 0, (as->nthreads - as->tr_cap) * sizeof(*v));
			as->thread_refs = v;
			as->tr_cap = as->nthreads;
		} else {
			end.threads = (uint32_t)as->tr_cap;
		}
	}
	end.thread_refs = as->thread_refs;
	end.exec = as->exec;
	end.exited = as->exited;
	end.status = as->status;
	if (e->h->on_image_end)
		e->h->on_image_end(e->h->ctx, &end);
	/* The supervisor frees p->watch itself (one flat block): free ours. */
	lp_pmu_unwinder_free(as->unw);
	as->unw = NULL;
	lp_pmu_watches_release(&as->watches);
	lp_pmu_pagecount_release(&as->held);
	free(as->thread_refs);
	as->thread_refs = NULL;
	as->tr_cap = 0;
}

/* Threads of t's address space (threads, and vfork or CLONE_VM children). */
int lp_pmu_aspace_threads(struct pmu_engine *e, struct lp_pmu_thread *t)
{
	int n = 0;

	for (int i = 0; i < e->sup.n; i++)
		n += e->sup.t[i]->proc == t->proc;
	return n;
}
