/* The pmu backend's engine (pmu-sampler.h): sampling with skid
 * compensation (thesis §3.3.2.1), cache-line watchpoints by debug
 * registers or page protection (§3.4), and the reuse clock (§3.5).
 *
 * Step counter: threads are single-stepped one instruction at a time,
 * round robin, so the clock is one total order of the whole program's
 * references, repeatable run to run. System calls are stepped over
 * synchronously, except those that may block waiting for another thread
 * (futex, wait4, read, ...): those complete in the background while other
 * threads are stepped.
 *
 * Sample start: the counter is armed (2 + 2*MaxSkid) references before the
 * sample point Sp, so a notification up to MaxSkid memory instructions
 * late still stops the thread before Sp; the engine then steps, decoding
 * each instruction, until the instruction holding reference Sp is next,
 * and samples that reference. The watch is set after the instruction ran;
 * a later access of the same instruction to the line (add [m],1: read then
 * write) is a reuse at distance 0, seen from the decoded accesses.
 *
 * Double trap (§3.3.2.2, --sample-start double-trap): the counter is armed
 * at Sp itself; its notification (after skid) comes with the precise pc of
 * the reference that reached Sp (PEBS, or the step counter's emulation of
 * it). An int3 goes in at that pc (the original byte saved; written through
 * /proc/PID/mem, which works on read-only text) and the target resumes;
 * the next thread of that address space to execute the pc traps (SIGTRAP,
 * SI_KERNEL, rip = pc + 1): the byte is restored, rip set back to pc, and
 * the instruction's reference of the event's kind is sampled, as the step
 * path samples (decoded, effective address from the registers). One
 * breakpoint at a time: the next notification removes one that was not
 * hit (the pc never ran again). The engine never sees its int3: code is
 * read with the original byte in its place (lp_pmu_prepare_insn), and never stepped:
 * an instruction the engine is about to single-step at the breakpoint (a
 * fault taken before it went in) is its hit (lp_pmu_run_insn). A fork child's
 * copy of the text gets the original byte back; exec drops it with the
 * text; a trap of a breakpoint another thread already removed is retried;
 * the target's own int3 traps are delivered unchanged.
 *
 * Page protection is changed by system calls injected through ptrace (the
 * stopped thread jumps to our "syscall; int3" page), not by a preloaded
 * helper: it works for static binaries, needs no socket or thread inside
 * the target, and the permissions change while the target is stopped, so
 * no access can slip between decision and protection (docs/pmu.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "engine.h"

static int signal_is_counters(void *ctx, const siginfo_t *si)
{
	struct pmu_engine *e = ctx;

	return e->c->ops->owns(e->c, si);
}

/* Our environment with preload first in LD_PRELOAD (the program's own
 * preloads after it), in one block: free(*envp) frees it. */
static int preload_env(const char *preload, char ***envp)
{
	extern char **environ;
	const char *old = getenv("LD_PRELOAD");
	size_t n = 0, bytes = strlen("LD_PRELOAD=") + strlen(preload) + 2 + (old ? strlen(old) : 0);
	char **v, *text;

	while (environ[n])
		n++;
	if (!(v = malloc((n + 2) * sizeof(*v) + bytes)))
		return lp_seterr(LP_ENOMEM, "out of memory");
	text = (char *)(v + n + 2);
	snprintf(text, bytes, "LD_PRELOAD=%s%s%s", preload, old && *old ? ":" : "", old ? old : "");
	n = 0;
	v[n++] = text;
	for (char **p = environ; *p; p++)
		if (strncmp(*p, "LD_PRELOAD=", 11))
			v[n++] = *p;
	v[n] = NULL;
	*envp = v;
	return 0;
}

int lp_pmu_run(const struct lp_pmu_options *o, const struct lp_pmu_hooks *h, char *const argv[],
	       struct lp_pmu_stats *stats, int *status)
{
	const struct lp_pmu_counter_ops *ops = lp_pmu_counter_find(o->counter ? o->counter : "step");
	struct lp_pmu_counter_config cfg = { .seed = o->seed, .emulate_skid = o->emulate_skid,
					     .skid_miss = o->skid_miss,
					     .precise = o->sample_start == LP_PMU_START_DOUBLE_TRAP };
	struct pmu_engine *e;
	char **envp = NULL;
	int err;

