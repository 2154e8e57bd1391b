/* Check samples against a full trace of the same run: every sample's
 * reference is the trace's reference at its begin time, and its end is the
 * first later reference touching the sampled line (or dangling if none).
 * usage: pmu-check-samples TRACE SAMPLES LINE_SIZE [TID...]: the listed
 * threads are other processes (fork children): their references and the
 * others' never touch the same line. Prints the number of
 * samples checked, exits 1 at the first disagreement. A reference
 * implementation: a plain scan of the trace, nothing shared with the engine.
 *
 * pmu-check-samples --dump TRACE DUMP LINE_SIZE: the samples are the lines
 * of `locprof dump PROFILE` ("line time pc addr kind tid reuse reuse_pc",
 * time counted from 0) whose line size is LINE_SIZE, the trace is the text
 * form of the same process's trace (`locprof convert`). The reusing pc must
 * be the trace's too. A line reused by a system call (the kernel reading or
 * writing a buffer) ends a sample before the next reference of the trace:
 * accepted when it ends before the trace's next touch and the reference
 * at its end is not by its reusing pc (the system call instruction itself
 * makes no reference), or at that touch when its reusing pc makes no
 * reference anywhere in the trace.
 *
 * pmu-check-samples --double-trap TRACE SAMPLES LINE_SIZE [TID...]: the
 * samples of --sample-start double-trap, each line led by "trigger armed"
 * (the overflowing reference's time, the clock when the breakpoint went
 * in). Also checked: the trace's reference at trigger is by the sample's
 * pc, and the sample is that pc's first execution after armed (in the
 * same address space), at its first reference of the trigger's kind. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int nsep;
static unsigned sep[16];

/* Which address space a thread's references belong to: 0 for the
 * program, 1 + i for the i-th separate process. */
static int space(unsigned tid)
{
	for (int i = 0; i < nsep; i++)
		if (sep[i] == tid)
			return 1 + i;
	return 0;
}

struct ref {
	unsigned long long addr, size, pc;
	char kind;
	unsigned tid;
};

/* 1 when some reference of the trace was made by the instruction at pc. */
static int pc_in_trace(const struct ref *t, size_t n, unsigned long long pc)
{
	for (size_t i = 0; i < n; i++)
		if (t[i].pc == pc)
			return 1;
	return 0;
}

