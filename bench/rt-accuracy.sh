#!/usr/bin/env bash
# Accuracy of the inst backend on real programs: for each workload, the
# working-set graph predicted from a `locprof record` sample-mode profile
# (StatCache vs fully associative random replacement, StatStack vs LRU,
# cold misses excluded, 64-byte lines, 4K..64M) against the exact curves
# that `locprof simulate` computes from a trace-mode run of the same
# program (`locprof record --mode trace`): mean and max absolute error in
# percentage points, at rates 1e-3 and 1e-4 (several seeds: the table has
# the median over them).
# Part 2, what the compile paths do not see: the same programs built
# with gcc (tsan path) and with clang -mavx2, traced; their reference
# counts against the default clang build and the mean absolute difference
# of their exact LRU curves from the default build's.
# usage: bench/rt-accuracy.sh [BUILD_DIR]
#   SEEDS="1 2 3"; NOREAL=1 examples only; REALPROG="lua zstd"; ONLY=REGEX; PART2=0
set -euo pipefail
cd "$(dirname "$0")/.."
B=${1:-build}
L=$B/locprof
T=$(mktemp -d /tmp/locprof-rtacc.XXXXXX)
trap 'rm -rf "$T"' EXIT
SEEDS=${SEEDS:-1 2 3}

# "label|binary-prefix|args", inputs small enough for a full trace.
W=("matmul naive|$B/examples/matmul|naive 160" "matmul blocked|$B/examples/matmul|blocked 200"
	"layout aos|$B/examples/layout|aos 300000" "listwalk list|$B/examples/listwalk|list 100000"
	"stencil|$B/examples/stencil|512 10")
if [ -z "${NOREAL:-}" ]; then
	. bench/realprog.sh
	R=$B/realprog
	realprog_build "$B" "$R"
	W+=("lua|$R/bin/lua|$PWD/bench/workloads/bench.lua 0.2"
		"sqlite|$R/bin/sqlite3|-init $PWD/bench/workloads/bench.sql :memory: .quit"
		"zstd-c|$R/bin/zstd|-q -3 -c $R/zstd-input")
fi

if [ -n "${ONLY:-}" ]; then
	keep=()
	for w in "${W[@]}"; do [[ ${w%%|*} =~ $ONLY ]] && keep+=("$w"); done
	W=("${keep[@]}")
fi

mae() { # mae SIM.csv MODEL.csv -> "statcache-mean max statstack-mean max"
	python3 - "$1" "$2" <<'PY'
import csv, sys
def load(p):
    d = {}
    for row in csv.reader(l for l in open(p) if not l.startswith('#')):
        if row[0] == 'curve': continue
        d.setdefault(row[0], {})[int(row[1])] = float(row[2])
    return d
sim, mod = load(sys.argv[1]), load(sys.argv[2])
def err(model, ref):
    e = [abs(mod[model][s] - sim[ref][s]) * 100 for s in mod.get(model, {}) if s in sim.get(ref, {})]
    return (sum(e) / len(e), max(e)) if e else (float('nan'), float('nan'))
rnd = 'random-nocold' if 'random-nocold' in sim else 'random'
lru = 'lru-nocold' if 'lru-nocold' in sim else 'lru'
a, b = err('statcache', rnd), err('statstack', lru)
print('%.2f %.2f %.2f %.2f' % (a[0], a[1], b[0], b[1]))
PY
}
median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

echo "Sample mode vs the exact curves of a trace-mode run (percentage points; median over seeds $SEEDS)"
echo
echo "| program | references | rate | samples | StatCache mean | max | StatStack mean | max |"
echo "|---|---|---|---|---|---|---|---|"
for w in "${W[@]}"; do
	IFS='|' read -r name p args <<<"$w"
	"$L" record -q --mode trace -o "$T/t.lpt" -- "$p-lp" $args >/dev/null
	"$L" simulate "$T/t.lpt" --sizes 4K..64M --policy lru,random --format csv >"$T/sim.csv"
	refs=$("$L" record --mode trace -o "$T/t2.lpt" -- "$p-lp" $args 2>&1 >/dev/null |
		awk '/references/ { for (i = 1; i <= NF; i++) if ($i == "references,") print $(i - 1) }' | head -1)
	rm -f "$T/t2.lpt"
	for rate in 1e-3 1e-4; do
		: >"$T/e"
		for seed in $SEEDS; do
			"$L" record -q -o "$T/p.lpp" --rate $rate --seed $seed -- "$p-lp" $args >/dev/null
			"$L" report "$T/p.lpp" --sizes 4K..64M --format csv >"$T/model.csv"
			n=$("$L" dump "$T/p.lpp" | awk '/^line 64:/ { print $6 }')
			echo "$n $(mae "$T/sim.csv" "$T/model.csv")" >>"$T/e"
		done
		printf '| %s | %s | %s |' "$name" "$refs" "$rate"
		for c in 1 2 3 4 5; do
			printf ' %s |' "$(awk -v c=$c '{ print $c }' "$T/e" | median)"
		done
		echo
	done
	rm -f "$T/t.lpt"
done

[ "${PART2:-1}" = 1 ] || exit 0
echo
echo "What the compile paths see: trace-mode reference counts and the mean absolute"
echo "difference (percentage points) of the exact LRU curve from the default build's"
echo
echo "| program | clang -O2 refs | gcc (tsan path) refs | LRU diff | clang -O2 -mavx2 refs | LRU diff |"
echo "|---|---|---|---|---|---|"
for ex in "matmul|naive 160" "matmul|interchange 200" "layout|soa 300000" "listwalk|array 1000000" "stencil|512 10"; do
	IFS='|' read -r prog args <<<"$ex"
	"$L" cc -O2 -o "$T/clang" "examples/$prog.c"
	"$L" cc --gcc -O2 -o "$T/gcc" "examples/$prog.c"
	"$L" cc -O2 -mavx2 -o "$T/avx2" "examples/$prog.c"
	row="| $prog $args |"
	for v in clang gcc avx2; do
		n=$("$L" record --mode trace -o "$T/$v.lpt" -- "$T/$v" $args 2>&1 >/dev/null |
			awk '/references/ { for (i = 1; i <= NF; i++) if ($i == "references,") print $(i - 1) }' | head -1)
		"$L" simulate "$T/$v.lpt" --sizes 4K..64M --policy lru --format csv >"$T/$v.csv"
		rm -f "$T/$v.lpt"
		if [ $v = clang ]; then
			row="$row $n |"
		else
			d=$(python3 - "$T/clang.csv" "$T/$v.csv" <<'PY'
import csv, sys
def load(p):
    d = {}
    for row in csv.reader(l for l in open(p) if not l.startswith('#')):
        if row[0] == 'curve': continue
        d.setdefault(row[0], {})[int(row[1])] = float(row[2])
    return d
a, b = load(sys.argv[1]), load(sys.argv[2])
k = 'lru-nocold' if 'lru-nocold' in a else 'lru'
e = [abs(a[k][s] - b[k][s]) * 100 for s in a[k] if s in b.get(k, {})]
print('%.2f' % (sum(e) / len(e)))
PY
)
			row="$row $n | $d |"
		fi
	done
	echo "$row"
done
