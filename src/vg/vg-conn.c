/* The tool's side of the collector protocol (src/lib/collect/protocol.h):
 * one Unix-socket connection per guest thread, blocking sends. Valgrind's
 * 3.19 tool API has no Unix-socket connect, so connect and sendto are raw
 * system calls. Sockets are moved into valgrind's reserved descriptor range
 * (VG_(safe_fd), close-on-exec): the program cannot close or dup2 over them,
 * and an exec'd image does not inherit them. */
#include "vg-tool.h"

#include "pub_tool_libcbase.h"
#include "pub_tool_libcfile.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_libcproc.h"
#include "pub_tool_mallocfree.h"
#include "pub_tool_vkiscnums.h"

ULong lpvg_now_ns(Int clk)
{
	struct vki_timespec ts;

	VG_(clock_gettime)(&ts, clk);
	return (ULong)ts.tv_sec * 1000000000ull + (ULong)ts.tv_nsec;
}

void lpvg_header(struct lp_msg_header *h, UInt type, ULong length, const struct lpvg_thread *t)
{
	h->magic_version = LP_MSG_MAGIC_VERSION;
	h->type = type;
	h->length = (UInt)length;
	h->pid = lpvg_p.pid;
	h->tid = t->ostid;
	h->reserved = 0;
}

static Bool send_all(Int fd, const UChar *p, ULong n)
{
	while (n) {
		SysRes r = VG_(do_syscall)(__NR_sendto, (UWord)fd, (UWord)p, (UWord)n,
					   VKI_MSG_NOSIGNAL, 0, 0, 0, 0);
		if (sr_isError(r)) {
			if (sr_Err(r) == VKI_EINTR)
				continue;
			return False;
		}
		p += sr_Res(r);
		n -= sr_Res(r);
	}
	return True;
}

/* One message in two parts. A broken connection (the collector went away)
 * turns this thread's sending off, never the program. */
void lpvg_send2(struct lpvg_thread *t, const void *a, ULong alen, const void *b, ULong blen)
{
	if (t->fd < 0)
		return;
	if (!send_all(t->fd, a, alen) || (blen && !send_all(t->fd, b, blen))) {
		VG_(close)(t->fd);
		t->fd = -1;
	}
}

void lpvg_connect(struct lpvg_thread *t)
{
	struct vki_sockaddr_un addr;
	struct {
		struct lp_msg_hello m;
		HChar cmd[LPVG_CMDLINE_MAX];
	} *hello;
	Int fd, sfd;
	SysRes r;

	t->fd = -1;
	if (VG_(strlen)(lpvg_o.socket) >= sizeof(addr.sun_path))
		return;
	fd = VG_(socket)(VKI_AF_UNIX, VKI_SOCK_STREAM, 0);
	if (fd < 0)
		return;
	/* Into the reserved range (close-on-exec too); if that range is full,
	 * keep the ordinary descriptor, close-on-exec. */
	sfd = VG_(safe_fd)(fd);
	if (sfd >= 0)
		fd = sfd;
	else
		VG_(fcntl)(fd, VKI_F_SETFD, VKI_FD_CLOEXEC);
	VG_(memset)(&addr, 0, sizeof(addr));
	addr.sun_family = VKI_AF_UNIX;
	VG_(strcpy)(addr.sun_path, lpvg_o.socket);
	do
		r = VG_(do_syscall)(__NR_connect, (UWord)fd, (UWord)&addr, sizeof(addr), 0, 0, 0, 0, 0);
	while (sr_isError(r) && sr_Err(r) == VKI_EINTR);
	if (sr_isError(r)) {
		VG_(close)(fd);
		return;
	}
	t->fd = fd;
	hello = VG_(malloc)("lpvg.hello", sizeof(*hello));
	VG_(memset)(&hello->m, 0, sizeof(hello->m));
	lpvg_header(&hello->m.h, LP_MSG_HELLO, sizeof(hello->m) + lpvg_p.cmdline_len, t);
	hello->m.ppid = lpvg_p.ppid;
	hello->m.thread = t->number;
	hello->m.nonce = lpvg_p.nonce;
	hello->m.mode = (UInt)lpvg_o.mode;
	hello->m.nlines = lpvg_o.nlines;
	for (UInt i = 0; i < LP_MAX_LINE_SIZES; i++)
		hello->m.line_size[i] = i < lpvg_o.nlines ? lpvg_o.line_size[i] : 0;
	hello->m.rate = lpvg_o.rate;
	hello->m.seed = lpvg_o.seed;
	hello->m.start_ns = lpvg_p.start_ns;
	hello->m.backend = LP_BACKEND_VALGRIND;
	hello->m.cmdline_len = lpvg_p.cmdline_len;
	VG_(memcpy)(hello->cmd, lpvg_p.cmdline, lpvg_p.cmdline_len);
	lpvg_send2(t, hello, sizeof(hello->m) + lpvg_p.cmdline_len, NULL, 0);
	VG_(free)(hello);
	lpvg_p.connected_any = True;
}

void lpvg_send_samples(struct lpvg_thread *t)
{
	struct lp_msg_samples m;
	ULong bytes = (ULong)t->nsamples * sizeof(struct lp_msg_sample);

	if (!t->nsamples)
		return;
	lpvg_header(&m.h, LP_MSG_SAMPLES, sizeof(m) + bytes, t);
	m.count = t->nsamples;
	m.level = 0; /* no --samples thinning in this tool */
	lpvg_send2(t, &m, sizeof(m), t->samples, bytes);
	t->nsamples = 0;
}

