/* Shadow of a target's mappings (maps.h). A sorted array is enough: targets
 * have hundreds of regions, and lookups happen per fault, not per access. */
#include "maps.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include <locprof/common.h>
#include "common/error.h"

#define PAGE 4096ULL

void lp_pmu_maps_init(struct lp_pmu_maps *m)
{
	memset(m, 0, sizeof(*m));
}

void lp_pmu_maps_release(struct lp_pmu_maps *m)
{
	if (!m)
		return;
	free(m->r);
	memset(m, 0, sizeof(*m));
}

static int insert_at(struct lp_pmu_maps *m, size_t i, uint64_t s, uint64_t e, int prot)
{
	if (m->n == m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 64;
		struct lp_pmu_region *r = realloc(m->r, cap * sizeof(*r));

		if (!r)
			return lp_seterr(LP_ENOMEM, "out of memory");
		m->r = r;
		m->cap = cap;
	}
	memmove(&m->r[i + 1], &m->r[i], (m->n - i) * sizeof(*m->r));
	m->r[i] = (struct lp_pmu_region){ s, e, prot };
	m->n++;
	return 0;
}

/* Make start and end region boundaries, so a range maps to whole regions. */
static int split_at(struct lp_pmu_maps *m, uint64_t a)
{
	for (size_t i = 0; i < m->n; i++) {
		struct lp_pmu_region *r = &m->r[i];

		if (r->start < a && a < r->end) {
			uint64_t e = r->end;

			r->end = a;
			return insert_at(m, i + 1, a, e, r->prot);
		}
		if (r->start >= a)
			break;
	}
	return 0;
}

static uint64_t page_end(uint64_t start, uint64_t len)
{
	return (start + len + PAGE - 1) & ~(PAGE - 1);
}

int lp_pmu_maps_unmap(struct lp_pmu_maps *m, uint64_t start, uint64_t len)
{
	uint64_t end = page_end(start, len);
	size_t i = 0, j = 0;
	int err;

	if ((err = split_at(m, start)) < 0 || (err = split_at(m, end)) < 0)
		return err;
	for (i = 0; i < m->n; i++)
		if (m->r[i].end <= start || m->r[i].start >= end)
			m->r[j++] = m->r[i];
	m->n = j;
	return 0;
}

int lp_pmu_maps_map(struct lp_pmu_maps *m, uint64_t start, uint64_t len, int prot)
{
	uint64_t end = page_end(start, len);
	size_t i;
	int err;

	if (end <= start)
		return 0;
	if ((err = lp_pmu_maps_unmap(m, start, len)) < 0)
		return err;
	for (i = 0; i < m->n && m->r[i].start < start; i++)
		;
	return insert_at(m, i, start, end, prot);
}

int lp_pmu_maps_protect(struct lp_pmu_maps *m, uint64_t start, uint64_t len, int prot)
{
	uint64_t end = page_end(start, len);
	int err;

	if ((err = split_at(m, start)) < 0 || (err = split_at(m, end)) < 0)
		return err;
	for (size_t i = 0; i < m->n; i++)
		if (m->r[i].start >= start && m->r[i].end <= end)
			m->r[i].prot = prot;
	return 0;
}

int lp_pmu_maps_prot(const struct lp_pmu_maps *m, uint64_t addr)
{
	size_t lo = 0, hi = m->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (addr < m->r[mid].start)
			hi = mid;
		else if (addr >= m->r[mid].end)
			lo = mid + 1;
		else
			return m->r[mid].prot;
	}
	return -1;
}

int lp_pmu_maps_load(struct lp_pmu_maps *m, const char *path)
{
	FILE *f = fopen(path, "r");
	char line[4096];
	int err = 0;

	if (!f)
		return lp_seterr_errno("cannot open '%s'", path);
	m->n = 0;
	m->brk = 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long s, e;
		char perms[8];
		int prot = 0;

		if (sscanf(line, "%llx-%llx %7s", &s, &e, perms) != 3) {
			err = lp_seterr(LP_EPARSE, "%s: bad line '%.60s'", path, line);
			break;
		}
		/* Kernel-provided mappings: mprotect refuses or they are shared with
		 * the kernel; they are never protected, so they are not shadowed. */
		if (strstr(line, "[vsyscall]") || strstr(line, "[vdso]") || strstr(line, "[vvar"))
			continue;
		prot |= perms[0] == 'r' ? PROT_READ : 0;
		prot |= perms[1] == 'w' ? PROT_WRITE : 0;
		prot |= perms[2] == 'x' ? PROT_EXEC : 0;
		if (strstr(line, "[heap]"))
			m->brk = e;
		if ((err = insert_at(m, m->n, s, e, prot)) < 0)
			break;
	}
	fclose(f);
	return err;
}

int lp_pmu_maps_syscall(struct lp_pmu_maps *m, long nr, const uint64_t a[6], int64_t ret)
{
	if (ret < 0 && ret > -4096)
		return 0; /* failed calls change nothing */
	switch (nr) {
	case SYS_mmap:
		return lp_pmu_maps_map(m, (uint64_t)ret, a[1], (int)a[2]) < 0 ? -1 : 1;
	case SYS_mprotect:
		return lp_pmu_maps_protect(m, a[0], a[1], (int)a[2]) < 0 ? -1 : 1;
	case SYS_munmap:
		return lp_pmu_maps_unmap(m, a[0], a[1]) < 0 ? -1 : 1;
	case SYS_mremap: {
		int prot = lp_pmu_maps_prot(m, a[0]);
		int err;

		if (prot < 0)
			prot = PROT_READ | PROT_WRITE;
		if ((err = lp_pmu_maps_unmap(m, a[0], a[1])) < 0)
			return err;
		return lp_pmu_maps_map(m, (uint64_t)ret, a[2], prot) < 0 ? -1 : 1;
	}
	case SYS_brk: {
		uint64_t nb = (uint64_t)ret, ob = m->brk;

		m->brk = nb;
		if (!ob || nb == ob)
			return 1;
		/* The heap's pages are whole pages beyond the page holding the
		 * old break; the kernel maps them read-write. */
		if (nb > ob)
			return lp_pmu_maps_map(m, page_end(ob, 0), page_end(nb, 0) - page_end(ob, 0),
					       PROT_READ | PROT_WRITE) < 0 ? -1 : 1;
		return lp_pmu_maps_unmap(m, page_end(nb, 0), page_end(ob, 0) - page_end(nb, 0)) < 0 ? -1 : 1;
	}
	}
	return 0;
}
