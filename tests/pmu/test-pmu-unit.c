/* Unit tests of the pmu backend's pure parts: decoding and address
 * computation (Capstone), the mapping shadow. */
#include "lp-test.h"

#include <sys/mman.h>
#include <sys/syscall.h>

#include <locprof/common.h>

#include "decode.h"
#include "maps.h"

static struct lp_pmu_decoder *dec;

static int setup(void **state)
{
	return lp_pmu_decoder_new(&dec);
}

static int teardown(void **state)
{
	lp_pmu_decoder_free(dec);
	return 0;
}

static int acc_of(const char *hex, size_t len, struct user_regs_struct *r, struct lp_pmu_access *a,
		  struct lp_pmu_insn *insn)
{
	assert_int_equal(lp_pmu_decode(dec, (const uint8_t *)hex, len, r->rip, insn), 0);
	return lp_pmu_insn_accesses(insn, r, a);
}

static void test_plain(void **state)
{
	struct user_regs_struct r = { 0 };
	struct lp_pmu_access a[LP_PMU_MAX_MEM];
	struct lp_pmu_insn in;

	r.rip = 0x401000;
	r.rax = 0x1000;
	r.rbx = 0x10;
	/* mov rcx, [rax + rbx*8 + 0x20] */
	assert_int_equal(acc_of("\x48\x8b\x4c\xd8\x20", 5, &r, a, &in), 1);
	assert_int_equal(a[0].addr, 0x1000 + 0x80 + 0x20);
	assert_int_equal(a[0].size, 8);
	assert_int_equal(a[0].kind, LP_REF_READ);
	/* mov dword ptr [rax], 1 */
	assert_int_equal(acc_of("\xc7\x00\x01\x00\x00\x00", 6, &r, a, &in), 1);
	assert_int_equal(a[0].kind, LP_REF_WRITE);
	assert_int_equal(a[0].size, 4);
	/* add qword ptr [rax], 1 : one read then one write */
	assert_int_equal(acc_of("\x48\x83\x00\x01", 4, &r, a, &in), 2);
	assert_int_equal(a[0].kind, LP_REF_READ);
	assert_int_equal(a[1].kind, LP_REF_WRITE);
	assert_int_equal(a[1].addr, 0x1000);
	/* lea rax, [rbx+8]: no access; nop dword ptr [rax]: none */
	assert_int_equal(acc_of("\x48\x8d\x43\x08", 4, &r, a, &in), 0);
	assert_int_equal(acc_of("\x0f\x1f\x00", 3, &r, a, &in), 0);
	/* mov eax, ebx: none */
	assert_int_equal(acc_of("\x89\xd8", 2, &r, a, &in), 0);
}

static void test_riprel_segment(void **state)
{
	struct user_regs_struct r = { 0 };
	struct lp_pmu_access a[LP_PMU_MAX_MEM];
	struct lp_pmu_insn in;

	r.rip = 0x401000;
	r.fs_base = 0x7f0000000000;
	/* mov rax, [rip + 0x100] (7 bytes) */
	assert_int_equal(acc_of("\x48\x8b\x05\x00\x01\x00\x00", 7, &r, a, &in), 1);
	assert_int_equal(a[0].addr, 0x401000 + 7 + 0x100);
	/* mov rax, fs:[0x28] */
	assert_int_equal(acc_of("\x64\x48\x8b\x04\x25\x28\x00\x00\x00", 9, &r, a, &in), 1);
	assert_int_equal(a[0].addr, 0x7f0000000028);
	/* addr32 mov eax, [eax]: wraps at 32 bits */
	r.rax = 0xffffffff00001000ULL;
	assert_int_equal(acc_of("\x67\x8b\x00", 3, &r, a, &in), 1);
	assert_int_equal(a[0].addr, 0x1000);
}

static void test_stack(void **state)
{
	struct user_regs_struct r = { 0 };
	struct lp_pmu_access a[LP_PMU_MAX_MEM];
	struct lp_pmu_insn in;

	r.rip = 0x401000;
	r.rsp = 0x7ffff000;
	r.rbp = 0x7ffff100;
	r.rax = 0x5000;
	/* push rbp */
	assert_int_equal(acc_of("\x55", 1, &r, a, &in), 1);
	assert_int_equal(a[0].addr, 0x7ffff000 - 8);
	assert_int_equal(a[0].kind, LP_REF_WRITE);
	/* pop rbp */
	assert_int_equal(acc_of("\x5d", 1, &r, a, &in), 1);
	assert_int_equal(a[0].addr, 0x7ffff000);
	assert_int_equal(a[0].kind, LP_REF_READ);
	/* call rel32 */
	assert_int_equal(acc_of("\xe8\x00\x00\x00\x00", 5, &r, a, &in), 1);
	assert_int_equal(a[0].kind, LP_REF_WRITE);
	/* ret */
	assert_int_equal(acc_of("\xc3", 1, &r, a, &in), 1);
	assert_int_equal(a[0].kind, LP_REF_READ);
	/* push qword ptr [rax]: read [rax], then write the stack */
	assert_int_equal(acc_of("\xff\x30", 2, &r, a, &in), 2);
	assert_int_equal(a[0].addr, 0x5000);
	assert_int_equal(a[0].kind, LP_REF_READ);
	assert_int_equal(a[1].addr, 0x7ffff000 - 8);
	assert_int_equal(a[1].kind, LP_REF_WRITE);
	/* call qword ptr [rax] */
	assert_int_equal(acc_of("\xff\x10", 2, &r, a, &in), 2);
	/* leave reads [rbp] */
	assert_int_equal(acc_of("\xc9", 1, &r, a, &in), 1);
	assert_int_equal(a[0].addr, 0x7ffff100);
}

