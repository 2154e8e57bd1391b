# locprof report --threads: per thread, the run's references, the samples,
# the line accesses, and the predicted misses in each
# named cache, in text, CSV and JSON. In threads.txt of
# examples/traces/make-traces.sh, thread 1 sweeps 1000 lines (misses in
# 16K), thread 2 reads 4 lines over and over (hits).
. "$(dirname "$0")/lib.sh"

LOCPROF=$LOCPROF bash "$LOCPROF_SRC/examples/traces/make-traces.sh" "$T" >/dev/null ||
	fail "examples/traces/make-traces.sh failed"
expect_status 0 "$LOCPROF" sample "$T/threads.txt" -o "$T/t.lpp" --rate 0.05 --seed 2
opts=(--sizes 16K --cache 16K:4:64 --cache 1M:8:64 --threads)

expect_status 0 "$LOCPROF" report "$T/t.lpp" "${opts[@]}"
awk '/^per thread/ { on = 1; next } on && NF == 6 && $1 ~ /^[0-9]+$/ { print }' "$T/out" >"$T/rows"
[ "$(wc -l <"$T/rows")" = 2 ] || { cat "$T/out" >&2; fail "expected two thread rows"; }
expect_grep '^ +thread +references +samples +line accesses +16K:4:64 +1M:8:64$' "$T/out"
# references exact (20000 and 40000); line accesses the references (no
# reference straddles two lines), not the samples over the rate; the
# sweeping thread misses 16K on nearly every access, the other never;
# neither misses 1M (cold misses excluded)
awk '{ refs[NR] = $2; smp[NR] = $3; acc[NR] = $4; m16[NR] = $5; m1m[NR] = $6 }
     END { exit !(refs[1] + refs[2] == 60000 && acc[1] == refs[1] && acc[2] == refs[2] &&
	          smp[1] + smp[2] > 2500 && m1m[1] == 0 && m1m[2] == 0) }' "$T/rows" ||
	{ cat "$T/rows" >&2; fail "thread rows"; }
sweep=$(awk '$2 == 20000 { print $1 }' "$T/rows")
[ -n "$sweep" ] || { cat "$T/rows" >&2; fail "no thread with 20000 references"; }
awk -v s="$sweep" '$1 == s { ok = $5 > 0.9 * $4 } $1 != s { ok2 = $5 < 1 } END { exit !(ok && ok2) }' "$T/rows" ||
	{ cat "$T/rows" >&2; fail "the sweeping thread should miss, the other not"; }
# the threads' misses add up to the named cache's miss ratio (within 5%:
# the ratio is StatStack's over the windows, the misses the samples' sum)
acc=$(awk '/line accesses of 64 bytes/ { print $5 }' "$T/out")
ratio=$(awk '$1 == "16K:4:64" { print $4 }' "$T/out")
awk -v acc="$acc" -v r="$ratio" '{ m += $5 } END { d = m / acc - r; exit !(r > 0.2 && d < 0.05 * r && d > -0.05 * r) }' "$T/rows" ||
	fail "the threads' misses do not add up to the 16K:4:64 miss ratio $ratio of $acc accesses"

expect_status 0 "$LOCPROF" report "$T/t.lpp" "${opts[@]}" --format csv
expect_grep '^thread,references,samples,line_accesses,16K:4:64,1M:8:64$' "$T/out"
awk -F, '/^thread,/ { on = 1; next } on && /^$/ { exit } on { printf "%s %s %s %.0f\n", $1, $2, $3, $4 }' "$T/out" >"$T/csv"
awk '{ printf "%s %s %s %.0f\n", $1, $2, $3, $4 }' "$T/rows" | cmp -s - "$T/csv" || fail "csv threads differ from the text"

expect_status 0 "$LOCPROF" report "$T/t.lpp" "${opts[@]}" --format json
python3 - "$T/out" "$T/rows" <<'PY' || fail "report --threads --format json"
import json, sys
d = json.load(open(sys.argv[1]))
t = d["threads"]
assert t["caches"] == ["16K:4:64", "1M:8:64"]
rows = [l.split() for l in open(sys.argv[2])]
assert [(r["thread"], r["references"], r["samples"]) for r in t["rows"]] == \
       [(int(a), int(b), int(c)) for a, b, c, *_ in rows]
assert all(len(r["misses"]) == 2 for r in t["rows"])
PY

# without named caches: the --at cache
expect_status 0 "$LOCPROF" report "$T/t.lpp" --sizes 16K --at 8K --threads
expect_grep '^ +thread +references +samples +line accesses +8K:full:64$' "$T/out"
# Many threads: the text shows the 32 with the most references, in thread
# order, and sums the others in one line; CSV lists all. Thread k (numbered
# from 0 in order of appearance) makes 50 (k + 1) references.
awk 'BEGIN {
	for (k = 0; k < 40; k++)
		for (i = 0; i < 50 * (k + 1); i++)
			printf "R 0x%x 8 0x401000 %d\n", 268435456 + k * 65536 + (i % 100) * 64, k + 1
}' >"$T/many.txt"
expect_status 0 "$LOCPROF" sample "$T/many.txt" -o "$T/many.lpp" --rate 0.05 --seed 1
expect_status 0 "$LOCPROF" report "$T/many.lpp" --sizes 16K --top 0 --threads
awk '/^per thread/ { on = 1; next } on && $1 ~ /^[0-9]+$/ { print $1 }' "$T/out" >"$T/tids"
[ "$(tr '\n' ' ' <"$T/tids")" = "$(seq 8 39 | tr '\n' ' ')" ] ||
	{ cat "$T/out" >&2; fail "40 threads: expected threads 8..39 in the text"; }
# the eight left out: 50 (1 + ... + 8) = 1800 references
expect_grep '^ +\.\.\. +1800 +[0-9]+  \(8 threads more, none with more references than those above; --format csv lists every thread\)$' "$T/out"
expect_status 0 "$LOCPROF" report "$T/many.lpp" --sizes 16K --top 0 --threads --format csv
[ "$(awk -F, '/^thread,/ { on = 1; next } on && /^$/ { exit } on { n++ } END { print n }' "$T/out")" = 40 ] ||
	fail "40 threads: the CSV should list all"
echo ok
