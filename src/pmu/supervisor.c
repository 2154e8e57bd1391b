/* ptrace supervisor (supervisor.h).
 *
 * The target is attached with PTRACE_SEIZE before its exec (so that
 * PTRACE_INTERRUPT works: the engine stops the other threads of an
 * address space while it has one of its pages open) and stops at its
 * exec; options follow clones, forks, vforks and execs and kill
 * everything if we die (PTRACE_O_EXITKILL). A new thread or child may
 * report its initial stop before or after the parent's event; both orders
 * are handled by creating the thread record on whichever comes first.
 * Whether a new task shares its parent's address space is decided by its
 * clone flags (CLONE_VM), not by the kind of event: a clone(CLONE_VM)
 * without CLONE_THREAD is reported as a fork but shares the memory. */
#include "supervisor.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sched.h>
#include <sys/personality.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <locprof/common.h>
#include "common/error.h"

#define PTRACE_OPTS (PTRACE_O_TRACECLONE | PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK | \
		     PTRACE_O_TRACEEXEC | PTRACE_O_TRACESYSGOOD | PTRACE_O_EXITKILL)

/* waitpid for one thread, through signals that interrupt it (the front
 * end forwards SIGTERM to the target from a handler). */
static pid_t wait_tid(pid_t tid, int *status)
{
	pid_t r;

	while ((r = waitpid(tid, status, __WALL)) < 0 && errno == EINTR)
		;
	return r;
}

static struct lp_pmu_proc *proc_new(struct lp_pmu_sup *s, pid_t pid)
{
	struct lp_pmu_proc *p = calloc(1, sizeof(*p));
	char path[64];

	if (!p)
		return NULL;
	p->pid = pid;
	p->refs = 1;
	p->on_release = s->on_release;
	p->ctx = s->ctx;
	lp_pmu_maps_init(&p->maps);
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	p->memfd = open(path, O_RDWR | O_CLOEXEC);
	if (p->memfd < 0) {
		free(p);
		return NULL;
	}
	return p;
}

void lp_pmu_proc_put(struct lp_pmu_proc *p)
{
	if (!p || --p->refs > 0)
		return;
	if (p->on_release)
		p->on_release(p->ctx, p);
	close(p->memfd);
	lp_pmu_maps_release(&p->maps);
	free(p->watch); /* the engine's state is one flat allocation */
	free(p);
}

static struct lp_pmu_thread *thread_add(struct lp_pmu_sup *s, pid_t tid, struct lp_pmu_proc *p)
{
	struct lp_pmu_thread *t;

	if (s->n == LP_PMU_MAX_THREADS)
		return NULL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->tid = tid;
	t->num = s->next_num++;
	t->proc = p;
	t->state = LP_PMU_T_NEW;
	s->t[s->n++] = t;
	return t;
}

struct lp_pmu_thread *lp_pmu_sup_find(struct lp_pmu_sup *s, pid_t tid)
{
	for (int i = 0; i < s->n; i++)
		if (s->t[i]->tid == tid)
			return s->t[i];
	return NULL;
}

void lp_pmu_sup_forget(struct lp_pmu_sup *s, struct lp_pmu_thread *t)
{
	for (int i = 0; i < s->n; i++) {
		if (s->t[i] != t)
			continue;
		memmove(&s->t[i], &s->t[i + 1], (size_t)(s->n - i - 1) * sizeof(s->t[0]));
		s->n--;
		break;
	}
	if (s->on_thread_leave && t->proc)
		s->on_thread_leave(s->ctx, t, 1);
	lp_pmu_proc_put(t->proc);
	free(t->eng);
	free(t);
}

static int load_maps(struct lp_pmu_proc *p)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)p->pid);
	return lp_pmu_maps_load(&p->maps, path);
}

/* Map our one-page "syscall; int3" gadget into a freshly exec'd process, by
 * borrowing the bytes at its pc once (it has one thread at exec, so nobody
 * else can run them). Later injections jump to the gadget, so no code of
 * the target is ever modified while it has several threads. */
