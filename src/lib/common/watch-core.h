/* The StatCache watch table: the watched lines awaiting their reuse (Berg &
 * Hagersten §2.3: "a sample selector ... sets a watchpoint on the
 * corresponding cache-line-sized piece of memory ... the watchpoint then
 * detects when the application attempts to access the same cache line
 * again"). One core for every sampler: the trace sampler
 * (src/lib/sample/sampler.c), the instrumentation runtime (src/rt), the
 * valgrind tool (src/vg) and the pmu sampler (src/pmu).
 *
 * Freestanding: header-only, static inline, no libc call, no allocation.
 * The runtime runs inside the program's malloc and the valgrind tool links
 * no libc, so the caller supplies the slots (mmap, VG_(calloc), malloc)
 * and grows the table itself:
 *
 *	if (lp_watch_table_must_grow(&t)) {
 *		struct lp_watch *old = t.slot;
 *		uint64_t old_bytes = lp_watch_table_bytes(t.log2);
 *		struct lp_watch *mem = alloc(lp_watch_table_bytes(t.log2 + 1));
 *		if (!mem) ...;                  // the table is unchanged
 *		lp_watch_table_move(&t, mem, t.log2 + 1);
 *		free(old, old_bytes);
 *	}
 *	w = lp_watch_insert(&t, line, idx);  // then fill w->begin, pc, ...
 *
 * Keys: a watch is keyed by (line, idx): line = address >> log2(line
 * size), idx = the index of that line size (a sampler with several line
 * sizes puts one watch per size in one table). Any 64-bit line is a valid
 * key (a state byte marks live slots, no sentinel key).
 *
 * Layout: open addressing, linear probing, Fibonacci hashing (one
 * multiply; the top bits are well mixed even for the strided lines of
 * array sweeps), backward-shift deletion (no tombstones, so lookups of
 * unwatched lines stay short however many samples complete). The block
 * holds 2^log2 watches of 40 bytes (the key and the start of the sample
 * that the watch will end), then 2^log2 state bytes: 0 for an empty slot,
 * else 0x80 | 7 more bits of the key's hash. A lookup reads state bytes
 * and compares a watch's key only where the 7 bits match, so a lookup of
 * an unwatched line (the common case in the trace sampler, which has no
 * filter in front of the table) touches one byte per probe, 64 slots a
 * cache line, and not a 40-byte watch (with a `used` byte inside each
 * watch instead, `locprof sample -r 1e-2 -l 64,256` on a 20M-reference
 * mixed trace takes 4% more CPU time; paired runs, medians).
 *
 * Invariants (lp_watch_table_check() tests them all; the cheap ones are
 * asserted as the table changes):
 *   I1  cap = 2^log2, 1 <= log2 <= 56, live = the number of used slots
 *       (non-zero state bytes), and a used slot's state byte is its
 *       key's (lp_watch_state);
 *   I2  live <= cap / 2 (lp_watch_insert refuses to go above it), so
 *       probes end at an empty slot;
 *   I3  keys are unique: a caller ends the watch of a line before it
 *       watches the line again (StatCache: an access first completes the
 *       samples of its line, then may start one);
 *   I4  every used slot lies in the unbroken run of used slots that starts
 *       at its key's home slot (cyclically), which is what makes lookup
 *       stop at the first empty slot correct.
 *
 * Asserts go through LP_WATCH_ASSERT. Define it before including this
 * header where assert() is not wanted: the valgrind tool maps it to
 * tl_assert, the runtime compiles it out (its slow path is measured).
 */
#ifndef LP_COMMON_WATCH_CORE_H
#define LP_COMMON_WATCH_CORE_H

#include <stddef.h>
#include <stdint.h>

#ifndef LP_WATCH_ASSERT
#include <assert.h>
#define LP_WATCH_ASSERT(cond) assert(cond)
#endif

/* One watch: a sampled reference waiting for the next touch of its line. */
struct lp_watch {
	uint64_t line;  /* key: address >> log2(line size of idx) */
	uint64_t begin; /* the sampler's clock at the sampled reference */
	uint64_t pc;    /* of the sampled reference */
	uint64_t addr;  /* the sampled address (inside the line) */
	uint32_t tag;   /* the caller's: a thread id, a thinning level, an index
			   into a side array of the caller's own */
	uint8_t idx;    /* key: line size index */
	uint8_t size;   /* bytes accessed, 255 for 255 or more */
	uint8_t kind;   /* LP_REF_READ or LP_REF_WRITE */
};

struct lp_watch_table {
	struct lp_watch *slot; /* 2^log2 watches, the start of the caller's block */
	uint8_t *state;        /* 2^log2 state bytes, after them in the block */
	uint64_t live;         /* used slots */
	uint32_t log2;
};

/* Bytes of memory for a table of 2^log2 slots. */
static inline uint64_t lp_watch_table_bytes(uint32_t log2)
{
	return (sizeof(struct lp_watch) + 1) << log2;
}

