/* The collector protocol: how a live backend inside the target (the
 * instrumentation runtime, the valgrind tool) hands its samples, references
 * and events to `locprof record`, which turns them into profiles and traces
 * with the library. Byte-level description: docs/formats.md, "Collector
 * protocol".
 *
 * Why a separate collector process rather than files written by the target:
 *  - everything already sent survives a crash or SIGKILL of the target;
 *  - the target needs no file-format or compression code (the valgrind tool
 *    cannot even use libc), and compression runs on another core.
 *
 * Transport: the collector listens on a Unix stream socket whose path is in
 * LOCPROF_SOCKET. Every thread of every process opens its own connection
 * on its first slow-path event (a forked child reconnects), so no sender
 * ever takes a lock and messages of any size never interleave. A connection
 * starts with a HELLO naming the process (pid + nonce) and the thread; all
 * later messages on it belong to that thread. A thread whose descriptor
 * the program closed or reused connects again with a new HELLO of the same
 * process and thread, whose counts go on (docs/runtime.md, "The
 * connection"). The collector writes one
 * profile or trace per process image (pid + nonce: a fork or an exec gives a
 * new nonce), and a process is complete when all its connections are closed.
 * All integers are little-endian, as on the only supported architecture.
 * This header is freestanding: the runtime and the valgrind tool include it.
 */
#ifndef LP_COLLECT_PROTOCOL_H
#define LP_COLLECT_PROTOCOL_H

#include <stdint.h>

#define LP_MSG_MAGIC 0x4d504cu /* "LPM" */
#define LP_MSG_VERSION 6
#define LP_MSG_MAGIC_VERSION ((LP_MSG_MAGIC << 8) | LP_MSG_VERSION)
#define LP_MSG_MAX (1u << 20) /* largest message a collector accepts */
#define LP_MAX_LINE_SIZES 4

/* The environment variables carrying the socket path and the settings.
 * Absent LOCPROF_SOCKET, the runtime is inert and the program runs as if
 * uninstrumented (one predictable branch per access after the first). */
#define LP_ENV_SOCKET "LOCPROF_SOCKET"
#define LP_ENV_MODE "LOCPROF_MODE"     /* "sample" (default) or "trace" */
#define LP_ENV_RATE "LOCPROF_RATE"     /* sampling rate, e.g. "1e-4" (locprof
					* writes "%.17e": the same length at every rate) */
#define LP_ENV_LINES "LOCPROF_LINES"   /* line sizes, e.g. "64,128" */
#define LP_ENV_SEED "LOCPROF_SEED"     /* random seed */
#define LP_ENV_FLUSH "LOCPROF_FLUSH_MS" /* flush interval in milliseconds */
#define LP_ENV_SAMPLES "LOCPROF_SAMPLES" /* aim at this many sampled references per process */
/* At a fixed rate: keep at most this many sampled references per process,
 * halving the rate online past it as LOCPROF_SAMPLES does (absent: no cap) */
#define LP_ENV_MAX_SAMPLES "LOCPROF_MAX_SAMPLES"
/* Regions of interest (record --start-at/--stop-at/--skip, locprof/roi.h;
 * absent: the whole run). LOCPROF_ROI: "outside" when the recording
 * begins outside the region (markers, --start-at). START_AT, STOP_AT:
 * the link-time address of the function's entry in the main executable,
 * in hex (the runtime), then a space and its name as valgrind gives it
 * (the valgrind tool). SKIP: each thread's first N references in the
 * region are left out. */
#define LP_ENV_ROI "LOCPROF_ROI"
/* The recorded program's real path: the region applies to its images
 * only, not to another program it execs (whose function addresses and
 * markers are its own). */
#define LP_ENV_ROI_PROGRAM "LOCPROF_ROI_PROGRAM"
#define LP_ENV_ROI_START_AT "LOCPROF_ROI_START_AT"
#define LP_ENV_ROI_STOP_AT "LOCPROF_ROI_STOP_AT"
#define LP_ENV_ROI_SKIP "LOCPROF_ROI_SKIP"
/* record --phases (docs/runtime.md, "Phase detection"): references per
 * interval (absent: no phases), sampled references per phase at the full
 * rate, the rate in a phase that has them, the classifier's threshold */
