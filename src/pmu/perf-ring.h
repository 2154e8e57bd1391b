/* Reading a perf_event ring buffer (the records of a sampling event), for
 * the PEBS double trap (thesis §3.3.2.2): the precise pc of each overflow
 * is in a PERF_RECORD_SAMPLE with sample_type PERF_SAMPLE_IP |
 * PERF_SAMPLE_TID.
 *
 * perf_event_open(2), "MMAP layout": the mapping is one metadata page
 * (struct perf_event_mmap_page) followed by 2^n data pages; data_offset
 * and data_size (Linux 4.1) locate the data area. The kernel writes whole
 * records and then publishes data_head; the reader loads data_head with
 * an acquire barrier ("an rmb() is needed after reading data_head"), reads
 * the records between data_tail and data_head (offsets modulo data_size: a
 * record may wrap around the end of the area), and stores data_tail with a
 * release barrier ("an mb() before writing data_tail") so that the kernel
 * may overwrite the space. Every record starts with struct
 * perf_event_header { type, misc, size }, size including the header.
 *
 * The parser works on any such buffer, so that wrap-around, lost and
 * throttle records and damaged (partial) records are tested on synthetic
 * buffers (tests/pmu/test-pmu-counter.c): the kernel here produces none. */
#ifndef LP_PMU_PERF_RING_H
#define LP_PMU_PERF_RING_H

#include <linux/perf_event.h>
#include <stdint.h>
#include <sys/types.h>

struct lp_pmu_ring {
	struct perf_event_mmap_page *meta;
	unsigned char *data;  /* the data area */
	uint64_t size;        /* its size, a power of two */
	size_t map_len;       /* the whole mapping (0: not ours to unmap) */
};

/* What draining found. */
struct lp_pmu_ring_read {
	int have;             /* a sample was read: the newest is below */
	uint64_t ip;
	uint32_t pid, tid;
	int exact;            /* its PERF_RECORD_MISC_EXACT_IP bit: the ip is the event's */
	uint64_t samples;     /* PERF_RECORD_SAMPLE records */
	uint64_t exact_samples; /* of which with PERF_RECORD_MISC_EXACT_IP */
	uint64_t lost;        /* records the kernel dropped (PERF_RECORD_LOST's count) */
	uint64_t throttled;   /* PERF_RECORD_THROTTLE */
	uint64_t unthrottled; /* PERF_RECORD_UNTHROTTLE */
	uint64_t other;       /* other record types, skipped */
	int damaged;          /* a record with an impossible size: the rest was skipped */
};

/* Map the ring of a perf_event fd: 1 + 2^data_pages_log2 pages. 0 or LP_E*. */
int lp_pmu_ring_map(struct lp_pmu_ring *r, int fd, unsigned data_pages_log2);
void lp_pmu_ring_unmap(struct lp_pmu_ring *r);

/* Read every complete record between data_tail and data_head (sample_type
 * PERF_SAMPLE_IP | PERF_SAMPLE_TID), adding to *out (the newest sample
 * replaces an older one), and give the space back (data_tail). An
 * incomplete record at the head is left for the next call. A record whose
 * size is impossible (below the header, not a multiple of 8, beyond the
 * data written) makes the rest of the published data unreadable: it is
 * skipped and out->damaged set. Returns the number of samples read. */
int lp_pmu_ring_drain(struct lp_pmu_ring *r, struct lp_pmu_ring_read *out);

#endif
