# locprof report --format csv and json carry every table the text shows:
# the curves, the named caches, the windows, the top pcs and data objects;
# the CSV stays readable as reference curves.
. "$(dirname "$0")/lib.sh"

# block A (site 0x400100) is swept over 100 lines by pc 0x401000 and misses
# at 4K; block B (site 0x400200) is two lines read by pc 0x401010 and hits
{
	printf 'A 0x100000 6400 0x400100\nA 0x200000 128 0x400200\n'
	for r in $(seq 30); do
		for i in $(seq 0 99); do
			printf 'R %x 8 0x401000\nR %x 8 0x401010\n' $((0x100000 + 64 * i)) $((0x200000 + 64 * (i % 2)))
		done
	done
} >"$T/alloc.txt"
expect_status 0 "$LOCPROF" sample "$T/alloc.txt" -o "$T/a.lpp" --rate 0.05
opts=(--sizes 4K,16K --cache 4K:4:64 --cache 8K:0:64 --window --at 4K --top 5 --policy lru)

expect_status 0 "$LOCPROF" report "$T/a.lpp" "${opts[@]}"
cp "$T/out" "$T/text"
text_misses=$(awk '$1 == "0x401000" { print $2 }' "$T/text")
[ -n "$text_misses" ] || fail "no top pc in the text"

expect_status 0 "$LOCPROF" report "$T/a.lpp" "${opts[@]}" --format csv
cp "$T/out" "$T/a.csv"
F='[01]\.[0-9]{6}'
expect_grep "^curve,size_bytes,miss_ratio,misses,accesses,miss_ratio_lo,miss_ratio_hi,misses_lo,misses_hi,cliff$" "$T/a.csv"
expect_grep "^statstack,4096,$F,[0-9.]+,6000,$F,$F,[0-9.]+,[0-9.]+,[01]$" "$T/a.csv"
expect_grep "^cache,size_bytes,ways,line_bytes,lru_miss_ratio,random_miss_ratio,lru_miss_ratio_lo,lru_miss_ratio_hi,random_miss_ratio_lo,random_miss_ratio_hi,lru_cliff,random_cliff,lru_ref_miss_ratio,random_ref_miss_ratio,lru_unseen$" "$T/a.csv"
expect_grep "^4K:4:64,4096,4,64,$F,$F,$F,$F,$F,$F,[01],[01],$F,$F,$F$" "$T/a.csv"
# every interval holds its estimate: lo <= ratio <= hi, misses = ratio * accesses
awk -F, '$1 == "statstack" && !($6 <= $3 && $3 <= $7 && $8 <= $4 + 0.1 && $4 <= $9 + 0.1) { bad = 1 }
	 END { exit bad }' "$T/a.csv" || fail "an estimate outside its interval"
# (sampling noise at 5% of 6 000 accesses: the 4K point is not exact)
awk -F, '$1 == "statstack" && $2 == 4096 && !($7 > $6) { bad = 1 } END { exit bad }' "$T/a.csv" ||
	fail "an interval of zero width where the samples are few"
expect_grep '^8K:0:64,8192,0,64,' "$T/a.csv"
expect_grep "^window,start,random_miss_ratio$" "$T/a.csv"
expect_grep "^0,0,[01]\.[0-9]{6}$" "$T/a.csv"
expect_grep "^pc,misses,share,function,misses_lo,misses_hi$" "$T/a.csv"
expect_grep "^0x401000,[0-9]+\.[0-9],1\.000000,,[0-9]+\.[0-9],[0-9]+\.[0-9]$" "$T/a.csv"
# each hot row's interval holds its misses and is not empty (a few
# hundred samples)
awk -F, '$1 == "0x401000" && NF == 6 && !($5 < $2 && $2 < $6) { bad = 1 } END { exit bad }' "$T/a.csv" ||
	fail "a hot pc's misses outside their interval"
expect_grep "^object,misses,share,misses_lo,misses_hi$" "$T/a.csv"
expect_grep "^heap@0x400100,[0-9]+\.[0-9],1\.000000,[0-9]+\.[0-9],[0-9]+\.[0-9]$" "$T/a.csv"
# the pcs of each object: all of block A's misses are pc 0x401000's
expect_grep "^object,pc,misses,object_share,function,misses_lo,misses_hi$" "$T/a.csv"
expect_grep "^heap@0x400100,0x401000,[0-9]+\.[0-9],1\.000000,,[0-9]+\.[0-9],[0-9]+\.[0-9]$" "$T/a.csv"
# the same miss count as the text table
csv_misses=$(awk -F, '$1 == "0x401000" && NF == 6 { printf "%.0f", $2 }' "$T/a.csv")
[ "$csv_misses" = "$text_misses" ] || fail "csv says $csv_misses misses, text $text_misses"
# the curve table is read back as reference curves, the other tables skipped
expect_status 0 "$LOCPROF" report "$T/a.lpp" --sizes 4K,16K --svg "$T/g.svg" --reference "$T/a.csv"
# (one reference curve: --policy lru wrote StatStack's only)
[ "$(grep -c '<polyline[^>]*dasharray' "$T/g.svg")" -eq 1 ] || fail "not one reference curve in the graph"
# a band for each model curve (the intervals), none for the reference
[ "$(grep -c '<polygon[^>]*fill-opacity' "$T/g.svg")" -eq 2 ] || fail "not one interval band per model curve"
expect_status 0 "$LOCPROF" report "$T/a.lpp" --sizes 4K,16K --svg "$T/g0.svg" --resamples 0
grep -q '<polygon' "$T/g0.svg" && fail "a band without intervals"
grep -q '±' "$T/out" && fail "intervals in the text with --resamples 0"
expect_status 2 "$LOCPROF" report "$T/a.lpp" --resamples 1
# the text: each ratio with its interval
grep -Eq '^ +4K +[01]\.[0-9]{4} ±[01]\.[0-9]{4}$' "$T/text" || fail "no ± in the text table"

