/* locprof/profile.h - the .lpp profile: sampled reuse distances of a run.
 *
 * A profile is the architecture-independent fingerprint of one run: run
 * metadata, the StatCache samples (each a watched line access and the reuse
 * distance at which its line was next touched, or dangling), time windows
 * over the samples, the executable mappings for symbolising pcs later, and
 * the allocation events for attributing addresses to data objects.
 * It is recorded once and evaluated for any cache offline (locprof/model.h).
 *
 * On disk (docs/formats.md, ".lpp"): a file header, then self-describing,
 * individually checksummed chunks. A writer may append sample chunks at any
 * time (a live runtime flushes every interval), so a file cut short still
 * holds every chunk written before the cut; lp_profile_read() returns it
 * with LP_ETRUNCATED.
 *
 * Time is counted in line accesses of the sample's line size: a reference
 * touching lines a..b advances the clock by b-a+1. The reuse distance is the
 * number of line accesses (any line) strictly between the sampled access and
 * the next access to the same line.
 */
#ifndef LOCPROF_PROFILE_H
#define LOCPROF_PROFILE_H

#include <locprof/common.h>
#include <locprof/mapping.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The version written, and the newest read. Version 4 adds each sample's
 * reuse address (lp_sample.reuse_addr) to its record; version 3 is a
 * profile with phase intervals (record --phases) or shared time (SMPX
 * chunks), version 2 one without. */
#define LP_PROFILE_VERSION 4
/* The oldest version read: version 1 has no sample parts (lp_sample.part
 * reads as LP_PART_UNKNOWN); versions 1 and 2 have no shared time
 * (lp_profile.shared is 0); versions 1 to 3 no reuse addresses
 * (lp_sample.reuse_addr is 0). */
#define LP_PROFILE_VERSION_MIN 1
/* Default time window in line accesses: StatCache's "about 200k
 * references" (section 2.4). */
#define LP_PROFILE_WINDOW_DEFAULT 200000
#define LP_PROFILE_MAX_LINE_SIZES 8
/* reuse value of a sample whose line was never touched again */
#define LP_REUSE_DANGLING UINT64_MAX
/* The line-access clock of a profile stays below this (2^62: 146 years
 * at 10^9 line accesses a second): sample times, time + reuse distance
 * and access counts. The reader refuses larger values as corrupt, so that
 * no sum of two of them can wrap. */
#define LP_PROFILE_CLOCK_MAX ((uint64_t)1 << 62)
/* At most this many time windows per line size: a longer run gets longer
 * windows (lp_profile_window_length()), so that the counts of a damaged
 * or hostile file cannot make a reader allocate or loop without bound. */
#define LP_PROFILE_MAX_WINDOWS 262144u

struct lp_sample {
	uint64_t time;  /* line-access clock of the sampled access (from 0) */
	uint64_t pc;    /* 0 when unknown */
	uint64_t addr;  /* an address inside the sampled line */
	uint64_t reuse; /* reuse distance, or LP_REUSE_DANGLING */
	uint64_t reuse_pc; /* pc of the next access to the line (the one that
			    * hits or misses), 0 when dangling or unknown */
	uint64_t reuse_addr; /* the address that access touched in the line
			      * (its data object, which may not be the sampled
			      * access's: two variables can share a line), 0
			      * when dangling or unknown (profiles before
			      * version 4, the pmu backend) */
	uint32_t tid;
	uint8_t kind;     /* LP_REF_READ or LP_REF_WRITE */
	uint8_t line_idx; /* index into lp_profile.line_sizes */
	uint8_t part;     /* LP_PART_*: which line of its reference this is */
	/* Shared time (when lp_profile.shared is set; see "Shared time"
	 * below): the clock of all threads of the process together. */
	uint8_t coh;      /* LP_COH_*: what another thread's write did */
	uint32_t stid;    /* thread of the first access to the line after the
			   * sampled one, by any thread (the shared reuse);
			   * tid when it was the sampling thread's own */
	uint32_t wtid;    /* the first thread but tid to write the line before
			   * tid's reuse (coh != LP_COH_NONE) */
	uint64_t wpc;     /* pc of that write, 0 when unknown */
	uint64_t stime;   /* shared line-access clock of the sampled access */
	uint64_t sreuse;  /* line accesses of all threads strictly between the
			   * sampled access and the first access to its line
			   * by any thread, or LP_REUSE_DANGLING */
	uint64_t sown;    /* the same up to tid's own reuse (the one `reuse`
			   * counts in tid's clock), or LP_REUSE_DANGLING */
	/* The threads but tid that touched the line before tid's reuse (bit
	 * thread % 64), and of them those that wrote it (when
	 * lp_profile.masks is set; 0 otherwise). */
	uint64_t touched, writers;
};

