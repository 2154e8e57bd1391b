/* lp_code_symbol() (src/lib/symbol/code-symbol.c) against elfutils' own
 * dwfl_module_addrinfo(), the slow reference it stands in for: every pc of
 * a module's address range at a small step in ascending order (the order
 * the hot spots ask in, where the remembered ranges answer), then random
 * pcs in random order, for this test's executable (local and sizeless
 * symbols), libc (versioned aliases) and, where gcc is installed, its
 * stripped cc1 (28 902 dynamic symbols, most of its code named by none). */
#include "lp-test.h"

#include "common/rng.h"
#include "symbol/code-symbol.h"

#include <elfutils/libdwfl.h>

static const Dwfl_Callbacks offline = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

static void same(struct lp_code_symbols **cs, Dwfl_Module *mod, uint64_t pc, size_t *named)
{
	GElf_Off off;
	GElf_Sym sym;
	const char *want = dwfl_module_addrinfo(mod, pc, &off, &sym, NULL, NULL, NULL);
	const char *got = lp_code_symbol(cs, mod, pc);

	if ((want == NULL) != (got == NULL) || (want && strcmp(want, got)))
		fail_msg("pc %#llx: lp_code_symbol %s, elfutils %s", (unsigned long long)pc, got ? got : "-",
			 want ? want : "-");
	*named += want != NULL;
}

/* Every answer for the module of path is elfutils'; returns the pcs that
 * had a name. */
static size_t check_module(const char *path, size_t ascending, size_t random)
{
	Dwfl *dwfl = dwfl_begin(&offline);
	struct lp_code_symbols *cs = NULL;
	Dwfl_Module *mod;
	Dwarf_Addr lo, hi;
	struct lp_rng r;
	size_t named = 0;
	uint64_t step;

	assert_non_null(dwfl);
	mod = dwfl_report_offline(dwfl, path, path, -1);
	assert_non_null(mod);
	assert_int_equal(dwfl_report_end(dwfl, NULL, NULL), 0);
	dwfl_module_info(mod, NULL, &lo, &hi, NULL, NULL, NULL, NULL);
	step = (hi - lo) / ascending + 1;
	for (uint64_t pc = lo; pc < hi; pc += step)
		same(&cs, mod, pc, &named);
	lp_rng_seed(&r, 11);
	for (size_t i = 0; i < random; i++)
		same(&cs, mod, lo + lp_rng_below(&r, hi - lo), &named);
	print_message("%s: %zu pcs named of %zu\n", path, named, ascending + random);
	lp_code_symbols_free(cs);
	dwfl_end(dwfl);
	return named;
}

static void test_matches_elfutils(void **state)
{
	char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	FILE *p;
	char cc1[4096] = "";

	(void)state;
	assert_true(n > 0);
	self[n] = 0;
	assert_true(check_module(self, 8000, 800) > 400);
	assert_true(check_module("/lib/x86_64-linux-gnu/libc.so.6", 8000, 800) > 2000);
	if ((p = popen("gcc -print-prog-name=cc1 2>/dev/null", "r"))) {
		if (fgets(cc1, sizeof(cc1), p))
			cc1[strcspn(cc1, "\n")] = 0;
		pclose(p);
	}
	if (cc1[0] == '/' && access(cc1, R_OK) == 0)
		check_module(cc1, 2000, 200);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_matches_elfutils),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