static inline uint64_t lp_watch_table_cap(const struct lp_watch_table *t)
{
	return 1ull << t->log2;
}

/* An empty table over mem, lp_watch_table_bytes(log2) bytes of the
 * caller's memory (any content), 8-byte aligned. */
static inline void lp_watch_table_init(struct lp_watch_table *t, struct lp_watch *mem, uint32_t log2)
{
	LP_WATCH_ASSERT(mem && log2 >= 1 && log2 <= 56);
	t->slot = mem;
	t->state = (uint8_t *)(mem + (1ull << log2));
	t->log2 = log2;
	t->live = 0;
	for (uint64_t i = 0; i < (1ull << log2); i++)
		t->state[i] = 0;
}

static inline uint64_t lp_watch_hash(uint64_t line, uint32_t idx)
{
	return (line ^ ((uint64_t)idx << 58)) * 0x9e3779b97f4a7c15ull;
}

/* The home slot of a key: the hash's top log2 bits. */
static inline uint64_t lp_watch_home(const struct lp_watch_table *t, uint64_t line, uint32_t idx)
{
	return lp_watch_hash(line, idx) >> (64 - t->log2);
}

/* The state byte of a used slot holding the key: the 7 hash bits below
 * the home's (so they too are well mixed), and the top bit. */
static inline uint8_t lp_watch_state(const struct lp_watch_table *t, uint64_t line, uint32_t idx)
{
	return (uint8_t)(0x80 | ((lp_watch_hash(line, idx) >> (57 - t->log2)) & 0x7f));
}

/* The live watch of (line, idx), or NULL. */
static inline struct lp_watch *lp_watch_find(const struct lp_watch_table *t, uint64_t line, uint32_t idx)
{
	uint64_t mask = lp_watch_table_cap(t) - 1, h = lp_watch_hash(line, idx);
	uint64_t i = h >> (64 - t->log2);
	uint8_t want = (uint8_t)(0x80 | ((h >> (57 - t->log2)) & 0x7f)), st;

	for (; (st = t->state[i]) != 0; i = (i + 1) & mask) {
		struct lp_watch *w = &t->slot[i];
		if (st == want && w->line == line && w->idx == idx)
			return w;
	}
	return NULL;
}

/* Must the table grow before the next insertion (I2)? */
static inline int lp_watch_table_must_grow(const struct lp_watch_table *t)
{
	return (t->live + 1) * 2 > lp_watch_table_cap(t);
}

/* A new live watch of (line, idx), which must not be watched already (I3)
 * and must fit (I2: call lp_watch_table_must_grow first). Only its key is
 * set: the caller fills begin, pc, addr, tag, size, kind. */
static inline struct lp_watch *lp_watch_insert(struct lp_watch_table *t, uint64_t line, uint32_t idx)
{
	uint64_t mask = lp_watch_table_cap(t) - 1, i = lp_watch_home(t, line, idx);
	struct lp_watch *w;

	LP_WATCH_ASSERT(!lp_watch_table_must_grow(t));
	LP_WATCH_ASSERT(idx <= 255);
	/* The run from home to the first empty slot holds the key if anything
	 * does (I4): checking it on the way is the whole of I3. */
	while (t->state[i]) {
		LP_WATCH_ASSERT(t->slot[i].line != line || t->slot[i].idx != idx);
		i = (i + 1) & mask;
	}
	w = &t->slot[i];
	w->line = line;
	w->idx = (uint8_t)idx;
	t->state[i] = lp_watch_state(t, line, idx);
	t->live++;
	return w;
}

/* End watch w (a live slot of t). Slots after it may move (backward
 * shift): pointers into the table other than w do not survive this. */
static inline void lp_watch_remove(struct lp_watch_table *t, struct lp_watch *w)
{
	uint64_t mask = lp_watch_table_cap(t) - 1, i = (uint64_t)(w - t->slot), j = i;

	LP_WATCH_ASSERT(i <= mask && t->state[i] && t->live > 0);
	t->live--;
	for (;;) {
		uint64_t home;
		t->state[i] = 0;
		do {
			j = (j + 1) & mask;
			if (!t->state[j])
				return;
			home = lp_watch_home(t, t->slot[j].line, t->slot[j].idx);
			/* Leave j where it is if its home lies cyclically in (i, j]:
			 * the hole at i does not break its run (I4). */
		} while (i <= j ? (i < home && home <= j) : (i < home || home <= j));
		t->slot[i] = t->slot[j];
		t->state[i] = t->state[j];
		i = j;
	}
}

/* Move every watch of t into new memory mem of 2^log2 slots (any content),
 * which must hold them (I2); t then uses mem. The old slots are left as
 * they were, for the caller to free. */
