/* A program that takes the runtime's descriptor away, as daemons and spawn
 * helpers do: it fills an array, does something to its descriptors above
 * 2, then reads the array in a stride, so that most of its references
 * come after. The runtime must keep recording and never write into the
 * program's own files (docs/runtime.md, "The connection").
 * usage: closefd MODE [FILE]
 *   none     nothing (the reference run)
 *   close    close every descriptor from 3 to the soft limit (a loop)
 *   range    close_range(3, ~0U) (the loop where the kernel has none)
 *   dup      dup2(1, fd) over every open descriptor above 2
 *   reopen   close them all, open FILE (must get 3), write "program\n" to
 *            it at the end
 *   steal    dup2 one end of a socketpair over every other open socket
 *            above 2; a child holds the other end and writes to FILE how
 *            many bytes came through it until the parent's exit: none
 *   threads  two threads read while the main thread closes everything
 * Prints the sum; exits 0, or 2-9 when something of its own went wrong. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

enum { N = 1 << 18, ROUNDS = 5 };
static long *a;
static pthread_barrier_t started, closed;

static long readall(void)
{
	long s = 0;

	for (int r = 0; r < ROUNDS; r++)
		for (long i = 0; i < N; i++)
			s += a[(i * 31) % N];
	return s;
}

static int limit(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > (1 << 20))
		return 1 << 20;
	return (int)rl.rlim_cur;
}

static void close_all(void)
{
	for (int fd = 3, n = limit(); fd < n; fd++)
		close(fd);
}

static void close_range_all(void)
{
#ifdef SYS_close_range
	if (syscall(SYS_close_range, 3u, ~0u, 0u) == 0)
		return;
#endif
	close_all();
}

static int is_socket(int fd)
{
	struct stat st;

	return fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode);
}

static void *worker(void *arg)
{
	long *out = arg;

	*out = a[0]; /* a first reference: the thread connects */
	pthread_barrier_wait(&started);
	pthread_barrier_wait(&closed);
	*out = readall();
	return NULL;
}

static long threads(void)
{
	pthread_t t[2];
	long s[2] = { 0, 0 };

	pthread_barrier_init(&started, NULL, 3);
	pthread_barrier_init(&closed, NULL, 3);
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, worker, &s[i]);
	pthread_barrier_wait(&started);
	usleep(50000); /* the workers' connections are made */
	close_all();
	pthread_barrier_wait(&closed);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	return s[0] == s[1] ? s[0] : -1; /* the same sum as one reader */
}

/* The steal child: the bytes that reach its end of the socketpair until
 * every copy of the parent's end is closed (the parent's exit, after the
 * runtime's last messages), into path. */
static int steal_count(const int *sv, const char *path)
{
	char buf[4096];
	long total = 0;
	ssize_t n;
	FILE *f;

	close(sv[0]);
	while ((n = read(sv[1], buf, sizeof(buf))) > 0 || (n < 0 && errno == EINTR))
		total += n > 0 ? n : 0;
	f = fopen(path, "w");
	if (!f)
		return 7;
	fprintf(f, "%ld\n", total);
	return fclose(f) ? 7 : 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "none";
	int file = -1, sv[2] = { -1, -1 };
	long s;

	a = malloc(N * sizeof(*a));
	if (!a)
		return 2;
	for (long i = 0; i < N; i++)
		a[i] = i;
	usleep(20000); /* a flush or more before the descriptors go */
	if (!strcmp(mode, "close")) {
		close_all();
	} else if (!strcmp(mode, "range")) {
		close_range_all();
	} else if (!strcmp(mode, "dup")) {
		for (int fd = 3, n = limit(); fd < n; fd++)
			if (fcntl(fd, F_GETFD) >= 0)
				dup2(1, fd);
	} else if (!strcmp(mode, "reopen")) {
		if (argc < 3)
			return 3;
		close_range_all();
		file = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (file != 3)
			return 4;
	} else if (!strcmp(mode, "steal")) {
		if (argc < 3 || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
			return 5;
		if (fork() == 0)
			return steal_count(sv, argv[2]);
		close(sv[1]);
		for (int fd = 3, n = limit(); fd < n; fd++)
			if (fd != sv[0] && is_socket(fd))
				dup2(sv[0], fd);
	}
	s = !strcmp(mode, "threads") ? threads() : readall();
	printf("%ld\n", s);
	fflush(stdout);
	if (file >= 0 && (write(file, "program\n", 8) != 8 || close(file) < 0))
		return 6;
	return 0;
}
