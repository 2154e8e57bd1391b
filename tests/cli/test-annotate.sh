# locprof annotate on the naive matrix multiply of examples/matmul.c: the
# inner-loop line (24) is the hottest, and the ranking of the source lines
# by predicted misses (a profile sampled from the run's trace) matches the
# ranking by simulated misses (simulate --attribute on that trace); a
# profile recorded live and one from the valgrind backend (a gcc build)
# rank line 24 first too. Also:
# the source found through --source-dir, one line when a source file is
# missing, FILE arguments, errors. The program is built here (locprof cc
# -g), so that the test does not depend on the examples' build.
. "$(dirname "$0")/lib.sh"
command -v clang >/dev/null || { echo "SKIP: no clang" >&2; exit 0; }

mkdir -p "$T/src"
cp "$LOCPROF_SRC/examples/matmul.c" "$T/src/matmul.c"
"$LOCPROF" cc -O2 -g -o "$T/matmul" "$T/src/matmul.c" || fail "cannot build matmul"
inner='s \+= a\[i \* n \+ k\] \* b\[k \* n \+ j\];'
grep -nE "$inner" "$T/src/matmul.c" | grep -q '^24:' || fail "examples/matmul.c: the inner loop is not line 24"

# one run, traced; its profile sampled from the trace
expect_status 0 "$LOCPROF" record -q --mode trace -o "$T/m.lpt" -- "$T/matmul" naive 96
expect_status 0 "$LOCPROF" sample "$T/m.lpt" -o "$T/m.lpp" --rate 0.02 --seed 3

expect_status 0 "$LOCPROF" annotate "$T/m.lpp" --cache 32K:8:64 --top 50
cp "$T/out" "$T/annotate"
[ -s "$T/err" ] && { cat "$T/err" >&2; fail "annotate warned"; }
expect_grep '^predicted LRU misses in 32K:8:64, ' "$T/annotate"
expect_grep "^-- $T/src/matmul.c: [0-9]+ misses, " "$T/annotate"
# the source, with the inner-loop line's counts
# (a profile's misses with their 95% interval, which holds them)
expect_grep "^ +[0-9]+ +\[[0-9]+, [0-9]+\] +[0-9.]+% +[0-9]+ +24  [[:space:]]+$inner\$" "$T/annotate"
expect_grep '^ +\. +\. +\. +\. +22  [[:space:]]+double s = 0;$' "$T/annotate"
awk '$5 == 24 && $2 ~ /^\[/ { lo = substr($2, 2) + 0; hi = $3 + 0; exit !(lo <= $1 && $1 <= hi && lo < hi) }' \
	"$T/annotate" || fail "line 24's interval does not hold its misses"
# the lines table: file:line rows, by misses
awk '/^lines by misses:/ { on = 1; next } on && /^$/ { exit }
     on && $NF ~ /:[0-9]+$/ { print $NF, $1 }' "$T/annotate" >"$T/predicted"
[ "$(head -1 "$T/predicted" | cut -d' ' -f1)" = matmul.c:24 ] || { cat "$T/predicted" >&2; fail "line 24 is not the hottest"; }

# the same ranking from the simulation of the trace: its lines table, and
# (the reference, summed here from the pcs table) the replacement misses
# per line, since a profile cannot charge a cold miss (a line's first
# access reuses nothing) to a line
expect_status 0 "$LOCPROF" simulate "$T/m.lpt" --cache 32K:8:64:lru --attribute --format csv --top 0
awk -F, '$1 == "lines" { print $5; exit }' "$T/out" | grep -qx 'matmul.c:24' || fail "simulate: line 24 is not the hottest"
awk -F, '$1 == "pcs" { split($5, w, " "); r[w[1]] += $10; t += $10 }
	 END { for (l in r) printf "%s %d %.6f\n", l, r[l], r[l] / t }' "$T/out" | sort -k2,2nr -k1,1 >"$T/simulated"
