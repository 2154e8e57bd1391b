/* The pmu backend's engine (pmu-sampler.h): sampling with skid
 * compensation (thesis §3.3.2.1), cache-line watchpoints by debug
 * registers or page protection (§3.4), and the reuse clock (§3.5).
 *
 * Step counter: threads are single-stepped one instruction at a time,
 * round robin, so the clock is one total order of the whole program's
 * references, repeatable run to run. System calls are stepped over
 * synchronously, except those that may block waiting for another thread
 * (futex, wait4, read, ...): those complete in the background while other
 * threads are stepped.
 *
 * Sample start: the counter is armed (2 + 2*MaxSkid) references before the
 * sample point Sp, so a notification up to MaxSkid memory instructions
 * late still stops the thread before Sp; the engine then steps, decoding
 * each instruction, until the instruction holding reference Sp is next,
 * and samples that reference. The watch is set after the instruction ran;
 * a later access of the same instruction to the line (add [m],1: read then
 * write) is a reuse at distance 0, seen from the decoded accesses.
 *
 * Double trap (§3.3.2.2, --sample-start double-trap): the counter is armed
 * at Sp itself; its notification (after skid) comes with the precise pc of
 * the reference that reached Sp (PEBS, or the step counter's emulation of
 * it). An int3 goes in at that pc (the original byte saved; written through
 * /proc/PID/mem, which works on read-only text) and the target resumes;
 * the next thread of that address space to execute the pc traps (SIGTRAP,
 * SI_KERNEL, rip = pc + 1): the byte is restored, rip set back to pc, and
 * the instruction's reference of the event's kind is sampled, as the step
 * path samples (decoded, effective address from the registers). One
 * breakpoint at a time: the next notification removes one that was not
 * hit (the pc never ran again). The engine never sees its int3: code is
 * read with the original byte in its place (prepare), and never stepped:
 * an instruction the engine is about to single-step at the breakpoint (a
 * fault taken before it went in) is its hit (run_insn). A fork child's
 * copy of the text gets the original byte back; exec drops it with the
 * text; a trap of a breakpoint another thread already removed is retried;
 * the target's own int3 traps are delivered unchanged.
 *
 * Page protection is changed by system calls injected through ptrace (the
 * stopped thread jumps to our "syscall; int3" page), not by a preloaded
 * helper: it works for static binaries, needs no socket or thread inside
 * the target, and the permissions change while the target is stopped, so
 * no access can slip between decision and protection (docs/pmu.md). */
#include "pmu-sampler.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/error.h"
#include "common/hash.h"
#include "common/rng.h"
#include "counter.h"
#include "decode.h"
#include "pagecount.h"
#include "supervisor.h"

#define PAGE 4096ULL
#define MAX_UNPROT 256
#define NO_IMAGE UINT32_MAX

struct watch {
	uint64_t line;   /* first byte of the watched line */
	uint32_t size;   /* its line size */
	int mech;        /* LP_PMU_WATCH_DR or LP_PMU_WATCH_PAGE */
	int slots;       /* DR: bitmask of debug registers */
	struct lp_pmu_thread *dr_thread;
	struct lp_pmu_sample s;
};

/* Engine state of one address space = one process image. */
struct aspace {
	struct watch *w;   /* live watches, any order */
	size_t n, cap;
	struct lp_pmu_pagecount pc; /* pages with page watches */
	/* Watched pages held open for system calls in flight (one count per
	 * thread whose call needs the page): never protected meanwhile. */
	struct lp_pmu_pagecount held;
	uint32_t image;    /* its number */
	uint32_t nthreads; /* image thread numbers handed out */
	uint64_t *thread_refs; /* references of each image thread that is gone */
	size_t tr_cap;
	uint64_t dead;     /* references of its threads that are gone */
	int exited, status, exec;
};

struct ethread {
	struct lp_pmu_insn insn;
	struct lp_pmu_access acc[LP_PMU_MAX_ACC];
	int n;
	int sample_k;      /* index into acc of the reference to sample, -1 */
	int pending_sig;   /* a signal of the target's to deliver at next resume */
	uint64_t sys_nr, sys_args[6];
	uint64_t unprot[MAX_UNPROT]; /* pages opened around a system call */
	int n_unprot;
	int sys_async;
	uint64_t rseq; /* the thread's registered rseq area, 0 if none */
	int fake;      /* acc[0] stands for an undecoded instruction's fault */
	int in_segv;   /* running the target's SIGSEGV handler (SIGSEGV blocked) */
	uint32_t itid; /* thread number in its image */
	uint32_t image; /* its image */
	uint64_t refs; /* stepping counters: references it made (all images) */
	uint64_t base; /* its references before it joined its current image */
	int paused;    /* stopped by world_stop, resumed by world_release */
	uint64_t stale_pc, stale_addr, stale_gen; /* last SIGSEGV retried as stale */
	uint8_t op0;   /* first byte of the prepared instruction (our int3 taken out) */
	siginfo_t psi; /* the siginfo of pending_sig when it must be kept (an int3's) */
	int have_psi;
	int dt;        /* the pending sample_k is a double trap's: no arm_next */
	uint64_t dt_trigger, dt_armed;
};

/* The double trap's breakpoint. */
struct bkpt {
	struct lp_pmu_proc *proc; /* the address space whose text holds it */
	uint64_t pc;
	uint8_t orig;             /* the byte the int3 replaced */
	uint8_t kind;             /* the event's: which reference of the instruction to sample */
	int active;
	uint64_t trigger, armed;  /* see lp_pmu_sample */
};

#define DT_OLD 16

struct engine {
	const struct lp_pmu_options *o;
	struct lp_pmu_stats *st;
	struct lp_pmu_sup sup;
	struct lp_pmu_counter *c;
	struct lp_pmu_decoder *dec;
	struct lp_rng rng;
	double p;          /* sampling probability per reference */
	uint64_t sp;       /* next sample point (clock value) */
	int seeking;       /* notified: stepping to sp */
	pid_t seek_tid;    /* pmu counter: the seek goes on when this thread stops next */
	unsigned line[LP_PMU_MAX_LINE_SIZES];
	unsigned nlines;
	uint32_t next_image;
	int rr;
	/* Free-running counter: the address space whose other threads
	 * world_stop stopped, while a page of it is open for one thread. */
	struct lp_pmu_proc *world;
	uint64_t prot_gen; /* mprotect calls of ours so far */
	int err;           /* first error inside a callback that cannot return one */
	struct bkpt bp;        /* double trap: the breakpoint in place, if active */
	struct bkpt old[DT_OLD]; /* breakpoints removed lately (stale traps) */
	unsigned n_old;
	struct lp_pmu_xsave_layout xlayout;
	struct lp_pmu_vregs vregs;
	uint8_t xsave[16384];
};

static int release_holds(struct engine *e, struct lp_pmu_thread *t, int reprotect);
static int dt_overflow(struct engine *e, struct lp_pmu_thread *t);
static int dt_take(struct engine *e, struct lp_pmu_thread *t, int trapped);

static uint64_t now(struct engine *e)
{
	return e->c->ops->time(e->c);
}

static struct aspace *as_of(struct lp_pmu_proc *p)
{
	if (!p->watch)
		p->watch = calloc(1, sizeof(struct aspace));
	return p->watch;
}

static struct ethread *et(struct lp_pmu_thread *t)
{
	if (!t->eng) {
		struct ethread *x = calloc(1, sizeof(struct ethread));

		if (x)
			x->sample_k = -1;
		t->eng = x;
	}
	return t->eng;
}

static int overlaps(uint64_t a, uint64_t size, uint64_t s, uint64_t len)
{
	return a < s + len && s < a + (size ? size : 1);
}

static uint64_t page_of(uint64_t a)
{
	return a & ~(PAGE - 1);
}

/* ---- the references of threads and images (per-image clocks) ---------- */

/* References thread t made since it joined its current image. */
static uint64_t thread_refs(struct engine *e, struct lp_pmu_thread *t)
{
	struct ethread *x = t->eng;
	uint64_t total;

	if (!x)
		return 0;
	total = e->c->ops->stepping ? x->refs : e->c->ops->thread_time(e->c, t->tid);
	return total > x->base ? total - x->base : 0;
}

/* The clock of t's image: the references of its threads only. */
static uint64_t image_now(struct engine *e, struct lp_pmu_proc *p)
{
	struct aspace *as = p->watch;
	uint64_t sum = as ? as->dead : 0;

	for (int i = 0; i < e->sup.n; i++)
		if (e->sup.t[i]->proc == p)
			sum += thread_refs(e, e->sup.t[i]);
	return sum;
}

/* Give t its place in image p (a new thread, or the one that exec'd). */
static void join_image(struct engine *e, struct lp_pmu_thread *t, struct aspace *as)
{
	struct ethread *x = et(t);

	if (!x || !as)
		return;
	x->itid = as->nthreads++;
	x->image = as->image;
	x->base = e->c->ops->stepping ? x->refs : e->c->ops->thread_time(e->c, t->tid);
}

