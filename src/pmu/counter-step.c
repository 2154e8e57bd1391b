/* The exact counter source: the engine single-steps every instruction and
 * tells us how many references it made. Slow (one ptrace round trip per
 * instruction) but exact, which is what lets the rest of the backend be
 * tested without a PMU. Emulated skid delays the notification by a random
 * number of memory instructions, as a PMU's interrupt would arrive. */
#include "counter.h"

#include <stdlib.h>
#include <string.h>

#include <locprof/common.h>
#include "common/error.h"
#include "common/rng.h"

struct step_counter {
	struct lp_pmu_counter base;
	uint64_t time;
	uint64_t at;
	int armed;
	long skid_left; /* memory instructions still to retire before delivery; -1 none */
	unsigned max_skid;
	struct lp_rng rng;
	/* The emulated PEBS record of the last crossing (config.precise). */
	struct lp_pmu_precise rec;
	int have_rec;
	int skid_miss, wait_miss;
	uint64_t l1[512]; /* skid_miss: line + 1 per set, 0 empty */
};

static int step_create(const struct lp_pmu_counter_config *cfg, struct lp_pmu_counter **out)
{
	struct step_counter *s = calloc(1, sizeof(*s));

	*out = NULL;
	if (!s)
		return lp_seterr(LP_ENOMEM, "out of memory");
	s->base.ops = &lp_pmu_counter_step;
	s->max_skid = cfg->emulate_skid;
	s->skid_miss = cfg->skid_miss;
	s->skid_left = -1;
	s->base.precise_ip = cfg->precise ? 3 : -1; /* emulated: exact by construction */
	/* Its own stream, so that skid never shifts the sample points. */
	lp_rng_seed(&s->rng, cfg->seed ^ 0x5b1dc0ffee5eedULL);
	*out = &s->base;
	return 0;
}

static void step_destroy(struct lp_pmu_counter *c)
{
	free(c);
}

static int step_attach(struct lp_pmu_counter *c, pid_t tid)
{
	return 0;
}

static void step_detach(struct lp_pmu_counter *c, pid_t tid)
{
}

static int step_arm(struct lp_pmu_counter *c, uint64_t at)
{
	struct step_counter *s = (struct step_counter *)c;

	s->at = at;
	s->armed = 1;
	s->skid_left = -1;
	s->wait_miss = 0;
	if (s->time >= at && s->base.precise_ip >= 0) {
		/* As a PMU would: a period already passed overflows at the
		 * next reference, which makes the record. */
		s->at = s->time + 1;
	} else if (s->time >= at) {
		s->armed = 0;
		s->skid_left = 0; /* already there: deliver at once */
	}
	return 0;
}

static uint64_t step_time(struct lp_pmu_counter *c)
{
	return ((struct step_counter *)c)->time;
}

static void step_retired(struct lp_pmu_counter *c, pid_t tid, unsigned refs, uint64_t pc, uint64_t writes,
			 const uint64_t *addrs)
{
	struct step_counter *s = (struct step_counter *)c;
	uint64_t before = s->time;
	int miss = 0;

	for (unsigned j = 0; s->skid_miss && j < refs; j++) {
		uint64_t line = addrs[j] >> 6, *slot = &s->l1[line & 511];

		miss |= *slot != line + 1;
		*slot = line + 1;
	}
	s->time += refs;
	if (s->skid_left > 0 && refs)
		s->skid_left--;
	if (s->wait_miss && miss && s->skid_left > 0) {
		/* The long-latency instruction retired: the interrupt now. */
		s->skid_left = 0;
		s->wait_miss = 0;
	}
	if (s->armed && s->time >= s->at) {
		/* What PEBS would have written: this instruction, and the kind
		 * of the reference that reached the point (its event). */
		unsigned k = s->at > before ? (unsigned)(s->at - before - 1) : 0;

		s->rec = (struct lp_pmu_precise){ .pc = pc, .time = before + k + 1, .tid = tid,
						  .kind = (uint8_t)(k < 64 && ((writes >> k) & 1)), .exact = 1 };
		s->have_rec = 1;
		s->armed = 0;
		if (s->skid_miss) {
			s->wait_miss = !miss;
			s->skid_left = miss ? 0 : (long)s->max_skid;
		} else {
			s->skid_left = s->max_skid ? (long)lp_rng_below(&s->rng, s->max_skid + 1) : 0;
		}
	}
}

static int step_pending(struct lp_pmu_counter *c, pid_t tid, const siginfo_t *si)
{
	struct step_counter *s = (struct step_counter *)c;

	if (si)
		return -1; /* no signals of ours */
	if (s->skid_left == 0) {
		s->skid_left = -1;
		return 1;
	}
	return 0;
}

static void step_note(struct lp_pmu_counter *c, pid_t tid, enum lp_pmu_note what)
{
	/* Exact by construction: nothing the tracer does is counted. */
}

static int step_owns(struct lp_pmu_counter *c, const siginfo_t *si)
{
	return 0;
}

static int step_status(struct lp_pmu_counter *c)
{
	return 0;
}

static int step_precise(struct lp_pmu_counter *c, pid_t tid, struct lp_pmu_precise *out)
{
	struct step_counter *s = (struct step_counter *)c;

	if (!s->have_rec)
		return 0;
	*out = s->rec;
	s->have_rec = 0;
	return 1;
}

const struct lp_pmu_counter_ops lp_pmu_counter_step = {
	.name = "step",
	.stepping = 1,
	.create = step_create,
	.destroy = step_destroy,
	.attach = step_attach,
	.detach = step_detach,
	.arm = step_arm,
	.time = step_time,
	.retired = step_retired,
	.pending = step_pending,
	.owns = step_owns,
	.note = step_note,
	.status = step_status,
	.precise = step_precise,
};

const struct lp_pmu_counter_ops *lp_pmu_counter_find(const char *name)
{
	if (!strcmp(name, "step"))
		return &lp_pmu_counter_step;
	if (!strcmp(name, "pmu"))
		return &lp_pmu_counter_pmu;
	if (!strcmp(name, "pmu-sw"))
		return &lp_pmu_counter_pmu_sw;
	return NULL;
}