[ "$(head -1 "$T/simulated" | cut -d' ' -f1)" = matmul.c:24 ] || { cat "$T/simulated" >&2; fail "simulate: line 24 is not the hottest"; }
# every line with at least 1% of the simulated misses comes in the same
# order in the prediction, and line 24's misses agree within 10%
awk '$3 >= 0.01 { print $1 }' "$T/simulated" >"$T/sim-order"
awk 'NR == FNR { want[$1] = 1; next } ($1 in want) { print $1 }' "$T/sim-order" "$T/predicted" >"$T/pred-order"
[ "${LOCPROF_TEST_VERBOSE:-0}" = 1 ] && head "$T/simulated" "$T/predicted" >&2
cmp -s "$T/sim-order" "$T/pred-order" || { paste "$T/sim-order" "$T/pred-order" >&2; fail "the rankings differ"; }
awk 'NR == FNR { if ($1 == "matmul.c:24") s = $2; next } $1 == "matmul.c:24" { p = $2 }
     END { d = p - s; if (d < 0) d = -d; exit !(s > 0 && d <= 0.10 * s) }' "$T/simulated" "$T/predicted" ||
	fail "line 24: predicted $(grep '^matmul.c:24 ' "$T/predicted") against simulated $(grep '^matmul.c:24 ' "$T/simulated")"

# csv and json carry the tables and each file's lines with their text
expect_status 0 "$LOCPROF" annotate "$T/m.lpp" --cache 32K:8:64 --format csv
expect_grep '^function,caller,misses,share,line_accesses,misses_lo,misses_hi$' "$T/out"
expect_grep '^main,,[0-9.]+,[01]\.[0-9]{6},[0-9.]+,[0-9.]+,[0-9.]+$' "$T/out"
expect_grep "^matmul\.c,24,[0-9.]+,[01]\.[0-9]{6},[0-9.]+,$T/src/matmul\.c,[0-9.]+,[0-9.]+\$" "$T/out"
expect_grep '^path,line,misses,share,line_accesses,source,misses_lo,misses_hi$' "$T/out"
expect_grep "^$T/src/matmul\.c,24,[0-9.]+,[01]\.[0-9]{6},[0-9.]+,[[:space:]]+$inner,[0-9.]+,[0-9.]+\$" "$T/out"
expect_status 0 "$LOCPROF" annotate "$T/m.lpp" --cache 32K:8:64 --format json
python3 - "$T/out" "$T/annotate" <<'PY' || fail "annotate --format json"
import json, re, sys
d = json.load(open(sys.argv[1]))
assert d["cache"] == "32K:8:64" and d["policy"] == "LRU" and d["cold"] is False
assert d["functions"][0]["function"] == "main" and d["functions"][0]["caller"] is None
assert (d["lines"][0]["file"], d["lines"][0]["line"]) == ("matmul.c", 24)
f = d["files"][0]
assert f["path"].endswith("/src/matmul.c") and f["read_from"] == f["path"]
l24 = [l for l in f["lines"] if l["line"] == 24][0]
assert "s += a[i * n + k] * b[k * n + j];" in l24["text"]
assert l24["misses_lo"] <= l24["misses"] <= l24["misses_hi"] and l24["misses_lo"] < l24["misses_hi"], l24
# the same numbers as the text
text = open(sys.argv[2]).read()
m = re.search(r"^ +(\d+) +\[\d+, \d+\] +[0-9.]+% +(\d+) +24 ", text, re.M)
assert m and abs(float(m.group(1)) - l24["misses"]) <= 0.5, (m and m.group(1), l24)
PY

# a profile recorded live (not from a trace) ranks line 24 first too
expect_status 0 "$LOCPROF" record -q -o "$T/live.lpp" --rate 0.01 -- "$T/matmul" naive 128
expect_status 0 "$LOCPROF" annotate "$T/live.lpp" --cache 32K:8:64
awk '/^lines by misses:/ { getline; getline; print $NF; exit }' "$T/out" | grep -qx 'matmul.c:24' ||
	fail "live profile: line 24 is not the hottest"

