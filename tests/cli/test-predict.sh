# locprof predict: collect, fit and predict on a small real program with a
# hand-unrolled loop (the paper's A[i,k] / A[i,k+1] case), checked against
# locprof simulate; file formats, plots and refusals.
. "$(dirname "$0")/lib.sh"
command -v clang >/dev/null || { echo "SKIP: no clang" >&2; exit 0; }

# C[i][j] = sum_k A[i][k] B[k][j], the k loop unrolled by hand: A[i][k] and
# A[i][k+1] are two loads of one loop with equal strides, so one group;
# likewise B[k][j] and B[k+1][j]. N must be even.
cat >"$T/unroll.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv)
{
	int n = atoi(argv[1]);
	double *a = malloc(sizeof(double) * n * n), *b = malloc(sizeof(double) * n * n);
	double *c = malloc(sizeof(double) * n * n), t = 0;
	for (int i = 0; i < n * n; i++)
		a[i] = b[i] = i % 3;
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++) {
			double s = 0;
			for (int k = 0; k < n; k += 2) {
				s += a[i * n + k] *         /* A0 */
				     b[k * n + j];          /* B0 */
				s += a[i * n + k + 1] *     /* A1 */
				     b[(k + 1) * n + j];    /* B1 */
			}
			c[i * n + j] = s;
		}
	for (int i = 0; i < n * n; i++)
		t += c[i];
	printf("%g\n", t);
	return 0;
}
C
"$LOCPROF" cc --no-lto -O1 -g -o "$T/unroll" "$T/unroll.c" || fail "cannot build the test program"
line() { grep -n "/\* $1 \*/" "$T/unroll.c" | cut -d: -f1; }
A0=$(line A0) A1=$(line A1) B0=$(line B0) B1=$(line B1)

cat >"$T/small.machine" <<'M'
# a small hierarchy, so that sizes of a few dozen already miss
name small
cache L1 2K 2 32
cache L2 32K 8 64
tlb TLB 8 1K
M

D=$T/runs
for n in 16 24 32 40 48; do
	expect_status 0 "$LOCPROF" predict collect --size $n -o "$D" --page 1K,4K -- "$T/unroll" $n
	expect_grep "size-$n.xrun: size $n, .* references, .* pcs .*loops, .* groups" "$T/err"
done
[ -f "$D/size-48.xrun" ] || fail "no run file"
ls -a "$D" | grep -q '\.lpt' && fail "the temporary trace was left behind"

# 1. grouping: the pcs of the lines of A[i][k] and A[i][k+1] are in one
#    group of the k loop, with the same strides (16 bytes per iteration,
#    0 when j moves; the i loop is a perfect nest around j, so its stride
#    is not seen: '?'); the B loads too (2N*8 bytes, then 8)
ga=$(awk -v l="unroll.c:$A0" '$1 == "pc" && $9 == l { print $6 }' "$D/size-48.xrun" | sort -u)
gb=$(awk -v l="unroll.c:$A1" '$1 == "pc" && $9 == l { print $6 }' "$D/size-48.xrun" | sort -u)
[ -n "$ga" ] && [ "$ga" = "$gb" ] || fail "A[i][k] (group '$ga') and A[i][k+1] (group '$gb') are not one group"
[ "$(echo "$ga" | wc -l)" -eq 1 ] || fail "the A loads are split over groups: $ga"
awk -v g="$ga" '$1 == "pc" && $6 == g { print $8 }' "$D/size-48.xrun" | sort -u >"$T/strides"
[ "$(cat "$T/strides")" = "16,0,?" ] || fail "strides of the A group: $(cat "$T/strides")"
awk -v a="unroll.c:$B0" -v b="unroll.c:$B1" '$1 == "pc" && ($9 == a || $9 == b) { print $6, $8 }' "$D/size-48.xrun" | sort -u >"$T/bgroup"
[ "$(wc -l <"$T/bgroup")" -eq 1 ] && grep -q ' 768,8,?$' "$T/bgroup" || fail "B loads: $(cat "$T/bgroup")"

# 2. fit: the groups with their source lines
expect_status 0 "$LOCPROF" predict fit "$D"
expect_grep '^model .*model.xmodel: 5 sizes \(16 \.\. 48\)' "$T/out"
expect_grep "^[0-9]+ +main +unroll.c:$A0-$A1 +16,0,\\? +2 " "$T/out"
expect_grep '^references: ' "$T/out"
expect_status 0 "$LOCPROF" predict fit "$D" -v --block 32
expect_grep '^  accesses ' "$T/out"
expect_grep 'count .* at d = ' "$T/out"
# walks (strided placement): each pc's first address and runs of its
# innermost stride; the B pair interleaves (16N bytes each, 8N apart) into
# one walk of stride 8N bytes and N accesses per walk, the A pair into one
# of 8 bytes (a row)
awk '$1 == "walk" && $4 > 0' "$D/size-48.xrun" | grep -c . >/dev/null || fail "no walks in the run file"
expect_grep '^  walk +stride 8\*P bytes, 1\*P accesses' "$T/out"
expect_grep '^  walk +stride 8 bytes, 1\*P accesses' "$T/out"

