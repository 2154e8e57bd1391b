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

struct lp_pmu_sample {
	uint64_t begin;   /* the clock value of the sampled reference (1-based) */
	uint64_t end;     /* the clock value of the next reference to its line */
	int dangling;     /* 1: the line was never touched again (end = 0) */
	uint64_t pc, addr;
	uint32_t size;
	uint8_t kind;     /* LP_REF_READ / LP_REF_WRITE */
	uint32_t tid;     /* thread number, 0 = first */
	uint8_t ended_by; /* enum lp_pmu_end: how the reuse was seen */
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

struct lp_pmu_options {
	const char *counter;     /* "step" or "pmu" */
	double period;           /* mean references between samples */
	uint64_t seed;
	unsigned max_skid;       /* memory instructions the trigger may be late */
	unsigned emulate_skid;   /* step counter: deliver 0..emulate_skid late */
	unsigned line_size;      /* power of two, 8..4096 */
	enum lp_pmu_watch_mech watch;
	int no_aslr;             /* run the target without address randomisation */
	void *ctx;
	void (*on_sample)(void *ctx, const struct lp_pmu_sample *s);
	/* Every reference, in clock order (step counter only); NULL: none. */
	void (*on_ref)(void *ctx, uint64_t time, const struct lp_ref *r);
};

#define LP_PMU_OPTIONS_DEFAULT { .counter = "step", .period = 1000, .seed = 1, .max_skid = 0, \
	.emulate_skid = 0, .line_size = 64, .watch = LP_PMU_WATCH_AUTO, .no_aslr = 1 }

struct lp_pmu_stats {
	uint64_t refs;           /* the clock at the end */
	uint64_t steps;          /* single-steps of target instructions */
	uint64_t skid_steps;     /* of which between notification and sample point */
	uint64_t samples;        /* started */
	uint64_t missed;         /* notification came after the point (skid > max) */
	uint64_t no_slot;        /* DR only: no free debug register */
	uint64_t undecoded;      /* instructions Capstone could not decode (counted as no access) */
	uint64_t unwatchable;    /* line on a page we must not protect (rseq area) */
	uint64_t page_hits, dr_hits, same_hits, syscall_hits, dangling;
	uint64_t false_faults;   /* faults on a protected page outside watched lines (β) */
	uint64_t target_signals; /* signals delivered to the target */
	uint64_t injected;       /* system calls made on the target's behalf */
};

int lp_pmu_run(const struct lp_pmu_options *o, char *const argv[], struct lp_pmu_stats *stats,
	       int *status);

#endif
