# Regions of interest under the valgrind backend (docs/commands/record.md,
# "Regions of interest"): the markers of locprof/roi.h in a program built by
# a plain compiler (client requests), --start-at/--stop-at (C and C++
# names), --skip. Valgrind sees the whole program, start-up included, so
# the kernel's references are the kernel-only program's less those of the
# same program run without its kernel.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/roi/roi-lib.sh"

command -v valgrind >/dev/null || fail "valgrind is not installed (scripts/install-deps)"
[ -x "$LOCPROF_BUILD/src/vg/locprof-amd64-linux" ] || fail "the valgrind tool was not built"
command -v gcc >/dev/null || { echo "SKIP: no gcc" >&2; exit 0; }
src="$LOCPROF_SRC/tests/cli/roi"
cd "$T"
inc="-I$LOCPROF_SRC/include"
gcc -O2 -g $inc -DROI_MARKED -o marked "$src/roi.c"
gcc -O2 -g $inc -DROI_KERNEL_ONLY -o konly "$src/roi.c"
gcc -O2 -g $inc -o plain "$src/roi.c"
./plain 400 >want
rec() { expect_status 0 "$LOCPROF" record --backend valgrind -r 0.005 "$@"; }

rec -o marked.lpp -- ./marked 400
cmp -s out want || fail "the marked program printed '$(cat out)' under valgrind"
expect_grep "^locprof: marked.lpp: region \(locprof_start/locprof_stop\) entered 1 time" err
rec -o konly.lpp -- ./konly 400
grep -q region err && fail "a program without markers got a region: $(cat err)"
rec -o none.lpp -- ./konly -1
rec -o whole.lpp --whole-run -- ./marked 400
kernel=$(( $(profile_refs konly.lpp) - $(profile_refs none.lpp) ))
"$LOCPROF" dump marked.lpp >dump
expect_grep "^region: locprof_start/locprof_stop; entered 1 time" dump
check_region "valgrind, C markers" marked.lpp konly.lpp "$kernel" whole.lpp

rec -o fromto.lpp --start-at kernel --stop-at tail -- ./plain 400
expect_grep "fromto.lpp: region \(from kernel, till tail\) entered 1 time" err
check_region "valgrind, --start-at kernel --stop-at tail" fromto.lpp konly.lpp "$kernel" whole.lpp

# --skip: exactly N references (the tool's segments are cut at the Nth).
# The start-up's references depend on the environment, which --skip adds
# to: the run's total is compared loosely, the region in the kernel exactly.
rec -o skip.lpp --skip 100000 -- ./konly 400
expect_grep "skip.lpp: region \(skip 100000 references\) entered 1 time, 100000 references outside" err
within "$(( $(profile_refs skip.lpp) + 100000 ))" "$(profile_refs konly.lpp)" 0.1 ||
	fail "--skip 100000: $(profile_refs skip.lpp) references of $(profile_refs konly.lpp)"
rec -o skip2.lpp --start-at kernel --stop-at tail --skip 1000 -- ./plain 400
[ "$(profile_refs skip2.lpp)" -eq "$(( $(profile_refs fromto.lpp) - 1000 ))" ] ||
	fail "--start-at kernel --skip 1000: $(profile_refs skip2.lpp) references, $(profile_refs fromto.lpp) without --skip"

# C++: --start-at by the demangled name of a member function
if command -v g++ >/dev/null; then
	g++ -O2 -g $inc -DROI_MARKED -o xmarked "$src/roi.cc"
	g++ -O2 -g $inc -o xplain "$src/roi.cc"
	rec -o xmarked.lpp -- ./xmarked 200
	rec -o xfromto.lpp --start-at 'roi::Grid::relax' --stop-at 'roi::tail' -- ./xplain 200
	expect_grep "xfromto.lpp: region \(from roi::Grid::relax, till roi::tail\) entered 1 time" err
	m=$(profile_refs xmarked.lpp) f=$(profile_refs xfromto.lpp)
	echo "valgrind, C++: markers $m references, --start-at roi::Grid::relax $f"
	within "$f" "$m" 2 || fail "C++: --start-at gives $f references, the markers $m"
	d=$(meandiff xfromto.lpp xmarked.lpp)
	below "$d" 1.5 || fail "C++: --start-at's curve is $d points from the markers'"
fi
# gcc -O2 renames a static function it specialises (mk.constprop.0):
# --start-at takes the source's name
cat >clone.c <<'C'
#include <stdio.h>
#include <stdlib.h>
__attribute__((noinline)) static double *mk(long n) { double *p = malloc(n * sizeof *p); for (long i = 0; i < n; i++) p[i] = i; return p; }
int main(void) { double *a = mk(1 << 14); printf("%g\n", a[77]); return 0; }
C
gcc -O2 -g -o clone clone.c
if nm clone | grep -q ' mk\.constprop\.0$'; then
	rec -o clone.lpp --start-at mk -- ./clone
	expect_grep "clone.lpp: region \(from mk\) entered 1 time" err
fi
echo "ok: regions of interest under the valgrind backend"
