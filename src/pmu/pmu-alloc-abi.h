/* How the pmu backend's allocation interposer (pmu-alloc-preload.c)
 * reports an event to the supervisor (alloc-events.c): a system call of
 * number LP_PMU_ALLOC_SYSCALL, which no kernel has (it answers ENOSYS),
 * with the event in its argument registers:
 *   rdi  LP_PMU_ALLOC_EV_ALLOC or LP_PMU_ALLOC_EV_FREE
 *   rsi  the block's address
 *   rdx  its size in bytes (0 for a free)
 *   r10  the call site: the return address into the allocation's caller
 * The call stack above the call site is unwound by the supervisor from the
 * thread's registers and stack at that stop. Freestanding: the interposer
 * includes it. */
#ifndef LP_PMU_ALLOC_ABI_H
#define LP_PMU_ALLOC_ABI_H

#define LP_PMU_ALLOC_SYSCALL 0x1c50a11cL /* far above any system call number; bit 30 (x32) clear */
#define LP_PMU_ALLOC_EV_ALLOC 2 /* = LP_EV_ALLOC */
#define LP_PMU_ALLOC_EV_FREE 3  /* = LP_EV_FREE */

#endif