/* Thread t leaves its image (exit, or exec into a new one): keep its count. */
static void leave_image(struct engine *e, struct lp_pmu_thread *t)
{
	struct aspace *as = t->proc ? t->proc->watch : NULL;
	struct ethread *x = t->eng;
	uint64_t r;

	if (!as || !x)
		return;
	r = thread_refs(e, t);
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
static int image_start(struct engine *e, struct lp_pmu_proc *p, struct lp_pmu_thread *t, uint32_t parent,
		       int ppid, int exec)
{
	struct aspace *as = as_of(p);
	struct lp_pmu_image img;

	if (!as || !et(t))
		return lp_seterr(LP_ENOMEM, "out of memory");
	as->image = e->next_image++;
	join_image(e, t, as);
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
	if (e->o->on_image)
		e->o->on_image(e->o->ctx, &img);
	if (e->o->on_maps)
		e->o->on_maps(e->o->ctx, as->image, p->pid);
	return 0;
}

/* ---- page protection ----------------------------------------------- */

static int page_watched(struct aspace *as, uint64_t page)
{
	return as && lp_pmu_pagecount_get(&as->pc, page) > 0;
}

/* A new watch slot (not yet counted in as->n). */
static struct watch *w_new(struct engine *e, struct aspace *as)
{
	if (as->n == as->cap) {
		size_t cap = as->cap ? 2 * as->cap : 64;
		struct watch *v = realloc(as->w, cap * sizeof(*v));

		if (!v) {
			lp_seterr(LP_ENOMEM, "out of memory");
			return NULL;
		}
		as->w = v;
		as->cap = cap;
	}
	memset(&as->w[as->n], 0, sizeof(as->w[0]));
	return &as->w[as->n];
}

/* Count w (as->w[as->n]) in: it is live from now on. */
static int w_commit(struct engine *e, struct aspace *as)
{
	struct watch *w = &as->w[as->n];

	if (w->mech == LP_PMU_WATCH_PAGE && lp_pmu_pagecount_add(&as->pc, page_of(w->line)) < 0)
		return LP_ENOMEM;
	as->n++;
	if (as->n > e->st->watches_max)
		e->st->watches_max = as->n;
	return 0;
}

/* Forget watch i (the caller restores page permissions if needed). */
static void w_del(struct aspace *as, size_t i)
{
	if (as->w[i].mech == LP_PMU_WATCH_PAGE)
		lp_pmu_pagecount_remove(&as->pc, page_of(as->w[i].line));
	as->w[i] = as->w[--as->n];
}

static int set_prot(struct engine *e, struct lp_pmu_thread *t, uint64_t page, int prot)
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

static int protect(struct engine *e, struct lp_pmu_thread *t, uint64_t page)
{
	/* A page the target unmapped meanwhile (munmap of a page opened for
	 * that very call) is not ours to protect: its watches end as
	 * dangling in sys_post. */
	if (lp_pmu_maps_prot(&t->proc->maps, page) < 0)
		return 0;
	/* Held open for a system call in flight: its sys_post protects it. */
	if (t->proc->watch && lp_pmu_pagecount_get(&((struct aspace *)t->proc->watch)->held, page) > 0)
		return 0;
	return set_prot(e, t, page, PROT_NONE);
}

/* Give the page the permissions the target believes it has. */
static int unprotect(struct engine *e, struct lp_pmu_thread *t, uint64_t page)
{
	int prot = lp_pmu_maps_prot(&t->proc->maps, page);

	return prot < 0 ? 0 : set_prot(e, t, page, prot);
}

/* ---- watches ----------------------------------------------------------- */

/* Threads of t's address space (threads, and vfork or CLONE_VM children). */
static int nthreads(struct engine *e, struct lp_pmu_thread *t)
{
	int n = 0;

	for (int i = 0; i < e->sup.n; i++)
		n += e->sup.t[i]->proc == t->proc;
	return n;
}

static int dr_apply(struct lp_pmu_thread *t)
{
	uint64_t dr7 = 0;

	for (int i = 0; i < 4; i++)
		if (t->dr_used & (1 << i))
			dr7 |= (1ULL << (2 * i)) | (3ULL << (16 + 4 * i)) | (2ULL << (18 + 4 * i));
	return lp_pmu_sup_dr_set(t, 7, dr7);
}

/* Debug registers for w's line: line/8 aligned 8-byte read/write slots.
 * 1 done, 0 no room (or the line does not fit), LP_E* on error. */
static int dr_alloc(struct engine *e, struct lp_pmu_thread *t, struct watch *w)
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
	if ((err = dr_apply(t)) < 0)
		return err;
	w->slots = slots;
	w->dr_thread = t;
	return 1;
}

static void emit(struct engine *e, struct lp_pmu_sample *s)
{
	if (s->dangling)
		e->st->dangling++;
	if (e->o->on_sample)
		e->o->on_sample(e->o->ctx, s);
}

/* Stop watching as->w[i]. A page watch whose page is in open[0..n_open)
 * (already given the target's permissions for a step) needs no call. */
static int watch_drop(struct engine *e, struct lp_pmu_thread *t, struct aspace *as, size_t i,
		      const uint64_t *open, int n_open)
{
	struct watch w = as->w[i];
	uint64_t pg = page_of(w.line);
	int err = 0;

	w_del(as, i);
	if (w.mech == LP_PMU_WATCH_DR) {
		struct lp_pmu_thread *d = w.dr_thread;

		if (lp_pmu_sup_find(&e->sup, d->tid) == d && d->state == LP_PMU_T_STOPPED) {
			d->dr_used &= ~w.slots;
			err = dr_apply(d);
		}
	} else if (!page_watched(as, pg)) {
		for (int k = 0; k < n_open; k++)
			if (open[k] == pg)
				return 0;
		err = unprotect(e, t, pg);
	}
	return err;
}

static int watch_remove(struct engine *e, struct lp_pmu_thread *t, struct aspace *as, size_t i)
{
	return watch_drop(e, t, as, i, NULL, 0);
}

/* The sample of watch i ends at global clock value end. The image's clock
 * differs from the global one by a constant while t runs, so its end is
 * end - (global now - image now). */
static void sample_end(struct engine *e, struct lp_pmu_thread *t, struct aspace *as, size_t i, uint64_t end,
		       uint64_t pc, int how)
{
	struct lp_pmu_sample s = as->w[i].s;
	uint64_t g = now(e), l = image_now(e, t->proc);

	s.end = end;
	s.iend = end - (g - l);
	s.end_pc = pc;
	s.dangling = 0;
	s.ended_by = (uint8_t)how;
	emit(e, &s);
}

static int watch_end(struct engine *e, struct lp_pmu_thread *t, struct aspace *as, size_t i, uint64_t end,
		     uint64_t pc, int how)
{
	sample_end(e, t, as, i, end, pc, how);
	return watch_remove(e, t, as, i);
}

/* The kernel writes each thread's rseq area (cpu id) on nearly every
 * return to user mode; on a PROT_NONE page that write fails and the kernel
 * kills the thread with SIGSEGV (SI_KERNEL). Those pages are never
 * protected. */
static int rseq_page(struct engine *e, struct lp_pmu_thread *t, uint64_t page)
{
	for (int i = 0; i < e->sup.n; i++) {
		struct lp_pmu_thread *o = e->sup.t[i];
		struct ethread *x = o->eng;

		if (o->proc == t->proc && x && x->rseq && overlaps(x->rseq, 32, page, PAGE))
			return 1;
	}
	return 0;
}

/* Watch the line of sample s (its line size: s->line_idx). */
static int watch_start(struct engine *e, struct lp_pmu_thread *t, const struct lp_pmu_sample *s)
{
	struct aspace *as = as_of(t->proc);
	struct watch *w;
	uint64_t page;
	int r;

	if (!as || !(w = w_new(e, as)))
		return lp_seterr(LP_ENOMEM, "out of memory");
	w->size = e->line[s->line_idx];
	w->line = s->addr & ~(uint64_t)(w->size - 1);
	w->s = *s;
	/* Debug registers are per thread: only used while the process has
	 * one thread (a clone moves them to pages, see on_event). */
	if (e->o->watch != LP_PMU_WATCH_PAGE && nthreads(e, t) == 1) {
		r = dr_alloc(e, t, w);
		if (r < 0)
			return r;
		if (r > 0) {
			w->mech = LP_PMU_WATCH_DR;
			return w_commit(e, as);
		}
	}
	if (e->o->watch == LP_PMU_WATCH_DR) {
		e->st->no_slot++;
		return 0;
	}
	w->mech = LP_PMU_WATCH_PAGE;
	page = page_of(w->line);
	if (lp_pmu_maps_prot(&t->proc->maps, page) < 0 || rseq_page(e, t, page)) {
		e->st->unwatchable++; /* not a mapped page (vsyscall), or the kernel's */
		return 0;
	}
	r = page_watched(as, page);
	if (w_commit(e, as) < 0)
		return LP_ENOMEM;
	return r ? 0 : protect(e, t, page);
}

/* Does any page watch's line overlap acc[0..n)? */
static int touches_page_watch(struct engine *e, struct aspace *as, const struct lp_pmu_access *acc, int n)
{
	for (size_t i = 0; as && i < as->n; i++)
		for (int j = 0; j < n; j++)
			if (as->w[i].mech == LP_PMU_WATCH_PAGE &&
			    overlaps(acc[j].addr, acc[j].size, as->w[i].line, as->w[i].size))
				return 1;
	return 0;
}

/* Page watches whose lines acc[0..n) touch end at the first touching
 * access; the instruction at pc has retired (t0: the clock before it).
 * Pages in open[0..n_open) already have the target's permissions. */
static int end_touched(struct engine *e, struct lp_pmu_thread *t, const struct lp_pmu_access *acc, int n,
		       uint64_t t0, uint64_t pc, const uint64_t *open, int n_open)
{
	struct aspace *as = t->proc->watch;
	int err;

	if (!as)
		return 0;
	for (size_t i = 0; i < as->n;) {
		struct watch *w = &as->w[i];
		int hit = -1;

		if (w->mech != LP_PMU_WATCH_PAGE) {
			i++;
			continue;
		}
		for (int j = 0; j < n && hit < 0; j++)
			if (overlaps(acc[j].addr, acc[j].size, w->line, w->size))
				hit = j;
		if (hit < 0) {
			i++;
			continue;
		}
		e->st->page_hits++;
		sample_end(e, t, as, i, t0 + (uint64_t)hit + 1, pc, LP_PMU_END_PAGE);
		if ((err = watch_drop(e, t, as, i, open, n_open)) < 0)
			return err;
	}
	return 0;
}

/* ---- sampling --------------------------------------------------------- */

static int arm_next(struct engine *e)
{
	/* The double trap arms at Sp itself: the pc comes from the record. */
	uint64_t early = e->o->sample_start == LP_PMU_START_DOUBLE_TRAP ? 0 :
			 2 + (uint64_t)LP_PMU_REFS_PER_INSN * e->o->max_skid;

	e->sp += lp_rng_geometric(&e->rng, e->p);
	e->seeking = 0;
	return e->c->ops->arm(e->c, e->sp > early ? e->sp - early : 0);
}

/* Before an instruction runs: registers, decoding, accesses, and whether
 * it holds the sample point. */
static int prepare(struct engine *e, struct lp_pmu_thread *t, struct user_regs_struct *r)
{
	struct ethread *x = et(t);
	uint8_t code[LP_PMU_MAX_INSN];
	long got;
	int err;

	if (!x)
		return lp_seterr(LP_ENOMEM, "out of memory");
	if ((err = lp_pmu_sup_getregs(t, r)) < 0)
		return err;
	got = lp_pmu_sup_read(t->proc, r->rip, code, sizeof(code));
	/* Our int3 is not the program's: decode the byte it replaced. */
	if (e->bp.active && e->bp.proc == t->proc && got > 0 && e->bp.pc >= r->rip && e->bp.pc < r->rip + (uint64_t)got)
		code[e->bp.pc - r->rip] = e->bp.orig;
	x->op0 = got > 0 ? code[0] : 0;
	x->n = 0;
	x->sample_k = -1;
	if (got <= 0 || lp_pmu_decode(e->dec, code, (size_t)got, r->rip, &x->insn) < 0) {
		/* Undecodable: the CPU will fault on it and the target gets
		 * its signal; it makes no reference. */
		memset(&x->insn, 0, sizeof(x->insn));
		x->insn.pc = r->rip;
		e->st->undecoded++;
		return 0;
	}
	if (x->insn.flags & LP_PMU_INSN_VSIB) {
		/* A gather or scatter: its element addresses are in the
		 * vector registers. */
		long len = lp_pmu_sup_getxstate(t, e->xsave, sizeof(e->xsave));

		if (len < 0 || lp_pmu_vregs_parse(e->xsave, (size_t)len, &e->xlayout, &e->vregs) < 0)
			return len < 0 ? (int)len : lp_seterr(LP_EIO, "cannot read the vector registers of thread %d",
								 (int)t->tid);
		x->n = lp_pmu_insn_accesses(&x->insn, r, &e->vregs, x->acc);
		return 0;
	}
	x->n = lp_pmu_insn_accesses(&x->insn, r, NULL, x->acc);
	return 0;
}