#define LP_ENV_PHASES "LOCPROF_PHASES"
#define LP_ENV_PHASE_SAMPLES "LOCPROF_PHASE_SAMPLES"
#define LP_ENV_PHASE_RATE "LOCPROF_PHASE_RATE"
#define LP_ENV_PHASE_THRESHOLD "LOCPROF_PHASE_THRESHOLD"

enum lp_msg_type {
	LP_MSG_HELLO = 1,   /* first message of every connection (one per thread) */
	LP_MSG_MAPS = 2,    /* a piece of /proc/self/maps text */
	LP_MSG_SAMPLES = 3, /* completed or dangling samples */
	LP_MSG_REFS = 4,    /* trace mode: references and allocation events */
	LP_MSG_THREAD = 5,  /* a thread's reference count: at each flush, and when it ends */
	LP_MSG_BYE = 6,     /* the process ends normally or by a signal */
	LP_MSG_ALLOCS = 7,  /* sample mode: allocation events */
	LP_MSG_ALLOCS_T = 8, /* sample mode: allocation events with their time */
	LP_MSG_ALLOC_SUM = 9, /* what the events are, and the run's totals */
	LP_MSG_REGION = 10, /* region of interest: a thread's references left out */
	LP_MSG_PHASES = 20, /* record --phases: classified intervals of a thread */
};

enum lp_msg_mode { LP_MODE_SAMPLE = 0, LP_MODE_TRACE = 1 };

/* Who observes the references (HELLO.backend; the profile's source). */
enum lp_msg_backend {
	LP_BACKEND_INST = 0,     /* clang SanitizerCoverage or gcc -fsanitize=thread */
	LP_BACKEND_VALGRIND = 1, /* the valgrind tool (src/vg) */
};

/* 24 bytes, so that the 8-byte records after every fixed part stay aligned. */
struct lp_msg_header {
	uint32_t magic_version; /* LP_MSG_MAGIC_VERSION */
	uint32_t type;          /* enum lp_msg_type */
	uint32_t length;        /* whole message, header included, <= LP_MSG_MAX */
	uint32_t pid;
	uint32_t tid;           /* kernel thread id of the sender */
	uint32_t reserved;      /* 0 */
};

struct lp_msg_hello {
	struct lp_msg_header h;
	uint32_t ppid;
	uint32_t thread;  /* runtime's thread number in this process, 0 = first */
	uint64_t nonce;   /* names the process image: new after fork and exec */
	uint32_t mode;    /* enum lp_msg_mode */
	uint32_t nlines;  /* 1..LP_MAX_LINE_SIZES */
	uint32_t line_size[LP_MAX_LINE_SIZES]; /* bytes, powers of two, ascending */
	double rate;      /* sampling rate (sample mode) */
	uint64_t seed;
	uint64_t start_ns; /* CLOCK_REALTIME when the process image started */
	uint32_t backend;  /* enum lp_msg_backend */
	uint32_t cmdline_len; /* bytes of NUL-separated argv that follow */
	/* char cmdline[cmdline_len]; truncated to fit the message */
};

/* MAPS: text of /proc/self/maps, in pieces of whole lines. */
enum lp_maps_when { LP_MAPS_START = 0, LP_MAPS_EXIT = 1 };
struct lp_msg_maps {
	struct lp_msg_header h;
	uint32_t when;  /* enum lp_maps_when */
	uint32_t last;  /* 1 on the final piece of this snapshot */
	/* char text[h.length - sizeof(struct lp_msg_maps)]; */
};

/* One sample: begin/end are per-thread reference numbers (the reference
 * clock: references of the sending thread, counted from 0), so the reuse
 * distance is end - begin - 1. end == LP_SAMPLE_DANGLING when the line was
 * not touched again by this thread before the thread or process ended. */
#define LP_SAMPLE_DANGLING UINT64_MAX
/* A sample's kind byte carries, above the kind, which line of its
 * reference the sampled line access is (enum lp_sample_part; 0: unknown). */
