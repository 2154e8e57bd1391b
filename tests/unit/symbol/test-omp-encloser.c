/* Naming clang-outlined OpenMP regions without debug information
 * (src/lib/symbol/omp-encloser.c): a program with a parallel region inside
 * relax() and a region nested in another inside nest(), built by clang
 * -fopenmp -O2 -g0 as a PIE (the encloser takes the region's address with
 * a rip-relative lea) and as a non-PIE (a mov of an immediate). Every
 * `.omp_outlined.` function the symbol table lists is named after the
 * function whose source holds it, through the nesting. Skipped without
 * clang's OpenMP (libomp-dev). */
#include "lp-test.h"

#include <locprof/symbol.h>

static const char program[] =
	"#include <omp.h>\n"
	"volatile double sink;\n"
	"__attribute__((noinline)) void relax(double *g, int n)\n"
	"{\n"
	"#pragma omp parallel for\n"
	"\tfor (int i = 1; i < n - 1; i++)\n"
	"\t\tg[i] = 0.5 * (g[i - 1] + g[i + 1]);\n"
	"}\n"
	"__attribute__((noinline)) void nest(int n)\n"
	"{\n"
	"#pragma omp parallel\n"
	"\t{\n"
	"\t\tsink += omp_get_thread_num();\n"
	"#pragma omp parallel for\n"
	"\t\tfor (int i = 0; i < n; i++)\n"
	"\t\t\tsink += i;\n"
	"\t}\n"
	"}\n"
	"int main(void)\n"
	"{\n"
	"\tdouble g[64] = { 1 };\n"
	"\trelax(g, 64);\n"
	"\tnest(8);\n"
	"\treturn (int)g[1];\n"
	"}\n";

/* The names of every outlined region of the program built with flags:
 * how many regions, and how many are named as expected. */
static void check_build(const char *flags)
{
	char *src = lp_test_path("ompprog.c"), *exe = lp_test_path("ompprog"), cmd[1024];
	struct lp_symbols *s;
	unsigned long long addr;
	char name[256];
	int regions = 0, relax = 0, nest = 0;
	FILE *f;

	lp_test_write_file(src, program, sizeof(program) - 1);
	snprintf(cmd, sizeof(cmd), "clang -fopenmp -O2 -g0 %s -o '%s' '%s' 2>/dev/null", flags, exe, src);
	if (system(cmd) != 0) {
		free(src);
		free(exe);
		skip();
	}
	assert_int_equal(lp_symbols_new(&s, NULL, exe), 0);
	snprintf(cmd, sizeof(cmd), "nm '%s'", exe);
	assert_non_null(f = popen(cmd, "r"));
	while (fscanf(f, "%llx %*s %255s", &addr, name) == 2) {
		struct lp_code_loc loc;

		if (strncmp(name, ".omp_outlined.", 14))
			continue;
		regions++;
		assert_int_equal(lp_symbols_pc(s, addr, &loc), 1);
		assert_non_null(loc.function);
		relax += !strcmp(loc.function, "relax [omp region]");
		nest += !strcmp(loc.function, "nest [omp region]");
		if (strcmp(loc.function, "relax [omp region]") && strcmp(loc.function, "nest [omp region]"))
			fail_msg("%s (%s) named '%s'", name, flags, loc.function);
	}
	pclose(f);
	assert_int_equal(regions, 3);
	assert_int_equal(relax, 1);
	assert_int_equal(nest, 2); /* the outer region and the one nested in it */
	lp_symbols_free(s);
	free(src);
	free(exe);
}

static void test_pie(void **state)
{
	(void)state;
	check_build("-fPIE -pie");
}

static void test_non_pie(void **state)
{
	(void)state;
	check_build("-fno-pie -no-pie");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pie),
		cmocka_unit_test(test_non_pie),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
