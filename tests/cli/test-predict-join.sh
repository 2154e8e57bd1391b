# locprof predict fit joins runs of one program built once per size (-DN=...)
# by source location, as it joins runs of one binary by code address; it
# refuses runs of unrelated programs, naming the runs and pcs.
. "$(dirname "$0")/lib.sh"
command -v clang >/dev/null || { echo "SKIP: no clang" >&2; exit 0; }
K=$LOCPROF_SRC/tests/cli/predict-kernels

# the 3-D stencil: one binary per size, and one for every size
for n in 10 12 14 16 18 32; do
	"$LOCPROF" cc --no-lto -O2 -g -DN=$n -o "$T/st3-$n" "$K/stencil3d.c" || fail "cannot build the stencil"
done
"$LOCPROF" cc --no-lto -O2 -g -o "$T/st3" "$K/stencil3d.c" || fail "cannot build the stencil"
for n in 10 12 14 16 18; do
	expect_status 0 "$LOCPROF" predict collect --size $n -o "$T/ct" -- "$T/st3-$n"
	expect_status 0 "$LOCPROF" predict collect --size $n -o "$T/rt" -- "$T/st3" $n
done
head -1 "$T/ct/size-10.xrun" | grep -qx '# locprof xpred run v2' || fail "run files are not version 2"
grep -qE '^src [0-9]+ R stencil3d\.c:[0-9]+:[0-9]+' "$T/ct/size-10.xrun" || fail "no source location in the run file"
grep -qE '^module 0 [^ ]+ [0-9a-f]+' "$T/ct/size-10.xrun" || fail "no binary identity in the run file"

expect_status 0 "$LOCPROF" predict fit "$T/ct"
expect_grep "^joined ([0-9]+) of \1 groups \(100.0% of the references\) across 5 runs of 5 binaries by source location" "$T/out"
expect_status 0 "$LOCPROF" predict fit "$T/rt"
expect_grep "^joined ([0-9]+) of \1 groups .* across 5 runs of 1 binary by code address" "$T/out"

# the references predicted at 32 are those of the trace at 32 (the two
# builds' code differs: with N known the compiler makes other loops of the
# initialisation, so their predictions are compared with their own traces)
"$LOCPROF" predict at "$T/ct" --size 32 --machine itanium2 --format csv | grep ',program,.*,L1,' | cut -d, -f6,8 >"$T/ct.csv"
"$LOCPROF" record -q --mode trace -o "$T/t32.lpt" -- "$T/st3-32" >/dev/null
sim=$("$LOCPROF" simulate "$T/t32.lpt" --cache 1K:full:64 | head -1 | sed -E 's/.*: ([0-9]+) references/\1/')
pred=$(head -1 "$T/ct.csv" | cut -d, -f2)
awk -v p="$pred" -v s="$sim" 'BEGIN { exit !(p > 0.99 * s && p < 1.01 * s) }' ||
	fail "predicted $pred references at 32, the trace has $sim"

# fitted at 10..18, the stencil's planes (2 arrays of 2.6K at 18) never
# outgrow the Itanium2's 16K L1, and its data span 6 pages of 16K: at 32 the
# L1 and the first TLB are flagged with their reasons, in words, in every
# format; no flagged level reads "ok"
expect_status 0 "$LOCPROF" predict at "$T/ct" --size 32 --machine itanium2
expect_grep '^L1 .* crosses' "$T/out"
expect_grep '^L1: not to be trusted: extrapolates past its capacity \(256 lines of 64B\)' "$T/out"
expect_grep "^TLB1: not to be trusted: .*the fitted runs' data span [0-9.]+ blocks of 16384B at the largest fitted size \(P = 18\), too few for their counts to follow the size \([0-9.]+ at P = 32, past its capacity\); collect sizes where they span 64 or more \(the program's data do from P = [0-9]+\)" "$T/out"
expect_status 0 "$LOCPROF" predict at "$T/ct" --size 32 --machine itanium2 --format csv
expect_grep '^size,.*,fa_lo,fa_hi,check,reason$' "$T/out"
expect_grep '^32,program,-1,"","",L1,.*,crosses[a-z+]*,"extrapolates past its capacity' "$T/out"
awk -F, 'NR > 1 && $18 !~ /^(ok|crosses|unfit|edge|few|shape|conflicts|unstable|fold|outgrown|diverges)(\+(unfit|edge|few|shape|conflicts|unstable|fold|outgrown|diverges))*$/ { bad = 1; print } END { exit bad }' "$T/out" ||
	fail "a csv row without its check"