	memset(stats, 0, sizeof(*stats));
	*status = 0;
	if (!ops)
		return lp_seterr(LP_EINVAL, "unknown counter '%s' (step, pmu)", o->counter);
	if (o->n_lines > LP_PMU_MAX_LINE_SIZES)
		return lp_seterr(LP_EINVAL, "at most %d line sizes", LP_PMU_MAX_LINE_SIZES);
	for (unsigned i = 0; i < (o->n_lines ? o->n_lines : 1); i++) {
		unsigned l = o->n_lines ? o->line_sizes[i] : o->line_size;

		if (l < 8 || l > 4096 || (l & (l - 1)))
			return lp_seterr(LP_EINVAL, "line size %u is not a power of two in 8..4096", l);
	}
	if (!(o->period >= 1.0))
		return lp_seterr(LP_EINVAL, "sample period %g is below 1", o->period);
	if (o->sample_start == LP_PMU_START_DOUBLE_TRAP && !ops->precise)
		return lp_seterr(LP_EINVAL, "counter '%s' gives no precise pc for --sample-start double-trap",
				 ops->name);
	if (h->on_ref && !ops->stepping)
		return lp_seterr(LP_EINVAL, "a full trace needs --counter step");
	e = calloc(1, sizeof(*e));
	if (!e)
		return lp_seterr(LP_ENOMEM, "out of memory");
	e->o = o;
	e->h = h;
	e->st = stats;
	e->p = 1.0 / o->period;
	e->nlines = o->n_lines ? o->n_lines : 1;
	for (unsigned i = 0; i < e->nlines; i++)
		e->line[i] = o->n_lines ? o->line_sizes[i] : o->line_size;
	lp_rng_seed(&e->rng, o->seed);
	lp_pmu_xsave_layout_host(&e->xlayout);
	cfg.compensate = o->compensate;
	if ((err = ops->create(&cfg, &e->c)) < 0)
		goto out_engine;
	if ((err = lp_pmu_decoder_new(&e->dec)) < 0)
		goto out_counter;
	e->sup.on_release = lp_pmu_image_release;
	e->sup.on_thread_leave = lp_pmu_on_thread_leave;
	e->sup.owns = signal_is_counters;
	e->sup.ctx = e;
	if (o->alloc_preload && (err = preload_env(o->alloc_preload, &envp)) < 0)
		goto out_sup;
	e->sup.envp = envp;
	if ((err = lp_pmu_sup_spawn(&e->sup, argv, o->no_aslr)) < 0)
		goto out_sup;
	if ((err = e->c->ops->attach(e->c, e->sup.t[0]->tid)) < 0)
		goto out_sup;
	if ((err = lp_pmu_image_start(e, e->sup.t[0]->proc, e->sup.t[0], NO_IMAGE, (int)getpid(), 0)) < 0)
		goto out_sup;
	if ((err = lp_pmu_arm_next(e)) < 0)
		goto out_sup;
	stats->precise_ip = e->c->precise_ip;
	err = ops->stepping ? lp_pmu_loop_step(e) : lp_pmu_loop_free(e);
	if (err == 0 && e->err)
		err = e->err;
	if (err == 0) {
		stats->refs = engine_now(e);
		*status = e->sup.leader_status;
	}
out_sup:
	stats->injected = e->sup.injected;
	stats->ring_samples = e->c->ring_samples;
	stats->ring_lost = e->c->ring_lost;
	stats->ring_throttled = e->c->ring_throttled;
	stats->ring_damaged = e->c->ring_damaged;
	lp_pmu_sup_release(&e->sup);
	free(envp);
	lp_pmu_decoder_free(e->dec);
out_counter:
	if (e->c)
		e->c->ops->destroy(e->c);
out_engine:
	free(e);
	return err;
}