/* Start the sample of reference k of t's instruction (t0 references
 * before it): one watch per line size, unless the same instruction
 * touches that line again (add [m],1: read then write). */
static int sample_start(struct engine *e, struct lp_pmu_thread *t, uint64_t t0, int k)
{
	struct ethread *x = t->eng;
	struct lp_pmu_access *a = &x->acc[k];
	uint64_t lag = now(e) - image_now(e, t->proc);
	int err;

	e->st->samples++;
	for (unsigned li = 0; li < e->nlines; li++) {
		struct lp_pmu_sample s = { .begin = t0 + (uint64_t)k + 1, .pc = x->insn.pc, .addr = a->addr,
					   .size = a->size, .kind = a->kind, .line_idx = (uint8_t)li,
					   .tid = t->num, .dangling = 1, .image = as_of(t->proc)->image,
					   .itid = x->itid };
		uint64_t line = a->addr & ~(uint64_t)(e->line[li] - 1);
		int same = -1;

		s.ibegin = s.begin - lag;
		if (x->dt) {
			s.trigger = x->dt_trigger;
			s.armed = x->dt_armed;
		}
		for (int j = k + 1; j < x->n && same < 0; j++)
			if (overlaps(x->acc[j].addr, x->acc[j].size, line, e->line[li]))
				same = j;
		if (same >= 0) {
			s.dangling = 0;
			s.end = t0 + (uint64_t)same + 1;
			s.iend = s.end - lag;
			s.end_pc = x->insn.pc;
			s.ended_by = LP_PMU_END_SAME;
			e->st->same_hits++;
			emit(e, &s);
		} else if ((err = watch_start(e, t, &s)) < 0) {
			return err;
		}
	}
	return 0;
}

/* An instruction of t retired with t0 references before it. */
static int retired(struct engine *e, struct lp_pmu_thread *t, uint64_t t0)
{
	struct ethread *x = t->eng;
	int err;

	if (e->o->on_ref) {
		uint32_t image = as_of(t->proc)->image;

		for (int j = 0; j < x->n; j++) {
			struct lp_ref r = { x->acc[j].addr, x->insn.pc, x->acc[j].size, t->num, x->acc[j].kind };

			e->o->on_ref(e->o->ctx, t0 + (uint64_t)j + 1, image, x->itid, &r);
		}
	}
	/* Debug-register hits of this instruction (for xsave/xrstor, whose
	 * decoded area may be larger than what the CPU touched, the decoding
	 * decides, as for page watches). */
	if (t->dr_used > 0) {
		uint64_t dr6 = 0;
		int wide = (x->insn.flags & LP_PMU_INSN_WIDE) != 0;

		if ((err = lp_pmu_sup_dr_get(t, 6, &dr6)) < 0)
			return err;
		if ((dr6 & 0xf) || wide) {
			struct aspace *as = t->proc->watch;

			if (dr6 & 0xf) {
				lp_pmu_sup_dr_set(t, 6, 0);
				e->c->ops->note(e->c, t->tid, LP_PMU_NOTE_TRAP);
			}
			for (size_t i = 0; as && i < as->n;) {
				struct watch *w = &as->w[i];
				int hit = -1;

				if (w->mech != LP_PMU_WATCH_DR) {
					i++;
					continue;
				}
				for (int j = 0; j < x->n && hit < 0; j++)
					if (overlaps(x->acc[j].addr, x->acc[j].size, w->line, w->size))
						hit = j;
				if (!(w->slots & (int)dr6) && !(wide && hit >= 0)) {
					i++;
					continue;
				}
				if (hit < 0) {
					e->st->decode_misses++;
					hit = x->n > 0 ? x->n - 1 : 0;
				}
				e->st->dr_hits++;
				if ((err = watch_end(e, t, as, i, t0 + (uint64_t)hit + 1, x->insn.pc, LP_PMU_END_DR)) < 0)
					return err;
			}
		}
	}
	/* Usually one sample point per instruction; a short gap can put the
	 * next one in the same instruction (read and write of add [m],1). */
	while (x->sample_k >= 0) {
		if ((err = sample_start(e, t, t0, x->sample_k)) < 0)
			return err;
		if (x->dt) {
			/* A double trap's: the next point is armed already. */
			x->dt = 0;
			x->sample_k = -1;
			break;
		}
		if ((err = arm_next(e)) < 0)
			return err;
		x->sample_k = e->sp <= t0 + (uint64_t)x->n ? (int)(e->sp - t0 - 1) : -1;
	}
	x->refs += (unsigned)x->n;
	{
		uint64_t writes = 0, addrs[LP_PMU_MAX_ACC];

		for (int j = 0; j < x->n; j++) {
			writes |= (uint64_t)(x->acc[j].kind == LP_REF_WRITE) << j;
			addrs[j] = x->acc[j].addr;
		}
		e->c->ops->retired(e->c, t->tid, (unsigned)x->n, x->insn.pc, writes, addrs);
	}
	if (!e->seeking && e->c->ops->pending(e->c, t->tid, NULL) == 1) {
		if (e->o->sample_start == LP_PMU_START_DOUBLE_TRAP)
			return dt_overflow(e, t);
		e->seeking = 1;
	}
	return 0;
}

/* Mark the sampled access if this instruction holds the sample point. */
static void check_point(struct engine *e, struct lp_pmu_thread *t, uint64_t t0)
{
	struct ethread *x = t->eng;

	if (!e->seeking)
		return;
	if (e->sp <= t0) {
		/* The notification came after the point: more skid than
		 * MaxSkid. Skip this sample rather than bias the next. */
		e->st->missed++;
		arm_next(e);
		return;
	}
	if (e->sp <= t0 + (uint64_t)x->n)
		x->sample_k = (int)(e->sp - t0 - 1);
	else
		e->st->skid_steps++;
}

/* ---- threads that go ------------------------------------------------------ */

/* A thread leaves its address space (supervisor hook): keep its
 * references in its image; a thread that is dropped is no longer counted.
 * An exec by the last thread of an image ends that image by exec. */
static void thread_leave(void *ctx, struct lp_pmu_thread *t, int gone)
{
	struct engine *e = ctx;
	struct aspace *as = t->proc->watch;

	leave_image(e, t);
	release_holds(e, t, 0); /* its call will never return: nothing to protect with */
	if (!gone && as && t->proc->refs == 1)
		as->exec = 1;
	if (gone)
		e->c->ops->detach(e->c, t->tid);
}

/* An EXIT event: the image records its process's status (the leader's
 * exit is reported last), then the thread is dropped. */
static void thread_exit(struct engine *e, struct lp_pmu_ev *ev)
{
	struct lp_pmu_thread *t = ev->child;
	struct aspace *as = t->proc ? t->proc->watch : NULL;

	if (as && t->tid == t->proc->pid) {
		as->exited = 1;
		as->status = ev->status;
	}
	lp_pmu_sup_forget(&e->sup, t);
}

/* ---- stepping one thread ---------------------------------------------- */

/* A signal stop met while t is stepped: the target's waits for the next
 * resume, the counter's is noted (t->notified) for loop_free. */
static void note_signal(struct engine *e, struct lp_pmu_thread *t, const struct lp_pmu_ev *ev)
{
	if (e->c->ops->owns(e->c, &ev->si)) {
		t->notified = 1;
		t->notified_si = ev->si;
	} else {
		et(t)->pending_sig = ev->sig;
	}
}

/* Step t once and wait for that step. Returns 1 done (SIGTRAP), 2 a
 * SIGSEGV stopped it instead, 0 the thread is gone, or LP_E*. Other
 * signals that arrive meanwhile are kept for the target. */
static int step_sync(struct engine *e, struct lp_pmu_thread *t, int sig, siginfo_t *si)
{
	struct lp_pmu_ev ev;
	struct ethread *x = t->eng;
	int r, err;

	if (x && x->have_psi) {
		if (sig == x->psi.si_signo)
			ptrace(PTRACE_SETSIGINFO, t->tid, 0, &x->psi);
		x->have_psi = 0;
	}
	if ((err = lp_pmu_sup_resume(t, LP_PMU_STEP, sig)) < 0)
		return err;
	e->st->steps++;
	for (;;) {
		r = lp_pmu_sup_wait(&e->sup, t->tid, &ev, 0);
		if (r < 0)
			return r;
		if (ev.kind == LP_PMU_EV_EXIT) {
			thread_exit(e, &ev);
			return 0;
		}
		if (ev.kind == LP_PMU_EV_TRAP) {
			*si = ev.si;
			return 1;
		}
		if (ev.kind == LP_PMU_EV_SIGNAL && ev.sig == SIGSEGV) {
			*si = ev.si;
			return 2;
		}
		/* A signal for the target waits for the next resume; an
		 * overflow notification is noted for the free-running loop. */
		if (ev.kind == LP_PMU_EV_SIGNAL)
			note_signal(e, t, &ev);
		/* The step has not happened yet: ask again. */
		if ((err = lp_pmu_sup_resume(t, LP_PMU_STEP, 0)) < 0)
			return err;
	}
}

/* ---- one page open for one thread (free-running counter) --------------- */

/* A watched page given the target's permissions is open for every thread
 * of the address space, not only for the one whose access is being
 * single-stepped: another thread touching a watched line on it meanwhile
 * would not fault, and its sample would end at a later reuse. With the
 * step counter nothing else runs (every thread is stepped by us, one
 * instruction at a time). With a free-running counter the other threads
 * of the address space (threads, vfork and CLONE_VM children: all that
 * share t->proc) are stopped first with PTRACE_INTERRUPT and resumed once
 * the page is closed (world_release). Only threads that can execute
 * instructions are stopped: one between its syscall-entry and -exit stops
 * (sys_async) stops by itself at the exit stop, which is not handled
 * before the page is closed. A thread that stops for a reason of its own
 * before our interrupt (a signal, a system call, an event, its exit) keeps
 * that stop: the supervisor stashes it and the main loop handles it later
 * as if it had come then. Forked children have their own memory: nothing
 * to stop. Single-threaded address spaces pay nothing. */
static int world_stop(struct engine *e, struct lp_pmu_thread *t)
{
	if (e->c->ops->stepping || e->world)
		return 0;
	e->world = t->proc;
	for (int i = 0; i < e->sup.n; i++) {
		struct lp_pmu_thread *o = e->sup.t[i];
		struct ethread *x = et(o);
		int r;

		if (o == t || o->proc != t->proc || o->state != LP_PMU_T_RUNNING || !x || x->sys_async)
			continue;
		if ((r = lp_pmu_sup_interrupt(&e->sup, o)) < 0)
			return r;
		x->paused = r == 1;
		e->st->world_stops++;
	}
	return 0;
}

/* Resume the threads world_stop stopped, as they were: running freely
 * with system-call stops, no signal (a signal pending for one of them is
 * delivered at its next stop). One that died meanwhile (a kill, or an
 * exec by another thread) is reported by waitpid later. */
