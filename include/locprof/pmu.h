/* locprof/pmu.h - the pmu sampler (library locprof_pmu, src/pmu; built
 * where Zydis and libpfm4 are found): an unmodified program runs under a
 * ptrace supervisor, a counter source picks the sampled references, cache-
 * line watchpoints find their reuses (docs/pmu.md).
 *
 *   struct lp_pmu_options o = LP_PMU_OPTIONS_DEFAULT;
 *   o.counter = "pmu"; o.period = 1e6;
 *   lp_recorder_new_direct(&rec, &record_options);
 *   err = lp_pmu_record(&o, rec, argv, &stats, &status);
 *
 * lp_pmu_record hands every process image of the program, its samples (or,
 * in trace mode, every reference) and its mappings to the recorder, which
 * writes the same outputs as for the other backends (locprof/recorder.h). It
 * returns 0 when the target ran to its end (its waitpid status in *status,
 * unchanged) or a negative LP_E* with lp_errmsg() set, e.g.
 * LP_EUNSUPPORTED "no hardware performance counters (...)". */
#ifndef LOCPROF_PMU_H
#define LOCPROF_PMU_H

#include <locprof/common.h>
#include <locprof/recorder.h>

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define LP_PMU_MAX_LINE_SIZES 4

enum lp_pmu_watch_mech {
	LP_PMU_WATCH_AUTO,   /* debug registers while free and the line fits, else pages */
	LP_PMU_WATCH_DR,     /* debug registers only (lines <= 32 B); a sample that
	                        finds no free slot is skipped and counted */
	LP_PMU_WATCH_PAGE,   /* page protection only */
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
	/* The allocation interposer (liblocprof-pmu-alloc.so, docs/pmu.md,
	 * "Allocations"), preloaded into the program so that its allocations
	 * and their call stacks reach the outputs; NULL: no allocation events. */
	const char *alloc_preload;
	/* The program started (its pid): e.g. for a handler that passes
	 * signals sent to locprof on. May be NULL. */
	void (*on_start)(int pid);
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
	uint64_t allocs;         /* allocation events the interposer reported (frees included) */
	uint64_t alloc_frames;   /* call-stack frames unwound for them */
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

/* Run argv under the sampler, its outputs written by r (made by
 * lp_recorder_new_direct() with the same line sizes, rate and mode). */
int lp_pmu_record(const struct lp_pmu_options *o, struct lp_recorder *r, char *const argv[],
		  struct lp_pmu_stats *stats, int *status);

#ifdef __cplusplus
}
#endif
#endif