/* lp_sample.coh: another thread wrote the sampled line after the sampled
 * access and before the sampling thread touched it again (an invalidation
 * of the sampling thread's private copy). TRUE / FALSE sharing: the reuse
 * touched a byte that another thread wrote, or only other bytes (the
 * coherence miss was false sharing); UNUSED: the line was invalidated and
 * the thread never touched it again (no miss). */
enum lp_sample_coh { LP_COH_NONE = 0, LP_COH_TRUE = 1, LP_COH_FALSE = 2, LP_COH_UNUSED = 3 };

/* lp_sample.part: the sampled line access is the only line of its
 * reference, the first line of a reference that straddles lines, or a
 * later one (the extra line accesses of the reference). Unknown in
 * version-1 profiles. */
enum lp_sample_part { LP_PART_UNKNOWN = 0, LP_PART_WHOLE = 1, LP_PART_FIRST = 2, LP_PART_NEXT = 3 };

/* A time window: the samples of one line size whose time falls in
 * [index * length, (index + 1) * length). */
struct lp_window {
	uint64_t first;    /* index of its first sample in lp_profile.samples */
	uint64_t n;        /* number of samples */
	uint64_t accesses; /* line accesses in the window (the last one is short) */
};

struct lp_window_set {
	uint64_t length; /* window length in line accesses */
	struct lp_window *v;
	size_t n;
};

/* An allocation event of the profiled run: a block allocated (malloc,
 * calloc, realloc, mmap...) or freed. */
#define LP_TIME_UNKNOWN UINT64_MAX
struct lp_alloc_event {
	uint64_t time; /* references (loads and stores, all threads) before the
			* event, or LP_TIME_UNKNOWN (live backends: the runtime
			* sends events without a clock) */
	uint64_t addr; /* block start */
	uint64_t size; /* bytes; for a free what the backend gave (0 for free(),
			* the length for munmap) */
	uint64_t pc;   /* call site, 0 when unknown */
	uint32_t tid;
	uint8_t kind;  /* LP_EV_ALLOC or LP_EV_FREE */
	uint32_t stack; /* its call stack: index + 1 in lp_profile.stacks, 0 when
			 * none was recorded (then pc alone names the site) */
};

/* The call stack of an allocation, innermost first: frames[0] is the call
 * site (the return address into the caller of malloc, new...), the next
 * ones the return addresses of the callers. Backends record at most
 * LP_ALLOC_STACK_MAX frames. */
#define LP_ALLOC_STACK_MAX 16
/* Stack ids fit in 24 bits in the file (docs/formats.md, ASTK). */
#define LP_ALLOC_STACKS_MAX ((1u << 24) - 1)
struct lp_alloc_stack {
	uint64_t frames[LP_ALLOC_STACK_MAX];
	uint32_t n; /* 1..LP_ALLOC_STACK_MAX */
};

/* A thread's instance of a module's thread-local storage (its TLS
 * segment: _Thread_local and __thread variables, OpenMP threadprivate
 * ones): where it lies in that thread, so that an address in it is named
 * by the module's TLS symbol at its offset. */
struct lp_tls_block {
	uint64_t start; /* the segment's start in the thread */
	uint64_t size;  /* its size in memory */
	uint64_t image; /* an address inside the module (its TLS initialisation
			 * image), which says whose segment it is */
	uint32_t tid;
};

