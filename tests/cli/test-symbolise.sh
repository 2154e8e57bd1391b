# Symbols end to end: a program built by `locprof cc` (clang, -g, with and
# without LTO) is recorded, and `locprof report` (top pcs, from the
# profile's mappings) and `locprof simulate --attribute` (from the trace's
# mappings, no --binary) name its functions and source lines. The program
# is built here, so that the test does not depend on the examples' build.
. "$(dirname "$0")/lib.sh"
command -v clang >/dev/null || { echo "SKIP: no clang" >&2; exit 0; }

cat >"$T/sweep.c" <<'C'
#include <stdlib.h>
double g_table[1 << 16];
static double walk(int reps)
{
	double s = 0;
	for (int r = 0; r < reps; r++)
		for (int i = 0; i < (1 << 16); i += 8)
			s += g_table[i]; /* line 8: the misses */
	return s;
}
int main(int argc, char **argv)
{
	long *p = malloc(4096 * sizeof(long)); /* line 13: the heap block */
	for (int i = 0; i < 4096; i++)
		p[i] = i;
	return (int)walk(argc > 1 ? atoi(argv[1]) : 20) + (int)p[7] - 7;
}
C
for lto in --lto --no-lto; do
	"$LOCPROF" cc $lto -O2 -g -o "$T/sweep$lto" "$T/sweep.c" || fail "cannot build sweep $lto"

	# report: the pcs missing in a 32K cache are in walk, at line 8, and
	# where walk is inlined, in main at the line of the call (16)
	expect_status 0 "$LOCPROF" record -q -o "$T/s.lpp" --rate 0.01 -- "$T/sweep$lto"
	expect_status 0 "$LOCPROF" report "$T/s.lpp" --policy lru --top 3
	expect_grep '^ +0x[0-9a-f]+ +[0-9]+ +\[[0-9]+, [0-9]+\] +[0-9.]+% +(walk|main) \(sweep\.c:8\)( in main \(sweep\.c:16\))?$' "$T/out"
	if grep -qE '% +walk ' "$T/out"; then
		expect_grep '% +walk \(sweep\.c:8\) in main \(sweep\.c:16\)$' "$T/out"
	fi

	# simulate --attribute from the trace's own mappings: functions, lines
	# and the global and heap objects by name
	expect_status 0 "$LOCPROF" record -q --mode trace -o "$T/s.lpt" -- "$T/sweep$lto" 2
	expect_status 0 "$LOCPROF" simulate "$T/s.lpt" --cache 32K:8:64 --attribute --format csv
	expect_grep '^pairs,g_table,(walk|main),' "$T/out"
	expect_grep '^objects,heap@main \(sweep\.c:13(:[0-9]+)?\),' "$T/out"
	expect_grep '^pcs,,(walk|main),0x[0-9a-f]+,sweep\.c:8( in main \(sweep\.c:16\))?,' "$T/out"
done

# a binary rebuilt since the run: no names from it (its pcs as addresses),
# one warning, still exit 0 (the recorder stores each mapping's build-id);
# a binary removed since: the same, said so
"$LOCPROF" cc -O2 -g -o "$T/moved" "$T/sweep.c" || fail "cannot build moved"
expect_status 0 "$LOCPROF" record -q -r 1e-3 -o "$T/moved.lpp" -- "$T/moved" 4
expect_status 0 "$LOCPROF" report "$T/moved.lpp" --sizes 32K --top 3
[ -s "$T/err" ] && fail "report warned before the rebuild: $(cat "$T/err")"
expect_grep '% +walk \(sweep\.c:8\)' "$T/out"
printf 'int main(void) { return 0; }\n' >"$T/other.c"
"$LOCPROF" cc -O0 -g -o "$T/moved" "$T/other.c" || fail "cannot rebuild moved"
expect_status 0 "$LOCPROF" report "$T/moved.lpp" --sizes 32K --top 3
expect_grep "^locprof: warning: 1 file changed since the run \(build-id differs\), no names from '$T/moved'$" "$T/err"
grep -q 'walk\|sweep\.c' "$T/out" && fail "names from the rebuilt binary"
rm -f "$T/moved"
expect_status 0 "$LOCPROF" report "$T/moved.lpp" --sizes 32K --top 3
expect_grep "^locprof: warning: 1 file of the run no longer there, no names from '$T/moved'$" "$T/err"
