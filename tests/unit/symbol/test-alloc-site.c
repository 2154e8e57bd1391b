/* Naming a heap block by its allocation's call stack
 * (lp_symbols_alloc_site): stacks made of real pcs of this process (this
 * test's functions, libc's malloc, libdw, and libgomp loaded with dlopen),
 * symbolised from /proc/self/maps as a profile's mappings are. */
#include "lp-test.h"
#include "self-maps.h"

#include <locprof/symbol.h>

#include <dlfcn.h>
#include <elfutils/libdwfl.h>

/* the program's own allocating function */
static __attribute__((noinline, used)) void *make_table(size_t n)
{
	void *p = malloc(n);

	__asm__ volatile("" ::: "memory");
	return p;
}

static uint64_t in(const void *fn)
{
	return (uint64_t)(uintptr_t)fn + 4; /* a return address inside it */
}

/* name is fn, or fn (file:line) */
static int is_fn(const char *name, const char *fn)
{
	size_t n = strlen(fn);

	return !strncmp(name, fn, n) && (!name[n] || !strncmp(name + n, " (", 2));
}

static void name_of(struct lp_symbols *s, const uint64_t *f, unsigned n, char *buf, size_t len)
{
	struct lp_alloc_site site;

	lp_symbols_alloc_site(s, f, n, &site);
	lp_alloc_site_format(&site, 0, buf, len);
}

static void test_alloc_site(void **state)
{
	void *gomp = dlopen("libgomp.so.1", RTLD_NOW);
	void *gomp_fn = gomp ? dlsym(gomp, "omp_get_thread_num") : NULL;
	struct lp_mappings maps;
	struct lp_symbols *s;
	char name[256];

	(void)state;
	lp_test_self_maps(&maps, 1);
	assert_int_equal(lp_symbols_new(&s, &maps, NULL), 0);

	/* the program's function, called directly or through malloc */
	uint64_t direct[] = { in(make_table), in(test_alloc_site) };
	name_of(s, direct, 2, name, sizeof(name));
	assert_true(is_fn(name, "make_table"));
	uint64_t via_libc[] = { in(malloc), in(calloc), in(make_table) };
	name_of(s, via_libc, 3, name, sizeof(name));
	assert_true(is_fn(name, "make_table"));

	/* a library that is no runtime names the block by file and symbol */
	uint64_t in_libdw[] = { in(malloc), in(dwfl_begin), in(make_table) };
	name_of(s, in_libdw, 3, name, sizeof(name));
	assert_true(!strncmp(name, "libdw", 5) && strstr(name, ".so") && strstr(name, ":dwfl_begin"));

	/* libgomp is a runtime: skipped for the program's function, and the
	 * name when nothing else is there */
	if (gomp_fn) {
		uint64_t worker[] = { in(malloc), in(gomp_fn), in(make_table) };
		name_of(s, worker, 3, name, sizeof(name));
		assert_true(is_fn(name, "make_table"));
		uint64_t only_gomp[] = { in(malloc), in(gomp_fn) };
		name_of(s, only_gomp, 2, name, sizeof(name));
		assert_true(!strncmp(name, "libgomp.so.1", 12) && strstr(name, ":omp_get_thread_num"));
	}

	/* the allocator alone: no name, the call site's address, in its
	 * module as a pc without a function is shown ("libc.so.6+0x...";
	 * under AddressSanitizer malloc is libasan's) */
	uint64_t only_libc[] = { in(malloc) };
	struct lp_alloc_site site;
	assert_int_equal(lp_symbols_alloc_site(s, only_libc, 1, &site), 0);
	assert_true(site.pc == only_libc[0] && !site.function);
	lp_alloc_site_format(&site, 0, name, sizeof(name));
	assert_true(strstr(name, ".so") && strstr(name, "+0x") && !strchr(name, ':'));
	/* the frames tried do not name it: the call site does, not the
	 * outermost frame (libc's allocator twice, then a pc outside every
	 * module) */
	uint64_t libc_then_nothing[] = { in(malloc), in(calloc), 0x10 };
	assert_int_equal(lp_symbols_alloc_site(s, libc_then_nothing, 3, &site), 0);
	assert_true(site.pc == libc_then_nothing[0] && !site.function);

	/* no symbols at all */
	assert_int_equal(lp_symbols_alloc_site(NULL, direct, 2, &site), 0);
	lp_alloc_site_format(&site, 0, name, sizeof(name));
	assert_true(!strncmp(name, "0x", 2));
	free(make_table(16));
	lp_symbols_free(s);
	lp_mappings_release(&maps);
	/* libgomp stays loaded: what its start-up allocated stays reachable
	 * (unloaded, LeakSanitizer reports it) */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_alloc_site),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