# 3. predict at twice the largest size and compare with a simulation of the
#    same hierarchy (fully associative and real geometry) on the real trace.
#    The binomial model assumes lines spread over the sets at random; a
#    column walk spreads them evenly (or, at a power-of-two stride, into a
#    few sets). Its error is small only when distances are far from the
#    capacity relative to the ways: hence an 8-way L2, and P = 100 rather
#    than 96 (a row of 96 doubles is 12 lines: 16 of 64 sets).
P=100
expect_status 0 "$LOCPROF" record -q --mode trace -o "$T/big.lpt" -- "$T/unroll" $P
"$LOCPROF" simulate "$T/big.lpt" --level 2K:full:32 --level 32K:full:64 --format csv | tail -n +2 | cut -d, -f4 >"$T/fa"
"$LOCPROF" simulate "$T/big.lpt" --level 2K:2:32 --level 32K:8:64 --format csv | tail -n +2 | cut -d, -f4 >"$T/sa"
"$LOCPROF" simulate "$T/big.lpt" --cache 8K:full:1K --format csv | tail -n +2 | cut -d, -f4 >"$T/tlb"
{
	echo "size,level,fa_misses,sa_misses"
	echo "$P,L1,$(sed -n 1p "$T/fa"),$(sed -n 1p "$T/sa")"
	echo "$P,L2,$(sed -n 2p "$T/fa"),$(sed -n 2p "$T/sa")"
	echo "$P,TLB,$(cat "$T/tlb"),$(cat "$T/tlb")"
} >"$T/measured.csv"
expect_status 0 "$LOCPROF" predict at "$D" --size $P --machine "$T/small.machine" --format csv
grep "^$P,program," "$T/out" >"$T/pred" || fail "no program rows"
# the older names, `locprof model` and its subcommand `predict`, run the same
cp "$T/out" "$T/new-name"
expect_status 0 "$LOCPROF" model predict "$D" --size $P --machine "$T/small.machine" --format csv
cmp -s "$T/out" "$T/new-name" || fail "'locprof model predict' differs from 'locprof predict at'"
while IFS=, read -r size level fa sa; do
	[ "$size" = size ] && continue
	read -r pfa psa < <(awk -F, -v l="$level" '$6 == l { print $10, $11 }' "$T/pred")
	awk -v p="$pfa" -v m="$fa" -v l="$level" -v k=fa 'BEGIN { e = (p - m) / m; if (e < 0) e = -e;
		if (e > 0.15) { printf "%s %s: predicted %g, simulated %g\n", l, k, p, m; exit 1 } }' ||
		fail "fully-associative prediction off by more than 15%"
	awk -v p="$psa" -v m="$sa" -v l="$level" -v k=sa 'BEGIN { e = (p - m) / m; if (e < 0) e = -e;
		if (e > 0.25) { printf "%s %s: predicted %g, simulated %g\n", l, k, p, m; exit 1 } }' ||
		fail "set-associative prediction off by more than 25%"
done <"$T/measured.csv"

# 4. formats and plots
expect_status 0 "$LOCPROF" predict at "$D" --size 64,$P --machine "$T/small.machine" --measured "$T/measured.csv" \
	--work 'P^3' --svg "$T/plot" --hist 64
expect_grep "^== P = $P: " "$T/out"
expect_grep '^level +fa_pred +fa_meas +fa_err%' "$T/out"
expect_grep '^TLB +8 entries full 1K ' "$T/out"
expect_grep "^group [0-9]+ \\(main unroll.c:$A0-$A1\\): cold " "$T/out"
# --top 1: one function, one loop and one group (the busiest), the rest
# counted in a line each
expect_status 0 "$LOCPROF" predict at "$D" --size $P --machine "$T/small.machine" --top 1
for t in function loop group; do
	awk -v t="$t" '$1 == t && $2 == "where" { on = 1; next } on && /^$/ { exit } on && !/^\(/ { print $1 }' "$T/out" |
		sort -u | wc -l | grep -qx 1 || { cat "$T/out" >&2; fail "predict at --top 1: not one $t"; }
