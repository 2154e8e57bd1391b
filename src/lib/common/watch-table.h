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
 * key (an explicit `used` byte marks live slots, no sentinel key).
 *
 * Layout: open addressing, linear probing, Fibonacci hashing (one
 * multiply; the top bits are well mixed even for the strided lines of
 * array sweeps), backward-shift deletion (no tombstones, so lookups of
 * unwatched lines stay short however many samples complete). 40-byte
 * slots: the key and the start of the sample that the watch will end.
 *
 * Invariants (lp_watch_table_check() tests them all; the cheap ones are
 * asserted as the table changes):
 *   I1  cap = 2^log2, 1 <= log2 <= 63, live = the number of used slots;
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
#ifndef LP_COMMON_WATCH_TABLE_H
#define LP_COMMON_WATCH_TABLE_H

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
	uint8_t used;   /* 1 for a live watch, 0 for an empty slot */
};

struct lp_watch_table {
	struct lp_watch *slot; /* 2^log2 slots, the caller's memory */
	uint64_t live;         /* used slots */
	uint32_t log2;
};

/* Bytes of memory for a table of 2^log2 slots. */
static inline uint64_t lp_watch_table_bytes(uint32_t log2)
{
	return (sizeof(struct lp_watch)) << log2;
}

static inline uint64_t lp_watch_table_cap(const struct lp_watch_table *t)
{
	return 1ull << t->log2;
}

/* An empty table over mem, 2^log2 slots of caller's memory (any content). */
static inline void lp_watch_table_init(struct lp_watch_table *t, struct lp_watch *mem, uint32_t log2)
{
	LP_WATCH_ASSERT(mem && log2 >= 1 && log2 <= 63);
	t->slot = mem;
	t->log2 = log2;
	t->live = 0;
	for (uint64_t i = 0; i < (1ull << log2); i++)
		mem[i].used = 0;
}

/* The home slot of a key. */
static inline uint64_t lp_watch_home(const struct lp_watch_table *t, uint64_t line, uint32_t idx)
{
	return ((line ^ ((uint64_t)idx << 58)) * 0x9e3779b97f4a7c15ull) >> (64 - t->log2);
}

/* The live watch of (line, idx), or NULL. */
static inline struct lp_watch *lp_watch_find(const struct lp_watch_table *t, uint64_t line, uint32_t idx)
{
	uint64_t mask = lp_watch_table_cap(t) - 1, i = lp_watch_home(t, line, idx);

	for (;; i = (i + 1) & mask) {
		struct lp_watch *w = &t->slot[i];
		if (!w->used)
			return NULL;
		if (w->line == line && w->idx == idx)
			return w;
	}
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
	while (t->slot[i].used) {
		LP_WATCH_ASSERT(t->slot[i].line != line || t->slot[i].idx != idx);
		i = (i + 1) & mask;
	}
	w = &t->slot[i];
	w->line = line;
	w->idx = (uint8_t)idx;
	w->used = 1;
	t->live++;
	return w;
}

/* End watch w (a live slot of t). Slots after it may move (backward
 * shift): pointers into the table other than w do not survive this. */
static inline void lp_watch_remove(struct lp_watch_table *t, struct lp_watch *w)
{
	uint64_t mask = lp_watch_table_cap(t) - 1, i = (uint64_t)(w - t->slot), j = i;

	LP_WATCH_ASSERT(i <= mask && w->used && t->live > 0);
	t->live--;
	for (;;) {
		uint64_t home;
		t->slot[i].used = 0;
		do {
			j = (j + 1) & mask;
			if (!t->slot[j].used)
				return;
			home = lp_watch_home(t, t->slot[j].line, t->slot[j].idx);
			/* Leave j where it is if its home lies cyclically in (i, j]:
			 * the hole at i does not break its run (I4). */
		} while (i <= j ? (i < home && home <= j) : (i < home || home <= j));
		t->slot[i] = t->slot[j];
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
		if (!old.slot[i].used)
			continue;
		uint64_t mask = lp_watch_table_cap(t) - 1;
		uint64_t j = lp_watch_home(t, old.slot[i].line, old.slot[i].idx);
		while (mem[j].used)
			j = (j + 1) & mask;
		mem[j] = old.slot[i];
		t->live++;
	}
	LP_WATCH_ASSERT(t->live == old.live);
}

/* Forget every watch (the caller has emitted or dropped them). */
static inline void lp_watch_table_clear(struct lp_watch_table *t)
{
	for (uint64_t i = 0; i < lp_watch_table_cap(t); i++)
		t->slot[i].used = 0;
	t->live = 0;
}

/* The first live watch at slot index >= *pos, or NULL; *pos moves past it.
 * For walking all watches: pos = 0; while ((w = lp_watch_table_next(t, &pos)))
 * (the table must not change during the walk, except by
 * lp_watch_table_clear after it). */
static inline struct lp_watch *lp_watch_table_next(const struct lp_watch_table *t, uint64_t *pos)
{
	for (uint64_t cap = lp_watch_table_cap(t); *pos < cap; ++*pos)
		if (t->slot[*pos].used)
			return &t->slot[(*pos)++];
	return NULL;
}

/* Check I1..I4 over the whole table: 0 if they hold, else the number of
 * the first one broken. O(cap x run length): for tests and debugging. */
static inline int lp_watch_table_check(const struct lp_watch_table *t)
{
	uint64_t cap, mask, used = 0;

	if (!t->slot || t->log2 < 1 || t->log2 > 63)
		return 1;
	cap = lp_watch_table_cap(t);
	mask = cap - 1;
	for (uint64_t i = 0; i < cap; i++) {
		if (t->slot[i].used > 1)
			return 1;
		used += t->slot[i].used;
	}
	if (used != t->live)
		return 1;
	if (2 * t->live > cap) /* before any lookup: a full table has no empty slot */
		return 2;
	for (uint64_t i = 0; i < cap; i++) {
		const struct lp_watch *w = &t->slot[i];
		if (!w->used)
			continue;
		/* I4: no empty slot from home up to i */
		for (uint64_t k = lp_watch_home(t, w->line, w->idx); k != i; k = (k + 1) & mask)
			if (!t->slot[k].used)
				return 4;
		/* I3: the lookup of its key finds this very slot */
		if (lp_watch_find(t, w->line, w->idx) != w)
			return 3;
	}
	return 0;
}

#endif