#define LP_MSG_PART_SHIFT 4
#define LP_MSG_KIND_MASK 0x0f
/* the values of enum lp_sample_part (locprof/profile.h) */
#define LP_MSG_PART_WHOLE 1
#define LP_MSG_PART_FIRST 2
#define LP_MSG_PART_NEXT 3

struct lp_msg_sample {
	uint64_t begin, end;
	uint64_t pc, addr;
	uint64_t reuse_pc; /* pc of the access that ended the sample (the one
			    * that hits or misses); 0 when dangling */
	uint32_t thread; /* runtime's thread number, 0 = first thread */
	uint8_t size;    /* bytes accessed, capped at 255 */
	uint8_t kind;    /* LP_REF_READ or LP_REF_WRITE, | part << LP_MSG_PART_SHIFT */
	uint8_t line_index; /* index into the HELLO's line_size[] */
	uint8_t level;   /* --samples thinning: kept iff level >= the final
			  * level of its process (always 0 at a fixed rate) */
	/* Shared time (LP_MSG_SAMPLE_SHARED in flags; common/share-core.h):
	 * the line accesses of all threads of the process, as
	 * locprof/profile.h's lp_sample.stime and after. */
	uint64_t stime;  /* shared clock of the sampled access */
	uint64_t sreuse; /* to the first access by any thread, or LP_SAMPLE_DANGLING */
	uint64_t sown;   /* to the sending thread's own reuse, or LP_SAMPLE_DANGLING */
	uint64_t wpc;    /* pc of the first write by another thread before it */
	uint32_t stid;   /* thread of the first access */
	uint32_t wtid;   /* thread of that write */
	uint8_t coh;     /* enum lp_sample_coh */
	uint8_t flags;   /* LP_MSG_SAMPLE_* */
	uint8_t pad[6];
	uint64_t touched; /* threads but the sender that touched the line
			   * before its reuse (bit thread % 64) */
	uint64_t writers; /* of them, those that wrote it */
	uint64_t reuse_addr; /* the address the access at reuse_pc touched in
			      * the line (the line's start where that access
			      * began in the line before); 0 when dangling */
};
#define LP_MSG_SAMPLE_SHARED 1u /* the shared-time fields are set */

struct lp_msg_samples {
	struct lp_msg_header h;
	uint32_t count;
	uint32_t level;  /* the process's thinning level when sent: the rate
			  * is now the HELLO's rate / 2^level */
	/* struct lp_msg_sample samples[count]; */
};

/* Trace-mode references and (both modes) allocation events: the fields of
 * struct lp_ref, packed. For an allocation event kind is LP_EV_ALLOC (addr
 * = block, size = bytes, pc = call site) or LP_EV_FREE (size 0, or the
 * length for munmap). In trace mode seq numbers the records of all
 * threads of the process from 0, in the order they happened (one counter
 * for the process, taken by each record): the collector writes the trace
 * in that order, whatever connection each record came on (merge.c). In
 * sample mode seq of an LP_EV_ALLOC or LP_EV_FREE record is its time, the
 * sending thread's line accesses (of the smallest line size: the clock of
 * its samples' times) before the event, plus 1 (0: unknown), so
 * that a block freed and another allocated at its address are told apart
 * (the sink keeps it as the event's time, LP_MSG_ALLOCS_THREAD_CLOCK); 0
 * in the other records. */
struct lp_msg_ref {
	uint64_t addr, pc, size;
	uint32_t thread;
	uint32_t kind;
	uint64_t seq;
};

/* An allocation event's call stack (above its call site, pc) follows it
 * in the same message as records of kind LP_MSG_EV_FRAMES: in a
 * struct lp_msg_ref, addr, pc and size hold the next three return
 * addresses, innermost first; in a struct lp_msg_alloc_t, time, addr, pc
 * and size the next four. A 0 ends the stack. A collector that does not
 * keep stacks drops these records. */
#define LP_MSG_EV_FRAMES 16u
/* A thread's instance of a module's TLS segment, in the same stream
 * (struct lp_msg_ref): addr = its start in the sending thread, size = its
 * size in memory, pc = an address in the module (its TLS initialisation
 * image), thread = the thread. Sent once per thread and module. */