static void test_string(void **state)
{
	struct user_regs_struct r = { 0 };
	struct lp_pmu_access a[LP_PMU_MAX_MEM];
	struct lp_pmu_insn in;

	r.rip = 0x401000;
	r.rsi = 0x1000;
	r.rdi = 0x2000;
	r.rcx = 3;
	/* rep movsb: one iteration reads [rsi] then writes [rdi] */
	assert_int_equal(acc_of("\xf3\xa4", 2, &r, a, &in), 2);
	assert_true(in.flags & LP_PMU_INSN_REP);
	assert_int_equal(a[0].addr, 0x1000);
	assert_int_equal(a[0].kind, LP_REF_READ);
	assert_int_equal(a[1].addr, 0x2000);
	assert_int_equal(a[1].kind, LP_REF_WRITE);
	/* rep stosq with rcx == 0 makes no access */
	r.rcx = 0;
	assert_int_equal(acc_of("\xf3\x48\xab", 3, &r, a, &in), 0);
	r.rcx = 1;
	assert_int_equal(acc_of("\xf3\x48\xab", 3, &r, a, &in), 1);
	assert_int_equal(a[0].size, 8);
	assert_int_equal(a[0].kind, LP_REF_WRITE);
	/* SSE movsd xmm0, [rdi] is not a string op */
	assert_int_equal(acc_of("\xf2\x0f\x10\x07", 4, &r, a, &in), 1);
	assert_false(in.flags & LP_PMU_INSN_STRING);
	/* syscall */
	assert_int_equal(acc_of("\x0f\x05", 2, &r, a, &in), 0);
	assert_true(in.flags & LP_PMU_INSN_SYSCALL);
	/* garbage */
	assert_int_equal(lp_pmu_decode(dec, (const uint8_t *)"\x06", 1, 0, &in), LP_EPARSE);
}

static void test_maps(void **state)
{
	struct lp_pmu_maps m;
	char *path = lp_test_path("maps");
	const char *text =
		"00400000-00401000 r--p 00000000 08:01 1 /bin/x\n"
		"00401000-00403000 r-xp 00001000 08:01 1 /bin/x\n"
		"00403000-00405000 rw-p 00000000 00:00 0 [heap]\n"
		"ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0 [vsyscall]\n";
	uint64_t args[6] = { 0 };

	lp_pmu_maps_init(&m);
	lp_test_write_file(path, text, strlen(text));
	assert_int_equal(lp_pmu_maps_load(&m, path), 0);
	assert_int_equal(m.n, 3);
	assert_int_equal(m.brk, 0x405000);
	assert_int_equal(lp_pmu_maps_prot(&m, 0x401800), PROT_READ | PROT_EXEC);
	assert_int_equal(lp_pmu_maps_prot(&m, 0x3fffff), -1);
	/* mprotect the middle page of the heap */
	args[0] = 0x403000; args[1] = 4096; args[2] = PROT_READ;
	assert_int_equal(lp_pmu_maps_syscall(&m, SYS_mprotect, args, 0), 1);
	assert_int_equal(lp_pmu_maps_prot(&m, 0x403010), PROT_READ);
	assert_int_equal(lp_pmu_maps_prot(&m, 0x404010), PROT_READ | PROT_WRITE);
	/* a failed call changes nothing */
	args[2] = PROT_NONE;
	assert_int_equal(lp_pmu_maps_syscall(&m, SYS_mprotect, args, -22), 0);
	assert_int_equal(lp_pmu_maps_prot(&m, 0x403010), PROT_READ);
	/* munmap a hole, mmap elsewhere */
	args[0] = 0x401000; args[1] = 100;
	assert_int_equal(lp_pmu_maps_syscall(&m, SYS_munmap, args, 0), 1);
	assert_int_equal(lp_pmu_maps_prot(&m, 0x401000), -1);
	assert_int_equal(lp_pmu_maps_prot(&m, 0x402000), PROT_READ | PROT_EXEC);
	args[0] = 0; args[1] = 8192; args[2] = PROT_READ | PROT_WRITE;
	assert_int_equal(lp_pmu_maps_syscall(&m, SYS_mmap, args, 0x7000000), 1);
	assert_int_equal(lp_pmu_maps_prot(&m, 0x7001fff), PROT_READ | PROT_WRITE);
	/* brk grows the heap by two pages, then shrinks it */
	args[0] = 0x407000;
	assert_int_equal(lp_pmu_maps_syscall(&m, SYS_brk, args, 0x407000), 1);
	assert_int_equal(lp_pmu_maps_prot(&m, 0x406000), PROT_READ | PROT_WRITE);
	assert_int_equal(lp_pmu_maps_syscall(&m, SYS_brk, args, 0x405000), 1);
	assert_int_equal(lp_pmu_maps_prot(&m, 0x406000), -1);
	/* mremap moves a region and keeps its permissions */
	args[0] = 0x7000000; args[1] = 8192; args[2] = 16384;
	assert_int_equal(lp_pmu_maps_syscall(&m, SYS_mremap, args, 0x9000000), 1);
	assert_int_equal(lp_pmu_maps_prot(&m, 0x7000000), -1);
	assert_int_equal(lp_pmu_maps_prot(&m, 0x9003000), PROT_READ | PROT_WRITE);
	lp_pmu_maps_release(&m);
	free(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain),
		cmocka_unit_test(test_riprel_segment),
		cmocka_unit_test(test_stack),
		cmocka_unit_test(test_string),
		cmocka_unit_test(test_maps),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
