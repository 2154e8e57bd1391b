/* Check samples against a full trace of the same run: every sample's
 * reference is the trace's reference at its begin time, and its end is the
 * first later reference touching the sampled line (or dangling if none).
 * usage: pmu-check-samples TRACE SAMPLES LINE_SIZE [TID...]: the listed
 * threads are other processes (fork children): their references and the
 * others' never touch the same line. Prints the number of
 * samples checked, exits 1 at the first disagreement. A reference
 * implementation: a plain scan of the trace, nothing shared with the engine. */
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

int main(int argc, char **argv)
{
	FILE *tf, *sf;
	struct ref *t = NULL;
	size_t n = 0, cap = 0, checked = 0;
	char line[512];
	unsigned long long L;

	if (argc < 4 || !(tf = fopen(argv[1], "r")) || !(sf = fopen(argv[2], "r"))) {
		fprintf(stderr, "usage: pmu-check-samples TRACE SAMPLES LINE_SIZE\n");
		return 2;
	}
	L = strtoull(argv[3], NULL, 0);
	for (int i = 4; i < argc && nsep < 16; i++)
		sep[nsep++] = (unsigned)strtoul(argv[i], NULL, 10);
	while (fgets(line, sizeof(line), tf)) {
		struct ref r;

		if (sscanf(line, "%c %llx %llu %llx %u", &r.kind, &r.addr, &r.size, &r.pc, &r.tid) != 5)
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

		if (sscanf(line, "%llu %31s %llx %llx %c %u %15s", &b, es, &pc, &addr, &kind, &tid, how) < 6)
			continue;
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
