/* The pmu sampler's engine (private to src/pmu): run a program under the
 * supervisor, sample its references with a counter source, watch the
 * sampled lines, and hand every sample (and, when asked, every reference)
 * to hooks. lp_pmu_record (pmu-record.c, locprof/pmu.h) connects the hooks
 * to a recorder; the test driver locprof-pmu-probe to its own files:
 *   struct lp_pmu_options o = LP_PMU_OPTIONS_DEFAULT;
 *   struct lp_pmu_hooks h = { .on_sample = my_sample, .ctx = my_state };
 *   o.period = 1e6;
 *   err = lp_pmu_run(&o, &h, argv, &stats, &status);
 * lp_pmu_run returns as lp_pmu_record does. */
#ifndef LP_PMU_SAMPLER_H
#define LP_PMU_SAMPLER_H

#include <stdint.h>

#include <locprof/common.h>
#include <locprof/pmu.h>

struct lp_pmu_sample {
	uint64_t begin;   /* the clock value of the sampled reference (1-based) */
	uint64_t end;     /* the clock value of the next reference to its line */
	int dangling;     /* 1: the line was never touched again (end = 0) */
	uint64_t pc, addr;
	uint64_t end_pc;  /* pc of the reusing instruction, 0 when unknown */
	uint32_t size;
	uint8_t kind;     /* LP_REF_READ / LP_REF_WRITE */
	uint8_t line_idx; /* which of the line sizes */
	uint32_t tid;     /* thread number, 0 = first */
	uint8_t ended_by; /* enum lp_pmu_end: how the reuse was seen */
	/* The same in the terms of the sample's process image (below): its
	 * own clock, which counts only the references of its threads, and
	 * its own thread numbers. */
	uint32_t image;
	uint32_t itid;
	uint64_t ibegin, iend;
	/* Double trap only (global clock): the reference whose overflow
	 * chose the pc (0 when the hardware does not say), and the clock when
	 * the breakpoint went in (the notification, after skid). The sample
	 * is the next execution of pc after armed. */
	uint64_t trigger, armed;
};
/* reuse distance = end - begin - 1 (thesis Eq. 3.4) */

enum lp_pmu_end {
	LP_PMU_END_NONE,     /* dangling */
	LP_PMU_END_SAME,     /* a later access of the same instruction */
	LP_PMU_END_PAGE,     /* page-protection fault */
	LP_PMU_END_DR,       /* debug-register trap */
	LP_PMU_END_SYSCALL,  /* a system call's buffer covered the line */
};

/* A process image: the program started, a forked child, or what a
 * process exec'd (exec ends the old image and starts a new one). */
struct lp_pmu_image {
	uint32_t id;      /* 0, 1, ... in order of appearance */
	uint32_t parent;  /* the image that forked or exec'd it; UINT32_MAX for 0 */
	int pid, ppid;
	int exec;         /* 1: started by an exec of parent (same pid) */
};

struct lp_pmu_image_end {
	uint32_t id;
	int pid;
	uint64_t refs;               /* its clock at the end */
	uint32_t threads;            /* threads it had, over its life */
	const uint64_t *thread_refs; /* references of each (image thread numbers) */
	int exec;                    /* 1: it ended by exec'ing a new image */
	int exited;                  /* 1: its process ended; status is waitpid's */
	int status;
};

struct lp_pmu_hooks {
	void *ctx;
	/* One call per finished sample and line size. */
	void (*on_sample)(void *ctx, const struct lp_pmu_sample *s);
	/* Every reference, in clock order (step counter only); NULL: none.
	 * r->tid is the thread number, itid the image's. */
	void (*on_ref)(void *ctx, uint64_t time, uint32_t image, uint32_t itid, const struct lp_ref *r);
	/* A process image starts (before any of its references), ends (after
	 * its last samples), or may have mapped new code (start, mmap or
	 * mprotect with PROT_EXEC: read /proc/pid/maps now, it may be gone at
	 * the end). Each may be NULL. */
	void (*on_image)(void *ctx, const struct lp_pmu_image *img);
	void (*on_image_end)(void *ctx, const struct lp_pmu_image_end *end);
	void (*on_maps)(void *ctx, uint32_t image, int pid);
	/* An allocation event the interposer reported (alloc-events.c):
	 * ev[0] is the LP_EV_ALLOC or LP_EV_FREE, then the allocation's
	 * LP_EV_FRAME records, n in all; tid fields are the image's thread
	 * numbers. In clock order with the references of on_ref. May be NULL. */
	void (*on_alloc)(void *ctx, uint32_t image, const struct lp_ref *ev, size_t n);
};

int lp_pmu_run(const struct lp_pmu_options *o, const struct lp_pmu_hooks *h, char *const argv[],
	       struct lp_pmu_stats *stats, int *status);

#endif