#define LP_MSG_EV_TLS 17u

/* REFS (trace mode) and ALLOCS (sample mode) share this layout. */
struct lp_msg_refs {
	struct lp_msg_header h;
	uint32_t count, pad;
	/* struct lp_msg_ref refs[count]; */
};

/* ALLOCS_T: allocation events with a clock (the valgrind tool). time is
 * the number of references of thread `thread` (the allocating one, whose
 * clock the samples of that thread use) before the event. Events of all
 * threads of a process come in one stream in the order they were sent, so
 * they may arrive on any of its connections. */
struct lp_msg_alloc_t {
	uint64_t time, addr, pc, size;
	uint32_t thread;
	uint32_t kind; /* LP_EV_ALLOC or LP_EV_FREE */
};

struct lp_msg_allocs_t {
	struct lp_msg_header h;
	uint32_t count, pad;
	/* struct lp_msg_alloc_t events[count]; */
};

/* ALLOC_SUM: sent at the end of a process image (cumulative: the last one
 * wins). flags: LP_MSG_ALLOCS_TOUCHED when the events are those of the
 * blocks a sample or a reuse touched only (an allocation sent when a
 * sample first falls in the block, with its original time; a free only
 * if the allocation was sent); LP_MSG_ALLOCS_THREAD_CLOCK when event
 * times count the allocating thread's references. */
#define LP_MSG_ALLOCS_TOUCHED 1u
#define LP_MSG_ALLOCS_THREAD_CLOCK 2u
struct lp_msg_alloc_sum {
	struct lp_msg_header h;
	uint32_t flags, pad;
	uint64_t allocs, frees, bytes; /* the whole run's */
};

/* THREAD: running = 1, the thread's references so far, sent with each
 * flush of its buffers so that a killed process keeps its counts up to
 * the last flush (the last one wins); running = 0, its final count, when
 * it ends. */
struct lp_msg_thread {
	struct lp_msg_header h;
	uint32_t thread, running;
	uint64_t references; /* of this thread */
	/* Line accesses beyond one per reference, per line size (HELLO's
	 * line_size order): a reference touching k lines of that size adds
	 * k - 1, so the thread's line accesses are references + extra_lines. */
	uint64_t extra_lines[LP_MAX_LINE_SIZES];
};

/* REGION: sent with THREAD (the last one wins) when a region of interest
 * is set. skipped: the thread's references outside the region, which its
 * clock and THREAD's counts leave out; entries: the times the process
 * entered the region so far. */
struct lp_msg_region {
	struct lp_msg_header h;
	uint32_t thread, pad;
	uint64_t skipped;
	uint64_t entries;
};

/* PHASES: the intervals of the sending thread that ended, each with its
 * phase and the rate sampled in it. Clocks are the thread's, as the
 * samples': references, and line accesses per line size (references +
 * extra lines) at the interval's start. */
struct lp_msg_phase {
	uint64_t begin[LP_MAX_LINE_SIZES];    /* line-access clock at its start */
	uint64_t accesses[LP_MAX_LINE_SIZES]; /* line accesses in it */
	uint64_t references;                  /* references in it */
	double rate;                          /* sampling rate in it */
	uint32_t thread;                      /* runtime's thread number */
	uint32_t phase;
};

struct lp_msg_phases {
	struct lp_msg_header h;
	uint32_t count, pad;
	uint64_t interval; /* references per interval asked for */
	/* struct lp_msg_phase phases[count]; */
};

/* LP_BYE_EXEC: the image is replaced by execve (status 0); the new image,
 * if instrumented, starts a new output. */
enum lp_bye_how { LP_BYE_EXIT = 0, LP_BYE_SIGNAL = 1, LP_BYE_EXEC = 2 };
struct lp_msg_bye {
	struct lp_msg_header h;
	int32_t status;  /* exit status, or -signal when killed by a signal */
	uint32_t how;    /* enum lp_bye_how */
	uint64_t references; /* all threads of the process */
};

#endif
