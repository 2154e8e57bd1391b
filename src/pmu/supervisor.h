/* The ptrace supervisor of the pmu backend: starts the target, follows
 * every thread and child process, and gives the engine the primitives it
 * needs (stop events, single-step, registers, memory, system calls made on
 * the target's behalf). Policy (which signals are ours) is the engine's. */
#ifndef LP_PMU_SUPERVISOR_H
#define LP_PMU_SUPERVISOR_H

#include <signal.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

#include "maps.h"

struct lp_pmu_proc {
	pid_t pid;
	int refs;          /* threads using this address space (vfork shares) */
	int memfd;         /* /proc/PID/mem, for reads and writes */
	uint64_t gadget;   /* address of our "syscall; int3" page, 0 before exec */
	struct lp_pmu_maps maps;
	void *watch;       /* the engine's per-address-space watch state */
	/* Called before the address space goes (exit, exec), so the engine
	 * can close what it watched there. */
	void (*on_release)(void *ctx, struct lp_pmu_proc *p);
	void *ctx;
};

enum lp_pmu_tstate {
	LP_PMU_T_STOPPED,  /* in a ptrace stop, ready to resume */
	LP_PMU_T_RUNNING,  /* resumed, an event will come */
	LP_PMU_T_SYSCALL,  /* stepping over a system call: may block */
	LP_PMU_T_NEW,      /* announced by a clone event, initial stop not seen */
};

struct lp_pmu_thread {
	pid_t tid;
	pid_t tgid;               /* its process */
	uint32_t num;             /* 0, 1, ... in order of appearance */
	enum lp_pmu_tstate state;
	struct lp_pmu_proc *proc;
	int dr_used;              /* debug-register slots in use (bitmask) */
	/* Engine state of a stepped instruction. */
	int pre_valid;
	uint64_t sys_nr, sys_args[6];
	int sys_in;
	void *eng;                /* the engine's per-thread state */
	/* Stopped at a syscall-entry stop (PTRACE_GET_SYSCALL_INFO): the
	 * kernel is inside the call, so lp_pmu_sup_syscall must run the
	 * injected call in its place and then re-enter the target's. */
	int at_entry;
	/* A stop (waitpid status) taken while stopping the thread for
	 * lp_pmu_sup_interrupt: the thread stays stopped and the next
	 * lp_pmu_sup_wait returns it (unless frozen). */
	int stashed, stash_status;
	int frozen;               /* kept stopped for another thread (see .c) */
	/* Signals the engine owns (s->owns) that a stop inside the
	 * supervisor took and dropped: the last one's siginfo. */
	int notified;
	siginfo_t notified_si;
};

enum lp_pmu_event {
	LP_PMU_EV_TRAP,     /* SIGTRAP of a step or debug register; si valid */
	LP_PMU_EV_SIGNAL,   /* any other signal-delivery-stop; sig, si valid */
	LP_PMU_EV_SYSCALL,  /* syscall-enter or -exit stop (PTRACE_SYSCALL) */
	LP_PMU_EV_CLONE,    /* new thread: ev.child */
	LP_PMU_EV_FORK,     /* new process (fork or vfork): ev.child */
	LP_PMU_EV_EXEC,     /* the process exec'd: its maps were reloaded */
	LP_PMU_EV_EXIT,     /* the thread is gone; ev.status as waitpid gave it */
	LP_PMU_EV_OTHER,    /* group-stop, initial stop of a new thread: resume */
};

struct lp_pmu_ev {
	enum lp_pmu_event kind;
	struct lp_pmu_thread *t;
	struct lp_pmu_thread *child;
	int sig;
	int status;
	int vfork;
	siginfo_t si;
};

#define LP_PMU_MAX_THREADS 256

