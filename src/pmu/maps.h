/* The supervisor's shadow of a target's mappings and page permissions.
 *
 * Page-protection watchpoints change permissions behind the target's back,
 * so the original permissions must be known without asking the kernel on
 * every fault (there is no system call that reads them; /proc/PID/maps is
 * too slow to parse per fault, thesis §3.6). The shadow is read from
 * /proc/PID/maps at start and after exec, then kept exact by replaying the
 * target's mmap, mprotect, munmap, mremap and brk results on it. */
#ifndef LP_PMU_MAPS_H
#define LP_PMU_MAPS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct lp_pmu_region {
	uint64_t start, end; /* [start, end), page aligned */
	int prot;            /* PROT_READ | PROT_WRITE | PROT_EXEC as the target set it */
};

struct lp_pmu_maps {
	struct lp_pmu_region *r; /* sorted, disjoint */
	size_t n, cap;
	uint64_t brk; /* current program break, 0 until known */
};

void lp_pmu_maps_init(struct lp_pmu_maps *m);
void lp_pmu_maps_release(struct lp_pmu_maps *m);

/* Replace the shadow with the content of a maps file (/proc/PID/maps). */
int lp_pmu_maps_load(struct lp_pmu_maps *m, const char *path);

/* The target's permissions at addr, or -1 when nothing is mapped there. */
int lp_pmu_maps_prot(const struct lp_pmu_maps *m, uint64_t addr);

/* mmap/mprotect/munmap semantics on [start, start+len) (len rounded up to
 * pages): map replaces, protect changes only what is mapped, unmap removes. */
int lp_pmu_maps_map(struct lp_pmu_maps *m, uint64_t start, uint64_t len, int prot);
int lp_pmu_maps_protect(struct lp_pmu_maps *m, uint64_t start, uint64_t len, int prot);
int lp_pmu_maps_unmap(struct lp_pmu_maps *m, uint64_t start, uint64_t len);

/* Replay a finished system call: nr and args as at entry, ret its result.
 * Returns 1 when the call may have changed the mappings and was applied,
 * 0 when it does not concern mappings, negative on error. */
int lp_pmu_maps_syscall(struct lp_pmu_maps *m, long nr, const uint64_t args[6], int64_t ret);

#endif
