/* _exit and _Exit end the process without exit handlers, so the runtime
 * defines them to send its data first (docs/runtime.md). */
#include "rt.h"

#include "collect/protocol.h"

#include <sys/syscall.h>
#include <unistd.h>

void _exit(int status)
{
	lp_rt_process_finish(status & 0xff, LP_BYE_EXIT);
	for (;;)
		syscall(SYS_exit_group, status);
}

void _Exit(int status)
{
	_exit(status);
}