/* A phase interval of a phase-guided run (record --phases): a stretch of
 * one thread's references that the runtime classified into a phase from
 * the pcs it executed, and the sampling rate it used there. Its samples
 * are those of thread tid whose time is in [begin[li], begin[li] +
 * accesses[li]) (line-access clock of line size li). */
#define LP_PHASE_MAX 4096u /* phase ids are below this */
struct lp_phase_interval {
	uint64_t begin[LP_PROFILE_MAX_LINE_SIZES];    /* line-access clock at its start */
	uint64_t accesses[LP_PROFILE_MAX_LINE_SIZES]; /* line accesses in it */
	uint64_t references;                          /* references in it */
	double rate;    /* sampling rate in it (0: none taken) */
	uint32_t tid;   /* the profile's thread number */
	uint32_t phase; /* phase id, < LP_PHASE_MAX */
};

struct lp_profile {
	/* run metadata */
	char *command;  /* command line of the profiled run ("" when unknown) */
	char *host;     /* host name */
	int64_t date;   /* seconds since the epoch */
	char *source;   /* what produced it: "trace foo.txt", "inst", ... */
	/* MPI: the rank of the recorded process in MPI_COMM_WORLD, -1 when
	 * it was not an MPI rank (or the profile has no RANK chunk), and the
	 * world's size (0: unknown), from the launcher's environment */
	int32_t mpi_rank;
	uint32_t mpi_size;
	uint32_t n_line_sizes;
	uint32_t line_sizes[LP_PROFILE_MAX_LINE_SIZES]; /* bytes, powers of two */
	double rate;             /* sampling rate (mean gap 1/rate line accesses) */
	uint64_t target_samples; /* --samples N, 0 when the rate was given */
	uint64_t seed;
	uint64_t window; /* requested window length in line accesses */

	/* counts: known at the end of a run (or at the last flush) */
	uint64_t accesses[LP_PROFILE_MAX_LINE_SIZES]; /* line accesses per line size */
	uint64_t references;                          /* loads and stores */
	uint64_t *thread_refs;                        /* references per thread */
	uint32_t n_threads;
	/* 1: the samples carry shared time and coherence (lp_sample.stime
	 * and after: version 3 profiles of backends that see every thread);
	 * 0: they do not, and those fields are zero. */
	int shared;
	/* 1: the samples with shared time also carry lp_sample.touched and
	 * writers (profiles written before them do not) */
	int masks;

	/* samples, sorted by (line_idx, time) after lp_profile_finish() */
	struct lp_sample *samples;
	size_t n_samples, cap_samples;

	/* windows per line size, built by lp_profile_finish() */
	struct lp_window_set windows[LP_PROFILE_MAX_LINE_SIZES];

	struct lp_mappings mappings;

	/* allocation events in the order they happened (ALOC chunks) */
	struct lp_alloc_event *allocs;
	size_t n_allocs, cap_allocs;

	/* the allocation events' call stacks (ASTK chunks), each once */
	struct lp_alloc_stack *stacks;
	size_t n_stacks, cap_stacks;

	/* the threads' TLS segments (TLSB chunks) */
	struct lp_tls_block *tls;
	size_t n_tls, cap_tls;

	/* what the allocation events are (ALSM chunk; 0 and zeros when the
	 * profile has none: then the events are all of the run's, in one
	 * clock for all threads, and the totals are counted from them) */
	uint32_t alloc_flags;  /* LP_ALLOCS_* */
	uint64_t alloc_total;  /* allocations of the whole run */
	uint64_t free_total;   /* frees of the whole run */
	uint64_t alloc_bytes;  /* bytes allocated over the whole run */

	/* Region of interest (REGN chunk): what the recording kept of the run,
	 * in words ("markers", "from kernel to report", "skip 1000"...), NULL
	 * for the whole run. The counts, samples and clock above are the
	 * region's alone: its references concatenated, as if the program ran
	 * only them. region_skipped: references left out (all threads);
	 * region_entries: times the region was entered. */
	char *region;
	uint64_t region_skipped, region_entries;
	/* phase intervals (PHAS chunks, record --phases), in the order they
	 * arrived; none in a constant-rate profile */
	struct lp_phase_interval *intervals;
	size_t n_intervals, cap_intervals;
	uint64_t phase_interval; /* references per interval asked for */
};

