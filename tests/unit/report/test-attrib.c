/* Symbolisation and MemSpy attribution on a real program: a small C file
 * compiled here with -g -no-pie, its addresses taken with nm, and a trace
 * written by hand from them. */
#include "lp-test.h"

#include <locprof/report.h>

static const char program[] =
	"#include <stdlib.h>\n"
	"double g_table[4096];\n"
	"static int s_counts[16];\n"
	"double walk_table(void)\n"
	"{\n"
	"\tdouble s = 0;\n"
	"\tfor (int i = 0; i < 4096; i += 8)\n"
	"\t\ts += g_table[i];\n"
	"\treturn s;\n"
	"}\n"
	"long *make_list(int n)\n"
	"{\n"
	"\tlong *p = malloc(n * sizeof(long));\n"
	"\tfor (int i = 0; i < n; i++)\n"
	"\t\tp[i] = i;\n"
	"\treturn p;\n"
	"}\n"
	"int main(void)\n"
	"{\n"
	"\tlong *l = make_list(1000);\n"
	"\ts_counts[1]++;\n"
	"\treturn (int)walk_table() + (int)l[3];\n"
	"}\n";

static char *exe;

static uint64_t sym(const char *name)
{
	char cmd[512], line[256];
	uint64_t addr = 0;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "nm '%s'", exe);
	assert_non_null(f = popen(cmd, "r"));
	while (fgets(line, sizeof(line), f)) {
		unsigned long long a;
		char type, n[200];
		if (sscanf(line, "%llx %c %199s", &a, &type, n) == 3 && !strcmp(n, name))
			addr = a;
	}
	pclose(f);
	if (!addr)
		fail_msg("no symbol %s in %s", name, exe);
	return addr;
}

static int setup(void **state)
{
	char *src = lp_test_path("prog.c"), cmd[1024];

	exe = lp_test_path("prog");
	lp_test_write_file(src, program, sizeof(program) - 1);
	snprintf(cmd, sizeof(cmd), "cc -g -O0 -no-pie -fno-pie -o '%s' '%s'", exe, src);
	free(src);
	return system(cmd) == 0 ? 0 : -1;
}

static void test_symbols(void **state)
{
	struct lp_symbols *s;
	struct lp_code_loc loc;
	struct lp_data_sym ds;
	uint64_t walk = sym("walk_table"), table = sym("g_table");

	assert_int_equal(lp_symbols_new(&s, NULL, exe), 0);
	assert_int_equal(lp_symbols_pc(s, walk + 8, &loc), 1);
	assert_string_equal(loc.function, "walk_table");
	assert_string_equal(loc.file, "prog.c");
	assert_true(loc.line >= 4 && loc.line <= 10);
	assert_int_equal(lp_symbols_data(s, table + 800, &ds), 1);
	assert_string_equal(ds.name, "g_table");
	assert_int_equal(ds.start, table);
	assert_int_equal(ds.size, 4096 * 8);
	assert_int_equal(lp_symbols_data(s, sym("s_counts") + 4, &ds), 1);
	assert_string_equal(ds.name, "s_counts");
	assert_int_equal(lp_symbols_data(s, walk + 8, &ds), 0); /* code is not data */
	assert_int_equal(lp_symbols_data(s, 0x7ffc0000, &ds), 0);
	lp_symbols_free(s);
	assert_int_equal(lp_symbols_new(&s, NULL, "/nonexistent/prog"), LP_EFORMAT);
}

