# locprof diff: the matrix multiply of examples/matmul.c, naive (i-j-k)
# against interchanged (i-k-j), each a profile sampled from its trace: the
# curves side by side with B - A as the two reports give them, the inner
# loop's line (24) loses its misses and the interchanged loop's (32) gains
# some, in text, CSV, JSON, and an SVG with both runs. The program is
# built here (locprof cc -g).
. "$(dirname "$0")/lib.sh"
command -v clang >/dev/null || { echo "SKIP: no clang" >&2; exit 0; }

"$LOCPROF" cc -O2 -g -o "$T/matmul" "$LOCPROF_SRC/examples/matmul.c" || fail "cannot build matmul"
for v in naive interchange; do
	expect_status 0 "$LOCPROF" record -q --mode trace -o "$T/$v.lpt" -- "$T/matmul" $v 96
	expect_status 0 "$LOCPROF" sample "$T/$v.lpt" -o "$T/$v.lpp" --rate 0.02
done
opts=(--sizes 4K..64K --cache 16K:8:64 --at 16K)

expect_status 0 "$LOCPROF" diff "$T/naive.lpp" "$T/interchange.lpp" "${opts[@]}" --top 0 --svg "$T/d.svg"
cp "$T/out" "$T/text"
expect_grep "^A: $T/naive.lpp: [0-9]+ samples, [0-9]+ line accesses of 64 bytes$" "$T/text"
expect_grep '^ +size +lru A +lru B +B - A +random A +random B +B - A$' "$T/text"
# line 24 moved down, line 32 up; the signs are those of the columns
awk '/^source lines whose/ { on = 1; next } on && /^$/ { exit } on && $NF ~ /^matmul\.c:/ { print $NF, $1, $3, $5 }' \
	"$T/text" >"$T/lines"
awk '$1 == "matmul.c:24" && $2 > 0 && $4 < 0 { ok = 1 } END { exit !ok }' "$T/lines" ||
	{ cat "$T/lines" >&2; fail "line 24 did not lose misses"; }
awk '$1 == "matmul.c:32" && $3 > 0 && $4 > 0 { ok = 1 } END { exit !ok }' "$T/lines" ||
	{ cat "$T/lines" >&2; fail "line 32 did not gain misses"; }
awk '{ d = $3 - $2 - $4; if (d > 1 || d < -1) exit 1 }' "$T/lines" || fail "B - A is not misses B - misses A"
expect_grep '^ +[0-9]+ +[0-9.]+% +[0-9]+ +[0-9.]+% +[-+][0-9]+ ±[0-9]+[* ]  heap@main \(matmul\.c:12(:[0-9]+)?\)$' "$T/text"
# line 24's change is far outside the sampling noise of either run
expect_grep '^ +[0-9]+ +[0-9.]+% +[0-9]+ +[0-9.]+% +-[0-9]+ ±[0-9]+\*  matmul\.c:24$' "$T/text"

# the curves are each report's own
for v in naive interchange; do
	expect_status 0 "$LOCPROF" report "$T/$v.lpp" "${opts[@]}" --format csv --top 0
	awk -F, '$1 == "statstack" { printf "%s %s\n", $2, $3 }' "$T/out" >"$T/$v.curve"
done
expect_status 0 "$LOCPROF" diff "$T/naive.lpp" "$T/interchange.lpp" "${opts[@]}" --format csv
cp "$T/out" "$T/csv"
expect_grep '^curve,size_bytes,miss_ratio_a,miss_ratio_b,delta,delta_lo,delta_hi$' "$T/csv"
expect_grep '^kind,name,misses_a,misses_b,share_a,share_b,delta,delta_lo,delta_hi$' "$T/csv"
# every change inside its interval, the intervals not empty where there
# are samples
awk -F, '$1 == "statstack" && !($6 <= $5 && $5 <= $7 && $6 < $7) { exit 1 }' "$T/csv" ||
	fail "a curve's change outside its interval"
awk -F, '$1 == "line" && !($8 <= $7 && $7 <= $9 && $8 < $9) { exit 1 }' "$T/csv" ||
	fail "a line's change outside its interval"
expect_grep '^line,matmul\.c:24,[0-9.]+,[0-9.]+,' "$T/csv"
awk -F, '$1 == "statstack" { print $2, $3 }' "$T/csv" | cmp -s - "$T/naive.curve" || fail "A's curve is not naive's report"
awk -F, '$1 == "statstack" { print $2, $4 }' "$T/csv" | cmp -s - "$T/interchange.curve" || fail "B's curve is not interchange's report"
awk -F, '$1 == "statstack" { d = $4 - $3 - $5; if (d > 2e-6 || d < -2e-6) exit 1 }' "$T/csv" || fail "delta is not b - a"

expect_status 0 "$LOCPROF" diff "$T/naive.lpp" "$T/interchange.lpp" "${opts[@]}" --format json
python3 - "$T/out" <<'PY' || fail "diff --format json"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["a"]["profile"].endswith("naive.lpp") and d["b"]["profile"].endswith("interchange.lpp")
lru = [c for c in d["curves"] if c["name"] == "statstack"][0]
assert [p["size"] for p in lru["points"]] == [4096, 8192, 16384, 32768, 65536]
assert all(abs(p["b"] - p["a"] - p["delta"]) < 2e-6 for p in lru["points"])
assert all(p["delta_lo"] <= p["delta"] <= p["delta_hi"] for p in lru["points"])
c = d["caches"][0]
assert c["lru_delta_lo"] <= c["lru_b"] - c["lru_a"] <= c["lru_delta_hi"]
assert d["caches"][0]["cache"] == "16K:8:64"
lines = {l["name"]: l for l in d["hot"]["lines"]}
assert lines["matmul.c:24"]["delta"] < 0 and lines["matmul.c:32"]["delta"] > 0
assert lines["matmul.c:24"]["delta_hi"] < 0 and lines["matmul.c:32"]["delta_lo"] > 0
assert d["hot"]["objects"] and d["hot"]["functions"][0]["name"] == "main"
PY

# the SVG holds both runs' curves
expect_grep 'A lru \(.*naive\.lpp\)' "$T/d.svg"
expect_grep 'B lru \(.*interchange\.lpp\)' "$T/d.svg"

# -o: the output file
expect_status 0 "$LOCPROF" diff "$T/naive.lpp" "$T/interchange.lpp" "${opts[@]}" --format csv -o "$T/d.csv"
[ -s "$T/out" ] && fail "diff -o wrote to standard output"
cmp -s "$T/d.csv" "$T/csv" || fail "diff -o FILE differs from its standard output"

# errors
expect_status 2 "$LOCPROF" diff "$T/naive.lpp"
expect_status 2 "$LOCPROF" diff "$T/naive.lpp" "$T/interchange.lpp" --format xml
expect_status 1 "$LOCPROF" diff "$T/naive.lpp" "$T/none.lpp"
expect_one_line "$T/err"
echo ok
