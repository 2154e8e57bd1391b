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

/* a wrapper of the program's own, by its name */
static __attribute__((noinline, used)) void *proj_xmalloc(size_t n)
{
	void *p = malloc(n);

	__asm__ volatile("" ::: "memory");
	return p;
}

/* two of the program's functions that call it (not a tail call, and
 * not the same code, so that each keeps its own frame) */
static __attribute__((noinline, used)) void *make_list(size_t n)
{
	void *p = proj_xmalloc(n * 2);

	__asm__ volatile("" ::: "memory");
	return p;
}

static __attribute__((noinline, used)) void *make_tree(size_t n)
{
	void *p = proj_xmalloc(n * 3);

	__asm__ volatile("" ::: "memory");
	return p;
}

/* a function of the program that allocates two blocks, each on a line
 * of its own, through take_two(), which keeps its calls' return
 * addresses (the frames a stack would hold) */
static uint64_t two_sites[2];
static int two_calls;

static __attribute__((noinline, used)) void *take_two(size_t n)
{
	void *p = malloc(n);

	two_sites[two_calls++ & 1] = (uint64_t)(uintptr_t)__builtin_return_address(0);
	__asm__ volatile("" ::: "memory");
	return p;
}

static __attribute__((noinline, used)) void alloc_two(void **a, void **b)
{
	*a = take_two(8);
	*b = take_two(16);
}

/* the program's code around them */
static __attribute__((noinline, used)) void *build_all(size_t n)
{
	void *a = make_list(n), *b = make_tree(n);

	free(a);
	return b;
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

/* The program's own wrappers: a function named like one is looked
 * through where the profile's stacks reach it from several call sites,
 * not where from one; one the user names, everywhere. */
/* The block of stack f[0, n) is named by function fn. */
static void expect_named(struct lp_symbols *s, const uint64_t *f, unsigned n, const char *fn)
{
	char name[256];

	name_of(s, f, n, name, sizeof(name));
	if (!is_fn(name, fn))
		fail_msg("named '%s', not by %s", name, fn);
}

static void test_program_wrappers(void **state)
{
	struct lp_mappings maps;
	struct lp_symbols *s;

	(void)state;
	lp_test_self_maps(&maps, 1);
	assert_int_equal(lp_symbols_new(&s, &maps, NULL), 0);
	uint64_t from_list[] = { in(malloc), in(proj_xmalloc), in(make_list), in(build_all) };
	uint64_t from_tree[] = { in(malloc), in(proj_xmalloc), in(make_tree), in(build_all) };

	/* no stacks told: the wrapper names the block, as before */
	expect_named(s, from_list, 4, "proj_xmalloc");
	/* one caller, and the function's only frame: its caller names */
	assert_int_equal(lp_symbols_alloc_stack(s, from_list, 4), 0);
	assert_int_equal(lp_symbols_alloc_stack(s, from_list, 4), 0);
	expect_named(s, from_list, 4, "make_list");
	/* two callers: each caller names its blocks */
	assert_int_equal(lp_symbols_alloc_stack(s, from_tree, 4), 0);
	expect_named(s, from_list, 4, "make_list");
	expect_named(s, from_tree, 4, "make_tree");
	/* a wrapper the user names, looked through with one caller too;
	 * a glob */
	uint64_t table[] = { in(malloc), in(make_table), in(build_all) };
	assert_int_equal(lp_symbols_alloc_stack(s, table, 3), 0);
	expect_named(s, table, 3, "make_table");
	const char *user[] = { "make_t*" };
	assert_int_equal(lp_symbols_alloc_wrappers(s, user, 1), 0);
	expect_named(s, table, 3, "build_all");
	/* make_tree is one too now: past both wrappers */
	expect_named(s, from_tree, 4, "build_all");
	/* every frame a wrapper: the first past the allocator still names it */
	uint64_t only_wrappers[] = { in(malloc), in(proj_xmalloc), in(make_tree) };
	expect_named(s, only_wrappers, 3, "proj_xmalloc");
	free(build_all(8));
	lp_symbols_free(s);

	/* one caller, two frames in the function (a function that allocates
	 * a program's arrays once, each on its own line): its lines name;
	 * the frames are the return addresses of its two calls */
	void *a, *b;
	alloc_two(&a, &b);
	free(a);
	free(b);
	assert_int_equal(lp_symbols_new(&s, &maps, NULL), 0);
	uint64_t first[] = { in(malloc), two_sites[0], in(build_all) };
	uint64_t second[] = { in(malloc), two_sites[1], in(build_all) };
	assert_int_equal(lp_symbols_alloc_stack(s, first, 3), 0);
	assert_int_equal(lp_symbols_alloc_stack(s, second, 3), 0);
	expect_named(s, first, 3, "alloc_two");
	expect_named(s, second, 3, "alloc_two");
	lp_symbols_free(s);
	lp_mappings_release(&maps);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_alloc_site),
		cmocka_unit_test(test_program_wrappers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
