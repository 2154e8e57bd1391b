/* Unwinding a stopped target thread from the supervisor (unwind.h).
 *
 * libdwfl (elfutils, docs/dependencies.md) does the work: it finds each
 * pc's module from /proc/PID/maps, reads the module's call frame
 * information from its file once and keeps it, and computes each caller's
 * registers from it, so frames of code built without frame pointers
 * (libstdc++'s operator new, most distributions' libraries) are right,
 * where a frame-pointer walk would skip the caller of operator new. We
 * give it the thread's registers as ptrace read them and the target's
 * memory: the top STACK_COPY bytes of the stack are read in one call per
 * unwind, anything else one word at a time through /proc/PID/mem. */
#include "unwind.h"

#include <dwarf.h>
#include <elfutils/libdwfl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "supervisor.h"

/* Twelve frames of C++ (operator new, std::allocator, vector, the
 * program's functions) take well under this. */
#define STACK_COPY 16384

struct lp_pmu_unwinder {
	Dwfl *dwfl;
	struct lp_pmu_proc *proc;
	/* the unwind in progress */
	int tid;
	const struct user_regs_struct *r;
	uint64_t *frames;
	unsigned n, max;
	int unknown;       /* a pc outside the modules reported */
	uint64_t calls, next_report; /* unwinds; the first that may read the modules again */
	uint64_t stack_lo; /* the copy of the stack: [stack_lo, stack_lo + stack_len) */
	size_t stack_len;
	uint8_t stack[STACK_COPY];
};

static char *debuginfo_path;

static const Dwfl_Callbacks proc_callbacks = {
	.find_elf = dwfl_linux_proc_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.debuginfo_path = &debuginfo_path,
};

static pid_t next_thread(Dwfl *dwfl, void *arg, void **thread_arg)
{
	struct lp_pmu_unwinder *u = arg;

	(void)dwfl;
	if (*thread_arg)
		return 0;
	*thread_arg = u;
	return u->tid;
}

static bool get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_arg)
{
	struct lp_pmu_unwinder *u = arg;

	(void)dwfl;
	*thread_arg = u;
	return tid == u->tid;
}

static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	struct lp_pmu_unwinder *u = arg;
	uint64_t v;

	(void)dwfl;
	if (addr >= u->stack_lo && addr - u->stack_lo + 8 <= u->stack_len) {
		memcpy(result, u->stack + (addr - u->stack_lo), 8);
		return true;
	}
	if (lp_pmu_sup_read(u->proc, addr, &v, 8) != 8)
		return false;
	*result = v;
	return true;
}

/* The DWARF register numbers of x86-64: rax, rdx, rcx, rbx, rsi, rdi,
 * rbp, rsp, r8-r15, and 16, the return address (rip). */
static bool set_initial_registers(Dwfl_Thread *thread, void *arg)
{
	struct lp_pmu_unwinder *u = arg;
	const struct user_regs_struct *r = u->r;
	Dwarf_Word regs[17] = { r->rax, r->rdx, r->rcx, r->rbx, r->rsi, r->rdi, r->rbp, r->rsp, r->r8,
				r->r9, r->r10, r->r11, r->r12, r->r13, r->r14, r->r15, r->rip };

	dwfl_thread_state_register_pc(thread, r->rip);
	return dwfl_thread_state_registers(thread, 0, 17, regs);
}

static const Dwfl_Thread_Callbacks thread_callbacks = {
	.next_thread = next_thread,
	.get_thread = get_thread,
	.memory_read = memory_read,
	.set_initial_registers = set_initial_registers,
};

/* (Re)read the modules from /proc/PID/maps. */
static int report_modules(struct lp_pmu_unwinder *u)
{
	dwfl_report_begin(u->dwfl);
	if (dwfl_linux_proc_report(u->dwfl, u->proc->pid) != 0) {
		dwfl_report_end(u->dwfl, NULL, NULL);
		return -1;
	}
	return dwfl_report_end(u->dwfl, NULL, NULL) == 0 ? 0 : -1;
}

struct lp_pmu_unwinder *lp_pmu_unwinder_new(struct lp_pmu_proc *p)
{
	struct lp_pmu_unwinder *u = calloc(1, sizeof(*u));

	if (!u)
		return NULL;
	u->proc = p;
	if (!(u->dwfl = dwfl_begin(&proc_callbacks)) || report_modules(u) < 0 ||
	    !dwfl_attach_state(u->dwfl, NULL, p->pid, &thread_callbacks, u)) {
		lp_pmu_unwinder_free(u);
		return NULL;
	}
	return u;
}

void lp_pmu_unwinder_free(struct lp_pmu_unwinder *u)
{
	if (!u)
		return;
	if (u->dwfl)
		dwfl_end(u->dwfl);
	free(u);
}

static int frame_pc(Dwfl_Frame *state, void *arg)
{
	struct lp_pmu_unwinder *u = arg;
	Dwarf_Addr pc;
	bool activation;

	if (!dwfl_frame_pc(state, &pc, &activation) || !pc)
		return DWARF_CB_ABORT;
	/* a return address may be just past its function: look up the call */
	if (!dwfl_addrmodule(u->dwfl, activation ? pc : pc - 1))
		u->unknown = 1;
	u->frames[u->n++] = pc;
	return u->n < u->max ? DWARF_CB_OK : DWARF_CB_ABORT;
}

static void walk(struct lp_pmu_unwinder *u)
{
	u->n = 0;
	u->unknown = 0;
	/* ends with -1 at the outermost frame as on an error: the frames
	 * found are what counts */
	dwfl_getthread_frames(u->dwfl, u->tid, frame_pc, u);
}

unsigned lp_pmu_unwind(struct lp_pmu_unwinder *u, int tid, const struct user_regs_struct *r, uint64_t *frames,
		       unsigned max)
{
	long got;

	if (!max)
		return 0;
	u->tid = tid;
	u->r = r;
	u->frames = frames;
	u->max = max;
	u->stack_lo = r->rsp;
	got = lp_pmu_sup_read(u->proc, r->rsp, u->stack, STACK_COPY);
	u->stack_len = got > 0 ? (size_t)got : 0;
	walk(u);
	/* Code mapped since the modules were read (dlopen): read them again
	 * and unwind again, once. A pc that stays unknown (code generated at
	 * run time) does not make every unwind read them: the next try waits
	 * 1024 unwinds. */
	if (u->unknown && u->calls >= u->next_report && report_modules(u) == 0) {
		walk(u);
		u->next_report = u->unknown ? u->calls + 1024 : 0;
	}
	u->calls++;
	return u->n;
}
