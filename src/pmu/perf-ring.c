/* perf_event ring buffer reader (perf-ring.h). Field layouts from
 * perf_event_open(2) (man-pages 6.03), "MMAP layout" and the record
 * types: PERF_RECORD_SAMPLE with sample_type IP | TID is
 *     struct { struct perf_event_header header; u64 ip; u32 pid, tid; };
 * (the fields present appear in the order of the sample_type bits:
 * PERF_SAMPLE_IDENTIFIER, IP, TID, TIME, ...; we ask for IP and TID only);
 * PERF_RECORD_LOST is { header; u64 id; u64 lost; sample_id };
 * PERF_RECORD_THROTTLE and _UNTHROTTLE are { header; u64 time; u64 id;
 * u64 stream_id; sample_id } (sample_id is empty without sample_id_all). */
#include "perf-ring.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <locprof/common.h>
#include "common/error.h"

int lp_pmu_ring_map(struct lp_pmu_ring *r, int fd, unsigned data_pages_log2)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	size_t len = pg * (1 + ((size_t)1 << data_pages_log2));
	void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	memset(r, 0, sizeof(*r));
	if (m == MAP_FAILED)
		return lp_seterr(LP_EIO, "mmap of the perf_event ring buffer: %s", strerror(errno));
	r->meta = m;
	r->map_len = len;
	/* data_offset/data_size exist since Linux 4.1; before, the data
	 * follows the first page. */
	r->data = (unsigned char *)m + (r->meta->data_offset ? r->meta->data_offset : pg);
	r->size = r->meta->data_size ? r->meta->data_size : len - pg;
	return 0;
}

void lp_pmu_ring_unmap(struct lp_pmu_ring *r)
{
	if (r && r->meta && r->map_len)
		munmap(r->meta, r->map_len);
	if (r)
		memset(r, 0, sizeof(*r));
}

/* Copy len bytes at ring offset off (mod size), across the end. */
static void ring_copy(const struct lp_pmu_ring *r, uint64_t off, void *dst, size_t len)
{
	uint64_t o = off & (r->size - 1);
	size_t first = len;

	if (o + len > r->size)
		first = (size_t)(r->size - o);
	memcpy(dst, r->data + o, first);
	if (first < len)
		memcpy((char *)dst + first, r->data, len - first);
}

int lp_pmu_ring_drain(struct lp_pmu_ring *r, struct lp_pmu_ring_read *out)
{
	/* "On SMP-capable platforms, after reading the data_head value,
	 * user space should issue an rmb()": an acquire load orders the
	 * reads of the records after it. */
	uint64_t head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = r->meta->data_tail; /* only we write it */
	int n = 0;

	if (head - tail > r->size) {
		/* More than the buffer holds: cannot be (the kernel never
		 * overwrites unread data in a writable mapping). */
		out->damaged = 1;
		tail = head;
	}
	while (head - tail >= sizeof(struct perf_event_header)) {
		struct perf_event_header h;
		unsigned char rec[256];

		ring_copy(r, tail, &h, sizeof(h));
		if (h.size < sizeof(h) || (h.size & 7) || h.size > r->size) {
			out->damaged = 1;
			tail = head;
			break;
		}
		if (head - tail < h.size)
			break; /* not all published yet: next time */
		ring_copy(r, tail, rec, h.size < sizeof(rec) ? h.size : sizeof(rec));
		switch (h.type) {
		case PERF_RECORD_SAMPLE:
			if (h.size < sizeof(h) + 16) {
				out->damaged = 1;
				break;
			}
			memcpy(&out->ip, rec + sizeof(h), 8);
			memcpy(&out->pid, rec + sizeof(h) + 8, 4);
			memcpy(&out->tid, rec + sizeof(h) + 12, 4);
			out->have = 1;
			/* "the content of PERF_SAMPLE_IP points to the actual
			 * instruction that triggered the event" (perf_event.h) */
			out->exact = (h.misc & PERF_RECORD_MISC_EXACT_IP) != 0;
			out->exact_samples += (uint64_t)out->exact;
			out->samples++;
			n++;
			break;
		case PERF_RECORD_LOST:
			if (h.size >= sizeof(h) + 16) {
				uint64_t lost;

				memcpy(&lost, rec + sizeof(h) + 8, 8);
				out->lost += lost;
			} else {
				out->damaged = 1;
			}
			break;
		case PERF_RECORD_THROTTLE:
			out->throttled++;
			break;
		case PERF_RECORD_UNTHROTTLE:
			out->unthrottled++;
			break;
		default:
			out->other++;
			break;
		}
		tail += h.size;
	}
	/* "user space should issue an mb() ... before writing data_tail":
	 * the record reads are done before the kernel may reuse the space. */
	__atomic_store_n(&r->meta->data_tail, tail, __ATOMIC_RELEASE);
	return n;
}
