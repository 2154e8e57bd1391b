/* Watching sampled lines (thesis §3.4): debug registers while the process
 * has one thread and the line fits, page protection otherwise; ending a
 * watch when its line is reused, and the permissions that go with it. */
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "common/error.h"
#include "engine.h"

static int set_protection(struct pmu_engine *e, struct lp_pmu_thread *t, uint64_t page, int prot)
{
	uint64_t a[6] = { page, PAGE, (uint64_t)prot, 0, 0, 0 };
	int64_t ret;
	int err = lp_pmu_sup_syscall(&e->sup, t, SYS_mprotect, a, &ret);

	e->prot_gen++;
	e->c->ops->note(e->c, t->tid, LP_PMU_NOTE_SYSCALL);
	if (err < 0)
		return err;
	if (ret < 0)
		return lp_seterr(LP_EIO, "mprotect(0x%llx) in the target failed: %s",
				 (unsigned long long)page, strerror((int)-ret));
	return 0;
}

int lp_pmu_page_protect(struct pmu_engine *e, struct lp_pmu_thread *t, uint64_t page)
{
	/* A page the target unmapped meanwhile (munmap of a page opened for
	 * that very call) is not ours to protect: its watches end as
	 * dangling in lp_pmu_syscall_exit. */
	if (lp_pmu_maps_prot(&t->proc->maps, page) < 0)
		return 0;
	/* Held open for a system call in flight: its lp_pmu_syscall_exit protects it. */
	if (t->proc->watch && lp_pmu_pagecount_get(&((struct pmu_aspace *)t->proc->watch)->held, page) > 0)
		return 0;
	return set_protection(e, t, page, PROT_NONE);
}

/* Give the page the permissions the target believes it has. */
int lp_pmu_page_unprotect(struct pmu_engine *e, struct lp_pmu_thread *t, uint64_t page)
{
	int prot = lp_pmu_maps_prot(&t->proc->maps, page);

	return prot < 0 ? 0 : set_protection(e, t, page, prot);
}

int lp_pmu_dr_apply(struct lp_pmu_thread *t)
{
	uint64_t dr7 = 0;

	for (int i = 0; i < 4; i++)
		if (t->dr_used & (1 << i))
			dr7 |= (1ULL << (2 * i)) | (3ULL << (16 + 4 * i)) | (2ULL << (18 + 4 * i));
	return lp_pmu_sup_dr_set(t, 7, dr7);
}

/* Debug registers for w's line: line/8 aligned 8-byte read/write slots.
 * 1 done, 0 no room (or the line does not fit), LP_E* on error. */
/* Count the reserved watch in: it is live from now on. */
static int commit_watch(struct pmu_engine *e, struct pmu_aspace *as)
{
	if (lp_pmu_watches_commit(&as->watches) < 0)
		return LP_ENOMEM;
	if (lp_pmu_watches_live(&as->watches) > e->st->watches_max)
		e->st->watches_max = lp_pmu_watches_live(&as->watches);
	return 0;
}

static int dr_alloc(struct pmu_engine *e, struct lp_pmu_thread *t, struct lp_pmu_watch *w)
{
	unsigned words = w->size / 8;
	int slots = 0, have = 0, err;

	if (w->size > 32 || t->dr_used < 0)
		return 0;
	for (int i = 0; i < 4 && have < (int)words; i++) {
		if (t->dr_used & (1 << i))
			continue;
		slots |= 1 << i;
		have++;
	}
	if (have < (int)words)
		return 0;
	have = 0;
	for (int i = 0; i < 4; i++) {
		if (!(slots & (1 << i)))
			continue;
		/* 8-byte, read-or-write: catches any access overlapping the word. */
		if ((err = lp_pmu_sup_dr_set(t, i, w->line + 8ULL * (unsigned)have++)) < 0)
			return err;
	}
	t->dr_used |= slots;
	if ((err = lp_pmu_dr_apply(t)) < 0)
		return err;
	w->slots = slots;
	w->dr_thread = t;
	return 1;
}

void lp_pmu_emit_sample(struct pmu_engine *e, struct lp_pmu_sample *s)
{
	if (s->dangling)
		e->st->dangling++;
	if (e->h->on_sample)
		e->h->on_sample(e->h->ctx, s);
}