static void world_release(struct engine *e)
{
	if (!e->world)
		return;
	for (int i = 0; i < e->sup.n; i++) {
		struct lp_pmu_thread *o = e->sup.t[i];
		struct ethread *x = o->eng;

		if (!x || !x->paused)
			continue;
		x->paused = 0;
		if (ptrace(PTRACE_SYSCALL, o->tid, 0, 0) == 0)
			o->state = LP_PMU_T_RUNNING;
	}
	e->world = NULL;
}

static int is_our_page(struct lp_pmu_thread *t, uint64_t addr)
{
	struct aspace *as = t->proc->watch;

	return as && page_watched(as, addr & ~(PAGE - 1));
}

static int addr_in(const struct lp_pmu_access *acc, int n, uint64_t addr)
{
	for (int j = 0; j < n; j++)
		if (addr >= acc[j].addr && addr < acc[j].addr + (acc[j].size ? acc[j].size : 1))
			return 1;
	return 0;
}

static int page_in(const uint64_t *pages, int n, uint64_t addr)
{
	for (int i = 0; i < n; i++)
		if (pages[i] == (addr & ~(PAGE - 1)))
			return 1;
	return 0;
}

/* A gather or scatter can trap (single-step) before it is complete,
 * when the hardware suspended it (on a page fault the kernel handled, for
 * one): its rip stays on it and the mask has the elements done cleared.
 * Then only those elements retired; the rest are decoded again from the
 * new mask at the next step, as a new execution. */
static int gather_partial(struct engine *e, struct lp_pmu_thread *t, uint64_t t0)
{
	struct ethread *x = t->eng;
	struct lp_pmu_access after[LP_PMU_MAX_ACC];
	struct user_regs_struct r;
	char used[LP_PMU_MAX_ACC] = { 0 };
	long len;
	int n_after, n = 0, err;

	if ((err = lp_pmu_sup_getregs(t, &r)) < 0)
		return err;
	if (r.rip != x->insn.pc)
		return 0;
	if ((len = lp_pmu_sup_getxstate(t, e->xsave, sizeof(e->xsave))) < 0)
		return (int)len;
	if (lp_pmu_vregs_parse(e->xsave, (size_t)len, &e->xlayout, &e->vregs) < 0)
		return lp_seterr(LP_EIO, "cannot read the vector registers of thread %d", (int)t->tid);
	n_after = lp_pmu_insn_accesses(&x->insn, &r, &e->vregs, after);
	/* Done = planned before and no longer planned (a multiset). */
	for (int j = 0; j < x->n; j++) {
		int left = 0;

		for (int k = 0; k < n_after && !left; k++)
			if (!used[k] && after[k].addr == x->acc[j].addr && after[k].kind == x->acc[j].kind)
				used[k] = left = 1;
		if (!left)
			x->acc[n++] = x->acc[j];
	}
	x->n = n;
	e->st->partial++;
	/* The sample point may lie in what is left: look again. */
	x->sample_k = e->seeking && e->sp > t0 && e->sp <= t0 + (uint64_t)n ? (int)(e->sp - t0 - 1) : -1;
	return 0;
}

/* Give the watched pages that acc[0..n) touch the target's permissions,
 * adding them to opened[]. */
static int open_pages(struct engine *e, struct lp_pmu_thread *t, const struct lp_pmu_access *acc, int n,
		      uint64_t *opened, int *n_opened)
{
	struct aspace *as = t->proc->watch;
	int err;

	for (int j = 0; as && j < n; j++) {
		for (uint64_t pg = acc[j].addr & ~(PAGE - 1); pg < acc[j].addr + acc[j].size; pg += PAGE) {
			if (!page_watched(as, pg) || page_in(opened, *n_opened, pg) || *n_opened == 2 * LP_PMU_MAX_ACC)
				continue;
			if ((err = world_stop(e, t)) < 0 || (err = unprotect(e, t, pg)) < 0)
				return err;
			opened[(*n_opened)++] = pg;
		}
	}
	return 0;
}

/* Does acc[0..n) touch a watched page held open for a system call in
 * flight (another thread's, blocked in the kernel)? Such an access does
 * not fault: the decoding finds the reuse. */
static int touches_held(struct aspace *as, const struct lp_pmu_access *acc, int n)
{
	if (!as || !as->held.n)
		return 0;
	for (int j = 0; j < n; j++)
		for (uint64_t pg = page_of(acc[j].addr); pg < acc[j].addr + (acc[j].size ? acc[j].size : 1); pg += PAGE)
			if (lp_pmu_pagecount_get(&as->held, pg) > 0 && page_watched(as, pg))
				return 1;
	return 0;
}

/* Run t's prepared instruction, handling our page faults; count it.
 *
 * A watched line is reused when the instruction touching it *retires*.
 * An instruction that faults on one of our pages may also fault with the
 * target's own permissions (a program that mprotects its pages and
 * catches SIGSEGV): then it did not execute, the target's handler runs
 * first, and the reuse is the instruction's later, successful execution.
 * So samples are ended only after the step with the pages open has
 * completed. */
static int run_insn(struct engine *e, struct lp_pmu_thread *t, int sig)
{
	struct ethread *x = t->eng;
	uint64_t t0 = now(e);
	uint64_t opened[2 * LP_PMU_MAX_ACC];
	int n_opened = 0, ours = 0, hit = 0, r, err;
	siginfo_t si;

	/* Our int3 is in memory at this instruction (prepare decoded the
	 * byte it replaced): a step would run the int3, not the instruction,
	 * and the thread would go on one byte into it. With a free-running
	 * counter this happens when a breakpoint goes in (another thread's
	 * notification) at the instruction of a fault not handled yet: the
	 * instruction's next execution since the breakpoint went in is this
	 * one, so it is the breakpoint's hit, taken without the trap. (With a
	 * signal to deliver the step enters the handler first: the step
	 * counter's dt_step_hit lets it trap later.) */
	if (!sig && e->bp.active && e->bp.proc == t->proc && x->insn.pc == e->bp.pc) {
		e->st->dt_stepped++;
		return dt_take(e, t, 0);
	}
	check_point(e, t, t0);
	/* Inside the target's SIGSEGV handler, and for xsave/xrstor (whose
	 * decoded access is the largest area: the hardware may not touch the
	 * watched line, or even its page), the reuse is taken from the
	 * decoding: the pages are opened before the access. */
	if ((x->in_segv || (x->insn.flags & LP_PMU_INSN_WIDE)) && t->proc->watch) {
		/* (In the handler a fault of ours would make the kernel reset
		 * it to the default: a forced SIGSEGV while SIGSEGV is
		 * blocked.) */
		if ((err = open_pages(e, t, x->acc, x->n, opened, &n_opened)) < 0)
			return err;
		ours = n_opened > 0;
	}
	/* A page held open for another thread's system call does not fault:
	 * the reuse is taken from the decoding, as above. */
	if (touches_held(t->proc->watch, x->acc, x->n)) {
		ours = 1;
		e->st->held_checks++;
	}
	r = step_sync(e, t, sig, &si);
	if (r <= 0) {
		world_release(e);
		return r; /* t may be gone: touch nothing of it */
	}
	if (r == 2 && is_our_page(t, (uint64_t)si.si_addr)) {
		/* Ours: run the access with the target's permissions. */
		ours = 1;
		e->c->ops->note(e->c, t->tid, LP_PMU_NOTE_FAULT);
		if (x->n == 0 && !x->insn.len) {
			/* Undecoded instruction: the fault address is all we know. */
			x->acc[0] = (struct lp_pmu_access){ (uint64_t)si.si_addr, 1, LP_REF_READ };
			x->n = 1;
			x->fake = 1;
		}
		if (!addr_in(x->acc, x->n, (uint64_t)si.si_addr))
			e->st->decode_misses++;
		hit = touches_page_watch(e, t->proc->watch, x->acc, x->n);
		if (!hit)
			e->st->false_faults++;
		if ((err = open_pages(e, t, x->acc, x->n, opened, &n_opened)) < 0)
			return err;
		/* An access the decoder did not report (or one more page):
		 * open the faulting page too, as often as it takes. */
		while ((r = step_sync(e, t, 0, &si)) == 2 && is_our_page(t, (uint64_t)si.si_addr) &&
		       n_opened < 2 * LP_PMU_MAX_ACC && !page_in(opened, n_opened, (uint64_t)si.si_addr)) {
			e->st->decode_misses++;
			opened[n_opened] = (uint64_t)si.si_addr & ~(PAGE - 1);
			if ((err = world_stop(e, t)) < 0 || (err = unprotect(e, t, opened[n_opened++])) < 0)
				return err;
		}
		if (r <= 0) {
			world_release(e);
			return r;
		}
		e->c->ops->note(e->c, t->tid, LP_PMU_NOTE_STEP);
	}
	if (r == 1 && (x->insn.flags & LP_PMU_INSN_VSIB) && (err = gather_partial(e, t, t0)) < 0)
		return err;
	/* The target's own int3 (ours never get here): its SIGTRAP is
	 * delivered at the next resume, from this signal-delivery-stop. */
	if (r == 1 && x->op0 == 0xcc && x->insn.len == 1 && si.si_code == SI_KERNEL) {
		x->pending_sig = SIGTRAP;
		/* Injected calls (pages opened for its delivery) pass through
		 * other stops, whose siginfo the kernel would deliver: keep
		 * this one (SI_KERNEL) for the resume that delivers it. */
		x->psi = si;
		x->have_psi = 1;
	}
	if (ours && r == 1) {
		/* Retired: its accesses to watched lines are the reuses. */
		if ((err = end_touched(e, t, x->acc, x->n, t0, x->insn.pc, opened, n_opened)) < 0)
			return err;
	} else if (hit) {
		/* Faulted with the target's permissions: no reuse yet, and
		 * the fault was only a cost, like a false positive. */
		e->st->false_faults++;
	}
	for (int k = 0; k < n_opened; k++)
		if (page_watched(t->proc->watch, opened[k]) && (err = protect(e, t, opened[k])) < 0)
			return err;
	world_release(e);
	if (x->fake) {
		x->n = 0;
		x->fake = 0;
	}
	if (r == 2) {
		/* The target's own fault: it gets its SIGSEGV. */
		x->pending_sig = SIGSEGV;
		x->sample_k = -1;
		return 0;
	}
	return retired(e, t, t0);
}

/* ---- the double trap (§3.3.2.2) ------------------------------------------ */

/* Take the breakpoint out (the original byte back), remembering it so that
 * a trap another thread took on it meanwhile is recognised (dt_stale). */
static int bp_remove(struct engine *e)
{
	int err;

	if (!e->bp.active)
		return 0;
	e->bp.active = 0;
	e->old[e->n_old++ % DT_OLD] = e->bp;
	if ((err = lp_pmu_sup_write(e->bp.proc, e->bp.pc, &e->bp.orig, 1)) < 0)
		return err;
	return 0;
}

