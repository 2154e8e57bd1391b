/* A thread's connection to the collector, as a descriptor the program may
 * close or reuse (docs/runtime.md, "The connection"). The runtime shares
 * the program's descriptor table: daemons and spawn helpers close every
 * descriptor above 2 (a loop, closefrom(), close_range()), others dup2()
 * over numbers they think free. Three rules keep the profile and the
 * program's files safe:
 *
 *  - the socket lives on a high descriptor (F_DUPFD_CLOEXEC near the
 *    RLIMIT_NOFILE soft limit, at most RT_FD_TOP), so the program's own
 *    opens and dup2()s of low numbers never meet it, and the program gets
 *    the same descriptor numbers it would get unrecorded;
 *  - before each message the descriptor must still be the socket made
 *    here (st_dev and st_ino from fstat, kept at connect): one fstat per
 *    message, at most a few per flush interval;
 *  - a descriptor that is not ours any more is never written to or closed:
 *    the caller connects again (a new HELLO of the same thread) and sends
 *    the message whole there.
 *
 * Everything here is a system call: async-signal-safe, no malloc. Each
 * thread's connection is used under that thread's busy flag (rt-core.c),
 * so no lock is taken here.
 */
#include "rt-thread.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

enum {
	/* The highest descriptor used, below the soft limit: a soft limit
	 * of 2^20 (common in containers) would otherwise grow the kernel's
	 * descriptor table of every recorded process to 8 MiB. */
	RT_FD_TOP = 4096,
	/* The runtime's range: the top RT_FD_SPREAD numbers below the top
	 * (each thread has a connection), or the upper half of a small limit. */
	RT_FD_SPREAD = 256,
};

/* fd moved into the runtime's range, close-on-exec; the ordinary
 * descriptor when the range is full (still checked before each send). */
static int rt_conn_high(int fd)
{
	struct rlimit rl;
	int top = RT_FD_TOP, base, nfd;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < (rlim_t)top)
		top = (int)rl.rlim_cur;
	base = top - (RT_FD_SPREAD < top / 2 ? RT_FD_SPREAD : top / 2);
	if (base <= fd)
		return fd;
	nfd = fcntl(fd, F_DUPFD_CLOEXEC, base);
	if (nfd < 0)
		return fd;
	close(fd);
	return nfd;
}

int lp_rt_conn_open(struct lp_rt_conn *c, const struct sockaddr_un *addr)
{
	struct stat st;
	int fd;

	c->fd = -1;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		/* out of descriptors: perhaps not at the next flush */
		if (errno != EMFILE && errno != ENFILE && errno != ENOBUFS && errno != ENOMEM)
			c->broken = 1;
		return -1;
	}
	fd = rt_conn_high(fd);
	while (connect(fd, (const struct sockaddr *)addr, sizeof(*addr)) < 0) {
		if (errno == EINTR)
			continue;
		close(fd);
		c->broken = 1; /* the collector is gone: no more tries */
		return -1;
	}
	if (fstat(fd, &st) < 0) {
		close(fd);
		return -1;
	}
	c->dev = (uint64_t)st.st_dev;
	c->ino = (uint64_t)st.st_ino;
	c->fd = fd;
	return 0;
}

/* Socket inode numbers come from a kernel counter, so a socket made after
 * ours was closed has another one. */
int lp_rt_conn_ours(struct lp_rt_conn *c)
{
	struct stat st;

	if (c->fd < 0)
		return 0;
	if (fstat(c->fd, &st) == 0 && S_ISSOCK(st.st_mode) && (uint64_t)st.st_dev == c->dev &&
	    (uint64_t)st.st_ino == c->ino)
		return 1;
	/* closed or replaced by the program: its descriptor now, not ours */
	c->fd = -1;
	return 0;
}

int lp_rt_conn_send(struct lp_rt_conn *c, struct iovec *iov, size_t niov)
{
	struct msghdr m;
	ssize_t n;

	memset(&m, 0, sizeof(m));
	m.msg_iov = iov;
	m.msg_iovlen = niov;
	while (m.msg_iovlen) {
		/* Checked again before each piece: a partial send (a signal)
		 * leaves a window in which another thread may close and
		 * reuse the number. */
		if (!lp_rt_conn_ours(c))
			return LP_RT_CONN_GONE;
		n = sendmsg(c->fd, &m, MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EBADF || errno == ENOTSOCK || !lp_rt_conn_ours(c)) {
				/* replaced between the check and the call */
				c->fd = -1;
				return LP_RT_CONN_GONE;
			}
			/* The collector went away: this thread stops sending,
			 * the program goes on. */
			lp_rt_conn_close(c);
			c->broken = 1;
			return LP_RT_CONN_BROKEN;
		}
		while (m.msg_iovlen && (size_t)n >= m.msg_iov[0].iov_len) {
			n -= (ssize_t)m.msg_iov[0].iov_len;
			m.msg_iov++;
			m.msg_iovlen--;
		}
		if (m.msg_iovlen) {
			m.msg_iov[0].iov_base = (char *)m.msg_iov[0].iov_base + n;
			m.msg_iov[0].iov_len -= (size_t)n;
		}
	}
	return 0;
}

void lp_rt_conn_close(struct lp_rt_conn *c)
{
	if (lp_rt_conn_ours(c))
		close(c->fd);
	c->fd = -1;
}