static void test_attribution(void **state)
{
	struct lp_attrib_params p = { .seed = 1, .miss_latency = 50, .compute_cost = 1 };
	uint64_t walk = sym("walk_table"), table = sym("g_table"), mk = sym("make_list"),
		 mn = sym("main"), counts = sym("s_counts");
	struct lp_ref refs[4000];
	size_t n = 0, nr;
	struct lp_symbols *s;
	struct lp_attrib *a;
	const struct lp_attrib_row *rows;
	struct lp_attrib_row total;

	refs[n++] = (struct lp_ref){ .kind = LP_EV_ALLOC, .addr = 0x10000000, .size = 8000, .pc = mk + 20 };
	for (int i = 0; i < 1000; i++)
		refs[n++] = (struct lp_ref){ .kind = LP_REF_WRITE, .addr = 0x10000000 + 8 * i, .size = 8, .pc = mk + 40 };
	refs[n++] = (struct lp_ref){ .kind = LP_REF_WRITE, .addr = counts + 4, .size = 4, .pc = mn + 16 };
	refs[n++] = (struct lp_ref){ .kind = LP_REF_READ, .addr = 0x7ffc0000, .size = 8, .pc = mn + 20 };
	for (int rep = 0; rep < 2; rep++)
		for (int i = 0; i < 4096; i += 8)
			refs[n++] = (struct lp_ref){ .kind = LP_REF_READ, .addr = table + 8 * i, .size = 8, .pc = walk + 8 };
	refs[n++] = (struct lp_ref){ .kind = LP_EV_FREE, .addr = 0x10000000, .pc = mn + 30 };
	refs[n++] = (struct lp_ref){ .kind = LP_REF_READ, .addr = 0x10000000, .size = 8, .pc = mn + 20 };

	assert_int_equal(lp_cache_spec_parse(&p.cache, "4K:1:64"), 0);
	assert_int_equal(lp_symbols_new(&s, NULL, exe), 0);
	assert_int_equal(lp_attrib_new(&a, &p, s), 0);
	assert_int_equal(lp_attrib_refs(a, refs, n), 0);

	nr = lp_attrib_rows(a, LP_ATTRIB_PAIRS, &rows);
	assert_int_equal(nr, 4);
	assert_string_equal(rows[0].object, "g_table");
	assert_string_equal(rows[0].function, "walk_table");
	assert_int_equal(rows[0].refs, 1024);
	assert_int_equal(rows[0].misses, 1024); /* stride 64 over 32K through a 4K cache */
	assert_int_equal(rows[0].cold, 512);
	assert_int_equal(rows[0].replacement, 512);
	assert_true(rows[0].stall == 1024 * 50.0);
	assert_non_null(strstr(rows[1].object, "heap@make_list (prog.c:"));
	assert_string_equal(rows[1].function, "make_list");
	assert_int_equal(rows[1].refs, 1000);
	assert_int_equal(rows[1].misses, 125);
	assert_int_equal(rows[1].cold, 125);
	/* the stack read and the read after the free are "(other)", both in main */
	assert_string_equal(rows[2].object, "(other)");
	assert_string_equal(rows[2].function, "main");
	assert_int_equal(rows[2].refs, 2);
	assert_string_equal(rows[3].object, "s_counts");
	lp_attrib_total(a, &total);
	assert_int_equal(total.misses, 1024 + 125 + 3);
	assert_true(rows[0].share > 0.88 && rows[0].share < 0.89);

	nr = lp_attrib_rows(a, LP_ATTRIB_PCS, &rows);
	assert_int_equal(rows[0].pc, walk + 8);
	assert_non_null(strstr(rows[0].where, "prog.c:"));
	nr = lp_attrib_rows(a, LP_ATTRIB_FUNCTIONS, &rows);
	assert_int_equal(nr, 3);
	assert_string_equal(rows[2].function, "main");
	assert_true(rows[2].compute == 3.0);
	nr = lp_attrib_rows(a, LP_ATTRIB_OBJECTS, &rows);
	assert_int_equal(nr, 4);
	lp_attrib_free(a);
	lp_symbols_free(s);

	/* without symbols: pcs by address, one "(other)" object besides the heap */
	assert_int_equal(lp_attrib_new(&a, &p, NULL), 0);
	assert_int_equal(lp_attrib_refs(a, refs, n), 0);
	nr = lp_attrib_rows(a, LP_ATTRIB_OBJECTS, &rows);
	assert_int_equal(nr, 2);
	assert_string_equal(rows[0].object, "(other)");
	assert_non_null(strstr(rows[1].object, "heap@0x"));
	lp_attrib_free(a);
}

/* Allocations with their call stacks (LP_EV_FRAME records after them):
 * a block whose call site cannot be named (a wrapper's, here an address
 * outside the program) is named by the first frame that can, blocks with
 * equal stacks and the same name are one object, and a block without
 * frames keeps its call site's name. */
static void test_attribution_stacks(void **state)
{
	struct lp_attrib_params p = { .seed = 1, .miss_latency = 50, .compute_cost = 1 };
	uint64_t mk = sym("make_list"), mn = sym("main"), site = 0x7f0000001234;
	struct lp_ref refs[64];
	size_t n = 0, nr;
	struct lp_symbols *s;
	struct lp_attrib *a;
	const struct lp_attrib_row *rows;

	for (int b = 0; b < 3; b++) {
		uint64_t base = 0x10000000 + 0x1000 * (uint64_t)b;

		refs[n++] = (struct lp_ref){ .kind = LP_EV_ALLOC, .addr = base, .size = 64, .pc = site };
		if (b < 2) { /* the third has no stack */
			refs[n++] = (struct lp_ref){ .kind = LP_EV_FRAME, .pc = mk + 20 };
			refs[n++] = (struct lp_ref){ .kind = LP_EV_FRAME, .pc = mn + 10 };
		}
		for (int i = 0; i < 8; i++)
			refs[n++] = (struct lp_ref){ .kind = LP_REF_WRITE, .addr = base + 8 * i, .size = 8, .pc = mk + 40 };
	}
	assert_int_equal(lp_cache_spec_parse(&p.cache, "4K:1:64"), 0);
	assert_int_equal(lp_symbols_new(&s, NULL, exe), 0);
	assert_int_equal(lp_attrib_new(&a, &p, s), 0);
	assert_int_equal(lp_attrib_refs(a, refs, n), 0);
	nr = lp_attrib_rows(a, LP_ATTRIB_OBJECTS, &rows);
	assert_int_equal(nr, 2);
	assert_non_null(strstr(rows[0].object, "heap@make_list (prog.c:"));
	assert_int_equal(rows[0].refs, 16);
	assert_string_equal(rows[1].object, "heap@0x7f0000001234");
	assert_int_equal(rows[1].refs, 8);
	lp_attrib_free(a);
	lp_symbols_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_symbols),
		cmocka_unit_test(test_attribution),
		cmocka_unit_test(test_attribution_stacks),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