/* The counter reached the point (its notification, after skid, with t
 * stopped): an int3 at the record's pc, then the next point is armed. A
 * breakpoint of the previous notification still in place was not hit:
 * removed (its pc never ran again), that sample is lost. */
static int dt_overflow(struct engine *e, struct lp_pmu_thread *t)
{
	struct lp_pmu_precise rec;
	struct lp_pmu_thread *rt;
	struct lp_pmu_proc *p;
	struct lp_pmu_insn insn;
	uint8_t code[LP_PMU_MAX_INSN], b, cc = 0xcc;
	long got;
	int err;

	if (e->bp.active) {
		e->st->dt_replaced++;
		if ((err = bp_remove(e)) < 0)
			return err;
	}
	if (!e->c->ops->precise || e->c->ops->precise(e->c, t->tid, &rec) != 1) {
		e->st->dt_norecord++;
		return arm_next(e);
	}
	rt = lp_pmu_sup_find(&e->sup, rec.tid);
	p = rt && rt->proc ? rt->proc : t->proc;
	/* A pc holding an int3 already is the program's own breakpoint
	 * (not a memory instruction): no sample. */
	if ((got = lp_pmu_sup_read(p, rec.pc, code, sizeof(code))) < 1 || code[0] == 0xcc) {
		e->st->dt_norecord++;
		return arm_next(e);
	}
	b = code[0];
	/* An instruction without a memory operand gives no sample (pmu-sw's
	 * records are at any instruction): no breakpoint. Not on a system
	 * call instruction in any case: the supervisor runs it again itself
	 * to re-enter a call after a call injected at its entry stop, and
	 * our "syscall; int3" gadget is made of nothing else. */
	if (lp_pmu_decode(e->dec, code, (size_t)got, rec.pc, &insn) < 0 || insn.n_mem == 0 ||
	    (insn.flags & LP_PMU_INSN_SYSCALL)) {
		e->st->dt_nomem++;
		return arm_next(e);
	}
	if ((err = lp_pmu_sup_write(p, rec.pc, &cc, 1)) < 0)
		return err;
	e->bp = (struct bkpt){ .proc = p, .pc = rec.pc, .orig = b, .kind = rec.kind, .active = 1,
			       .trigger = rec.time, .armed = now(e) };
	e->st->dt_inserted++;
	return arm_next(e);
}

/* Is t, stopped by an int3 trap with rip, at our breakpoint? */
static int dt_ours(struct engine *e, struct lp_pmu_thread *t, uint64_t rip)
{
	return e->bp.active && t->proc == e->bp.proc && rip == e->bp.pc + 1;
}

/* A trap of a breakpoint removed since another thread hit it (or the next
 * notification replaced it): put rip back on the instruction, no signal. */
static int dt_stale(struct engine *e, struct lp_pmu_thread *t, struct user_regs_struct *r)
{
	uint8_t b;

	for (unsigned i = 0; i < DT_OLD && i < e->n_old; i++) {
		struct bkpt *o = &e->old[i];

		if (o->proc != t->proc || r->rip != o->pc + 1 || lp_pmu_sup_read(t->proc, o->pc, &b, 1) != 1 || b == 0xcc)
			continue;
		r->rip = o->pc;
		if (lp_pmu_sup_setregs(t, r) < 0)
			return 0;
		e->st->dt_stale++;
		return 1;
	}
	return 0;
}

/* t trapped on our int3 (rip = pc + 1; or, trapped = 0, is about to be
 * stepped at pc: run_insn): restore the byte, rip back to pc, and run the
 * instruction with its reference of the event's kind sampled (the first
 * of that kind; the first reference when none is). */
static int dt_take(struct engine *e, struct lp_pmu_thread *t, int trapped)
{
	struct user_regs_struct r;
	struct bkpt b = e->bp;
	struct ethread *x = et(t);
	int err, k = -1;

	if (!x)
		return LP_ENOMEM;
	if ((err = bp_remove(e)) < 0 || (err = lp_pmu_sup_getregs(t, &r)) < 0)
		return err;
	r.rip = b.pc;
	if ((err = lp_pmu_sup_setregs(t, &r)) < 0)
		return err;
	e->st->dt_hits++;
	if (trapped)
		e->c->ops->note(e->c, t->tid, LP_PMU_NOTE_TRAP);
	if ((err = prepare(e, t, &r)) < 0)
		return err;
	for (int j = 0; j < x->n && k < 0; j++)
		if (x->acc[j].kind == b.kind)
			k = j;
	if (k < 0 && x->n > 0)
		k = 0;
	if (k < 0) {
		e->st->dt_nomem++;
		return 0; /* nothing to sample: it runs on as usual */
	}
	x->sample_k = k;
	x->dt = 1;
	x->dt_trigger = b.trigger;
	x->dt_armed = b.armed;
	return run_insn(e, t, 0);
}

/* Step counter: t is about to execute our int3 (prepare read the
 * original byte). Let it trap, as the hardware path does, and take it. */
static int dt_step_hit(struct engine *e, struct lp_pmu_thread *t, int sig)
{
	struct user_regs_struct r;
	siginfo_t si;
	int res, err;

	res = step_sync(e, t, sig, &si);
	if (res <= 0)
		return res;
	if (res == 2) {
		et(t)->pending_sig = SIGSEGV;
		return 0;
	}
	if ((err = lp_pmu_sup_getregs(t, &r)) < 0)
		return err;
	if (si.si_code != SI_KERNEL || !dt_ours(e, t, r.rip))
		return 0; /* a signal's handler ran first: the breakpoint stays */
	return dt_take(e, t, 1);
}

/* ---- signals of the target ------------------------------------------- */

/* Does the thread's process catch sig with a handler? (SigCgt in status) */
static int caught(struct lp_pmu_thread *t, int sig)
{
	char path[64], line[256];
	unsigned long long mask = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)t->tid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "SigCgt: %llx", &mask) == 1)
			break;
	fclose(f);
	return (int)((mask >> (sig - 1)) & 1);
}

/* ---- system calls ------------------------------------------------------ */

/* System calls that may wait for another thread: stepped in the
 * background so that the others keep running. */
static int may_block(uint64_t nr, const uint64_t *a)
{
	switch (nr) {
	case SYS_futex: case SYS_wait4: case SYS_waitid: case SYS_read: case SYS_readv:
	case SYS_nanosleep: case SYS_clock_nanosleep: case SYS_poll: case SYS_ppoll:
	case SYS_select: case SYS_pselect6: case SYS_epoll_wait: case SYS_epoll_pwait:
	case SYS_pause: case SYS_rt_sigsuspend: case SYS_recvfrom: case SYS_recvmsg:
	case SYS_accept: case SYS_accept4: case SYS_vfork: case SYS_msgrcv: case SYS_semop:
	case SYS_write: case SYS_sendto: case SYS_sendmsg: case SYS_connect:
		return 1;
	case SYS_clone:
		return (a[0] & 0x4000) != 0; /* CLONE_VFORK: returns when the child execs */
	case SYS_clone3:
		return 1;
	}
	return 0;
}

struct range {
	uint64_t a, len;
};

/* The user buffers a system call reads or writes, for the calls whose
 * buffers are known; returns how many. Unknown calls get the page of any
 * argument that points into a protected page (opened, not a reuse). */
static int sys_buffers(struct engine *e, struct lp_pmu_thread *t, uint64_t nr, const uint64_t *a,
		       uint64_t rsp, struct range *out, int max)
{
	int n = 0;

	switch (nr) {
	case SYS_rt_sigreturn: /* reads the signal frame at the stack pointer */
		out[n++] = (struct range){ rsp, 8192 };
		return n;
	case SYS_read: case SYS_write: case SYS_pread64: case SYS_pwrite64:
	case SYS_recvfrom: case SYS_sendto:
		out[n++] = (struct range){ a[1], a[2] };
		return n;
	case SYS_getrandom:
		out[n++] = (struct range){ a[0], a[1] };
		return n;
	case SYS_rseq: /* the kernel writes the area at registration */
		out[n++] = (struct range){ a[0], a[1] };
		return n;
	case SYS_readv: case SYS_writev: case SYS_preadv: case SYS_pwritev: {
		struct iovec iov[16];
		uint64_t cnt = a[2] < 16 ? a[2] : 16;
		long got = lp_pmu_sup_read(t->proc, a[1], iov, cnt * sizeof(iov[0]));

		for (long i = 0; i < got / (long)sizeof(iov[0]) && n < max; i++)
			out[n++] = (struct range){ (uint64_t)iov[i].iov_base, iov[i].iov_len };
		return n;
	}
	}
	return 0;
}

/* Give watched page pg the target's permissions for t's coming system
 * call and hold it open (as->held) until sys_post: nothing protects it
 * meanwhile. The other threads of the address space may run during the
 * call (the step counter's blocking calls, every call with a free-running
 * counter): with the step counter their accesses to the page are decided
 * by the decoding (touches_held); with a free-running counter they are
 * not seen (stats.exposed counts such pages; docs/pmu.md). */
static int hold_for_call(struct engine *e, struct lp_pmu_thread *t, uint64_t pg)
{
	struct ethread *x = t->eng;
	struct aspace *as = t->proc->watch;
	int err;

	if (lp_pmu_pagecount_add(&as->held, pg) < 0)
		return LP_ENOMEM;
	x->unprot[x->n_unprot++] = pg;
	if (!e->c->ops->stepping && nthreads(e, t) > 1)
		e->st->exposed++;
	if (lp_pmu_pagecount_get(&as->held, pg) > 1)
		return 0; /* already open */
	if ((err = unprotect(e, t, pg)) < 0)
		return err;
	return 0;
}

/* Release t's holds (its call returned, or it is gone); with reprotect,
 * protect again the pages still watched that nobody else holds. */
static int release_holds(struct engine *e, struct lp_pmu_thread *t, int reprotect)
{
	struct ethread *x = t->eng;
	struct aspace *as = t->proc ? t->proc->watch : NULL;
	int err;

	for (int i = 0; x && as && i < x->n_unprot; i++) {
		lp_pmu_pagecount_remove(&as->held, x->unprot[i]);
		if (reprotect && page_watched(as, x->unprot[i]) && (err = protect(e, t, x->unprot[i])) < 0)
			return err;
	}
	if (x)
		x->n_unprot = 0;
	return 0;
}

/* Open page pg (watched) for the coming system call; sys_post closes it. */
static int open_for_call(struct engine *e, struct lp_pmu_thread *t, uint64_t pg)
{
	struct ethread *x = t->eng;

	if (!page_watched(t->proc->watch, pg))
		return 0;
	for (int i = 0; i < x->n_unprot; i++)
		if (x->unprot[i] == pg)
			return 0;
	if (x->n_unprot == MAX_UNPROT)
		return 0; /* the call may fail with EFAULT: the target's to handle */
	return hold_for_call(e, t, pg);
}