static int make_gadget(struct lp_pmu_sup *s, struct lp_pmu_thread *t)
{
	static const uint8_t code[] = { 0x0f, 0x05, 0xcc };
	struct user_regs_struct r, saved;
	uint8_t orig[2];
	uint64_t args[6] = { 0, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS,
			     (uint64_t)-1, 0 };
	int64_t ret;
	int err;

	/* The exec stop is inside execve: its return value would overwrite
	 * rax on the way out. One step leaves the kernel first; a step from a
	 * syscall stop traps on return to user mode, before any instruction. */
	if ((err = lp_pmu_sup_getregs(t, &r)) < 0)
		return err;
	if (ptrace(PTRACE_SINGLESTEP, t->tid, 0, 0) < 0)
		return lp_seterr_errno("ptrace(SINGLESTEP %d)", (int)t->tid);
	for (;;) {
		int status;

		if (wait_tid(t->tid, &status) < 0)
			return lp_seterr_errno("waitpid");
		if (!WIFSTOPPED(status))
			return lp_seterr(LP_EIO, "the target died after exec");
		if (status >> 8 == SIGTRAP)
			break;
		if (ptrace(PTRACE_SINGLESTEP, t->tid, 0, (void *)(long)(status >> 16 ? 0 : WSTOPSIG(status))) < 0)
			return lp_seterr_errno("ptrace(SINGLESTEP %d)", (int)t->tid);
	}
	if ((err = lp_pmu_sup_getregs(t, &saved)) < 0)
		return err;
	if (saved.rip != r.rip)
		return lp_seterr(LP_EIO, "an instruction ran while leaving execve (kernel behaviour "
				 "this supervisor does not expect)");
	if (lp_pmu_sup_read(t->proc, saved.rip, orig, 2) != 2)
		return lp_seterr(LP_EIO, "cannot read the target's code at 0x%llx",
				 (unsigned long long)saved.rip);
	if ((err = lp_pmu_sup_write(t->proc, saved.rip, code, 2)) < 0)
		return err;
	t->proc->gadget = saved.rip;
	err = lp_pmu_sup_syscall(s, t, SYS_mmap, args, &ret);
	lp_pmu_sup_write(t->proc, saved.rip, orig, 2);
	t->proc->gadget = 0;
	if (err < 0)
		return err;
	if (ret < 0 && ret > -4096)
		return lp_seterr(LP_EIO, "mmap in the target failed: %s", strerror((int)-ret));
	if ((err = lp_pmu_sup_write(t->proc, (uint64_t)ret, code, sizeof(code))) < 0)
		return err;
	t->proc->gadget = (uint64_t)ret;
	/* Our page is not the target's: keep it out of the shadow so that
	 * nothing ever protects it. */
	if ((err = load_maps(t->proc)) < 0)
		return err;
	return lp_pmu_maps_unmap(&t->proc->maps, (uint64_t)ret, 4096);
}

int lp_pmu_sup_spawn(struct lp_pmu_sup *s, char *const argv[], int no_aslr)
{
	int status, err, go[2];
	pid_t pid;
	struct lp_pmu_proc *p;
	struct lp_pmu_thread *t;

	if (pipe2(go, O_CLOEXEC) < 0)
		return lp_seterr_errno("pipe");
	pid = fork();
	if (pid < 0) {
		close(go[0]);
		close(go[1]);
		return lp_seterr_errno("fork");
	}
	if (pid == 0) {
		char c;
		ssize_t n;

		close(go[1]);
		if (no_aslr)
			personality(ADDR_NO_RANDOMIZE);
		/* Wait until the parent has seized us. */
		while ((n = read(go[0], &c, 1)) < 0 && errno == EINTR)
			;
		if (n != 1)
			_exit(126);
		if (s->envp)
			execvpe(argv[0], argv, s->envp);
		else
			execvp(argv[0], argv);
		_exit(127);
	}
	close(go[0]);
	s->leader = pid;
	if (ptrace(PTRACE_SEIZE, pid, 0, PTRACE_OPTS) < 0) {
		err = lp_seterr_errno("ptrace(SEIZE %d)", (int)pid);
		close(go[1]);
		kill(pid, SIGKILL);
		wait_tid(pid, &status);
		return err;
	}
	if (write(go[1], "x", 1) != 1) {
		close(go[1]);
		return lp_seterr_errno("cannot start the target");
	}
	close(go[1]);
	if (wait_tid(pid, &status) < 0)
		return lp_seterr_errno("waitpid");
	if (!WIFSTOPPED(status) || status >> 8 != (SIGTRAP | (PTRACE_EVENT_EXEC << 8))) {
		if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
			return lp_seterr(LP_EINVAL, "cannot run '%s' (not found or not executable)", argv[0]);
		return lp_seterr(LP_EIO, "the target did not exec '%s'", argv[0]);
	}
	p = proc_new(s, pid);
	if (!p)
		return lp_seterr_errno("cannot open /proc/%d/mem", (int)pid);
	t = thread_add(s, pid, p);
	if (!t) {
		lp_pmu_proc_put(p);
		return lp_seterr(LP_ENOMEM, "out of memory");
	}
	t->state = LP_PMU_T_STOPPED;
	t->tgid = pid;
	if ((err = load_maps(p)) < 0 || (err = make_gadget(s, t)) < 0)
		return err;
	return 0;
}