struct lp_pmu_sup {
	struct lp_pmu_thread *t[LP_PMU_MAX_THREADS];
	int n;
	uint32_t next_num;
	pid_t leader;      /* the process we started */
	int leader_status; /* its waitpid status once it is gone */
	int leader_done;
	uint64_t injected; /* system calls made on the target's behalf */
	void (*on_release)(void *ctx, struct lp_pmu_proc *p);
	/* Thread t leaves its address space t->proc, before that may be
	 * released: gone = 1 when the thread is dropped (exit, the other
	 * threads of an exec, the end), 0 when it execs (it stays, with a new
	 * proc). May be NULL. */
	void (*on_thread_leave)(void *ctx, struct lp_pmu_thread *t, int gone);
	/* Is this signal the engine's (a counter overflow)? Signals that stop
	 * an injected system call are kept for the target unless it says
	 * so; then they are dropped and noted in t->notified. May be NULL. */
	int (*owns)(void *ctx, const siginfo_t *si);
	void *ctx;
	/* The target's environment ("NAME=value", NULL-terminated); NULL:
	 * ours. */
	char *const *envp;
};

/* Start argv[0] traced (no ASLR when no_aslr, so runs are repeatable) and
 * return with its only thread stopped after exec. */
int lp_pmu_sup_spawn(struct lp_pmu_sup *s, char *const argv[], int no_aslr);
/* Kill whatever is left and free everything. */
void lp_pmu_sup_release(struct lp_pmu_sup *s);

/* Wait for the next stop of tid (-1: any thread) and classify it: 1 when
 * an event was returned, 0 when nohang and none is ready, or LP_E*. */
int lp_pmu_sup_wait(struct lp_pmu_sup *s, pid_t tid, struct lp_pmu_ev *ev, int nohang);

enum lp_pmu_resume { LP_PMU_STEP, LP_PMU_CONT, LP_PMU_SYSCALLS };
int lp_pmu_sup_resume(struct lp_pmu_thread *t, enum lp_pmu_resume how, int sig);

int lp_pmu_sup_getregs(struct lp_pmu_thread *t, struct user_regs_struct *r);
int lp_pmu_sup_setregs(struct lp_pmu_thread *t, const struct user_regs_struct *r);
/* Read up to len bytes at addr; returns bytes read (short near unmapped). */
long lp_pmu_sup_read(struct lp_pmu_proc *p, uint64_t addr, void *buf, size_t len);
int lp_pmu_sup_write(struct lp_pmu_proc *p, uint64_t addr, const void *buf, size_t len);

/* Make the stopped thread t execute system call nr(args) and return its
 * result in *ret; the thread's registers are restored. From a
 * syscall-entry stop the injected call replaces the target's, which is
 * then entered again (the thread is back at its entry stop). Target
 * signals that arrive meanwhile are queued again afterwards; the
 * engine's (s->owns) are dropped and noted in t->notified. */
int lp_pmu_sup_syscall(struct lp_pmu_sup *s, struct lp_pmu_thread *t, long nr, const uint64_t args[6],
		       int64_t *ret);

/* The XSAVE image of t's extended registers (PTRACE_GETREGSET
 * NT_X86_XSTATE, standard format): bytes read, or LP_E*. */
long lp_pmu_sup_getxstate(struct lp_pmu_thread *t, void *buf, size_t len);

/* Debug registers of one thread (x86: DR0-3 address, DR6 status, DR7 control). */
int lp_pmu_sup_dr_get(struct lp_pmu_thread *t, int i, uint64_t *v);
int lp_pmu_sup_dr_set(struct lp_pmu_thread *t, int i, uint64_t v);

/* Stop the running thread t (PTRACE_INTERRUPT) and wait until it is
 * stopped. 1: it is in our interrupt's stop; 0: it stopped for a reason
 * of its own first (a signal, a system call, an event, its exit), which
 * is stashed for the next lp_pmu_sup_wait; LP_E* on error. A thread that
 * cannot run any more (a zombie leader) also gives 0, with nothing
 * stashed. */
int lp_pmu_sup_interrupt(struct lp_pmu_sup *s, struct lp_pmu_thread *t);

struct lp_pmu_thread *lp_pmu_sup_find(struct lp_pmu_sup *s, pid_t tid);
void lp_pmu_proc_put(struct lp_pmu_proc *p);
/* Drop a thread that exited (EXIT event: ev.child). */
void lp_pmu_sup_forget(struct lp_pmu_sup *s, struct lp_pmu_thread *t);

#endif
