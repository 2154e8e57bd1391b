/* The symbol caches against libdwfl itself (the slow reference): data
 * lookups over every 8th byte of this test's own data and bss and over
 * random addresses of every mapped file (libc's thousands of objects
 * included), pc lookups over random code addresses, twice (the second
 * time from the cache). The mappings are this process's, from
 * /proc/self/maps, as a trace or a profile records them. Also: a mapping
 * whose build-id no longer matches its file is not used. */
#include "lp-test.h"
#include <dlfcn.h>
#include "self-maps.h"

#include <locprof/symbol.h>

#include "common/rng.h"
#include "symbol/symbol-internal.h"

/* objects of several sizes, some adjacent, some static */
double g_big[8192];
int g_small[3] = { 1, 2, 3 };
static char s_bytes[17];
static long s_init[5] = { 5, 4, 3, 2, 1 };
struct { int a; double b[7]; } g_struct;

static void same_data(struct lp_symbols *s, uint64_t addr, size_t *found)
{
	struct lp_data_sym x, y;
	int fx = lp_symbols_data(s, addr, &x), fy = lp_symbols_data_dwfl(s, addr, &y);

	if (fx != fy)
		fail_msg("%#llx: cache says %d (%s), libdwfl %d (%s)", (unsigned long long)addr, fx,
			 fx ? x.name : "-", fy, fy ? y.name : "-");
	if (!fx)
		return;
	(*found)++;
	if (strcmp(x.name, y.name) || x.start != y.start || x.size != y.size)
		fail_msg("%#llx: cache %s %#llx+%llu, libdwfl %s %#llx+%llu", (unsigned long long)addr,
			 x.name, (unsigned long long)x.start, (unsigned long long)x.size, y.name,
			 (unsigned long long)y.start, (unsigned long long)y.size);
}

static void same_pc(struct lp_symbols *s, uint64_t pc)
{
	struct lp_code_loc x, y;
	int fx = lp_symbols_pc(s, pc, &x), fy = lp_symbols_pc_dwfl(s, pc, &y);

	assert_int_equal(fx, fy);
	if ((x.function != y.function && (!x.function || !y.function || strcmp(x.function, y.function))) ||
	    (x.file != y.file && (!x.file || !y.file || strcmp(x.file, y.file))) || x.line != y.line)
		fail_msg("pc %#llx: cache %s %s:%d, libdwfl %s %s:%d", (unsigned long long)pc,
			 x.function ? x.function : "-", x.file ? x.file : "-", x.line,
			 y.function ? y.function : "-", y.file ? y.file : "-", y.line);
}

static void test_data_cache_matches_dwfl(void **state)
{
	struct lp_mappings all, exec;
	struct lp_symbols *s;
	struct lp_rng r;
	size_t found = 0;
	uint64_t lo = (uint64_t)(uintptr_t)g_small, hi = lo;
	const void *objs[] = { g_big, g_small, s_bytes, s_init, &g_struct };

	lp_test_self_maps(&all, 0);
	lp_test_self_maps(&exec, 1);
	/* as the recorders do: executable mappings only */
	assert_int_equal(lp_symbols_new(&s, &exec, NULL), 0);
	assert_null(lp_symbols_warning(s));
	assert_true(lp_symbols_data_count(s) > 100);
	s_bytes[0] = (char)s_init[0]; /* keep the statics */

	/* this executable's data and bss, every 8th byte and every byte of
	 * the small objects, from below the lowest object to above the
	 * highest */
	for (size_t i = 0; i < sizeof(objs) / sizeof(objs[0]); i++) {
		uint64_t a = (uint64_t)(uintptr_t)objs[i];

		lo = a < lo ? a : lo;
		hi = a > hi ? a : hi;
	}
	for (uint64_t a = lo - 4096; a < hi + sizeof(g_big) + 4096; a += 8)
		same_data(s, a, &found);
	for (uint64_t a = (uint64_t)(uintptr_t)s_bytes - 8; a < (uint64_t)(uintptr_t)s_bytes + 32; a++)
		same_data(s, a, &found);
	{
		struct lp_data_sym d;

		assert_int_equal(lp_symbols_data(s, (uint64_t)(uintptr_t)&g_big[100], &d), 1);
		assert_string_equal(d.name, "g_big");
		assert_int_equal(d.size, sizeof(g_big));
		assert_int_equal(lp_symbols_data(s, (uint64_t)(uintptr_t)&s_init[4], &d), 1);
		assert_string_equal(d.name, "s_init");
	}
	/* the edges of every data symbol of every file (libc's included),
	 * and random addresses in every mapping and around each */
	for (size_t i = 0; i < lp_symbols_data_count(s); i++) {
		uint64_t a, b;

		lp_symbols_data_range(s, i, &a, &b);
		same_data(s, a - 1, &found);
		same_data(s, a, &found);
		same_data(s, a + (b - a) / 2, &found);
		same_data(s, b - 1, &found);
		same_data(s, b, &found);
	}
	lp_rng_seed(&r, 3);
	for (size_t i = 0; i < all.n; i++) {
		const struct lp_mapping *m = &all.v[i];

		for (int k = 0; k < 300; k++)
			same_data(s, m->start - 65536 + lp_rng_below(&r, m->end - m->start + 131072), &found);
	}
	assert_true(found > 1000);
	/* pcs: random code addresses, asked twice */
	for (int rep = 0; rep < 2; rep++) {
		lp_rng_seed(&r, 5);
		for (size_t i = 0; i < exec.n; i++)
			for (int k = 0; k < 500; k++)
				same_pc(s, exec.v[i].start + lp_rng_below(&r, exec.v[i].end - exec.v[i].start));
	}
	same_pc(s, (uint64_t)(uintptr_t)test_data_cache_matches_dwfl);
	{
		struct lp_code_loc loc;

		assert_int_equal(lp_symbols_pc(s, (uint64_t)(uintptr_t)test_data_cache_matches_dwfl + 4, &loc), 1);
		assert_string_equal(loc.function, "test_data_cache_matches_dwfl");
	}
	lp_symbols_free(s);
	lp_mappings_release(&all);
	lp_mappings_release(&exec);
}

