# locprof sample, dump and report on a small trace with known answers.
. "$(dirname "$0")/lib.sh"

# cyclic sweep over 100 lines, 50 times: LRU misses everything below 100 lines
for r in $(seq 50); do for i in $(seq 0 99); do printf 'R %x 8 0x401000\n' $((0x10000 + 64 * i)); done; done >"$T/sweep.txt"
expect_status 0 "$LOCPROF" sample "$T/sweep.txt" -o "$T/s.lpp" --rate 0.05 --seed 3 --line 64,128
expect_grep "samples of 5000 line accesses" "$T/err"
expect_status 0 "$LOCPROF" dump "$T/s.lpp"
expect_grep "^line 64: 5000 line accesses" "$T/out"
expect_grep "^64 [0-9]+ 0x401000 0x[0-9a-f]+ R 0 99 0x401000$" "$T/out"
expect_status 0 "$LOCPROF" dump --format json "$T/s.lpp"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["line_sizes"][0]["accesses"]==5000' "$T/out" || fail "bad json"
expect_status 0 "$LOCPROF" report "$T/s.lpp" --sizes 4K,6336,6400,8K --format csv --policy lru
expect_grep "^statstack,4096,1.000000," "$T/out"
expect_grep "^statstack,6336,1.000000," "$T/out"
expect_grep "^statstack,6400,0.000000," "$T/out"
expect_status 0 "$LOCPROF" report "$T/s.lpp" --cache 4K:4:64 --window --svg "$T/g.svg" --reference "$T/out"
expect_grep "^4K:4:64 " "$T/out"
expect_grep "<polyline" "$T/g.svg"
# --samples needs a file; truncated profiles are read with a warning
expect_status 2 "$LOCPROF" sample - -o "$T/x.lpp" --samples 100
head -c 300 "$T/s.lpp" >"$T/cut.lpp"
expect_status 3 "$LOCPROF" dump "$T/cut.lpp"
expect_grep "warning: .*truncated" "$T/err"
printf 'not a profile' >"$T/bad.lpp"
expect_status 1 "$LOCPROF" report "$T/bad.lpp"
expect_grep "not a locprof profile" "$T/err"
expect_one_line "$T/err"
expect_status 0 "$LOCPROF" help report