/* The pages of the NUL-terminated string at a. */
static int open_string(struct engine *e, struct lp_pmu_thread *t, uint64_t a)
{
	char buf[256];
	int err;

	for (int k = 0; a && k < 512; k++) { /* at most 128 KiB (MAX_ARG_STRLEN) */
		long got = lp_pmu_sup_read(t->proc, a, buf, sizeof(buf));

		if (got <= 0)
			return 0;
		if ((err = open_for_call(e, t, page_of(a))) < 0 ||
		    (err = open_for_call(e, t, page_of(a + (uint64_t)got - 1))) < 0)
			return err;
		if (memchr(buf, 0, (size_t)got))
			return 0;
		a += (uint64_t)got;
	}
	return 0;
}

/* execve reads its path, argv[] and envp[] and their strings, from pages
 * we may have protected: open those for the call. If it succeeds the
 * address space is gone (and a vfork parent protects its pages again when
 * its vfork returns); if it fails sys_post protects them again. */
static int exec_pages(struct engine *e, struct lp_pmu_thread *t, uint64_t path, uint64_t argv, uint64_t envp)
{
	uint64_t vec[2] = { argv, envp };
	int err;

	if ((err = open_string(e, t, path)) < 0)
		return err;
	for (int v = 0; v < 2; v++) {
		for (uint64_t i = 0; vec[v] && i < 65536; i++) {
			uint64_t p;

			if (lp_pmu_sup_read(t->proc, vec[v] + 8 * i, &p, 8) != 8)
				break;
			if ((err = open_for_call(e, t, page_of(vec[v] + 8 * i))) < 0)
				return err;
			if (!p)
				break;
			if ((err = open_string(e, t, p)) < 0)
				return err;
		}
	}
	return 0;
}

static int sys_pre(struct engine *e, struct lp_pmu_thread *t, uint64_t nr, const struct user_regs_struct *r)
{
	struct ethread *x = t->eng;
	struct aspace *as = t->proc->watch;
	struct range rg[16];
	uint64_t t0 = now(e);
	int n, err;

	x->sys_nr = nr;
	x->sys_args[0] = r->rdi; x->sys_args[1] = r->rsi; x->sys_args[2] = r->rdx;
	x->sys_args[3] = r->r10; x->sys_args[4] = r->r8; x->sys_args[5] = r->r9;
	if ((err = release_holds(e, t, 0)) < 0)
		return err;
	e->c->ops->note(e->c, t->tid, LP_PMU_NOTE_SYSCALL);
	if (nr == SYS_rseq && !(x->sys_args[2] & 1))
		x->rseq = x->sys_args[0]; /* from now on its page stays open */
	/* No return to re-protect after: nothing may be opened. */
	if (!as || !as->n || nr == SYS_exit || nr == SYS_exit_group)
		return 0;
	if (nr == SYS_execve)
		return exec_pages(e, t, x->sys_args[0], x->sys_args[1], x->sys_args[2]);
	if (nr == SYS_execveat)
		return exec_pages(e, t, x->sys_args[1], x->sys_args[2], x->sys_args[3]);
	n = sys_buffers(e, t, x->sys_nr, x->sys_args, r->rsp, rg, 16);
	/* The kernel's access to a watched line is that line's reuse, placed
	 * just after the last reference before the call. */
	for (int i = 0; i < n; i++) {
		struct lp_pmu_access acc = { rg[i].a, (uint32_t)(rg[i].len > 0xffffffffULL ? 0xffffffffU : rg[i].len), 0 };

		if (!rg[i].len)
			continue;
		for (size_t k = 0; k < as->n;) {
			if (overlaps(acc.addr, acc.size, as->w[k].line, as->w[k].size)) {
				e->st->syscall_hits++;
				if ((err = watch_end(e, t, as, k, t0 + 1, x->insn.pc, LP_PMU_END_SYSCALL)) < 0)
					return err;
			} else {
				k++;
			}
		}
	}
	/* The rseq page can no longer be protected (rseq_page()): its other
	 * watches cannot be finished and are dropped. */
	if (nr == SYS_rseq && x->rseq) {
		for (size_t k = 0; k < as->n;) {
			if (as->w[k].mech == LP_PMU_WATCH_PAGE && rseq_page(e, t, as->w[k].line & ~(PAGE - 1))) {
				e->st->unwatchable++;
				if ((err = watch_remove(e, t, as, k)) < 0)
					return err;
			} else {
				k++;
			}
		}
	}
	/* Still-protected pages the kernel will touch must not make it fail
	 * with EFAULT: open them for the call. */
	for (size_t k = 0; k < as->n; k++) {
		uint64_t pg = as->w[k].line & ~(PAGE - 1);
		int touch = 0, dup = 0;

		if (as->w[k].mech != LP_PMU_WATCH_PAGE)
			continue;
		for (int i = 0; i < n; i++)
			touch |= overlaps(rg[i].a, rg[i].len, pg, PAGE);
		for (int i = 0; i < 6 && !n; i++)
			touch |= x->sys_args[i] >= pg && x->sys_args[i] < pg + PAGE;
		for (int i = 0; i < x->n_unprot; i++)
			dup |= x->unprot[i] == pg;
		if (!touch || dup || x->n_unprot == MAX_UNPROT)
			continue;
		if ((err = hold_for_call(e, t, pg)) < 0)
			return err;
	}
	return 0;
}

static int sys_post(struct engine *e, struct lp_pmu_thread *t)
{
	struct ethread *x = t->eng;
	struct aspace *as = t->proc->watch;
	struct user_regs_struct r;
	int changed, err;

	if ((err = lp_pmu_sup_getregs(t, &r)) < 0)
		return err;
	changed = lp_pmu_maps_syscall(&t->proc->maps, (long)x->sys_nr, x->sys_args, (int64_t)r.rax);
	if (x->sys_nr == SYS_rt_sigreturn)
		x->in_segv = 0;
	if (x->sys_nr == SYS_rseq && r.rax == 0)
		x->rseq = (x->sys_args[2] & 1) ? 0 : x->sys_args[0]; /* flag 1: unregister */
	if (changed < 0)
		return LP_ENOMEM;
	/* New code may be mapped (dlopen): the front end reads the maps now,
	 * while the process is there to read. */
	if (changed > 0 && (int64_t)r.rax >= 0 && e->o->on_maps &&
	    (((x->sys_nr == SYS_mmap || x->sys_nr == SYS_mprotect) && (x->sys_args[2] & PROT_EXEC)) ||
	     x->sys_nr == SYS_mremap))
		e->o->on_maps(e->o->ctx, as_of(t->proc)->image, t->proc->pid);
	if ((err = release_holds(e, t, 1)) < 0)
		return err;
	if (as && (x->sys_nr == SYS_vfork || (x->sys_nr == SYS_clone && (x->sys_args[0] & CLONE_VFORK)))) {
		/* The child shared this address space and may have opened
		 * pages for its execve: protect every watched page again. */
		for (size_t i = 0; i < as->pc.cap; i++)
			if (as->pc.v[i].page && as->pc.v[i].n && (err = protect(e, t, as->pc.v[i].page)) < 0)
				return err;
	}
	if (changed > 0 && as) {
		/* The target changed mappings: a watched page that is still (or
		 * again) mapped gets our protection back, since the call may
		 * have reset it. One that is gone keeps its watch: reuse is by
		 * address, as in a trace, so an access after the address is
		 * mapped again (the next mmap often returns it) is the reuse;
		 * otherwise the sample dangles at the end. */
		for (size_t k = 0; k < as->n; k++)
			if (as->w[k].mech == LP_PMU_WATCH_PAGE && (err = protect(e, t, page_of(as->w[k].line))) < 0)
				return err;
	}
	return 0;
}

/* ---- thread and process events ----------------------------------------- */

static void on_release(void *ctx, struct lp_pmu_proc *p)
{
	struct engine *e = ctx;
	struct aspace *as = p->watch;
	struct lp_pmu_image_end end;

	/* Its text goes with it, and our breakpoint in it. */
	if (e->bp.proc == p)
		e->bp.active = 0;
	for (unsigned i = 0; i < DT_OLD; i++)
		if (e->old[i].proc == p)
			e->old[i].proc = NULL;
	if (!as)
		return;
	/* The address space is going: what is still watched is dangling.
	 * Its threads have all left (thread_leave), so its count is final. */
	for (size_t i = 0; i < as->n; i++)
		emit(e, &as->w[i].s);
	as->n = 0;
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
	if (e->o->on_image_end)
		e->o->on_image_end(e->o->ctx, &end);
	/* The supervisor frees p->watch itself (one flat block): free ours. */
	free(as->w);
	lp_pmu_pagecount_release(&as->pc);
	lp_pmu_pagecount_release(&as->held);
	free(as->thread_refs);
	as->w = NULL;
	as->thread_refs = NULL;
	as->cap = as->tr_cap = 0;
}

static int on_event(struct engine *e, struct lp_pmu_ev *ev)
{
	struct lp_pmu_thread *t = ev->t, *c = ev->child;
	struct aspace *as = as_of(t->proc);
	uint32_t parent;
	int err;

	if (!as)
		return lp_seterr(LP_ENOMEM, "out of memory");
	switch (ev->kind) {
	case LP_PMU_EV_CLONE:
		if ((err = e->c->ops->attach(e->c, c->tid)) < 0)
			return err;
		join_image(e, c, as);
		/* Debug registers watch one thread; with two, move their
		 * watches to page protection (the new thread, stopped at its
		 * first stop, makes the calls). */
		for (size_t i = 0; i < as->n; i++) {
			struct watch *w = &as->w[i];
			uint64_t pg = page_of(w->line);
			int had = page_watched(as, pg);

			if (w->mech != LP_PMU_WATCH_DR)
				continue;
			w->dr_thread->dr_used &= ~w->slots;
			if ((err = dr_apply(w->dr_thread)) < 0)
				return err;
			w->mech = LP_PMU_WATCH_PAGE;
			w->slots = 0;
			if (lp_pmu_pagecount_add(&as->pc, pg) < 0)
				return LP_ENOMEM;
			if (!had && (err = protect(e, c, pg)) < 0)
				return err;
		}
		return 0;
	case LP_PMU_EV_FORK:
		if ((err = e->c->ops->attach(e->c, c->tid)) < 0)
			return err;
		/* The child keeps its parent's rseq registration. */
		if (et(c) && et(t))
			et(c)->rseq = et(t)->rseq;
		if (ev->vfork) {
			/* It shares the parent's image until it execs. */
			join_image(e, c, as);
			return 0;
		}
		if ((err = image_start(e, c->proc, c, as->image, t->tgid, 0)) < 0)
			return err;
		/* Its copy of the text has our int3: the original byte back
		 * there (the breakpoint stays in the parent's). */
		if (e->bp.active && e->bp.proc == t->proc && c->proc != t->proc) {
			if ((err = lp_pmu_sup_write(c->proc, e->bp.pc, &e->bp.orig, 1)) < 0)
				return err;
			e->st->dt_forks++;
		}
		/* The child inherited our protections but none of our watches:
		 * give it the permissions its program set. */
		for (size_t i = 0; i < as->n; i++) {
			uint64_t pg = page_of(as->w[i].line);

			if (as->w[i].mech == LP_PMU_WATCH_PAGE && (err = unprotect(e, c, pg)) < 0)
				return err;
		}
		return 0;
	case LP_PMU_EV_EXEC:
		t->dr_used = 0; /* exec clears the debug registers */
		if (!et(t))
			return lp_seterr(LP_ENOMEM, "out of memory");
		et(t)->rseq = 0; /* and unregisters rseq */
		parent = et(t)->image;
		return image_start(e, t->proc, t, parent, t->tgid, 1);
	default:
		return 0;
	}
}

