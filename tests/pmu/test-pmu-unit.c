/* Unit tests of the pmu backend's pure parts: decoding and address
 * computation (Zydis; EVEX forms and gathers/scatters included), the XSAVE
 * image of the vector registers, the mapping shadow. */
#include "lp-test.h"

#include <sys/mman.h>
#include <sys/syscall.h>

#include <locprof/common.h>

#include "decode.h"
#include <Zydis/Zydis.h>
#include "maps.h"
#include "pagecount.h"
#include "common/rng.h"

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
	return lp_pmu_insn_accesses(insn, r, NULL, a);
}

static void test_plain(void **state)
{
	struct user_regs_struct r = { 0 };
	struct lp_pmu_access a[LP_PMU_MAX_ACC];
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
	struct lp_pmu_access a[LP_PMU_MAX_ACC];
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
	struct lp_pmu_access a[LP_PMU_MAX_ACC];
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
	struct lp_pmu_access a[LP_PMU_MAX_ACC];
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

static void test_rmw_and_implicit(void **state)
{
	struct user_regs_struct r = { 0 };
	struct lp_pmu_access a[LP_PMU_MAX_ACC];
	struct lp_pmu_insn in;

	r.rip = 0x401000;
	r.rbx = 0x3000;
	r.rax = 0x1234567890abcd05ULL; /* al = 5 */
	/* lock cmpxchg [rbx], rcx: read, then write (also when it fails) */
	assert_int_equal(acc_of("\xf0\x48\x0f\xb1\x0b", 5, &r, a, &in), 2);
	assert_int_equal(a[0].kind, LP_REF_READ);
	assert_int_equal(a[1].kind, LP_REF_WRITE);
	assert_int_equal(a[1].addr, 0x3000);
	/* xlat reads [rbx + al] */
	assert_int_equal(acc_of("\xd7", 1, &r, a, &in), 1);
	assert_int_equal(a[0].addr, 0x3005);
	assert_int_equal(a[0].size, 1);
	/* cmovz rax, [rbx] reads whether or not it moves */
	assert_int_equal(acc_of("\x48\x0f\x44\x03", 4, &r, a, &in), 1);
	/* pushfq writes 8 bytes below rsp */
	r.rsp = 0x8000;
	assert_int_equal(acc_of("\x9c", 1, &r, a, &in), 1);
	assert_int_equal(a[0].addr, 0x8000 - 8);
	assert_int_equal(a[0].kind, LP_REF_WRITE);
	/* addr32 call rel32 (glibc's _start): the stack is still rsp */
	r.rsp = 0x7fffffffe780ULL;
	assert_int_equal(acc_of("\x67\xe8\x00\x00\x00\x00", 6, &r, a, &in), 1);
	assert_int_equal(a[0].addr, 0x7fffffffe778ULL);
	r.rsp = 0x8000;
	/* xsavec [rsp]: the whole area the CPU uses, not Zydis's 576 bytes */
	assert_int_equal(acc_of("\x0f\xc7\x24\x24", 4, &r, a, &in), 1);
	assert_true(a[0].size >= 576);
	assert_int_equal(a[0].kind, LP_REF_WRITE);
	/* prefetcht0 [rax], clflush [rax]: nothing */
	assert_int_equal(acc_of("\x0f\x18\x08", 3, &r, a, &in), 0);
	assert_int_equal(acc_of("\x0f\xae\x38", 3, &r, a, &in), 0);
	/* movsq: reads [rsi] then writes [rdi], 8 bytes */
	r.rsi = 0x1000;
	r.rdi = 0x2000;
	assert_int_equal(acc_of("\x48\xa5", 2, &r, a, &in), 2);
	assert_true(in.flags & LP_PMU_INSN_STRING);
	assert_false(in.flags & LP_PMU_INSN_REP);
	assert_int_equal(a[0].addr, 0x1000);
	assert_int_equal(a[0].kind, LP_REF_READ);
	assert_int_equal(a[1].addr, 0x2000);
	assert_int_equal(a[1].size, 8);
	/* repne scasb: one read of [rdi] per iteration */
	r.rcx = 4;
	assert_int_equal(acc_of("\xf2\xae", 2, &r, a, &in), 1);
	assert_true(in.flags & LP_PMU_INSN_REP);
	assert_int_equal(a[0].addr, 0x2000);
}

/* EVEX (AVX-512) forms glibc's string functions use on AVX-512 CPUs: the
 * gap of Capstone 4 that made the tests switch glibc to SSE2. */
static void test_evex(void **state)
{
	struct user_regs_struct r = { 0 };
	struct lp_pmu_access a[LP_PMU_MAX_ACC];
	struct lp_pmu_insn in;

	r.rip = 0x401000;
	r.rax = 0x10000;
	r.rdi = 0x20040;
	/* vmovdqu8 zmm0, [rax]: one 64-byte read */
	assert_int_equal(acc_of("\x62\xf1\x7f\x48\x6f\x00", 6, &r, a, &in), 1);
	assert_int_equal(a[0].size, 64);
	assert_int_equal(a[0].kind, LP_REF_READ);
	/* vpcmpeqb k1, zmm0, [rdi] */
	assert_int_equal(acc_of("\x62\xf1\x7d\x48\x74\x0f", 6, &r, a, &in), 1);
	assert_int_equal(a[0].addr, 0x20040);
	assert_int_equal(a[0].size, 64);
	/* vmovdqu8 [rax]{k1}, zmm0: a masked store counts as one write */
	assert_int_equal(acc_of("\x62\xf1\x7f\x49\x7f\x00", 6, &r, a, &in), 1);
	assert_int_equal(a[0].kind, LP_REF_WRITE);
	/* vmovdqu64 ymm16, [rdi + 0x20] (EVEX, ymm16: disp8*32) */
	assert_int_equal(acc_of("\x62\xe1\xfe\x28\x6f\x47\x01", 7, &r, a, &in), 1);
	assert_int_equal(a[0].addr, 0x20040 + 0x20);
	assert_int_equal(a[0].size, 32);
	/* vpternlogd zmm0, zmm1, [rax]{1to16}, 0x96: a 4-byte broadcast */
	assert_int_equal(acc_of("\x62\xf3\x75\x58\x25\x00\x96", 7, &r, a, &in), 1);
	assert_int_equal(a[0].size, 4);
}

static void set_d(struct lp_pmu_vregs *v, int reg, int i, int32_t x)
{
	memcpy(&v->zmm[reg][4 * i], &x, 4);
}

static void test_gather(void **state)
{
	struct user_regs_struct r = { 0 };
	struct lp_pmu_access a[LP_PMU_MAX_ACC];
	struct lp_pmu_vregs v;
	struct lp_pmu_insn in;
	int n;

	memset(&v, 0, sizeof(v));
	r.rip = 0x401000;
	r.rax = 0x100000;
	/* vpgatherdd ymm0, [rax + ymm1*4], ymm2 (AVX2): 8 dword indices, the
	 * sign bits of ymm2's dwords enable elements. */
	assert_int_equal(lp_pmu_decode(dec, (const uint8_t *)"\xc4\xe2\x6d\x90\x04\x88", 6, r.rip, &in), 0);
	assert_true(in.flags & LP_PMU_INSN_VSIB);
	for (int i = 0; i < 8; i++) {
		set_d(&v, 1, i, i * 100 - 300); /* negative indices too */
		set_d(&v, 2, i, i % 3 ? (int32_t)0x80000000 : 0);
	}
	n = lp_pmu_insn_accesses(&in, &r, &v, a);
	assert_int_equal(n, 5); /* elements 1, 2, 4, 5, 7 */
	assert_int_equal(a[0].addr, 0x100000 + (100 - 300) * 4);
	assert_int_equal(a[4].addr, 0x100000 + (700 - 300) * 4);
	assert_int_equal(a[0].size, 4);
	assert_int_equal(a[0].kind, LP_REF_READ);
	/* Without the vector registers: one access at base + disp. */
	assert_int_equal(lp_pmu_insn_accesses(&in, &r, NULL, a), 1);

	/* vgatherdpd zmm0{k1}, [rax + ymm1*8]: 8 qwords, mask k1 */
	assert_int_equal(lp_pmu_decode(dec, (const uint8_t *)"\x62\xf2\xfd\x49\x92\x04\xc8", 7, r.rip, &in), 0);
	v.k[1] = 0x81; /* elements 0 and 7 */
	n = lp_pmu_insn_accesses(&in, &r, &v, a);
	assert_int_equal(n, 2);
	assert_int_equal(a[0].addr, 0x100000 + (uint64_t)(-300 * 8));
	assert_int_equal(a[1].addr, 0x100000 + 400 * 8);
	assert_int_equal(a[1].size, 8);

	/* vpscatterdd [rax + zmm1*4]{k1}, zmm0: 16 dword writes */
	assert_int_equal(lp_pmu_decode(dec, (const uint8_t *)"\x62\xf2\x7d\x49\xa0\x04\x88", 7, r.rip, &in), 0);
	for (int i = 0; i < 16; i++)
		set_d(&v, 1, i, 16 * i);
	v.k[1] = 0xffff;
	n = lp_pmu_insn_accesses(&in, &r, &v, a);
	assert_int_equal(n, 16);
	for (int i = 0; i < 16; i++) {
		assert_int_equal(a[i].addr, 0x100000 + 64 * (uint64_t)i);
		assert_int_equal(a[i].kind, LP_REF_WRITE);
	}
}

static void test_xsave(void **state)
{
	struct lp_pmu_xsave_layout l = { { 0, 0, 576, 0, 0, 1088, 1152, 1664 } };
	static uint8_t x[2688];
	struct lp_pmu_vregs v;
	uint64_t bv = 0x7 | 0xe0; /* x87, SSE, AVX, opmask, ZMM_Hi256, Hi16_ZMM */

	for (size_t i = 0; i < sizeof(x); i++)
		x[i] = (uint8_t)(i * 7);
	memcpy(x + 512, &bv, 8);
	assert_int_equal(lp_pmu_vregs_parse(x, sizeof(x), &l, &v), 0);
	assert_int_equal(v.zmm[3][0], (uint8_t)((160 + 48) * 7));      /* xmm3 */
	assert_int_equal(v.zmm[3][16], (uint8_t)((576 + 48) * 7));     /* ymm3's upper half */
	assert_int_equal(v.zmm[3][32], (uint8_t)((1152 + 96) * 7));    /* zmm3's upper 256 bits */
	assert_int_equal(v.zmm[17][5], (uint8_t)((1664 + 64 + 5) * 7)); /* zmm17 */
	assert_int_equal(v.k[2] & 0xff, (uint8_t)((1088 + 16) * 7));
	/* A component in its initial state reads as zeros. */
	bv = 0x3;
	memcpy(x + 512, &bv, 8);
	assert_int_equal(lp_pmu_vregs_parse(x, sizeof(x), &l, &v), 0);
	assert_int_equal(v.zmm[3][16], 0);
	assert_int_equal(v.k[2], 0);
	assert_int_equal(v.zmm[3][0], (uint8_t)((160 + 48) * 7));
	/* Too short for the layout. */
	bv = 0xe7;
	memcpy(x + 512, &bv, 8);
	assert_int_equal(lp_pmu_vregs_parse(x, 1200, &l, &v), LP_EINVAL);
	/* This host's layout puts every component it has after the header. */
	lp_pmu_xsave_layout_host(&l);
	for (int i = 2; i < 8; i++)
		assert_true(l.off[i] == 0 || l.off[i] >= 576);
}

static void test_regs(void **state)
{
	struct user_regs_struct r = { 0 };
	uint64_t v;

	r.rax = 0x1122334455667788ULL;
	r.fs_base = 0x7f00;
	assert_int_equal(lp_pmu_reg_value(ZYDIS_REGISTER_EAX, &r, &v), 0);
	assert_int_equal(v, 0x55667788);
	assert_int_equal(lp_pmu_reg_value(ZYDIS_REGISTER_AX, &r, &v), 0);
	assert_int_equal(v, 0x7788);
	assert_int_equal(lp_pmu_reg_value(ZYDIS_REGISTER_AL, &r, &v), 0);
	assert_int_equal(v, 0x88);
	assert_int_equal(lp_pmu_reg_value(ZYDIS_REGISTER_AH, &r, &v), 0);
	assert_int_equal(v, 0x77);
	assert_int_equal(lp_pmu_reg_value(ZYDIS_REGISTER_FS, &r, &v), 0);
	assert_int_equal(v, 0x7f00);
	assert_int_equal(lp_pmu_reg_value(ZYDIS_REGISTER_XMM0, &r, &v), LP_EINVAL);
}

/* The page-count table against a plain array, with heavy collisions
 * (pages 4 KiB apart, small table) and deletions in any order: an emptied
 * slot once kept its count, so a page read as watched with no watch. */
static void test_pagecount(void **state)
{
	struct lp_pmu_pagecount pc = { 0 };
	static uint32_t ref[512];
	struct lp_rng rng;

	lp_rng_seed(&rng, 7);
	for (int it = 0; it < 400000; it++) {
		unsigned p = 1 + (unsigned)lp_rng_below(&rng, 500);
		uint64_t page = 0x7ffff0000000ULL + 4096ULL * p;

		if (lp_rng_below(&rng, 2)) {
			assert_int_equal(lp_pmu_pagecount_add(&pc, page), 0);
			ref[p]++;
		} else {
			lp_pmu_pagecount_remove(&pc, page);
			if (ref[p])
				ref[p]--;
		}
		if (it % 997 == 0)
			for (unsigned q = 1; q <= 500; q++)
				assert_int_equal(lp_pmu_pagecount_get(&pc, 0x7ffff0000000ULL + 4096ULL * q), ref[q]);
	}
	lp_pmu_pagecount_release(&pc);
	assert_int_equal(lp_pmu_pagecount_get(&pc, 0x1000), 0);
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
		cmocka_unit_test(test_rmw_and_implicit),
		cmocka_unit_test(test_evex),
		cmocka_unit_test(test_gather),
		cmocka_unit_test(test_xsave),
		cmocka_unit_test(test_regs),
		cmocka_unit_test(test_pagecount),
		cmocka_unit_test(test_maps),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