void lp_pmu_sup_release(struct lp_pmu_sup *s)
{
	int status;

	while (s->n > 0) {
		struct lp_pmu_thread *t = s->t[s->n - 1];

		kill(t->tid, SIGKILL);
		lp_pmu_sup_forget(s, t);
	}
	while (waitpid(-1, &status, __WALL | WNOHANG) > 0)
		;
}

int lp_pmu_sup_resume(struct lp_pmu_thread *t, enum lp_pmu_resume how, int sig)
{
	long req = how == LP_PMU_STEP ? PTRACE_SINGLESTEP : how == LP_PMU_CONT ? PTRACE_CONT : PTRACE_SYSCALL;

	/* ESRCH: the thread was killed while stopped (another thread's
	 * exit_group, a SIGKILL); ptrace(2) says a tracer must expect it on
	 * any request. It is as good as running: wait reports its exit next. */
	if (ptrace(req, t->tid, 0, (void *)(long)sig) < 0 && errno != ESRCH)
		return lp_seterr_errno("ptrace(resume %d)", (int)t->tid);
	t->state = LP_PMU_T_RUNNING;
	t->at_entry = 0;
	return 0;
}

int lp_pmu_sup_getregs(struct lp_pmu_thread *t, struct user_regs_struct *r)
{
	if (ptrace(PTRACE_GETREGS, t->tid, 0, r) < 0)
		return lp_seterr_errno("ptrace(GETREGS %d)", (int)t->tid);
	return 0;
}

int lp_pmu_sup_setregs(struct lp_pmu_thread *t, const struct user_regs_struct *r)
{
	if (ptrace(PTRACE_SETREGS, t->tid, 0, r) < 0)
		return lp_seterr_errno("ptrace(SETREGS %d)", (int)t->tid);
	return 0;
}

long lp_pmu_sup_read(struct lp_pmu_proc *p, uint64_t addr, void *buf, size_t len)
{
	size_t done = 0;

	/* pread stops at the first unreadable page; read page by page so
	 * that an instruction at the end of a mapping still decodes. */
	while (done < len) {
		size_t chunk = len - done;
		uint64_t a = addr + done;
		size_t to_page = 4096 - (a & 4095);
		ssize_t n;

		if (chunk > to_page)
			chunk = to_page;
		n = pread(p->memfd, (char *)buf + done, chunk, (off_t)a);
		if (n <= 0)
			break;
		done += (size_t)n;
	}
	return (long)done;
}

int lp_pmu_sup_write(struct lp_pmu_proc *p, uint64_t addr, const void *buf, size_t len)
{
	if (pwrite(p->memfd, buf, len, (off_t)addr) != (ssize_t)len)
		return lp_seterr_errno("cannot write the target's memory at 0x%llx", (unsigned long long)addr);
	return 0;
}

/* Resume t with req until its stop has status >> 8 == want. Event stops
 * on the way (a pending PTRACE_INTERRUPT, a group-stop) are resumed past;
 * a signal-delivery-stop dequeued a signal: the engine's are dropped and
 * noted in t->notified, the target's are collected in *later (queued
 * again by the caller once done: queuing at once would stop us again
 * before the step, forever). */
static int run_until(struct lp_pmu_sup *s, struct lp_pmu_thread *t, long req, int want, uint64_t *later)
{
	int status;

	for (;;) {
		siginfo_t si;
		int sig;

		if (ptrace(req, t->tid, 0, 0) < 0)
			return lp_seterr_errno("ptrace(resume %d)", (int)t->tid);
		if (wait_tid(t->tid, &status) < 0)
			return lp_seterr_errno("waitpid");
		if (!WIFSTOPPED(status))
			return lp_seterr(LP_EIO, "thread %d died in an injected system call", (int)t->tid);
		if (status >> 8 == want)
			return 0;
		if (status >> 16)
			continue;
		sig = WSTOPSIG(status);
		if (sig == (SIGTRAP | 0x80))
			continue;
		if (s->owns && ptrace(PTRACE_GETSIGINFO, t->tid, 0, &si) == 0 && s->owns(s->ctx, &si)) {
			t->notified = 1;
			t->notified_si = si;
			continue;
		}
		/* Its siginfo becomes that of a tgkill. */
		if (sig != SIGSTOP && sig < 65)
			*later |= 1ULL << (sig - 1);
	}
}