/* Step t over its system call synchronously, following the events it
 * causes (clone, fork, exec). Returns 1 done, 0 thread gone, or LP_E*. */
static int syscall_sync(struct engine *e, struct lp_pmu_thread *t, int sig)
{
	struct lp_pmu_ev ev;
	int r, err;

	if ((err = lp_pmu_sup_resume(t, LP_PMU_STEP, sig)) < 0)
		return err;
	e->st->steps++;
	for (;;) {
		if ((r = lp_pmu_sup_wait(&e->sup, t->tid, &ev, 0)) < 0)
			return r;
		if (ev.kind == LP_PMU_EV_EXIT) {
			thread_exit(e, &ev);
			return 0;
		}
		if (ev.kind == LP_PMU_EV_TRAP)
			return 1;
		if (ev.kind == LP_PMU_EV_SIGNAL)
			note_signal(e, t, &ev);
		if ((err = on_event(e, &ev)) < 0)
			return err;
		if ((err = lp_pmu_sup_resume(t, LP_PMU_STEP, 0)) < 0)
			return err;
	}
}

/* Deliver a signal the target handles. The step stops at the handler's
 * first instruction: nothing of the interrupted code ran, but the kernel
 * wrote the signal frame below the stack pointer. Watched pages there are
 * opened for the delivery (a frame write to a PROT_NONE page kills the
 * target), and watched lines the frame covers are reused by the kernel,
 * like a system call's buffer. Assumes no sigaltstack. */
static int deliver_caught(struct engine *e, struct lp_pmu_thread *t, int sig, uint64_t rsp)
{
	struct aspace *as = t->proc->watch;
	uint64_t lo = (rsp - 128 - 32768) & ~(PAGE - 1), opened[9];
	struct user_regs_struct r;
	int n_opened = 0, res, err;
	siginfo_t si;

	for (size_t k = 0; as && k < as->n; k++) {
		uint64_t pg = as->w[k].line & ~(PAGE - 1);
		int dup = 0;

		if (as->w[k].mech != LP_PMU_WATCH_PAGE || pg < lo || pg >= rsp || n_opened == 9)
			continue;
		for (int i = 0; i < n_opened; i++)
			dup |= opened[i] == pg;
		if (dup)
			continue;
		if ((err = unprotect(e, t, pg)) < 0)
			return err;
		opened[n_opened++] = pg;
	}
	res = step_sync(e, t, sig, &si);
	if (res <= 0)
		return res;
	if (res == 2)
		et(t)->pending_sig = SIGSEGV;
	else if (sig == SIGSEGV)
		et(t)->in_segv = 1;
	if (res == 1 && sig == SIGTRAP) {
		/* In its SIGTRAP handler, SIGTRAP is blocked; the SIGTRAP every
		 * single-step forces would then reset the handler to SIG_DFL
		 * (force_sig on a blocked signal), and the program's next int3
		 * would kill it. Unblocked, the step's SIGTRAP is only a
		 * ptrace stop, which we discard. The frame keeps the mask
		 * that sigreturn restores. */
		uint64_t mask;

		if (ptrace(PTRACE_GETSIGMASK, t->tid, (void *)8, &mask) == 0 && (mask & (1ULL << (SIGTRAP - 1)))) {
			mask &= ~(1ULL << (SIGTRAP - 1));
			ptrace(PTRACE_SETSIGMASK, t->tid, (void *)8, &mask);
		}
	}
	if (lp_pmu_sup_getregs(t, &r) == 0 && as) {
		uint64_t t0 = now(e);

		for (size_t k = 0; k < as->n;) {
			if (overlaps(r.rsp, rsp - 128 - r.rsp, as->w[k].line, as->w[k].size)) {
				e->st->syscall_hits++;
				if ((err = watch_end(e, t, as, k, t0 + 1, 0, LP_PMU_END_SYSCALL)) < 0)
					return err;
			} else {
				k++;
			}
		}
	}
	for (int i = 0; i < n_opened; i++)
		if (page_watched(as, opened[i]) && (err = protect(e, t, opened[i])) < 0)
			return err;
	return 0;
}

/* One instruction (or system call) of a stopped thread, step counter. */
static int step_thread(struct engine *e, struct lp_pmu_thread *t)
{
	struct user_regs_struct r;
	struct ethread *x;
	int sig, err, res;

	if ((err = prepare(e, t, &r)) < 0)
		return err;
	x = t->eng;
	sig = x->pending_sig;
	x->pending_sig = 0;
	if (sig) {
		e->st->target_signals++;
		if (caught(t, sig))
			return deliver_caught(e, t, sig, r.rsp);
	}
	if (e->bp.active && e->bp.proc == t->proc && r.rip == e->bp.pc)
		return dt_step_hit(e, t, sig);
	if (!(x->insn.flags & LP_PMU_INSN_SYSCALL))
		return run_insn(e, t, sig);
	if ((err = sys_pre(e, t, r.rax, &r)) < 0)
		return err;
	if (may_block(r.rax, x->sys_args)) {
		x->sys_async = 1;
		if ((err = lp_pmu_sup_resume(t, LP_PMU_STEP, sig)) < 0)
			return err;
		e->st->steps++;
		t->state = LP_PMU_T_SYSCALL;
		return 0;
	}
	res = syscall_sync(e, t, sig);
	if (res <= 0)
		return res;
	if ((err = sys_post(e, t)) < 0)
		return err;
	return retired(e, t, now(e));
}

/* An event of a thread that is not being stepped synchronously. */
static int background_event(struct engine *e, struct lp_pmu_ev *ev)
{
	struct lp_pmu_thread *t = ev->t;
	struct ethread *x;
	int err;

	if (ev->kind == LP_PMU_EV_EXIT) {
		thread_exit(e, ev);
		return 0;
	}
	x = et(t);
	if (!x)
		return LP_ENOMEM;
	if (x->sys_async) {
		if (ev->kind == LP_PMU_EV_TRAP) {
			x->sys_async = 0;
			if ((err = sys_post(e, t)) < 0)
				return err;
			return retired(e, t, now(e));
		}
		if (ev->kind == LP_PMU_EV_SIGNAL) {
			/* A signal while blocked in the call: deliver it now, as
			 * the kernel would. Without a handler the call restarts
			 * or continues and the step ends when it returns; with
			 * one, the step ends at the handler's first instruction
			 * and the call is restarted after it, as a new call. */
			e->st->target_signals++;
			if ((err = lp_pmu_sup_resume(t, LP_PMU_STEP, ev->sig)) < 0)
				return err;
			t->state = LP_PMU_T_SYSCALL;
			return 0;
		}
		if ((err = on_event(e, ev)) < 0)
			return err;
		if ((err = lp_pmu_sup_resume(t, LP_PMU_STEP, 0)) < 0)
			return err;
		t->state = LP_PMU_T_SYSCALL;
		return 0;
	}
	if (ev->kind == LP_PMU_EV_SIGNAL)
		x->pending_sig = ev->sig;
	return on_event(e, ev);
}

static int loop_step(struct engine *e)
{
	struct lp_pmu_ev ev;
	int r, err;

	while (e->sup.n > 0) {
		struct lp_pmu_thread *t = NULL;

		while ((r = lp_pmu_sup_wait(&e->sup, -1, &ev, 1)) > 0)
			if ((err = background_event(e, &ev)) < 0)
				return err;
		if (r < 0 && e->sup.n > 0)
			return r;
		for (int k = 0; k < e->sup.n && !t; k++) {
			struct lp_pmu_thread *c = e->sup.t[(e->rr + k) % e->sup.n];

			if (c->state == LP_PMU_T_STOPPED && c->proc)
				t = c;
		}
		if (!t) {
			if (e->sup.n == 0)
				break;
			if ((r = lp_pmu_sup_wait(&e->sup, -1, &ev, 0)) < 0)
				return r;
			if ((err = background_event(e, &ev)) < 0)
				return err;
			continue;
		}
		e->rr = (e->rr + 1) % (e->sup.n ? e->sup.n : 1);
		if ((err = step_thread(e, t)) < 0)
			return err;
	}
	return 0;
}

/* ---- the hardware counter: the target runs freely ---------------------- */

/* Give up reaching the armed point with t (it exited, or it must run
 * freely through a system call): let the counter notify again from the
 * next reference on. If the point is then passed, check_point counts the
 * sample as missed and arms the next one. */
static int seek_abandon(struct engine *e)
{
	uint64_t early = 2 + (uint64_t)LP_PMU_REFS_PER_INSN * e->o->max_skid;
	uint64_t at = e->sp > early ? e->sp - early : 0, t = now(e);

	e->seeking = 0;
	return e->c->ops->arm(e->c, at > t ? at : t + 1);
}

static int restarts(const struct user_regs_struct *r)
{
	int64_t ax = (int64_t)r->rax;

	/* ERESTARTSYS, ERESTARTNOINTR, ERESTARTNOHAND, ERESTART_RESTARTBLOCK */
	return (int64_t)r->orig_rax >= 0 && (ax == -512 || ax == -513 || ax == -514 || ax == -516);
}

/* A SIGSEGV on a page that is not ours (any more): was it ours when the
 * access was made? With a free-running counter another thread can fault on
 * a watched page while the engine handles a first one, whose hit ends the
 * last watch there and opens the page before the second fault is read.
 * Such a fault (SEGV_ACCERR, an access the target's own permissions allow)
 * is retried, not delivered; the same fault again with no protection of
 * ours changed in between is the target's. */
static int stale_fault(struct engine *e, struct lp_pmu_thread *t, const siginfo_t *si)
{
	struct ethread *x = et(t);
	struct user_regs_struct r;
	uint64_t addr = (uint64_t)si->si_addr, pg = page_of(addr);
	int prot, need = 0;

	if (!x || si->si_code != SEGV_ACCERR || (prot = lp_pmu_maps_prot(&t->proc->maps, pg)) < 0 ||
	    prepare(e, t, &r) < 0)
		return 0;
	for (int j = 0; j < x->n; j++)
		if (overlaps(x->acc[j].addr, x->acc[j].size, pg, PAGE))
			need |= x->acc[j].kind == LP_REF_WRITE ? PROT_WRITE : PROT_READ;
	if (!need || (prot & need) != need)
		return 0;
	if (x->stale_pc == r.rip && x->stale_addr == addr && x->stale_gen == e->prot_gen) {
		x->stale_pc = x->stale_addr = 0;
		return 0;
	}
	x->stale_pc = r.rip;
	x->stale_addr = addr;
	x->stale_gen = e->prot_gen;
	return 1;
}

