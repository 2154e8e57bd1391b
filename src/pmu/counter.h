/* Counter sources: the memory-reference clock of the pmu backend and the
 * trigger that starts a sample.
 *
 * The clock counts references as decode.h defines them, for the whole
 * target (all threads and processes share one clock, so reuse distances
 * are in references of the whole program, like a merged trace). The engine
 * asks the source to notify it once the clock reaches a point; like a PMU
 * overflow the notification may come late (skid), so the engine arms
 * early and single-steps to the exact point (thesis §3.3.2.1).
 *
 *  - step: exact; the engine single-steps every instruction and reports
 *    the references of each one (lp_pmu_insn_retired()); it can emulate skid by
 *    delivering the notification 0..skid memory instructions late.
 *  - pmu: perf_event_open on the load and store retirement events, period
 *    from the armed point, overflow as a signal to the target thread that
 *    the supervisor intercepts; the count is compensated for what the
 *    tracer itself causes (thesis §3.5).
 */
#ifndef LP_PMU_COUNTER_H
#define LP_PMU_COUNTER_H

#include <signal.h>
#include <stdint.h>
#include <sys/types.h>

/* At most this many references per instruction are assumed when arming
 * early: a notification after an instruction that crossed the point can
 * overshoot by this much less one (add [m],r: read + write). */
#define LP_PMU_REFS_PER_INSN 2

struct lp_pmu_counter_config {
	uint64_t seed;       /* for emulated skid */
	unsigned emulate_skid; /* step: deliver 0..emulate_skid memory instructions late */
	/* step: skid as on hardware, where the interrupt is taken when a
	 * long-latency instruction retires (thesis §3.3.1, Fig. 3.5):
	 * delivered after the first instruction, from the one that reached
	 * the point on, with a reference that misses in an emulated 32 KiB
	 * direct-mapped cache of 64-byte lines; at most emulate_skid memory
	 * instructions late. */
	int skid_miss;
	int overflow_signal; /* pmu: the real-time signal used for overflows */
	const char *compensate; /* pmu: "step,fault,syscall,trap" rates; NULL: LOCPROF_PMU_COMPENSATE or 1,1,1,1 */
	/* The double trap (thesis §3.3.2.2): each notification also gives
	 * the pc of the reference that reached the armed point (precise()).
	 * pmu: sampling events with precise_ip (PEBS) and a ring buffer;
	 * step: the emulation of that record (the exact pc, while the
	 * notification still comes emulate_skid late). */
	int precise;
};

/* The precise record of the last notification (PEBS, or its emulation). */
struct lp_pmu_precise {
	uint64_t pc;     /* the instruction of the reference that reached the point */
	uint64_t time;   /* that reference's clock value; 0 when unknown (hardware) */
	pid_t tid;       /* the thread that made it */
	uint8_t kind;    /* LP_REF_READ (a load event) or LP_REF_WRITE (a store event) */
	int exact;       /* the hardware said the pc is exact (PERF_RECORD_MISC_EXACT_IP) */
};

/* What the tracer caused that a hardware counter miscounts (§3.5). */
enum lp_pmu_note {
	LP_PMU_NOTE_STEP,     /* one single-step the tracer made */
	LP_PMU_NOTE_FAULT,    /* one page fault caused by a watchpoint */
	LP_PMU_NOTE_SYSCALL,  /* one system call (ours or the target's) */
	LP_PMU_NOTE_TRAP,     /* one debug trap */
	LP_PMU_NOTE_COUNT
};

struct lp_pmu_counter;

struct lp_pmu_counter_ops {
	const char *name;
	/* 1: the engine must single-step every instruction and call lp_pmu_insn_retired(). */
	int stepping;
	int (*create)(const struct lp_pmu_counter_config *cfg, struct lp_pmu_counter **out);
	void (*destroy)(struct lp_pmu_counter *c);
	/* A thread to count (the first one, and each new one). */
	int (*attach)(struct lp_pmu_counter *c, pid_t tid);
	void (*detach)(struct lp_pmu_counter *c, pid_t tid);
	/* Notify once the clock reaches at (absolute). */
	int (*arm)(struct lp_pmu_counter *c, uint64_t at);
	/* The clock: references retired so far, by all threads. */
	uint64_t (*time)(struct lp_pmu_counter *c);
	/* References of one thread so far (a thread detached: its last count).
	 * Non-stepping sources only: the engine counts stepped threads itself. */
	uint64_t (*thread_time)(struct lp_pmu_counter *c, pid_t tid);
	/* An instruction at pc with refs references retired under
	 * single-step; bit j of writes: reference j is a write. */
	void (*retired)(struct lp_pmu_counter *c, pid_t tid, unsigned refs, uint64_t pc, uint64_t writes,
			const uint64_t *addrs);
	/* si == NULL: has the armed point been reached (1, then consumed) or
	 * not yet (0)? Stepping sources notify only this way (after their
	 * emulated skid). Signal sources: is this signal stop our overflow?
	 * 1 yes and the point is reached, 0 ours but re-armed internally
	 * (keep running, swallow the signal), -1 not ours. */
	int (*pending)(struct lp_pmu_counter *c, pid_t tid, const siginfo_t *si);
	/* Is this signal one of the source's notifications? (Never the
	 * target's: those are delivered.) */
	int (*owns)(struct lp_pmu_counter *c, const siginfo_t *si);
	void (*note)(struct lp_pmu_counter *c, pid_t tid, enum lp_pmu_note what);
	/* 0, or the LP_E* of a failure the other calls could not return
	 * (a counter that could not be read: the clock is not exact). */
	int (*status)(struct lp_pmu_counter *c);
	/* With config.precise: the record of the notification that pending()
	 * just reported (1), or none (0: the hardware wrote no sample, e.g.
	 * lost or throttled). */
	int (*precise)(struct lp_pmu_counter *c, pid_t tid, struct lp_pmu_precise *out);
};

extern const struct lp_pmu_counter_ops lp_pmu_counter_step;
extern const struct lp_pmu_counter_ops lp_pmu_counter_pmu;
/* Tests only: the pmu source with the task's software clock (ns) in place
 * of loads and stores, so that the free-running engine runs without a PMU. */
extern const struct lp_pmu_counter_ops lp_pmu_counter_pmu_sw;

/* By name ("step", "pmu"), or NULL. */
const struct lp_pmu_counter_ops *lp_pmu_counter_find(const char *name);

struct lp_pmu_counter {
	const struct lp_pmu_counter_ops *ops;
	int precise_ip;   /* with config.precise: the precise_ip level the kernel took, -1 none */
	/* Ring-buffer counts (pmu, config.precise), for the stats. */
	uint64_t ring_samples, ring_lost, ring_throttled, ring_damaged;
};

#endif