int main(int argc, char **argv)
{
	FILE *tf, *sf;
	struct ref *t = NULL;
	size_t n = 0, cap = 0, checked = 0;
	char line[512];
	unsigned long long L;
	int dump = 0, dt = 0;

	if (argc > 1 && !strcmp(argv[1], "--double-trap")) {
		dt = 1;
		argv++;
		argc--;
	}
	if (argc > 1 && !strcmp(argv[1], "--dump")) {
		dump = 1;
		argv++;
		argc--;
	}
	if (argc < 4 || !(tf = fopen(argv[1], "r")) || !(sf = fopen(argv[2], "r"))) {
		fprintf(stderr, "usage: pmu-check-samples [--dump] TRACE SAMPLES LINE_SIZE [TID...]\n");
		return 2;
	}
	L = strtoull(argv[3], NULL, 0);
	for (int i = 4; i < argc && nsep < 16; i++)
		sep[nsep++] = (unsigned)strtoul(argv[i], NULL, 10);
	while (fgets(line, sizeof(line), tf)) {
		struct ref r;

		r.tid = 0; /* the text format leaves thread 0 out */
		if (sscanf(line, "%c %llx %llu %llx %u", &r.kind, &r.addr, &r.size, &r.pc, &r.tid) < 4 ||
		    (r.kind != 'R' && r.kind != 'W'))
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 4096;
			t = realloc(t, cap * sizeof(*t));
		}
		t[n++] = r;
	}
	while (fgets(line, sizeof(line), sf)) {
		unsigned long long b, e = 0, pc, addr, ls;
		char es[32], kind, how[16] = "";
		unsigned tid;
		size_t j;

		unsigned long long rpc = 0;

		if (dump) {
			/* line time pc addr kind tid reuse reuse_pc */
			unsigned long long ls2, time;
			char reuse[32], rpcs[32];

			if (line[0] == '#' || sscanf(line, "%llu %llu %llx %llx %c %u %31s %31s", &ls2, &time, &pc,
						     &addr, &kind, &tid, reuse, rpcs) != 8 || ls2 != L)
				continue;
			rpc = strtoull(rpcs, NULL, 16); /* "-" when dangling */
			b = time + 1;
			if (!strcmp(reuse, "dangling"))
				strcpy(es, "-");
			else
				snprintf(es, sizeof(es), "%llu", time + strtoull(reuse, NULL, 10) + 2);
		} else if (dt) {
			unsigned long long trig, armed;
			size_t jj, k;

			if (sscanf(line, "%llu %llu %llu %31s %llx %llx %c %u %15s", &trig, &armed, &b, es, &pc, &addr,
				   &kind, &tid, how) < 8)
				continue;
			if (trig < 1 || trig > n || armed < trig || armed > n) {
				fprintf(stderr, "sample at %llu: trigger %llu armed %llu out of range\n", b, trig, armed);
				return 1;
			}
			if (t[trig - 1].pc != pc) {
				fprintf(stderr, "sample at %llu: pc 0x%llx, but the overflowing reference %llu is by 0x%llx\n",
					b, pc, trig, t[trig - 1].pc);
				return 1;
			}
			for (jj = armed; jj < n; jj++)
				if (t[jj].pc == pc && space(t[jj].tid) == space(t[trig - 1].tid))
					break;
			k = jj;
			if (jj + 1 < n && t[jj].kind != t[trig - 1].kind && t[jj + 1].pc == pc &&
			    t[jj + 1].kind == t[trig - 1].kind && t[jj + 1].tid == t[jj].tid)
				k = jj + 1;
			if (jj == n || b != k + 1) {
				fprintf(stderr, "sample at %llu (pc 0x%llx, armed %llu): the next execution of the pc "
					"is at %zu\n", b, pc, armed, jj == n ? (size_t)0 : k + 1);
				return 1;
			}
		} else if (sscanf(line, "%llu %31s %llx %llx %c %u %15s", &b, es, &pc, &addr, &kind, &tid, how) < 6) {
			continue;
		}
		if (b < 1 || b > n) {
			fprintf(stderr, "sample at %llu: beyond the trace (%zu refs)\n", b, n);
			return 1;
		}
		if (t[b - 1].addr != addr || t[b - 1].pc != pc || t[b - 1].kind != kind || t[b - 1].tid != tid) {
			fprintf(stderr, "sample at %llu: trace has %c 0x%llx pc 0x%llx, sample %c 0x%llx pc 0x%llx\n",
				b, t[b - 1].kind, t[b - 1].addr, t[b - 1].pc, kind, addr, pc);
			return 1;
		}
		ls = addr & ~(L - 1);
		for (j = b; j < n; j++)
			if (space(t[j].tid) == space(tid) && t[j].addr < ls + L && ls < t[j].addr + t[j].size)
				break;
		if (strcmp(es, "-") != 0)
			e = strtoull(es, NULL, 10);
		/* A system call's access to the line is not in the trace: it
		 * must come no later than the next user reference. */
		if (!strcmp(how, "syscall") && e >= b + 1 && (j == n || e <= j + 1)) {
			checked++;
			continue;
		}
		if (dump && e >= b + 1 && (j == n || e < j + 1) && e <= n && t[e - 1].pc != rpc) {
			checked++; /* a system call's, before the trace's next touch */
			continue;
		}
		/* A system call's access at the same point, just before the next
		 * user reference (pread into a stack buffer, then `ret` reads
		 * that line): its pc (the syscall instruction) makes no user
		 * reference, so it is nowhere in the trace. */
		if (dump && e && j < n && e == j + 1 && t[j].pc != rpc && !pc_in_trace(t, n, rpc)) {
			checked++;
			continue;
		}
		if (dump && e && j < n && e == j + 1 && t[j].pc != rpc) {
			fprintf(stderr, "sample at %llu (0x%llx): reused by pc 0x%llx, trace says 0x%llx\n", b,
				addr, rpc, t[j].pc);
			return 1;
		}
		if ((j == n && e != 0) || (j < n && e != j + 1)) {
			fprintf(stderr, "sample at %llu (0x%llx): end %s, trace says %zu\n", b, addr, es,
				j == n ? (size_t)0 : j + 1);
			return 1;
		}
		checked++;
	}
	printf("%zu\n", checked);
	free(t);
	return 0;
}
