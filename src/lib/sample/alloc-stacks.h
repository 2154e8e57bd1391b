/* Internal: the call stacks of allocation events as they come, an
 * allocation followed by its frames (the collector's LP_MSG_EV_FRAMES
 * records, collect/protocol.h; a trace's LP_EV_FRAME records, read by the
 * trace sampler), put into a profile's stack table with equal stacks
 * stored once. */
#ifndef LP_SAMPLE_ALLOC_STACKS_H
#define LP_SAMPLE_ALLOC_STACKS_H

#include "common/htab.h"

#include <locprof/profile.h>

struct lp_stack_builder {
	struct lp_htab ids; /* hash of a stack -> its id (first one with that hash) */
	uint64_t frames[LP_ALLOC_STACK_MAX];
	unsigned n;   /* frames so far of the open stack; 0: none open */
	size_t event; /* index of its event in the profile */
	int ended;    /* a 0 frame came: the stack is whole */
};

/* Event `event` of the profile (an allocation at call site pc) may get
 * a stack: the frames that follow go to it. */
void lp_stack_builder_begin(struct lp_stack_builder *b, size_t event, uint64_t pc);
/* The next frames of the open stack (0 ends it; frames past
 * LP_ALLOC_STACK_MAX are dropped). */
void lp_stack_builder_frames(struct lp_stack_builder *b, const uint64_t *frames, unsigned n);
/* Close the open stack: a stack of more than its call site goes into the
 * table (once) and its event names it. */
int lp_stack_builder_end(struct lp_stack_builder *b, struct lp_profile *p);
void lp_stack_builder_release(struct lp_stack_builder *b);

#endif
