/* The pmu sampler's engine, private to src/pmu: its state and the
 * functions its files share. The engine (docs/pmu.md, "The pmu backend")
 * is split by job:
 *   pmu-sampler.c     lp_pmu_run: checks, set-up, the choice of main loop
 *   loop-step.c       the step counter's loop: every instruction stepped
 *   loop-free.c       the hardware counter's loop: the target runs freely,
 *                     skid compensation steps to the sample point
 *   run-insn.c        one instruction under watch: page faults, open pages
 *   sampling.c        decoding an instruction, sample points, retirement
 *   watchpoints.c     starting and ending watches: debug registers, pages
 *   watch-table.c     the live watches of an address space
 *   syscalls.c        system calls: kernel accesses, pages held for calls
 *   double-trap.c     sample start by a breakpoint at the precise pc
 *   process-events.c  clone, fork, exec and exit of the target's threads
 *   alloc-events.c    the allocation interposer's events, their call stacks
 *   unwind.c          a stopped thread's call stack, unwound from outside
 *   image-clock.c     process images and their reference clocks
 * The engine's comment at the top of pmu-sampler.c describes the whole. */
#ifndef LP_PMU_ENGINE_H
#define LP_PMU_ENGINE_H

#include <signal.h>
#include <stdint.h>
#include <sys/user.h>

#include "common/rng.h"
#include "counter.h"
#include "decode.h"
#include "pagecount.h"
#include "pmu-sampler.h"
#include "supervisor.h"
#include "watch-table.h"

struct lp_pmu_unwinder;

#define PAGE 4096ULL
#define MAX_UNPROT 256          /* pages one thread holds open for a system call */
#define NO_IMAGE UINT32_MAX     /* the parent of image 0 */

/* The engine's state of one address space = one process image. */
struct pmu_aspace {
	struct lp_pmu_watch_table watches; /* live watches (watch-table.h) */
	/* Watched pages held open for system calls in flight (one count per
	 * thread whose call needs the page): never protected meanwhile. */
	struct lp_pmu_pagecount held;
	uint32_t image;    /* its number */
	uint32_t nthreads; /* image thread numbers handed out */
	uint64_t *thread_refs; /* references of each image thread that is gone */
	size_t tr_cap;
	uint64_t dead;     /* references of its threads that are gone */
	int exited, status, exec;
	struct lp_pmu_unwinder *unw; /* allocation call stacks (alloc-events.c), made at the first */
	int unw_failed;
};

/* The engine's state of one thread (lp_pmu_thread.eng): its decoded
 * instruction and accesses, its system call in flight, its image. */
