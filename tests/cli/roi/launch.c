/* For test-roi.sh: runs its own kernel() (for --start-at kernel), then
 * execs the program named by its arguments, which must be recorded whole:
 * the region was set for this program, not for that one. */
#include <unistd.h>

static volatile int sink;

__attribute__((noinline)) void kernel(void)
{
	for (int i = 0; i < 100000; i++)
		sink += i;
}

int main(int argc, char **argv)
{
	kernel();
	if (argc > 1)
		execv(argv[1], argv + 1);
	return 0;
}
