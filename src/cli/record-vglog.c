/* Valgrind's own messages under `record --backend valgrind`: valgrind
 * writes them to a pipe (--log-fd), and a thread passes each line on to
 * locprof's stderr as it comes, but one kind. Valgrind 3.19 cannot read
 * the DWARF 5 that clang 14 writes by default (-g) and says
 * "### unhandled dwarf2 abbrev form code 0x25" for every compile unit of
 * every module, hundreds of lines for a large program, none of them about
 * the run: `report` reads those modules' lines with libdw itself. They are
 * counted and said once at the end. The thread drains the pipe while the
 * program runs, so valgrind never blocks on a full pipe. */
#include "cli.h"
#include "record.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#define DWARF5_NOISE "### unhandled dwarf2 abbrev form code"

/* How long the thread waits for the pipe's last writers after the run
 * (a daemon the program left holds the pipe open). */
#define VGLOG_LINGER_MS 200

struct vglog {
	int rfd, wfd;
	pthread_t thread;
	atomic_int stop;
	unsigned long hidden;
	char line[4096];
	size_t len;
};

static struct vglog vglog = { .rfd = -1, .wfd = -1 };

static void emit(struct vglog *v)
{
	if (v->len && strstr(v->line, DWARF5_NOISE) == v->line)
		v->hidden++;
	else if (v->len && write(STDERR_FILENO, v->line, v->len) < 0)
		return; /* stderr gone: nothing to tell anyone */
	v->len = 0;
}

/* Bytes read from the pipe, cut into lines (a line longer than the buffer
 * goes on in pieces). */
static void take(struct vglog *v, const char *buf, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		v->line[v->len++] = buf[i];
		if (buf[i] == '\n' || v->len == sizeof(v->line) - 1) {
			v->line[v->len] = 0;
			emit(v);
		}
	}
}

static void *pump(void *arg)
{
	struct vglog *v = arg;
	struct pollfd p = { .fd = v->rfd, .events = POLLIN };
	char buf[4096];

	for (;;) {
		int r = poll(&p, 1, atomic_load(&v->stop) ? VGLOG_LINGER_MS : 100);
		ssize_t n;

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			if (r < 0 || atomic_load(&v->stop))
				break;
			continue;
		}
		n = read(v->rfd, buf, sizeof(buf));
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0)
			break; /* every writer is gone */
		take(v, buf, (size_t)n);
	}
	v->line[v->len] = 0;
	emit(v);
	return NULL;
}

int record_vglog_start(void)
{
	int fds[2];

	if (pipe(fds) < 0)
		return -1;
	/* the read end stays with locprof; the write end goes to valgrind */
	vglog.rfd = fds[0];
	vglog.wfd = fds[1];
	if (fcntl(fds[0], F_SETFD, FD_CLOEXEC) < 0 || pthread_create(&vglog.thread, NULL, pump, &vglog) != 0) {
		close(fds[0]);
		close(fds[1]);
		vglog.rfd = vglog.wfd = -1;
		return -1;
	}
	return vglog.wfd;
}

void record_vglog_finish(int quiet)
{
	if (vglog.wfd < 0)
		return;
	close(vglog.wfd);
	vglog.wfd = -1;
	atomic_store(&vglog.stop, 1);
	pthread_join(vglog.thread, NULL);
	close(vglog.rfd);
	vglog.rfd = -1;
	if (vglog.hidden && !quiet)
		cli_note("valgrind could not read the DWARF 5 debug information of %lu compile unit%s (clang 14's "
			 "default -g; its messages not shown): report reads their source lines itself",
			 vglog.hidden, vglog.hidden == 1 ? "" : "s");
}