expect_status 0 "$LOCPROF" report "$T/a.lpp" "${opts[@]}" --format json
python3 - "$T/out" "$text_misses" <<'PY' || fail "bad json"
import json, sys
d = json.load(open(sys.argv[1]))
assert [c["cache"] for c in d["caches"]] == ["4K:4:64", "8K:0:64"], d["caches"]
assert d["caches"][0]["ways"] == 4 and 0 <= d["caches"][0]["lru"] <= 1
for c in d["caches"]:
    for pol in ("lru", "random"):
        iv = c[pol + "_interval"]
        assert iv["miss_ratio_lo"] <= c[pol] <= iv["miss_ratio_hi"], c
for cv in d["curves"]:
    assert [i["size"] for i in cv["intervals"]] == [p[0] for p in cv["points"]], cv
    for p, i in zip(cv["points"], cv["intervals"]):
        assert i["miss_ratio_lo"] <= p[1] <= i["miss_ratio_hi"] and i["cliff"] in (True, False), (p, i)
w = d["windows"]
assert w["at"] == 4096 and w["length"] > 0 and w["random"][0][0] == 0, w
h = d["hot"]
assert h["policy"] == "LRU" and h["at"] == 4096 and h["heap_blocks"] == 2, h
assert h["pcs"][0]["pc"] == "0x401000" and h["pcs"][0]["function"] is None, h["pcs"]
assert "%.0f" % h["pcs"][0]["misses"] == sys.argv[2], (h["pcs"][0], sys.argv[2])
assert h["objects"][0]["object"] == "heap@0x400100" and h["objects"][0]["share"] == 1.0, h["objects"]
o = h["objects"][0]
assert [p["pc"] for p in o["pcs"]] == ["0x401000"] and o["pcs"][0]["misses"] == o["misses"], o
PY
# --top 0: no hot spots in any format
expect_status 0 "$LOCPROF" report "$T/a.lpp" --top 0 --format json
python3 -c 'import json,sys; assert "hot" not in json.load(open(sys.argv[1]))' "$T/out" || fail "hot spots with --top 0"
expect_status 0 "$LOCPROF" report "$T/a.lpp" --top 0 --format csv
grep -q "^pc," "$T/out" && fail "hot spots in the csv with --top 0"
exit 0

# -o is the output file (the report as printed), --svg the graph
expect_status 0 "$LOCPROF" report "$T/a.lpp" "${opts[@]}" -o "$T/rep.txt" --svg "$T/g2.svg"
cmp -s "$T/rep.txt" "$T/text" || fail "report -o FILE differs from the report on standard output"
[ ! -s "$T/out" ] || fail "report -o FILE also printed on standard output"
grep -q '<svg' "$T/g2.svg" || fail "no graph in --svg FILE"
ls "$T" | grep -q 'rep.txt.tmp' && fail "report -o left its temporary file"

# --cache takes simulate's SPEC, with its refusals; ASSOC 0 is full
expect_status 0 "$LOCPROF" report "$T/a.lpp" --sizes 4K --cache 8K:full:64 --cache 8K:0:64 --top 0 --format csv
full=$(grep '^8K:full:64,' "$T/out" | cut -d, -f2-)
zero=$(grep '^8K:0:64,' "$T/out" | cut -d, -f2-)
[ -n "$full" ] && [ "$full" = "$zero" ] || fail "8K:0:64 is not 8K:full:64 ('$zero' against '$full')"
expect_status 2 "$LOCPROF" report "$T/a.lpp" --cache 32K:3:64
expect_grep "^locprof: error: bad cache '32K:3:64': cache size 32768 is not a multiple of assoc x line = 3 x 64 = 192 bytes$" "$T/err"
expect_status 2 "$LOCPROF" report "$T/a.lpp" --cache 32K:8
expect_grep "^locprof: error: bad cache '32K:8': cache spec '32K:8' is not SIZE:ASSOC:LINE\[:POLICY\]$" "$T/err"
expect_status 2 "$LOCPROF" report "$T/a.lpp" --cache 32K:8:64:fifo
expect_grep "report predicts LRU and random replacement \(--policy\), not fifo" "$T/err"

# --window N (a space, not '='): the N is taken for a profile; one line
# says how to give the length
expect_status 2 "$LOCPROF" report "$T/a.lpp" --window 100000
expect_grep "^locprof: error: '100000' is not a profile: a window's length is --window=N$" "$T/err"

# one profile named twice would be summed twice: refused in one line
expect_status 2 "$LOCPROF" report "$T/a.lpp" "$T/a.lpp"
expect_grep "^locprof: error: '$T/a.lpp' is given twice: its samples would be summed twice$" "$T/err"
expect_status 0 "$LOCPROF" diff "$T/a.lpp" "$T/a.lpp" --sizes 4K
# an option after diff's '--' is not a profile: one line says so
expect_status 2 "$LOCPROF" diff "$T/a.lpp" -- "$T/a.lpp" --sizes 4K
expect_grep "^locprof: error: '--sizes' after '--': options go before the profiles$" "$T/err"
