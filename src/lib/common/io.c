/* Buffered input with look-ahead, and output written atomically. */
#include "common/io.h"
#include "common/error.h"

#include <locprof/common.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define IN_BUF_SIZE (1u << 20)
#define OUT_BUF_SIZE (1u << 20)

struct lp_in {
	int fd;
	int eof;
	char *name;
	uint8_t *buf;
	size_t cap, pos, len; /* unread bytes are buf[pos, len) */
	uint64_t offset;      /* bytes consumed */
};

int lp_in_open(struct lp_in **out, const char *path)
{
	struct lp_in *in = calloc(1, sizeof(*in));

	if (!in)
		return LP_ENOMEM;
	in->cap = IN_BUF_SIZE;
	in->buf = malloc(in->cap + 1); /* +1 for a NUL after a last line */
	in->name = strdup(strcmp(path, "-") ? path : "<stdin>");
	if (!in->buf || !in->name) {
		lp_in_free(in);
		return LP_ENOMEM;
	}
	if (!strcmp(path, "-")) {
		in->fd = STDIN_FILENO;
	} else {
		in->fd = open(path, O_RDONLY | O_CLOEXEC);
		if (in->fd < 0) {
			int err = lp_seterr_errno("cannot open '%s'", path);
			lp_in_free(in);
			return err;
		}
	}
	*out = in;
	return 0;
}

void lp_in_free(struct lp_in *in)
{
	if (!in)
		return;
	if (in->fd > STDIN_FILENO)
		close(in->fd);
	free(in->buf);
	free(in->name);
	free(in);
}

const char *lp_in_name(const struct lp_in *in)
{
	return in->name;
}

uint64_t lp_in_offset(const struct lp_in *in)
{
	return in->offset;
}

/* Read more input so that at least want bytes are buffered, growing the
 * buffer if needed. Returns bytes available or a negative code. */
static ssize_t fill(struct lp_in *in, size_t want)
{
	if (in->len - in->pos >= want || in->eof)
		return (ssize_t)(in->len - in->pos);
	if (in->pos > 0) {
		memmove(in->buf, in->buf + in->pos, in->len - in->pos);
		in->len -= in->pos;
		in->pos = 0;
	}
	if (want > in->cap) {
		uint8_t *nb = realloc(in->buf, want + 1);
		if (!nb)
			return LP_ENOMEM;
		in->buf = nb;
		in->cap = want;
	}
	while (in->len < want && !in->eof) {
		ssize_t n = read(in->fd, in->buf + in->len, in->cap - in->len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return lp_seterr_errno("cannot read '%s'", in->name);
		}
		if (n == 0)
			in->eof = 1;
		in->len += (size_t)n;
	}
	return (ssize_t)(in->len - in->pos);
}

ssize_t lp_in_peek(struct lp_in *in, const uint8_t **p, size_t want)
{
	ssize_t n = fill(in, want);

	if (n >= 0)
		*p = in->buf + in->pos;
	return n < 0 ? n : (n > (ssize_t)want ? (ssize_t)want : n);
}

void lp_in_consume(struct lp_in *in, size_t n)
{
	if (n > in->len - in->pos)
		n = in->len - in->pos;
	in->pos += n;
	in->offset += n;
}

ssize_t lp_in_read(struct lp_in *in, void *dst, size_t n)
{
	size_t done = 0;

	while (done < n) {
		size_t chunk = n - done < in->cap ? n - done : in->cap;
		ssize_t avail = fill(in, chunk);
		if (avail < 0)
			return avail;
		if (avail == 0)
			break;
		if ((size_t)avail > chunk)
			avail = (ssize_t)chunk;
		memcpy((uint8_t *)dst + done, in->buf + in->pos, (size_t)avail);
		in->pos += (size_t)avail;
		in->offset += (uint64_t)avail;
		done += (size_t)avail;
	}
	return (ssize_t)done;
}

ssize_t lp_in_getline(struct lp_in *in, char **line)
{
	size_t scanned = 0;

	for (;;) {
		uint8_t *start = in->buf + in->pos;
		size_t avail = in->len - in->pos;
		uint8_t *nl = memchr(start + scanned, '\n', avail - scanned);

		if (nl || (in->eof && avail > 0)) {
			size_t len = nl ? (size_t)(nl - start) : avail;
			size_t consumed = nl ? len + 1 : len;
			if (len > 0 && start[len - 1] == '\r')
				len--;
			start[len] = '\0';
			in->pos += consumed;
			in->offset += consumed;
			*line = (char *)start;
			return 1;
		}
		if (in->eof) {
			*line = NULL;
			return 0;
		}
		scanned = avail;
		/* Lines longer than the buffer double it. */
		ssize_t n = fill(in, avail == in->cap ? in->cap * 2 : avail + 1);
		if (n < 0)
			return n;
	}
}