# an unmodified binary (gcc -O2 -g) under the valgrind backend: the same
# line first
if [ -x "$LOCPROF_BUILD/src/vg/locprof-amd64-linux" ] && command -v valgrind >/dev/null; then
	gcc -O2 -g -o "$T/matmul-gcc" "$T/src/matmul.c" || fail "cannot build matmul with gcc"
	expect_status 0 "$LOCPROF" record -q --backend valgrind --rate 0.001 -o "$T/vg.lpp" -- "$T/matmul-gcc" naive 96
	expect_status 0 "$LOCPROF" annotate "$T/vg.lpp" --cache 32K:8:64
	awk '/^lines by misses:/ { getline; getline; print $NF; exit }' "$T/out" | grep -qx 'matmul.c:24' ||
		{ cat "$T/out" >&2; fail "valgrind profile: line 24 is not the hottest"; }
fi

# the source moved: one warning line, the lines without their text, exit 0;
# --source-dir finds it again by the path's tail
mkdir -p "$T/elsewhere/src"
mv "$T/src/matmul.c" "$T/elsewhere/src/matmul.c"
expect_status 0 "$LOCPROF" annotate "$T/m.lpp" --cache 32K:8:64
expect_one_line "$T/err"
expect_grep "^locprof: warning: source file '$T/src/matmul.c' not found \(--source-dir DIR to look elsewhere\); its lines are shown without their text$" "$T/err"
expect_grep '^ +[0-9]+ +\[[0-9]+, [0-9]+\] +[0-9.]+% +[0-9]+ +24 *$' "$T/out"
expect_status 0 "$LOCPROF" annotate "$T/m.lpp" --cache 32K:8:64 --source-dir "$T/nowhere" -I "$T/elsewhere"
[ -s "$T/err" ] && { cat "$T/err" >&2; fail "annotate warned with --source-dir"; }
expect_grep "^   \(source read from $T/elsewhere/src/matmul.c\)$" "$T/out"
expect_grep "^ +[0-9]+ +\[[0-9]+, [0-9]+\] +[0-9.]+% +[0-9]+ +24  [[:space:]]+$inner\$" "$T/out"

# FILE arguments choose the files shown
expect_status 0 "$LOCPROF" annotate "$T/m.lpp" -I "$T/elsewhere" src/matmul.c
expect_grep '^-- .*/matmul.c: ' "$T/out"
expect_status 0 "$LOCPROF" annotate "$T/m.lpp" -I "$T/elsewhere" atmul.c
grep -q '^-- ' "$T/out" && fail "'atmul.c' chose matmul.c"
expect_grep '^locprof: warning: no misses in the files named$' "$T/err"

# errors: one line each (usage errors: and where the help is)
expect_status 1 "$LOCPROF" annotate "$T/none.lpp"
expect_one_line "$T/err"
expect_status 2 "$LOCPROF" annotate "$T/m.lpp" --cache 32K
expect_grep "bad cache '32K'" "$T/err"
expect_status 2 "$LOCPROF" annotate "$T/m.lpp" --cache host
expect_status 2 "$LOCPROF" annotate "$T/m.lpp" --cache 32K:8:64:fifo
expect_grep "annotate predicts LRU and random replacement" "$T/err"
expect_status 2 "$LOCPROF" annotate "$T/m.lpp" --cache 32K:8:64 --cache 1M:16:64
expect_grep "annotate takes one --cache" "$T/err"
# -o: the output file, nothing on standard output
expect_status 0 "$LOCPROF" annotate "$T/m.lpp" --cache 32K:8:64 -I "$T/elsewhere" -o "$T/ann.txt"
[ -s "$T/out" ] && fail "annotate -o wrote to standard output"
grep -q '^-- .*/matmul.c: ' "$T/ann.txt" || fail "annotate -o FILE: no annotated source in FILE"
expect_status 2 "$LOCPROF" annotate
echo ok
