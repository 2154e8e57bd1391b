/* Symbolisation of what `locprof cc` builds: a PIE compiled by clang with
 * -O2 -g (no .debug_aranges) and linked by lld (whose segments have
 * p_vaddr != p_offset), "loaded" at a made-up address through mappings
 * built from its program headers the way the kernel maps it. The program
 * inlines a function named like the runtime's callbacks (lp_rt_*) and
 * prints where that inlined code is, relative to a function's address; the
 * symbols must name the enclosing function and the line of the call. The
 * test is skipped when clang or lld is missing. */
#include "lp-test.h"

#include <locprof/symbol.h>

static const char program[] =
	"#include <stdio.h>\n"
	"#include <stdint.h>\n"
	"volatile uint64_t sink, probe_pc;\n"
	"static inline __attribute__((always_inline)) void lp_rt_probe(uint64_t v)\n"
	"{\n"
	"\tuint64_t here;\n"
	"\t__asm__ volatile(\"lea 0(%%rip), %0\" : \"=r\"(here));\n"
	"\tprobe_pc = here;\n\tsink += v;\n"
	"}\n"
	"__attribute__((noinline)) void user_fn(uint64_t v)\n"
	"{\n"
	"\tsink = v * 3;\n"
	"\tlp_rt_probe(v); /* line 14 */\n"
	"\tsink += v;\n"
	"}\n"
	"int main(void)\n"
	"{\n"
	"\tuser_fn(1);\n"
	"\tprintf(\"%llx\\n\", (unsigned long long)(probe_pc - (uint64_t)(uintptr_t)user_fn));\n"
	"\treturn 0;\n"
	"}\n";

static char *exe;
static int have_tools;

static int setup(void **state)
{
	char *src = lp_test_path("clangprog.c"), cmd[1024];

	exe = lp_test_path("clangprog");
	lp_test_write_file(src, program, sizeof(program) - 1);
	snprintf(cmd, sizeof(cmd), "clang -O2 -g -fPIE -pie -fuse-ld=lld -o '%s' '%s' 2>/dev/null", exe, src);
	have_tools = system(cmd) == 0;
	free(src);
	return 0;
}

static uint64_t run_hex(const char *cmd)
{
	FILE *f = popen(cmd, "r");
	unsigned long long v = 0;

	assert_non_null(f);
	assert_int_equal(fscanf(f, "%llx", &v), 1);
	pclose(f);
	return v;
}

static void test_clang_lld_pie(void **state)
{
	const uint64_t load = 0x5500000000ULL;
	struct lp_mappings maps = { 0 };
	struct lp_symbols *s;
	struct lp_code_loc loc;
	char cmd[1024], line[512];
	uint64_t fn, delta;
	int skew = 0;
	FILE *f;

	if (!have_tools)
		skip();
	/* the mappings of a process that loaded exe at `load`: one per
	 * PT_LOAD, at the page-aligned vaddr, from the page-aligned offset
	 * (only the executable ones, as the recorders keep) */
	snprintf(cmd, sizeof(cmd), "readelf -lW '%s'", exe);
	assert_non_null(f = popen(cmd, "r"));
	while (fgets(line, sizeof(line), f)) {
		unsigned long long off, va, pa, fsz, msz;
		char flags[8] = "";

		if (sscanf(line, " LOAD %llx %llx %llx %llx %llx %7[RWE ]", &off, &va, &pa, &fsz, &msz, flags) < 5 ||
		    !strchr(flags, 'E'))
			continue;
		if ((va & ~0xfffULL) - (off & ~0xfffULL))
			skew = 1;
		assert_int_equal(lp_mappings_add(&maps, load + (va & ~0xfffULL), load + ((va + msz + 0xfff) & ~0xfffULL),
						 off & ~0xfffULL, exe, NULL, 0), 0);
	}
	pclose(f);
	assert_true(maps.n >= 1);
	/* this layout is the point of the test: a file offset that is not
	 * the vaddr */
	assert_true(skew);

	snprintf(cmd, sizeof(cmd), "nm '%s' | awk '$3 == \"user_fn\" { print $1 }'", exe);
	fn = run_hex(cmd);
	delta = run_hex(exe);
	assert_int_equal(lp_symbols_new(&s, &maps, NULL), 0);
	/* the function's own address */
	assert_int_equal(lp_symbols_pc(s, load + fn, &loc), 1);
	assert_string_equal(loc.function, "user_fn");
	assert_string_equal(loc.file, "clangprog.c");
	/* inside the inlined lp_rt_probe: user_fn, at the line of the call */
	assert_int_equal(lp_symbols_pc(s, load + fn + delta, &loc), 1);
	assert_string_equal(loc.function, "user_fn");
	assert_string_equal(loc.file, "clangprog.c");
	assert_int_equal(loc.line, 14);
	lp_symbols_free(s);
	lp_mappings_release(&maps);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_clang_lld_pie),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