static inline void lp_watch_table_move(struct lp_watch_table *t, struct lp_watch *mem, uint32_t log2)
{
	struct lp_watch_table old = *t;
	uint64_t ocap = lp_watch_table_cap(&old);

	LP_WATCH_ASSERT(2 * old.live <= (1ull << log2));
	lp_watch_table_init(t, mem, log2);
	for (uint64_t i = 0; i < ocap; i++) {
		if (!old.state[i])
			continue;
		const struct lp_watch *w = &old.slot[i];
		uint64_t mask = lp_watch_table_cap(t) - 1, j = lp_watch_home(t, w->line, w->idx);
		while (t->state[j])
			j = (j + 1) & mask;
		mem[j] = *w;
		t->state[j] = lp_watch_state(t, w->line, w->idx);
		t->live++;
	}
	LP_WATCH_ASSERT(t->live == old.live);
}

/* Forget every watch (the caller has emitted or dropped them). */
static inline void lp_watch_table_clear(struct lp_watch_table *t)
{
	for (uint64_t i = 0; i < lp_watch_table_cap(t); i++)
		t->state[i] = 0;
	t->live = 0;
}

/* The first live watch at slot index >= *pos, or NULL; *pos moves past it.
 * For walking all watches: pos = 0; while ((w = lp_watch_table_next(t, &pos)))
 * (the table must not change during the walk, except by
 * lp_watch_table_clear after it; to end watches during a walk, see
 * lp_watch_walk below). */
static inline struct lp_watch *lp_watch_table_next(const struct lp_watch_table *t, uint64_t *pos)
{
	for (uint64_t cap = lp_watch_table_cap(t); *pos < cap; ++*pos)
		if (t->state[*pos])
			return &t->slot[(*pos)++];
	return NULL;
}

/* A walk that may end watches as it goes, for a caller that finishes
 * some watches while it looks at all of them (the pmu sampler: the watches
 * an instruction's accesses overlap, the ones a system call touched):
 *
 *	struct lp_watch_walk k;
 *	lp_watch_walk_init(t, &k);
 *	while ((w = lp_watch_walk_next(t, &k)))
 *		if (done(w))
 *			lp_watch_remove(t, w);   // only w, and nothing inserted
 *
 * visits every watch once. Why it works: it starts just after an empty
 * slot s and goes once around; no run of used slots crosses s, and
 * backward shift moves a watch only to an earlier slot of its run, never
 * before the slot being removed, so the slots already passed keep
 * watches already visited; a removal refills the current slot with an
 * unvisited watch (or empties it), which the next step looks at again. */
struct lp_watch_walk {
	uint64_t pos, left;    /* the slot to look at (mod cap), slots left */
	uint64_t line;         /* key of the watch just returned, */
	uint32_t idx, pending; /* if pending */
};

static inline void lp_watch_walk_init(const struct lp_watch_table *t, struct lp_watch_walk *k)
{
	uint64_t cap = lp_watch_table_cap(t), s = 0;

	while (t->state[s]) /* I2: an empty slot exists */
		s++;
	k->pos = (s + 1) & (cap - 1);
	k->left = cap - 1;
	k->pending = 0;
}

static inline struct lp_watch *lp_watch_walk_next(const struct lp_watch_table *t, struct lp_watch_walk *k)
{
	uint64_t mask = lp_watch_table_cap(t) - 1;

	if (k->pending) {
		const struct lp_watch *w = &t->slot[k->pos];
		k->pending = 0;
		/* still there: move on; removed: look at what took its place */
		if (t->state[k->pos] && w->line == k->line && w->idx == k->idx) {
			k->pos = (k->pos + 1) & mask;
			k->left--;
		}
	}
	for (; k->left; k->pos = (k->pos + 1) & mask, k->left--) {
		if (t->state[k->pos]) {
			struct lp_watch *w = &t->slot[k->pos];
			k->line = w->line;
			k->idx = w->idx;
			k->pending = 1;
			return w;
		}
	}
	return NULL;
}

/* Check I1..I4 over the whole table: 0 if they hold, else the number of
 * the first one broken. O(cap x run length): for tests and debugging. */
static inline int lp_watch_table_check(const struct lp_watch_table *t)
{
	uint64_t cap, mask, used = 0;

	if (!t->slot || t->log2 < 1 || t->log2 > 56 || t->state != (uint8_t *)(t->slot + (1ull << t->log2)))
		return 1;
	cap = lp_watch_table_cap(t);
	mask = cap - 1;
	for (uint64_t i = 0; i < cap; i++) {
		if (!t->state[i])
			continue;
		if (t->state[i] != lp_watch_state(t, t->slot[i].line, t->slot[i].idx))
			return 1;
		used++;
	}
	if (used != t->live)
		return 1;
	if (2 * t->live > cap) /* before any lookup: a full table has no empty slot */
		return 2;
	for (uint64_t i = 0; i < cap; i++) {
		const struct lp_watch *w = &t->slot[i];
		if (!t->state[i])
			continue;
		/* I4: no empty slot from home up to i */
		for (uint64_t k = lp_watch_home(t, w->line, w->idx); k != i; k = (k + 1) & mask)
			if (!t->state[k])
				return 4;
		/* I3: the lookup of its key finds this very slot */
		if (lp_watch_find(t, w->line, w->idx) != w)
			return 3;
	}
	return 0;
}

#endif