/* alloc_flags: the events are those of the blocks that a sample or a reuse
 * touched only (a block's allocation event is written, with its original
 * time, when a sample first falls in it; its free only if its allocation
 * was); the totals are the whole run's. */
#define LP_ALLOCS_TOUCHED 1u
/* An event's time counts the line accesses (of the smallest line size) of
 * its own thread (event tid), as a live profile's sample times do, not
 * those of all threads. */
#define LP_ALLOCS_THREAD_CLOCK 2u
/* alloc_total, free_total and alloc_bytes are set. */
#define LP_ALLOCS_TOTALS 4u

int lp_profile_new(struct lp_profile **out);
void lp_profile_free(struct lp_profile *p);

/* Replace a metadata string (command, host, source); s may be NULL. */
int lp_profile_set_str(char **field, const char *s);

/* Append a sample (copied). */
int lp_profile_add_sample(struct lp_profile *p, const struct lp_sample *s);

/* Append an allocation event (copied); kind must be LP_EV_ALLOC or
 * LP_EV_FREE. */
int lp_profile_add_alloc(struct lp_profile *p, const struct lp_alloc_event *e);

/* Append a call stack of n frames (1..LP_ALLOC_STACK_MAX; copied) to the
 * stack table; *id is its index + 1, for lp_alloc_event.stack. Equal
 * stacks are not merged here (the collector's sink does that). */
int lp_profile_add_stack(struct lp_profile *p, const uint64_t *frames, unsigned n, uint32_t *id);

/* Allocation call stacks as they come, each allocation followed by the
 * frames above its call site (a recorder's frame records, a trace's
 * LP_EV_FRAME records), into a profile's stack table with equal stacks
 * stored once: a program makes millions of allocations from a few
 * hundred places. */
struct lp_stack_builder;
int lp_stack_builder_new(struct lp_stack_builder **out);
void lp_stack_builder_free(struct lp_stack_builder *b); /* accepts NULL */
/* Event `event` of the profile (an allocation at call site pc) may get a
 * stack: the frames that follow go to it. */
void lp_stack_builder_begin(struct lp_stack_builder *b, size_t event, uint64_t pc);
/* The next frames of the open stack (a 0 ends it; frames past
 * LP_ALLOC_STACK_MAX are dropped). */
void lp_stack_builder_frames(struct lp_stack_builder *b, const uint64_t *frames, unsigned n);
/* Close the open stack, if any: a stack of more than its call site goes
 * into p's table (once) and its event names it. */
int lp_stack_builder_end(struct lp_stack_builder *b, struct lp_profile *p);

/* Append a thread's TLS segment (copied). */
int lp_profile_add_tls(struct lp_profile *p, const struct lp_tls_block *b);

/* The call stack of event e, or NULL when it has none (or a damaged id). */
const struct lp_alloc_stack *lp_profile_event_stack(const struct lp_profile *p, const struct lp_alloc_event *e);
/* Append a phase interval (copied); LP_EINVAL for a phase id at or
 * above LP_PHASE_MAX or a rate outside [0, 1]. */
int lp_profile_add_interval(struct lp_profile *p, const struct lp_phase_interval *iv);

/* Set the references of thread tid (growing the table). */
int lp_profile_set_thread_refs(struct lp_profile *p, uint32_t tid, uint64_t refs);

/* The window length used over a run of total line accesses when len is
 * asked (0: one window): len, lengthened until the run holds at most
 * LP_PROFILE_MAX_WINDOWS windows; never 0. */
uint64_t lp_profile_window_length(uint64_t total, uint64_t len);

/* Windows of length len (from lp_profile_window_length()) over total line
 * accesses: at least 1. */
uint64_t lp_profile_window_count(uint64_t total, uint64_t len);

/* Sort the samples and (re)build the windows of every line size with the
 * given window length (0: p->window, and if that is 0 too, one window). */
