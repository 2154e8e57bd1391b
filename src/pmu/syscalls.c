/* System calls of the target: the buffers the kernel reads or writes end
 * the samples of the lines they cover, pages the kernel will touch are
 * opened (held) for the call, and mapping changes are followed. */
#include <sched.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>

#include "engine.h"
#include "pmu-alloc-abi.h"

/* System calls that may wait for another thread: stepped in the
 * background so that the others keep running. */
int lp_pmu_syscall_may_block(uint64_t nr, const uint64_t *a)
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
static int syscall_buffers(struct pmu_engine *e, struct lp_pmu_thread *t, uint64_t nr, const uint64_t *a,
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
 * call and hold it open (as->held) until lp_pmu_syscall_exit: nothing protects it
 * meanwhile. The other threads of the address space may run during the
 * call (the step counter's blocking calls, every call with a free-running
 * counter): with the step counter their accesses to the page are decided
 * by the decoding (touches_held); with a free-running counter they are
 * not seen (stats.exposed counts such pages; docs/pmu.md). */
static int hold_for_call(struct pmu_engine *e, struct lp_pmu_thread *t, uint64_t pg)
{
	struct pmu_thread_state *x = t->eng;
	struct pmu_aspace *as = t->proc->watch;
	int err;

	if (lp_pmu_pagecount_add(&as->held, pg) < 0)
		return LP_ENOMEM;
	x->unprot[x->n_unprot++] = pg;
	if (!e->c->ops->stepping && lp_pmu_aspace_threads(e, t) > 1)
		e->st->exposed++;
	if (lp_pmu_pagecount_get(&as->held, pg) > 1)
		return 0; /* already open */
	if ((err = lp_pmu_page_unprotect(e, t, pg)) < 0)
		return err;
	return 0;
}

/* Release t's holds (its call returned, or it is gone); with reprotect,
 * protect again the pages still watched that nobody else holds. */
int lp_pmu_release_holds(struct pmu_engine *e, struct lp_pmu_thread *t, int reprotect)
{
	struct pmu_thread_state *x = t->eng;
	struct pmu_aspace *as = t->proc ? t->proc->watch : NULL;
	int err;

	for (int i = 0; x && as && i < x->n_unprot; i++) {
		lp_pmu_pagecount_remove(&as->held, x->unprot[i]);
		if (reprotect && page_watched(as, x->unprot[i]) && (err = lp_pmu_page_protect(e, t, x->unprot[i])) < 0)
			return err;
	}
	if (x)
		x->n_unprot = 0;
	return 0;
}

/* Open page pg (watched) for the coming system call; lp_pmu_syscall_exit closes it. */
static int open_for_call(struct pmu_engine *e, struct lp_pmu_thread *t, uint64_t pg)
{
	struct pmu_thread_state *x = t->eng;

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
static int open_string(struct pmu_engine *e, struct lp_pmu_thread *t, uint64_t a)
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
 * its vfork returns); if it fails lp_pmu_syscall_exit protects them again. */
static int exec_pages(struct pmu_engine *e, struct lp_pmu_thread *t, uint64_t path, uint64_t argv, uint64_t envp)
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

int lp_pmu_syscall_enter(struct pmu_engine *e, struct lp_pmu_thread *t, uint64_t nr, const struct user_regs_struct *r)
{
	struct pmu_thread_state *x = t->eng;
	struct pmu_aspace *as = t->proc->watch;
	struct range rg[16];
	uint64_t t0 = engine_now(e);
	struct lp_watch_walk k;
	struct lp_watch *w;
	int n, err;

	x->sys_nr = nr;
	x->sys_args[0] = r->rdi; x->sys_args[1] = r->rsi; x->sys_args[2] = r->rdx;
	x->sys_args[3] = r->r10; x->sys_args[4] = r->r8; x->sys_args[5] = r->r9;
	if ((err = lp_pmu_release_holds(e, t, 0)) < 0)
		return err;
	e->c->ops->note(e->c, t->tid, LP_PMU_NOTE_SYSCALL);
	if (nr == LP_PMU_ALLOC_SYSCALL) /* the interposer's: no kernel access, no mapping */
		return lp_pmu_alloc_event(e, t, r);
	if (nr == SYS_rseq && !(x->sys_args[2] & 1))
		x->rseq = x->sys_args[0]; /* from now on its page stays open */
	/* No return to re-protect after: nothing may be opened. */
	if (!as || !lp_pmu_watches_live(&as->watches) || nr == SYS_exit || nr == SYS_exit_group)
		return 0;
	if (nr == SYS_execve)
		return exec_pages(e, t, x->sys_args[0], x->sys_args[1], x->sys_args[2]);
	if (nr == SYS_execveat)
		return exec_pages(e, t, x->sys_args[1], x->sys_args[2], x->sys_args[3]);
	n = syscall_buffers(e, t, x->sys_nr, x->sys_args, r->rsp, rg, 16);
	/* The kernel's access to a watched line is that line's reuse, placed
	 * just after the last reference before the call. */
	for (int i = 0; i < n; i++) {
		struct lp_pmu_access acc = { rg[i].a, (uint32_t)(rg[i].len > 0xffffffffULL ? 0xffffffffU : rg[i].len), 0 };

		if (!rg[i].len)
			continue;
		lp_watch_walk_init(&as->watches.t, &k);
		while ((w = lp_watch_walk_next(&as->watches.t, &k))) {
			const struct lp_pmu_watch *p = lp_pmu_watch_of(&as->watches, w);

			if (ranges_overlap(acc.addr, acc.size, p->line, p->size)) {
				e->st->syscall_hits++;
				if ((err = lp_pmu_watch_end(e, t, as, w, t0 + 1, x->insn.pc, LP_PMU_END_SYSCALL)) < 0)
					return err;
			}
		}
	}
	/* The rseq page can no longer be protected (lp_pmu_rseq_page()): its other
	 * watches cannot be finished and are dropped. */
	if (nr == SYS_rseq && x->rseq) {
		lp_watch_walk_init(&as->watches.t, &k);
		while ((w = lp_watch_walk_next(&as->watches.t, &k))) {
			const struct lp_pmu_watch *p = lp_pmu_watch_of(&as->watches, w);

			if (p->mech == LP_PMU_WATCH_PAGE && lp_pmu_rseq_page(e, t, p->line & ~(PAGE - 1))) {
				e->st->unwatchable++;
				if ((err = lp_pmu_watch_remove(e, t, as, w)) < 0)
					return err;
			}
		}
	}
	/* Still-protected pages the kernel will touch must not make it fail
	 * with EFAULT: open them for the call. */
	for (uint64_t pos = 0; (w = lp_watch_table_next(&as->watches.t, &pos));) {
		const struct lp_pmu_watch *p = lp_pmu_watch_of(&as->watches, w);
		uint64_t pg = p->line & ~(PAGE - 1);
		int touch = 0, dup = 0;

		if (p->mech != LP_PMU_WATCH_PAGE)
			continue;
		for (int i = 0; i < n; i++)
			touch |= ranges_overlap(rg[i].a, rg[i].len, pg, PAGE);
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

int lp_pmu_syscall_exit(struct pmu_engine *e, struct lp_pmu_thread *t)
{
	struct pmu_thread_state *x = t->eng;
	struct pmu_aspace *as = t->proc->watch;
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
	if (changed > 0 && (int64_t)r.rax >= 0 && e->h->on_maps &&
	    (((x->sys_nr == SYS_mmap || x->sys_nr == SYS_mprotect) && (x->sys_args[2] & PROT_EXEC)) ||
	     x->sys_nr == SYS_mremap))
		e->h->on_maps(e->h->ctx, lp_pmu_aspace_get(t->proc)->image, t->proc->pid);
	if ((err = lp_pmu_release_holds(e, t, 1)) < 0)
		return err;
	if (as && (x->sys_nr == SYS_vfork || (x->sys_nr == SYS_clone && (x->sys_args[0] & CLONE_VFORK)))) {
		/* The child shared this address space and may have opened
		 * pages for its execve: protect every watched page again. */
		for (size_t i = 0; i < as->watches.pages.cap; i++)
			if (as->watches.pages.v[i].page && as->watches.pages.v[i].n && (err = lp_pmu_page_protect(e, t, as->watches.pages.v[i].page)) < 0)
				return err;
	}
	if (changed > 0 && as) {
		/* The target changed mappings: a watched page that is still (or
		 * again) mapped gets our protection back, since the call may
		 * have reset it. One that is gone keeps its watch: reuse is by
		 * address, as in a trace, so an access after the address is
		 * mapped again (the next mmap often returns it) is the reuse;
		 * otherwise the sample dangles at the end. */
		struct lp_watch *w;

		for (uint64_t pos = 0; (w = lp_watch_table_next(&as->watches.t, &pos));)
			if (lp_pmu_watch_of(&as->watches, w)->mech == LP_PMU_WATCH_PAGE &&
			    (err = lp_pmu_page_protect(e, t, page_of(lp_pmu_watch_of(&as->watches, w)->line))) < 0)
				return err;
	}
	return 0;
}