int lp_pmu_sup_syscall(struct lp_pmu_sup *s, struct lp_pmu_thread *t, long nr, const uint64_t a[6],
		       int64_t *ret)
{
	struct user_regs_struct saved, r;
	uint64_t later = 0;
	int err;

	if (!t->proc->gadget)
		return lp_seterr(LP_EINVAL, "no system call gadget in process %d", (int)t->proc->pid);
	if ((err = lp_pmu_sup_getregs(t, &saved)) < 0)
		return err;
	r = saved;
	r.rdi = a[0];
	r.rsi = a[1];
	r.rdx = a[2];
	r.r10 = a[3];
	r.r8 = a[4];
	r.r9 = a[5];
	if (t->at_entry) {
		/* A syscall-entry stop is inside the kernel, past the syscall
		 * instruction: a jump to the gadget would only take effect
		 * after the target's call (which setting orig_rax to -1 would
		 * skip: it "returned" -ENOSYS) and the step would trap at its
		 * exit before the gadget ran. So our call replaces the
		 * target's here, and the target's is then entered again from
		 * its syscall instruction (2 bytes), back to this stop. */
		r.orig_rax = (uint64_t)nr;
		if ((err = lp_pmu_sup_setregs(t, &r)) < 0)
			return err;
		if ((err = run_until(s, t, PTRACE_SYSCALL, SIGTRAP | 0x80, &later)) < 0)
			return err;
		if ((err = lp_pmu_sup_getregs(t, &r)) < 0)
			return err;
		*ret = (int64_t)r.rax;
		r = saved;
		r.rip -= 2;
		r.rax = saved.orig_rax;
		if ((err = lp_pmu_sup_setregs(t, &r)) < 0 ||
		    (err = run_until(s, t, PTRACE_SYSCALL, SIGTRAP | 0x80, &later)) < 0 ||
		    (err = lp_pmu_sup_getregs(t, &r)) < 0)
			return err;
		if (r.orig_rax != saved.orig_rax || r.rip != saved.rip)
			return lp_seterr(LP_EIO, "thread %d did not enter its system call again", (int)t->tid);
		t->at_entry = 1;
	} else {
		r.rip = t->proc->gadget;
		r.rax = (uint64_t)nr;
		r.orig_rax = (uint64_t)-1; /* not restarting an interrupted call */
		if ((err = lp_pmu_sup_setregs(t, &r)) < 0)
			return err;
		if ((err = run_until(s, t, PTRACE_SINGLESTEP, SIGTRAP, &later)) < 0)
			return err;
		if ((err = lp_pmu_sup_getregs(t, &r)) < 0)
			return err;
		*ret = (int64_t)r.rax;
	}
	s->injected++;
	for (int sig = 1; sig <= 64; sig++)
		if (later & (1ULL << (sig - 1)))
			syscall(SYS_tgkill, t->tgid, t->tid, sig);
	return lp_pmu_sup_setregs(t, &saved);
}

/* Is tid a zombie or gone (it can run no more)? */
static int cannot_run(pid_t tid)
{
	char path[64], buf[256], *rp;
	FILE *f;
	int gone = 1;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)tid);
	if ((f = fopen(path, "re"))) {
		if (fgets(buf, sizeof(buf), f) && (rp = strrchr(buf, ')')))
			gone = rp[1] == ' ' && (rp[2] == 'Z' || rp[2] == 'X');
		fclose(f);
	}
	return gone;
}

int lp_pmu_sup_interrupt(struct lp_pmu_sup *s, struct lp_pmu_thread *t)
{
	int status;
	pid_t r;

	if (ptrace(PTRACE_INTERRUPT, t->tid, 0, 0) < 0)
		return errno == ESRCH ? 0 : lp_seterr_errno("ptrace(INTERRUPT %d)", (int)t->tid);
	/* Polled, not waited for: a leader that has exited while its other
	 * threads run is a zombie that reports nothing until they are gone. */
	for (unsigned spins = 0;; spins++) {
		r = waitpid(t->tid, &status, __WALL | WNOHANG);
		if (r == t->tid)
			break;
		if (r < 0 && errno != EINTR)
			return lp_seterr_errno("waitpid");
		if (spins < 64) {
			sched_yield();
			continue;
		}
		if (cannot_run(t->tid))
			return 0;
		nanosleep(&(struct timespec){ 0, 20000 }, NULL);
	}
	t->state = LP_PMU_T_STOPPED;
	t->at_entry = 0;
	if (WIFSTOPPED(status) && status >> 8 == (SIGTRAP | (PTRACE_EVENT_STOP << 8)))
		return 1;
	t->stashed = 1;
	t->stash_status = status;
	return 0;
}

