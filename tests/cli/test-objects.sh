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
# the 512 KiB block, time unknown in a live profile
expect_grep "^alloc - [0-9]+ 0x[0-9a-f]+ 524288 0x[0-9a-f]+$" "$T/out"
expect_status 0 "$LOCPROF" report "$T/o.lpp" --at 32K --top 5 --policy lru
expect_grep "^top data objects by predicted LRU misses at 32K" "$T/out"
expect_grep "^ +g_table +[0-9]+ +\[[0-9]+, [0-9]+\] +[0-9.]+%$" "$T/out"
expect_grep "^ +heap@main \(objs\.c:[0-9]+\) +[0-9]+ +\[[0-9]+, [0-9]+\] +[0-9.]+%$" "$T/out"
