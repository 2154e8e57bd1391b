#!/usr/bin/env bash
# Overhead of the valgrind backend (docs/valgrind.md), as ratios to the
# native run of the same program in the same script:
#   native       the program alone
#   none         valgrind --tool=none (valgrind's own cost: the floor)
#   sample       locprof record --backend valgrind (StatCache sampling, 1e-4)
#   trace        locprof record --backend valgrind -m trace (compressed .lpt)
#   cachegrind   valgrind --tool=cachegrind --cache-sim=yes
# Targets: sample <= 1.5x none, and cachegrind >= 5x sample.
#
# Each configuration runs REPEAT times (default 3), interleaved, and the
# median is taken, because the machine is shared. Wall time is what a user
# waits; CPU time (user + system of every process: valgrind, and locprof's
# collector, which compresses the trace on another core) is less sensitive
# to other load. Both are printed.
#
# usage: bench/overhead-valgrind.sh [BUILD_DIR] [PROGRAM...]
#   PROGRAM: xz gzip sqlite lua (default all; same workloads as
#   bench/cachegrind-agreement.sh). REPEAT=N in the environment.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
[ $# -gt 0 ] && shift
progs=("$@")
[ ${#progs[@]} -gt 0 ] || progs=(xz gzip sqlite lua)
repeat=${REPEAT:-3}
locprof=$(cd "$build" && pwd)/locprof
[ -x "$locprof" ] || { echo "no $locprof: build first (scripts/build)" >&2; exit 2; }

w=$(mktemp -d /tmp/locprof-vgover.XXXXXX)
trap 'rm -rf "$w"' EXIT
awk 'BEGIN { srand(1); for (i = 0; i < 600000; i++)
	printf "%s%s", int(rand() * rand() * 100000), (i % 12 == 11 ? "\n" : " ") }' >"$w/text"
head -c 1000000 "$w/text" >"$w/text1m"
head -c 2000000 "$w/text" >"$w/text2m"
cat >"$w/query.sql" <<'EOF'
CREATE TABLE t(id INTEGER PRIMARY KEY, a INTEGER, b TEXT);
WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x < 20000)
INSERT INTO t SELECT x, (x * 7919) % 10007, printf('row-%08d', (x * 104729) % 20000) FROM c;
CREATE INDEX ta ON t(a);
SELECT count(*), sum(a) FROM t WHERE a BETWEEN 1000 AND 5000;
SELECT b FROM t ORDER BY b LIMIT 3;
SELECT a, count(*) FROM t GROUP BY a ORDER BY count(*) DESC, a LIMIT 3;
UPDATE t SET a = a + 1 WHERE id % 3 = 0;
SELECT sum(a) FROM t;
EOF
cat >"$w/script.lua" <<'EOF'
local t = {}
local seed = 12345
for i = 1, 60000 do seed = (seed * 1103515245 + 12345) % 2147483648; t[i] = seed end
table.sort(t)
local words = {}
for i = 1, 30000 do words[#words + 1] = string.format("w%05d", t[i] % 50000) end
local s = table.concat(words, " ")
local count = {}
for w in s:gmatch("%S+") do count[w] = (count[w] or 0) + 1 end
local n = 0
for _ in pairs(count) do n = n + 1 end
print(#s, n)
EOF

cmd_of() {
	case $1 in
	xz) echo "/dev/null|xz -2 -T1 -c text1m" ;;
	gzip) echo "/dev/null|gzip -6 -c text2m" ;;
	sqlite) echo "query.sql|sqlite3 :memory:" ;;
	lua) echo "/dev/null|lua5.4 script.lua" ;;
	*) echo "unknown program '$1' (xz gzip sqlite lua)" >&2; exit 2 ;;
	esac
}

configs=(native none sample trace cachegrind)
prefix() {
	case $1 in
	native) ;;
	none) echo "valgrind --tool=none -q" ;;
	sample) echo "$locprof record --backend valgrind -q -r 1e-4 -o $w/s.lpp --" ;;
	trace) echo "$locprof record --backend valgrind -q -m trace -o $w/t.lpt --" ;;
	cachegrind) echo "valgrind --tool=cachegrind -q --cache-sim=yes --cachegrind-out-file=/dev/null" ;;
	esac
}

# run CONFIG IN CMD... -> "wall cpu" seconds
run() {
	local c=$1 in=$2 t
	shift 2
	read -ra pre <<<"$(prefix "$c")"
	t=$( { TIMEFORMAT='%R %U %S'; time (cd "$w" && "${pre[@]}" "$@" <"$in" >/dev/null 2>"$w/err") ; } 2>&1 )
	rm -f "$w/s.lpp" "$w/t.lpt"
	awk '{ printf "%.3f %.3f\n", $1, $2 + $3 }' <<<"$t"
}

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "| program | native s | none | sample 1e-4 | trace | cachegrind | sample/none | cachegrind/sample |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|"
status=0
for p in "${progs[@]}"; do
	spec=$(cmd_of "$p")
	in=${spec%%|*}
	read -ra argv <<<"${spec#*|}"
	: >"$w/times"
	for ((r = 0; r < repeat; r++)); do
		for c in "${configs[@]}"; do
			echo "$c $(run "$c" "$in" "${argv[@]}")" >>"$w/times"
		done
	done
	declare -A wall cpu
	for c in "${configs[@]}"; do
		wall[$c]=$(awk -v c=$c '$1 == c { print $2 }' "$w/times" | median)
		cpu[$c]=$(awk -v c=$c '$1 == c { print $3 }' "$w/times" | median)
	done
	# wall ratios to native; CPU ratios in parentheses
	cell() { awk -v a="${wall[$1]}" -v b="${wall[native]}" -v c="${cpu[$1]}" -v d="${cpu[native]}" \
		'BEGIN { printf "%.2fx (%.2fx)", a / b, c / d }'; }
	sn=$(awk -v a="${wall[sample]}" -v b="${wall[none]}" -v c="${cpu[sample]}" -v d="${cpu[none]}" \
		'BEGIN { printf "%.2f (%.2f)", a / b, c / d }')
	cs=$(awk -v a="${wall[cachegrind]}" -v b="${wall[sample]}" -v c="${cpu[cachegrind]}" -v d="${cpu[sample]}" \
		'BEGIN { printf "%.1f (%.1f)", a / b, c / d }')
	echo "| $p | ${wall[native]} | $(cell none) | $(cell sample) | $(cell trace) | $(cell cachegrind) | $sn | $cs |"
	awk -v a="${cpu[sample]}" -v b="${cpu[none]}" -v c="${cpu[cachegrind]}" \
		'BEGIN { exit !(a <= 1.5 * b && c >= 5 * a) }' || status=1
done
echo
echo "wall-time ratios, CPU-time ratios in parentheses; median of $repeat runs"
exit $status