long lp_pmu_sup_getxstate(struct lp_pmu_thread *t, void *buf, size_t len)
{
	struct iovec iov = { buf, len };

	if (ptrace(PTRACE_GETREGSET, t->tid, (void *)NT_X86_XSTATE, &iov) < 0)
		return lp_seterr_errno("ptrace(GETREGSET xstate %d)", (int)t->tid);
	return (long)iov.iov_len;
}

int lp_pmu_sup_dr_get(struct lp_pmu_thread *t, int i, uint64_t *v)
{
	long x;

	errno = 0;
	x = ptrace(PTRACE_PEEKUSER, t->tid, offsetof(struct user, u_debugreg) + (size_t)i * 8, 0);
	if (errno)
		return lp_seterr_errno("ptrace(PEEKUSER dr%d)", i);
	*v = (uint64_t)x;
	return 0;
}

int lp_pmu_sup_dr_set(struct lp_pmu_thread *t, int i, uint64_t v)
{
	if (ptrace(PTRACE_POKEUSER, t->tid, offsetof(struct user, u_debugreg) + (size_t)i * 8, v) < 0)
		return lp_seterr_errno("ptrace(POKEUSER dr%d)", i);
	return 0;
}

/* The clone flags of the call that t's event (clone, fork, vfork)
 * reports: from its registers at the event stop (clone: rdi; clone3: the
 * first field of its struct clone_args), else from the event's kind. */
static uint64_t clone_flags(struct lp_pmu_thread *t, int event)
{
	struct user_regs_struct r;
	uint64_t f;

	if (event == PTRACE_EVENT_VFORK)
		return CLONE_VM | CLONE_VFORK;
	if (lp_pmu_sup_getregs(t, &r) == 0) {
		if (r.orig_rax == SYS_clone)
			return r.rdi;
		if (r.orig_rax == SYS_clone3 && lp_pmu_sup_read(t->proc, r.rdi, &f, 8) == 8)
			return f;
		if (r.orig_rax == SYS_fork)
			return 0;
	}
	return event == PTRACE_EVENT_CLONE ? CLONE_VM | CLONE_THREAD : 0;
}

