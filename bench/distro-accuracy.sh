#!/usr/bin/env bash
# Accuracy of the sampled models on programs as a distribution ships
# them: stripped, not built by locprof, recorded with the valgrind backend
# (gzip, bzip2 and xz compressing 300 KB, sort of 200 000 numbers on one
# thread, Debian's /usr/bin/python3 filling and sorting a dict). For each: the full trace
# (`record --backend valgrind --mode trace`) simulated exactly (fully
# associative LRU and random replacement at 4K..64M, and 32K:8:64,
# 256K:8:64 and 1M:16:64 with both policies), then the program recorded
# with the valgrind backend at each rate and seed and `locprof report`'s
# curves and caches compared with it, as bench/kernel-accuracy.sh does
# (errors in percentage points, cold misses excluded; coverage: the share
# of sizes whose exact value is inside the reported interval).
#
# usage: bench/distro-accuracy.sh [--holdout] [PROGRAM...]   (default: all
# of the set). --holdout takes a second set, kept apart for checking
# changes made while looking at the first: sqlite3 (an in-memory table of
# 30 000 rows, an index, two queries), lua5.4 (a table of 20 000 records
# sorted and hashed), jq (a filter over a 20 000-object array), mawk (word
# counts of 340 KB), perl (a hash sorted by key), bc (pi to 600 digits),
# grep (two regular expressions over 340 KB) and gcc's cc1 (compiling
# bench/kernels/fft.c at -O2).
# Environment: LOCPROF_BUILD (default build/), RATES (default 1e-3),
# SEEDS (default "1 2 3"), KEEP=DIR keeps the work files.
# Prints markdown tables on stdout; progress on stderr. A few minutes on
# an idle 2-core machine.
set -euo pipefail
holdout=0
[ "${1:-}" = --holdout ] && { holdout=1; shift; }
here=$(cd "$(dirname "$0")/.." && pwd)
build=${LOCPROF_BUILD:-$here/build}
L=$build/locprof
RATES=${RATES:-1e-3}
SEEDS=${SEEDS:-1 2 3}
[ -x "$L" ] || { echo "distro-accuracy: no $L: build first (scripts/build)" >&2; exit 2; }
command -v valgrind >/dev/null || { echo "distro-accuracy: needs valgrind" >&2; exit 2; }
if [ -n "${KEEP:-}" ]; then
	W=$KEEP
	mkdir -p "$W"
else
	W=$(mktemp -d /tmp/locprof-distro.XXXXXX)
	trap 'rm -rf "$W"' EXIT
fi
W=$(cd "$W" && pwd)

# the same inputs on every Debian 12 machine
# (head on a pipe would stop the writers with SIGPIPE, which pipefail
# makes fatal: the whole text first)
{ seq 1 40000; cat /usr/share/common-licenses/GPL-3; seq 40000 -3 1; } >"$W/in.all"
head -c 300000 "$W/in.all" >"$W/in.txt"
seq 1 200000 | awk '{ print ($1 * 7919) % 200003 }' >"$W/numbers.txt"
cat >"$W/dict.py" <<'PY'
d = {}
for i in range(60000):
    d[str(i * 7919 % 100003)] = i
s = 0
for k in sorted(d):
    s += d[k]
print(s, sum(x * x for x in range(100000)))
PY

