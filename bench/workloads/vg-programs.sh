# The Debian programs that bench/overhead-valgrind.sh and
# bench/cachegrind-agreement.sh run (sourced by both, so that the two
# report the same programs). Needs xz-utils, gzip, bzip2, sqlite3, lua5.4
# and python3 (scripts/install-deps).
#
# Long runs (about a second or more natively, 10^9 references or so): what
# valgrind costs in the steady state, the figure a profiler user cares
# about. Short runs (about 0.1 s natively): mostly valgrind's start-up and
# translation; kept to show that cost, labelled as such.

vg_long_programs=(xz gzip bzip2 sqlite lua python)
vg_short_programs=(sqlite-short lua-short)

# vg_make_inputs DIR: the inputs, made here so that every machine gets the
# same ones (text of random numbers, compressible like logs; scripts).
vg_make_inputs() {
	local w=$1 wl
	wl=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
	awk 'BEGIN { srand(1); for (i = 0; i < 2400000; i++)
		printf "%s%s", int(rand() * rand() * 100000), (i % 12 == 11 ? "\n" : " ") }' >"$w/text"
	head -c 1000000 "$w/text" >"$w/text1m"
	head -c 2000000 "$w/text" >"$w/text2m"
	head -c 8000000 "$w/text" >"$w/text8m"
	head -c 12000000 "$w/text" >"$w/text12m"
	cp "$wl/vg-big.sql" "$w/big.sql"
	cp "$wl/bench.lua" "$w/bench.lua"
	cp "$wl/vg-bench.py" "$w/bench.py"
	cat >"$w/query.sql" <<'SQL'
CREATE TABLE t(id INTEGER PRIMARY KEY, a INTEGER, b TEXT);
WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x < 20000)
INSERT INTO t SELECT x, (x * 7919) % 10007, printf('row-%08d', (x * 104729) % 20000) FROM c;
CREATE INDEX ta ON t(a);
SELECT count(*), sum(a) FROM t WHERE a BETWEEN 1000 AND 5000;
SELECT b FROM t ORDER BY b LIMIT 3;
SELECT a, count(*) FROM t GROUP BY a ORDER BY count(*) DESC, a LIMIT 3;
UPDATE t SET a = a + 1 WHERE id % 3 = 0;
SELECT sum(a) FROM t;
SQL
	cat >"$w/script.lua" <<'LUA'
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
LUA
}

# vg_cmd_of NAME -> "stdin-file|command" (run in the inputs' directory)
vg_cmd_of() {
	case $1 in
	xz) echo "/dev/null|xz -1 -T1 -c text8m" ;;
	gzip) echo "/dev/null|gzip -9 -c text12m" ;;
	bzip2) echo "/dev/null|bzip2 -9 -c text12m" ;;
	sqlite) echo "big.sql|sqlite3 :memory:" ;;
	lua) echo "/dev/null|lua5.4 bench.lua 8" ;;
	python) echo "/dev/null|/usr/bin/python3 bench.py 1200000" ;;
	sqlite-short) echo "query.sql|sqlite3 :memory:" ;;
	lua-short) echo "/dev/null|lua5.4 script.lua" ;;
	# the short xz and gzip runs of earlier tables (not start-up-bound)
	xz-2m) echo "/dev/null|xz -2 -T1 -c text1m" ;;
	gzip-2m) echo "/dev/null|gzip -6 -c text2m" ;;
	*) echo "unknown program '$1' (${vg_long_programs[*]} ${vg_short_programs[*]} xz-2m gzip-2m)" >&2
	   return 2 ;;
	esac
}