int lp_pmu_sup_wait(struct lp_pmu_sup *s, pid_t tid, struct lp_pmu_ev *ev, int nohang)
{
	int status, event;
	pid_t got;
	struct lp_pmu_thread *t;

	memset(ev, 0, sizeof(*ev));
	for (;;) {
		/* A stop taken by lp_pmu_sup_interrupt comes first (a frozen
		 * thread's only when asked for by its tid). */
		t = NULL;
		for (int i = 0; i < s->n && !t; i++)
			if (s->t[i]->stashed && (tid == -1 ? !s->t[i]->frozen : s->t[i]->tid == tid))
				t = s->t[i];
		if (t) {
			t->stashed = 0;
			status = t->stash_status;
			got = t->tid;
			break;
		}
		got = waitpid(tid, &status, __WALL | (nohang ? WNOHANG : 0));
		if (got == 0)
			return 0;
		if (got < 0) {
			if (errno == EINTR)
				continue;
			return lp_seterr_errno("waitpid");
		}
		t = lp_pmu_sup_find(s, got);
		if (!t) {
			/* A new thread or child stopping before its parent's
			 * event told us about it: record it now; the parent's
			 * event completes it. */
			t = thread_add(s, got, NULL);
			if (!t)
				return lp_seterr(LP_ELIMIT, "more than %d threads", LP_PMU_MAX_THREADS);
			t->state = WIFSTOPPED(status) ? LP_PMU_T_STOPPED : LP_PMU_T_NEW;
			if (WIFSTOPPED(status))
				t->dr_used = -1; /* marker: initial stop seen, parent unknown */
			continue;
		}
		break;
	}
	ev->t = t;
	if (WIFEXITED(status) || WIFSIGNALED(status)) {
		ev->kind = LP_PMU_EV_EXIT;
		ev->status = status;
		if (got == s->leader) {
			s->leader_status = status;
			s->leader_done = 1;
		}
		ev->t = NULL;
		ev->child = t; /* for the engine's bookkeeping before removal */
		return 1;
	}
	t->state = LP_PMU_T_STOPPED;
	t->at_entry = 0;
	event = status >> 16;
	if (event == PTRACE_EVENT_CLONE || event == PTRACE_EVENT_FORK || event == PTRACE_EVENT_VFORK) {
		unsigned long msg;
		uint64_t flags = clone_flags(t, event);
		struct lp_pmu_thread *c;

		ptrace(PTRACE_GETEVENTMSG, got, 0, &msg);
		c = lp_pmu_sup_find(s, (pid_t)msg);
		if (!c && !(c = thread_add(s, (pid_t)msg, NULL)))
			return lp_seterr(LP_ELIMIT, "more than %d threads", LP_PMU_MAX_THREADS);
		c->tgid = (flags & CLONE_THREAD) ? t->tgid : c->tid;
		if ((flags & CLONE_VM) && (flags & CLONE_THREAD)) {
			c->proc = t->proc;
			t->proc->refs++;
			ev->kind = LP_PMU_EV_CLONE;
		} else if (flags & CLONE_VM) {
			/* Same address space (vfork: until the child execs). */
			c->proc = t->proc;
			t->proc->refs++;
			ev->kind = LP_PMU_EV_FORK;
			ev->vfork = 1;
		} else {
			struct lp_pmu_proc *p = proc_new(s, (pid_t)msg);

			if (!p)
				return lp_seterr_errno("cannot open /proc/%d/mem", (int)msg);
			c->proc = p;
			p->gadget = t->proc->gadget;
			/* The child's shadow is the parent's copy. */
			for (size_t i = 0; i < t->proc->maps.n; i++)
				lp_pmu_maps_map(&p->maps, t->proc->maps.r[i].start,
						t->proc->maps.r[i].end - t->proc->maps.r[i].start,
						t->proc->maps.r[i].prot);
			p->maps.brk = t->proc->maps.brk;
			ev->kind = LP_PMU_EV_FORK;
		}
		/* Wait for the child's initial stop so that it can be used. */
		if (c->dr_used != -1) {
			int st;

			while (waitpid(c->tid, &st, __WALL) < 0 && errno == EINTR)
				;
		}
		c->dr_used = 0;
		c->state = LP_PMU_T_STOPPED;
		ev->child = c;
		return 1;
	}
	if (event == PTRACE_EVENT_EXEC) {
		struct lp_pmu_proc *p;
		unsigned long former;
		int err;

		/* A non-leader thread that execs takes the leader's tid. */
		ptrace(PTRACE_GETEVENTMSG, got, 0, &former);
		t->tgid = got;
		p = proc_new(s, got);
		if (!p)
			return lp_seterr_errno("cannot open /proc/%d/mem", (int)got);
		/* The other threads of the old image are gone (no exit events
		 * are promised for them); drop their records. */
		for (int i = s->n - 1; i >= 0; i--)
			if (s->t[i] != t && s->t[i]->tgid == t->tgid)
				lp_pmu_sup_forget(s, s->t[i]);
		if (s->on_thread_leave && t->proc)
			s->on_thread_leave(s->ctx, t, 0);
		lp_pmu_proc_put(t->proc);
		t->proc = p;
		if ((err = load_maps(p)) < 0 || (err = make_gadget(s, t)) < 0)
			return err;
		ev->kind = LP_PMU_EV_EXEC;
		return 1;
	}
	if (WSTOPSIG(status) == (SIGTRAP | 0x80)) {
		struct __ptrace_syscall_info info;

		if (ptrace(PTRACE_GET_SYSCALL_INFO, got, sizeof(info), &info) > 0)
			t->at_entry = info.op == PTRACE_SYSCALL_INFO_ENTRY;
		ev->kind = LP_PMU_EV_SYSCALL;
		return 1;
	}
	if (event == PTRACE_EVENT_STOP || ptrace(PTRACE_GETSIGINFO, got, 0, &ev->si) < 0) {
		ev->kind = LP_PMU_EV_OTHER; /* group-stop */
		return 1;
	}
	ev->sig = WSTOPSIG(status);
	ev->kind = ev->sig == SIGTRAP && ev->si.si_code > 0 ? LP_PMU_EV_TRAP : LP_PMU_EV_SIGNAL;
	return 1;
}