/* Stop watching cw (a live watch of as). A page watch whose page is in
 * open[0..n_open) (already given the target's permissions for a step)
 * needs no call. */
int lp_pmu_watch_drop(struct pmu_engine *e, struct lp_pmu_thread *t, struct pmu_aspace *as, struct lp_watch *cw,
		      const uint64_t *open, int n_open)
{
	struct lp_pmu_watch w = *lp_pmu_watch_of(&as->watches, cw);
	uint64_t pg = page_of(w.line);
	int err = 0;

	lp_pmu_watches_delete(&as->watches, cw);
	if (w.mech == LP_PMU_WATCH_DR) {
		struct lp_pmu_thread *d = w.dr_thread;

		if (lp_pmu_sup_find(&e->sup, d->tid) == d && d->state == LP_PMU_T_STOPPED) {
			d->dr_used &= ~w.slots;
			err = lp_pmu_dr_apply(d);
		}
	} else if (!page_watched(as, pg)) {
		for (int k = 0; k < n_open; k++)
			if (open[k] == pg)
				return 0;
		err = lp_pmu_page_unprotect(e, t, pg);
	}
	return err;
}

int lp_pmu_watch_remove(struct pmu_engine *e, struct lp_pmu_thread *t, struct pmu_aspace *as, struct lp_watch *w)
{
	return lp_pmu_watch_drop(e, t, as, w, NULL, 0);
}

/* The sample of watch w ends at global clock value end. The image's clock
 * differs from the global one by a constant while t runs, so its end is
 * end - (global now - image now). */
static void sample_end(struct pmu_engine *e, struct lp_pmu_thread *t, struct pmu_aspace *as, struct lp_watch *w,
		       uint64_t end, uint64_t pc, int how)
{
	struct lp_pmu_sample s = lp_pmu_watch_of(&as->watches, w)->s;
	uint64_t g = engine_now(e), l = lp_pmu_image_now(e, t->proc);

	s.end = end;
	s.iend = end - (g - l);
	s.end_pc = pc;
	s.dangling = 0;
	s.ended_by = (uint8_t)how;
	lp_pmu_emit_sample(e, &s);
}

int lp_pmu_watch_end(struct pmu_engine *e, struct lp_pmu_thread *t, struct pmu_aspace *as, struct lp_watch *w,
		     uint64_t end, uint64_t pc, int how)
{
	sample_end(e, t, as, w, end, pc, how);
	return lp_pmu_watch_remove(e, t, as, w);
}

/* The kernel writes each thread's rseq area (cpu id) on nearly every
 * return to user mode; on a PROT_NONE page that write fails and the kernel
 * kills the thread with SIGSEGV (SI_KERNEL). Those pages are never
 * protected. */
int lp_pmu_rseq_page(struct pmu_engine *e, struct lp_pmu_thread *t, uint64_t page)
{
	for (int i = 0; i < e->sup.n; i++) {
		struct lp_pmu_thread *o = e->sup.t[i];
		struct pmu_thread_state *x = o->eng;

		if (o->proc == t->proc && x && x->rseq && ranges_overlap(x->rseq, 32, page, PAGE))
			return 1;
	}
	return 0;
}

