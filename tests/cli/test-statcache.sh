# locprof sample, dump and report on a small trace with known answers.
. "$(dirname "$0")/lib.sh"

# cyclic sweep over 100 lines, 50 times: LRU misses everything below 100 lines
for r in $(seq 50); do for i in $(seq 0 99); do printf 'R %x 8 0x401000\n' $((0x10000 + 64 * i)); done; done >"$T/sweep.txt"
expect_status 0 "$LOCPROF" sample "$T/sweep.txt" -o "$T/s.lpp" --rate 0.05 --seed 3 --line 64,128
expect_grep "samples of 5000 line accesses" "$T/err"
expect_status 0 "$LOCPROF" dump "$T/s.lpp"
expect_grep "^line 64: 5000 line accesses" "$T/out"
expect_grep "^64 [0-9]+ 0x401000 0x[0-9a-f]+ R 0 99 0x401000( |$)" "$T/out"
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

# Allocation events of a trace travel into the profile (dump prints them,
# text and JSON) and report charges the misses to the allocating call
# site: block A (site 0x400100) is swept over 100 lines and misses at 4K,
# block B (site 0x400200) is two lines read again and again and hits.
{
	printf 'A 0x100000 6400 0x400100\nA 0x200000 128 0x400200\n'
	for r in $(seq 30); do
		for i in $(seq 0 99); do
			printf 'R %x 8 0x401000\nR %x 8 0x401010\n' $((0x100000 + 64 * i)) $((0x200000 + 64 * (i % 2)))
		done
	done
	printf 'F 0x200000 0 0x400300\n'
} >"$T/alloc.txt"
expect_status 0 "$LOCPROF" sample "$T/alloc.txt" -o "$T/a.lpp" --rate 0.05
expect_status 0 "$LOCPROF" dump "$T/a.lpp"
expect_grep "^allocation events: 3 \(2 allocs, 1 frees\)$" "$T/out"
expect_grep "^alloc 0 0 0x100000 6400 0x400100$" "$T/out"
expect_grep "^free 6000 0 0x200000 0 0x400300$" "$T/out"
expect_status 0 "$LOCPROF" dump --format json "$T/a.lpp"
python3 -c 'import json,sys; a=json.load(open(sys.argv[1]))["allocations"]; assert [e["event"] for e in a]==["alloc","alloc","free"] and a[2]["time"]==6000 and a[1]["size"]==128, a' "$T/out" || fail "bad allocations in json"
expect_status 0 "$LOCPROF" report "$T/a.lpp" --at 4K --top 5 --policy lru
expect_grep "^top data objects by predicted LRU misses at 4K \(2 heap blocks" "$T/out"
expect_grep "^ +heap@0x400100 +[0-9]+ +\\[[0-9]+, [0-9]+\\] +100.0%$" "$T/out"
# a profile cut inside its allocation section keeps the samples
size=$(stat -c %s "$T/a.lpp")
head -c $((size - 40)) "$T/a.lpp" >"$T/acut.lpp"
expect_status 3 "$LOCPROF" dump "$T/acut.lpp"
expect_grep "warning: .*truncated" "$T/err"
expect_grep "^line 64: 6000 line accesses" "$T/out"

# StatStack follows phases (regression: with one distribution for the
# whole run it put the sweep's reuses at half their stack distance): a
# sweep over 100 lines alternates with phases of reuses over 4 lines; LRU
# of 64 lines misses every sweep access, about half of all.
{
	for ph in 1 2 3 4; do
		for r in $(seq 10); do for i in $(seq 0 99); do printf 'R %x 8 0x401000\n' $((0x100000 + 64 * i)); done; done
		for i in $(seq 1000); do printf 'R %x 8 0x401010\n' $((0x200000 + 64 * (i % 4))); done
	done
} >"$T/phases.txt"
expect_status 0 "$LOCPROF" sample "$T/phases.txt" -o "$T/ph.lpp" --rate 0.2 --window 500
expect_status 0 "$LOCPROF" report "$T/ph.lpp" --sizes 4K --policy lru --format csv
awk -F, '$1 == "statstack" { exit !($3 > 0.4 && $3 < 0.6) }' "$T/out" || fail "StatStack misses the phases: $(grep statstack "$T/out")"