expect_status 0 "$LOCPROF" predict at "$T/ct" --size 32 --machine itanium2 --format json
grep -o '{"level": "L1"[^}]*}' "$T/out" | awk 'NR == 1' | grep -q '"check": "crosses[a-z+]*", "reason": "extrapolates' ||
	fail "the JSON L1 of the program has no check"
# with the runs at hand (a directory), the model fitted without the
# largest size (10..16) is compared at 32: its L2 differs by more than
# 10%, in words; given the model file alone there is no such check
expect_status 0 "$LOCPROF" predict at "$T/ct" --size 32 --machine itanium2
expect_grep "^L2: not to be trusted: .*fitted without its largest size \(up to P = 16\), the model predicts [0-9.e+]+ misses \([-+][0-9]+%\): the fitted sizes do not pin down how its reuses grow" "$T/out"
expect_status 0 "$LOCPROF" predict at "$T/ct/model.xmodel" --size 32 --machine itanium2
grep -q 'unstable\|fitted without its largest size' "$T/out" && fail "a model file alone was checked by a refit"
# inside the fitted sizes nothing crosses
expect_status 0 "$LOCPROF" predict at "$T/ct" --size 16 --machine itanium2 --format csv
grep ',program,' "$T/out" | grep -q crosses && fail "a level is flagged inside the fitted sizes"

# one binary whose code differs with the size: the matrix multiply's
# vectorised loop runs its scalar remainder at 12 and 20, not at 16, and a
# quarter of the references at 12 are at pcs that 16 does not run; by code
# address they have no counterpart, by source location they are the same
# accesses, and fit joins them so
"$LOCPROF" cc --no-lto -O2 -g -o "$T/gemm" "$LOCPROF_SRC/bench/kernels/gemm.c" || fail "cannot build gemm"
for n in 12 16 20; do
	expect_status 0 "$LOCPROF" predict collect -q --size $n -o "$T/gemm-runs" -- "$T/gemm" $n
done
expect_status 0 "$LOCPROF" predict fit "$T/gemm-runs"
expect_grep "^joined ([0-9]+) of \1 groups \(100.0% of the references\) across 3 runs of 1 binary by source location" "$T/out"

# unrelated programs do not join: one clear line, naming runs and pcs
cat >"$T/other.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv)
{
	int n = atoi(argv[1]);
	long *v = malloc(sizeof(long) * n), s = 0;
	for (int i = 0; i < n; i++)
		v[i] = i * 3;
	for (int i = 0; i < n; i += 2)
		s += v[i] * v[(i * 7) % n];
	printf("%ld\n", s);
	return 0;
}
C
"$LOCPROF" cc --no-lto -O2 -g -o "$T/other" "$T/other.c" || fail "cannot build the other program"
mkdir "$T/mix"
cp "$T/ct/size-10.xrun" "$T/ct/size-12.xrun" "$T/mix/"
expect_status 0 "$LOCPROF" predict collect --size 3000 -o "$T/mix" -- "$T/other" 3000
expect_status 1 "$LOCPROF" predict fit "$T/mix"
expect_one_line "$T/err"
expect_grep "cannot fit: the runs do not join: 100% of the references of '.*size-(10|12|3000).xrun' \(.*(st3-1[02]|other)\) are at pcs with no counterpart in '.*size-(10|12|3000).xrun' .*by source location: 0x[0-9a-f]+ (stencil3d|other).c:[0-9]+:[0-9]+" "$T/err"

# a run file of version 1 (no source locations) of another binary cannot join
mkdir "$T/v1"
cp "$T/ct/size-10.xrun" "$T/ct/size-12.xrun" "$T/v1/"
sed -e '1s/v2/v1/' -e '/^src /d' -e 's/^\(module [0-9]* [^ ]*\) .*/\1/' "$T/ct/size-14.xrun" >"$T/v1/size-14.xrun"
expect_status 1 "$LOCPROF" predict fit "$T/v1"
expect_one_line "$T/err"
expect_grep "ran different binaries, which join by source location, but '.*size-14.xrun' is a run file of version 1" "$T/err"
# the same file read alone with runs of its own binary still fits, by address
mkdir "$T/v1b"
for n in 10 12 14; do
	sed -e '1s/v2/v1/' -e '/^src /d' -e 's/^\(module [0-9]* [^ ]*\) .*/\1/' "$T/rt/size-$n.xrun" >"$T/v1b/size-$n.xrun"
done
expect_status 0 "$LOCPROF" predict fit "$T/v1b"
expect_grep "^joined ([0-9]+) of \1 groups .* across 3 runs of 1 binary by code address" "$T/out"
echo PASS
