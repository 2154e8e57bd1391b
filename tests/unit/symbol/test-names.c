/* Readable names: C++ demangling without parameters and with template
 * arguments elided (operators with angle brackets kept), gcc's and
 * clang's outlined OpenMP regions named after the function enclosing
 * them, and the string pool that owns the names. The OpenMP programs are
 * built here with gcc and clang; each is skipped when its compiler or
 * OpenMP runtime is missing. */
#include "lp-test.h"

#include "symbol/symbol-internal.h"

static void test_readable(void **state)
{
	static const char *const cases[][2] = {
		{ "_ZN2ns4funcEv", "ns::func" },
		{ "_ZSt16__introsort_loopIN9__gnu_cxx17__normal_iteratorIPiSt6vectorIiSaIiEEEElNS0_5__ops15_"
		  "Iter_less_iterEEvT_S9_T0_T1_",
		  "std::__introsort_loop<...>" },
		{ "_ZNKSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE4sizeEv",
		  "std::__cxx11::basic_string<...>::size" },
		{ "_ZNSt6vectorIiSaIiEE17_M_realloc_insertIJRKiEEEvN9__gnu_cxx17__normal_iteratorIPiS1_EEDpOT_",
		  "std::vector<...>::_M_realloc_insert<...>" },
		{ "_Znwm", "operator new" },
		{ "_ZlsRSoRK1A", "operator<<" },
		{ "_ZN1AltERKS_", "A::operator<" },
		{ "_ZN1SIiEptEv", "S<...>::operator->" },
		{ "_ZZ4mainENKUlvE_clEv", "main::{lambda()#1}::operator()" },
		/* a lambda's enclosing function without its parameters, as
		 * any function; no ABI tag */
		{ "_ZZ9make_recsRSt6vectorIiSaIiEElENK3$_0clEii", "make_recs::$_0::operator()" },
		{ "_Z10make_vocabB5cxx11i", "make_vocab" },
		{ "_ZZN1A1fERKiENKUlvE_clEv", "A::f::{lambda()#1}::operator()" },
		{ "main", "main" },
		{ "walk", "walk" },
		{ "_Zbogus", "_Zbogus" },
		{ "work._omp_fn.0", "work [omp region]" },
		{ "_Z4workv._omp_fn.3", "work [omp region]" },
		{ "_ZN2ns4workEi._omp_fn.1", "ns::work [omp region]" },
	};
	struct lp_strpool pool = { 0 };

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *got = lp_name_readable(&pool, cases[i][0]);

		assert_non_null(got);
		if (strcmp(got, cases[i][1]))
			fail_msg("%s: '%s', expected '%s'", cases[i][0], got, cases[i][1]);
	}
	assert_null(lp_name_readable(&pool, NULL));
	assert_true(lp_name_omp_outlined(".omp_outlined._debug__"));
	assert_true(lp_name_omp_outlined("main._omp_fn.0"));
	assert_false(lp_name_omp_outlined("omp_get_thread_num"));
	lp_strpool_release(&pool);
}

static void test_pool(void **state)
{
	struct lp_strpool pool = { 0 };
	const char *first[3000];
	char buf[32];

	(void)state;
	/* equal strings share one copy, across the pool's growth */
	for (int i = 0; i < 3000; i++) {
		snprintf(buf, sizeof(buf), "name%d", i);
		first[i] = lp_strpool_add(&pool, buf);
		assert_string_equal(first[i], buf);
	}
	for (int i = 0; i < 3000; i++) {
		snprintf(buf, sizeof(buf), "name%d", i);
		assert_ptr_equal(lp_strpool_add(&pool, buf), first[i]);
	}
	assert_int_equal(pool.n, 3000);
	lp_strpool_release(&pool);
	lp_strpool_release(&pool); /* twice is harmless */
}

static const char omp_program[] = "#include <stdio.h>\n"
				  "static double a[1000];\n"
				  "void work(int n)\n"
				  "{\n"
				  "#pragma omp parallel for\n"
				  "\tfor (int i = 0; i < n; i++)\n"
				  "\t\ta[i] += i;\n"
				  "}\n"
				  "int main(void)\n"
				  "{\n"
				  "\twork(1000);\n"
				  "\tprintf(\"%f\\n\", a[3]);\n"
				  "\treturn 0;\n"
				  "}\n";

/* Build the OpenMP program with cc; the address of its outlined region
 * (the symbol named sym), or 0 when the compiler cannot build it. */
static uint64_t build_omp(const char *cc, const char *exe, const char *sym)
{
	char *src = lp_test_path("omp.c"), cmd[1024];
	unsigned long long addr = 0;
	FILE *f;

	lp_test_write_file(src, omp_program, sizeof(omp_program) - 1);
	snprintf(cmd, sizeof(cmd), "%s -O1 -g -fopenmp -no-pie -o '%s' '%s' 2>/dev/null", cc, exe, src);
	free(src);
	if (system(cmd) != 0)
		return 0;
	snprintf(cmd, sizeof(cmd), "nm '%s' | awk '$3 == \"%s\" { print $1 }'", exe, sym);
	assert_non_null(f = popen(cmd, "r"));
	if (fscanf(f, "%llx", &addr) != 1)
		addr = 0;
	pclose(f);
	return addr;
}

static void check_omp(const char *cc, const char *sym)
{
	char *exe = lp_test_path("omp");
	struct lp_symbols *s;
	struct lp_code_loc loc;
	uint64_t addr = build_omp(cc, exe, sym);

	if (!addr) {
		printf("SKIP: %s cannot build an OpenMP program\n", cc);
		free(exe);
		return;
	}
	assert_int_equal(lp_symbols_new(&s, NULL, exe), 0);
	/* the region's first instructions, and a few bytes in */
	for (uint64_t off = 0; off < 16; off += 4) {
		assert_int_equal(lp_symbols_pc(s, addr + off, &loc), 1);
		if (strcmp(loc.function, "work [omp region]"))
			fail_msg("%s: %s+%llu is '%s'", cc, sym, (unsigned long long)off, loc.function);
		assert_non_null(loc.label);
		assert_true(!strncmp(loc.label, "work [omp region]", 17));
	}
	lp_symbols_free(s);
	free(exe);
}

static void test_omp_gcc(void **state)
{
	(void)state;
	check_omp("gcc", "work._omp_fn.0");
}

static void test_omp_clang(void **state)
{
	(void)state;
	check_omp("clang", ".omp_outlined.");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_readable),
		cmocka_unit_test(test_pool),
		cmocka_unit_test(test_omp_gcc),
		cmocka_unit_test(test_omp_clang),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