void lpvg_send_events(struct lpvg_thread *t)
{
	struct lp_msg_refs m;
	ULong bytes = (ULong)t->nevents * sizeof(struct lp_msg_ref);

	if (!t->nevents)
		return;
	lpvg_header(&m.h, lpvg_o.mode == LP_MODE_TRACE ? LP_MSG_REFS : LP_MSG_ALLOCS,
		    sizeof(m) + bytes, t);
	m.count = t->nevents;
	m.pad = 0;
	lpvg_send2(t, &m, sizeof(m), t->events, bytes);
	t->nevents = 0;
}

void lpvg_send_allocs_t(struct lpvg_thread *t, const struct lp_msg_alloc_t *v, UInt n)
{
	struct lp_msg_allocs_t m;
	ULong bytes = (ULong)n * sizeof(*v);

	lpvg_header(&m.h, LP_MSG_ALLOCS_T, sizeof(m) + bytes, t);
	m.count = n;
	m.pad = 0;
	lpvg_send2(t, &m, sizeof(m), v, bytes);
}

void lpvg_send_alloc_sum(struct lpvg_thread *t, UInt flags, ULong allocs, ULong frees, ULong bytes)
{
	struct lp_msg_alloc_sum m;

	lpvg_header(&m.h, LP_MSG_ALLOC_SUM, sizeof(m), t);
	m.flags = flags;
	m.pad = 0;
	m.allocs = allocs;
	m.frees = frees;
	m.bytes = bytes;
	lpvg_send2(t, &m, sizeof(m), NULL, 0);
}

/* /proc/self/maps of the valgrind process: the program's mappings and
 * valgrind's own (the collector keeps executable file mappings; no pc of
 * the program points into valgrind's). Whole lines per piece. */
struct maps_sender {
	struct lpvg_thread *t;
	UInt when;
	Int fd;
};

static int64_t maps_read(void *ctx, char *dst, uint64_t room)
{
	struct maps_sender *ms = ctx;

	return ms->fd < 0 ? 0 : VG_(read)(ms->fd, dst, (Int)room);
}

static void maps_piece(void *ctx, const char *text, uint64_t n, int last)
{
	struct maps_sender *ms = ctx;
	struct lp_msg_maps m;

	lpvg_header(&m.h, LP_MSG_MAPS, sizeof(m) + n, ms->t);
	m.when = ms->when;
	m.last = (uint32_t)last;
	lpvg_send2(ms->t, &m, sizeof(m), text, n);
}

void lpvg_send_maps(struct lpvg_thread *t, UInt when)
{
	enum { CHUNK = 60000 };
	HChar *buf = VG_(malloc)("lpvg.maps", CHUNK + 4096);
	struct maps_sender ms = { .t = t, .when = when };
	SysRes r = VG_(open)("/proc/self/maps", VKI_O_RDONLY, 0);

	ms.fd = sr_isError(r) ? -1 : (Int)sr_Res(r);
	lp_emit_lines(buf, CHUNK, &ms, maps_read, maps_piece);
	if (ms.fd >= 0)
		VG_(close)(ms.fd);
	VG_(free)(buf);
}

static void send_thread(struct lpvg_thread *t, UInt running, ULong refs)
{
	struct lp_msg_thread m;

	VG_(memset)(&m, 0, sizeof(m));
	lpvg_header(&m.h, LP_MSG_THREAD, sizeof(m), t);
	m.thread = t->number;
	m.running = running;
	m.references = refs;
	for (UInt i = 0; i < lpvg_o.nlines; i++)
		m.extra_lines[i] = lpvg_thread_extra(t, i);
	lpvg_send2(t, &m, sizeof(m), NULL, 0);
}

void lpvg_send_thread_end(struct lpvg_thread *t)
{
	send_thread(t, 0, t->final_refs);
}

void lpvg_send_thread_running(struct lpvg_thread *t)
{
	if (lpvg_o.mode == LP_MODE_SAMPLE)
		send_thread(t, 1, lpvg_thread_refs(t));
}

void lpvg_send_bye(struct lpvg_thread *t, Int status, UInt how, ULong refs)
{
	struct lp_msg_bye m;

	lpvg_header(&m.h, LP_MSG_BYE, sizeof(m), t);
	m.status = status;
	m.how = how;
	m.references = refs;
	lpvg_send2(t, &m, sizeof(m), NULL, 0);
}

/* REGION (a region of interest is set): what the thread left out. */
void lpvg_send_region(struct lpvg_thread *t)
{
	struct lp_msg_region m;

	if (!lpvg_roi_set)
		return;
	lpvg_header(&m.h, LP_MSG_REGION, sizeof(m), t);
	m.thread = t->number;
	m.pad = 0;
	m.skipped = lpvg_roi_skipped(t, t->cd);
	m.entries = lpvg_roi_entries();
	lpvg_send2(t, &m, sizeof(m), NULL, 0);
}

/* The thread's ended phase intervals (record --phases). */
void lpvg_send_phases(struct lpvg_thread *t)
{
	struct lp_msg_phases m;
	ULong bytes = (ULong)t->ph.nout * sizeof(struct lp_msg_phase);

	if (!t->ph.nout)
		return;
	lpvg_header(&m.h, LP_MSG_PHASES, sizeof(m) + bytes, t);
	m.count = t->ph.nout;
	m.pad = 0;
	m.interval = lpvg_o.phase_interval;
	lpvg_send2(t, &m, sizeof(m), t->ph.out, bytes);
	t->ph.nout = 0;
}
