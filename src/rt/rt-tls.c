/* Where the calling thread's thread-local storage lies: one segment per
 * module with a TLS segment (the executable's _Thread_local and __thread
 * variables, OpenMP threadprivate ones, a library's own), sent when the
 * thread starts so that `report` names a sampled address in it by the
 * module's TLS symbol (docs/runtime.md, "Thread-local storage").
 * glibc's dl_iterate_phdr gives each module's PT_TLS segment and, since
 * glibc 2.28, the calling thread's instance of it (dlpi_tls_data; NULL
 * for a dlopen'ed module whose TLS the thread has not touched yet: left
 * out). It allocates nothing. */
#include "rt.h"

#include <link.h>
#include <stddef.h>

struct tls_walk {
	struct lp_rt_tls *v;
	unsigned n, max;
};

static int tls_module(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct tls_walk *w = arg;

	if (size < offsetof(struct dl_phdr_info, dlpi_tls_data) + sizeof(info->dlpi_tls_data))
		return 1; /* a glibc without dlpi_tls_data: nothing to say */
	for (int i = 0; i < info->dlpi_phnum && w->n < w->max; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type != PT_TLS || !info->dlpi_tls_data || !ph->p_memsz)
			continue;
		w->v[w->n++] = (struct lp_rt_tls){ .start = (uint64_t)info->dlpi_tls_data,
						   .size = ph->p_memsz,
						   .image = info->dlpi_addr + ph->p_vaddr };
	}
	return w->n == w->max;
}

unsigned lp_rt_tls_segments(struct lp_rt_tls *v, unsigned max)
{
	struct tls_walk w = { v, 0, max };

	dl_iterate_phdr(tls_module, &w);
	return w.n;
}
