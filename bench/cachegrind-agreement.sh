#!/usr/bin/env bash
# Agreement of the valgrind backend's traces with Cachegrind (docs/valgrind.md).
#
# For each program: record its full trace under valgrind with locprof's tool
# (`locprof record --backend valgrind -m trace`, without the malloc
# replacement so that glibc's malloc runs as under Cachegrind), simulate a
# 32 KiB, 8-way, 64-byte-line LRU L1 with `locprof simulate`, and compare the
# misses with Cachegrind's D1 misses for the same cache
# (`valgrind --tool=cachegrind --cache-sim=yes --D1=32768,8,64`).
# The target: within 1%. The rules where the two differ are listed in
# docs/valgrind.md ("Agreement with Cachegrind").
#
# usage: bench/cachegrind-agreement.sh [BUILD_DIR] [PROGRAM...]
#   PROGRAM: xz gzip sqlite lua (default: all four). Needs xz-utils, gzip,
#   sqlite3, lua5.4 (scripts/install-deps). Prints a markdown table; exits 1
#   if any program is off by more than 1%.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
[ $# -gt 0 ] && shift
progs=("$@")
[ ${#progs[@]} -gt 0 ] || progs=(xz gzip sqlite lua)
locprof=$build/locprof
[ -x "$locprof" ] || { echo "no $locprof: build first (scripts/build)" >&2; exit 2; }

w=$(mktemp -d /tmp/locprof-cgagree.XXXXXX)
trap 'rm -rf "$w"' EXIT

# Inputs, made here so every machine gets the same ones: text of random
# numbers (compressible like logs), a SQL script, a Lua script.
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

# name -> "stdin-file|command" (run in $w)
cmd_of() {
	case $1 in
	xz) echo "/dev/null|xz -2 -T1 -c text1m" ;;
	gzip) echo "/dev/null|gzip -6 -c text2m" ;;
	sqlite) echo "query.sql|sqlite3 :memory:" ;;
	lua) echo "/dev/null|lua5.4 script.lua" ;;
	*) echo "unknown program '$1' (xz gzip sqlite lua)" >&2; exit 2 ;;
	esac
}

num() { tr -d , <<<"$1"; }

status=0
echo "| program | command | references (locprof) | D refs (cachegrind) | L1 misses (locprof simulate) | D1 misses (cachegrind) | difference |"
echo "|---|---|---:|---:|---:|---:|---:|"
for p in "${progs[@]}"; do
	spec=$(cmd_of "$p")
	in=${spec%%|*}
	cmd=${spec#*|}
	read -ra argv <<<"$cmd"
	command -v "${argv[0]}" >/dev/null || { echo "$p: ${argv[0]} not installed (scripts/install-deps)" >&2; status=1; continue; }
	(cd "$w" && "$OLDPWD/$locprof" record --backend valgrind -X --allocs=no -m trace -q \
		-o "$w/$p.lpt" -- "${argv[@]}" <"$in" >"$w/$p.out1")
	"$locprof" simulate "$w/$p.lpt" --cache 32K:8:64:lru >"$w/$p.sim"
	read -r acc ours < <(awk '$1 == "C1" { print $3, $4 }' "$w/$p.sim")
	refs=$(awk '/references/ { for (i = 1; i <= NF; i++) if ($(i + 1) == "references") print $i }' "$w/$p.sim" | head -1)
	(cd "$w" && valgrind --tool=cachegrind --cache-sim=yes --D1=32768,8,64 \
		--cachegrind-out-file=/dev/null "${argv[@]}" <"$in" >"$w/$p.out2" 2>"$w/$p.cg")
	cmp -s "$w/$p.out1" "$w/$p.out2" || { echo "$p: the two runs printed different output" >&2; status=1; }
	theirs=$(num "$(sed -n 's/.*D1  misses: *\([0-9,]*\).*/\1/p' "$w/$p.cg")")
	drefs=$(num "$(sed -n 's/.*D   refs: *\([0-9,]*\).*/\1/p' "$w/$p.cg")")
	rm -f "$w/$p.lpt"
	diff=$(awk -v a="$ours" -v b="$theirs" 'BEGIN { printf "%+.3f%%", 100 * (a - b) / b }')
	ok=$(awk -v a="$ours" -v b="$theirs" 'BEGIN { d = (a - b) / b; print (d < 0 ? -d : d) <= 0.01 }')
	[ "$ok" = 1 ] || status=1
	echo "| $p | \`$cmd\` | $refs | $drefs | $ours | $theirs | $diff |"
done
exit $status
