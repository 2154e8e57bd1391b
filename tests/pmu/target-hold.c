/* Threads and a page held open for a system call (docs/pmu.md, "Processes
 * and threads"): one thread makes futex waits whose word is on a watched
 * page (32 that return at once, then one that blocks), so the supervisor gives the page the target's permissions
 * for the call (the kernel reads the word); meanwhile the main thread
 * keeps hammering two other lines of that page. Their reuses do not fault
 * and must still be seen (with the step counter: from the decoding). Line
 * d is touched only before and after, so that a watch on it keeps the
 * page watched all along. */
#include <linux/futex.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

static struct {
	long a[8]; /* line 0 */
	long b[8]; /* line 1 */
	int word;  /* line 2: the futex word */
	char pad[60];
	long d[8]; /* line 4 */
} __attribute__((aligned(4096))) page;

static void *waiter(void *arg)
{
	/* Short holds first (the word is never 2: EAGAIN once the kernel has
	 * read it, even when main has already set it to 1; waiting for 1
	 * there blocked for good), then one that lasts until main wakes us. */
	for (int i = 0; i < 32; i++)
		syscall(SYS_futex, &page.word, FUTEX_WAIT, 2, NULL, NULL, 0);
	while (__atomic_load_n(&page.word, __ATOMIC_ACQUIRE) == 0)
		syscall(SYS_futex, &page.word, FUTEX_WAIT, 0, NULL, NULL, 0);
	return NULL;
}

int main(void)
{
	pthread_t th;
	long s = 0;

	for (int r = 0; r < 64; r++)
		page.d[r & 7] += r;
	pthread_create(&th, NULL, waiter, NULL);
	for (int r = 0; r < 200; r++) {
		page.a[r & 7] += r;
		s += page.b[(r * 3) & 7];
		page.b[r & 7] ^= r;
	}
	__atomic_store_n(&page.word, 1, __ATOMIC_RELEASE);
	syscall(SYS_futex, &page.word, FUTEX_WAKE, 1, NULL, NULL, 0);
	pthread_join(th, NULL);
	printf("hold %ld %ld %ld\n", page.a[0], s, page.d[7]);
	return 0;
}
