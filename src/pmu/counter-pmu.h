/* Internals of the hardware counter source (counter-pmu.c), exposed so
 * that every part that does not need a PMU is unit-tested here: the
 * perf_event_attr we build, the period arithmetic, the compensation, the
 * parsing of the compensation rates, the recognition of our overflow
 * signals, and the whole arm/overflow protocol against a simulated PMU
 * (tests/pmu/test-pmu-unit.c) through a replaceable kernel interface. */
#ifndef LP_PMU_COUNTER_PMU_H
#define LP_PMU_COUNTER_PMU_H

#include <linux/perf_event.h>
#include <signal.h>
#include <stdint.h>

#include "counter.h"
#include "perf-ring.h"

/* "No overflow for the rest of the run": far beyond any real count, and
 * below 2^63 (IOC_PERIOD rejects bit 63). x86 programs at most its
 * max_period into the counter and carries the rest without notifying. */
#define LP_PMU_PERIOD_NEVER (1ULL << 62)

/* The kernel interface, replaceable by a simulation in tests. */
struct lp_pmu_sys {
	/* Open one event counting thread tid (attr as built by
	 * lp_pmu_attr_init), enabled, notifying every overflow with signal
	 * sig to that thread. Returns the fd or a negative errno. */
	int (*open)(void *ctx, const struct perf_event_attr *a, pid_t tid, int sig);
	/* Next overflow after period more events, from now. 0 or -errno. */
	int (*set_period)(void *ctx, int fd, uint64_t period);
	/* Events counted so far. 0, or -errno (-EIO: the event was not on
	 * the PMU all the time, so its count misses events). */
	int (*read)(void *ctx, int fd, uint64_t *count);
	void (*close)(void *ctx, int fd);
	void *ctx;
	/* Map fd's ring buffer (double trap); NULL: no ring (a simulation
	 * without samples). 0 or LP_E*. */
	int (*map)(void *ctx, int fd, struct lp_pmu_ring *r);
};

/* Our fields of an event's attributes, on top of libpfm4's encoding of the
 * event (type, config): counts user mode only, exact (no multiplexing:
 * pinned, its own group), by period (not frequency), not inherited (every
 * thread is attached explicitly), arbitrary skid (compensated by stepping,
 * thesis §3.3.2.1; precise_ip would ask for PEBS). */
void lp_pmu_attr_init(struct perf_event_attr *a);

/* The double trap (§3.3.2.2): a sampling event whose overflows write
 * the pc to the ring buffer (perf_event_open(2): sample_type
 * PERF_SAMPLE_IP | PERF_SAMPLE_TID, one record per overflow with
 * wakeup_events = 1, so each overflow also signals) at skid constraint
 * precise_ip = level ("0 arbitrary skid, 1 constant skid, 2 requested to
 * have 0 skid, 3 must have 0 skid"; on Intel, 1 and above use PEBS). */
void lp_pmu_attr_precise(struct perf_event_attr *a, unsigned level);

/* Encode the retired load and store events of the host's PMU with
 * libpfm4 into attr[0] (loads) and attr[1] (stores); *names gets the pair
 * used. 0 or LP_EUNSUPPORTED (lp_errmsg() says why). Needs no PMU access:
 * libpfm4 identifies the CPU from CPUID. */
int lp_pmu_encode_events(struct perf_event_attr attr[2], const char *const **names);

/* Per-event period when n events (2 per thread) share the distance from
 * now to at: no overflow proves the clock is still below at (n events each
 * below the period sum to less than the distance), the first overflow
 * proves it advanced by at least the period. 1 when at <= now + n. */
uint64_t lp_pmu_event_period(uint64_t now, uint64_t at, unsigned n_events);

/* raw minus what the tracer caused (thesis §3.5), never below 0. */
uint64_t lp_pmu_compensated(uint64_t raw, const uint64_t notes[LP_PMU_NOTE_COUNT],
			    const double rate[LP_PMU_NOTE_COUNT]);

/* "step,fault,syscall,trap" rates (non-negative numbers); NULL or "" gives
 * 1,1,1,1. 0 or LP_EINVAL. */
int lp_pmu_parse_rates(const char *s, double rate[LP_PMU_NOTE_COUNT]);

/* Is si an overflow notification of one of fds (signal sig, POLL_IN or
 * POLL_HUP)? A signal the target sends itself never is. */
int lp_pmu_is_overflow(const siginfo_t *si, int sig, const int *fds, int n_fds);

/* The pmu counter source over a given kernel interface and event encoding
 * (lp_pmu_counter_pmu.create uses the real ones). */
int lp_pmu_counter_pmu_new(const struct lp_pmu_counter_config *cfg, const struct lp_pmu_sys *sys,
			   const struct perf_event_attr attr[2], struct lp_pmu_counter **out);

#endif