static void test_stale_build_id(void **state)
{
	struct lp_mappings exec;
	struct lp_symbols *s;
	const uint8_t bogus[20] = { 0xde, 0xad, 0xbe, 0xef };
	struct lp_data_sym d;
	size_t n;

	lp_test_self_maps(&exec, 1);
	/* pretend the executable (the first mapping) was rebuilt */
	exec.v[0].build_id_len = sizeof(bogus);
	memcpy(exec.v[0].build_id, bogus, sizeof(bogus));
	assert_int_equal(lp_symbols_new(&s, &exec, NULL), 0);
	assert_non_null(lp_symbols_warning(s));
	assert_non_null(strstr(lp_symbols_warning(s), exec.v[0].path));
	/* its globals are no longer named */
	assert_int_equal(lp_symbols_data(s, (uint64_t)(uintptr_t)g_big, &d), 0);
	lp_symbols_free(s);
	/* with only that file: nothing to take symbols from */
	n = exec.n;
	exec.n = 1;
	assert_int_equal(lp_symbols_new(&s, &exec, NULL), LP_EINVAL);
	assert_non_null(strstr(lp_errmsg(), "build-id"));
	exec.n = n;
	lp_mappings_release(&exec);
}

/* A pc named by module and file address: this test's own function, at
 * the address its ELF file gives it (the run's address less the load
 * base, dladdr()'s: addr2line -e takes it); a pc in no module, and no
 * symbols at all, in hex. */
static void test_pc_address(void **state)
{
	struct lp_mappings exec;
	struct lp_symbols *s;
	uint64_t pc = (uint64_t)(uintptr_t)same_pc + 3, heap = (uint64_t)(uintptr_t)g_big + 0x40000000;
	char buf[300], want[300], exe[512];
	Dl_info info;
	ssize_t n;

	(void)state;
	assert_true(dladdr((void *)same_pc, &info) != 0);
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	assert_true(n > 0);
	exe[n] = 0;
	snprintf(want, sizeof(want), "%s+%#llx", strrchr(exe, '/') + 1,
		 (unsigned long long)(pc - (uint64_t)(uintptr_t)info.dli_fbase));
	lp_test_self_maps(&exec, 1);
	assert_int_equal(lp_symbols_new(&s, &exec, NULL), 0);
	assert_int_equal(lp_symbols_pc_address(s, pc, buf, sizeof(buf)), 1);
	assert_string_equal(buf, want);
	assert_int_equal(lp_symbols_pc_address(s, heap, buf, sizeof(buf)), 0);
	snprintf(want, sizeof(want), "%#llx", (unsigned long long)heap);
	assert_string_equal(buf, want);
	assert_int_equal(lp_symbols_pc_address(NULL, pc, buf, sizeof(buf)), 0);
	lp_symbols_free(s);
	lp_mappings_release(&exec);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_data_cache_matches_dwfl),
		cmocka_unit_test(test_stale_build_id),
		cmocka_unit_test(test_pc_address),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
