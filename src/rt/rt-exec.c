/* exec: the image's data would otherwise be lost with it (up to a flush
 * interval of samples and events, and the live watches). The runtime
 * defines the exec family so that, when the exec will probably succeed
 * (the file, or a PATH candidate, is executable), the image is finished
 * first, as at exit: every thread's buffers, live watches as dangling
 * samples, the exit-time mappings and a BYE saying "exec". Then the real
 * call runs (the system call, or libc's own function for the PATH and
 * variadic forms, found with dlsym(RTLD_NEXT)). If it fails after all, the
 * process goes on without the runtime. A vfork child shares the parent's
 * state and is left alone (lp_rt_process_finish checks the pid). */
#include "rt.h"

#include "collect/protocol.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

extern char **environ;

static int rt_executable(const char *path)
{
	struct stat st;

	return access(path, X_OK) == 0 && stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* Would execvp find something to run? */
static int rt_path_executable(const char *file)
{
	const char *path = getenv("PATH");
	char buf[PATH_MAX];

	if (!*file)
		return 0;
	if (strchr(file, '/'))
		return rt_executable(file);
	if (!path)
		path = "/bin:/usr/bin";
	while (1) {
		const char *end = strchr(path, ':');
		size_t len = end ? (size_t)(end - path) : strlen(path);
		if (len + strlen(file) + 2 <= sizeof(buf)) {
			memcpy(buf, len ? path : ".", len ? len : 1);
			buf[len ? len : 1] = '/';
			strcpy(buf + (len ? len : 1) + 1, file);
			if (rt_executable(buf))
				return 1;
		}
		if (!end)
			return 0;
		path = end + 1;
	}
}

static void rt_before_exec(int likely)
{
	int saved = errno;

	if (likely)
		lp_rt_process_finish(0, LP_BYE_EXEC);
	errno = saved;
}

int execve(const char *path, char *const argv[], char *const envp[])
{
	rt_before_exec(rt_executable(path));
	return (int)syscall(SYS_execve, path, argv, envp);
}

int execveat(int dirfd, const char *path, char *const argv[], char *const envp[], int flags)
{
	rt_before_exec(1);
	return (int)syscall(SYS_execveat, dirfd, path, argv, envp, flags);
}

int fexecve(int fd, char *const argv[], char *const envp[])
{
	rt_before_exec(1);
	return (int)syscall(SYS_execveat, fd, "", argv, envp, AT_EMPTY_PATH);
}

int execv(const char *path, char *const argv[])
{
	return execve(path, argv, environ);
}

typedef int (*rt_execvpe_fn)(const char *, char *const[], char *const[]);

int execvpe(const char *file, char *const argv[], char *const envp[])
{
	rt_execvpe_fn real = (rt_execvpe_fn)dlsym(RTLD_NEXT, "execvpe");

	rt_before_exec(rt_path_executable(file));
	if (!real) {
		errno = ENOSYS;
		return -1;
	}
	return real(file, argv, envp);
}

int execvp(const char *file, char *const argv[])
{
	return execvpe(file, argv, environ);
}

/* The variadic forms: argv on the stack (alloca, so a macro, not a
 * function), as glibc does it; then exec_fn(target, argv, envp). */
#define RT_EXEC_LIST(exec_fn, target, first, want_envp)                      \
	do {                                                                 \
		char **argv, **envp = environ;                               \
		size_t n = 1;                                                \
		va_list ap, cp;                                              \
		va_start(ap, first);                                         \
		va_copy(cp, ap);                                             \
		while (va_arg(cp, char *))                                   \
			n++;                                                 \
		va_end(cp);                                                  \
		argv = alloca((n + 1) * sizeof(char *));                     \
		argv[0] = (char *)(first);                                   \
		for (size_t i = 1; i <= n; i++)                              \
			argv[i] = va_arg(ap, char *); /* argv[n]: the NULL */ \
		if (want_envp)                                               \
			envp = va_arg(ap, char **);                          \
		va_end(ap);                                                  \
		return exec_fn(target, argv, envp);                          \
	} while (0)

int execl(const char *path, const char *arg, ...)
{
	RT_EXEC_LIST(execve, path, arg, 0);
}

int execle(const char *path, const char *arg, ...)
{
	RT_EXEC_LIST(execve, path, arg, 1);
}

int execlp(const char *file, const char *arg, ...)
{
	RT_EXEC_LIST(execvpe, file, arg, 0);
}
