/* The pmu backend's engine: run a program under the supervisor, sample its
 * references with a counter source, watch the sampled lines, and hand
 * every sample (and, when asked, every reference) to callbacks.
 *
 * This is the interface `locprof record --backend pmu` is wired to:
 *   struct lp_pmu_options o = LP_PMU_OPTIONS_DEFAULT;
 *   o.on_sample = my_sample; o.ctx = my_profile; o.period = 1e6;
 *   err = lp_pmu_run(&o, argv, &stats, &status);
 * lp_pmu_run returns 0 when the target ran to its end (its waitpid status
 * in *status, unchanged) or a negative LP_E* with lp_errmsg() set, e.g.
 * LP_EUNSUPPORTED "no hardware performance counters (...)". */
#ifndef LP_PMU_SAMPLER_H
#define LP_PMU_SAMPLER_H

#include <stdint.h>

#include <locprof/common.h>

#define LP_PMU_MAX_LINE_SIZES 4

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

enum lp_pmu_watch_mech {
	LP_PMU_WATCH_AUTO,   /* debug registers while free and the line fits, else pages */
	LP_PMU_WATCH_DR,     /* debug registers only (lines <= 32 B); a sample that
	                        finds no free slot is skipped and counted */
	LP_PMU_WATCH_PAGE,   /* page protection only */
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

/* How a sample starts after the counter's notification. */
enum lp_pmu_sample_start {
	LP_PMU_START_STEP,        /* skid compensation: armed early, single-step to the
	                             exact reference (thesis §3.3.2.1) */
	LP_PMU_START_DOUBLE_TRAP, /* the precise pc of the overflow (PEBS) gets an int3;
	                             its next execution is sampled (§3.3.2.2) */
};

struct lp_pmu_options {
	const char *counter;     /* "step" or "pmu" */
	enum lp_pmu_sample_start sample_start;
	double period;           /* mean references between samples */
	uint64_t seed;
	unsigned max_skid;       /* memory instructions the trigger may be late */
	unsigned emulate_skid;   /* step counter: deliver 0..emulate_skid late */
	int skid_miss;           /* step counter: late until an emulated cache miss retires
	                            (at most emulate_skid; counter.h) */
	unsigned line_size;      /* power of two, 8..4096 (when n_lines is 0) */
	unsigned line_sizes[LP_PMU_MAX_LINE_SIZES]; /* several: one watch each per sample */
	unsigned n_lines;
	enum lp_pmu_watch_mech watch;
	int no_aslr;             /* run the target without address randomisation */
	const char *compensate;  /* pmu counter: "step,fault,syscall,trap" rates, NULL = default */
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
};

#define LP_PMU_OPTIONS_DEFAULT { .counter = "step", .period = 1000, .seed = 1, .max_skid = 0, \
	.emulate_skid = 0, .line_size = 64, .n_lines = 0, .watch = LP_PMU_WATCH_AUTO, .no_aslr = 1 }

struct lp_pmu_stats {
	uint64_t refs;           /* the clock at the end */
	uint64_t steps;          /* single-steps of target instructions */
	uint64_t skid_steps;     /* of which between notification and sample point */
	uint64_t samples;        /* started */
	uint64_t missed;         /* notification came after the point (skid > max) */
	uint64_t watches_max;    /* most watches live at once in one image */
	uint64_t no_slot;        /* DR only: no free debug register */
	uint64_t undecoded;      /* instructions the decoder could not decode (counted as no access) */
	uint64_t partial;        /* gathers/scatters that trapped before they were complete */
	uint64_t decode_misses;  /* hardware accesses the decoding did not predict: a fault on a
	                            watched page outside the decoded accesses, a debug-register
	                            trap no decoded access explains */
	uint64_t unwatchable;    /* line on a page we must not protect (rseq area) */
	uint64_t page_hits, dr_hits, same_hits, syscall_hits, dangling;
	uint64_t false_faults;   /* faults on a protected page outside watched lines (β) */
	uint64_t target_signals; /* signals delivered to the target */
	uint64_t injected;       /* system calls made on the target's behalf */
	uint64_t world_stops;    /* free-running: threads stopped while a page was open for another */
	uint64_t held_checks;    /* instructions on a page held open for a call in flight, decided
	                            by the decoding */
	uint64_t stale_faults;   /* free-running: faults on a page protected when the access was
	                            made and opened since (retried, not delivered) */
	uint64_t exposed;        /* free-running: watched pages held open for a system call while
	                            other threads of the address space ran (docs/pmu.md) */
	/* Double trap. */
	int precise_ip;          /* the precise_ip level in use (-1: none) */
	uint64_t dt_inserted;    /* breakpoints inserted (one per notification with a record) */
	uint64_t dt_hits;        /* breakpoints hit: samples started at their pc */
	uint64_t dt_replaced;    /* removed unhit at the next notification (pc not run again) */
	uint64_t dt_norecord;    /* notifications without a usable record (lost, throttled,
	                            or a pc holding an int3 already) */
	uint64_t dt_nomem;       /* pc of an instruction without a memory operand (no breakpoint),
	                            or hit one that made no reference (pmu-sw) */
	uint64_t dt_stale;       /* traps of a breakpoint already removed (another thread), retried */
	uint64_t dt_forks;       /* breakpoints removed from a fork child's copy of the text */
	uint64_t dt_stepped;     /* hits taken as the engine was about to single-step the pc (a
	                            fault of another thread, not handled yet when the breakpoint
	                            went in at its instruction) */
	uint64_t ring_samples, ring_lost, ring_throttled, ring_damaged; /* ring-buffer records */
};

int lp_pmu_run(const struct lp_pmu_options *o, char *const argv[], struct lp_pmu_stats *stats,
	       int *status);

#endif