struct pmu_thread_state {
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
struct pmu_breakpoint {
	struct lp_pmu_proc *proc; /* the address space whose text holds it */
	uint64_t pc;
	uint8_t orig;             /* the byte the int3 replaced */
	uint8_t kind;             /* the event's: which reference of the instruction to sample */
	int active;
	uint64_t trigger, armed;  /* see lp_pmu_sample */
};

/* Breakpoints remembered after removal, to recognise their stale traps. */
#define DT_OLD 16

/* One run of the engine (lp_pmu_run): options, hooks, counter, decoder,
 * supervisor, the sampling state and the double trap's breakpoint. */
struct pmu_engine {
	const struct lp_pmu_options *o;
	const struct lp_pmu_hooks *h;
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
	int rr;            /* step counter: the thread stepped next, round robin */
	/* Free-running counter: the address space whose other threads
	 * world_stop stopped, while a page of it is open for one thread. */
	struct lp_pmu_proc *world;
	uint64_t prot_gen; /* mprotect calls of ours so far */
	int err;           /* first error inside a callback that cannot return one */
	struct pmu_breakpoint bp;        /* double trap: the breakpoint in place, if active */
	struct pmu_breakpoint old_bp[DT_OLD]; /* breakpoints removed lately (stale traps) */
	unsigned n_old_bp;
	struct lp_pmu_xsave_layout xlayout;
	struct lp_pmu_vregs vregs;
	uint8_t xsave[16384];
};

static inline uint64_t engine_now(struct pmu_engine *e)
{
	return e->c->ops->time(e->c);
}

static inline int ranges_overlap(uint64_t a, uint64_t size, uint64_t s, uint64_t len)
{
	return a < s + len && s < a + (size ? size : 1);
}

static inline uint64_t page_of(uint64_t a)
{
	return a & ~(PAGE - 1);
}

/* Does a page watch of as lie on page? */
static inline int page_watched(struct pmu_aspace *as, uint64_t page)
{
	return as && lp_pmu_watches_on_page(&as->watches, page);
}

/* image-clock.c */
struct pmu_aspace *lp_pmu_aspace_get(struct lp_pmu_proc *p);
struct pmu_thread_state *lp_pmu_thread_state(struct lp_pmu_thread *t);
uint64_t lp_pmu_image_now(struct pmu_engine *e, struct lp_pmu_proc *p);
void lp_pmu_image_join(struct pmu_engine *e, struct lp_pmu_thread *t, struct pmu_aspace *as);
void lp_pmu_image_leave(struct pmu_engine *e, struct lp_pmu_thread *t);
int lp_pmu_image_start(struct pmu_engine *e, struct lp_pmu_proc *p, struct lp_pmu_thread *t, uint32_t parent,
		       int ppid, int exec);
void lp_pmu_image_release(void *ctx, struct lp_pmu_proc *p);
int lp_pmu_aspace_threads(struct pmu_engine *e, struct lp_pmu_thread *t);

/* watchpoints.c */
int lp_pmu_page_protect(struct pmu_engine *e, struct lp_pmu_thread *t, uint64_t page);
int lp_pmu_page_unprotect(struct pmu_engine *e, struct lp_pmu_thread *t, uint64_t page);
int lp_pmu_dr_apply(struct lp_pmu_thread *t);
void lp_pmu_emit_sample(struct pmu_engine *e, struct lp_pmu_sample *s);
int lp_pmu_watch_drop(struct pmu_engine *e, struct lp_pmu_thread *t, struct pmu_aspace *as, struct lp_watch *w,
		      const uint64_t *open, int n_open);
int lp_pmu_watch_remove(struct pmu_engine *e, struct lp_pmu_thread *t, struct pmu_aspace *as, struct lp_watch *w);
int lp_pmu_watch_end(struct pmu_engine *e, struct lp_pmu_thread *t, struct pmu_aspace *as, struct lp_watch *w, uint64_t end,
		     uint64_t pc, int how);
int lp_pmu_rseq_page(struct pmu_engine *e, struct lp_pmu_thread *t, uint64_t page);
int lp_pmu_watch_start(struct pmu_engine *e, struct lp_pmu_thread *t, const struct lp_pmu_sample *s);
int lp_pmu_touches_page_watch(struct pmu_engine *e, struct pmu_aspace *as, const struct lp_pmu_access *acc, int n);
int lp_pmu_end_touched(struct pmu_engine *e, struct lp_pmu_thread *t, const struct lp_pmu_access *acc, int n,
		       uint64_t t0, uint64_t pc, const uint64_t *open, int n_open);

/* sampling.c */
int lp_pmu_arm_next(struct pmu_engine *e);
int lp_pmu_prepare_insn(struct pmu_engine *e, struct lp_pmu_thread *t, struct user_regs_struct *r);
int lp_pmu_insn_retired(struct pmu_engine *e, struct lp_pmu_thread *t, uint64_t t0);
void lp_pmu_check_sample_point(struct pmu_engine *e, struct lp_pmu_thread *t, uint64_t t0);
int lp_pmu_gather_partial(struct pmu_engine *e, struct lp_pmu_thread *t, uint64_t t0);

/* run-insn.c */
void lp_pmu_note_signal(struct pmu_engine *e, struct lp_pmu_thread *t, const struct lp_pmu_ev *ev);
int lp_pmu_step_sync(struct pmu_engine *e, struct lp_pmu_thread *t, int sig, siginfo_t *si);
int lp_pmu_is_watched_page(struct lp_pmu_thread *t, uint64_t addr);
int lp_pmu_run_insn(struct pmu_engine *e, struct lp_pmu_thread *t, int sig);

/* double-trap.c */
int lp_pmu_double_trap_overflow(struct pmu_engine *e, struct lp_pmu_thread *t);
int lp_pmu_double_trap_is_ours(struct pmu_engine *e, struct lp_pmu_thread *t, uint64_t rip);
int lp_pmu_double_trap_stale(struct pmu_engine *e, struct lp_pmu_thread *t, struct user_regs_struct *r);
int lp_pmu_double_trap_take(struct pmu_engine *e, struct lp_pmu_thread *t, int trapped);
int lp_pmu_double_trap_step_hit(struct pmu_engine *e, struct lp_pmu_thread *t, int sig);

/* syscalls.c */
int lp_pmu_syscall_may_block(uint64_t nr, const uint64_t *a);
int lp_pmu_release_holds(struct pmu_engine *e, struct lp_pmu_thread *t, int reprotect);
int lp_pmu_syscall_enter(struct pmu_engine *e, struct lp_pmu_thread *t, uint64_t nr, const struct user_regs_struct *r);
int lp_pmu_syscall_exit(struct pmu_engine *e, struct lp_pmu_thread *t);

/* alloc-events.c */
int lp_pmu_alloc_event(struct pmu_engine *e, struct lp_pmu_thread *t, const struct user_regs_struct *r);

/* process-events.c */
void lp_pmu_on_thread_leave(void *ctx, struct lp_pmu_thread *t, int gone);
void lp_pmu_thread_exit(struct pmu_engine *e, struct lp_pmu_ev *ev);
int lp_pmu_process_event(struct pmu_engine *e, struct lp_pmu_ev *ev);

/* loop-step.c */
int lp_pmu_loop_step(struct pmu_engine *e);

/* loop-free.c */
int lp_pmu_loop_free(struct pmu_engine *e);

#endif