/* Watch the line of sample s (its line size: s->line_idx). */
int lp_pmu_watch_start(struct pmu_engine *e, struct lp_pmu_thread *t, const struct lp_pmu_sample *s)
{
	struct pmu_aspace *as = lp_pmu_aspace_get(t->proc);
	struct lp_pmu_watch *w;
	struct lp_watch *prev;
	uint64_t page;
	int r;

	if (!as)
		return lp_seterr(LP_ENOMEM, "out of memory");
	/* One watch per line and size: a line still watched here was touched
	 * by this very reference without its mechanism seeing it, so this
	 * reference is that sample's reuse; end it before watching again. */
	prev = lp_pmu_watches_find(&as->watches, s->addr, e->line[s->line_idx], s->line_idx);
	if (prev) {
		int how = lp_pmu_watch_of(&as->watches, prev)->mech == LP_PMU_WATCH_DR ? LP_PMU_END_DR : LP_PMU_END_PAGE;

		if ((r = lp_pmu_watch_end(e, t, as, prev, s->begin, s->pc, how)) < 0)
			return r;
	}
	if (!(w = lp_pmu_watches_reserve(&as->watches)))
		return LP_ENOMEM;
	w->size = e->line[s->line_idx];
	w->line = s->addr & ~(uint64_t)(w->size - 1);
	w->s = *s;
	/* Debug registers are per thread: only used while the process has
	 * one thread (a clone moves them to pages, see lp_pmu_process_event). */
	if (e->o->watch != LP_PMU_WATCH_PAGE && lp_pmu_aspace_threads(e, t) == 1) {
		r = dr_alloc(e, t, w);
		if (r < 0)
			return r;
		if (r > 0) {
			w->mech = LP_PMU_WATCH_DR;
			return commit_watch(e, as);
		}
	}
	if (e->o->watch == LP_PMU_WATCH_DR) {
		e->st->no_slot++;
		return 0;
	}
	w->mech = LP_PMU_WATCH_PAGE;
	page = page_of(w->line);
	if (lp_pmu_maps_prot(&t->proc->maps, page) < 0 || lp_pmu_rseq_page(e, t, page)) {
		e->st->unwatchable++; /* not a mapped page (vsyscall), or the kernel's */
		return 0;
	}
	r = page_watched(as, page);
	if (commit_watch(e, as) < 0)
		return LP_ENOMEM;
	return r ? 0 : lp_pmu_page_protect(e, t, page);
}

/* The page watch at line size index li of the first line of
 * [addr, addr + size) from *line on, or NULL; *line moves past it. */
static struct lp_watch *next_page_watch(struct pmu_engine *e, struct pmu_aspace *as, uint64_t addr, uint32_t size,
					unsigned li, uint64_t *line)
{
	uint64_t ls = e->line[li], last = size ? (addr + size - 1) & ~(ls - 1) : addr & ~(ls - 1);

	for (; *line <= last; *line += ls) {
		struct lp_watch *w = lp_pmu_watches_find(&as->watches, *line, (uint32_t)ls, li);

		if (w && lp_pmu_watch_of(&as->watches, w)->mech == LP_PMU_WATCH_PAGE) {
			*line += ls;
			return w;
		}
	}
	return NULL;
}

/* Does any page watch's line overlap acc[0..n)? */
int lp_pmu_touches_page_watch(struct pmu_engine *e, struct pmu_aspace *as, const struct lp_pmu_access *acc, int n)
{
	for (int j = 0; as && j < n; j++)
		for (unsigned li = 0; li < e->nlines; li++) {
			uint64_t line = acc[j].addr & ~(uint64_t)(e->line[li] - 1);

			if (next_page_watch(e, as, acc[j].addr, acc[j].size, li, &line))
				return 1;
		}
	return 0;
}

/* Page watches whose lines acc[0..n) touch end at the first touching
 * access; the instruction at pc has retired (t0: the clock before it).
 * Pages in open[0..n_open) already have the target's permissions. */
int lp_pmu_end_touched(struct pmu_engine *e, struct lp_pmu_thread *t, const struct lp_pmu_access *acc, int n,
		       uint64_t t0, uint64_t pc, const uint64_t *open, int n_open)
{
	struct pmu_aspace *as = t->proc->watch;
	int err;

	if (!as)
		return 0;
	/* Access by access: a watch ends at the first access that touches it
	 * (and is gone for the later ones). */
	for (int j = 0; j < n; j++)
		for (unsigned li = 0; li < e->nlines; li++) {
			uint64_t line = acc[j].addr & ~(uint64_t)(e->line[li] - 1);
			struct lp_watch *w;

			while ((w = next_page_watch(e, as, acc[j].addr, acc[j].size, li, &line))) {
				e->st->page_hits++;
				sample_end(e, t, as, w, t0 + (uint64_t)j + 1, pc, LP_PMU_END_PAGE);
				if ((err = lp_pmu_watch_drop(e, t, as, w, open, n_open)) < 0)
					return err;
			}
		}
	return 0;
}
