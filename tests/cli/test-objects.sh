# Data objects of a live profile: locprof record stores the runtime's
# allocation events in the .lpp (ALOC), locprof dump prints them, and
# locprof report charges the misses to the heap block's allocation site
# and to the global variable by its symbol.
. "$(dirname "$0")/lib.sh"
command -v clang >/dev/null || { echo "SKIP: no clang" >&2; exit 0; }

cat >"$T/objs.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#define N (1 << 16)
double g_table[N]; /* 512 KiB, swept with a stride: misses in 32K */

int main(void)
{
	double *heap = malloc(N * sizeof(double)), s = 0;
	for (int r = 0; r < 10; r++)
		for (int i = 0; i < N; i++) {
			g_table[(i * 8 + r) & (N - 1)] += i;
			heap[(i * 8) & (N - 1)] += g_table[i & 7];
		}
	for (int i = 0; i < N; i++)
		s += heap[i];
	printf("%g\n", s);
	free(heap);
	return 0;
}
C
"$LOCPROF" cc -O1 -g -o "$T/objs" "$T/objs.c" || fail "cannot build objs"
expect_status 0 "$LOCPROF" record -q -o "$T/o.lpp" --rate 0.01 -- "$T/objs"
expect_status 0 "$LOCPROF" dump "$T/o.lpp"
expect_grep "^allocation events: [0-9]+ \([1-9][0-9]* allocs, [1-9][0-9]* frees\)$" "$T/out"
# the 512 KiB block, with its time (the thread's line accesses before
# the call), and its free after it
expect_grep "^alloc [0-9]+ 0 0x[0-9a-f]+ 524288 0x[0-9a-f]+$" "$T/out"
awk '$1 == "alloc" && $5 == 524288 { a = $4; t0 = $2 } $1 == "free" && $4 == a { t1 = $2 }
     END { exit !(t0 != "" && t1 + 0 > t0 + 0) }' "$T/out" || fail "the block's free is not after its allocation"
expect_status 0 "$LOCPROF" report "$T/o.lpp" --at 32K --top 5 --policy lru
expect_grep "^top data objects by predicted LRU misses at 32K" "$T/out"
expect_grep "^ +g_table +[0-9]+ +\[[0-9]+, [0-9]+\] +[0-9.]+%$" "$T/out"
expect_grep "^ +heap@main \(objs\.c:[0-9]+\) +[0-9]+ +\[[0-9]+, [0-9]+\] +[0-9.]+%$" "$T/out"

# An address freed and allocated again: the misses of the first block's
# accesses are the first block's (the events' times tell the two apart),
# with the inst and the valgrind backend. table (line 11) is read at
# random, 96 KiB against 32K, then freed; later (line 15), the same size,
# gets the same address and is read once in order.
cat >"$T/reuse.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static unsigned rnd(unsigned *s) { return (*s = *s * 1103515245u + 12345u) >> 8; }
int main(void)
{
	size_t n = 96 * 1024 / 8;
	unsigned seed = 1;
	long sum = 0, *table, *later;

	table = malloc(n * 8);
	memset(table, 0, n * 8);
	for (long i = 0; i < 2000000; i++)
		sum += table[rnd(&seed) % n]++;
	free(table);
	later = malloc(n * 8);
	memset(later, 1, n * 8);
	for (size_t i = 0; i < n; i += 8)
		sum += later[i];
	printf("%d %ld\n", table == later, sum);
	free(later);
	return 0;
}
C
reuse_check() { # label, profile
	expect_status 0 "$LOCPROF" report "$2" --at 32K --top 5 --policy lru
	sed -n '/^top data objects/,/^$/p' "$T/out" >"$T/objects"
	awk '$1 == "heap@main" && $2 == "(reuse.c:11)" { a = $3 } $1 == "heap@main" && $2 == "(reuse.c:15)" { b = $3 }
	     END { exit !(a > 1000000 && b + 0 < a / 20) }' "$T/objects" ||
		{ cat "$T/objects" >&2; fail "$1: the misses of the freed table went elsewhere"; }
}
"$LOCPROF" cc -O1 -g -o "$T/reuse" "$T/reuse.c" || fail "cannot build reuse.c"
expect_status 0 "$LOCPROF" record -q -o "$T/reuse.lpp" --rate 0.01 -- "$T/reuse"
# the program prints 1 when later got table's address: glibc's malloc and
# valgrind's both give it (without it the test would check nothing)
grep -q '^1 ' "$T/out" || fail "malloc gave the second block another address: nothing to tell apart"
reuse_check inst "$T/reuse.lpp"
if command -v gcc >/dev/null; then
	gcc -O1 -g -o "$T/reuse-gcc" "$T/reuse.c" || fail "gcc cannot build reuse.c"
	expect_status 0 "$LOCPROF" record -q --backend valgrind -o "$T/reuse-vg.lpp" --rate 0.01 -- "$T/reuse-gcc"
	grep -q '^1 ' "$T/out" || fail "valgrind's malloc gave the second block another address: nothing to tell apart"
	reuse_check valgrind "$T/reuse-vg.lpp"
fi
# The other way round: a block written once and freed (line 7), whose
# address the next malloc gives to a block swept over and over (line 14)
# beside a 1 MiB sweep: the first block's last accesses are reused by the
# second's first sweep, and those misses are the second's. Charged to the
# first block, they were 1 400 of its misses where simulation has none.
cat >"$T/handover.c" <<'C'
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#define N (64 * 1024)
int main(void)
{
	volatile char *a = malloc(N);
	char *b, *f;
	long s = 0;
	uintptr_t at = (uintptr_t)a;
	for (size_t i = 0; i < N; i += 8)
		a[i] = (char)i;
	free((void *)a);
	b = malloc(N);
	f = malloc(4u << 20);
	for (size_t i = 0; i < (4u << 20); i += 8)
		f[i] = (char)i;
	for (int r = 0; r < 20; r++) {
		for (size_t i = 0; i < N; i += 8)
			s += b[i];
		for (size_t i = 0; i < (1u << 20); i += 8)
			s += f[i];
	}
	printf("%d %ld\n", at == (uintptr_t)b, s);
	return 0;
}
C
"$LOCPROF" cc -O1 -g -o "$T/handover" "$T/handover.c" || fail "cannot build handover.c"
expect_status 0 "$LOCPROF" record -q -o "$T/handover.lpp" --rate 0.01 -- "$T/handover"
grep -q '^1 ' "$T/out" || fail "malloc gave the second block another address: nothing to tell apart"
expect_status 0 "$LOCPROF" report "$T/handover.lpp" --at 32K --top 5 --policy lru
sed -n '/^top data objects/,/^$/p' "$T/out" >"$T/objects"
awk '$1 == "heap@main" && $2 == "(handover.c:7)" { a = $3 } $1 == "heap@main" && $2 == "(handover.c:14)" { b = $3 }
     END { exit !(b > 5000 && a + 0 < b / 50) }' "$T/objects" ||
	{ cat "$T/objects" >&2; fail "the misses of the block swept after the free went to the freed block"; }
echo ok
