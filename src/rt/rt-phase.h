/* Internal: online phase detection and phase-guided sampling in the
 * runtime (record --phases; docs/runtime.md, "Phase detection"; the
 * policy itself is collect/phase-sampler.h, shared with the valgrind
 * tool). */
#ifndef LP_RT_PHASE_H
#define LP_RT_PHASE_H

#include "collect/phase-sampler.h"
#include "collect/protocol.h"
#include "common/rng.h"

#include <stdint.h>

/* Each thread's struct lp_phase_thread lives in its slow-path state. */

/* Read the settings (once per process, from the runtime's init) for a
 * sampling rate; 1 when record --phases is on. */
int lp_rt_phase_setup(double rate, uint32_t nlines);

/* The countdown's rate while phases are on: every expiry is a tick that
 * gives the signature a pc, and a sample with the interval's keep chance. */
double lp_rt_phase_tick_rate(void);

/* References per interval. */
uint64_t lp_rt_phase_interval(void);

/* A new process image (fork): forget the phases. */
void lp_rt_phase_reset(void);

/* A tick at reference number `now` (0-based) of the thread, with ex[i]
 * extra line accesses before it, at pc: ends the interval when it is due
 * (a record in ph->out), counts the pc, and says whether the reference is
 * sampled (1) or only counted (0). */
int lp_rt_phase_tick(struct lp_phase_thread *ph, struct lp_rng *rng, uint32_t thread, uint64_t pc,
		     uint64_t now, const uint64_t *ex);

/* The thread ends after refs references and extra[i] extra line
 * accesses: its last interval, however short, gets a record. */
void lp_rt_phase_close(struct lp_phase_thread *ph, uint32_t thread, uint64_t refs,
		       const uint64_t *extra);

#endif