# the hold-out set's inputs
cat >"$W/db.sql" <<'SQL'
CREATE TABLE t(a INTEGER PRIMARY KEY, b INTEGER, c TEXT);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 30000)
INSERT INTO t SELECT i, (i * 7919) % 10007, printf('row %d', i) FROM n;
CREATE INDEX tb ON t(b);
SELECT count(*), sum(a) FROM t WHERE b BETWEEN 100 AND 3000;
SELECT b % 97, count(*) FROM t GROUP BY b % 97 ORDER BY 2 DESC LIMIT 3;
SQL
cat >"$W/tab.lua" <<'LUA'
local t = {}
for i = 1, 20000 do t[#t + 1] = { k = (i * 7919) % 100003, s = tostring(i) } end
table.sort(t, function(x, y) return x.k < y.k end)
local m, s = {}, 0
for _, e in ipairs(t) do m[e.s] = e.k end
for _, v in pairs(m) do s = s + v end
print(s)
LUA
python3 -c "import json; print(json.dumps([{'a': i, 'b': i * 7919 % 1009, 'c': 'x%d' % i} for i in range(20000)]))" >"$W/data.json"
echo '{ for (i = 1; i <= NF; i++) n[tolower($i)]++ } END { for (w in n) if (n[w] > 50) k++; print k }' >"$W/words.awk"
echo 'my %h; $h{($_ * 7919) % 100003} = $_ for 1 .. 30000; my $s = 0; $s += $h{$_} for sort { $a <=> $b } keys %h; print "$s\n";' >"$W/hash.pl"
echo "scale=600; x = 4 * a(1); length(x); halt" >"$W/pi.bc"
cc1=$(gcc -print-prog-name=cc1)
[ $holdout = 0 ] || gcc -E -I"$here/bench/kernels" "$here/bench/kernels/fft.c" -o "$W/fft.i"

# "name command..." (run in $W)
programs() {
	if [ $holdout = 1 ]; then
		echo "sqlite3 sqlite3 :memory: -init db.sql .quit"
		echo "lua lua5.4 tab.lua"
		echo "jq jq -c [.[]|select(.a%3==0)|.b]|add data.json"
		echo "mawk mawk -f words.awk in.all"
		echo "perl perl hash.pl"
		echo "bc bc -lq pi.bc"
		echo "grep grep -c -E -i (the|free)\\s[a-z]+ware|[0-9]{3}7$ in.all"
		echo "cc1 $cc1 -quiet -O2 fft.i -o fft.s"
		return
	fi
	echo "gzip gzip -9 -c in.txt"
	echo "bzip2 bzip2 -9 -c in.txt"
	echo "xz xz -1 -T1 -c in.txt"
	echo "sort sort -n --parallel=1 numbers.txt"
	echo "python3 /usr/bin/python3 dict.py"
}
wanted=("$@")
chosen() { [ ${#wanted[@]} -eq 0 ] || [[ " ${wanted[*]} " == *" $1 "* ]]; }

caches=(--cache 32K:8:64 --cache 256K:8:64 --cache 1M:16:64)
: >"$W/rows.jsonl"
cd "$W"
while read -r name cmd; do
	chosen "$name" || continue
	read -r -a argv <<<"$cmd"
	echo "distro-accuracy: $name: trace and simulation" >&2
	"$L" record -q --backend valgrind --mode trace -o t.lpt -- "${argv[@]}" >/dev/null
	"$L" simulate t.lpt --sizes 4K..64M --policy lru,random --format csv >"sim-$name.csv"
	"$L" simulate t.lpt "${caches[@]}" --cache 32K:8:64:random --cache 256K:8:64:random \
		--cache 1M:16:64:random --format csv >"simsa-$name.csv"
	rm -f t.lpt
	for rate in $RATES; do
		for seed in $SEEDS; do
			echo "distro-accuracy: $name: rate $rate, seed $seed" >&2
			"$L" record -q --backend valgrind -r "$rate" -s "$seed" -o p.lpp -- "${argv[@]}" >/dev/null
			"$L" report p.lpp --sizes 4K..64M --format csv --top 0 >model.csv
			"$L" report p.lpp "${caches[@]}" --format json --top 0 >model.json
			python3 "$here/bench/kernel-compare.py" row "$name" - "$rate" "$seed" "sim-$name.csv" \
				"simsa-$name.csv" model.csv model.json >>rows.jsonl
		done
	done
done < <(programs)

echo "Sampled models against exact simulation (valgrind backend, stripped distribution binaries;" \
	"rates $RATES; seeds $SEEDS; set-associative caches: 32K:8:64 256K:8:64 1M:16:64;" \
	"errors in percentage points, cold misses excluded)"
echo
python3 "$here/bench/kernel-compare.py" table rows.jsonl