done
for l in L1 L2 TLB; do
	grep -q '<svg' "$T/plot-$l.svg" && grep -q 'fitted' "$T/plot-$l.svg" || fail "bad plot $l"
	! command -v rsvg-convert >/dev/null || rsvg-convert "$T/plot-$l.svg" -o "$T/plot-$l.png" || fail "plot $l does not render"
done
expect_status 0 "$LOCPROF" predict at "$D" --size $P --machine "$T/small.machine" --format json
expect_grep '"machine": "small"' "$T/out"
expect_grep '"groups": \[' "$T/out"
python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$T/out" 2>/dev/null ||
	! command -v python3 >/dev/null || fail "predict --format json is not JSON"
# a unit of work that is 0 at P: misses per work are not numbers, and the
# JSON says null where it would say inf
expect_status 0 "$LOCPROF" predict at "$D" --size $P --machine "$T/small.machine" --format json --work "P-$P"
grep -qiE '(: |\[)-?(inf|nan)' "$T/out" && fail "predict --format json writes inf or nan"
expect_grep '"fa_per_work": null' "$T/out"
python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$T/out" 2>/dev/null ||
	! command -v python3 >/dev/null || fail "predict --format json with work 0 is not JSON"

# --cache: levels of the shared cache SPEC, the same predictions as the
# machine file's levels of the same geometry
expect_status 0 "$LOCPROF" predict at "$D" --size $P --machine "$T/small.machine" --format csv
grep "^$P,program,.*,L[12]," "$T/out" | cut -d, -f7-11 >"$T/by-machine"
expect_status 0 "$LOCPROF" predict at "$D" --size $P --cache 2K:2:32 --cache 32K:8:64 --format csv
grep "^$P,program,.*,2K:2:32,\|^$P,program,.*,32K:8:64," "$T/out" | cut -d, -f7-11 >"$T/by-cache"
[ -s "$T/by-cache" ] && cmp -s "$T/by-machine" "$T/by-cache" ||
	fail "predict --cache differs from the machine file's levels: $(cat "$T/by-machine" "$T/by-cache")"
expect_status 2 "$LOCPROF" predict at "$D" --size $P --cache 2K:2:32:fifo
expect_grep "predictions are of LRU caches, not fifo" "$T/err"
expect_status 2 "$LOCPROF" predict at "$D" --size $P --cache 2K:2:32 --machine itanium2
expect_grep "give one or the other" "$T/err"
expect_status 2 "$LOCPROF" predict at "$D" --size $P --cache 2K:3:32
expect_grep "bad cache '2K:3:32'" "$T/err"

# 5. a trace instead of a program: the same groups
expect_status 0 "$LOCPROF" record -q --mode trace -o "$T/t24.txt" -- "$T/unroll" 24
expect_status 0 "$LOCPROF" predict collect --size 24 -o "$T/tr" --trace "$T/t24.txt" --binary "$T/unroll"
expect_grep 'pcs \(.* in the binary\)' "$T/err"
cmp <(awk '$1 == "pc" { print $3, $6 }' "$D/size-24.xrun") <(awk '$1 == "pc" { print $3, $6 }' "$T/tr/size-24.xrun") >/dev/null ||
	fail "a trace and a live run give different groups"

# 6. refusals: one line each
expect_status 2 "$LOCPROF" predict collect -o "$T/x" -- "$T/unroll" 8
expect_one_line <(grep -v '^locprof: see' "$T/err")
expect_status 1 "$LOCPROF" predict fit "$T/tr"
expect_grep "holds 1 run; a model needs 3 or more sizes" "$T/err"
expect_one_line "$T/err"
expect_status 1 "$LOCPROF" predict at "$D" --size 64 --machine r12000
expect_grep "level TLB of r12000 has 32768-byte blocks, which were not collected" "$T/err"
expect_one_line "$T/err"
printf 'cache L1 2K 3 32\n' >"$T/bad.machine"
expect_status 2 "$LOCPROF" predict at "$D" --size 64 --machine "$T/bad.machine"
expect_grep "do not split into sets of 3 ways" "$T/err"
expect_status 2 "$LOCPROF" predict at "$D" --size -3 --machine itanium2
expect_status 1 "$LOCPROF" predict at "$T/nonexistent" --size 64
expect_one_line "$T/err"
head -c 300 "$D/model.xmodel" >"$T/cut.xmodel"
expect_status 1 "$LOCPROF" predict at "$T/cut.xmodel" --size 64
expect_grep "ends early|malformed" "$T/err"
expect_status 2 "$LOCPROF" predict frobnicate
expect_status 0 "$LOCPROF" help model
expect_grep '^usage: locprof predict collect' "$T/out"
expect_status 0 "$LOCPROF" predict at --help
expect_grep 'measured' "$T/out"
echo ok