struct lp_out {
	int fd;
	char *path;     /* final name; NULL for stdout */
	char *tmp_path; /* where it is written until closed */
	char *name;     /* for messages */
	char *buf;
	size_t len, cap;
	uint64_t offset;
	int failed;
	int tmp_slot;   /* in tmp_slots, or -1 */
};

/* ---- temporary files ----------------------------------------------------
 * The temporary names of the outputs open in this process, for
 * lp_tmp_remove_all() to unlink from a signal handler: a fixed table of
 * atomic pointers, so that the handler needs no lock and sees either a
 * path or NULL. An output opened while every slot is taken is not
 * listed; lp_tmp_remove_stale() clears its file after a crash. */
#define TMP_SLOTS 256
static char *_Atomic tmp_slots[TMP_SLOTS];
static _Atomic pid_t tmp_owner; /* a forked child must not remove them */

int lp_tmp_track(char *path)
{
	atomic_store(&tmp_owner, getpid());
	for (int i = 0; i < TMP_SLOTS; i++) {
		char *none = NULL;
		if (atomic_compare_exchange_strong(&tmp_slots[i], &none, path))
			return i;
	}
	return -1;
}

void lp_tmp_untrack(int slot)
{
	if (slot >= 0 && slot < TMP_SLOTS)
		atomic_store(&tmp_slots[slot], NULL);
}

static void tmp_unregister(struct lp_out *o)
{
	lp_tmp_untrack(o->tmp_slot);
	o->tmp_slot = -1;
}

void lp_tmp_remove_all(void)
{
	if (atomic_load(&tmp_owner) != getpid())
		return;
	for (int i = 0; i < TMP_SLOTS; i++) {
		char *p = atomic_load(&tmp_slots[i]);
		if (p)
			unlink(p); /* fails on a directory (EISDIR) */
	}
	for (int i = 0; i < TMP_SLOTS; i++) {
		char *p = atomic_load(&tmp_slots[i]);
		if (p)
			rmdir(p);
	}
}

/* "NAME.tmp.PID": the length of NAME and the pid, or 0. */
static size_t tmp_name_parse(const char *entry, pid_t *pid)
{
	const char *t = NULL, *p;
	unsigned long long v = 0;

	for (p = strstr(entry, ".tmp."); p; p = strstr(p + 1, ".tmp."))
		t = p;
	if (!t || t == entry || !t[5])
		return 0;
	for (p = t + 5; *p; p++) {
		if (*p < '0' || *p > '9' || v > (1ull << 32))
			return 0;
		v = v * 10 + (unsigned)(*p - '0');
	}
	if (!v || v > INT32_MAX)
		return 0;
	*pid = (pid_t)v;
	return (size_t)(t - entry);
}

int lp_tmp_remove_stale(const char *dir, int (*match)(const char *name, void *ctx), void *ctx)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int removed = 0;

	if (!d)
		return lp_seterr_errno("cannot read directory '%s'", dir);
	while ((e = readdir(d))) {
		char name[256], path[4096];
		pid_t pid;
		size_t n = tmp_name_parse(e->d_name, &pid);

		if (!n || n >= sizeof(name) || pid == getpid())
			continue;
		memcpy(name, e->d_name, n);
		name[n] = 0;
		if (match && !match(name, ctx))
			continue;
		/* EPERM: the process exists (another user's); only ESRCH is dead */
		if (kill(pid, 0) == 0 || errno != ESRCH)
			continue;
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) < sizeof(path) &&
		    unlink(path) == 0)
			removed++;
	}
	closedir(d);
	return removed;
}

static int same_name(const char *name, void *base)
{
	return !strcmp(name, base);
}

/* PATH.tmp.PID of a process that is gone: a writer killed by SIGKILL, which
 * no handler sees. Best effort: an unreadable directory fails the open. */
static void remove_stale_temporaries(const char *path)
{
	const char *slash = strrchr(path, '/');
	char dir[4096];

	if (!slash) {
		lp_tmp_remove_stale(".", same_name, (void *)path);
		return;
	}
	if (!slash[1] || (size_t)(slash - path) >= sizeof(dir))
		return;
	snprintf(dir, sizeof(dir), "%.*s", slash == path ? 1 : (int)(slash - path), path);
	lp_tmp_remove_stale(dir, same_name, (void *)(slash + 1));
}