int lp_profile_finish(struct lp_profile *p, uint64_t window);

/* Samples of line size index li: [*first, *first + *n). Needs
 * lp_profile_finish(). */
void lp_profile_line_samples(const struct lp_profile *p, unsigned li, size_t *first, size_t *n);

/* 1 when the line-access count of line size li is below what its samples
 * show (a sample at or after it): the run was killed or cut short, and the
 * count is that of the runtime's last flush (0 before the first one).
 * Needs lp_profile_finish(). */
int lp_profile_count_partial(const struct lp_profile *p, unsigned li);

/* The sample at index first, or NULL in a profile without samples (where
 * p->samples is NULL and even NULL + 0 is undefined). */
static inline const struct lp_sample *lp_profile_line_first(const struct lp_profile *p, size_t first)
{
	return p->samples ? p->samples + first : NULL;
}

/* Index of a line size in the profile, or -1. */
int lp_profile_line_index(const struct lp_profile *p, uint32_t line_size);

/* Write the whole profile to path (atomically: temporary name + rename). */
int lp_profile_write(const struct lp_profile *p, const char *path);

/* Read a profile. On success returns 0. A file cut short or with a damaged
 * chunk returns the profile of every intact chunk before the damage in *out
 * AND LP_ETRUNCATED or LP_ECORRUPT (lp_errmsg() says where); the caller
 * should warn and may use it. Any other error, and a file whose metadata
 * (the first chunk) is missing or damaged, leaves *out NULL. Bytes after
 * the end chunk are left unread, with LP_ECORRUPT and the profile. The
 * returned profile has been through lp_profile_finish(). */
int lp_profile_read(struct lp_profile **out, const char *path);

/* ---- data objects --------------------------------------------------
 * The heap blocks of a profile, from its allocation events, to attribute
 * sampled addresses to the call sites that allocated them. */
struct lp_objects;

int lp_objects_new(struct lp_objects **out, const struct lp_profile *p);
void lp_objects_free(struct lp_objects *o);
/* Heap blocks (allocations of a non-zero size). */
size_t lp_objects_count(const struct lp_objects *o);
/* The block holding addr at `time` (the events' clock; LP_TIME_UNKNOWN when not
 * known): 1 and its start, size and allocation call site, or 0 when no
 * block ever held addr. When several blocks held it (an address reused
 * after a free), the one alive at `time` wins, else the one allocated last
 * before it, else (times unknown) the last one allocated. A trace's event
 * times count references, a sample's time line accesses: equal when no
 * reference straddles two lines. */
int lp_objects_find(const struct lp_objects *o, uint64_t addr, uint64_t time, uint64_t *start,
		    uint64_t *size, uint64_t *pc);
/* The same for an access of thread tid: when the profile's event times
 * count each thread's own line accesses (LP_ALLOCS_THREAD_CLOCK), only the
 * blocks allocated by tid compare by time; the others count as times
 * unknown. */
int lp_objects_find_tid(const struct lp_objects *o, uint64_t addr, uint64_t time, uint32_t tid,
			uint64_t *start, uint64_t *size, uint64_t *pc);
/* The same, and the block's allocation call stack in *stack (NULL when
 * the profile has none for it; valid until lp_objects_free()). */
int lp_objects_find_stack(const struct lp_objects *o, uint64_t addr, uint64_t time, uint32_t tid,
			  uint64_t *start, uint64_t *size, uint64_t *pc, const struct lp_alloc_stack **stack);
/* The TLS segment of thread tid holding addr: 1 and its start and the
 * address of its module's image, or 0. */
int lp_objects_find_tls(const struct lp_objects *o, uint64_t addr, uint32_t tid, uint64_t *start,
			uint64_t *image);
/* Allocations of the whole run: the profile's total when it has one
 * (LP_ALLOCS_TOTALS: a profile with touched blocks only), else the number
 * of heap blocks. */
uint64_t lp_objects_run_allocs(const struct lp_objects *o);

#ifdef __cplusplus
}
#endif
#endif
