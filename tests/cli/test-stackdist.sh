# locprof stackdist and reusedist: known answers, formats, errors.
. "$(dirname "$0")/lib.sh"

# A cyclic sweep over 4 lines of 64 bytes, 3 times: every non-cold access
# has stack distance 3 and reuse distance 3. The second record straddles
# lines 0x1000/0x1040 (touching both), the last is an allocation (skipped).
{
	for r in 1 2 3; do
		for a in 0x1000 0x1040 0x1080 0x10c0; do echo "R $a 8 0x400100"; done
	done
	echo "W 0x103c 8 0x400200"
	echo "R 0x1040 1 0x400200"
	echo "A 0x9000 64 0x400300"
} >"$T/cyc.txt"

for algo in fast naive markers bk avl prealloc; do
	expect_status 0 "$LOCPROF" stackdist --algorithm "$algo" --format csv "$T/cyc.txt"
	# 12 sweep accesses: 4 cold, 8 at distance 3; the straddling write
	# touches line 0x40 (3 distinct lines since) and line 0x41 (likewise),
	# and the read of 0x1040 right after has distance 0.
	cat >"$T/want" <<'W'
distance,count,distance_max
0,1,0
3,10,3
inf,4,inf
W
	cmp "$T/out" "$T/want" || { cat "$T/out" >&2; fail "$algo: wrong histogram"; }
done

expect_status 0 "$LOCPROF" reusedist --format csv "$T/cyc.txt"
# reuse distances are the same here: 3 accesses between, or none
printf 'distance,count,distance_max\n0,1,0\n3,10,3\ninf,4,inf\n' >"$T/want"
cmp "$T/out" "$T/want" || { cat "$T/out" >&2; fail "reusedist: wrong histogram"; }

# text summary and curve
expect_status 0 "$LOCPROF" stackdist "$T/cyc.txt"
expect_grep '^references +14$' "$T/out"
expect_grep '^line accesses +15$' "$T/out"
expect_grep '^distinct lines +4 \(footprint 256\)$' "$T/out"
expect_grep '^  256 +4 +4 ' "$T/out"
expect_grep '^  128 +2 +14 +0\.933333' "$T/out"

# curve CSV of docs/formats.md: 4 lines hit everything but the cold ones
expect_status 0 "$LOCPROF" stackdist --curve --format csv --sizes 192 "$T/cyc.txt"
expect_grep '^# locprof curve v1: ' "$T/out"
expect_grep '^curve,size_bytes,miss_ratio,misses,accesses$' "$T/out"
expect_grep '^lru,256,0\.266667,4,15$' "$T/out"
expect_grep '^lru,192,0\.933333,14,15$' "$T/out"
expect_grep '^lru-nocold,256,0\.000000,0,11$' "$T/out"

# several line sizes: one table each, same as separate runs
expect_status 0 "$LOCPROF" stackdist --format csv --line 64,128 "$T/cyc.txt"
expect_grep '^# line 128$' "$T/out"
sed -n '/^# line 128$/,$p' "$T/out" | tail -n +2 >"$T/multi"
expect_status 0 "$LOCPROF" stackdist --format csv --line 128 "$T/cyc.txt"
cmp "$T/multi" "$T/out" || fail "--line 64,128 differs from --line 128"

# per-pc and json
expect_status 0 "$LOCPROF" stackdist --per-pc --sizes 128 "$T/cyc.txt"
expect_grep '^  0x400100 +12 +4 +12 ' "$T/out"
expect_status 0 "$LOCPROF" stackdist --per-pc --format json "$T/cyc.txt"
expect_grep '"line_accesses": 15' "$T/out"
if command -v python3 >/dev/null; then
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["line_sizes"][0]["histogram"]["cold"]==4' "$T/out" ||
		fail "json output does not parse or is wrong"
fi

# prealloc limit: an error naming the limit and the option
expect_status 1 "$LOCPROF" stackdist --algorithm prealloc --prealloc-n 5 "$T/cyc.txt"
expect_grep 'more than 5 line accesses.*--prealloc-n' "$T/err"
expect_one_line "$T/err"

# a truncated .lpt (four blocks of 65536 records, cut in the middle): the
# histogram of the complete blocks before the cut, a warning, exit 3; the
# same histogram as the prefix of that many records in text form
"$LOCPROF" synth uniform -n 200000 -L 4096 -o "$T/four.lpt"
head -c $(( $(stat -c %s "$T/four.lpt") / 2 )) "$T/four.lpt" >"$T/cut.lpt"
"$LOCPROF" convert "$T/four.lpt" "$T/four.txt"
for cmd in stackdist reusedist; do
	expect_status 3 "$LOCPROF" $cmd "$T/cut.lpt" --format csv
	expect_grep "warning: .*truncated inside a block \([12] complete blocks, (65536|131072) records read\)" "$T/err"
	got=$(sed -n 's/.*(\([12]\) complete blocks.*/\1/p' "$T/err")
	cp "$T/out" "$T/cut.csv"
	awk -v n=$((got * 65536)) '!/^#/ { print; if (++k == n) exit }' "$T/four.txt" >"$T/prefix.txt"
	expect_status 0 "$LOCPROF" $cmd "$T/prefix.txt" --format csv
	cmp -s "$T/out" "$T/cut.csv" || fail "$cmd of a truncated trace differs from its prefix's"
	[ "$(awk -F, 'NR > 1 { s += $2 } END { print s }' "$T/out")" = $((got * 65536)) ] ||
		fail "$cmd: the histogram does not count $((got * 65536)) accesses"
done

# a malformed trace is an error (exit 1, one line naming the line)
printf 'R 0x1000 8\nR 0x1040 8\nR 0x1000 8\nR zz 8\n' >"$T/bad.txt"
expect_status 1 "$LOCPROF" stackdist "$T/bad.txt"
expect_grep "line 4: bad address 'zz'" "$T/err"
expect_one_line "$T/err"

# bad options: one line, exit 2
expect_status 2 "$LOCPROF" stackdist --algorithm nosuch "$T/cyc.txt"
expect_grep "unknown algorithm 'nosuch'" "$T/err"
expect_status 2 "$LOCPROF" stackdist --line 48 "$T/cyc.txt"
expect_grep "not a power of two" "$T/err"
expect_status 2 "$LOCPROF" stackdist --format xml "$T/cyc.txt"
expect_status 2 "$LOCPROF" stackdist
expect_status 2 "$LOCPROF" reusedist --algorithm avl "$T/cyc.txt"
expect_status 1 "$LOCPROF" stackdist "$T/missing.txt"
expect_one_line "$T/err"
expect_status 0 "$LOCPROF" stackdist --help
expect_grep '^usage: locprof stackdist' "$T/out"
expect_status 0 "$LOCPROF" help reusedist
expect_status 2 "$LOCPROF" stackdist --line 0 "$T/cyc.txt"