/* Skid compensation (§3.3.2.1): the notification came at or before the
 * early point; step t, decoding each instruction, to the sample point.
 * A system call on the way is run freely (PTRACE_SYSCALL): the seek goes
 * on at its exit stop (e->seek_tid). */
static int seek(struct engine *e, struct lp_pmu_thread *t)
{
	struct user_regs_struct r;
	pid_t tid = t->tid;
	int err;

	e->seeking = 1;
	e->seek_tid = 0;
	while (e->seeking) {
		struct ethread *x;

		if ((err = prepare(e, t, &r)) < 0)
			return err;
		x = t->eng;
		/* A system call next, or one interrupted by the signal of this
		 * stop that the kernel will restart (its test: orig_rax >= 0
		 * and a restart code in rax) as soon as t resumes. */
		if ((x->insn.flags & LP_PMU_INSN_SYSCALL) || restarts(&r)) {
			e->seek_tid = tid;
			return 0;
		}
		if (x->pending_sig)
			break; /* the target's signal first (a handler runs freely) */
		if ((err = run_insn(e, t, 0)) < 0)
			return err;
		if (lp_pmu_sup_find(&e->sup, tid) != t)
			break; /* it exited */
		e->c->ops->note(e->c, tid, LP_PMU_NOTE_STEP);
	}
	return e->seeking ? seek_abandon(e) : 0;
}

static int loop_free(struct engine *e)
{
	struct lp_pmu_ev ev;
	struct user_regs_struct r;
	int err, res;

	for (int i = 0; i < e->sup.n; i++)
		if ((err = lp_pmu_sup_resume(e->sup.t[i], LP_PMU_SYSCALLS, 0)) < 0)
			return err;
	while (e->sup.n > 0) {
		struct lp_pmu_thread *t;
		struct ethread *x;
		int sig = 0;
		pid_t tid;

		if ((res = lp_pmu_sup_wait(&e->sup, -1, &ev, 0)) < 0)
			return res;
		if (ev.kind == LP_PMU_EV_EXIT) {
			int was = e->seek_tid == ev.child->tid;

			thread_exit(e, &ev);
			if (was && (err = seek_abandon(e)) < 0)
				return err;
			continue;
		}
		t = ev.t;
		tid = t->tid;
		if (!(x = et(t)))
			return LP_ENOMEM;
		switch (ev.kind) {
		case LP_PMU_EV_SYSCALL:
			if ((err = lp_pmu_sup_getregs(t, &r)) < 0)
				return err;
			if (!x->sys_async) {
				x->sys_async = 1; /* here: "between entry and exit" */
				if ((err = sys_pre(e, t, r.orig_rax, &r)) < 0)
					return err;
			} else {
				x->sys_async = 0;
				if ((err = sys_post(e, t)) < 0)
					return err;
				if (e->seek_tid == tid && (err = seek(e, t)) < 0)
					return err;
			}
			break;
		case LP_PMU_EV_SIGNAL:
			res = e->c->ops->pending(e->c, t->tid, &ev.si);
			if (res == 1 && e->o->sample_start == LP_PMU_START_DOUBLE_TRAP) {
				if ((err = dt_overflow(e, t)) < 0)
					return err;
			} else if (res == 1) {
				if ((err = seek(e, t)) < 0)
					return err;
			} else if (res < 0 && ev.sig == SIGSEGV && is_our_page(t, (uint64_t)ev.si.si_addr)) {
				if ((err = prepare(e, t, &r)) < 0 || (err = run_insn(e, t, 0)) < 0)
					return err;
				/* That instruction may have brought the clock to the
				 * armed point (retired() asked the counter). */
				if (e->seeking && lp_pmu_sup_find(&e->sup, tid) == t && (err = seek(e, t)) < 0)
					return err;
			} else if (res < 0 && ev.sig == SIGSEGV && stale_fault(e, t, &ev.si)) {
				e->st->stale_faults++; /* resumed without it: the access is made again */
			} else if (res < 0) {
				sig = ev.sig;
			}
			break;
		case LP_PMU_EV_TRAP: {
			uint64_t dr6 = 0;

			if (t->dr_used > 0 && lp_pmu_sup_dr_get(t, 6, &dr6) == 0 && (dr6 & 0xf)) {
				/* The trap follows the access: the clock already
				 * includes the whole instruction. */
				struct aspace *as = t->proc->watch;

				lp_pmu_sup_dr_set(t, 6, 0);
				e->c->ops->note(e->c, t->tid, LP_PMU_NOTE_TRAP);
				for (size_t i = 0; as && i < as->n;) {
					if (as->w[i].mech == LP_PMU_WATCH_DR && (as->w[i].slots & (int)dr6)) {
						e->st->dr_hits++;
						if ((err = watch_end(e, t, as, i, now(e), 0, LP_PMU_END_DR)) < 0)
							return err;
					} else {
						i++;
					}
				}
			} else if (ev.si.si_code == SI_KERNEL && lp_pmu_sup_getregs(t, &r) == 0 &&
				   dt_ours(e, t, r.rip)) {
				if ((err = dt_take(e, t, 1)) < 0)
					return err;
			} else if (ev.si.si_code == SI_KERNEL && dt_stale(e, t, &r)) {
				/* retried: it runs the restored instruction */
			} else {
				sig = SIGTRAP; /* the target's own int3 or trap */
			}
			break;
		}
		default:
			if ((err = on_event(e, &ev)) < 0)
				return err;
			if (ev.child && (err = lp_pmu_sup_resume(ev.child, LP_PMU_SYSCALLS, 0)) < 0)
				return err;
			break;
		}
		if ((err = e->c->ops->status(e->c)) < 0)
			return err;
		t = lp_pmu_sup_find(&e->sup, tid);
		if (!t || t->state != LP_PMU_T_STOPPED)
			continue;
		/* An overflow notification that a stop inside our own handling
		 * of t took (a step, an injected call) counts as if it had
		 * come now: re-armed if early, sought if the point is reached
		 * (at the system call's exit if t is inside one). */
		if (t->notified) {
			siginfo_t nsi = t->notified_si;

			t->notified = 0;
			if (e->c->ops->pending(e->c, tid, &nsi) == 1) {
				if (e->o->sample_start == LP_PMU_START_DOUBLE_TRAP) {
					if ((err = dt_overflow(e, t)) < 0)
						return err;
				} else if (et(t)->sys_async)
					e->seek_tid = tid;
				else if ((err = seek(e, t)) < 0)
					return err;
				t = lp_pmu_sup_find(&e->sup, tid);
				if (!t || t->state != LP_PMU_T_STOPPED)
					continue;
			}
		}
		/* A signal of the target's found while stepping it is its own. */
		if (!sig && (x = t->eng) && x->pending_sig) {
			sig = x->pending_sig;
			x->pending_sig = 0;
		}
		if (sig)
			e->st->target_signals++;
		if ((err = lp_pmu_sup_resume(t, LP_PMU_SYSCALLS, sig)) < 0)
			return err;
	}
	return 0;
}

/* ---- entry point ------------------------------------------------------ */

static int sup_owns(void *ctx, const siginfo_t *si)
{
	struct engine *e = ctx;

	return e->c->ops->owns(e->c, si);
}

int lp_pmu_run(const struct lp_pmu_options *o, char *const argv[], struct lp_pmu_stats *stats,
	       int *status)
{
	const struct lp_pmu_counter_ops *ops = lp_pmu_counter_find(o->counter ? o->counter : "step");
	struct lp_pmu_counter_config cfg = { .seed = o->seed, .emulate_skid = o->emulate_skid,
					     .skid_miss = o->skid_miss,
					     .precise = o->sample_start == LP_PMU_START_DOUBLE_TRAP };
	struct engine *e;
	int err;

	memset(stats, 0, sizeof(*stats));
	*status = 0;
	if (!ops)
		return lp_seterr(LP_EINVAL, "unknown counter '%s' (step, pmu)", o->counter);
	if (o->n_lines > LP_PMU_MAX_LINE_SIZES)
		return lp_seterr(LP_EINVAL, "at most %d line sizes", LP_PMU_MAX_LINE_SIZES);
	for (unsigned i = 0; i < (o->n_lines ? o->n_lines : 1); i++) {
		unsigned l = o->n_lines ? o->line_sizes[i] : o->line_size;

		if (l < 8 || l > 4096 || (l & (l - 1)))
			return lp_seterr(LP_EINVAL, "line size %u is not a power of two in 8..4096", l);
	}
	if (!(o->period >= 1.0))
		return lp_seterr(LP_EINVAL, "sample period %g is below 1", o->period);
	if (o->sample_start == LP_PMU_START_DOUBLE_TRAP && !ops->precise)
		return lp_seterr(LP_EINVAL, "counter '%s' gives no precise pc for --sample-start double-trap",
				 ops->name);
	if (o->on_ref && !ops->stepping)
		return lp_seterr(LP_EINVAL, "a full trace needs --counter step");
	e = calloc(1, sizeof(*e));
	if (!e)
		return lp_seterr(LP_ENOMEM, "out of memory");
	e->o = o;
	e->st = stats;
	e->p = 1.0 / o->period;
	e->nlines = o->n_lines ? o->n_lines : 1;
	for (unsigned i = 0; i < e->nlines; i++)
		e->line[i] = o->n_lines ? o->line_sizes[i] : o->line_size;
	lp_rng_seed(&e->rng, o->seed);
	lp_pmu_xsave_layout_host(&e->xlayout);
	cfg.compensate = o->compensate;
	if ((err = ops->create(&cfg, &e->c)) < 0)
		goto out_engine;
	if ((err = lp_pmu_decoder_new(&e->dec)) < 0)
		goto out_counter;
	e->sup.on_release = on_release;
	e->sup.on_thread_leave = thread_leave;
	e->sup.owns = sup_owns;
	e->sup.ctx = e;
	if ((err = lp_pmu_sup_spawn(&e->sup, argv, o->no_aslr)) < 0)
		goto out_sup;
	if ((err = e->c->ops->attach(e->c, e->sup.t[0]->tid)) < 0)
		goto out_sup;
	if ((err = image_start(e, e->sup.t[0]->proc, e->sup.t[0], NO_IMAGE, (int)getpid(), 0)) < 0)
		goto out_sup;
	if ((err = arm_next(e)) < 0)
		goto out_sup;
	stats->precise_ip = e->c->precise_ip;
	err = ops->stepping ? loop_step(e) : loop_free(e);
	if (err == 0 && e->err)
		err = e->err;
	if (err == 0) {
		stats->refs = now(e);
		*status = e->sup.leader_status;
	}
out_sup:
	stats->injected = e->sup.injected;
	stats->ring_samples = e->c->ring_samples;
	stats->ring_lost = e->c->ring_lost;
	stats->ring_throttled = e->c->ring_throttled;
	stats->ring_damaged = e->c->ring_damaged;
	lp_pmu_sup_release(&e->sup);
	lp_pmu_decoder_free(e->dec);
out_counter:
	if (e->c)
		e->c->ops->destroy(e->c);
out_engine:
	free(e);
	return err;
}