int lp_out_open(struct lp_out **out, const char *path)
{
	struct lp_out *o = calloc(1, sizeof(*o));
	int err;

	if (!o)
		return LP_ENOMEM;
	o->tmp_slot = -1;
	o->cap = OUT_BUF_SIZE;
	o->buf = malloc(o->cap);
	o->name = strdup(strcmp(path, "-") ? path : "<stdout>");
	if (!o->buf || !o->name) {
		err = LP_ENOMEM;
		goto out_free;
	}
	if (!strcmp(path, "-")) {
		o->fd = STDOUT_FILENO;
		*out = o;
		return 0;
	}
	remove_stale_temporaries(path);
	o->path = strdup(path);
	if (!o->path || asprintf(&o->tmp_path, "%s.tmp.%d", path, (int)getpid()) < 0) {
		o->tmp_path = NULL;
		err = LP_ENOMEM;
		goto out_free;
	}
	o->fd = open(o->tmp_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (o->fd < 0) {
		err = lp_seterr_errno("cannot create '%s'", path);
		goto out_free;
	}
	o->tmp_slot = lp_tmp_track(o->tmp_path);
	*out = o;
	return 0;

out_free:
	free(o->tmp_path);
	free(o->path);
	free(o->name);
	free(o->buf);
	free(o);
	return err;
}

static int flush(struct lp_out *o)
{
	size_t done = 0;

	if (o->failed)
		return LP_EIO;
	while (done < o->len) {
		ssize_t n = write(o->fd, o->buf + done, o->len - done);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			o->failed = 1;
			return lp_seterr_errno("cannot write '%s'", o->name);
		}
		done += (size_t)n;
	}
	o->len = 0;
	return 0;
}

char *lp_out_reserve(struct lp_out *o, size_t n)
{
	if (o->cap - o->len < n) {
		if (flush(o) < 0)
			return NULL;
		if (n > o->cap) {
			char *nb = realloc(o->buf, n);
			if (!nb)
				return NULL;
			o->buf = nb;
			o->cap = n;
		}
	}
	return o->buf + o->len;
}

void lp_out_commit(struct lp_out *o, size_t used)
{
	o->len += used;
	o->offset += used;
}

int lp_out_write(struct lp_out *o, const void *src, size_t n)
{
	const char *p = src;

	while (n > 0) {
		size_t room = o->cap - o->len;
		if (room == 0) {
			int err = flush(o);
			if (err < 0)
				return err;
			continue;
		}
		size_t chunk = n < room ? n : room;
		memcpy(o->buf + o->len, p, chunk);
		lp_out_commit(o, chunk);
		p += chunk;
		n -= chunk;
	}
	return o->failed ? LP_EIO : 0;
}

int lp_out_printf(struct lp_out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	for (size_t want = 256;; want = (size_t)n + 1) {
		char *dst = lp_out_reserve(o, want);
		if (!dst)
			return o->failed ? LP_EIO : LP_ENOMEM;
		va_start(ap, fmt);
		n = vsnprintf(dst, o->cap - o->len, fmt, ap);
		va_end(ap);
		if (n < 0)
			return lp_seterr(LP_EINVAL, "bad format string");
		if ((size_t)n < o->cap - o->len) {
			lp_out_commit(o, (size_t)n);
			return 0;
		}
	}
}

uint64_t lp_out_offset(const struct lp_out *o)
{
	return o->offset;
}

const char *lp_out_name(const struct lp_out *o)
{
	return o->name;
}

static void out_free(struct lp_out *o)
{
	tmp_unregister(o);
	free(o->tmp_path);
	free(o->path);
	free(o->name);
	free(o->buf);
	free(o);
}

int lp_out_close(struct lp_out *o)
{
	int err;

	if (!o)
		return 0;
	err = flush(o);
	if (o->fd != STDOUT_FILENO) {
		if (close(o->fd) < 0 && !err)
			err = lp_seterr_errno("cannot write '%s'", o->name);
		if (!err && rename(o->tmp_path, o->path) < 0)
			err = lp_seterr_errno("cannot rename '%s' to '%s'", o->tmp_path, o->path);
		if (err)
			unlink(o->tmp_path);
	}
	out_free(o);
	return err;
}

void lp_out_abort(struct lp_out *o)
{
	if (!o)
		return;
	if (o->fd != STDOUT_FILENO) {
		close(o->fd);
		unlink(o->tmp_path);
	} else {
		flush(o);
	}
	out_free(o);
}
