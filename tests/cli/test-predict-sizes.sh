# locprof predict collect --sizes: a list of sizes in one command ('{}' is
# the size, in the arguments and in --build), and --sizes auto, which moves
# the sizes up until the checks crosses and few pass at 8x the largest.
. "$(dirname "$0")/lib.sh"
command -v clang >/dev/null || { echo "SKIP: no clang" >&2; exit 0; }
K=$LOCPROF_SRC/tests/cli/predict-kernels
"$LOCPROF" cc --no-lto -O2 -g -o "$T/mv" "$K/mv.c" || fail "cannot build the test program"

# a list: one run per size, the sizes printed
expect_status 0 "$LOCPROF" predict collect -q --sizes 16,20,24 -o "$T/list" -- "$T/mv" '{}'
expect_grep '^16 20 24$' "$T/out"
for n in 16 20 24; do [ -f "$T/list/size-$n.xrun" ] || fail "no run of size $n"; done
expect_grep '^size 20$' "$T/list/size-20.xrun"

# one binary per size, built by --build
expect_status 0 "$LOCPROF" predict collect -q --sizes 16,20 -o "$T/ct" \
	--build "\"$LOCPROF\" cc --no-lto -O2 -g -DN={} -o \"$T/mv-{}\" \"$K/mv.c\"" -- "$T/mv-{}"
[ -x "$T/mv-20" ] && [ -f "$T/ct/size-20.xrun" ] || fail "--build did not build and collect size 20"

# auto: a TLB of 4K pages wants the data to span 64 pages (N >= 182 for
# the 8N^2 bytes of A) at the largest fitted size; started at 8..16
cat >"$T/tiny.machine" <<'M'
name tiny
cache L1 1K 2 32
tlb TLB 16 4K
M
expect_status 0 "$LOCPROF" predict collect --sizes auto --start 8 --count 3 --span 2 --multiple 2 \
	--machine "$T/tiny.machine" -o "$T/auto" -- "$T/mv" '{}'
read -r -a got <"$T/out"
[ ${#got[@]} -eq 3 ] || fail "auto printed '${got[*]}', want 3 sizes"
[ "${got[2]}" -ge 182 ] || fail "auto stopped at ${got[2]}: the TLB's 64 pages need N >= 182"
expect_grep 'sizes 8 \.\. 16 \(3\): at P = 128, .*TLB [a-z+]*few' "$T/err"
# only the final sizes' runs are left
[ "$(ls "$T/auto" | grep -c '\.xrun$')" -eq 3 ] || { ls "$T/auto" >&2; fail "runs of earlier rounds left"; }
expect_status 0 "$LOCPROF" predict fit -q "$T/auto"
expect_status 0 "$LOCPROF" predict at "$T/auto" --size $((got[2] * 8)) --machine "$T/tiny.machine" --format csv
awk -F, '$2 == "program" && $6 == "TLB" && $18 ~ /few/ { bad = 1 } END { exit bad }' "$T/out" ||
	fail "TLB still few after auto"

# a budget that allows no larger size stops at the first sizes
expect_status 0 "$LOCPROF" predict collect -q --sizes auto --start 8 --count 3 --span 2 --budget 10 \
	--machine "$T/tiny.machine" -o "$T/budget" -- "$T/mv" '{}'
expect_grep '^8 12 16$' "$T/out"

# refusals, before anything is collected
expect_status 2 "$LOCPROF" predict collect --sizes auto -o "$T/x" -- "$T/mv" '{}'
expect_grep 'error: --sizes auto needs --start P' "$T/err"
expect_status 2 "$LOCPROF" predict collect --sizes 8,x -o "$T/x" -- "$T/mv" '{}'
expect_grep "error: bad --sizes '8,x'" "$T/err"
expect_status 2 "$LOCPROF" predict collect --sizes 8 --size 8 -o "$T/x" -- "$T/mv" '{}'
expect_grep 'error: give --size or --sizes, not both' "$T/err"
[ ! -e "$T/x/size-8.xrun" ] || fail "a refused command collected"
echo ok
